"""The gaming day a landed file belongs to (noon to noon UTC, as the archive and the
reports draw it), and the tables (table_id) it touches.

A file's day is the one its path names in a hive folder `gaming_date=YYYY-MM-DD` (or
`gaming_day=`), else the day of its first row's moment: a round's `dealt_at`, a shoe's
`opened_at`, a wager's `placed_at`, a collection's `collected_at`. The tables' options
(`tables`) and the Royal 9 chairs (`royal9_seats`) hold no moment of play: a file of
them belongs to every day (standing), as the nightly audit reads them whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

STANDING = "standing"  # a file of every gaming day
MOMENTS = {
    "rounds": "dealt_at",
    "shoes": "opened_at",
    "wagers": "placed_at",
    "commission_collections": "collected_at",
}
STANDING_TABLES = ("tables", "royal9_seats")
_HIVE_DAY = re.compile(r"(?:^|/)gaming_da(?:te|y)=(\d{4}-\d{2}-\d{2})(?:/|$)")


class UndatedFile(ValueError):
    """A file of a table of play that says no gaming day: neither its path nor its rows."""


@dataclass(frozen=True)
class Placed:
    day: str  # YYYY-MM-DD, or STANDING
    tables: tuple[str, ...]  # the table_ids it names; () for wagers (their rounds name them)


def gaming_day(moment: datetime) -> date:
    """The gaming day of an aware moment: noon to noon UTC."""
    return (moment - timedelta(hours=12)).date()


def place(path: Path, relative: str, table: str) -> Placed:
    """The file's gaming day and the tables it touches, read from its path and rows."""
    columns = pq.read_schema(path).names
    tables: tuple[str, ...] = ()
    if "table_id" in columns:
        ids = pl.read_parquet(path, columns=["table_id"])["table_id"].drop_nulls().unique()
        tables = tuple(sorted(ids))
    if table in STANDING_TABLES:
        return Placed(STANDING, tables)
    if named := _HIVE_DAY.search(relative):
        return Placed(named[1], tables)
    moment = MOMENTS[table]
    if moment in columns:
        first = pl.read_parquet(path, columns=[moment])[moment].drop_nulls().min()
        if isinstance(first, datetime):
            # Naive timestamps are UTC (the contract).
            aware = first if first.tzinfo is not None else first.replace(tzinfo=UTC)
            return Placed(gaming_day(aware).isoformat(), tables)
    raise UndatedFile(
        f"{relative}: says no gaming day (no {moment} and no gaming_date= folder); not read"
    )
