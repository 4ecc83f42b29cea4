"""Many-files benchmark: one night audited from one file per table, and again with one
table split into many small files.

Usage:
    python bench/bench_files.py [--rounds 200000] [--files 10000] [--table wagers]
                                [--data NIGHT] [--work /tmp/auditor-bench-files] [--repeat 1]

Builds (once, cached in --work) a simulated night of --rounds rounds, or takes the night
in --data (one NAME.parquet per table). A few rows of --table are damaged the same way in
both copies (an unknown bet, spread over the table and in its last rows), so that the
quarantine has rows to name. Then the same rows are written twice: one file per table,
and --table split into --files files of consecutive rows (`TABLE/part-NNNNN.parquet`).

Each copy is audited by `auditor audit --quiet --exit-zero` in a process of its own, so
that its wall seconds, CPU seconds and peak RSS (from `wait4`) are that run's alone. It
prints them for one file and for the split table, the ratio of the two, and whether the
outputs agree: findings.parquet byte for byte, the quarantine but for the split table's
file and row, the row counts. It asserts nothing. The host is noisy: with --repeat N the
runs are interleaved and the summary uses each copy's median run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from auditor.contract import TABLES

SEED = 1
FAULT_RATE = 0.01
# Rows damaged in the split table: this many spread over it, and its last row.
DAMAGED_ROWS = 20
DAMAGED = "not-a-bet"
# Written into each dataset's `done` marker: a dataset built by an older builder is rebuilt.
BUILDER_VERSION = "1"


def base_night(work: Path, rounds: int) -> Path:
    """A simulated night of `rounds` rounds, cached in `work`."""
    from auditor.simulator.simulate import simulate

    night = work / f"night-{rounds}"
    # Beside the night, not in it: the simulator refuses a folder holding other files.
    done = work / f"night-{rounds}.done"
    if not (done.exists() and done.read_text() == BUILDER_VERSION):
        print(f"simulating {rounds:,} rounds into {night} ...", flush=True)
        simulate(night, rounds=rounds, seed=SEED, fault_rate=FAULT_RATE)
        done.write_text(BUILDER_VERSION)
    return night


def damaged(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with `DAMAGED_ROWS` rows spread over it, and its last, given a value the
    contract refuses (a bet, or the first text column, that names nothing)."""
    column = "bet" if "bet" in frame.columns else _text_column(frame)
    step = max(1, frame.height // DAMAGED_ROWS)
    rows = {*range(step // 2, frame.height, step), frame.height - 1}
    bad = pl.int_range(pl.len()).is_in(sorted(rows))
    return frame.with_columns(pl.when(bad).then(pl.lit(DAMAGED)).otherwise(column).alias(column))


def _text_column(frame: pl.DataFrame) -> str:
    return next(c for c, t in frame.schema.items() if t == pl.String and not c.endswith("_id"))


def copies(night: Path, work: Path, table: str, files: int) -> tuple[Path, Path]:
    """The night with `table` damaged, as one file per table and with `table` in `files`
    files, cached in `work` by the night's folder name."""
    one = work / f"{night.name}-{table}-one-file"
    split = work / f"{night.name}-{table}-in-{files}-files"
    for target in (one, split):
        done = target / "done"
        if done.exists() and done.read_text() == BUILDER_VERSION:
            continue
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for name in TABLES:
            source = night / f"{name}.parquet"
            if not source.exists():
                continue
            if name != table:
                shutil.copyfile(source, target / source.name)
                continue
            rows = damaged(pl.read_parquet(source))
            if target == one:
                rows.write_parquet(target / source.name)
            else:
                write_split(rows, target / name, files)
        done.write_text(BUILDER_VERSION)
    return one, split


def write_split(rows: pl.DataFrame, folder: Path, files: int) -> None:
    print(f"writing {rows.height:,} rows into {files:,} files in {folder} ...", flush=True)
    folder.mkdir(parents=True)
    per_file = max(1, -(-rows.height // files))
    for index in range(files):
        rows.slice(index * per_file, per_file).write_parquet(folder / f"part-{index:05d}.parquet")


def audited(data: Path) -> dict:
    """One audit of `data` in a process of its own: wall and CPU seconds, peak RSS (MB)."""
    out = data.with_name(f"out-{data.name}")
    shutil.rmtree(out, ignore_errors=True)
    auditor = Path(sys.executable).with_name("auditor")
    command = [str(auditor), "audit", str(data), "--out", str(out), "--quiet", "--exit-zero"]
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        # wait4: this child's own usage, where RUSAGE_CHILDREN keeps the largest peak yet.
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            errors.seek(0)
            message = errors.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(command)} failed:\n{message}")
    return {
        "out": out,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
    }


def agreement(one: Path, split: Path, table: str, per_file: int) -> list[str]:
    """How the outputs of the two audits agree, in words."""
    same_findings = (one / "findings.parquet").read_bytes() == (
        split / "findings.parquet"
    ).read_bytes()
    quarantine = [pl.read_parquet(folder / "quarantine.parquet") for folder in (one, split)]
    # The split table's rows are named by other files and rows; the rest exactly.
    provenance = pl.when(pl.col("table") == table).then(None)
    masked = [
        q.with_columns(provenance.otherwise(pl.col("file")).alias("file"))
        .with_columns(provenance.otherwise(pl.col("row")).alias("row"))
        .sort(pl.all())
        for q in quarantine
    ]
    counts = [pl.read_parquet(folder / "row_counts.parquet") for folder in (one, split)]
    named = _row_in_whole_table(quarantine[1].filter(pl.col("table") == table), per_file)
    expected = quarantine[0].filter(pl.col("table") == table)["row"].sort()
    return [
        f"findings.parquet identical: {'yes' if same_findings else 'NO'}",
        f"quarantine equal but for {table}' file and row ({quarantine[0].height:,} rows): "
        f"{'yes' if masked[0].equals(masked[1]) else 'NO'}",
        f"row counts equal: {'yes' if counts[0].equals(counts[1]) else 'NO'}",
        f"each quarantined {table} row named by its own file and row: "
        f"{'yes' if named.sort().equals(expected) else 'NO'}",
    ]


def _row_in_whole_table(quarantine: pl.DataFrame, per_file: int) -> pl.Series:
    """The row of the one-file table that each split file's row is (files of `per_file`
    consecutive rows, numbered in their names)."""
    number = pl.col("file").str.extract(r"part-(\d+)\.parquet$").cast(pl.Int64)
    return quarantine.select(number * per_file + pl.col("row")).to_series().alias("row")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--table", choices=sorted(TABLES), default="wagers")
    parser.add_argument("--data", type=Path, help="a night to take instead of simulating one")
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-bench-files"))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    night = args.data or base_night(args.work, args.rounds)
    one, split = copies(night, args.work, args.table, args.files)
    rows = pl.scan_parquet(one / f"{args.table}.parquet").select(pl.len()).collect().item()
    print(f"dataset: {night} ({args.table}: {rows:,} rows in 1 file / {args.files:,} files)")
    runs: dict[str, list[dict]] = {"one file": [], f"{args.files:,} files": []}
    for _ in range(args.repeat):  # interleaved, so that host noise hits both copies
        for (name, results), data in zip(runs.items(), (one, split), strict=True):
            result = audited(data)
            results.append(result)
            print(
                f"{name:>14}  wall {result['wall']:7.2f} s  cpu {result['cpu']:7.2f} s  "
                f"peak {result['peak_mb']:7,.0f} MB",
                flush=True,
            )
    single, many = (_median_run(results) for results in runs.values())
    if args.repeat > 1:
        print(f"medians of {args.repeat} runs:")
    ratios = {key: many[key] / single[key] for key in ("wall", "cpu", "peak_mb")}
    print(
        f"{args.files:,} files / one file: wall {ratios['wall']:.2f}, cpu {ratios['cpu']:.2f}, "
        f"peak memory {ratios['peak_mb']:.2f} (target: wall <= 2)"
    )
    per_file = max(1, -(-rows // args.files))
    for line in agreement(single["out"], many["out"], args.table, per_file):
        print(line)


def _median_run(results: list[dict]) -> dict:
    """The run with the median wall time (the lower middle one of an even number)."""
    ordered = sorted(results, key=lambda r: r["wall"])
    return ordered[(len(ordered) - 1) // 2]


if __name__ == "__main__":
    main()
