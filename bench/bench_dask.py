"""Dask engine benchmark: what a partition costs on a worker, what the scheduler adds per
task, and what stays on the client, with the projection they give for a billion rounds.

Usage:
    python bench/bench_dask.py [--rounds 4000000] [--partition-rounds 1500000]
        [--validate-rounds 10000000] [--workers 2] [--repeat 3] [--work /tmp/auditor-bench]
        [--validation-only]

Builds (once, cached in --work, shared with bench_audit.py) simulated datasets, starts a
local cluster of --workers processes of one thread each (the engine's own recipe, on
127.0.0.1) and measures, --repeat times, interleaved:

- validate: validation on the client alone, at --validate-rounds and a fifth of it, each
  in a process of its own: how its time and peak memory grow with the rounds;
- validate on workers: the same validation, at both sizes, with its id checks' buckets
  sent to the cluster's workers (as `--engine dask` runs it) while the client checks the
  rows; against the client alone under the same id budget (that of --partition-rounds),
  in the same run: wall and CPU seconds of the client, the workers' CPU seconds, the
  client's peak memory (`--validation-only` measures these alone);
- noop: a few thousand tasks that do nothing, through the scheduler: its cost per task,
  and the round trip of a single task;
- small: the engine's task for the smallest table alone: what every task pays whatever
  its size (re-opening the dataset, checking its fingerprint, the stages' setup);
- tasks: the engine's task for each partition of --rounds rounds, timed on the worker
  (wall and CPU seconds), with the worker's peak memory: the cost per million rounds on
  one worker core;
- engine: the whole `DaskFinder` (planning, mapping, gathering, combining) against
  `pipeline.find` in this process (polars on every core), findings compared.

It prints figures and the projection; it asserts nothing. The host is noisy: the summary
uses each figure's median run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
from bench_audit import build_dataset

from auditor.engines.cluster import DaskFinder, dask_client
from auditor.engines.task import PartitionTask, audit_partition, plan
from auditor.input.cross_rows import BYTES_PER_HASH, BYTES_PER_PARENT_ID, buckets_for
from auditor.input.load import open_dataset
from auditor.input.partition import PARTITION_ROUNDS, Partition, partition_bytes, partitions
from auditor.pipeline import Tally, find, run_validation

BILLION = 1_000_000_000


def noop(x: int) -> int:
    return x


def peak_mb() -> float:
    """This process's peak resident memory. VmHWM, not ru_maxrss: Linux carries ru_maxrss
    over an exec, so a child started by a large parent would report the parent's."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_partition(task: PartitionTask) -> tuple[float, float, int, float]:
    """The engine's task, timed where it runs: wall and CPU seconds, rounds, and the
    worker's peak memory. CPU time is the cost in core-seconds even on a busy host (the
    worker's polars pool has one thread per core it was given)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = audit_partition(task)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    return seconds, cpu_seconds, result.rows.get("rounds", 0), peak_mb()


def measure_noop(client, tasks: int) -> dict:
    started = time.perf_counter()
    client.gather(client.map(noop, range(tasks), pure=False))
    throughput_seconds = time.perf_counter() - started
    trips = []
    for i in range(50):
        started = time.perf_counter()
        client.submit(noop, i, pure=False).result()
        trips.append(time.perf_counter() - started)
    return {
        "per_task_ms": throughput_seconds / tasks * 1000,
        "round_trip_ms": statistics.median(trips) * 1000,
    }


def measure_tasks(client, validated, groups: list[Partition], dataset: Path) -> dict:
    tasks = plan(validated, groups, str(dataset))
    timings = client.gather(client.map(timed_partition, tasks, pure=False))
    rounds = sum(t[2] for t in timings)
    return {
        "task_seconds": [t[0] for t in timings],
        "rounds": rounds,
        "wall_per_million": sum(t[0] for t in timings) / rounds * 1e6,
        "cpu_per_million": sum(t[1] for t in timings) / rounds * 1e6,
        "peak_mb": max(t[3] for t in timings),
    }


def measure_small(client, validated, dataset: Path, workers: int) -> dict:
    """Tasks of the smallest table alone: what a task pays whatever its size."""
    smallest = min(partitions(validated.audited, 1), key=lambda p: p.rounds)
    # Planned beside another partition: alone, it would be the whole dataset, unfiltered.
    task = plan(validated, [smallest, smallest], str(dataset))[0]
    timings = client.gather(client.map(timed_partition, [task] * (4 * workers), pure=False))
    return {
        "small_seconds": statistics.median(t[1] for t in timings),
        "small_rounds": smallest.rounds,
    }


def measure_engine(client, validated, dataset: Path, partition_rounds: int) -> dict:
    started = time.perf_counter()
    distributed = DaskFinder(client, dataset)(validated, None, partition_rounds, tally=Tally())
    engine_seconds = time.perf_counter() - started
    started = time.perf_counter()
    local = find(validated, partition_rounds=partition_rounds)
    local_seconds = time.perf_counter() - started
    assert distributed.equals(local), "the engine's findings differ from find's"
    return {"engine_seconds": engine_seconds, "local_seconds": local_seconds}


def measure_validate(
    dataset: Path, partition_rounds: int | None = None, scheduler: str | None = None
) -> dict:
    """Validation alone, in a process of its own so that its peak memory is its own: with
    all the ids at once (no `partition_rounds`), or under the id budget of partitions of
    `partition_rounds`, its id checks on the workers of `scheduler` if given."""
    command = [sys.executable, __file__, "--validate", str(dataset)]
    if partition_rounds:
        command += ["--partition-rounds", str(partition_rounds)]
    if scheduler:
        command += ["--scheduler", scheduler]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def process_cpu() -> float:
    """This process's CPU seconds, all threads (run on each worker by `client.run`)."""
    return time.process_time()


