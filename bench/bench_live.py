"""The live audit's figures: the latency from a file's arrival in the landing folder to
its findings on disk and on stdout (the end of the batch that read it), median and 99th
percentile, with TABLES tables dealing some 60 rounds an hour each, written PACE times
faster than real time; and the CPU the watch used per hour of play, against the nightly
audit of the same files.

    .venv/bin/python bench/bench_live.py [--tables 100] [--hours 2] [--pace 60]

The simulator's floor (nine tables) is copied under new ids until it holds --tables
tables; the day is then written by `simulator.live.write_day` as `simulate --live` writes
it, while `auditor watch` runs as a process of its own.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import polars as pl

from auditor.contract import TABLES
from auditor.simulator.live import write_day
from auditor.simulator.simulate import simulate

AUDITOR = str(Path(sys.executable).with_name("auditor"))
IDS = ("table_id", "shoe_id", "round_id", "wager_id", "collection_id")
ROUNDS_AN_HOUR = 50  # the simulator's tables: a round every 20 to 120 seconds


def floor_of(tables: int, hours: float, folder: Path) -> Path:
    """A day of `tables` tables dealing for some `hours`: the simulator's floor, copied."""
    one = folder / "one"
    simulate(one, rounds=int(9 * ROUNDS_AN_HOUR * hours), seed=5, fault_rate=0.02)
    copies = math.ceil(tables / 9)
    day = folder / "day"
    day.mkdir()
    for name in (*TABLES, "fault_key"):
        frame = pl.read_parquet(one / f"{name}.parquet")
        ids = [c for c in IDS if c in frame.columns]
        parts = [
            frame.with_columns(pl.col(c) + f"-{k}" for c in ids) if k else frame
            for k in range(copies)
        ]
        pl.concat(parts).write_parquet(day / f"{name}.parquet")
    return day


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--pace", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-live-") as work:
        root = Path(work)
        day = floor_of(args.tables, args.hours, root)
        landing, archive = root / "landing", root / "archive"
        landing.mkdir()
        watch = subprocess.Popen(
            [
                AUDITOR,
                "watch",
                str(landing),
                "--archive",
                str(archive),
                "--settle",
                "0.5",
                "--poll",
                "0.2",
            ],
            stdout=(root / "found.jsonl").open("w"),
            stderr=(root / "watch.err").open("w"),
        )
        arrived: dict[str, float] = {}
        lock = threading.Lock()

        def landed(path: str, when: float) -> None:
            with lock:
                arrived[path] = when

        _, files, seconds = write_day(day, landing, args.pace, landed=landed)
        batches = archive / "live" / "batches.jsonl"
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            done = {
                p for line in batches.read_text().splitlines() for p in json.loads(line)["files"]
            }
            if set(arrived) <= done:
                break
            time.sleep(0.5)
        cpu_watch = cpu_seconds(watch.pid)
        watch.send_signal(signal.SIGTERM)
        watch.wait(120)
        latency = []
        first_done: dict[str, float] = {}
        for line in batches.read_text().splitlines():
            record = json.loads(line)
            ended = pl.Series([record["ended_at"]]).str.to_datetime().dt.epoch("us")[0] / 1e6
            for path in record["files"]:
                first_done.setdefault(path, ended)
        latency = [first_done[p] - t for p, t in arrived.items() if p in first_done]
        start = time.perf_counter()
        before = os.times()
        subprocess.run(
            [
                AUDITOR,
                "audit",
                str(landing),
                "--out",
                str(root / "night"),
                "--exit-zero",
                "--quiet",
            ],
            check=True,
            capture_output=True,
        )
        after = os.times()
        cpu_night = (after.children_user - before.children_user) + (
            after.children_system - before.children_system
        )
        rounds = pl.scan_parquet(day / "rounds.parquet").select(pl.len()).collect().item()
        play_hours = seconds * args.pace / 3600
        found = sum(1 for _ in (root / "found.jsonl").open())
        print(
            f"{args.tables} tables, {rounds:,} rounds, {files:,} files over {play_hours:.1f} h "
            f"of play written in {seconds:.0f} s (pace {args.pace:g}); {found:,} findings"
        )
        print(
            f"latency file -> findings: median {quantile(latency, 0.5):.2f} s, "
            f"99th percentile {quantile(latency, 0.99):.2f} s, max {max(latency):.2f} s "
            f"({len(latency):,} files)"
        )
        print(
            f"CPU: watch {cpu_watch:.0f} s ({cpu_watch / play_hours:.0f} s per hour of play); "
            f"nightly audit of the same files {cpu_night:.0f} s "
            f"(wall {time.perf_counter() - start:.0f} s)"
        )


if __name__ == "__main__":
    main()
