"""The Dask engine on a real local cluster (two worker processes on 127.0.0.1): the same
findings, row counts and output files as the run in one process, with quarantined rows
spread over the partitions, and when a worker dies during its first task; validation's
id checks run on the workers and quarantine the same rows."""

from __future__ import annotations

import os
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import distributed
import fsspec
import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from auditor.cli import main
from auditor.engines.cluster import DaskFinder
from auditor.engines.ids import IdBucketTask, check_id_bucket, plan_id_buckets
from auditor.engines.task import (
    EngineError,
    PartitionFunction,
    PartitionTask,
    RemoteDataset,
    audit_partition,
    plan,
)
from auditor.errors import InputError
from auditor.input import cross_rows
from auditor.input.load import open_dataset
from auditor.input.partition import partitions
from auditor.input.remote import WORKER_COPIES, local_path, remove_worker_copies
from auditor.input.validate import validate
from auditor.pipeline import (
    PartitionFindings,
    Tally,
    check_row_accounting,
    find,
    run_audit,
    run_validation,
)
from tests.support.paths import SAMPLE

# Small enough that sample_data's 2,000 rounds make several partitions of whole tables.
ROUNDS = 400


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def sample():
    validated = run_validation(SAMPLE)
    assert len(partitions(validated.audited, ROUNDS)) >= 4
    tally = Tally()
    return validated, find(validated, partition_rounds=ROUNDS, tally=tally), tally


def assert_same_tally(tally: Tally, expected: Tally) -> None:
    """The rows held and surveillance's counts of the night equal the single process's."""
    assert tally.rows == expected.rows
    night, expected_night = tally.night_cells(), expected.night_cells()
    for name, key in (("rounds", "shoe_id"), ("patrons", "patron_id"), ("tables", "table_id")):
        cells = getattr(night, name).sort(key, pl.all(), nulls_last=True)
        expected_cells = getattr(expected_night, name).sort(key, pl.all(), nulls_last=True)
        assert cells.height > 0
        # Sums of money in floating point: equal up to the order they were added in.
        assert_frame_equal(cells, expected_cells, check_exact=False, rel_tol=1e-12)


def test_findings_equal_the_single_process_run(client, sample):
    # sample_data's files mix every table, so `find` routes them into files per partition
    # first (input/routing.py); the workers read them in place by table range instead.
    validated, expected, expected_tally = sample
    tally = Tally()
    found = DaskFinder(client, SAMPLE)(validated, None, ROUNDS, tally=tally)
    assert found.height > 0
    assert found.equals(expected)
    assert_same_tally(tally, expected_tally)
    check_row_accounting(validated, tally.rows)


def test_output_files_equal_the_single_process_run(client, tmp_path):
    run_audit(SAMPLE, tmp_path / "local", partition_rounds=ROUNDS)
    run_audit(SAMPLE, tmp_path / "dask", partition_rounds=ROUNDS, finder=DaskFinder(client, SAMPLE))
    for name in ("findings.parquet", "quarantine.parquet", "row_counts.parquet"):
        local, dask = (pl.read_parquet(tmp_path / run / name) for run in ("local", "dask"))
        assert dask.equals(local), name
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


def crash_once(marker: Path) -> PartitionFunction:
    """The engine's function, but the first task to run kills its worker process outright,
    as the kernel's OOM killer or a lost machine would: no exception, no goodbye.

    A function made here, not one of this module: the workers cannot import the tests
    (pytest imports them from outside sys.path), and a local function travels by value.
    """

    def audit(task: PartitionTask) -> PartitionFindings:
        if not marker.exists():
            marker.touch()
            os._exit(1)
        return audit_partition(task)

    return audit


def test_a_worker_killed_during_its_first_task_changes_nothing(client, sample, tmp_path):
    validated, expected, expected_tally = sample
    marker = tmp_path / "crashed"
    tally = Tally()
    finder = DaskFinder(client, SAMPLE, audit=crash_once(marker))
    found = finder(validated, None, ROUNDS, tally=tally)
    assert marker.exists(), "no worker was killed"
    assert found.equals(expected)
    assert_same_tally(tally, expected_tally)
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the dead worker


