"""One partition as a task for another process: what it needs, and the pure function that
audits it there.

A task is small: the dataset's location, a fingerprint of the files the client validated,
the partition (its tables), and the keys (`table`, `file`, `row`) of the quarantined rows
the partition would otherwise read. The worker re-opens the dataset (one at a URL of
another file system from its machine's copy for the run, which the first task there
makes: `remote.worker_copy`), rebuilds the audited rows from those keys exactly as
validation does (`validate.audited_scan`), and runs `pipeline.find_in_partition`. Nothing
else crosses: no frame of data rows, no state kept between tasks, so a task retried after
a lost worker gives the same result.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import polars as pl

import auditor
from auditor import __version__
from auditor.contract import TABLES
from auditor.errors import AuditorError
from auditor.input.cross_rows import collect_streaming, key_columns
from auditor.input.load import FILE_COLUMN, ROW_COLUMN, Dataset, open_dataset
from auditor.input.partition import TABLE_KEYED, Partition, restrict
from auditor.input.quarantine import QUARANTINE_SCHEMA
from auditor.input.remote import local_path, worker_copy
from auditor.input.validate import ValidatedDataset, audited_scan
from auditor.packs.loaded import LoadedPacks, builtin_packs
from auditor.packs.model import available_rulesets
from auditor.pipeline import PartitionFindings, find_in_partition

# The quarantine's columns that name a row: all `validate.audited_scan` reads.
KEY_COLUMNS = ("table", "file", "row")
KEY_SCHEMA = {c: QUARANTINE_SCHEMA[c] for c in KEY_COLUMNS}


class EngineError(AuditorError):
    """The engine cannot run the audit as the client validated it (a worker with other
    code or rule packs, a dataset changed since validation, no cluster to run on)."""


@dataclass(frozen=True)
class RemoteDataset:
    """A dataset on another file system, which each worker machine copies once for the
    run (`remote.worker_copy`) and checks against the client's copy."""

    run: str  # names the run's copies, removed when it ends
    digest: str  # `remote.content_digest` of the client's copy


@dataclass(frozen=True)
class PartitionTask:
    """Everything a worker needs to audit one partition, and nothing it can rebuild."""

    dataset: str  # a path or file:// URL, resolved on the worker; or a URL `remote` names
    files: str  # `fingerprint` of the dataset the client validated
    build: str  # `build_identity` of the client: its code and rule packs
    partition: Partition
    whole: bool  # the only partition: nothing is filtered, as in `pipeline.find`
    quarantined: pl.DataFrame  # KEY_SCHEMA: the quarantined rows the partition could read
    procedures: bool = True
    remote: RemoteDataset | None = None
    # The packs the client validated under, sent whole: a pack from --rules DIR is not
    # installed on the workers (the built-in ones are, checked by `build`).
    packs: LoadedPacks | None = None


PartitionFunction = Callable[[PartitionTask], PartitionFindings]


def audit_partition(task: PartitionTask) -> PartitionFindings:
    """Audit one partition from its task: the findings frames and the rows it held.

    Pure: its result depends on the task and the files it names alone, and the files
    are checked against the client's fingerprint before any is read.
    """
    dataset = open_validated(task.dataset, task.files, task.build, task.remote)
    audited = {table: audited_scan(dataset, table, task.quarantined) for table in TABLES}
    packs = builtin_packs() if task.packs is None else task.packs
    return find_in_partition(audited, task.partition, task.whole, packs, task.procedures)


def open_validated(location: str, files: str, build: str, remote: RemoteDataset | None) -> Dataset:
    """The dataset at `location` opened on a worker (from its machine's copy when
    `remote`), refused unless the worker's auditor is the client's (`build`) and the
    files are those the client validated (`files`)."""
    if build != build_identity():
        raise EngineError(
            f"this worker runs auditor {__version__} with other code or rule packs than the "
            "client: install the same auditor on the client and every worker"
        )
    folder = worker_copy(location, remote.digest, remote.run) if remote else local_path(location)
    dataset = open_dataset(folder)
    if fingerprint(dataset) != files:
        raise EngineError(
            f"{location}: the dataset's files differ from those validated (changed since "
            "validation, or another folder at this path on the worker); run the audit again"
        )
    return dataset


