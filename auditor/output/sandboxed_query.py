"""`auditor query`: SQL against the catalog, read-only and sandboxed.

The sandbox follows DuckDB's own securing guide, and adds one gate of ours:
- the catalog is opened read-only, with extension autoloading and -installing off;
- the output set is verified against its manifest first (`verify.verified`): a changed
  set is refused, so that an edited catalog neither answers nor renders;
- external access is limited to OUTDIR and the folders of the input files the manifest
  names (`allowed_directories`), each resolved, never to folders taken from the catalog,
  whose tables any DuckDB client can edit; then it is switched off for everything else
  (`enable_external_access = false`) and the configuration locked, so no statement can
  undo it;
- only queries run: every statement is parsed by DuckDB first and anything that is not a
  SELECT (DESCRIBE, SHOW, SUMMARIZE and WITH ... SELECT are SELECTs) is refused before it
  runs. Without this, `COPY ... TO` a file inside OUTDIR would pass the directory rule;
- DuckDB admits its temporary folder too, without resolving links below it (by default
  `audit.duckdb.tmp` beside the catalog, where anyone who can write OUTDIR could plant a
  link to `/`): it is a private folder this process creates, removed on close;
- a statement runs in a worker thread, so that a timeout or Ctrl-C can interrupt it, and
  within a memory limit set before the configuration is locked.
A refused or failed statement raises `QueryError` (exit 2). User input is never formatted
into SQL: the user's statement runs as written, and our own lookups pass values as
parameters.
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import duckdb
import pyarrow as pa

from auditor.defaults import parse_size
from auditor.input.remote import is_remote
from auditor.output.files import DUCKDB_FILE
from auditor.output.macros import admitted_folders
from auditor.output.query_errors import QueryError, QueryInterrupted
from auditor.output.results import Streamed, infinite_times_as_text, shown_as_text
from auditor.output.sandbox import SAFE_CONFIG
from auditor.output.verify import Manifest, verified
from auditor.output.views import INPUT_VIEWS

FORMATS = ("table", "csv", "json", "parquet")
T = TypeVar("T")
# How often the thread waiting on a statement wakes: a Ctrl-C may be delivered to one of
# DuckDB's threads, and Python acts on it only once the main thread runs again.
WAKE_SECONDS = 0.1


@dataclass
class Catalog:
    path: Path
    con: duckdb.DuckDBPyConnection
    dataset: Path | None
    missing: tuple[str, ...]  # input files the views read, gone or changed in size
    scratch: Path | None = None  # DuckDB's temporary folder, ours alone
    timeout: float | None = None  # seconds a statement may run
    memory_limit: str | None = None  # as given, e.g. "2GB"
    # Results being streamed: closed with the catalog, whether read to their end or not
    # (an open one keeps DuckDB's database, and its locked configuration, in the process).
    readers: list[pa.RecordBatchReader] = field(default_factory=list)

    def moved_warning(self) -> str:
        return (
            f"the dataset at {self.dataset} is no longer as audited ({len(self.missing)} "
            f"input files missing or changed): the input views ({', '.join(INPUT_VIEWS)}) "
            "fail or read what is there now; the tables are as audited"
        )

    def moved_message(self) -> str:
        shown = ", ".join(self.missing[:3]) + (" ..." if len(self.missing) > 3 else "")
        return (
            f"the dataset this catalog was built from is no longer as audited at "
            f"{self.dataset} ({len(self.missing)} input files missing or changed: {shown}); "
            "the views "
            f"{', '.join(INPUT_VIEWS)} and those built on them cannot be read, while the "
            "tables (findings, quarantine, row_counts, runs, checks, traceability) still "
            "can. Re-run `auditor audit DATASET --out OUTDIR` to point the catalog at "
            "the dataset's new place."
        )

    def close(self) -> None:
        for reader in self.readers:
            reader.close()
        self.con.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def open_catalog(
    outdir: Path,
    *,
    being_written: bool = False,
    memory_limit: str | None = None,
    timeout: float | None = None,
) -> Catalog:
    """The catalog in OUTDIR, opened read-only and sandboxed, once the set is verified
    against its manifest. With `memory_limit` (such as "2GB") DuckDB holds no more than
    that; with `timeout`, a statement is stopped after that many seconds.
    `being_written`: the set in its staging folder, before its manifest, read by the run
    writing it (the nightly report): the inputs are those the run has just recorded."""
    path = Path(outdir) / DUCKDB_FILE
    manifest = None if being_written else verified(outdir)
    if not path.is_file():
        raise QueryError(
            f"{path}: no catalog here; `auditor audit DATASET --out {outdir}` writes one"
        )
    named = None if manifest is None else _named(manifest)
    return open_sandboxed(path, named, memory_limit=memory_limit, timeout=timeout)


def open_sandboxed(
    path: Path,
    named: tuple[Path | None, list[tuple[str, int]]] | None,
    *,
    memory_limit: str | None = None,
    timeout: float | None = None,
    prepare: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> Catalog:
    """The DuckDB file at `path`, read-only in the sandbox, which admits its own folder,
    and the folders of the input files `named` (the dataset and its files with their
    sizes) or, with None, those the catalog records (the run writing it, alone).
    `prepare` runs our own statements (ATTACH, temporary tables) once the folders are
    admitted and before external access is switched off and the configuration locked."""
    memory_bytes = None if memory_limit is None else parse_size(memory_limit)
    try:
        con = duckdb.connect(str(path), read_only=True, config=SAFE_CONFIG)
    except duckdb.Error as exc:
        raise QueryError(f"{path}: cannot be opened as a DuckDB catalog ({exc})") from exc
    # Private (0700) and new: nobody else can have planted a link in it.
    scratch = Path(tempfile.mkdtemp(prefix="auditor-query-")).resolve()
    try:
        dataset, inputs = _recorded_inputs(con) if named is None else named
        catalog = _sandboxed(path, con, scratch, memory_bytes, dataset, inputs, prepare)
    except BaseException:
        con.close()
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    catalog.timeout, catalog.memory_limit = timeout, memory_limit
    return catalog


def _sandboxed(
    path: Path,
    con: duckdb.DuckDBPyConnection,
    scratch: Path,
    memory_bytes: int | None,
    dataset: Path | None,
    inputs: list[tuple[str, int]],
    prepare: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> Catalog:
    # A dataset read from another file system (a URL) is neither checked nor readable
    # here: the sandbox admits local folders only.
    inputs = [(p, size) for p, size in inputs if not is_remote(p)]
    # Sizes, not hashes: cheap on every query, and a moved or rewritten file shows.
    resolved: dict[Path, Path] = {}  # each folder once, not once for each of its files
    audited = {p: input_in_place(Path(p), size, resolved) for p, size in inputs}
    missing = tuple(p for p, ok in audited.items() if not ok)
    # The folders the views read (a dataset's file may be a link to another folder: the
    # audit recorded where it leads), OUTDIR and our temporary folder, each resolved and
    # with a trailing slash, so /data/night does not admit /data/night2. A recorded
    # folder that resolves elsewhere now has a link planted on its way: left out.
    # The dataset's root is not admitted: the views read its files, whose folders are.
    folders = [path.parent.resolve(), scratch]
    folders += {Path(p).parent for p, ok in audited.items() if ok}
    allowed = sorted({a for folder in folders for a in admitted_folders(str(folder.resolve()))})
    # The order matters: allowed_directories cannot be set once external access is off,
    # and nothing can be set once the configuration is locked.
    con.execute("SET temp_directory = $dir", {"dir": str(scratch)})
    if memory_bytes is not None:
        con.execute("SET memory_limit = $limit", {"limit": f"{memory_bytes} bytes"})
    con.execute("SET allowed_directories = $dirs", {"dirs": allowed})
    if prepare is not None:
        prepare(con)
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return Catalog(path, con, dataset, missing, scratch)


def input_in_place(path: Path, size: int, resolved: dict[Path, Path] | None = None) -> bool:
    """The input file is where and as large as the audit recorded (its resolved path): a
    regular file, no symlink, in a folder that resolves to itself (`resolved` caches each
    folder's resolution)."""
    try:
        status = path.lstat()
    except OSError:
        return False
    resolved = {} if resolved is None else resolved
    folder = resolved.get(path.parent) or resolved.setdefault(path.parent, path.parent.resolve())
    return stat.S_ISREG(status.st_mode) and status.st_size == size and folder == path.parent


def _named(manifest: Manifest) -> tuple[Path | None, list[tuple[str, int]]]:
    """The dataset and input files the verified manifest names (a URL: read elsewhere)."""
    dataset = manifest.dataset
    local = None if dataset is None or is_remote(dataset) else Path(dataset)
    return local, list(manifest.inputs)


def _recorded_inputs(
    con: duckdb.DuckDBPyConnection,
) -> tuple[Path | None, list[tuple[str, int]]]:
    """What the catalog records of its inputs: trusted only from the run that has just
    written it, before its manifest exists."""
    has_runs = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = $name", {"name": "runs"}
    ).fetchone()
    if not has_runs or not has_runs[0]:
        return None, []
    row = con.execute(
        "SELECT dataset, [(i.path, i.bytes) FOR i IN inputs] FROM runs "
        "ORDER BY ended_at DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None, []
    dataset = None if is_remote(row[0]) else Path(row[0])  # a URL: read from elsewhere
    return dataset, [(str(i[0]), int(i[1])) for i in row[1]]


def statements(catalog: Catalog, sql: str) -> list[duckdb.Statement]:
    """The statements of `sql`, each checked to be a query; anything else is refused."""
    try:
        found = catalog.con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from exc
    for statement in found:
        if statement.type != duckdb.StatementType.SELECT:
            word = statement.query.split(maxsplit=1)[0].upper() if statement.query else "?"
            raise QueryError(
                f"refused: {word} statements are not allowed here. The catalog is "
                "read-only and `auditor query` runs queries only (SELECT, WITH, DESCRIBE, "
                "SHOW, SUMMARIZE): no writes, COPY, ATTACH, INSTALL, LOAD or SET."
            )
    return found


def stream(catalog: Catalog, statement: duckdb.Statement, *, as_text: bool) -> Streamed:
    """One checked statement's result, read a batch at a time as it is consumed: DuckDB
    holds what the statement needs within the memory limit, and this process one batch.
    `as_text`: for csv, json or a table, every column of a type those cannot show
    (VARIANT, BLOB, BIT, ...) arrives as DuckDB's own text of it. The timeout counts from
    the statement's start, through every batch. A statement past the catalog's timeout or
    memory limit, or interrupted by Ctrl-C (`QueryInterrupted`), is stopped with one
    message."""
    deadline = None if catalog.timeout is None else time.monotonic() + catalog.timeout
    with _statement_errors(catalog):
        reader = _interruptible(
            catalog, lambda: _reader(catalog.con, statement.query, as_text), deadline
        )
    catalog.readers.append(reader)
    return Streamed(reader.schema, _batches(catalog, reader, deadline, as_text))


BATCH_ROWS = 8 * 1024


def _reader(con: duckdb.DuckDBPyConnection, sql: str, as_text: bool) -> pa.RecordBatchReader:
    relation = con.sql(sql)
    if as_text:
        relation = shown_as_text(relation)
    return relation.to_arrow_reader(BATCH_ROWS)


def _batches(
    catalog: Catalog, reader: pa.RecordBatchReader, deadline: float | None, as_text: bool
) -> Iterator[pa.RecordBatch]:
    while True:
        with _statement_errors(catalog):
            batch = _interruptible(catalog, lambda: _next_batch(reader), deadline)
        if batch is None:
            return
        yield infinite_times_as_text(batch) if as_text else batch


def _next_batch(reader: pa.RecordBatchReader) -> pa.RecordBatch | None:
    try:
        return reader.read_next_batch()
    except StopIteration:
        return None


@contextmanager
def _statement_errors(catalog: Catalog) -> Iterator[None]:
    """DuckDB's errors of a running statement as one `QueryError` each."""
    try:
        yield
    except duckdb.OutOfMemoryException as exc:
        if catalog.memory_limit is None:
            raise QueryError(str(exc)) from exc
        # DuckDB's advice (SET threads, ...) cannot be followed in the sandbox: left out.
        reason = str(exc).splitlines()[0]
        raise QueryError(
            f"query stopped: it exceeded --memory-limit {catalog.memory_limit} ({reason}); "
            "narrow the query or raise the limit"
        ) from exc
    except duckdb.PermissionException as exc:
        if catalog.missing:
            raise QueryError(catalog.moved_message()) from exc
        raise QueryError(f"refused by the sandbox: {exc}") from exc
    except duckdb.IOException as exc:
        if catalog.missing:
            raise QueryError(catalog.moved_message()) from exc
        raise QueryError(str(exc)) from exc
    except duckdb.Error as exc:
        raise QueryError(str(exc)) from exc


def _interruptible(catalog: Catalog, work: Callable[[], T], deadline: float | None) -> T:
    """Run `work` in a worker thread while this one waits: DuckDB has no statement
    timeout, and a signal reaches Python only between bytecodes, never inside DuckDB.
    Waiting here, the timeout and Ctrl-C (KeyboardInterrupt) both end in
    `connection.interrupt()`."""
    # What the worker thread ends with: its result, or what it raised.
    results: list[T] = []
    errors: list[BaseException] = []
    finished = threading.Event()

    def run_work() -> None:
        try:
            results.append(work())
        except BaseException as exc:  # handed to the waiting thread
            errors.append(exc)
        finally:
            finished.set()

    threading.Thread(target=run_work, name="auditor-query", daemon=True).start()
    stopped: QueryError | None = None
    try:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        if not _wait(finished, left):
            stopped = QueryError(f"query stopped after {catalog.timeout:g} s (--timeout)")
    except KeyboardInterrupt:
        stopped = QueryInterrupted("query interrupted (Ctrl-C)")
    if stopped is not None:
        _interrupt_until_finished(catalog.con, finished)
        if errors:  # else it finished as it was stopped: its result stands
            raise stopped from errors[0]
    if errors:
        raise errors[0]
    return results[0]


def _wait(finished: threading.Event, timeout: float | None) -> bool:
    """Wait for `finished` up to `timeout` seconds (None: without end), waking often."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = WAKE_SECONDS if deadline is None else deadline - time.monotonic()
        if left <= 0:
            return finished.is_set()
        if finished.wait(min(left, WAKE_SECONDS)):
            return True


def _interrupt_until_finished(con: duckdb.DuckDBPyConnection, finished: threading.Event) -> None:
    """Interrupt the running statement and wait for its thread; DuckDB stops at its next
    check (a few ms), and a later call, or another Ctrl-C, interrupts it again."""
    while True:
        con.interrupt()
        try:
            if _wait(finished, 0.5):
                return
        except KeyboardInterrupt:
            continue


def query(catalog: Catalog, sql: str) -> list[pa.Table]:
    """Every result of `sql` whole, one per statement, after all of them passed the gate."""
    return [
        pa.Table.from_batches(list(result.batches), result.schema)
        for result in results(catalog, sql, as_text=False)
    ]


def results(catalog: Catalog, sql: str, *, as_text: bool) -> Iterator[Streamed]:
    """Every result of `sql` as it streams, one per statement, once all of them passed
    the gate; each runs when the one before has been read to its end (a connection
    streams one result at a time)."""
    gated = statements(catalog, sql)
    return (stream(catalog, statement, as_text=as_text) for statement in gated)
