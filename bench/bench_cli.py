"""Command-line start-up benchmark: how long the commands that only print take.

Usage:
    python bench/bench_cli.py [--repeat 5]

Runs each command in its own process, --repeat times, and prints the median wall and
CPU seconds: `--version`, `--help`, `rules`, `rules DRW001`, `audit --help`. Target:
each under half a second on a quiet machine (they import neither the pipeline nor
polars, pandera or scipy; `tests/unit/test_check_docs.py` proves the imports). It asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = (["--version"], ["--help"], ["rules"], ["rules", "DRW001"], ["audit", "--help"])
TARGET_SECONDS = 0.5


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `command`."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    auditor = str(Path(sys.executable).with_name("auditor"))
    print(f"{'command':<22}{'wall s':>8}{'cpu s':>8}  target < {TARGET_SECONDS} s")
    for words in COMMANDS:
        runs = [timed([auditor, *words]) for _ in range(args.repeat)]
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        verdict = "ok" if wall < TARGET_SECONDS else "over"
        print(f"{' '.join(words):<22}{wall:>8.2f}{cpu:>8.2f}  {verdict}")


if __name__ == "__main__":
    main()
