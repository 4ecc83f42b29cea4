"""`ARCHIVE/archive.duckdb`: one catalog over every run of the archive: views only, which
read `runs/*/` by pattern, so that a run added is seen without writing the catalog again
(it is written with the first run, and again where the archive was moved or copied).
Storage v1.4.0, as a run's own catalog, so the 1.x command-line client opens it.

Every row carries its `run_id` and a `gaming_day` (noon to noon UTC, as the reports draw
it): a finding's is the day of its round, shoe or table (`output.located`); the rows that
belong to no moment (quarantine, row counts, surveillance tests and alerts) take their
run's gaming day when the run covers one, and null when it covers several.

A re-audit supersedes: for each table and gaming day, the run in force is the one whose
audit started last among those that cover it (`coverage_current`); `findings_current`
holds the findings of the runs in force, while `findings_every_run` keeps every run's
(superseded ones too: counted against the other, it counts a re-audited night twice).
Only the runs the archive's record holds are read (`internal.record`), each with its
start as recorded when it was added (`archive.record`): a folder put under `runs/` by
hand, or a `run.json` rewritten, changes nothing.

The views the public ones are built on live in the schema `internal`, out of `SHOW
TABLES`; every public view carries a one-line comment saying what it holds (`COMMENTS`).
The views are the code's own: a catalog whose views differ from them is written anew
before it is read (`view_problems`), and only a regular file is opened as the catalog.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from auditor.archive.catalog_earlier import EARLIER_TABLES, earlier_view_statements
from auditor.archive.ledger import LEDGER_FILE, LEDGER_LIMIT
from auditor.archive.ledger_read import check_for_reading
from auditor.archive.live_runs import FINDINGS_LIVE, LIVE_COMMENT, LIVE_VIEWS, live_view_statements
from auditor.archive.period_layout import ALERTS_FILE as PERIOD_ALERTS_FILE
from auditor.archive.period_layout import EARLIER_RUN, TESTS_FILE, period_runs
from auditor.archive.record import RECORD_FILE
from auditor.defaults import ALERT_FDR
from auditor.errors import InputError
from auditor.output.catalog_packs import attached
from auditor.output.files import (
    ALERTS_FILE,
    COUNTS_FILE,
    FINDINGS_FILE,
    QUARANTINE_FILE,
    SURVEILLANCE_FILE,
)
from auditor.output.located import COVERAGE_FILE, LOCATED_FILE
from auditor.output.lock import waiting
from auditor.output.macros import sql_literal
from auditor.output.sandbox import sandboxed
from auditor.regular_files import SMALL_FILE_LIMIT, regular_file_problem

CATALOG_FILE = "archive.duckdb"
_LOCATION = re.compile(r'"query_location(?:_length)?":\d+,?')
REBUILD_WAIT_SECONDS = 300.0
RUNS = "runs"  # ARCHIVE/runs/RUN_ID/set/: a run's output set
# A run's id as the auditor writes it (`output.catalog.runs_frame`: a UUID's hex). It
# becomes a folder's name and a schema's alias: an id read from a set's catalog or a
# folder's name is used only when it is one.
RUN_ID = re.compile(r"[0-9a-f]{32}")
SET = "set"
# ARCHIVE/periods/FROM_TO/N/: a period's surveil runs (`archive.period_layout`), by the
# view their files become; each row carries its period's first and last gaming day.
PERIOD_FILES = {"period_surveillance": TESTS_FILE, "period_alerts": PERIOD_ALERTS_FILE}
INTERNAL = "internal"  # the schema of the views the public ones are built on
# The files of a run's set the catalog reads, by the view they become.
RUN_FILES = {
    f"{INTERNAL}.findings": FINDINGS_FILE,
    f"{INTERNAL}.located": LOCATED_FILE,
    "coverage": COVERAGE_FILE,
    f"{INTERNAL}.quarantine": QUARANTINE_FILE,
    f"{INTERNAL}.row_counts": COUNTS_FILE,
    f"{INTERNAL}.surveillance": SURVEILLANCE_FILE,
    f"{INTERNAL}.alerts": ALERTS_FILE,
}
BUILT_FOR = f"{INTERNAL}.built_for"
(EARLIER_BUILT_FOR,) = EARLIER_TABLES
# What each public view holds, one line each: `COMMENT ON VIEW`, shown by `.tables` and
# `duckdb_views()`.
COMMENTS = {
    "runs": "one row per run the archive holds: when it was audited and added, its gaming "
    "days, tables, properties and findings",
    "coverage": "the tables and gaming days each run audited",
    "coverage_current": "the run in force for each table and gaming day: the last audit to "
    "start that covers it",
    "run_days": "each run's gaming day, null for a run of several",
    "findings_every_run": "every finding of every run, superseded runs included (a night "
    "audited twice counts twice: findings_current holds those in force)",
    "findings_current": "the findings of the runs in force for their table and gaming day",
    FINDINGS_LIVE: LIVE_COMMENT,
    "superseded_runs": "per run, the table-days it covered and those a later audit replaced",
    "quarantine": "every run's quarantined input rows, superseded runs included",
    "row_counts": "every run's row accounting, superseded runs included",
    "surveillance": "every run's statistical tests of its night, superseded runs included",
    "alerts": "every run's surveillance alerts, superseded runs included; not findings",
    "reviews": "the review ledger, one row per record",
    "finding_status": "each finding ever found: its nights, latest review status and "
    "whether it is still found",
    "period_surveillance": "every test of every surveil run of a period, with its run "
    "number and false-discovery rate",
    "period_alerts": "the alerts of every surveil run of a period, with its run number and "
    "false-discovery rate; not findings",
    "period_runs": "one row per surveil run of a period: its false-discovery rate, tests, "
    "alerts, and whether the period report shows it",
}


def rebuild_catalog(archive: Path) -> Path:
    """Write the archive's catalog anew beside the runs, switched in at once."""
    target = archive / CATALOG_FILE
    tmp = archive / f".{CATALOG_FILE}.tmp"
    tmp.unlink(missing_ok=True)
    with attached(tmp, "archive") as con:
        con.execute(f"CREATE SCHEMA {INTERNAL}")
        made = set()
        for statement in view_statements(archive):
            con.execute(statement)
            made.add(_split_view(statement)[0])
        for view, comment in COMMENTS.items():
            if view in made:
                con.execute(f"COMMENT ON VIEW {view} IS {sql_literal(comment)}")
        # Where the views point: a moved or copied archive's catalog is rebuilt where it is.
        con.execute(
            f"CREATE TABLE {BUILT_FOR} AS SELECT $folder AS folder", {"folder": str(archive)}
        )
    os.replace(tmp, target)
    return target


