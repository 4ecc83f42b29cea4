"""What a page covers, for its header: the gaming days and the properties. A page read on
its own (printed, mailed, filed in a case) says which nights and which casinos it is
about before anything else.

A run's scope is its `coverage.parquet` (the tables and gaming days it audited, with
each table's property, written with the set); a set written before that file existed is
read through the catalog's views, which need the dataset in place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

import polars as pl

from auditor.output.located import COVERAGE_FILE, GAMING_DAY_SQL
from auditor.output.sandboxed_query import Catalog, QueryError
from auditor.report import data

LISTED = 6  # days or properties named one by one; more are counted
GAMING_DAY_SHIFT = timedelta(hours=12)  # a gaming day runs noon to noon UTC

_CATALOG_SCOPE = f"""
SELECT DISTINCT r.table_id, {GAMING_DAY_SQL.format(ts="r.dealt_at")} AS gaming_day,
       t.property_id
FROM rounds r
LEFT JOIN (SELECT table_id, arg_max(property_id, effective_from) AS property_id
           FROM tables GROUP BY table_id) t USING (table_id)
WHERE r.dealt_at IS NOT NULL
"""


@dataclass(frozen=True)
class Scope:
    days: tuple[date, ...]
    properties: tuple[str, ...]
    # The same scope table by table, for a page of one table.
    by_table: tuple[tuple[str, date, str | None], ...] = ()

    def of_table(self, table_id: str) -> Scope:
        rows = [r for r in self.by_table if r[0] == table_id]
        if not rows:
            return self
        return scope_of([r[1] for r in rows], [r[2] for r in rows])


def scope_of(days: Iterable[date | None], properties: Iterable[str | None]) -> Scope:
    return Scope(
        tuple(sorted({d for d in days if d is not None})),
        tuple(sorted({p for p in properties if p is not None})),
    )


def run_scope(catalog: Catalog, folder: Path) -> Scope:
    """The gaming days and properties the run in `folder` audited."""
    covered = Path(folder) / COVERAGE_FILE
    try:
        rows = pl.read_parquet(covered, columns=["table_id", "gaming_day", "property_id"])
    except (OSError, pl.exceptions.PolarsError):
        try:
            rows = data.frame(catalog, _CATALOG_SCOPE)
        except QueryError:
            return Scope((), ())
    found = scope_of(rows["gaming_day"], rows["property_id"])
    table_rows = tuple(rows.select("table_id", "gaming_day", "property_id").unique().iter_rows())
    return Scope(found.days, found.properties, table_rows)


def gaming_day(moment: datetime) -> date:
    """The gaming day of a UTC moment: its date twelve hours earlier."""
    return (moment - GAMING_DAY_SHIFT).date()


def _names(items: list[str], listed: int = LISTED) -> str:
    if len(items) > listed:
        return f"{', '.join(items[: listed - 1])} and {len(items) - listed + 1:,} more"
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} and {items[-1]}"


def days_text(days: Iterable[date]) -> str:
    """ "Gaming day 2026-11-05", "Gaming days 2026-11-01 to 2026-11-05", "Gaming days
    2026-11-01, 2026-11-03 and 2026-11-05", always with the day's hours."""
    found = sorted(set(days))
    if not found:
        return "No gaming day audited"
    if len(found) == 1:
        said = f"Gaming day {found[0]}"
    elif (found[-1] - found[0]).days + 1 == len(found):
        said = f"Gaming days {found[0]} to {found[-1]}"
    elif len(found) <= LISTED:
        said = f"Gaming days {_names([str(d) for d in found])}"
    else:
        said = f"Gaming days {found[0]} to {found[-1]} ({len(found):,} of them)"
    return f"{said} (noon to noon UTC)"


def properties_text(properties: Iterable[str]) -> str:
    """ "property MA-PROP-1", "properties MA-PROP-1, MA-PROP-2 and MD-PROP-1"."""
    found = sorted(set(properties))
    if not found:
        return "property not known"
    noun = "property" if len(found) == 1 else "properties"
    return f"{noun} {_names([data_short(p) for p in found])}"


def scope_text(scope: Scope) -> str:
    return f"{days_text(scope.days)} · {properties_text(scope.properties)}"


def data_short(value: str, width: int = 60) -> str:
    # A hostile property id may be a megabyte long: the header names its start.
    return value if len(value) <= width else f"{value[: width - 1]}…"


def subject_scope(
    run: Scope, table_id: str | None, rounds: pl.DataFrame, findings: pl.DataFrame
) -> Scope:
    """The gaming days and properties of one subject of a run: those of its rounds and
    findings; the run's (its table's, for a table) where they name none, as a table's
    own findings carry no time."""
    moments = [*rounds["dealt_at"], *findings["dealt_at"]]
    found = scope_of(
        (gaming_day(m) for m in moments if m is not None),
        [*rounds["property_id"], *findings["property_id"]],
    )
    fallback = run.of_table(table_id) if table_id is not None else run
    return Scope(found.days or fallback.days, found.properties or fallback.properties)