def plan(
    validated: ValidatedDataset,
    groups: list[Partition],
    dataset: str,
    procedures: bool = True,
    remote: RemoteDataset | None = None,
) -> list[PartitionTask]:
    """One task per partition, in the partitions' order."""
    files = fingerprint(validated.dataset)
    build = build_identity()
    whole = len(groups) == 1
    keys = list(_quarantined_keys(validated, groups, whole))
    return [
        PartitionTask(
            dataset,
            files,
            build,
            partition,
            whole,
            quarantined,
            procedures,
            remote,
            validated.packs,
        )
        for partition, quarantined in zip(groups, keys, strict=True)
    ]


def _quarantined_keys(
    validated: ValidatedDataset, groups: list[Partition], whole: bool
) -> Iterator[pl.DataFrame]:
    """For each partition, the keys of the quarantined rows it would read if they were
    not taken out: those of its tables (by `table_id`), and the wagers of its audited
    rounds. A quarantined row no partition reads (a null `table_id`, a wager of no audited
    round) is sent to none; the row accounting still counts it, from the quarantine."""
    keys = validated.quarantine.select(KEY_COLUMNS).unique().sort(KEY_COLUMNS)
    if whole or keys.height == 0:
        # One partition reads everything (`restrict` filters nothing): it needs every key.
        yield from (keys for _ in groups)
        return
    located = _locate(validated, keys)
    for partition in groups:
        # Through `restrict` itself, so that a key goes where its row would: the frame is
        # filtered on `table_id` by the very predicate that filters the partition's rows.
        mine = restrict({name: located for name in TABLE_KEYED}, partition)["tables"]
        yield mine.select(KEY_COLUMNS).collect()


def _locate(validated: ValidatedDataset, keys: pl.DataFrame) -> pl.LazyFrame:
    """The quarantined rows' keys with the `table_id` that places each in a partition:
    its own for the tables keyed by one, its audited round's for a wager. Reads only the
    key columns, and only when rows were quarantined."""
    dataset = validated.dataset
    located = []
    for table in (*TABLE_KEYED, "wagers"):
        mine = keys.filter(pl.col("table") == table)
        if mine.height == 0 or table not in dataset.files:
            continue
        place = "round_id" if table == "wagers" else "table_id"
        rows = key_columns(dataset, table, place).join(
            mine.lazy().select(pl.col("file").alias(FILE_COLUMN), pl.col("row").alias(ROW_COLUMN)),
            on=[FILE_COLUMN, ROW_COLUMN],
            how="semi",
        )
        if table == "wagers":
            # Audited round ids are unique (a repeated id quarantines every row holding it).
            rounds = validated.audited["rounds"].select("round_id", "table_id")
            rows = rows.join(rounds, on="round_id", how="inner")
        located.append(
            rows.select(
                pl.lit(table).alias("table"),
                pl.col(FILE_COLUMN).alias("file"),
                pl.col(ROW_COLUMN).alias("row"),
                "table_id",
            )
        )
    if not located:
        return pl.LazyFrame(schema={**KEY_SCHEMA, "table_id": pl.String()})
    return collect_streaming(pl.concat(located, how="vertical")).lazy()


def fingerprint(dataset: Dataset) -> str:
    """The dataset's files as validation saw them: each file's table, name, rows and
    schema. A worker reading other files would audit rows that were never validated."""
    digest = hashlib.sha256()
    for table in sorted(dataset.files):
        for source in dataset.files[table]:
            schema = source.arrow_schema.to_string(
                show_field_metadata=False, show_schema_metadata=False
            )
            digest.update(f"{table}\x1f{source.name}\x1f{source.rows}\x1f{schema}\x1e".encode())
    return digest.hexdigest()


@functools.cache
def build_identity() -> str:
    """The auditor's version, the SHA-256 of its code and of its rule packs: a finding must
    not depend on which machine computed it. Computed once per process."""
    digest = hashlib.sha256(__version__.encode())
    package = Path(auditor.__file__).parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\x1f")
        digest.update(path.read_bytes())
    for ruleset in available_rulesets():
        digest.update((files("auditor.rules") / f"{ruleset}.yaml").read_bytes())
    return digest.hexdigest()