def fail_always(attempts: Path) -> PartitionFunction:
    """A task that raises every time it runs, counting its attempts in a file."""

    def audit(task: PartitionTask) -> PartitionFindings:
        with attempts.open("a") as log:
            log.write("attempt\n")
        raise InputError(f"cannot read {task.dataset}")

    return audit


def test_a_task_that_keeps_failing_is_retried_then_stops_the_run(client, sample, tmp_path):
    validated, _, _ = sample
    attempts = tmp_path / "attempts"
    finder = DaskFinder(client, SAMPLE, audit=fail_always(attempts), retries=2)
    with pytest.raises(InputError, match="cannot read"):
        finder(validated, None, 10**9, tally=Tally())  # one partition, one task
    assert attempts.read_text().count("attempt") == 3  # the first try and two retries


def broken_sample(root: Path) -> Path:
    """sample_data with rows that fail the contract in several partitions: a bad card
    (the round and its wagers out), an unknown bet (the wager alone out, its round
    audited), a shoe of zero decks (the shoe, its rounds and their wagers out), a round
    without a table (in no partition) and a bad commission collection."""
    frames = {p.stem: pl.read_parquet(p) for p in SAMPLE.glob("*.parquet")}
    index = pl.int_range(pl.len())
    rounds = frames["rounds"]
    frames["rounds"] = rounds.with_columns(
        pl.when(index.is_in([5, 700, 1500]))
        .then(pl.lit(["ZZ", "9H"]))
        .otherwise(pl.col("player_cards"))
        .alias("player_cards"),
        pl.when(index == 1200).then(None).otherwise(pl.col("table_id")).alias("table_id"),
    )
    frames["wagers"] = frames["wagers"].with_columns(
        pl.when(index.is_in([10, 3000, 6000]))
        .then(pl.lit("nonsense"))
        .otherwise("bet")
        .alias("bet")
    )
    frames["shoes"] = frames["shoes"].with_columns(
        pl.when(index == 20).then(0).otherwise("decks").cast(pl.Int16).alias("decks")
    )
    frames["commission_collections"] = frames["commission_collections"].with_columns(
        pl.when(index == 30).then(None).otherwise("collection_id").alias("collection_id")
    )
    root.mkdir()
    for name, frame in frames.items():
        frame.write_parquet(root / f"{name}.parquet")
    return root


def test_quarantined_rows_stay_out_on_the_workers(client, tmp_path):
    data = broken_sample(tmp_path / "broken")
    validated = run_validation(data)
    quarantined = set(validated.quarantine["table"])
    assert {"rounds", "wagers", "shoes", "commission_collections"} <= quarantined
    groups = partitions(validated.audited, ROUNDS)
    tasks = plan(validated, groups, str(data))
    # Each task carries only the keys of its own tables, and some carry none.
    sent = [task.quarantined.height for task in tasks]
    assert 0 < max(sent) < validated.quarantine.select("table", "file", "row").unique().height
    assert min(sent) == 0
    expected_tally = Tally()
    expected = find(validated, partition_rounds=ROUNDS, tally=expected_tally)
    tally = Tally()
    found = DaskFinder(client, data)(validated, None, ROUNDS, tally=tally)
    assert found.equals(expected)
    assert_same_tally(tally, expected_tally)
    check_row_accounting(validated, tally.rows)


def test_a_worker_refuses_a_dataset_changed_since_validation(sample, tmp_path):
    validated, _, _ = sample
    (task,) = plan(validated, partitions(validated.audited, 10**9), str(SAMPLE))
    changed = PartitionTask(**{**task.__dict__, "files": "0" * 64})
    with pytest.raises(EngineError, match="differ from those validated"):
        audit_partition(changed)
    other_build = PartitionTask(**{**task.__dict__, "build": "0" * 64})
    with pytest.raises(EngineError, match="same auditor"):
        audit_partition(other_build)


