"""What the period report reads from the archive's catalog (`archive.duckdb`), and nothing
else but the `checks` table of a run's own catalog for the rules' titles.

The period is a range of gaming days, optionally one property. Its scope is fixed once,
as two temporary tables of the (read-only) connection, so that every figure counts the
same rows: `period_coverage`, the table-nights of the period with the run in force for
each (`coverage_current`: a re-audit supersedes), and `period_findings`, the findings
of those runs on those table-nights (`findings_current`'s rows for the period). Findings
of superseded runs are never counted; they are only said to exist.

Every statement is our own; the property comes from the command line and is only ever a
parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from auditor.archive.catalog import RUNS, SET
from auditor.errors import AuditorError
from auditor.output.files import DUCKDB_FILE
from auditor.output.sandboxed_query import Catalog, QueryError, open_sandboxed
from auditor.report import data

# A run's rule titles are read from the newest runs of the period until every rule found
# has one: one run, unless the rules changed over the period.
CHECK_RUNS_READ = 8


class PeriodReportError(AuditorError):
    """A period that cannot be reported: FROM after TO, an unknown property (exit 2)."""


@dataclass(frozen=True)
class Period:
    start: date
    end: date  # inclusive
    property_id: str | None = None

    def params(self) -> dict[str, Any]:
        given = {"start": self.start, "end": self.end}
        return given if self.property_id is None else {**given, "property": self.property_id}

    def property_clause(self, column: str) -> str:
        return "" if self.property_id is None else f" AND {column} = $property"


def _run(catalog: Catalog, sql: str, params: dict[str, Any]) -> None:
    try:
        catalog.con.execute(sql, params)
    except duckdb.Error as exc:
        raise QueryError(f"{catalog.path}: {str(exc).splitlines()[0]}") from exc


def fix_scope(catalog: Catalog, period: Period) -> None:
    """The period's table-nights and findings in force, as temporary tables, and the
    runs' records (each view over the runs reads every run's file: read once here)."""
    params = period.params()
    _run(
        catalog,
        "CREATE OR REPLACE TEMP TABLE archive_runs AS "
        "SELECT run_id, started_at, gaming_days FROM runs",
        {},
    )
    _run(
        catalog,
        "CREATE OR REPLACE TEMP TABLE period_coverage AS "
        "SELECT table_id, property_id, gaming_day, rounds, dealers, run_id "
        "FROM coverage_current WHERE gaming_day BETWEEN $start AND $end"
        + period.property_clause("property_id"),
        params,
    )
    # `findings_current`'s own join, on the period's table-nights only (the view would
    # find the runs in force of every night again). The table-night's property (its
    # Rules Submission) is the scope's; a finding shows its own when it has one.
    _run(
        catalog,
        """CREATE OR REPLACE TEMP TABLE period_findings AS
        SELECT f.finding_id, f.rule, f.severity, f.citation, f.located_table_id AS table_id,
               f.dealer_id, coalesce(f.property_id, c.property_id) AS property_id,
               f.ruleset, f.impact, f.gaming_day, f.run_id
        FROM findings_every_run f JOIN period_coverage c
          ON c.run_id = f.run_id AND c.table_id = f.located_table_id
         AND c.gaming_day = f.gaming_day
        WHERE f.gaming_day BETWEEN $start AND $end""",
        {"start": period.start, "end": period.end},
    )


def properties(catalog: Catalog) -> list[str]:
    """Every property the archive has audited a table of."""
    found = data.frame(
        catalog,
        "SELECT DISTINCT property_id FROM coverage WHERE property_id IS NOT NULL ORDER BY 1",
    )
    return found["property_id"].to_list()


def archive_span(catalog: Catalog, property_id: str | None) -> tuple[date | None, date | None]:
    """The first and last gaming day the archive covers (of the property, when given)."""
    where = "" if property_id is None else " WHERE property_id = $property"
    row = data.frame(
        catalog,
        f"SELECT min(gaming_day) AS first, max(gaming_day) AS last FROM coverage{where}",
        {"property": property_id},
    ).row(0)
    return row[0], row[1]


def coverage(catalog: Catalog) -> pl.DataFrame:
    return data.frame(catalog, "SELECT * FROM period_coverage ORDER BY gaming_day, table_id")


def findings(catalog: Catalog) -> pl.DataFrame:
    return data.frame(
        catalog, "SELECT * FROM period_findings ORDER BY gaming_day, table_id, rule, finding_id"
    )


def runs(catalog: Catalog) -> pl.DataFrame:
    """Every run that audited a table-night of the period, oldest audit first: how many of
    the period's table-nights it audited, how many it is still in force for, and whether
    it audited a table-night an earlier run had audited already (a re-audit)."""
    return data.frame(
        catalog,
        """WITH covering AS (
          SELECT v.run_id, v.table_id, v.gaming_day, r.started_at,
                 row_number() OVER (PARTITION BY v.table_id, v.gaming_day
                                    ORDER BY r.started_at, v.run_id) AS nth,
                 c.run_id = v.run_id AS in_force
          FROM coverage v JOIN archive_runs r USING (run_id)
          JOIN period_coverage c ON c.table_id = v.table_id AND c.gaming_day = v.gaming_day
        )
        SELECT run_id, min(started_at) AS started_at, count(*) AS table_nights,
               count(*) FILTER (WHERE in_force) AS in_force, bool_or(nth > 1) AS reaudit,
               min(gaming_day) AS first_night, max(gaming_day) AS last_night
        FROM covering GROUP BY run_id ORDER BY started_at, run_id""",
    )


def superseded_findings(catalog: Catalog) -> int:
    """Findings of the period's superseded runs that no run in force found again."""
    return data.frame(
        catalog,
        """SELECT count(DISTINCT f.finding_id) AS n FROM findings_every_run f
        JOIN period_coverage c ON c.table_id = f.located_table_id
         AND c.gaming_day = f.gaming_day AND c.run_id <> f.run_id
        WHERE f.finding_id NOT IN (SELECT finding_id FROM period_findings)""",
    ).item()


