"""Stage 1, load: find a dataset's tables and scan their Parquet files lazily.

A dataset is a folder with one entry per contract table: `NAME.parquet` or a folder
`NAME/` of Parquet files (hive partitions allowed). Before any row is read, each
file's schema is checked against the contract; a column whose type cannot be used
(float or integer money, a string total, a missing required column) or a file that
cannot be read stops the run with an `InputError` naming the file and the column.
Everything downstream receives frames in exactly the contract's types, plus the
provenance columns `_file` and `_row` that the quarantine uses to name a row.

Every row of every file that belongs to a table is counted, so nothing that might hold
a table's rows is passed over; what cannot be read with certainty is refused instead:

- A table given both as `NAME.parquet` and as a folder `NAME/` is ambiguous: refused.
- Inside a table's folder, at any depth, a file or folder whose name starts with `.`
  or `_` is ignored, as Hive, Spark and Arrow ignore it (`_SUCCESS`, `_metadata`,
  `.part-0.parquet.crc`, an unfinished job's `_temporary/`). Every other file must be a
  `*.parquet` file: anything else (a `README`, a `.csv`) is refused, naming it.
- Symlinks are followed. A table file that is not a regular file (a FIFO, a device, a
  folder, a symlink to nothing) is refused with what it is; a FIFO is never opened.
- A folder `KEY=VALUE` is a hive partition. Every file of a table sits under the same
  keys in the same order; no key names a column of the table's contract, `_file` or
  `_row` (without case, as DuckDB compares names): the audit reads the files' column,
  the catalog's views would read the folder's.
- A file's column names are unique, none is `_file` or `_row`, and none differs from
  a contract column's in case alone (polars would read it as missing, DuckDB not).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from auditor.contract import MONEY, OPTIONAL_TABLES, REQUIRED_TABLES, TABLES, TIMESTAMP
from auditor.errors import InputError
from auditor.schemas import MAX_ID_CHARS, SHOWN_CHARS, shown_past_bound

FILE_COLUMN = "_file"
ROW_COLUMN = "_row"
BATCH_ROWS = 1_000_000
# Names Hive, Spark and Arrow leave out of a dataset: job markers, checksums, summaries.
IGNORED_PREFIXES = (".", "_")
PROVENANCE = (FILE_COLUMN, ROW_COLUMN)
FILE_KINDS = {"folder": stat.S_ISDIR, "FIFO": stat.S_ISFIFO, "character device": stat.S_ISCHR}
FILE_KINDS |= {"block device": stat.S_ISBLK, "socket": stat.S_ISSOCK}
# (key, value) of each hive partition folder between a table's folder and its file.
Partition = tuple[tuple[str, str], ...]


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
        partitions = _partitions(root / table, table, paths)
        files[table] = tuple(_inspect_file(table, p, root, partitions.get(p, ())) for p in paths)
    return Dataset(root=root, files=files)


def _table_paths(root: Path, table: str) -> list[Path] | None:
    single = root / f"{table}.parquet"
    folder = root / table
    if os.path.lexists(single) and os.path.lexists(folder):
        raise InputError(
            f"{single} and {folder}/: table '{table}' is given twice, as a file and as a "
            "folder, and which one holds its rows is ambiguous; keep one of them",
            path=str(single),
        )
    if os.path.lexists(single):
        if problem := _not_regular(single):
            raise InputError(
                f"{single}: {problem}; table '{table}' cannot be loaded", path=str(single)
            )
        return [single]
    if not os.path.lexists(folder):  # a symlink to nothing is there, and is refused
        return None
    if not folder.is_dir():
        problem = _not_regular(folder) or "is a file, not a folder"
        raise InputError(
            f"{folder}: {problem}; table '{table}' is {table}.parquet or a folder {table}/ "
            "of Parquet files",
            path=str(folder),
        )
    # Sorted so that provenance (and so the quarantine) is the same on every run.
    paths = sorted(_folder_files(folder, table))
    if not paths:
        raise InputError(f"{folder}: folder holds no Parquet files", path=str(folder))
    return paths


def _not_regular(path: Path) -> str | None:
    """What `path` is when it is not a regular file, in words; None when it is one. Told
    from the file system's metadata alone: a FIFO is never opened (that waits for a writer)."""
    link = f"is a symlink to {os.readlink(path)}, which " if path.is_symlink() else ""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"{link}does not exist"
    except OSError as exc:  # a symlink loop, a folder that may not be searched
        return f"{link}cannot be examined ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for name, test in FILE_KINDS.items() if test(mode)), "special file")
    return f"{link}is a {kind}, not a regular file"