def test_cli_on_a_local_cluster_writes_the_same_findings(tmp_path):
    """From a dataset at a URL too: copied to local disk, where the local workers read it."""
    local = CliRunner().invoke(main, ["audit", str(SAMPLE), "--out", str(tmp_path / "local")])
    assert local.exit_code == 1, local.output
    memory = fsspec.filesystem("memory")
    memory.put(str(SAMPLE) + "/", "/dask-engine/night/", recursive=True)
    try:
        args = ["audit", "memory://dask-engine/night", "--out", str(tmp_path / "dask")]
        result = CliRunner().invoke(main, [*args, "--engine", "dask"])
    finally:
        memory.rm("/dask-engine", recursive=True)
    assert result.exit_code == 1, result.output
    expected = pl.read_parquet(tmp_path / "local" / "findings.parquet")
    assert pl.read_parquet(tmp_path / "dask" / "findings.parquet").equals(expected)


def test_cli_with_a_scheduler_and_a_file_url(client, tmp_path):
    local = tmp_path / "local"
    run_audit(SAMPLE, local, partition_rounds=ROUNDS)
    out = tmp_path / "dask"
    args = ["audit", SAMPLE.as_uri(), "--out", str(out), "--partition-rounds", str(ROUNDS)]
    args += ["--engine", "dask", "--scheduler", client.scheduler.address]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    findings = pl.read_parquet(out / "findings.parquet")
    assert findings.equals(pl.read_parquet(local / "findings.parquet"))


def test_dataset_locations(tmp_path):
    folder = tmp_path / "a night"
    assert local_path(folder.as_uri()) == folder  # %20 decoded
    assert local_path(str(folder)) == folder
    for url in ("memory://dataset", "s3://bucket/night"):
        with pytest.raises(InputError):
            local_path(url)


def test_cli_with_a_scheduler_and_a_dataset_at_a_url(client, ftp_dataset, tmp_path):
    """Each worker machine copies the dataset for the run (the client copies it too, to
    validate it), and the copies are gone when the run ends."""
    local = tmp_path / "local"
    run_audit(SAMPLE, local, partition_rounds=ROUNDS)
    copies = Path(tempfile.gettempdir()) / WORKER_COPIES
    before = set(copies.iterdir()) if copies.exists() else set()
    out = tmp_path / "dask"
    args = ["audit", ftp_dataset, "--out", str(out), "--partition-rounds", str(ROUNDS)]
    args += ["--engine", "dask", "--scheduler", client.scheduler.address, "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    findings = pl.read_parquet(out / "findings.parquet")
    assert findings.equals(pl.read_parquet(local / "findings.parquet"))
    for name in ("quarantine.parquet", "row_counts.parquet", "alerts.parquet"):
        assert (out / name).read_bytes() == (local / name).read_bytes(), name
    assert (set(copies.iterdir()) if copies.exists() else set()) == before


def test_a_worker_refuses_a_remote_dataset_changed_since_validation(sample, tmp_path):
    """The client's copy and the worker's are compared by content, not by names and rows."""
    validated, _, _ = sample
    fs = fsspec.filesystem("memory")
    fs.put(str(SAMPLE) + "/", "/changed-night/", recursive=True)
    try:
        remote = RemoteDataset(uuid.uuid4().hex, "0" * 64)
        groups = partitions(validated.audited, 10**9)
        (task,) = plan(validated, groups, "memory://changed-night", remote=remote)
        with pytest.raises(InputError, match="differ from those validated"):
            audit_partition(task)
    finally:
        fs.rm("/changed-night", recursive=True)
        remove_worker_copies(remote.run)


def test_without_dask_the_engine_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["audit", str(SAMPLE), "--out", str(out), "--engine", "dask"])
    assert result.exit_code == 2
    assert "pip install 'auditor[dask]'" in result.output
    assert not out.exists()


