"""Where an audit's time goes, stage by stage: wall and CPU seconds (all threads) of
validation, then for each partition of reading and replaying, each checking stage and
surveillance's counts, and the night's surveillance and outputs as the rest of a whole
`run_audit` of the same night.

Usage:
    python bench/profile_stages.py DATASET [--memory-limit 2GB | --partition-rounds N]

Each checking stage's frames are collected on their own here, where the audit collects
every stage's frames together (`pipeline.find_in_partition`): polars may share work
between stages there, so the stages here add up to a little more than the audit spends
on them. A last line, not part of the sum, times validation's reading alone (its batches
decoded into contract types, no check run): the most that validating each partition's
rows where the stages read them, rather than in a read of its own, could save. It prints
figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from auditor.defaults import parse_size
from auditor.input.load import open_dataset
from auditor.input.partition import partition_bytes, partitions, rounds_within
from auditor.input.routing import batch_budget, partition_sources
from auditor.input.validate import decoded_batches
from auditor.pipeline import (
    CHECKING_STAGES,
    hold_partition,
    run_audit,
    run_validation,
    unoffered_wagers,
)
from auditor.surveillance.gather import partition_cells

Clock = dict[str, list[float]]


@contextmanager
def timed(clock: Clock, name: str) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    clock[name][0] += time.perf_counter() - wall
    clock[name][1] += time.process_time() - cpu


def profile(dataset: Path, partition_rounds: int) -> tuple[Clock, int]:
    """The stages' clocks over `dataset`, and the number of partitions."""
    clock: Clock = defaultdict(lambda: [0.0, 0.0])
    with timed(clock, "validation (with routing by time)"):
        validated = run_validation(dataset, None, partition_rounds, route=True)
    packs = validated.packs
    groups = partitions(validated.audited, partition_rounds)
    routed = validated.routed
    routed_in = routed.folder_for(groups, partition_rounds) if routed is not None else None
    with partition_sources(
        validated.dataset,
        validated.audited,
        validated.quarantine,
        groups,
        routed_in=routed_in,
    ) as source:
        for index, partition in enumerate(groups):
            audited, whole = source(index)
            with timed(clock, "read and replay the partition"):
                part, replayed, options = hold_partition(audited, partition, whole, packs)
            frames: list[pl.DataFrame] = []
            for stage in CHECKING_STAGES:
                name = stage.__name__.rsplit(".", 1)[-1]
                with timed(clock, f"checks: {name}"):
                    found = stage.find(part, replayed, options, packs)
                    frames += pl.collect_all(found, engine="streaming")
            with timed(clock, "surveillance's counts"):
                flagged = pl.concat([f.lazy().select("round_id") for f in frames])
                partition_cells(
                    part, replayed, options, flagged.drop_nulls(), packs, unoffered_wagers(frames)
                )
    return clock, len(groups)


def whole_audit(dataset: Path, partition_rounds: int) -> list[float]:
    wall, cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="profile-out-") as out:
        run_audit(dataset, Path(out) / "set", partition_rounds=partition_rounds)
    return [time.perf_counter() - wall, time.process_time() - cpu]


def validation_decode(dataset: Path, partition_rounds: int) -> list[float]:
    """Wall and CPU seconds of validation's read alone: every table's batches, as large as
    validation reads them, decoded and put in contract types with their provenance."""
    opened = open_dataset(dataset)
    batch_bytes = batch_budget(partition_bytes(partition_rounds))
    wall, cpu = time.perf_counter(), time.process_time()
    for _batch in decoded_batches(opened, batch_bytes):
        pass
    return [time.perf_counter() - wall, time.process_time() - cpu]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--partition-rounds", type=int, default=None)
    args = parser.parse_args(argv)
    rounds = args.partition_rounds or rounds_within(parse_size(args.memory_limit))
    clock, parts = profile(args.dataset, rounds)
    total = whole_audit(args.dataset, rounds)
    decode = validation_decode(args.dataset, rounds)
    staged = [sum(c[0] for c in clock.values()), sum(c[1] for c in clock.values())]
    rows: list[tuple[str, Any, Any]] = [(name, *times) for name, times in clock.items()]
    rows.append(("the rest (surveillance's tests, outputs, the report)", *_minus(total, staged)))
    rows.append(("the whole audit (run_audit)", *total))
    print(f"{args.dataset}: {parts} partition(s) of at most {rounds:,} rounds")
    print(f"{'step':<58}{'wall s':>9}{'CPU s':>9}{'share':>8}")
    for name, wall, cpu in rows:
        print(f"{name:<58}{wall:>9.2f}{cpu:>9.2f}{cpu / total[1]:>8.0%}")
    name = "validation's read alone: what one read saves at most"
    print(f"{name:<58}{decode[0]:>9.2f}{decode[1]:>9.2f}{decode[1] / total[1]:>8.0%}")
    return 0


def _minus(total: list[float], part: list[float]) -> list[float]:
    return [max(0.0, t - p) for t, p in zip(total, part, strict=True)]


if __name__ == "__main__":
    sys.exit(main())
