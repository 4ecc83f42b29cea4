"""What the archive remembers of a night's findings, for the nightly report of a run that
goes into an archive (`auditor audit --archive`).

The report is written before its run is added, so the archive holds earlier runs only;
a report built again after the add leaves the run's own rows out, and says the same.
For each of the night's findings: "new", or the earlier nights it was found on and its
latest review. And the findings of earlier nights still open or escalated, oldest first,
which the night's findings alone would not bring back to anyone's attention.

A missing archive (the first run of one) has no earlier runs; an archive that cannot be
read leaves the report without history and says why, rather than failing the audit
whose set is already written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl

from auditor.archive.attached_runs import open_archive_catalog
from auditor.archive.catalog import CATALOG_FILE
from auditor.errors import AuditorError
from auditor.output.located import COVERAGE_FILE
from auditor.output.sandboxed_query import Catalog
from auditor.report import data

# The escalated findings of earlier nights are listed (few, and waiting on someone); the
# open ones are counted by rule and age: an archive of months holds hundreds, and the
# review desk, the period report and `finding_status` are where they are worked through.
ESCALATED_SHOWN = 20
STILL_OPEN = ("open", "escalated")
# Age bands of a finding still open, in days since its first night before the report's.
AGE_BANDS = ((7, "under a week"), (14, "one to two weeks"), (28, "two to four weeks"))
OLDEST_BAND = "four weeks or more"

# Each finding of the earlier runs (every run but `$run`): what it is as last found, the
# nights it was found on, and its latest review. `finding_status` in the archive's
# catalog, less the run the report is of, once that run is in the archive too.
EARLIER_STATUS = """
WITH occurrences AS (
  SELECT f.*, r.started_at FROM findings_every_run f JOIN runs r USING (run_id)
  WHERE f.run_id <> $run
), seen AS (
  SELECT finding_id,
         arg_max(rule, started_at) AS rule, arg_max(severity, started_at) AS severity,
         arg_max(located_table_id, started_at) AS table_id,
         arg_max(dealer_id, started_at) AS dealer_id,
         arg_max(patron_id, started_at) AS patron_id,
         arg_max(impact, started_at) AS impact, arg_max(message, started_at) AS message,
         arg_max(gaming_day, started_at) AS gaming_day,
         min(gaming_day) AS first_night, max(gaming_day) AS last_night,
         count(DISTINCT gaming_day) AS nights
  FROM occurrences GROUP BY finding_id
), latest AS (
  SELECT * FROM reviews
  QUALIFY row_number() OVER (PARTITION BY finding_id ORDER BY seq DESC) = 1
)
SELECT s.*, coalesce(l.status, 'open') AS status, l.note, l."by" AS reviewed_by,
       l."at" AS reviewed_at
FROM seen s LEFT JOIN latest l USING (finding_id)
"""
SEVERITY_RANK = "CASE severity WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END"


@dataclass(frozen=True)
class History:
    """The archive's memory of a night: `seen` holds the night's findings found by an
    earlier run (by id; any other is new), `earlier` the first findings of other nights
    still open or escalated, `problem` why the archive could not be read."""

    archive: Path
    runs: int = 0
    seen: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    new: int = 0
    earlier: Sequence[dict[str, Any]] = ()  # the escalated ones, the oldest first
    by_rule_and_age: Sequence[dict[str, Any]] = ()
    age_bands: Sequence[str] = ()
    earlier_total: int = 0
    earlier_escalated: int = 0
    problem: str | None = None
    ledger: data.LedgerHead | None = None

    @property
    def repeated(self) -> int:
        return len(self.seen)

    @property
    def escalated_more(self) -> int:
        return max(0, self.earlier_escalated - len(self.earlier))


def read_history(
    archive: Path, folder: Path, run_catalog: Catalog, finding_ids: Sequence[str]
) -> History:
    """The history of the night whose catalog is `run_catalog` (in `folder`), from the
    archive's runs other than its own."""
    archive = Path(archive)
    try:
        # Read before the catalog's views: the page's reviews are as of this head or later.
        ledger = data.read_ledger_head(archive)
    except AuditorError as error:
        return History(archive, problem=str(error))
    if not (archive / CATALOG_FILE).is_file():
        # No run added yet: every finding is new, nothing earlier is open.
        return History(archive, new=len(set(finding_ids)), ledger=ledger)
    try:
        catalog = open_archive_catalog(archive, inputs=False)
    except AuditorError as error:
        return History(archive, problem=str(error))
    try:
        found = _read(catalog, archive, _run_id(run_catalog), finding_ids, _nights_of(folder))
    except AuditorError as error:
        return History(archive, problem=str(error))
    finally:
        catalog.close()
    return replace(found, ledger=ledger)


