"""What the desk's pages read: the archive's findings in force and their review status,
held in memory and read again when the archive changes.

The findings in force (`findings_current`) are read from the archive's catalog, in its
sandbox, when the archive's record (`record.jsonl`: a run added, a period surveilled)
differs from when they were last read; the review status of each finding when the
ledger's bytes differ, its chain checked first as every reader of the archive checks it.
So the queue answers from memory (a queue of 100,000 findings in milliseconds), and a
run added while the server runs shows on the next page asked for, with no restart.

The findings reported live on gaming days not yet closed (`archive.live_runs`) are read
beside them, again whenever a day's live run (`live/DAY/findings.jsonl`) or the record
changes: each as last reported, a withdrawn one gone, marked with when it was first
found (`found_live_at`), its day's live run as its run. A finding an archived run holds
in force is shown as that run's.

Each state is a DuckDB database in memory of its own, never changed once built: a page
reads the state it was handed while a newer one replaces it for the next request.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from auditor.archive.attached_runs import open_archive_catalog
from auditor.archive.catalog import RUNS, is_run_id
from auditor.archive.ledger import ledger_path, read_reviews
from auditor.archive.ledger_read import check_for_reading
from auditor.archive.live_runs import LIVE, LIVE_FINDINGS, live_days, live_findings
from auditor.archive.record import RECORD_FILE

FINDING_COLUMNS = """finding_id, run_id, gaming_day, property_id,
  located_table_id AS table_id, shoe_id, round_id, wager_id, dealer_id, patron_id, rule,
  severity, impact, message"""
# An archive with no run yet (a watch's first day) holds no catalog to read them from.
NO_FINDINGS = """SELECT CAST(NULL AS VARCHAR) AS finding_id, CAST(NULL AS VARCHAR) AS run_id,
  CAST(NULL AS DATE) AS gaming_day, CAST(NULL AS VARCHAR) AS property_id,
  CAST(NULL AS VARCHAR) AS table_id, CAST(NULL AS VARCHAR) AS shoe_id,
  CAST(NULL AS VARCHAR) AS round_id, CAST(NULL AS VARCHAR) AS wager_id,
  CAST(NULL AS VARCHAR) AS dealer_id, CAST(NULL AS VARCHAR) AS patron_id,
  CAST(NULL AS VARCHAR) AS rule, CAST(NULL AS VARCHAR) AS severity,
  CAST(NULL AS DECIMAL(18,2)) AS impact, CAST(NULL AS VARCHAR) AS message LIMIT 0"""
NO_COVERAGE = """SELECT CAST(NULL AS DATE) AS gaming_day, CAST(0 AS BIGINT) AS runs,
  CAST(0 AS BIGINT) AS tables LIMIT 0"""
NO_RUNS = """SELECT CAST(NULL AS VARCHAR) AS run_id, CAST(NULL AS TIMESTAMPTZ) AS started_at,
  CAST(NULL AS DATE[]) AS gaming_days LIMIT 0"""
LIVE_COLUMNS = (
    "finding_id",
    "run_id",
    "gaming_day",
    "table_id",
    "shoe_id",
    "round_id",
    "wager_id",
    "rule",
    "severity",
    "impact",
    "message",
)
REVIEW_FIELDS: list[tuple[str, pa.DataType]] = [
    ("seq", pa.int64()),
    ("finding_id", pa.string()),
    ("run_id", pa.string()),
    ("status", pa.string()),
    ("note", pa.string()),
    ("by", pa.string()),
    ("at", pa.string()),
]
REVIEW_SCHEMA = pa.schema(REVIEW_FIELDS)


@dataclass(frozen=True)
class Stamp:
    """What says a file changed: its inode, size and time of last change (none: missing)."""

    seen: tuple[int, int, int] | None

    @classmethod
    def of(cls, path: Path) -> Stamp:
        try:
            status = os.stat(path)
        except FileNotFoundError:
            return cls(None)
        return cls((status.st_ino, status.st_size, status.st_mtime_ns))


@dataclass(frozen=True)
class Archived:
    """What the catalog gave at one moment of the record."""

    stamp: Stamp
    findings: pa.Table
    coverage: pa.Table  # gaming_day, runs in force, tables
    alerts: pa.Table  # gaming_day, alerts of the runs in force
    runs: pa.Table  # run_id, started_at, gaming_days


@dataclass(frozen=True)
class Live:
    """What the live runs gave at one moment of their files and the record."""

    stamp: tuple[tuple[str, Stamp], ...]
    record: Stamp
    findings: pa.Table  # LIVE_COLUMNS and found_live_at


@dataclass(frozen=True)
class LedgerHead:
    seq: int
    hash: str


@dataclass(frozen=True)
class State:
    archived: Archived
    ledger: Stamp
    live: Live
    con: duckdb.DuckDBPyConnection
    head: LedgerHead

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of its own for one request (a connection is not shared by threads)."""
        return self.con.cursor()


