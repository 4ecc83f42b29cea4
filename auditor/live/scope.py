"""Which of a gaming day's files a batch audits: those of the tables its new files touch,
with the files every table needs (the tables' options and the Royal 9 chairs), so that a
batch costs what its tables dealt, not the whole day so far.

Every check reads one table at most (its rounds, shoes, wagers and collections; its
options), so a table's findings are those of its own files. A file names its tables by
its rows' `table_id`; a wagers file names none, and takes those of its rounds, looked up
in the day's rounds files read so far (a wagers file landed before its rounds takes
them when they land). What reads across tables (an id logged twice at two tables, which
the loader quarantines) is found by an audit of the whole day: the first after a start,
one that a file of the tables' options or chairs brings, and the close.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

WAGERS = "wagers"
ROUNDS = "rounds"


@dataclass
class DayTables:
    """What a day's files say of their tables: each file's, and each round's table (for
    the wagers files, which name rounds only)."""

    landing: Path
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)  # path -> tables
    pending: set[str] = field(default_factory=set)  # wagers files with rounds not yet read
    rounds: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"round_id": pl.String, "table_id": pl.String})
    )

    def add(self, records: Iterable[dict]) -> set[str]:
        """Take the day's new files (their files.jsonl records); the tables they touch,
        with those of wagers files whose rounds they bring."""
        records = list(records)
        touched: set[str] = set()
        new_rounds = [
            pl.read_parquet(self.landing / r["path"], columns=["round_id", "table_id"])
            for r in records
            if r["table"] == ROUNDS and _has(self.landing / r["path"], "round_id", "table_id")
        ]
        if new_rounds:
            self.rounds = pl.concat([self.rounds, *new_rounds]).unique("round_id")
        new_wagers = {r["path"] for r in records if r["table"] == WAGERS}
        for record in records:
            if record["table"] != WAGERS:
                tables = self._named(record)
                self.files[record["path"]] = tables
                touched.update(tables)
        self.pending |= new_wagers
        for path in sorted(self.pending):
            tables, complete = self._wager_tables(path)
            if path in new_wagers or tables != self.files.get(path):
                touched.update(tables)
            self.files[path] = tables
            if complete:
                self.pending.discard(path)
        return touched

    def _named(self, record: dict) -> tuple[str, ...]:
        """The tables a file's rows name: as read when it landed, or read now (a record
        of an earlier watch, which kept none)."""
        if "tables" in record:
            return tuple(record["tables"])
        path = self.landing / record["path"]
        if not _has(path, "table_id"):
            return ()
        ids = pl.read_parquet(path, columns=["table_id"])["table_id"].drop_nulls().unique()
        return tuple(sorted(ids))

    def _wager_tables(self, path: str) -> tuple[tuple[str, ...], bool]:
        """The tables of a wagers file's rounds read so far, and whether all were read."""
        if not _has(self.landing / path, "round_id"):
            return (), True
        rounds = pl.read_parquet(self.landing / path, columns=["round_id"]).unique()
        placed = rounds.join(self.rounds, on="round_id", how="left")
        tables = tuple(sorted(placed["table_id"].drop_nulls().unique()))
        return tables, placed["table_id"].null_count() == 0

    def files_of(self, tables: set[str]) -> list[str]:
        """The day's files that hold rows of `tables`, and those that name no table (rows
        the loader will quarantine, or wagers whose rounds have not landed)."""
        return sorted(
            path for path, named in self.files.items() if not named or set(named) & tables
        )


def batch_paths(day_files: list[str], day_tables: DayTables, tables: set[str]) -> list[str]:
    """The files a batch over `tables` reads: the standing ones and the tables' own."""
    standing = [path for path in day_files if path not in day_tables.files]
    return sorted(set(standing) | (set(day_tables.files_of(tables)) & set(day_files)))


def _has(path: Path, *columns: str) -> bool:
    """Whether the file's schema holds the columns (a file of another schema is the
    loader's to refuse, in the batch that reads it)."""
    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowException):
        return False
    return all(column in names for column in columns)
