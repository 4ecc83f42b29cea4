"""Stage 1, load: find a dataset's tables and check their Parquet files' schemas.

A dataset is a folder with one entry per contract table: `NAME.parquet` or a folder
`NAME/` of Parquet files (hive partitions allowed). Before any row is read, each
file's schema is checked against the contract; a column whose type cannot be used
(float or integer money, a string total, a missing required column) or a file that
cannot be read stops the run with an `InputError` naming the file and the column.
Everything downstream receives frames in exactly the contract's types, plus the
provenance columns `_file` and `_row` that the quarantine uses to name a row.

Which files hold a table's rows, and what is refused there, is `auditor.input.folders`;
reading the rows, `auditor.input.scan`. Each file's footer is read once, when the dataset
is opened. A file's column names are unique, none is `_file` or `_row`, and none differs
from a contract column's in case alone (polars would read it as missing, DuckDB not).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from auditor.contract import MONEY, OPTIONAL_TABLES, REQUIRED_TABLES, TABLES, TIMESTAMP
from auditor.errors import InputError
from auditor.input.folders import (
    FILE_COLUMN,  # noqa: F401 (every stage imports the provenance columns from here)
    PROVENANCE,
    ROW_COLUMN,  # noqa: F401
    Partition,
    column_named,
    partitions,
    table_paths,
)
from auditor.schemas import MAX_ID_CHARS, SHOWN_CHARS, shown_past_bound, within_years


@dataclass(frozen=True)
class SourceFile:
    """One Parquet file of one contract table, with the columns it actually holds."""

    table: str
    path: Path
    name: str  # the path relative to the dataset folder: what reports and the quarantine show
    rows: int
    arrow_schema: pa.Schema = field(repr=False)
    partition: Partition = ()


@dataclass(frozen=True)
class Dataset:
    root: Path
    files: dict[str, tuple[SourceFile, ...]]
    # Runs of many small files copied into one file each (`gather`), by their first file,
    # and the temporary folder holding the copies, removed with the last dataset using it.
    gathered: dict[Path, Path] = field(default_factory=dict)
    gathered_in: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    def tables(self) -> tuple[str, ...]:
        return tuple(t for t in (*REQUIRED_TABLES, *OPTIONAL_TABLES) if t in self.files)


def open_dataset(root: Path) -> Dataset:
    """Find every contract table under `root` and check each file's schema."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise InputError(
            f"{root}: a file, not a dataset folder; name the folder that holds the tables' "
            f"files ({root.parent})",
            path=str(root),
        )
    if not root.is_dir():
        raise InputError(f"{root}: dataset folder not found", path=str(root))
    files: dict[str, tuple[SourceFile, ...]] = {}
    for table in (*REQUIRED_TABLES, *OPTIONAL_TABLES):
        paths = table_paths(root, table)
        if paths is None:
            if table in REQUIRED_TABLES:
                raise InputError(
                    f"{root}: required table '{table}' is missing "
                    f"(expected {table}.parquet or a folder {table}/ of Parquet files)",
                    path=str(root),
                )
            continue
        placed = partitions(root / table, table, paths)
        schemas = _Schemas(table)
        # One file after another: reading a footer holds the GIL for most of its 0.1 ms,
        # so threads were measured slower than none (2.0 s against 1.4 s for 10,000).
        files[table] = tuple(
            _inspect_file(table, p, root, placed.get(p, ()), schemas) for p in paths
        )
    return Dataset(root=root, files=files)


def _inspect_file(
    table: str, path: Path, root: Path, partition: Partition, schemas: _Schemas
) -> SourceFile:
    """The file's footer, its schema checked against the table's contract."""
    try:
        # One open per file: the footer holds the Arrow schema too.
        metadata = pq.read_metadata(path)
        schema = schemas.of(path, metadata)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"{path}: not a readable Parquet file ({exc}); table '{table}' cannot be loaded",
            path=str(path),
        ) from exc
    name = path.relative_to(root).as_posix()
    return SourceFile(table, path, name, metadata.num_rows, schema, partition)


@dataclass
class _Schemas:
    """A table's files' schemas, each checked against the contract once and held once:
    the files of one exporter share one, and checking it again for each of ten thousand
    files (or even converting it to Arrow, a third of reading a small file's footer)
    would cost more than reading their footers."""

    table: str
    accepted: dict[pa.Schema, pa.Schema] = field(default_factory=dict)
    # The last file's Parquet schema, key-value metadata and Arrow schema: the Arrow one
    # is made of the other two alone.
    last: tuple[pq.ParquetSchema, dict | None, pa.Schema] | None = None

    def of(self, path: Path, metadata: pq.FileMetaData) -> pa.Schema:
        """The file's Arrow schema, checked; an `InputError` if the contract refuses it."""
        parquet, pairs = metadata.schema, metadata.metadata
        if self.last and self.last[1] == pairs and self.last[0].equals(parquet):
            return self.last[2]
        schema = parquet.to_arrow_schema()
        known = self.accepted.get(schema)
        # Equal as `==` has it is equal but for metadata: the metadata must agree too.
        if known is not None and known.equals(schema, check_metadata=True):
            schema = known
        else:
            _check_column_names(self.table, path, schema)
            _check_column_types(self.table, path, schema)
            self.accepted.setdefault(schema, schema)
        self.last = (parquet, pairs, schema)
        return schema