class Snapshot:
    """The archive's current state, rebuilt when its record or its ledger changes."""

    def __init__(self, archive: Path) -> None:
        self.archive = Path(archive).resolve()
        self._lock = threading.Lock()
        self._state: State | None = None

    def current(self) -> State:
        record = Stamp.of(self.archive / RECORD_FILE)
        ledger = Stamp.of(ledger_path(self.archive))
        live = live_stamp(self.archive)
        state = self._state
        if state is not None and _same(state, record, ledger, live):
            return state
        with self._lock:
            state = self._state
            if state is not None and _same(state, record, ledger, live):
                return state
            archived = state.archived if state and state.archived.stamp == record else None
            if archived is None:
                archived = read_archive(self.archive, record)
            reported = state.live if state else None
            if reported is None or (reported.stamp, reported.record) != (live, record):
                reported = read_live(self.archive, live, record)
            # The chain is checked before any status is shown, as `auditor query` does.
            check_for_reading(self.archive)
            reviews, head = read_ledger(self.archive)
            database = _database(archived, reported, reviews)
            self._state = State(archived, ledger, reported, database, head)
            return self._state


def _same(state: State, record: Stamp, ledger: Stamp, live: tuple) -> bool:
    return (state.archived.stamp, state.ledger, state.live.stamp) == (record, ledger, live)


def live_stamp(archive: Path) -> tuple[tuple[str, Stamp], ...]:
    """Each live day's findings file as it stands: a finding reported changes it."""
    return tuple(
        (day, Stamp.of(archive / LIVE / day / LIVE_FINDINGS)) for day in live_days(archive)
    )


def read_live(archive: Path, stamp: tuple[tuple[str, Stamp], ...], record: Stamp) -> Live:
    # Naive UTC, as the pages show it: DuckDB would hand a zoned time back in the
    # machine's own zone.
    when = pl.col("found_at").dt.replace_time_zone(None).alias("found_live_at")
    found = live_findings(archive).with_columns(
        pl.coalesce("located_table_id", "table_id").alias("table_id")
    )
    found = found.select(*LIVE_COLUMNS, when)
    return Live(stamp, record, found.to_arrow())


def read_archive(archive: Path, stamp: Stamp) -> Archived:
    if not any(is_run_id(p.name) for p in (archive / RUNS).iterdir()):
        con = duckdb.connect(":memory:")
        try:
            empty = [_table(con.sql(sql).to_arrow_table()) for sql in (NO_FINDINGS, NO_COVERAGE)]
            runs = _table(con.sql(NO_RUNS).to_arrow_table())
            return Archived(stamp, empty[0], empty[1], _alerts(con), runs)
        finally:
            con.close()
    catalog = open_archive_catalog(archive, inputs=False)
    try:
        con = catalog.con
        findings = con.sql(f"SELECT {FINDING_COLUMNS} FROM findings_current").to_arrow_table()
        coverage = con.sql(
            "SELECT gaming_day, count(DISTINCT run_id) AS runs, count(*) AS tables "
            "FROM coverage_current GROUP BY gaming_day"
        ).to_arrow_table()
        alerts = _alerts(con)
        runs = con.sql(
            "SELECT run_id, started_at, gaming_days FROM runs ORDER BY started_at"
        ).to_arrow_table()
    finally:
        catalog.close()
    return Archived(stamp, _table(findings), _table(coverage), _table(alerts), _table(runs))


def _alerts(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """The night's alerts of the runs in force per gaming day; none when no run kept
    surveillance (a set written before it)."""
    try:
        return _table(
            con.sql(
                "SELECT gaming_day, count(*) FILTER (WHERE alert) AS alerts FROM surveillance "
                "WHERE run_id IN (SELECT run_id FROM coverage_current) GROUP BY gaming_day"
            ).to_arrow_table()
        )
    except duckdb.Error:
        return pa.table(
            {"gaming_day": pa.array([], pa.date32()), "alerts": pa.array([], pa.int64())}
        )


def _table(result: pa.Table | pa.RecordBatchReader) -> pa.Table:
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def read_ledger(archive: Path) -> tuple[pa.Table, LedgerHead]:
    """Every review record, and the ledger's last."""
    records = read_reviews(archive)
    head = LedgerHead(records[-1]["seq"], records[-1]["hash"]) if records else LedgerHead(0, "")
    table = pa.Table.from_pylist(
        [{name: r.get(name) for name in REVIEW_SCHEMA.names} for r in records], schema=REVIEW_SCHEMA
    )
    return table, head


def _database(archived: Archived, live: Live, reviews: pa.Table) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={"enable_external_access": False})
    for name, table in (
        ("archived", archived.findings),
        ("live", live.findings),
        ("coverage", archived.coverage),
        ("alerts", archived.alerts),
        ("reviews", reviews),
    ):
        con.register(f"{name}_arrow", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
        con.unregister(f"{name}_arrow")
    con.execute(
        """CREATE TABLE findings AS
SELECT *, CAST(NULL AS TIMESTAMP) AS found_live_at FROM archived
UNION ALL BY NAME
SELECT * FROM live WHERE finding_id NOT IN (SELECT finding_id FROM archived)"""
    )
    con.execute("DROP TABLE archived")
    con.execute("DROP TABLE live")
    # A finding's status is its latest record, as `archive.ledger.current_status` says.
    con.execute(
        """CREATE TABLE statuses AS SELECT * FROM reviews
QUALIFY row_number() OVER (PARTITION BY finding_id ORDER BY seq DESC) = 1"""
    )
    con.execute(
        """CREATE VIEW queue AS
SELECT f.*, abs(f.impact) AS at_stake, coalesce(s.status, 'open') AS status, s.note,
       s."by" AS reviewed_by, s."at" AS reviewed_at
FROM findings f LEFT JOIN statuses s USING (finding_id)"""
    )
    return con
