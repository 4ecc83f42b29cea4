"""Where and when each finding happened, and what the night covered: two small files of
the output set that make it self-contained across nights. An archive of runs
(`auditor.archive`) keeps output sets, not datasets: it learns each finding's gaming day,
property, dealer and patron from `located.parquet`, and which tables and gaming days a
run audited (what a re-audit supersedes) from `coverage.parquet`.

Both are read from the catalog while the run writes it, with the dataset in place: the
`findings_located` view and the `rounds` view.

A gaming day runs noon to noon UTC, as the nightly report's chart draws it: a timestamp's
gaming day is the date of the timestamp less twelve hours. A finding's moment is its
round's `dealt_at`; a shoe finding's, its shoe's `opened_at`; a table finding's, the first
round the run audited at that table.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from auditor.output.macros import sql_literal

LOCATED_FILE = "located.parquet"
COVERAGE_FILE = "coverage.parquet"
# The UTC date of the moment twelve hours earlier, by arithmetic on the microseconds since
# the epoch: `AT TIME ZONE 'UTC'` gives the same dates at four times the cost (a time zone
# lookup per row, half a second over two million rounds).
GAMING_DAY_SQL = "CAST(make_timestamp(epoch_us({ts}) - 43200000000) AS DATE)"

_LOCATED = f"""
WITH first_round AS (
  SELECT table_id, min(dealt_at) AS dealt_at FROM rounds GROUP BY table_id
)
SELECT f.finding_id, f.rule, f.severity, f.table_id, f.shoe_id, f.round_id, f.wager_id,
       f.property_id, f.ruleset, f.dealer_id, f.patron_id, f.impact,
       {GAMING_DAY_SQL.format(ts="coalesce(f.dealt_at, s.opened_at, t.dealt_at)")}
         AS gaming_day
FROM findings_located f
LEFT JOIN shoes s ON s.shoe_id = f.shoe_id AND f.round_id IS NULL
LEFT JOIN first_round t ON t.table_id = f.table_id
ORDER BY f.finding_id
"""

_COVERAGE = f"""
WITH days AS (
  SELECT r.table_id, {GAMING_DAY_SQL.format(ts="r.dealt_at")} AS gaming_day,
         r.dealer_id
  FROM rounds r
)
SELECT d.table_id, any_value(l.property_id) AS property_id, d.gaming_day,
       count(*) AS rounds, count(DISTINCT d.dealer_id) AS dealers
FROM days d
LEFT JOIN (SELECT table_id, arg_max(property_id, effective_from) AS property_id
           FROM tables GROUP BY table_id) l USING (table_id)
WHERE d.gaming_day IS NOT NULL
GROUP BY d.table_id, d.gaming_day
ORDER BY d.table_id, d.gaming_day
"""

_EMPTY_LOCATED = """
SELECT finding_id, rule, severity, table_id, shoe_id, round_id, wager_id,
       CAST(NULL AS VARCHAR) AS property_id, CAST(NULL AS VARCHAR) AS ruleset,
       CAST(NULL AS VARCHAR) AS dealer_id, CAST(NULL AS VARCHAR) AS patron_id, impact,
       CAST(NULL AS DATE) AS gaming_day
FROM findings ORDER BY finding_id
"""

_EMPTY_COVERAGE = """
SELECT CAST(NULL AS VARCHAR) AS table_id, CAST(NULL AS VARCHAR) AS property_id,
       CAST(NULL AS DATE) AS gaming_day, CAST(0 AS BIGINT) AS rounds,
       CAST(0 AS BIGINT) AS dealers
LIMIT 0
"""


def write_located(catalog: Path, folder: Path) -> tuple[str, str]:
    """Write `located.parquet` and `coverage.parquet` into `folder` from the catalog there
    (its views over the dataset); the files' names. A dataset DuckDB cannot read (its
    views fail) leaves each finding's place unknown and the coverage empty, said by
    nulls rather than guessed."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        for query, empty, name in (
            (_LOCATED, _EMPTY_LOCATED, LOCATED_FILE),
            (_COVERAGE, _EMPTY_COVERAGE, COVERAGE_FILE),
        ):
            target = sql_literal(str(folder / name))
            try:
                con.execute(f"COPY ({query}) TO {target} (FORMAT parquet, COMPRESSION zstd)")
            except duckdb.Error:
                con.execute(f"COPY ({empty}) TO {target} (FORMAT parquet, COMPRESSION zstd)")
    finally:
        con.close()
    return LOCATED_FILE, COVERAGE_FILE
