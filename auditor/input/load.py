"""Stage 1, load: find a dataset's tables and scan their Parquet files lazily.

A dataset is a folder with one entry per contract table: `NAME.parquet` or a folder
`NAME/` of Parquet files (hive partitions allowed). Before any row is read, each
file's schema is checked against the contract; a column whose type cannot be used
(float or integer money, a string total, a missing required column) or a file that
cannot be read stops the run with an `InputError` naming the file and the column.
Everything downstream receives frames in exactly the contract's types, plus the
provenance columns `_file` and `_row` that the quarantine uses to name a row.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from auditor.contract import MONEY, OPTIONAL_TABLES, REQUIRED_TABLES, TABLES, TIMESTAMP
from auditor.errors import InputError

FILE_COLUMN = "_file"
ROW_COLUMN = "_row"
BATCH_ROWS = 1_000_000


@dataclass(frozen=True)
class SourceFile:
    """One Parquet file of one contract table, with the columns it actually holds."""

    table: str
    path: Path
    name: str  # the path relative to the dataset folder: what reports and the quarantine show
    rows: int
    arrow_schema: pa.Schema = field(repr=False)


@dataclass(frozen=True)
class Dataset:
    root: Path
    files: dict[str, tuple[SourceFile, ...]]

    def tables(self) -> tuple[str, ...]:
        return tuple(t for t in (*REQUIRED_TABLES, *OPTIONAL_TABLES) if t in self.files)


def open_dataset(root: Path) -> Dataset:
    """Find every contract table under `root` and check each file's schema."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: dataset folder not found", path=str(root))
    files: dict[str, tuple[SourceFile, ...]] = {}
    for table in (*REQUIRED_TABLES, *OPTIONAL_TABLES):
        paths = _table_paths(root, table)
        if paths is None:
            if table in REQUIRED_TABLES:
                raise InputError(
                    f"{root}: required table '{table}' is missing "
                    f"(expected {table}.parquet or a folder {table}/ of Parquet files)",
                    path=str(root),
                )
            continue
        files[table] = tuple(_inspect_file(table, p, root) for p in paths)
    return Dataset(root=root, files=files)


def _table_paths(root: Path, table: str) -> list[Path] | None:
    single = root / f"{table}.parquet"
    folder = root / table
    if single.is_file():
        return [single]
    if folder.is_dir():
        # Sorted so that provenance (and so the quarantine) is the same on every run.
        paths = sorted(p for p in folder.rglob("*.parquet") if p.is_file())
        if not paths:
            raise InputError(f"{folder}: folder holds no Parquet files", path=str(folder))
        return paths
    return None


def _inspect_file(table: str, path: Path, root: Path) -> SourceFile:
    try:
        metadata = pq.read_metadata(path)
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"{path}: not a readable Parquet file ({exc}); table '{table}' cannot be loaded",
            path=str(path),
        ) from exc
    for column, (dtype, nullable) in TABLES[table].items():
        if column not in schema.names:
            if nullable:
                continue  # a missing nullable column reads as all null
            raise InputError(
                f"{path}: required column '{column}' is missing; expected {_describe(dtype)}",
                path=str(path),
                column=column,
            )
        problem = _type_problem(schema.field(column).type, dtype)
        if problem:
            raise InputError(
                f"{path}: column '{column}' has type {schema.field(column).type}; "
                f"expected {_describe(dtype)} ({problem})",
                path=str(path),
                column=column,
            )
    name = path.relative_to(root).as_posix()
    return SourceFile(table, path, name, metadata.num_rows, schema)


def _describe(dtype: pl.DataType) -> str:
    if dtype == MONEY:
        return "decimal(18,2) dollars"
    if dtype == TIMESTAMP:
        return "timestamp[us, tz=UTC]"
    if isinstance(dtype, pl.List):
        return "list<string> of cards"
    return {
        pl.String: "string",
        pl.Boolean: "bool",
        pl.Int8: "int8",
        pl.Int16: "int16",
        pl.Int32: "int32",
    }.get(type(dtype), str(dtype))


