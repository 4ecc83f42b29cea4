"""Archive benchmark: a year of nights in one archive, and what adding, opening and asking
it cost as it grows.

Usage:
    python bench/bench_archive.py [--nights 365] [--rounds 100000] [--audited 3]
                                  [--faults 0.01] [--seed 7] [--work /tmp/auditor-bench]
                                  [--at 1,30,100,365] [--no-verify]

A year of 100,000-round nights is over an hour of auditing here, so only --audited nights
are simulated (`auditor simulate --nights`) and audited for real, nightly report included
(cached in --work). Every other night is a copy of one of them made as another night's
run would be: a new run id, its start and end moved to the morning after its gaming day,
and its findings given new ids and its gaming day (findings.parquet, located.parquet,
coverage.parquet and the catalog's `runs` and `findings` tables rewritten, the manifest's
sizes and hashes with them), so the set verifies and the archive's catalog sees one more
night. Its other files (hand-history views, surveillance, report) are the copied night's.

The nights are added in order, each by `add_run` in this process (timed, phase by phase);
at each --at size the night is added by an `auditor archive add` process instead (the
whole command, start-up included), and it prints:

- the archive's size on disk, in all and per night;
- `archive add`: the whole command, and the night before's `add_run` with its phases
  (verify the set, copy, verify the copy, fsync, catalog);
- the catalog's open time (`auditor query ARCHIVE`'s check of every run's files and the
  sandboxed open), and `auditor query ARCHIVE "SELECT 1"` as a whole command;
- queries over every night's findings (`findings_current` by rule, `finding_status`);
- `auditor verify ARCHIVE` (every run's hashes and catalog), unless --no-verify;
- the period report (`auditor report ARCHIVE --from FROM --to TO`), when this auditor has one.

It prints figures; it asserts nothing. The target for `archive add` is under 2 s
whatever the archive's size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

AUDITOR = str(Path(sys.executable).with_name("auditor"))
START = date(2027, 1, 1)
# The files of a set the copy rewrites; the manifest is rewritten last.
REWRITTEN = ("findings.parquet", "located.parquet", "coverage.parquet", "audit.duckdb")
CLONE_VERSION = "1"  # in each copy's marker: a copy made otherwise is made again


def audited_nights(work: Path, args: argparse.Namespace) -> list[Path]:
    """The nights audited for real: their output sets, cached in `work`."""
    from auditor.pipeline import run_audit

    tag = f"archive-{args.audited}x{args.rounds}-faults-{args.faults}-seed-{args.seed}"
    base = work / tag
    datasets = base / "nights"
    if not (base / "simulated").exists():
        shutil.rmtree(base, ignore_errors=True)
        command = [
            AUDITOR, "simulate", "--out", str(datasets), "--from", START.isoformat(),
            "--nights", str(args.audited), "--rounds", str(args.rounds),
            "--seed", str(args.seed), "--faults", str(args.faults),
        ]  # fmt: skip
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        (base / "simulated").write_text("done")
    outs = []
    for night in range(args.audited):
        day = (START + timedelta(days=night)).isoformat()
        out = base / "audits" / day
        if not (out / "manifest.json").exists():
            begun = time.perf_counter()
            run_audit(datasets / day, out)
            print(f"audited {day}: {time.perf_counter() - begun:.1f} s", flush=True)
        outs.append(out)
    return outs


def clone_night(template: Path, target: Path, night: int) -> Path:
    """A copy of the output set in `template` as the run of gaming day START + night."""
    done = target.with_name(target.name + ".done")  # beside the set: nothing extra in it
    if done.exists() and done.read_text() == CLONE_VERSION:
        return target
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(template, target, symlinks=True)
    day = START + timedelta(days=night)
    run_id = hashlib.sha256(f"{template}:{night}".encode()).hexdigest()[:32]
    started = datetime(day.year, day.month, day.day, 13, 0, tzinfo=UTC) + timedelta(days=1)

    def renamed(column: pl.Expr) -> pl.Expr:
        return column.map_elements(
            lambda f: hashlib.sha256(f"{f}:{night}".encode()).hexdigest()[:20],
            return_dtype=pl.String,
        )

    findings = pl.read_parquet(target / "findings.parquet")
    findings = findings.with_columns(renamed(pl.col("finding_id")).alias("finding_id"))
    findings.write_parquet(target / "findings.parquet")
    located = pl.read_parquet(target / "located.parquet").with_columns(
        renamed(pl.col("finding_id")).alias("finding_id"), pl.lit(day).alias("gaming_day")
    )
    located.write_parquet(target / "located.parquet")
    coverage = pl.read_parquet(target / "coverage.parquet")
    coverage.with_columns(pl.lit(day).alias("gaming_day")).write_parquet(
        target / "coverage.parquet"
    )
    con = duckdb.connect(str(target / "audit.duckdb"))
    try:
        con.execute(
            "UPDATE runs SET run_id = $id, started_at = $started, "
            "ended_at = $started + (ended_at - started_at), outdir = $out",
            {"id": run_id, "started": started, "out": str(target)},
        )
        con.execute("DELETE FROM findings")
        findings_file = {"file": str(target / "findings.parquet")}
        con.execute("INSERT INTO findings SELECT * FROM read_parquet($file)", findings_file)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for name in REWRITTEN:
        data = (target / name).read_bytes()
        manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    done.write_text(CLONE_VERSION)
    return target


def night_sets(work: Path, args: argparse.Namespace) -> list[Path]:
    """The year's output sets: the audited nights, then copies of them in turn."""
    outs = audited_nights(work, args)
    copies = work / f"copies-{outs[0].parent.parent.name}"
    sets = list(outs)
    begun = time.perf_counter()
    for night in range(len(outs), args.nights):
        target = copies / (START + timedelta(days=night)).isoformat()
        sets.append(clone_night(outs[night % len(outs)], target, night))
    if args.nights > len(outs):
        print(f"{args.nights - len(outs)} nights copied: {time.perf_counter() - begun:.1f} s")
    return sets[: args.nights]