def test_scheduler_needs_the_dask_engine(tmp_path):
    args = ["audit", str(SAMPLE), "--out", str(tmp_path / "o"), "--scheduler", "tcp://h:1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "--engine dask" in result.output


def damaged_ids(root: Path) -> Path:
    """sample_data with ids the cross-row checks catch: rounds and a shoe given twice (every
    copy out, with what hangs on it), a round of no shoe and wagers of no round (orphans),
    spread over the night's tables."""
    frames = {p.stem: pl.read_parquet(p) for p in SAMPLE.glob("*.parquet")}
    index = pl.int_range(pl.len())
    rounds = frames["rounds"]
    rounds = pl.concat([rounds, rounds.slice(3, 6), rounds.slice(1400, 2)])
    frames["rounds"] = rounds.with_columns(
        pl.when(index.is_in([50, 1600]))
        .then(pl.lit("S-gone"))
        .otherwise(pl.col("shoe_id"))
        .alias("shoe_id")
    )
    frames["wagers"] = frames["wagers"].with_columns(
        pl.when(index % 150 == 7)
        .then(pl.concat_str(pl.col("round_id"), pl.lit("-gone")))
        .otherwise(pl.col("round_id"))
        .alias("round_id")
    )
    frames["shoes"] = pl.concat([frames["shoes"], frames["shoes"].slice(2, 1)])
    root.mkdir()
    for name, frame in frames.items():
        frame.write_parquet(root / f"{name}.parquet")
    return root


def bucket_keys_ran() -> Callable[..., list[str]]:
    """What, run on a worker (`client.run`), lists the id checks' tasks the worker computed,
    from its own log of task states: a local function, so that it travels by value."""

    def keys(dask_worker) -> list[str]:
        return [
            str(entry[0])
            for entry in dask_worker.state.log
            if str(entry[0]).startswith("check_id_bucket-") and entry[1] == "put-in-memory"
        ]

    return keys


def bucket_keys_on_workers(client) -> set[str]:
    return {key for keys in client.run(bucket_keys_ran()).values() for key in keys}


def test_id_checks_run_on_the_workers_and_quarantine_the_same_rows(client, tmp_path):
    data = damaged_ids(tmp_path / "ids")
    budget = 60_000  # room for a few hundred ids: the checks run in several buckets
    buckets = cross_rows.buckets_for(open_dataset(data), budget)
    assert buckets >= 3
    expected = validate(open_dataset(data), id_budget_bytes=budget)
    assert {"unique", "foreign_key", "parent_quarantined"} <= set(expected.quarantine["check"])
    before = bucket_keys_on_workers(client)
    finder = DaskFinder(client, data)
    validated = validate(open_dataset(data), id_budget_bytes=budget, id_buckets=finder.id_buckets)
    assert validated.quarantine.equals(expected.quarantine)
    assert validated.counts.equals(expected.counts)
    # Each bucket a task that the workers computed, by their own logs.
    assert len(bucket_keys_on_workers(client) - before) == buckets
    # And audited from there the same way.
    expected_tally, tally = Tally(), Tally()
    local = find(expected, partition_rounds=ROUNDS, tally=expected_tally)
    assert finder(validated, None, ROUNDS, tally=tally).equals(local)
    check_row_accounting(validated, tally.rows)


def test_cli_with_damaged_ids_writes_the_same_outputs(client, tmp_path):
    data = damaged_ids(tmp_path / "ids")
    local = tmp_path / "local"
    run_audit(data, local, partition_rounds=ROUNDS)
    before = bucket_keys_on_workers(client)
    out = tmp_path / "dask"
    args = ["audit", str(data), "--out", str(out), "--partition-rounds", str(ROUNDS)]
    args += ["--engine", "dask", "--scheduler", client.scheduler.address, "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert bucket_keys_on_workers(client) - before  # the id checks ran on the workers
    quarantine = pl.read_parquet(out / "quarantine.parquet")
    assert {"unique", "foreign_key"} <= set(quarantine["check"])
    for name in ("findings.parquet", "quarantine.parquet", "row_counts.parquet"):
        assert (out / name).read_bytes() == (local / name).read_bytes(), name


def test_a_worker_refuses_id_checks_of_a_dataset_changed_since_validation(sample):
    validated, _, _ = sample
    (task,) = plan_id_buckets(validated.dataset, 1, str(SAMPLE))
    assert check_id_bucket(task).height == 0  # sample_data's ids are sound
    with pytest.raises(EngineError, match="differ from those validated"):
        check_id_bucket(IdBucketTask(**{**task.__dict__, "files": "0" * 64}))
    with pytest.raises(EngineError, match="same auditor"):
        check_id_bucket(IdBucketTask(**{**task.__dict__, "build": "0" * 64}))
