"""Validation's id checks as tasks: one per bucket of ids, run on a worker.

The id checks (unique ids, foreign keys) hold every id of a night, which a billion rounds
make too many for one machine: they run in hash buckets (`input/cross_rows.py`), each
bucket a pure function of the dataset's files and its number. A task names the bucket and
the dataset as a partition's task does (location, the fingerprint of the files the client
opened, the client's build); the worker re-opens the dataset, refuses it if its files or
its auditor differ (`task.open_validated`), runs `cross_rows.id_checks_in_bucket` and
returns the bucket's quarantine rows. The client concatenates them in bucket order, as it
would have checked them itself, so the quarantine is the same either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from auditor.engines.task import RemoteDataset, build_identity, fingerprint, open_validated
from auditor.input.cross_rows import id_checks_in_bucket
from auditor.input.load import Dataset


@dataclass(frozen=True)
class IdBucketTask:
    """Everything a worker needs to run the id checks of one bucket."""

    dataset: str  # a path or file:// URL, resolved on the worker; or a URL `remote` names
    files: str  # `task.fingerprint` of the dataset the client opened
    build: str  # `task.build_identity` of the client
    bucket: int
    buckets: int
    remote: RemoteDataset | None = None


IdBucketFunction = Callable[[IdBucketTask], pl.DataFrame]


def check_id_bucket(task: IdBucketTask) -> pl.DataFrame:
    """The quarantine rows of one bucket's id checks, from the files the client opened."""
    dataset = open_validated(task.dataset, task.files, task.build, task.remote)
    return id_checks_in_bucket(dataset, task.bucket, task.buckets)


def plan_id_buckets(
    dataset: Dataset, buckets: int, location: str, remote: RemoteDataset | None = None
) -> list[IdBucketTask]:
    """One task per bucket, in bucket order; `location` is where the workers open it."""
    files, build = fingerprint(dataset), build_identity()
    return [
        IdBucketTask(location, files, build, bucket, buckets, remote) for bucket in range(buckets)
    ]