def _type_problem(found: pa.DataType, expected: pl.DataType) -> str | None:
    """Why an Arrow type cannot carry a contract type, or None when it can."""
    if isinstance(found, pa.DictionaryType):
        found = found.value_type
    if expected == MONEY:
        if pa.types.is_decimal(found):
            return None if found.scale <= 2 else "more than two decimal places"
        if pa.types.is_integer(found):
            return "integer money is ambiguous (cents or dollars?); store decimal dollars"
        if pa.types.is_floating(found):
            return "float money cannot be exact to the cent; store decimal dollars"
        return "money must be a decimal"
    if expected == TIMESTAMP:
        return None if pa.types.is_timestamp(found) else "not a timestamp"
    if isinstance(expected, pl.List):
        ok = (pa.types.is_list(found) or pa.types.is_large_list(found)) and _is_string(
            found.value_type
        )
        return None if ok else "not a list of strings"
    if isinstance(expected, pl.String):
        return None if _is_string(found) else "not a string"
    if isinstance(expected, pl.Boolean):
        return None if pa.types.is_boolean(found) else "not a bool"
    if isinstance(expected, (pl.Int8, pl.Int16, pl.Int32)):
        return None if pa.types.is_integer(found) else "not an integer"
    return None


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def normalize_exprs(source: SourceFile) -> list[pl.Expr]:
    """Expressions turning the file's columns into exactly the contract's types."""
    present = set(source.arrow_schema.names)
    file_types = pl.from_arrow(source.arrow_schema.empty_table()).schema
    exprs = []
    for column, (dtype, _) in TABLES[source.table].items():
        if column not in present:
            exprs.append(pl.lit(None, dtype=dtype).alias(column))
            continue
        col = pl.col(column)
        if dtype == TIMESTAMP:
            tz = source.arrow_schema.field(column).type.tz
            # Naive timestamps are UTC by the contract.
            col = col.dt.replace_time_zone("UTC") if tz is None else col.dt.convert_time_zone("UTC")
            exprs.append(col.dt.cast_time_unit("us").alias(column))
        elif file_types[column] == dtype:
            # No cast where the type is right already: a cast, even to the same type,
            # keeps a filter on the column from reaching the Parquet reader.
            exprs.append(col)
        else:
            # Integers of any width: a value that does not fit becomes null here and is
            # caught by `validate._overflows` before this cast hides it.
            exprs.append(col.cast(dtype, strict=False).alias(column))
    return exprs


INTEGER_BITS = {pl.Int8: 8, pl.Int16: 16, pl.Int32: 32}


def integer_columns(table: str) -> list[str]:
    return [c for c, (t, _) in TABLES[table].items() if type(t) in INTEGER_BITS]


def wider_integer_columns(source: SourceFile) -> list[str]:
    """The file's integer columns that can hold a value the contract type cannot.

    Only these can overflow when normalised: a column stored in the contract type (or a
    narrower one) needs no overflow check, which spares a pass over each of its values.
    """
    schema = source.arrow_schema
    contract = TABLES[source.table]
    return [
        c
        for c in integer_columns(source.table)
        if c in schema.names and not _fits(schema.field(c).type, contract[c][0])
    ]


def _fits(found: pa.DataType, expected: pl.DataType) -> bool:
    bits = INTEGER_BITS[type(expected)]
    if pa.types.is_signed_integer(found):
        return found.bit_width <= bits
    if pa.types.is_unsigned_integer(found):
        return found.bit_width < bits
    return False  # a dictionary-encoded integer, say: check it rather than guess


def scan_file(source: SourceFile) -> pl.LazyFrame:
    """The file as a LazyFrame in contract types with `_file` and `_row` provenance."""
    return (
        # The reader's own row index, not `with_row_index`: a filter on the scan (a
        # partition's tables) still reaches the reader and skips row groups.
        pl.scan_parquet(source.path, hive_partitioning=False, row_index_name=ROW_COLUMN).select(
            pl.lit(source.name).alias(FILE_COLUMN),
            pl.col(ROW_COLUMN).cast(pl.Int64),
            *normalize_exprs(source),
        )
    )


def scan_table(dataset: Dataset, table: str) -> pl.LazyFrame:
    """All files of a table as one LazyFrame (empty, with contract columns, if absent)."""
    sources = dataset.files.get(table, ())
    if not sources:
        return empty_scan(table)
    return pl.concat([scan_file(s) for s in sources], how="vertical")


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
    scan = pl.scan_parquet(source.path, hive_partitioning=False).select(columns)
    for offset in range(0, source.rows, batch_rows):
        batch = scan.slice(offset, batch_rows).with_columns(
            pl.lit(source.name).alias(FILE_COLUMN),
            pl.int_range(offset, offset + pl.len(), dtype=pl.Int64).alias(ROW_COLUMN),
        )
        try:
            frame = batch.collect()
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise InputError(
                f"{source.path}: Parquet file could not be read past row {offset} ({exc})",
                path=str(source.path),
            ) from exc
        yield frame


def sha256_files(paths: Sequence[Path]) -> list[str]:
    """Each file's SHA-256, in the order given."""
    # hashlib releases the GIL on large buffers: threads hash several files at once.
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        return list(pool.map(_sha256, paths))


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
