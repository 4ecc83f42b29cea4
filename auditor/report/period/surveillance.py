"""The archive's surveillance over periods (`auditor surveil`), as the reports across nights
show it: the catalog's `period_surveillance` (every test of every surveil run of a
period) and `period_alerts` (those past the run's threshold), each row with its period's
first and last gaming day and its `surveil_run`, and `period_runs`, whose `reported`
marks the run of each period the reports show (the latest at the default false-discovery
rate, or the latest: `archive.catalog`). Only that run's tests are ever counted or
listed: a period surveilled three times is not three times the tests.

The views exist once a period has been surveilled: before that, the pages say how to
surveil one. The period report shows the surveil run of exactly its own gaming days, and
names the other surveilled periods that overlap them; an investigation shows its
subject's tests in every surveilled period overlapping its nights (each period's shown
run), whose dates are always shown: a period's tests are over the whole of it.

Every statement is our own; ids and dates are only ever parameters.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from auditor.output.sandboxed_query import Catalog
from auditor.report import data

VIEWS = ("period_surveillance", "period_alerts", "period_runs")
# The tests of the run each period's reports show.
REPORTED = (
    "(period_from, period_to, surveil_run) IN "
    "(SELECT period_from, period_to, surveil_run FROM period_runs WHERE reported)"
)
ALERT_ROWS = 100  # alerts listed on the period report
SUBJECT_TESTS = 200  # a subject's tests listed on its investigation
PERIOD_ROWS = 40  # surveilled periods listed
PERIOD_TEST_COLUMNS = (
    "period_from, period_to, level, key, table_id, statistic, observed, expected, z, "
    "p_value, q_value, detail, rounds, wagers, alert_fdr, surveil_run"
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
    present = data.relations(catalog.con, VIEWS)
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
    """Each surveilled period overlapping `start` to `end`, earliest first: the run its
    reports show (`surveil_run`, its tests, alerts and false-discovery rate) and how many
    runs it has."""
    where, params = _overlap(start, end)
    found = data.frame(
        catalog,
        f"""SELECT period_from, period_to, surveil_run, tests, alerts, alert_fdr,
               (SELECT count(*) FROM period_runs o WHERE o.period_from = p.period_from
                AND o.period_to = p.period_to) AS runs
        FROM period_runs p WHERE reported{where}
        ORDER BY period_from, period_to""",
        params,
    )
    return list(found.iter_rows(named=True))


def period_section(
    catalog: Catalog, start: date, end: date, tables_of: str | None = None
) -> dict[str, Any]:
    """What the period report shows of the surveillance: the surveil run of exactly these
    gaming days it reports (`shown`: None when the period was never surveilled), its
    alerts, the most certain first, and its tests counted; the other surveilled periods
    overlapping these nights are named (`others`), never counted in. `tables_of`: a query
    of the table ids in scope (a property's); a table's alert of another table is then
    left out, a dealer's or patron's kept (they span properties)."""
    shown: dict[str, Any] = {
        "surveilled": False, "shown": None, "others": [], "alerts": [], "more": 0, "tests": 0,
    }  # fmt: skip
    if not surveilled(catalog):
        return shown
    listed = periods(catalog, start, end)
    exact = [p for p in listed if (p["period_from"], p["period_to"]) == (start, end)]
    others = [p for p in listed if p not in exact]
    if not exact:
        return {**shown, "others": others[:PERIOD_ROWS], "others_more": _over(others)}
    run = exact[0]
    where = " AND period_from = $start AND period_to = $end AND surveil_run = $run"
    params = {"start": start, "end": end, "run": run["surveil_run"]}
    if tables_of is not None:
        where += f" AND (level <> 'table' OR key IN ({tables_of}))"
    alerts = data.frame(
        catalog,
        f"SELECT {PERIOD_TEST_COLUMNS} FROM period_alerts WHERE true{where} ORDER BY {ORDER}",
        params,
    )
    return {
        "surveilled": True,
        "shown": run,
        "others": others[:PERIOD_ROWS],
        "others_more": _over(others),
        "tests": run["tests"],
        "alerts": list(alerts.head(ALERT_ROWS).iter_rows(named=True)),
        "more": max(0, alerts.height - ALERT_ROWS),
        "total": alerts.height,
    }


def _over(rows: list[Any]) -> int:
    return max(0, len(rows) - PERIOD_ROWS)


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
        WHERE ({SUBJECT_OF[kind]}) AND {REPORTED}{where}
        ORDER BY alert DESC, {ORDER}""",
        {"id": subject_id, **params},
    )
