"""Scale benchmark: the whole audit at growing sizes, in both file layouts, with its floor.

Usage:
    python bench/bench_scale.py [--sizes 1,10,30] [--work /tmp/auditor-bench]
                                [--memory-limit 2GB] [--small-limit 1GB] [--small-sizes 10]
                                [--baseline REV]

For each size (millions of rounds) it builds, once and cached in --work:
- clustered: files written table by table (`bench_audit.build_dataset`), and
- by_time: the same rows as a nightly export by gaming time would be, every table in
  every file (rounds and shoes sorted by time, wagers following their rounds),
then runs, each in its own process so that each peak RSS is that run's alone:
- floor: a bare polars read of the round cards, summing point counts;
- audit: `auditor audit --quiet` with --memory-limit (the default's partitions);
- small: for the --small-sizes, the by_time audit under --small-limit, a limit well below
  the dataset's size in memory (10 million rounds and 33 million wagers hold several GB).

It prints, per run: rounds per second, wall and CPU seconds, peak RSS and the ratio to the
floor, so that growth with size and layout is visible. It asserts nothing.

With --baseline REV each audit also runs with the auditor at git revision REV, installed
in a virtual environment of its own (`baseline.py`, kept in --work), on the same data
right after the current code's: its row is labelled with the revision and gives the
current run's wall and CPU times over its own (`x base`: below 1, the current code is
faster). The options a revision's command does not have (`--quiet`, `--memory-limit`)
are left out of its command, so it runs with its own defaults there.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from bench_audit import BASE_ROUNDS, BUILDER_VERSION, build_dataset

# The time each table is exported by, and its id to break ties: the copies of the base
# night share their timestamps, and slices of a sort with ties would overlap.
TIME_KEYS = {
    "tables": ("effective_from", "table_id"),
    "shoes": ("opened_at", "shoe_id"),
    "rounds": ("dealt_at", "round_id"),
}
FILES_PER_TABLE = 8


def by_time(clustered: Path) -> Path:
    """The clustered dataset rewritten in time order, every table in every file."""
    target = clustered.with_name(clustered.name + "-by-time")
    done = target / "done"
    if done.exists() and done.read_text() == BUILDER_VERSION:
        return target
    shutil.rmtree(target, ignore_errors=True)
    dealt = pl.scan_parquet(clustered / "rounds" / "*.parquet").select("round_id", "dealt_at")
    for table in ("tables", "shoes", "rounds", "wagers", "commission_collections", "royal9_seats"):
        frame = pl.scan_parquet(clustered / table / "*.parquet")
        if table == "wagers":
            frame = frame.join(dealt, on="round_id").sort("dealt_at", "round_id", "wager_id")
            frame = frame.drop("dealt_at")
        elif table in TIME_KEYS:
            frame = frame.sort(*TIME_KEYS[table])
        # Sorted once, into one file, then cut: each file's slice of a lazy sort would
        # sort the whole table again.
        (target / table).mkdir(parents=True)
        whole = target / table / "_sorted.parquet"
        frame.sink_parquet(whole, row_group_size=250_000)
        rows = pl.scan_parquet(whole).select(pl.len()).collect().item()
        per_file = max(1, -(-rows // FILES_PER_TABLE))
        for index in range(FILES_PER_TABLE):
            part = pl.scan_parquet(whole).slice(index * per_file, per_file)
            part.sink_parquet(target / table / f"part-{index}.parquet", row_group_size=250_000)
        whole.unlink()
    done.write_text(BUILDER_VERSION)
    return target


def measured(command: list[str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds (user and system, every thread) of a
    command, by GNU time: on a shared host the CPU seconds are swayed far less than the
    wall time by the other jobs."""
    started = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M %U %S", *command], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    peak_kb, user, system = done.stderr.strip().splitlines()[-1].split()
    return seconds, int(peak_kb) / 1024, float(user) + float(system)


def floor_command(data: Path) -> list[str]:
    script = (
        "import polars as pl, sys\n"
        "def points(c):\n"
        "    r = pl.element().str.head(1)\n"
        "    v = pl.when(r.is_in(['T','J','Q','K'])).then(0).when(r == 'A').then(1)"
        ".otherwise(r.cast(pl.Int32, strict=False))\n"
        "    return pl.col(c).list.eval(v).list.sum() % 10\n"
        f"pl.scan_parquet('{data}/rounds/*.parquet').select(points('player_cards'),"
        " points('banker_cards').alias('b')).sum().collect()\n"
    )
    return [sys.executable, "-c", script]


def audit_command(data: Path, limit: str, python: str = sys.executable) -> list[str]:
    out = data.parent / f"out-{data.name}"
    shutil.rmtree(out, ignore_errors=True)
    auditor = str(Path(python).with_name("auditor"))
    options = _audit_options(auditor)
    command = [auditor, "audit", str(data), "--out", str(out)]
    if "--quiet" in options:
        command.append("--quiet")
    if "--memory-limit" in options:
        command += ["--memory-limit", limit]
    return command


@functools.cache
def _audit_options(auditor: str) -> str:
    """The help text of an install's `auditor audit`: which options it has."""
    return subprocess.run([auditor, "audit", "--help"], capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,30", help="millions of rounds")
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-bench"))
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--small-limit", default="1GB")
    parser.add_argument(
        "--small-sizes", default="10", help="sizes (millions) also run under --small-limit"
    )
    parser.add_argument(
        "--baseline", metavar="REV", help="also run each audit with the auditor at REV"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    codes = [("", sys.executable)]
    if args.baseline:
        from baseline import installed

        codes.append((args.baseline, str(installed(args.baseline, args.work))))
    heading = ("size", "layout", "run", "code", "rounds/s", "s", "cpu s", "peak MB", "x floor")
    print("{:>6} {:>10} {:>6} {:>8} {:>12} {:>8} {:>7} {:>9} {:>8}  x base".format(*heading))
    small_sizes = {int(s) for s in args.small_sizes.split(",") if s}
    for size in (int(s) for s in args.sizes.split(",")):
        rounds = size * BASE_ROUNDS
        clustered = build_dataset(args.work, rounds)
        for layout, data in (("clustered", clustered), ("by_time", by_time(clustered))):
            floor_s, floor_mb, floor_cpu = measured(floor_command(data))
            runs = [("floor", "", floor_s, floor_mb, floor_cpu, "")]
            limits = [("audit", args.memory_limit)]
            if layout == "by_time" and size in small_sizes:
                limits.append(("small", args.small_limit))
            for name, limit in limits:
                # Interleaved: each baseline run right after the current code's. `x base`:
                # the current run's wall (and CPU) time over the baseline's.
                current = None
                for label, python in codes:
                    try:
                        seconds, peak, cpu = measured(audit_command(data, limit, python))
                    except SystemExit as failed:
                        if not label:
                            raise
                        print(f"{size}M {layout} {name} at {label} failed: {str(failed)[-300:]}")
                        continue
                    base = ""
                    if current is None:
                        current = (seconds, cpu)
                    else:
                        base = f"{current[0] / seconds:.2f} ({current[1] / cpu:.2f} cpu)"
                    runs.append((name, label or "current", seconds, peak, cpu, base))
            for name, label, seconds, peak, cpu, base in runs:
                print(
                    f"{size:>5}M {layout:>10} {name:>6} {label[:8]:>8} {rounds / seconds:>12,.0f} "
                    f"{seconds:>8.1f} {cpu:>7.1f} {peak:>9,.0f} {seconds / floor_s:>8.1f}  {base}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
