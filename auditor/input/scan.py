"""Reading a dataset's tables: lazy scans and bounded batches in contract types, each row
with its provenance (`_file`, its file's name; `_row`, its row within that file).

A table's files are read in runs (`Run`): consecutive files that share one schema, and so
one normalisation, read as one Parquet scan whatever their number. Reading a file costs
a fixed price besides its rows (its footer, its reader: about 0.1 ms); one scan of a run
pays it inside the reader, where a scan per file would add a query plan of its own per
file (a table of 10,000 files then took seconds to plan, each time it was read). A run of
many small files may have been copied into one file (`gather`): it is then read there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

import polars as pl

from auditor.contract import TABLES
from auditor.errors import InputError
from auditor.input.load import FILE_COLUMN, ROW_COLUMN, Dataset, SourceFile, normalize_exprs

BATCH_ROWS = 1_000_000
# Rows sampled from a file's head to size its batches (`batch_rows_within`).
SAMPLE_ROWS = 1_000
# A string's view in polars, which `estimated_size` leaves out (`memory_bytes`).
STRING_VIEW_BYTES = 16
# The reader's row index counts 32 bits in polars' default build: the files scanned as one
# hold fewer rows than that.
MAX_SCAN_ROWS = 2**31
# Each file's name and first row within a scan of several files (no contract column
# starts with an underscore).
FILE_NAME = "_file_name"
FILE_START = "_file_start"


@dataclass(frozen=True)
class Run:
    """Consecutive files of one table that share one schema, read as one; `gathered`: the
    file they were copied into, with each row's provenance (`gather`), if they were."""

    files: tuple[SourceFile, ...]
    gathered: Path | None = None

    @property
    def first(self) -> SourceFile:
        """The run's first file, whose schema (and so normalisation) is every file's."""
        return self.files[0]

    @property
    def rows(self) -> int:
        return sum(source.rows for source in self.files)


def table_runs(dataset: Dataset, table: str, max_rows: int = MAX_SCAN_ROWS) -> list[Run]:
    """The table's files in their order, in runs of consecutive files sharing a schema,
    each within `max_rows` rows unless one file holds more."""
    runs: list[list[SourceFile]] = []
    held = 0
    for source in dataset.files.get(table, ()):
        if runs and _same_columns(runs[-1][0], source) and held + source.rows <= max_rows:
            runs[-1].append(source)
            held += source.rows
        else:
            runs.append([source])
            held = source.rows
    return [Run(tuple(files), dataset.gathered.get(files[0].path)) for files in runs]


def _same_columns(a: SourceFile, b: SourceFile) -> bool:
    if a.arrow_schema is b.arrow_schema:  # one schema, held once for all its files
        return True
    # Schema-level metadata may differ from file to file (pandas keeps each file's row
    # count there); the fields, with their own metadata, decide how a column is read.
    return a.arrow_schema.remove_metadata().equals(b.arrow_schema.remove_metadata(), True)


def raw_scan(run: Run) -> pl.LazyFrame:
    """The run's rows as one LazyFrame: `_file`, `_row`, then the contract columns its
    files hold, in the files' own types.

    The reader's own row index, not `with_row_index`: a filter on the scan (a partition's
    tables) still reaches the reader and skips row groups. Across several files that index
    runs on from file to file: each row's file, by its path, is joined to the file's name
    and first row, which the index less that first row makes the row's own. A join rather
    than a mapping of paths: a mapping is built again for every file's chunk (100 million
    steps for 10,000 files), a join's table once."""
    if run.gathered is not None:
        return pl.scan_parquet(run.gathered, hive_partitioning=False, glob=False)
    columns = [c for c in TABLES[run.first.table] if c in run.first.arrow_schema.names]
    if len(run.files) == 1:
        source = run.first
        scan = pl.scan_parquet(
            source.path, hive_partitioning=False, row_index_name=ROW_COLUMN, glob=False
        )
        return scan.select(pl.lit(source.name).alias(FILE_COLUMN), _int64(ROW_COLUMN), *columns)
    paths = [str(source.path) for source in run.files]
    files = pl.LazyFrame(
        {
            FILE_COLUMN: paths,
            FILE_NAME: [source.name for source in run.files],
            FILE_START: list(accumulate((source.rows for source in run.files[:-1]), initial=0)),
        },
        schema={FILE_COLUMN: pl.String(), FILE_NAME: pl.String(), FILE_START: pl.Int64()},
    )
    # glob=False: a file's name is never a pattern, whatever characters it holds.
    scan = pl.scan_parquet(
        paths,
        hive_partitioning=False,
        glob=False,
        row_index_name=ROW_COLUMN,
        include_file_paths=FILE_COLUMN,
    ).select(FILE_COLUMN, ROW_COLUMN, *columns)
    return scan.join(files, on=FILE_COLUMN, how="left", maintain_order="left").select(
        pl.col(FILE_NAME).alias(FILE_COLUMN),
        (_int64(ROW_COLUMN) - pl.col(FILE_START)).alias(ROW_COLUMN),
        *columns,
    )


def _int64(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Int64)


def scan_run(run: Run) -> pl.LazyFrame:
    """The run's rows in contract types with `_file` and `_row` provenance."""
    return raw_scan(run).select(FILE_COLUMN, ROW_COLUMN, *normalize_exprs(run.first))


def scan_table(dataset: Dataset, table: str) -> pl.LazyFrame:
    """All files of a table as one LazyFrame (empty, with contract columns, if absent):
    one scan per run of files sharing a schema, however many files the run holds."""
    runs = table_runs(dataset, table)
    if not runs:
        return empty_scan(table)
    return pl.concat([scan_run(run) for run in runs], how="vertical")