def _folder_files(folder: Path, table: str) -> list[Path]:
    """Every Parquet file under a table's folder, symlinks followed (see the module's
    docstring for what is ignored and what is refused)."""
    found: list[Path] = []
    walked: set[tuple[int, int]] = set()
    pending = [folder]
    while pending:
        directory = pending.pop()
        status = directory.stat()
        if (status.st_dev, status.st_ino) in walked:
            raise InputError(
                f"{directory}: this folder is reached twice under {folder}/ (a symlink loop, "
                "or two links to one folder), so its files would be read twice",
                path=str(directory),
            )
        walked.add((status.st_dev, status.st_ino))
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            raise InputError(f"{directory}: cannot be listed ({exc.strerror})") from exc
        for entry in entries:
            path = Path(entry.path)
            key = entry.name.partition("=")[0]
            if "=" in entry.name and key.lower() in PROVENANCE:
                # Its `_` would have it ignored: say what it looks like instead.
                raise _reserved_key(path, key, key.lower(), table)
            if entry.name.startswith(IGNORED_PREFIXES):
                continue
            if entry.is_dir():
                pending.append(path)
            elif entry.name.endswith(".parquet") and entry.is_file():
                found.append(path)
            else:
                problem = _not_regular(path) or "is not a Parquet file (*.parquet)"
                raise InputError(
                    f"{path}: {problem}; a table's folder holds only *.parquet files "
                    f"(names starting with '.' or '_' are ignored), so table '{table}' "
                    "cannot be loaded without it",
                    path=str(path),
                )
    return found


# ---- hive partitions -------------------------------------------------------------


def _partitions(folder: Path, table: str, paths: Sequence[Path]) -> dict[Path, Partition]:
    """Each file's hive partition, checked: the same keys for every file of the table,
    none repeated and none naming a contract column or a provenance column."""
    partitions = {p: _partition_of(folder, p, table) for p in paths if folder in p.parents}
    layouts: dict[tuple[str, ...], Path] = {}
    for path, partition in partitions.items():
        layouts.setdefault(tuple(key for key, _ in partition), path)
    if len(layouts) > 1:
        (keys_a, file_a), (keys_b, file_b) = list(layouts.items())[:2]
        raise InputError(
            f"{folder}/: its files sit under different hive partition keys: {file_a} under "
            f"{_keys_text(keys_a)}, {file_b} under {_keys_text(keys_b)}; every file of a "
            "table must sit under the same keys (KEY=VALUE folders), in the same order",
            path=str(folder),
        )
    return partitions


def _partition_of(folder: Path, path: Path, table: str) -> Partition:
    partition = []
    seen: set[str] = set()
    for depth, name in enumerate(path.relative_to(folder).parts[:-1], start=1):
        if "=" not in name:
            continue
        key, _, value = name.partition("=")
        where = folder.joinpath(*path.relative_to(folder).parts[:depth])
        if not key or key.lower() in seen:
            reason = "has no key before '='" if not key else f"repeats the key '{key}'"
            raise InputError(
                f"{where}: this hive partition folder {reason}; a partition folder is "
                "KEY=VALUE, each key once",
                path=str(where),
            )
        column = _column_named(table, key)
        if column:
            raise _reserved_key(where, key, column, table)
        seen.add(key.lower())
        partition.append((key, value))
    return tuple(partition)


def _column_named(table: str, key: str) -> str | None:
    names = [*TABLES[table], *PROVENANCE]
    return next((name for name in names if name.lower() == key.lower()), None)


def _reserved_key(folder: Path, key: str, column: str, table: str) -> InputError:
    if column in PROVENANCE:
        what = f"the auditor's provenance column '{column}'"
    else:
        what = f"the column '{column}' of table '{table}'"
    return InputError(
        f"{folder}: hive partition key '{key}' names {what}; the audit reads the column "
        "from the files and the catalog's views would read it from the folder name, so the "
        "two could disagree. Partition by another key, or keep the column in the files only",
        path=str(folder),
        column=column,
    )


def _keys_text(keys: tuple[str, ...]) -> str:
    return "no partition key" if not keys else "/".join(f"{key}=…" for key in keys)


def _inspect_file(table: str, path: Path, root: Path, partition: Partition = ()) -> SourceFile:
    try:
        metadata = pq.read_metadata(path)
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"{path}: not a readable Parquet file ({exc}); table '{table}' cannot be loaded",
            path=str(path),
        ) from exc
    _check_column_names(table, path, schema)
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
    return SourceFile(table, path, name, metadata.num_rows, schema, partition)


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
        column = _column_named(table, name)
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


def _dictionary_text(col: pl.Expr) -> pl.Expr:
    """A dictionary-encoded string column as strings, a value past `MAX_ID_CHARS` as it is
    shown. A plain cast copies a dictionary value into every row that holds it (one 100 MB
    value in 200 rows: 20 GB); these work on each distinct value once."""
    length = col.cat.len_chars()
    shown = shown_past_bound(col.cat.slice(0, SHOWN_CHARS), length)
    return pl.when(length > MAX_ID_CHARS).then(shown).otherwise(col.cat.slice(0, MAX_ID_CHARS))


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
