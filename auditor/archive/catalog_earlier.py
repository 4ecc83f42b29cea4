"""The catalog views an earlier auditor wrote (before the internal schema, the
`findings_every_run` name, the views' comments and the surveil runs of a period), frozen
here word for word: `auditor verify` accepts an archive's catalog that is exactly these
(it was written by that auditor, and the next reader writes it anew as today's), and
names any other difference. Never edited: it is what was written then."""

from __future__ import annotations

import os
import re
from pathlib import Path

from auditor.archive.ledger import LEDGER_FILE
from auditor.archive.record import RECORD_FILE
from auditor.output.files import (
    ALERTS_FILE,
    COUNTS_FILE,
    FINDINGS_FILE,
    QUARANTINE_FILE,
    SURVEILLANCE_FILE,
)
from auditor.output.located import COVERAGE_FILE, LOCATED_FILE
from auditor.output.macros import sql_literal

# The tables such a catalog holds beside its views.
EARLIER_TABLES = frozenset({"built_for"})
RUNS = "runs"
SET = "set"
PERIODS = "periods"
PERIOD_NAME = re.compile(r"\d{4}-\d\d-\d\d_\d{4}-\d\d-\d\d")
PERIOD_FILES = {"period_surveillance": "tests.parquet", "period_alerts": "alerts.parquet"}
RUN_FILES = {
    "_findings": FINDINGS_FILE,
    "_located": LOCATED_FILE,
    "coverage": COVERAGE_FILE,
    "_quarantine": QUARANTINE_FILE,
    "_row_counts": COUNTS_FILE,
    "_surveillance": SURVEILLANCE_FILE,
    "_alerts": ALERTS_FILE,
}


def earlier_view_statements(archive: Path) -> list[str]:
    runs_glob = sql_literal(str(archive / RUNS / "*" / "run.json"))
    statements = [
        _record_view(archive),
        f"""CREATE VIEW runs AS
SELECT r.run_id, j.added_at, r.started_at, j.ended_at, j.dataset, j.command_line,
       j.gaming_days, j.tables, j.properties, j.findings, r.added_seq
FROM read_json({runs_glob}, format = 'auto', filename = true, columns = {{
  added_at: 'TIMESTAMPTZ', ended_at: 'TIMESTAMPTZ', dataset: 'VARCHAR',
  command_line: 'VARCHAR', gaming_days: 'DATE[]', tables: 'VARCHAR[]',
  properties: 'VARCHAR[]', findings: 'BIGINT'}}) j
JOIN _record r ON r.run_id = regexp_extract(j.filename, '/{RUNS}/([^/]+)/run.json$', 1)""",
    ]
    for view, name in RUN_FILES.items():
        glob = sql_literal(str(archive / RUNS / "*" / SET / name))
        statements.append(
            f"CREATE VIEW {view} AS SELECT * FROM (SELECT * EXCLUDE (filename), "
            f"regexp_extract(filename, '/{RUNS}/([^/]+)/{SET}/', 1) AS run_id "
            f"FROM read_parquet({glob}, filename = true, union_by_name = true)) "
            "WHERE run_id IN (SELECT run_id FROM _record)"
        )
    return statements + _joined_views(archive) + _period_views(archive)


def _record_view(archive: Path) -> str:
    """The runs the archive holds, in the order they were added, each with its start as
    recorded then; an archive made before the record: every run folder's run.json."""
    record = archive / RECORD_FILE
    if not os.path.lexists(record):
        runs_glob = sql_literal(str(archive / RUNS / "*" / "run.json"))
        return f"""CREATE VIEW _record AS
SELECT regexp_extract(filename, '/{RUNS}/([^/]+)/run.json$', 1) AS run_id, started_at,
       row_number() OVER (ORDER BY started_at, filename) AS added_seq
FROM read_json({runs_glob}, format = 'auto', filename = true,
               columns = {{started_at: 'TIMESTAMPTZ'}})
WHERE run_id NOT LIKE '.%'"""
    return f"""CREATE VIEW _record AS
SELECT name AS run_id, started_at, seq AS added_seq
FROM read_json({sql_literal(str(record))}, format = 'newline_delimited', columns = {{
  seq: 'BIGINT', kind: 'VARCHAR', name: 'VARCHAR', started_at: 'TIMESTAMPTZ'}})
WHERE kind = 'run'"""


def _period_views(archive: Path) -> list[str]:
    """Views over the periods' files, made only once a period is written (the catalog is
    written again when one is). The files are listed, not matched by a pattern: only a
    period's own folder (FROM_TO, no link) and its regular files, so that a link planted
    in the archive cannot lend the catalog another archive's alerts."""
    statements = []
    for view, name in PERIOD_FILES.items():
        files = [str(folder / name) for folder in _legacy_period_folders(archive)]
        files = [f for f in files if Path(f).is_file() and not Path(f).is_symlink()]
        if files:
            statements.append(
                f"CREATE VIEW {view} AS SELECT * FROM "
                f"read_parquet({sql_literal(files)}, union_by_name = true)"
            )
    return statements


