"""The Dask engine: each partition audited by `task.audit_partition` on a worker of a Dask
cluster, the results gathered into the same outputs as a run in one process.

The client validates (the quarantine and the row counts are its own): it checks the rows
while the workers run the id checks, one task per bucket of ids (`ids.check_id_bucket`,
through `DaskFinder.id_buckets`), whose quarantine rows it gathers in bucket order. It
then plans one task per partition, maps them with retries and gathers the results in the
partitions' order, then goes through the same `combine`, row accounting and
`write_outputs` as `pipeline.run_audit`, which it calls. A worker that dies takes its running
task with it: the scheduler gives the task to another worker (and the nanny restarts the
dead one); a task that raises is tried again up to `retries` times. Tasks are pure, so a
retried one gives the same result.

Dask is an optional dependency (`pip install 'auditor[dask]'`): imported here only when
the engine is used, so the rest of the auditor runs without it.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.engines.ids import IdBucketFunction, check_id_bucket, plan_id_buckets
from auditor.engines.task import (
    EngineError,
    PartitionFunction,
    RemoteDataset,
    audit_partition,
    plan,
)
from auditor.findings.table import combine
from auditor.input.load import Dataset
from auditor.input.partition import PARTITION_ROUNDS, partitions
from auditor.input.remote import content_digest, is_remote, remove_worker_copies
from auditor.input.validate import ProgressCallback, ValidatedDataset
from auditor.output.files import AuditOutputs
from auditor.pipeline import Tally, run_audit

if TYPE_CHECKING:
    from distributed import Client

RETRIES = 2
# How long to wait for a scheduler to answer, and for a first worker to join it.
CONNECT_TIMEOUT = "30s"
WORKER_TIMEOUT = 120


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise EngineError(
            "--engine dask needs Dask's distributed scheduler, which is not installed: "
            "pip install 'auditor[dask]'"
        ) from exc
    return distributed


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator[Client]:
    """A client of the scheduler at `scheduler` (tcp://HOST:PORT), or of a local cluster
    of `workers` processes (one per core by default) started for the run and stopped
    after it."""
    distributed = _distributed()
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise EngineError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
        with client:
            try:
                # Tasks given to a scheduler without workers would wait for ever.
                client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
            except TimeoutError as exc:
                raise EngineError(
                    f"the Dask scheduler at {scheduler} has no worker after "
                    f"{WORKER_TIMEOUT} s: start workers with `dask worker {scheduler}`"
                ) from exc
            yield client
        return
    cores = os.cpu_count() or 1
    workers = workers or cores
    cluster = distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        # Loopback only, no dashboard: nothing listens beyond this machine.
        host="127.0.0.1",
        dashboard_address=None,
        # The scheduler's HTTP server (health, metrics) stays on even so: any free port,
        # not 8787, which a dashboard of the user's may hold.
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        # Each worker's polars pool gets its share of the cores: `workers` pools of all
        # the cores would fight over them.
        env={"POLARS_MAX_THREADS": str(max(1, cores // workers))},
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


class DaskFinder:
    """`pipeline.find` on a Dask cluster: the same findings frame, the same rows counted.

    `audit` is the function each task runs: `task.audit_partition`, or a wrapper of it
    (the tests wrap it in one that kills its worker); `check_ids` the one each bucket of
    validation's id checks runs (`id_buckets`). `dataset` is where the workers open the
    dataset: a path or `file://` URL, the same on them as on this machine; or a URL of
    another file system, which each worker machine copies once for the run and checks
    against the copy validated here (`release` removes the copies).
    """

    def __init__(
        self,
        client: Client,
        dataset: str | Path,
        *,
        audit: PartitionFunction = audit_partition,
        check_ids: IdBucketFunction = check_id_bucket,
        retries: int = RETRIES,
        procedures: bool = True,
    ) -> None:
        self.client = client
        # Absolute: a worker's working folder is not the client's.
        self.dataset = str(dataset) if "://" in str(dataset) else str(Path(dataset).absolute())
        self.audit = audit
        self.check_ids = check_ids
        self.retries = retries
        self.procedures = procedures
        self._remote: RemoteDataset | None = None

    def id_buckets(self, dataset: Dataset, buckets: int) -> Callable[[], list[pl.DataFrame]]:
        """`cross_rows.IdBuckets` on the cluster: one task per bucket of validation's id
        checks, mapped now; what it returns waits for their quarantine rows, in bucket
        order. `dataset` is the one being validated on this machine."""
        tasks = plan_id_buckets(dataset, buckets, self.dataset, self._remote_for(dataset))
        futures = self.client.map(self.check_ids, tasks, retries=self.retries, pure=False)

        def wait() -> list[pl.DataFrame]:
            try:
                return self.client.gather(futures)
            except _distributed().KilledWorker as exc:
                raise EngineError(
                    f"a bucket of the id checks killed every worker that ran it ({exc}); "
                    "the workers may lack memory: lower --memory-limit or --partition-rounds"
                ) from exc
            finally:
                self.client.cancel(futures)

        return wait

    def _remote_for(self, dataset: Dataset) -> RemoteDataset | None:
        """The run's copies on the workers' machines, for a dataset at a URL: named once,
        shared by the id checks and the partitions, removed by `release`."""
        if not is_remote(self.dataset):
            return None
        if self._remote is None:
            self._remote = RemoteDataset(uuid.uuid4().hex, content_digest(dataset.root))
        return self._remote

    def release(self) -> None:
        """Remove the run's copies of a dataset at a URL from the workers' machines."""
        if self._remote is not None:
            _remove_copies(self.client, self._remote.run)
            self._remote = None

    def __call__(
        self,
        validated: ValidatedDataset,
        progress: ProgressCallback | None = None,
        partition_rounds: int = PARTITION_ROUNDS,
        *,
        tally: Tally | None = None,
    ) -> pl.DataFrame:
        distributed = _distributed()
        groups = partitions(validated.audited, partition_rounds)
        remote = self._remote_for(validated.dataset)
        tasks = plan(validated, groups, self.dataset, self.procedures, remote)
        # pure=False: every run gets fresh keys, so a shared scheduler never hands back a
        # result computed for another run (or another version of the dataset).
        futures = self.client.map(self.audit, tasks, retries=self.retries, pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        frames: dict[int, list[pl.DataFrame]] = {}
        try:
            # Each result is taken as it finishes (its counts written away at once), not
            # all gathered together: the client holds the findings only.
            for future in distributed.as_completed(futures):
                result = future.result()
                frames[index[future.key]] = result.frames
                if tally is not None:
                    tally.add(result)
                if progress:
                    progress("audit", groups[index[future.key]].rounds)
        except distributed.KilledWorker as exc:
            raise EngineError(
                f"a partition's task killed every worker that ran it ({exc}); "
                "the workers may lack memory: lower --partition-rounds"
            ) from exc
        finally:
            self.client.cancel(futures)
            self.release()
        # In the partitions' order, not the order they finished: `combine` keeps the
        # order of findings that sort alike, and so must get them as `find` gives them.
        found = [frame for i in range(len(futures)) for frame in frames[i]]
        return combine(found)


def _remove_copies(client: Client, run: str) -> None:
    """Remove the run's dataset copies from every worker's machine: best effort, a worker
    lost or restarted in the meantime may keep its copy in its temporary folder."""
    # A worker's error is ignored, and so is a scheduler gone away: cleaning up must not
    # hide the run's own result or error.
    with contextlib.suppress(OSError, TimeoutError):
        client.run(remove_worker_copies, run, on_error="ignore")


def dask_audit(
    dataset: str | Path, scheduler: str | None = None, workers: int | None = None
) -> Callable[..., AuditOutputs]:
    """`pipeline.run_audit`, called with the same arguments, with stages 3-5 on a Dask
    cluster: the scheduler at `scheduler`, or a local cluster of `workers` processes.
    `dataset` is where the workers open the dataset (`DaskFinder`); validation's id
    checks run on the workers too, its row checks, surveillance and the outputs on this
    machine."""

    def run(dataset_path: Path, out: Path, *args: Any, **options: Any) -> AuditOutputs:
        with dask_client(scheduler, workers) as client:
            finder = DaskFinder(client, dataset)
            try:
                return run_audit(
                    dataset_path, out, *args, finder=finder, id_buckets=finder.id_buckets, **options
                )
            finally:
                finder.release()  # also when validation stopped the run before the partitions

    return run
