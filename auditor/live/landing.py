"""The landing folder a logging system fills during the gaming day: which of its files
are complete, and what each holds.

The convention for the systems that export (docs/live.md):

- A file is a contract table's rows where a dataset's would be: `NAME.parquet` or any
  Parquet file under a folder `NAME/` (hive folders such as `gaming_date=2026-11-24/`
  allowed), NAME one of the contract's tables.
- A name starting with `.` or `_`, or ending in `.tmp`, is never read: write the file
  under such a name and rename it when it is whole (a rename within a folder is atomic).
  A file written in place is read once its size and modification time have not changed
  for the settle time and its Parquet footer reads.
- A file is written once. One that changes after it was read is an error, said on stderr
  and kept in the live run, never read again.
- Only regular files are read; a link is followed only when it leads to a regular file
  inside the landing folder.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from auditor.contract import TABLES

IGNORED_PREFIXES = (".", "_")
IGNORED_SUFFIX = ".tmp"


@dataclass(frozen=True)
class Seen:
    """A file of the landing folder as one look found it."""

    path: str  # relative to the landing folder, with forward slashes
    table: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Refusal:
    path: str
    reason: str


def _ignored(name: str) -> bool:
    return name.startswith(IGNORED_PREFIXES) or name.endswith(IGNORED_SUFFIX)


def table_of(relative: str) -> str | None:
    """The contract table a landing path holds rows of, None when it holds none."""
    parts = relative.split("/")
    if len(parts) == 1:
        stem = parts[0].removesuffix(".parquet")
        return stem if parts[0].endswith(".parquet") and stem in TABLES else None
    return parts[0] if parts[0] in TABLES and parts[-1].endswith(".parquet") else None


def look(landing: Path) -> tuple[list[Seen], list[Refusal]]:
    """Every file of the landing folder that may hold a table's rows, and the entries that
    cannot (named once each by the caller): links out of the folder, FIFOs, devices."""
    found: list[Seen] = []
    refused: list[Refusal] = []
    root = landing.resolve()
    for folder, names, files in os.walk(root, followlinks=False):
        names[:] = sorted(n for n in names if not _ignored(n))
        base = Path(folder)
        for name in sorted(files + [n for n in names if (base / n).is_symlink()]):
            if _ignored(name):
                continue
            path = base / name
            relative = path.relative_to(root).as_posix()
            table = table_of(relative)
            if table is None:
                refused.append(Refusal(relative, "not a contract table's file; not read"))
                continue
            info = _regular_inside(path, root)
            if isinstance(info, str):
                refused.append(Refusal(relative, info))
                continue
            found.append(Seen(relative, table, info.st_size, info.st_mtime_ns))
    return found, refused


def _regular_inside(path: Path, root: Path) -> os.stat_result | str:
    """The file's status, or why `path` is not a regular file within `root` (a link is
    followed only within it)."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            target = path.resolve()
            if not target.is_relative_to(root):
                return f"a link out of the landing folder (to {target}); not read"
            info = target.stat()
    except OSError as exc:
        return f"cannot be examined ({exc.strerror}); not read"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file; not read"
    return info


def footer_reads(path: Path) -> bool:
    """Whether a Parquet footer can be read from the file: a file still being written in
    place has none yet."""
    try:
        pq.read_metadata(path)
    except Exception:  # pyarrow raises several kinds for a torn or empty file
        return False
    return True


class Settler:
    """Which files have stayed as they were for the settle time: a file is complete when
    its size and modification time are those of a look at least `settle` seconds ago."""

    def __init__(self, settle: float) -> None:
        self.settle = settle
        self._since: dict[str, tuple[int, int, float]] = {}

    def complete(self, seen: list[Seen], now: float) -> list[Seen]:
        ready = []
        current = {}
        for file in seen:
            stamp = (file.size, file.mtime_ns)
            before = self._since.get(file.path)
            since = before[2] if before is not None and before[:2] == stamp else now
            current[file.path] = (*stamp, since)
            if now - since >= self.settle:
                ready.append(file)
        self._since = current
        return ready
