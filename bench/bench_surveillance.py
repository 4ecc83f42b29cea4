"""Surveillance benchmark: its cost beside the audit, and its alerts on fair play.

Usage:
    python bench/bench_surveillance.py [--rounds 2000000] [--seeds 5] [--work /tmp/auditor-surv]
    python bench/bench_surveillance.py --dataset /tmp/sim2m --seeds 0

- cost: on a simulated night of --rounds rounds (seed 5, or --dataset), in a process of
  its own, the validation and then the surveillance alone (reading and replaying the
  partitions as the audit does, its counts, the tests, the threshold; inside the audit
  only the counts and the tests are its own), each with its wall time and the
  process's peak RSS after it;
- fair play: for each of --seeds further seeds, a simulated night of --rounds rounds
  without faults, surveyed; prints the tests and the alerts at the default rate. On fair
  play, BH at q raises any alert on a night with chance at most q.

It prints figures; it asserts nothing.
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
from pathlib import Path


def measure(dataset: Path, partition_rounds: int) -> dict:
    """Run in a child process: validation, then surveillance, timed, with peak RSS."""
    import polars as pl

    from auditor.input.partition import partition_bytes
    from auditor.pipeline import run_validation, survey_cells
    from auditor.surveillance.night import survey

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    started, cpu_started = time.perf_counter(), cpu()
    validated = run_validation(dataset)
    validated_at, cpu_validated = time.perf_counter(), cpu()
    rss_validation = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    none = pl.DataFrame(schema={"round_id": pl.String()})
    with tempfile.TemporaryDirectory(prefix="auditor-bench-") as work:
        cells = survey_cells(validated, none, Path(work) / "cells", partition_rounds)
        budget = partition_bytes(partition_rounds)
        result = survey(cells, validated.audited, none, Path(work) / "tests", budget_bytes=budget)
        tests = result.tests.select(pl.len()).collect().item()
    ended, cpu_ended = time.perf_counter(), cpu()
    # CPU seconds beside wall seconds: on a shared host the wall time is noisy.
    return {
        "validation_s": round(validated_at - started, 2),
        "validation_cpu_s": round(cpu_validated - cpu_started, 2),
        "surveillance_s": round(ended - validated_at, 2),
        "surveillance_cpu_s": round(cpu_ended - cpu_validated, 2),
        "peak_mb_after_validation": round(rss_validation),
        "peak_mb_after_surveillance": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        ),
        "tests": tests,
        "alerts": result.alerts.height,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2_000_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-surv"))
    parser.add_argument("--dataset", type=Path, help="measure this dataset instead of seed 5")
    parser.add_argument("--partition-rounds", type=int, default=830_000)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.partition_rounds)))
        return

    from auditor.simulator.simulate import simulate

    def night(seed: int) -> Path:
        data = args.work / f"seed{seed}-{args.rounds}"
        if not (data / "rounds.parquet").exists():
            print(f"simulating {args.rounds:,} rounds, seed {seed} ...", flush=True)
            simulate(data, args.rounds, seed=seed)
        return data

    def child(data: Path) -> dict:
        command = [sys.executable, __file__, "--child", str(data)]
        command += ["--partition-rounds", str(args.partition_rounds)]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        return json.loads(output.strip().splitlines()[-1])

    dataset = args.dataset or night(5)
    print(f"cost on {dataset}: {child(dataset)}", flush=True)
    for seed in range(100, 100 + args.seeds):
        data = night(seed)
        figures = child(data)
        print(f"seed {seed}: {figures['tests']:,} tests, {figures['alerts']} alerts", flush=True)
        shutil.rmtree(data)


if __name__ == "__main__":
    main()