class Phases:
    """`add_run`'s phases, timed where it calls them."""

    def __init__(self) -> None:
        import auditor.archive.store as store

        self.seconds: dict[str, float] = {}
        for name, phase in (
            ("verified", "verify set"),
            ("file_problems", "verify copy"),
            ("_fsync_tree", "fsync"),
            ("rebuild_catalog", "catalog"),
        ):
            if hasattr(store, name):  # a phase this auditor's add has
                setattr(store, name, self._timed(getattr(store, name), phase))
        copytree = shutil.copytree
        store.shutil = type(sys)("shutil_timed")
        store.shutil.copytree = self._timed(copytree, "copy")
        store.shutil.rmtree = shutil.rmtree

    def _timed(self, function, phase: str):
        def timed(*args, **kwargs):
            begun = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - begun

        return timed

    def take(self) -> dict[str, float]:
        taken, self.seconds = self.seconds, {}
        return taken


def command_seconds(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    begun = time.perf_counter()
    done = subprocess.run([AUDITOR, *args], capture_output=True, text=True)
    return time.perf_counter() - begun, done


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


QUERIES = {
    "findings_current by rule": (
        "SELECT rule, count(*), sum(abs(impact)) FROM findings_current GROUP BY rule"
    ),
    "open findings by month": (
        "SELECT date_trunc('month', gaming_day) AS month, severity, count(*) "
        "FROM finding_status WHERE status = 'open' AND in_force GROUP BY ALL"
    ),
}


def measure(archive: Path, nights: int, adds: list[float], verify: bool) -> None:
    """The archive of `nights` nights: its size, catalog, queries, verify, period report."""
    from auditor.archive.attached_runs import open_archive_catalog
    from auditor.output.sandboxed_query import query

    size = folder_bytes(archive)
    print(f"  size: {size / 1e6:,.1f} MB, {size / nights / 1e6:,.2f} MB a night")
    if adds:
        print(
            f"  add_run (in process) over the last {len(adds)}: median "
            f"{statistics.median(adds):.2f} s, max {max(adds):.2f} s"
        )
    begun = time.perf_counter()
    catalog = open_archive_catalog(archive)
    opened = time.perf_counter() - begun
    try:
        print(f"  catalog open (runs' files checked, sandbox): {opened:.2f} s")
        for name, sql in QUERIES.items():
            begun = time.perf_counter()
            (result,) = query(catalog, sql)
            rows = len(result.to_pylist())
            print(f"  query {name}: {time.perf_counter() - begun:.2f} s ({rows} rows)")
        (total,) = query(
            catalog,
            "SELECT (SELECT count(*) FROM findings_every_run) AS findings, "
            "(SELECT count(DISTINCT gaming_day) FROM coverage_current) AS nights",
        )
        counted = total.to_pylist()[0]
        print(f"  findings: {counted['findings']:,} over {counted['nights']} nights in force")
    finally:
        catalog.close()
    seconds, done = command_seconds("query", str(archive), "SELECT 1", "--format", "csv")
    print(f'  `auditor query ARCHIVE "SELECT 1"`: {seconds:.2f} s (exit {done.returncode})')
    if verify:
        seconds, done = command_seconds("verify", str(archive))
        print(f"  `auditor verify ARCHIVE`: {seconds:.1f} s (exit {done.returncode})")
    period_report(archive, nights)


def period_report(archive: Path, nights: int) -> None:
    _, shown = command_seconds("report", "--help")
    if "--period" not in shown.stdout:
        print("  period report: `auditor report` has no --period here; not measured")
        return
    out = archive.parent / "period.html"
    first, last = START.isoformat(), (START + timedelta(days=nights - 1)).isoformat()
    seconds, done = command_seconds(
        "report", str(archive), "--from", first, "--to", last, "--out", str(out)
    )
    if done.returncode != 0 or not out.exists():
        print(f"  period report: exit {done.returncode}: {done.stderr.strip()[-300:]}")
        return
    print(
        f"  period report of {nights} nights: {seconds:.1f} s, {out.stat().st_size / 1e6:,.2f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--audited", type=int, default=3)
    parser.add_argument("--faults", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-bench"))
    parser.add_argument("--at", default="1,30,100,365", help="sizes to measure at")
    parser.add_argument("--no-verify", dest="verify", action="store_false")
    args = parser.parse_args()
    args.audited = max(1, min(args.audited, args.nights))
    checkpoints = sorted({n for n in map(int, args.at.split(",")) if n <= args.nights})
    checkpoints = checkpoints or [args.nights]
    args.work.mkdir(parents=True, exist_ok=True)
    sets = night_sets(args.work, args)

    from auditor.archive.store import add_run

    archive = args.work / "archive-bench" / "archive"
    shutil.rmtree(archive.parent, ignore_errors=True)
    archive.parent.mkdir(parents=True)
    phases = Phases()
    adds: list[float] = []
    split = "none yet"
    print(f"{args.nights} nights of {args.rounds:,} rounds ({args.audited} audited)")
    for night, outdir in enumerate(sets, start=1):
        if night not in checkpoints:
            begun = time.perf_counter()
            add_run(archive, outdir)
            adds.append(time.perf_counter() - begun)
            split = ", ".join(f"{k} {v:.2f}" for k, v in phases.take().items())
            continue
        print(f"at {night} night{'s' * (night > 1)}:", flush=True)
        seconds, done = command_seconds("archive", "add", str(archive), str(outdir))
        print(f"  `auditor archive add` of night {night}: {seconds:.2f} s (exit {done.returncode})")
        if adds:
            print(f"  add_run (in process) of night {night - 1}: {adds[-1]:.2f} s ({split})")
        measure(archive, night, adds[-50:], args.verify)
        adds = []
        sys.stdout.flush()


if __name__ == "__main__":
    main()