def validate_child(dataset: Path, partition_rounds: int | None, scheduler: str | None) -> None:
    figures = {}
    if partition_rounds:
        budget = partition_bytes(partition_rounds) * 3 // 4
        figures["buckets"] = buckets_for(open_dataset(dataset), budget)
    started, cpu = time.perf_counter(), time.process_time()
    if scheduler:
        with dask_client(scheduler) as client:
            workers_cpu = sum(client.run(process_cpu).values())
            started, cpu = time.perf_counter(), time.process_time()
            finder = DaskFinder(client, dataset)
            validated = run_validation(dataset, None, partition_rounds, None, finder.id_buckets)
            seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
            figures["workers_cpu"] = sum(client.run(process_cpu).values()) - workers_cpu
    else:
        validated = run_validation(dataset, None, partition_rounds)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    rounds = validated.counts.filter(pl.col("table") == "rounds")["rows_in"].item()
    figures |= {"seconds": seconds, "cpu": cpu_seconds, "mb": peak_mb(), "rounds": rounds}
    figures["quarantined"] = validated.quarantine.height
    print(json.dumps(figures))


def measure_validate_on_workers(sizes: list[Path], partition_rounds: int, scheduler: str) -> dict:
    """Validation at each size under the same id budget, on the client alone and with its
    id checks on the workers, one after the other (the host is shared)."""
    figures = {}
    for name, size in zip(("small", "large"), sizes, strict=True):
        client_only = measure_validate(size, partition_rounds)
        on_workers = measure_validate(size, partition_rounds, scheduler)
        assert client_only["quarantined"] == on_workers["quarantined"]
        figures |= {f"{name}_client_{k}": v for k, v in client_only.items()}
        figures |= {f"{name}_workers_{k}": v for k, v in on_workers.items()}
    return figures


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs if key in r)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4_000_000)
    parser.add_argument("--validate-rounds", type=int, default=10_000_000)
    parser.add_argument("--partition-rounds", type=int, default=PARTITION_ROUNDS)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--noop-tasks", type=int, default=2_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/auditor-bench"))
    parser.add_argument("--window-hours", type=float, default=8.0)
    parser.add_argument("--cores-per-machine", type=int, default=16)
    parser.add_argument("--validation-only", action="store_true")
    parser.add_argument("--validate", type=Path, help=argparse.SUPPRESS)  # the child's
    parser.add_argument("--scheduler", help=argparse.SUPPRESS)  # the child's
    args = parser.parse_args()
    if args.validate:
        partition_rounds = args.partition_rounds if "--partition-rounds" in sys.argv else None
        validate_child(args.validate, partition_rounds, args.scheduler)
        return

    data = None if args.validation_only else build_dataset(args.work, args.rounds)
    # Validation at two sizes: how its time and memory grow with the rounds.
    sizes = [build_dataset(args.work, n) for n in (args.validate_rounds // 5, args.validate_rounds)]
    runs: list[dict] = []
    with dask_client(workers=args.workers) as client:
        client.wait_for_workers(args.workers)
        address = client.scheduler.address
        for run in range(args.repeat):
            if args.validation_only:
                figures = measure_validate_on_workers(sizes, args.partition_rounds, address)
                runs.append(figures)
                print(f"run {run + 1}: {describe_validation(figures)}", flush=True)
                continue
            small, large = (measure_validate(size) for size in sizes)
            figures = {f"small_validate_{k}": v for k, v in small.items()}
            figures |= {f"large_validate_{k}": v for k, v in large.items()}
            validated = run_validation(data)
            groups = partitions(validated.audited, args.partition_rounds)
            figures |= measure_noop(client, args.noop_tasks)
            figures |= measure_small(client, validated, data, args.workers)
            figures |= measure_tasks(client, validated, groups, data)
            figures |= measure_engine(client, validated, data, args.partition_rounds)
            figures |= measure_validate_on_workers(sizes, args.partition_rounds, address)
            figures["partitions"] = len(groups)
            runs.append(figures)
            print(
                f"run {run + 1}: {figures['rounds']:,} rounds in {len(groups)} partitions; "
                f"validate {figures['large_validate_seconds']:.1f} s at "
                f"{figures['large_validate_rounds']:,} rounds; tasks "
                f"{', '.join(f'{s:.1f}' for s in figures['task_seconds'])} s "
                f"({figures['cpu_per_million']:.1f} CPU s per M rounds, "
                f"worker peak {figures['peak_mb']:,.0f} MB); smallest table's task "
                f"{figures['small_seconds'] * 1000:.0f} ms; no-op "
                f"{figures['per_task_ms']:.2f} ms/task, round trip "
                f"{figures['round_trip_ms']:.1f} ms; engine {figures['engine_seconds']:.1f} s "
                f"vs find {figures['local_seconds']:.1f} s; {describe_validation(figures)}",
                flush=True,
            )
    if args.validation_only:
        report_validation(runs, args, sizes[-1])
    else:
        report(runs, args, sizes[-1])


def describe_validation(figures: dict) -> str:
    return "; ".join(
        f"validate {figures[f'{size}_client_rounds']:,} rounds ({figures[f'{size}_client_buckets']}"
        f" id buckets): client alone {figures[f'{size}_client_seconds']:.1f} s "
        f"({figures[f'{size}_client_cpu']:.1f} CPU s, {figures[f'{size}_client_mb']:,.0f} MB), "
        f"ids on workers {figures[f'{size}_workers_seconds']:.1f} s "
        f"({figures[f'{size}_workers_cpu']:.1f} CPU s, {figures[f'{size}_workers_mb']:,.0f} MB; "
        f"workers {figures[f'{size}_workers_workers_cpu']:.1f} CPU s)"
        for size in ("small", "large")
    )


def id_bytes_per_round(dataset: Path) -> float:
    """What the id checks hold per round of `dataset`, by `cross_rows.buckets_for`'s own
    measure (a parent's id and hash, a child's hash)."""
    opened = open_dataset(dataset)
    rows = {t: sum(s.rows for s in opened.files.get(t, ())) for t in opened.files}
    parents = sum(rows.get(t, 0) for t in ("tables", "shoes", "rounds"))
    held = parents * BYTES_PER_PARENT_ID + max(rows.values()) * BYTES_PER_HASH
    return held / rows["rounds"]


def report_validation(runs: list[dict], args: argparse.Namespace, dataset: Path) -> None:
    """Validation on the client alone against its id checks on the workers: medians, the
    ratio of each run's pair, the growth per million rounds between the two sizes, and
    the projection for a billion rounds. `dataset`: the larger size's."""
    print(f"\nmedians of {len(runs)} runs, {args.workers} workers of one thread each:")
    for size in ("small", "large"):
        rounds = runs[0][f"{size}_client_rounds"]
        ratios = [r[f"{size}_workers_seconds"] / r[f"{size}_client_seconds"] for r in runs]
        print(
            f"  {rounds:,} rounds ({runs[0][f'{size}_client_buckets']} id buckets): client "
            f"alone {median(runs, f'{size}_client_seconds'):.1f} s wall, "
            f"{median(runs, f'{size}_client_cpu'):.1f} CPU s, "
            f"{median(runs, f'{size}_client_mb'):,.0f} MB; ids on the workers "
            f"{median(runs, f'{size}_workers_seconds'):.1f} s wall, "
            f"{median(runs, f'{size}_workers_cpu'):.1f} CPU s on the client, "
            f"{median(runs, f'{size}_workers_mb'):,.0f} MB, "
            f"{median(runs, f'{size}_workers_workers_cpu'):.1f} CPU s on the workers; "
            f"wall ratio {statistics.median(ratios):.2f}"
        )
    grown = (runs[0]["large_client_rounds"] - runs[0]["small_client_rounds"]) / 1e6
    for where, named in (("client", "client alone"), ("workers", "ids on the workers")):
        per_million = {
            figure: (
                median(runs, f"large_{where}_{figure}") - median(runs, f"small_{where}_{figure}")
            )
            / grown
            for figure in ("seconds", "cpu", "mb")
        }
        print(
            f"  per million rounds more, {named}: "
            f"{per_million['seconds']:.2f} s wall, {per_million['cpu']:.2f} CPU s and "
            f"{per_million['mb']:,.0f} MB on the client"
        )
    # A bucket's task reads and hashes every id and keeps its bucket's: its cost grows
    # with the night, and the buckets too, each sized to what a worker may hold. Priced
    # at a whole task per bucket, which also holds its share of the checks: an upper
    # figure (two runs of different --partition-rounds separate the two, docs/scale.md).
    pass_cpu = statistics.median(
        r["large_workers_workers_cpu"]
        / (r["large_workers_buckets"] * r["large_workers_rounds"] / 1e6)
        for r in runs
    )
    budget = partition_bytes(args.partition_rounds) * 3 // 4
    buckets = -(-int(id_bytes_per_round(dataset) * BILLION) // budget)
    id_core_hours = buckets * BILLION / 1e6 * pass_cpu / 3600
    client_cpu = (median(runs, "large_workers_cpu") - median(runs, "small_workers_cpu")) / grown
    print(f"\nprojection for {BILLION:,} rounds, id checks on the workers (on paper):")
    print(
        f"  {buckets:,} buckets of {budget / 2**30:.1f} GiB (the id budget of partitions of "
        f"{args.partition_rounds:,} rounds), each a pass over every id at most "
        f"{pass_cpu:.2f} CPU s per million rounds (a bucket's whole task, its share of the "
        f"checks included): at most {id_core_hours:,.1f} core-hours on the workers"
    )
    print(
        f"  the client: {client_cpu * BILLION / 1e6 / 3600:.1f} CPU hours (row checks), no id held"
    )


def report(runs: list[dict], args: argparse.Namespace, validated: Path) -> None:
    cpu_per_million = median(runs, "cpu_per_million")
    overhead_ms = median(runs, "per_task_ms")
    worker_mb = median(runs, "peak_mb")
    # Validation's growth per million rounds, between the two sizes it was measured at.
    small_millions = runs[0]["small_validate_rounds"] / 1e6
    grown = runs[0]["large_validate_rounds"] / 1e6 - small_millions
    validate_per_million = (
        median(runs, "large_validate_seconds") - median(runs, "small_validate_seconds")
    ) / grown
    validate_mb_per_million = (
        median(runs, "large_validate_mb") - median(runs, "small_validate_mb")
    ) / grown
    validate_base_mb = median(runs, "small_validate_mb") - validate_mb_per_million * small_millions
    print(f"\nmedians of {len(runs)} runs, {args.workers} workers of one thread each:")
    print(
        f"  partition audit on a worker: {cpu_per_million:.1f} CPU s per million rounds "
        f"({median(runs, 'wall_per_million'):.1f} s wall), peak {worker_mb:,.0f} MB at "
        f"{args.partition_rounds:,} rounds"
    )
    print(
        f"  the smallest table's task: {median(runs, 'small_seconds') * 1000:.0f} ms CPU "
        f"({runs[0]['small_rounds']:,} rounds)"
    )
    print(f"  scheduler: {overhead_ms:.2f} ms per task ({args.noop_tasks:,} no-op tasks)")
    print(f"  round trip of one task: {median(runs, 'round_trip_ms'):.1f} ms")
    print(
        f"  validation on the client: {validate_per_million:.1f} s and "
        f"{validate_mb_per_million:,.0f} MB per million rounds more, from "
        f"{validate_base_mb:,.0f} MB"
    )
    print(
        f"  whole engine {median(runs, 'engine_seconds'):.1f} s vs find in one process "
        f"{median(runs, 'local_seconds'):.1f} s (wall, {runs[0]['rounds']:,} rounds)"
    )
    # The projection: a billion rounds in partitions of the size measured (the tasks
    # measured were of that size: their fixed cost is in the figure per million).
    millions = BILLION / 1e6
    tasks = -(-BILLION // args.partition_rounds)
    core_hours = millions * cpu_per_million / 3600
    validate_hours = millions * validate_per_million / 3600
    validate_gb = (validate_base_mb + millions * validate_mb_per_million) / 1024
    # The workers get the window less the validation, which runs before them.
    worker_hours = args.window_hours - validate_hours
    cores = core_hours / worker_hours if worker_hours > 0 else float("inf")
    machines = max(1, -(-cores // args.cores_per_machine))
    wall = validate_hours + core_hours / (machines * args.cores_per_machine)
    print(f"\nprojection for {BILLION:,} rounds (on paper, from the medians above):")
    print(
        f"  workers: {tasks:,} tasks of {args.partition_rounds:,} rounds, "
        f"{core_hours:,.1f} core-hours, {worker_mb / 1024:.1f} GB per core"
    )
    print(f"  scheduler: {tasks * overhead_ms / 1000:.0f} s of its time in all")
    print(
        f"  client: validation {validate_hours:.1f} h and {validate_gb:,.0f} GB, on one "
        "machine, with every id at once (`--engine dask` sends its id checks to the "
        "workers: below)"
    )
    print(
        f"  a {args.window_hours:g} h window: {cores:,.1f} worker cores after validation, "
        f"{machines:.0f} machine(s) of {args.cores_per_machine} cores "
        f"({args.cores_per_machine * worker_mb / 1024:.0f} GB each); with that many, "
        f"{wall:.1f} h"
    )
    report_validation(runs, args, validated)


if __name__ == "__main__":
    sys.exit(main())
