"""The archive's surveillance over periods (`auditor surveil`), as the reports across nights
show it: the catalog's `period_surveillance` (every test of a surveilled period) and
`period_alerts` (those past the period's threshold), each row with its period's first
and last gaming day.

The views exist once a period has been surveilled: before that, the pages say how to
surveil one. A surveilled period is shown where it overlaps the page's gaming days; its
tests are over the whole of it, not the overlap alone, so its dates are always shown.

Every statement is our own; ids and dates are only ever parameters.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from auditor.output.query import Catalog
from auditor.report import data

VIEWS = ("period_surveillance", "period_alerts")
ALERT_ROWS = 100  # alerts listed on the period report
SUBJECT_TESTS = 200  # a subject's tests listed on its investigation
PERIOD_ROWS = 40  # surveilled periods listed
PERIOD_TEST_COLUMNS = (
    "period_from, period_to, level, key, table_id, statistic, observed, expected, z, "
    "p_value, q_value, detail, rounds, wagers, alert_fdr"
)
# A subject's tests over a period, with its id as the parameter $id (a period tests no
# shoe: its nights did).
SUBJECT_OF = {
    "patron": "level = 'patron' AND key = $id",
    "dealer": "level = 'dealer' AND key = $id",
    "table": "level = 'table' AND key = $id",
}
ORDER = "period_from, period_to, q_value, p_value, level, key, statistic"


def surveilled(catalog: Catalog) -> bool:
    """Whether any period has been surveilled (the catalog then has both views)."""
    present = data.relations(catalog.con)
    return all(view in present for view in VIEWS)


def _overlap(start: date | None, end: date | None) -> tuple[str, dict[str, Any]]:
    """SQL: the periods that share a gaming day with `start` to `end` (either open)."""
    clauses, params = [], {}
    if end is not None:
        clauses.append("period_from <= $end")
        params["end"] = end
    if start is not None:
        clauses.append("period_to >= $start")
        params["start"] = start
    return "".join(f" AND {c}" for c in clauses), params


def periods(catalog: Catalog, start: date | None, end: date | None) -> list[dict[str, Any]]:
    """Each surveilled period overlapping `start` to `end`, earliest first: its tests,
    its alerts and the false-discovery rate it was judged at."""
    where, params = _overlap(start, end)
    found = data.frame(
        catalog,
        f"""SELECT period_from, period_to, count(*) AS tests,
               count(*) FILTER (WHERE alert) AS alerts, max(alert_fdr) AS alert_fdr
        FROM period_surveillance WHERE true{where}
        GROUP BY period_from, period_to ORDER BY period_from, period_to""",
        params,
    )
    return list(found.iter_rows(named=True))


def period_section(
    catalog: Catalog, start: date, end: date, tables_of: str | None = None
) -> dict[str, Any]:
    """What the period report shows of the surveillance over the period: the surveilled
    periods overlapping it and their alerts, the most certain first within each period.
    `tables_of`: a query of the table ids in scope (a property's); a table's alert of
    another table is then left out, a dealer's or patron's kept (they span properties)."""
    shown: dict[str, Any] = {"surveilled": False, "periods": [], "alerts": [], "more": 0}
    if not surveilled(catalog):
        return shown
    listed = periods(catalog, start, end)
    where, params = _overlap(start, end)
    if tables_of is not None:
        where += f" AND (level <> 'table' OR key IN ({tables_of}))"
    alerts = data.frame(
        catalog,
        f"SELECT {PERIOD_TEST_COLUMNS} FROM period_alerts WHERE true{where} ORDER BY {ORDER}",
        params,
    )
    return {
        "surveilled": bool(listed),
        "periods": listed[:PERIOD_ROWS],
        "periods_more": max(0, len(listed) - PERIOD_ROWS),
        "tests": sum(p["tests"] for p in listed),
        "alerts": list(alerts.head(ALERT_ROWS).iter_rows(named=True)),
        "more": max(0, alerts.height - ALERT_ROWS),
        "total": alerts.height,
    }


def subject_tests(
    catalog: Catalog, kind: str, subject_id: str, start: date | None, end: date | None
) -> pl.DataFrame:
    """The tests naming a patron, dealer or table in every surveilled period overlapping
    `start` to `end`: its alerts first, then the most certain."""
    if not surveilled(catalog):
        return pl.DataFrame()
    where, params = _overlap(start, end)
    return data.frame(
        catalog,
        f"""SELECT {PERIOD_TEST_COLUMNS}, alert FROM period_surveillance
        WHERE ({SUBJECT_OF[kind]}){where}
        ORDER BY alert DESC, {ORDER}""",
        {"id": subject_id, **params},
    )