def _legacy_period_folders(archive: Path) -> list[Path]:
    periods = archive / PERIODS
    if periods.is_symlink() or not periods.is_dir():
        return []
    return sorted(
        p
        for p in periods.iterdir()
        if PERIOD_NAME.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )


def _joined_views(archive: Path) -> list[str]:
    ledger = sql_literal(str(archive / LEDGER_FILE))
    return [
        # The run in force for each table and gaming day: the last audit to cover it.
        """CREATE VIEW coverage_current AS
SELECT c.* FROM coverage c JOIN runs r USING (run_id)
QUALIFY row_number() OVER (PARTITION BY c.table_id, c.gaming_day
                           ORDER BY r.started_at DESC, c.run_id DESC) = 1""",
        """CREATE VIEW run_days AS
SELECT run_id, CASE WHEN len(gaming_days) = 1 THEN gaming_days[1] END AS gaming_day
FROM runs""",
        """CREATE VIEW findings AS
SELECT f.*, l.gaming_day, l.property_id, l.ruleset, l.dealer_id, l.patron_id,
       coalesce(f.table_id, l.table_id) AS located_table_id
FROM _findings f LEFT JOIN _located l USING (run_id, finding_id)""",
        # A finding is in force when its run is in force for its table and gaming day.
        """CREATE VIEW findings_current AS
SELECT f.* FROM findings f
JOIN coverage_current c
  ON c.run_id = f.run_id AND c.table_id = f.located_table_id
 AND c.gaming_day IS NOT DISTINCT FROM f.gaming_day""",
        """CREATE VIEW superseded_runs AS
SELECT r.run_id,
       count(*) FILTER (WHERE c.run_id <> r.run_id) AS days_superseded,
       count(*) AS days_covered
FROM runs r JOIN coverage v ON v.run_id = r.run_id
JOIN coverage_current c ON c.table_id = v.table_id AND c.gaming_day = v.gaming_day
GROUP BY r.run_id""",
        *(
            f"CREATE VIEW {name} AS SELECT t.*, d.gaming_day "
            f"FROM _{name} t JOIN run_days d USING (run_id)"
            for name in ("quarantine", "row_counts", "surveillance", "alerts")
        ),
        # The review ledger, every record; a finding's status is its latest record.
        f"""CREATE VIEW reviews AS
SELECT * FROM read_json({ledger}, format = 'newline_delimited', columns = {{
  seq: 'BIGINT', finding_id: 'VARCHAR',
  identity: 'STRUCT(rule VARCHAR, table_id VARCHAR, shoe_id VARCHAR, round_id VARCHAR,
                    wager_id VARCHAR, discriminator VARCHAR)',
  run_id: 'VARCHAR', status: 'VARCHAR',
  note: 'VARCHAR', "by": 'VARCHAR', "at": 'TIMESTAMPTZ', prev: 'VARCHAR', hash: 'VARCHAR'}})""",
        # Each finding ever found: its nights, its current review status (its latest
        # record; "open" until reviewed), and whether it is still found, or the run that
        # audited its table and night again without finding it.
        """CREATE VIEW finding_status AS
WITH occurrences AS (
  SELECT f.*, r.started_at FROM findings f JOIN runs r USING (run_id)
), seen AS (
  SELECT finding_id,
         arg_max(rule, started_at) AS rule, arg_max(severity, started_at) AS severity,
         arg_max(located_table_id, started_at) AS table_id,
         arg_max(property_id, started_at) AS property_id,
         arg_max(dealer_id, started_at) AS dealer_id,
         arg_max(impact, started_at) AS impact,
         arg_max(gaming_day, started_at) AS gaming_day,
         min(gaming_day) AS first_night, max(gaming_day) AS last_night,
         count(DISTINCT gaming_day) AS nights, arg_max(run_id, started_at) AS last_run_id
  FROM occurrences GROUP BY finding_id
), latest AS (
  SELECT * FROM reviews
  QUALIFY row_number() OVER (PARTITION BY finding_id ORDER BY seq DESC) = 1
)
SELECT s.*, coalesce(l.status, 'open') AS status, l.note, l."by" AS reviewed_by,
       l."at" AS reviewed_at,
       s.finding_id IN (SELECT finding_id FROM findings_current) AS in_force,
       CASE WHEN s.finding_id NOT IN (SELECT finding_id FROM findings_current)
            THEN c.run_id END AS not_found_since
FROM seen s
LEFT JOIN latest l USING (finding_id)
LEFT JOIN coverage_current c
  ON c.table_id = s.table_id AND c.gaming_day IS NOT DISTINCT FROM s.gaming_day""",
    ]