def _check_column_types(table: str, path: Path, schema: pa.Schema) -> None:
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


def _check_column_names(table: str, path: Path, schema: pa.Schema) -> None:
    """Refuse a name held by two columns (which one would be read?), a provenance column's
    name, and a contract column's name in other case (polars would read that column as
    missing, DuckDB as the file's)."""
    repeated = [name for name, count in Counter(schema.names).items() if count > 1]
    if repeated:
        raise InputError(
            f"{path}: column '{repeated[0]}' appears {schema.names.count(repeated[0])} times; "
            "each column of a file needs a name of its own",
            path=str(path),
            column=repeated[0],
        )
    for name in schema.names:
        column = column_named(table, name)
        if column in PROVENANCE:
            raise InputError(
                f"{path}: column '{name}' has the name of the auditor's provenance column "
                f"'{column}' (the file and row each row is read from); rename it",
                path=str(path),
                column=name,
            )
        if column and column != name:
            raise InputError(
                f"{path}: column '{name}' differs from the contract column '{column}' only "
                f"in case; name it '{column}'",
                path=str(path),
                column=column,
            )


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
    file_types = pl.DataFrame(source.arrow_schema.empty_table()).schema
    exprs = []
    for column, (dtype, _) in TABLES[source.table].items():
        if column not in present:
            exprs.append(pl.lit(None, dtype=dtype).alias(column))
            continue
        col = pl.col(column)
        if dtype == TIMESTAMP:
            stored = source.arrow_schema.field(column).type
            tz = stored.tz
            # A value outside the years 1 to 9999 cannot be converted: null here, it is
            # quarantined from the file's own value (`validate._out_of_range`).
            col = pl.when(within_years(col, _polars_unit(stored.unit))).then(col)
            # Naive timestamps are UTC by the contract.
            col = col.dt.replace_time_zone("UTC") if tz is None else col.dt.convert_time_zone("UTC")
            exprs.append(col.dt.cast_time_unit("us").alias(column))
        elif isinstance(file_types[column], (pl.Categorical, pl.Enum)):
            exprs.append(_dictionary_text(col).alias(column))
        elif file_types[column] == dtype:
            # No cast where the type is right already: a cast, even to the same type,
            # keeps a filter on the column from reaching the Parquet reader.
            exprs.append(col)
        else:
            # Integers of any width: a value that does not fit becomes null here and is
            # caught by `validate._overflows` before this cast hides it.
            exprs.append(col.cast(dtype, strict=False).alias(column))
    return exprs


def _polars_unit(arrow_unit: str) -> str:
    """The unit polars reads a Parquet timestamp of `arrow_unit` in (seconds as ms)."""
    return "ms" if arrow_unit == "s" else arrow_unit


def _dictionary_text(col: pl.Expr) -> pl.Expr:
    """A dictionary-encoded string column as strings, a value past `MAX_ID_CHARS` as it is
    shown. A plain cast copies a dictionary value into every row that holds it (one 100 MB
    value in 200 rows: 20 GB); these work on each distinct value once."""
    length = col.cat.len_chars()
    shown = shown_past_bound(col.cat.slice(0, SHOWN_CHARS), length)
    return pl.when(length > MAX_ID_CHARS).then(shown).otherwise(col.cat.slice(0, MAX_ID_CHARS))


INTEGER_BITS: dict[type[pl.DataType], int] = {pl.Int8: 8, pl.Int16: 16, pl.Int32: 32}


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


# A file this large is hashed in a thread of its own, a smaller one in this thread.
THREADED_HASH_BYTES = 1 << 20


def sha256_files(paths: Sequence[Path]) -> list[str]:
    """Each file's SHA-256, in the order given."""
    # hashlib releases the GIL on large buffers: threads hash several large files at once.
    # A small file's hashing is mostly Python holding the GIL, which threads only fight
    # over: 10,000 files of 1 KB took four times as long in four threads as in one.
    large = [p for p in paths if p.stat().st_size >= THREADED_HASH_BYTES]
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        digests = dict(zip(large, pool.map(_sha256, large), strict=True))
    return [digests[p] if p in digests else _sha256(p) for p in paths]


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
