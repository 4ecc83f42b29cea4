"""Which files hold a contract table's rows: a dataset folder's layout, walked and checked.

A table is `NAME.parquet` or a folder `NAME/` of Parquet files (hive partitions allowed).
Every file that might hold a table's rows is found, so none is passed over; what cannot be
read with certainty is refused instead:

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
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from auditor.contract import TABLES
from auditor.errors import InputError

# The provenance columns every scanned row carries: the file it was read from (its path
# relative to the dataset folder) and its row within that file.
FILE_COLUMN = "_file"
ROW_COLUMN = "_row"
PROVENANCE = (FILE_COLUMN, ROW_COLUMN)
# Names Hive, Spark and Arrow leave out of a dataset: job markers, checksums, summaries.
IGNORED_PREFIXES = (".", "_")
FILE_KINDS = {"folder": stat.S_ISDIR, "FIFO": stat.S_ISFIFO, "character device": stat.S_ISCHR}
FILE_KINDS |= {"block device": stat.S_ISBLK, "socket": stat.S_ISSOCK}
# (key, value) of each hive partition folder between a table's folder and its file.
Partition = tuple[tuple[str, str], ...]


def table_paths(root: Path, table: str) -> list[Path] | None:
    """The files of `table` under the dataset folder `root`, in a stable order; None when
    the dataset does not hold the table."""
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


def partitions(folder: Path, table: str, paths: Sequence[Path]) -> dict[Path, Partition]:
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
        column = column_named(table, key)
        if column:
            raise _reserved_key(where, key, column, table)
        seen.add(key.lower())
        partition.append((key, value))
    return tuple(partition)


def column_named(table: str, key: str) -> str | None:
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