def empty_scan(table: str) -> pl.LazyFrame:
    schema = {FILE_COLUMN: pl.String(), ROW_COLUMN: pl.Int64()}
    schema.update({c: t for c, (t, _) in TABLES[table].items()})
    return pl.LazyFrame(schema=schema)


def iter_batches(source: SourceFile, batch_rows: int = BATCH_ROWS) -> Iterator[pl.DataFrame]:
    """The file in bounded batches, raw (file types) with `_file` and `_row`.

    polars reads a row slice of a scan without decoding the rest of the file (several
    times faster here than pyarrow's batch iterator). The provenance columns are made in
    the same query, so that they are chunked like the file's columns: an eager operation
    on a frame whose columns are chunked differently first copies all of it into one
    chunk, and validation runs dozens of them per batch.
    """
    columns = [c for c in TABLES[source.table] if c in source.arrow_schema.names]
    scan = pl.scan_parquet(source.path, hive_partitioning=False, glob=False).select(columns)
    for offset in range(0, source.rows, batch_rows):
        batch = scan.slice(offset, batch_rows).with_columns(
            pl.lit(source.name).alias(FILE_COLUMN),
            pl.int_range(offset, offset + pl.len(), dtype=pl.Int64).alias(ROW_COLUMN),
        )
        try:
            # The engine named: validation's checks run meanwhile, on another thread, with
            # the in-memory engine chosen process-wide (`validate._in_memory_engine`).
            frame = batch.collect(engine="streaming")
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise _unreadable_past(source, offset, exc) from exc
        yield frame


def _unreadable_past(source: SourceFile, offset: int, exc: Exception) -> InputError:
    return InputError(
        f"{source.path}: Parquet file could not be read past row {offset} ({exc})",
        path=str(source.path),
    )


def memory_bytes(frame: pl.DataFrame) -> int:
    """What `frame` holds in memory: polars' `estimated_size` leaves out each string's
    16-byte view, eight tenths of a shoe's cards (measured: 690 bytes a shoe estimated,
    5,300 held)."""
    views = 0
    for name, dtype in frame.schema.items():
        if dtype == pl.String:
            views += frame.height
        elif dtype == pl.List(pl.String):
            views += int(frame[name].list.len().sum() or 0)
    return int(frame.estimated_size()) + STRING_VIEW_BYTES * views  # bytes: an int


def batch_rows_within(
    source: SourceFile, batch_bytes: int | None, copies: int = 1, least_row_bytes: int = 1
) -> int:
    """The rows of `source` a batch may hold within `batch_bytes` (`BATCH_ROWS` at most, and
    if None), `copies` of each row held at once, each row counted at `least_row_bytes` at
    least: from a sample of its rows' size in memory. A shoe's cards make its row twenty-five
    times a wager's: a million shoes would hold 6 GB."""
    if batch_bytes is None:
        return BATCH_ROWS
    try:
        sample = (
            pl.scan_parquet(source.path, hive_partitioning=False, glob=False)
            .head(SAMPLE_ROWS)
            .collect()
        )
    except (OSError, pl.exceptions.PolarsError) as exc:  # as the read itself would say it
        raise _unreadable_past(source, 0, exc) from exc
    row_bytes = max(copies * memory_bytes(sample) / max(1, sample.height), least_row_bytes)
    return int(max(SAMPLE_ROWS, min(BATCH_ROWS, batch_bytes // row_bytes)))


def run_batches(run: Run, batch_rows: int = BATCH_ROWS) -> Iterator[pl.DataFrame]:
    """The run's rows in bounded batches, raw, with `_file` and `_row`, as `iter_batches`
    gives one file's: consecutive files read together while their rows fit one batch, a
    file larger than a batch in slices of its own. Each batch costs about the same
    whatever its rows (validation's checks are some dozens of queries), so ten thousand
    files of a few dozen rows cost about what one file of all their rows costs."""
    if run.gathered is not None:
        scan = raw_scan(run)
        for offset in range(0, run.rows, batch_rows):
            yield scan.slice(offset, batch_rows).collect(engine="streaming")
        return
    for files in _files_within(run.files, batch_rows):
        if len(files) == 1:
            yield from iter_batches(files[0], batch_rows)
        else:
            yield _read_together(files)


def _files_within(files: Sequence[SourceFile], batch_rows: int) -> Iterator[list[SourceFile]]:
    batch: list[SourceFile] = []
    held = 0
    for source in files:
        if batch and held + source.rows > batch_rows:
            yield batch
            batch, held = [], 0
        batch.append(source)
        held += source.rows
    if batch:
        yield batch


def _read_together(files: Sequence[SourceFile]) -> pl.DataFrame:
    try:
        # One chunk per column, as one file's slice is: several files' chunks would have
        # every eager operation of validation copy them together again.
        return raw_scan(Run(tuple(files))).collect(engine="streaming").rechunk()
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise unreadable(files) or InputError(
            f"{files[0].path} to {files[-1].path}: Parquet files could not be read ({exc})",
            path=str(files[0].path),
        ) from exc


def unreadable(files: Sequence[SourceFile]) -> InputError | None:
    """After a read of several files failed: the error of the file that cannot be read,
    found by reading each on its own and named as `iter_batches` names it; None if each
    reads on its own."""
    for source in files:
        try:
            for _ in iter_batches(source):
                pass
        except InputError as named:
            return named
    return None