def view_statements(archive: Path) -> list[str]:
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
JOIN {INTERNAL}.record r
  ON r.run_id = regexp_extract(j.filename, '/{RUNS}/([^/]+)/run.json$', 1)""",
    ]
    for view, name in RUN_FILES.items():
        glob = sql_literal(str(archive / RUNS / "*" / SET / name))
        statements.append(
            f"CREATE VIEW {view} AS SELECT * FROM (SELECT * EXCLUDE (filename), "
            f"regexp_extract(filename, '/{RUNS}/([^/]+)/{SET}/', 1) AS run_id "
            f"FROM read_parquet({glob}, filename = true, union_by_name = true)) "
            f"WHERE run_id IN (SELECT run_id FROM {INTERNAL}.record)"
        )
    joined = _joined_views(archive) + _period_views(archive)
    return statements + joined + live_view_statements(archive)


def _record_view(archive: Path) -> str:
    """The runs the archive holds, in the order they were added, each with its start as
    recorded then; an archive made before the record: every run folder's run.json."""
    record = archive / RECORD_FILE
    if not os.path.lexists(record):
        runs_glob = sql_literal(str(archive / RUNS / "*" / "run.json"))
        return f"""CREATE VIEW {INTERNAL}.record AS
SELECT regexp_extract(filename, '/{RUNS}/([^/]+)/run.json$', 1) AS run_id, started_at,
       row_number() OVER (ORDER BY started_at, filename) AS added_seq
FROM read_json({runs_glob}, format = 'auto', filename = true,
               columns = {{started_at: 'TIMESTAMPTZ'}})
WHERE run_id NOT LIKE '.%'"""
    return f"""CREATE VIEW {INTERNAL}.record AS
SELECT name AS run_id, started_at, seq AS added_seq
FROM read_json({sql_literal(str(record))}, format = 'newline_delimited', columns = {{
  seq: 'BIGINT', kind: 'VARCHAR', name: 'VARCHAR', started_at: 'TIMESTAMPTZ'}})
WHERE kind = 'run'"""