def _read(
    catalog: Catalog, archive: Path, run_id: str, finding_ids: Sequence[str], nights: list[date]
) -> History:
    ids = data.ids_of(finding_ids)
    params = {"run": run_id, "ids": ids, "nights": nights, "open": list(STILL_OPEN)}
    runs = data.frame(catalog, "SELECT count(*) FROM runs WHERE run_id <> $run", params).item()
    seen = data.frame(
        catalog,
        f"SELECT * FROM ({EARLIER_STATUS}) WHERE {data.among('finding_id', 'ids', ids)}",
        params,
    )
    # Other nights only: the night's own findings are listed with it, and those of its
    # nights it no longer finds are superseded by this run.
    still_open = f"""SELECT * FROM ({EARLIER_STATUS})
        WHERE status IN (SELECT unnest($open::VARCHAR[]))
          AND finding_id IN (SELECT finding_id FROM findings_current WHERE run_id <> $run)
          AND NOT {data.among("finding_id", "ids", ids)}
          AND (gaming_day IS NULL OR gaming_day NOT IN (SELECT unnest($nights::DATE[])))"""
    earlier = data.frame(
        catalog,
        f"SELECT * FROM ({still_open}) WHERE status = 'escalated' "
        f"ORDER BY first_night NULLS LAST, gaming_day NULLS LAST, {SEVERITY_RANK}, finding_id "
        f"LIMIT {ESCALATED_SHOWN}",
        params,
    )
    by_rule_and_age = _by_rule_and_age(catalog, still_open, params, nights)
    totals = data.frame(
        catalog,
        f"SELECT count(*) AS n, count(*) FILTER (WHERE status = 'escalated') AS escalated "
        f"FROM ({still_open})",
        params,
    ).row(0, named=True)
    return History(
        archive,
        runs=int(runs),
        seen={row["finding_id"]: row for row in seen.iter_rows(named=True)},
        new=len(ids) - seen.height,
        earlier=list(earlier.iter_rows(named=True)),
        by_rule_and_age=by_rule_and_age,
        age_bands=[label for _, label in AGE_BANDS] + [OLDEST_BAND],
        earlier_total=int(totals["n"]),
        earlier_escalated=int(totals["escalated"]),
    )


def _by_rule_and_age(
    catalog: Catalog, still_open: str, params: dict, nights: list[date]
) -> list[dict[str, Any]]:
    """Per rule: how many findings of earlier nights are still open or escalated, in each
    age band (days from the first night they were found to the report's first night), and
    the money they put at stake; the rules with the most money first."""
    band = " ".join(f"WHEN age < {days} THEN {i}" for i, (days, _) in enumerate(AGE_BANDS))
    reference = "$first_night" if nights else "current_date"
    frame = data.frame(
        catalog,
        f"""SELECT rule, CASE {band} ELSE {len(AGE_BANDS)} END AS band, count(*) AS n,
                   sum(abs(impact)) AS at_stake
            FROM (SELECT *, date_diff('day', first_night, {reference}) AS age
                  FROM ({still_open}))
            GROUP BY ALL""",
        params | ({"first_night": min(nights)} if nights else {}),
    )
    rules: dict[str, dict[str, Any]] = {}
    for row in frame.iter_rows(named=True):
        entry = rules.setdefault(
            row["rule"], {"rule": row["rule"], "bands": [0] * (len(AGE_BANDS) + 1), "at_stake": 0}
        )
        entry["bands"][row["band"]] += row["n"]
        entry["at_stake"] += row["at_stake"] or 0
    for entry in rules.values():
        entry["total"] = sum(entry["bands"])
    return sorted(rules.values(), key=lambda e: (-e["at_stake"], -e["total"], e["rule"]))


def _run_id(run_catalog: Catalog) -> str:
    return str(
        data.frame(run_catalog, "SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1").item()
    )


def _nights_of(folder: Path) -> list[date]:
    """The gaming days the run audited, from its set's coverage (written before the
    report); none when the set has no coverage."""
    path = Path(folder) / COVERAGE_FILE
    if not path.is_file():
        return []
    return sorted(pl.read_parquet(path, columns=["gaming_day"])["gaming_day"].drop_nulls().unique())
