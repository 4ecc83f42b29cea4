"""What the desk's pages read: the archive's findings in force and their review status,
held in memory and read again when the archive changes.

The findings in force (`findings_current`) are read from the archive's catalog, in its
sandbox, when the archive's record (`record.jsonl`: a run added, a period surveilled)
differs from when they were last read; the review status of each finding when the
ledger's bytes differ, its chain checked first as every reader of the archive checks it.
So the queue answers from memory (a queue of 100,000 findings in milliseconds), and a
run added while the server runs shows on the next page asked for, with no restart.

Each state is a DuckDB database in memory of its own, never changed once built: a page
reads the state it was handed while a newer one replaces it for the next request.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from auditor.archive.ledger import ledger_path, read_reviews
from auditor.archive.ledger_read import check_for_reading
from auditor.archive.query import open_archive_catalog
from auditor.archive.record import RECORD_FILE

FINDING_COLUMNS = """finding_id, run_id, gaming_day, property_id,
  located_table_id AS table_id, shoe_id, round_id, wager_id, dealer_id, patron_id, rule,
  severity, impact, message"""
REVIEW_SCHEMA = pa.schema(
    [
        ("seq", pa.int64()),
        ("finding_id", pa.string()),
        ("run_id", pa.string()),
        ("status", pa.string()),
        ("note", pa.string()),
        ("by", pa.string()),
        ("at", pa.string()),
    ]
)


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
class LedgerHead:
    seq: int
    hash: str


@dataclass(frozen=True)
class State:
    archived: Archived
    ledger: Stamp
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
        state = self._state
        if state is not None and state.archived.stamp == record and state.ledger == ledger:
            return state
        with self._lock:
            state = self._state
            if state is not None and state.archived.stamp == record and state.ledger == ledger:
                return state
            archived = state.archived if state and state.archived.stamp == record else None
            if archived is None:
                archived = read_archive(self.archive, record)
            # The chain is checked before any status is shown, as `auditor query` does.
            check_for_reading(self.archive)
            reviews, head = read_ledger(self.archive)
            database = _database(archived, reviews)
            self._state = State(archived, ledger, database, head)
            return self._state


def read_archive(archive: Path, stamp: Stamp) -> Archived:
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


def _database(archived: Archived, reviews: pa.Table) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={"enable_external_access": False})
    for name, table in (
        ("findings", archived.findings),
        ("coverage", archived.coverage),
        ("alerts", archived.alerts),
        ("reviews", reviews),
    ):
        con.register(f"{name}_arrow", table)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
        con.unregister(f"{name}_arrow")
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
