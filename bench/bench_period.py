"""Surveillance over a period: its time and peak memory for 30 and 365 nights.

Usage:
    python bench/bench_period.py --outdir OUTDIR [--nights 30 365] [--budget 256MB]

The period reads the counts each night's output set keeps (`cells_*.parquet`), never a
dataset: the bench takes one audited night's set (OUTDIR, from `auditor audit`) and lends
its counts to every night of the period (the same patrons, dealers and tables each
night, the worst case for the sums), then runs `surveillance.period.survey_period` in a
process of its own per period length, printing its wall time, the time per night and the
process's peak RSS. Flat per night: the time per night and the peak stay level as the
period grows. It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path


def measure(outdir: Path, nights: int, budget: int, work: Path) -> dict:
    from auditor.surveillance.cells import ALL_CELL_FILES
    from auditor.surveillance.period import NightCells, survey_period

    runs = []
    for index in range(nights):
        folder = work / "runs" / f"{index:04d}"
        folder.mkdir(parents=True)
        for name in ALL_CELL_FILES:
            (folder / name).symlink_to(outdir.resolve() / name)
        runs.append(NightCells(folder))
    start = date(2026, 1, 1)
    began = time.perf_counter()
    done = survey_period(runs, start, start + timedelta(days=nights - 1), work / "period",
                         budget_bytes=budget)  # fmt: skip
    seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"nights": nights, "seconds": seconds, "peak": peak, "alerts": done.alerts.height}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, required=True)
    parser.add_argument("--nights", type=int, nargs="+", default=[30, 365])
    parser.add_argument("--budget", default="256MB")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    from auditor.defaults import parse_size

    budget = parse_size(args.budget)
    if args.child:
        print(json.dumps(measure(args.outdir, args.nights[0], budget, args.work)))
        return
    for nights in args.nights:
        work = Path(tempfile.mkdtemp(prefix="auditor-period-"))
        try:
            child = subprocess.run(
                [sys.executable, __file__, "--child", "--outdir", str(args.outdir),
                 "--nights", str(nights), "--budget", args.budget, "--work", str(work)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
        finally:
            shutil.rmtree(work, ignore_errors=True)
        got = json.loads(child.stdout.strip().splitlines()[-1])
        print(
            f"{got['nights']:>4} nights: {got['seconds']:7.2f} s "
            f"({1000 * got['seconds'] / got['nights']:6.1f} ms a night), "
            f"peak RSS {got['peak'] / 2**20:7.1f} MiB, {got['alerts']} alerts"
        )


if __name__ == "__main__":
    main()