def statuses(catalog: Catalog) -> pl.DataFrame:
    """Each finding of the period with its review status now and the first night it was
    ever found: `finding_status`'s columns, for these findings alone (the view works
    out every finding of the archive)."""
    return data.frame(
        catalog,
        """WITH latest AS (
          SELECT finding_id, status, note, "by" AS reviewed_by, "at" AS reviewed_at
          FROM reviews WHERE finding_id IN (SELECT finding_id FROM period_findings)
          QUALIFY row_number() OVER (PARTITION BY finding_id ORDER BY seq DESC) = 1
        ), seen AS (
          SELECT finding_id, min(gaming_day) AS first_night,
                 count(DISTINCT gaming_day) AS nights
          FROM findings_every_run WHERE finding_id IN (SELECT finding_id FROM period_findings)
          GROUP BY finding_id
        )
        SELECT s.finding_id, coalesce(l.status, 'open') AS status, l.note, l.reviewed_by,
               l.reviewed_at, s.first_night, s.nights
        FROM seen s LEFT JOIN latest l USING (finding_id)""",
    )


def reviews(catalog: Catalog) -> pl.DataFrame:
    """Every ledger record about a finding of the period, in the ledger's order."""
    return data.frame(
        catalog,
        """SELECT seq, finding_id, status, note, "by", "at" FROM reviews
        WHERE finding_id IN (SELECT finding_id FROM period_findings) ORDER BY seq""",
    )


def ledger_as_of(catalog: Catalog) -> Any:
    """When the ledger's latest record was written (None for an empty ledger)."""
    return data.frame(catalog, 'SELECT max("at") AS at FROM reviews').item()


def _dollars_in_detail(pattern: str) -> str:
    """SQL: the amount the hold test's detail writes where `pattern` puts its group."""
    return f"TRY_CAST(replace(regexp_extract(s.detail, '{pattern}', 1), ',', '') AS DOUBLE)"


# The money wagered and the standard deviation of the house's result are in the hold
# test's own words (`surveillance.holds`: "kept $X of $Y wagered on N wagers (kept $E in
# theory, sd $S)"): the only place the catalog keeps them. The stake weighs one night's
# hold against another's; the nights' variances add up to a week's.
_STAKE = _dollars_in_detail(r"of \$([0-9,]+\.[0-9]+) wagered")
_SD = _dollars_in_detail(r"sd \$([0-9,]+\.[0-9]+)\)")


def nightly_holds(catalog: Catalog) -> pl.DataFrame:
    """Each table-night's hold test of the run in force: the money wagered, what the house
    kept and what it would keep in theory. A run over several gaming days has no
    per-night test (its tests carry no gaming day): its table-nights are left out."""
    return data.frame(
        catalog,
        f"""SELECT s.key AS table_id, c.property_id, s.gaming_day, s.wagers,
               {_STAKE} AS stake, {_SD} AS sd, s.observed, s.expected
        FROM surveillance s JOIN period_coverage c
          ON c.run_id = s.run_id AND c.table_id = s.key AND c.gaming_day = s.gaming_day
        WHERE s.level = 'table' AND s.statistic = 'hold'
        ORDER BY s.key, s.gaming_day""",
    )


def checks(catalog: Catalog, archive: Path, rules: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each rule's check (title, severity, citation) from the `checks` table of the
    period's newest runs, read in the same sandbox as the archive; a rule no run names
    is left out (the page falls back on the finding's own citation)."""
    wanted = set(rules)
    found: dict[str, dict[str, Any]] = {}
    newest = data.frame(
        catalog,
        """SELECT DISTINCT f.run_id, r.started_at FROM period_findings f JOIN archive_runs r
        USING (run_id) ORDER BY r.started_at DESC, f.run_id DESC LIMIT $limit""",
        {"limit": CHECK_RUNS_READ},
    )
    for run_id in newest["run_id"]:
        if wanted <= set(found):
            break
        for code, check in _run_checks(archive / RUNS / run_id / SET / DUCKDB_FILE).items():
            found.setdefault(code, check)
    return {code: check for code, check in found.items() if code in wanted}


def _run_checks(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    try:
        catalog = open_sandboxed(path, (None, []))
    except QueryError:
        return {}
    try:
        return data.checks(catalog)
    except QueryError:
        return {}  # a catalog of another version: its checks are not read
    finally:
        catalog.close()