def _period_views(archive: Path) -> list[str]:
    """Views over the periods' surveil runs, made only once one is written (the catalog is
    written again when one is). The files are listed, not matched by a pattern: only a
    period's own folders (FROM_TO, N, no link) and their regular files, so that a link
    planted in the archive cannot lend the catalog another archive's alerts. A file's run
    number is its folder's; an earlier archive's files, in the period's folder, are run 1."""
    statements = []
    for view, name in PERIOD_FILES.items():
        files = [str(run.folder / name) for run in period_runs(archive)]
        files = [f for f in files if Path(f).is_file() and not Path(f).is_symlink()]
        if files:
            number = f"regexp_extract(filename, '/([0-9]+)/{name}$', 1)"
            statements.append(
                f"CREATE VIEW {view} AS SELECT * EXCLUDE (filename), "
                f"coalesce(TRY_CAST({number} AS INTEGER), {EARLIER_RUN}) AS surveil_run "
                f"FROM read_parquet({sql_literal(files)}, union_by_name = true, filename = true)"
            )
    if len(statements) == len(PERIOD_FILES):
        # The run the period report shows: the latest at the default false-discovery rate,
        # or the latest of the period where none was run at it.
        statements.append(
            f"""CREATE VIEW period_runs AS
WITH run AS (
  SELECT period_from, period_to, surveil_run, max(alert_fdr) AS alert_fdr,
         count(*) AS tests, count(*) FILTER (WHERE alert) AS alerts
  FROM period_surveillance GROUP BY period_from, period_to, surveil_run
)
SELECT *, surveil_run = coalesce(
         max(surveil_run) FILTER (WHERE alert_fdr = {ALERT_FDR!r})
           OVER (PARTITION BY period_from, period_to),
         max(surveil_run) OVER (PARTITION BY period_from, period_to)) AS reported
FROM run"""
        )
    return statements


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
        f"""CREATE VIEW findings_every_run AS
SELECT f.*, l.gaming_day, l.property_id, l.ruleset, l.dealer_id, l.patron_id,
       coalesce(f.table_id, l.table_id) AS located_table_id
FROM {INTERNAL}.findings f LEFT JOIN {INTERNAL}.located l USING (run_id, finding_id)""",
        # A finding is in force when its run is in force for its table and gaming day.
        """CREATE VIEW findings_current AS
SELECT f.* FROM findings_every_run f
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
            f"FROM {INTERNAL}.{name} t JOIN run_days d USING (run_id)"
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
  SELECT f.*, r.started_at FROM findings_every_run f JOIN runs r USING (run_id)
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


def ensure_catalog(archive: Path) -> Path:
    """The catalog of `archive` (resolved), written when missing, built for another
    folder or holding views other than the code's own; the caller holds the archive's
    lock."""
    target = archive / CATALOG_FILE
    if _built_for(target) != str(archive) or view_problems(archive):
        rebuild_catalog(archive)
    return target


def refuse_special_files(archive: Path) -> None:
    """The files the catalog's views read whole (the ledger, the record) and the catalog
    itself must be regular files within their bounds: a FIFO there would hang the reader,
    a link to /dev/zero read without end."""
    for name, limit in (
        (CATALOG_FILE, None),
        (LEDGER_FILE, LEDGER_LIMIT),
        (RECORD_FILE, SMALL_FILE_LIMIT),
    ):
        path = archive / name
        problem = regular_file_problem(path)
        if problem == "missing":
            continue
        if problem is None and limit is not None and path.stat().st_size > limit:
            problem = f"{path.stat().st_size:,} bytes, more than the {limit:,} it may hold"
        if problem is not None:
            raise InputError(f"{path}: {problem}; not read", path=str(path))


def view_problems(archive: Path) -> list[str]:
    """Each way the catalog's views, their comments and its tables differ from the code's
    own, compared as parsed SQL (nothing read but the catalog's file); empty when the
    same."""
    return _differences(archive, view_statements(archive), COMMENTS, BUILT_FOR)


def is_earlier_catalog(archive: Path) -> bool:
    """Whether the catalog is exactly what an earlier auditor wrote for this archive
    (`catalog_earlier`): not today's, yet no one's but the auditor's; the next reader
    writes it anew."""
    statements = earlier_view_statements(archive)
    if not _differences(archive, statements, {}, EARLIER_BUILT_FOR):
        return True
    # Today's catalog as written before the live runs were read, or before the first
    # finding was reported live: the views of today without the live ones.
    before_live = [s for s in view_statements(archive) if _split_view(s)[0] not in LIVE_VIEWS]
    comments = {name: text for name, text in COMMENTS.items() if name not in LIVE_VIEWS}
    return not _differences(archive, before_live, comments, BUILT_FOR)


def _differences(
    archive: Path, statements: list[str], comments: dict[str, str], built_for_table: str
) -> list[str]:
    target = archive / CATALOG_FILE
    if regular_file_problem(target) is not None:
        return [f"{CATALOG_FILE}: {regular_file_problem(target)}"]
    built_for = _built_for(target, built_for_table)
    if built_for is not None and built_for != str(archive):
        # Built for another folder (the archive was moved or copied): every reader rebuilds
        # it before use (`current_catalog`), so its views, whatever they say, are never read.
        return []
    expected = dict(_split_view(s) for s in statements)
    try:
        con = duckdb.connect(str(target), read_only=True)
    except duckdb.Error as exc:
        return [f"{CATALOG_FILE}: cannot be opened ({exc})"]
    try:
        views = con.execute(
            "SELECT schema_name, sql, comment FROM duckdb_views() WHERE NOT internal AND "
            "database_name = current_database()"
        ).fetchall()
        tables = {
            _qualified(schema, name)
            for schema, name in con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables()"
            ).fetchall()
        }
        counted = con.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE NOT internal "
            "AND database_name = current_database()"
        ).fetchone()
        assert counted is not None  # count(*) without GROUP BY is always one row
        macros = counted[0]
    finally:
        con.close()
    found = dict(_split_view(sql) for _, sql, _ in views)
    said = {_split_view(sql)[0]: comment for _, sql, comment in views}
    problems = [f"{CATALOG_FILE}: view {name} missing" for name in expected.keys() - found]
    problems += [
        f"{CATALOG_FILE}: view {name} is not the auditor's" for name in found.keys() - expected
    ]
    problems += [
        f"{CATALOG_FILE}: table {name} is not the auditor's"
        for name in sorted(tables - {built_for_table})
    ]
    if macros:
        problems.append(f"{CATALOG_FILE}: holds {macros} functions the auditor does not write")
    problems += [
        f"{CATALOG_FILE}: view {name}'s comment is not the auditor's"
        for name in sorted(expected.keys() & found.keys())
        if said.get(name) != comments.get(name)
    ]
    parse = duckdb.connect(":memory:")
    try:
        problems += [
            f"{CATALOG_FILE}: view {name} is not as the auditor defines it"
            for name in sorted(expected.keys() & found.keys())
            if _parsed(parse, expected[name]) != _parsed(parse, found[name])
        ]
    finally:
        parse.close()
    return problems


def _qualified(schema: str, name: str) -> str:
    return name if schema == "main" else f"{schema}.{name}"


def _split_view(statement: str) -> tuple[str, str]:
    match = re.match(r"\s*CREATE VIEW ([\w.]+) AS\s(.*?);?\s*$", statement, re.DOTALL)
    return (match[1], match[2]) if match else (statement, "")


def _parsed(con: duckdb.DuckDBPyConnection, select: str) -> str | None:
    """The parse tree of `select` without where its parts stood in the text (the catalog
    keeps a view's SQL as DuckDB prints it, not as it was written)."""
    try:
        row = con.execute("SELECT json_serialize_sql($q)", {"q": select}).fetchone()
    except duckdb.Error:
        return None
    assert row is not None  # a SELECT without FROM is always one row
    return _LOCATION.sub("", row[0])


def current_catalog(archive: Path) -> Path:
    """The archive's catalog, rebuilt first when it was built for another folder (the
    archive was moved or copied: its views name absolute paths) or is missing; the
    rebuild holds the archive's lock, as an add does."""
    archive = Path(archive).resolve()
    target = archive / CATALOG_FILE
    refuse_special_files(archive)
    # Its `reviews` and `finding_status` read the ledger: a broken chain is refused first.
    check_for_reading(archive)
    if _built_for(target) == str(archive) and not view_problems(archive):
        return target
    with waiting(archive, "an archive's catalog rebuild", REBUILD_WAIT_SECONDS):
        return ensure_catalog(archive)


def is_run_id(name: object) -> bool:
    return isinstance(name, str) and RUN_ID.fullmatch(name) is not None


def _built_for(target: Path, table: str = BUILT_FOR) -> str | None:
    if regular_file_problem(target) is not None:
        return None
    # In the sandbox, reaching nothing: a `built_for` planted as a view over a file
    # outside fails here, and the catalog is written anew.
    try:
        with sandboxed(target) as con:
            row = con.execute(f"SELECT folder FROM {table}").fetchone()
    except duckdb.Error:
        return None
    return None if row is None or not isinstance(row[0], str) else row[0]
