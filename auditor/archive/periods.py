"""`auditor surveil`: the archive's surveillance over a period of gaming days.

The runs in force for the period's tables and gaming days (`coverage_current`: a
superseded run's counts give way to its re-audit's) lend their kept counts
(`surveillance.cells`) to `surveillance.period`, whose tests and alerts are written to
`ARCHIVE/periods/FROM_TO/N/`, the period's next surveil run (switched in whole, under the
archive's lock: `archive.period_layout`), recorded with its false-discovery rate, and
seen by the catalog's `period_surveillance`, `period_alerts` and `period_runs`. An
earlier run of the period, at whatever rate, stays as it was.

A run's counts are summed over its tables and nights, not kept per day: a run's table
counts for the period only where the run is in force for every gaming day it audited at
that table, all within the period; its patrons' and dealers' counts only where that
holds for every table it audited (theirs are not kept per table). What is left out is
said.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb

from auditor.archive.catalog import RUNS, SET, current_catalog, is_run_id, rebuild_catalog
from auditor.archive.keys import find_key
from auditor.archive.ledger import ledger_head
from auditor.archive.period_layout import PERIODS, next_run_number
from auditor.archive.record import append_entry, file_sha256, has_record
from auditor.archive.store import ArchiveError, open_archive
from auditor.defaults import ALERT_FDR
from auditor.output.leftovers import claimed_folder, sweep
from auditor.output.lock import waiting
from auditor.output.sandbox import sandboxed
from auditor.output.verify import read_manifest
from auditor.surveillance.cells import CELL_FILES
from auditor.surveillance.period import NightCells, PeriodSurveillance, survey_period

SURVEIL_WAIT_SECONDS = 300.0
WORK_PREFIX = ".surveil-"  # a surveil's working folder in periods/


@dataclass(frozen=True)
class PeriodRun:
    surveillance: PeriodSurveillance | None  # None: no run in force lent counts to the period
    folder: Path  # ARCHIVE/periods/FROM_TO/N (not written when surveillance is None)
    notes: list[str]  # what was left out, and why
    number: int | None = None  # N: the period's surveil run


def period_name(start: date, end: date) -> str:
    return f"{start.isoformat()}_{end.isoformat()}"


def nights_in_force(archive: Path, start: date, end: date) -> tuple[list[NightCells], list[str]]:
    """The counts of the runs in force for the period, and a note for each run, or part
    of one, left out."""
    catalog = current_catalog(archive)
    try:
        rows = _runs_in_force(catalog, archive, start, end)
    except duckdb.Error as exc:
        raise ArchiveError(f"{catalog}: cannot be read as the archive's catalog ({exc})") from exc
    nights, notes = [], []
    for run_id, kept, left in rows:
        if not is_run_id(run_id):
            raise ArchiveError(f"{catalog}: names a run {run_id!r} that is no run id")
        kept, left = kept or [], left or []
        folder = archive / RUNS / run_id / SET
        named = read_manifest(folder).files
        if not all(name in named for name in CELL_FILES.values()):
            notes.append(f"run {run_id}: its set keeps no surveillance counts (an earlier auditor)")
            continue
        if not kept:
            continue
        if left:
            notes.append(
                f"run {run_id}: counts of {', '.join(left)} and of its patrons and dealers "
                "left out (superseded, or audited on days outside the period)"
            )
        nights.append(NightCells(folder, None if not left else frozenset(kept), not left))
    return nights, notes


def _runs_in_force(catalog: Path, archive: Path, start: date, end: date) -> list[tuple]:
    """Each run in force for some table-day of the period, with the tables it is in force
    for at every day it audited and those it is not; read in the sandbox, for the
    catalog is a file of the archive's folder that anyone who can write there may replace."""
    with sandboxed(catalog, [archive]) as con:
        return con.execute(
            """
WITH current AS (
  SELECT run_id, table_id, gaming_day FROM coverage_current
  WHERE gaming_day BETWEEN $start AND $end
), mine AS (
  SELECT v.run_id, v.table_id,
         bool_and(c.run_id IS NOT NULL) AS in_force
  FROM coverage v
  LEFT JOIN current c ON c.run_id = v.run_id AND c.table_id = v.table_id
   AND c.gaming_day = v.gaming_day
  WHERE v.run_id IN (SELECT run_id FROM current)
  GROUP BY v.run_id, v.table_id
)
SELECT run_id, list(table_id ORDER BY table_id) FILTER (WHERE in_force),
       list(table_id ORDER BY table_id) FILTER (WHERE NOT in_force)
FROM mine GROUP BY run_id ORDER BY run_id""",
            {"start": start, "end": end},
        ).fetchall()


def _record_period(folder: Path, place: Path, alert_fdr: float) -> None:
    """The surveil run's files by SHA-256 in the archive's record, named FROM_TO/N, with
    its false-discovery rate (kept only where the archive keeps a record: an archive made
    before it is sealed first)."""
    if not has_record(folder):
        return
    key, _, _ = find_key(folder)
    files = {p.name: file_sha256(p) for p in sorted(place.iterdir())}
    ledger_seq, ledger_hash = ledger_head(folder)
    fields = {
        "kind": "period",
        "name": f"{place.parent.name}/{place.name}",
        "started_at": None,
        "files": files,
        "surveil_run": int(place.name),
        "alert_fdr": alert_fdr,
    }
    append_entry(folder, fields | {"ledger_seq": ledger_seq, "ledger_hash": ledger_hash}, key)


def surveil(
    archive: Path,
    start: date,
    end: date,
    alert_fdr: float = ALERT_FDR,
    budget_bytes: int | None = None,
) -> PeriodRun:
    """The period's surveillance, written into the archive as the period's next surveil
    run (its earlier runs kept) and seen by its catalog; nothing is written when no run
    in force for the period has counts to lend (`PeriodRun.surveillance` is None)."""
    if end < start:
        raise ArchiveError(f"the period ends ({end}) before it starts ({start})")
    folder = open_archive(archive)
    nights, notes = nights_in_force(folder, start, end)
    if not nights:
        # A period the archive holds no nights of is a fact about the archive, not a
        # mistake in the command: said, and left without an empty surveillance.
        return PeriodRun(None, folder / PERIODS / period_name(start, end), notes)
    periods = folder / PERIODS
    if periods.is_symlink() or (periods.exists() and not periods.is_dir()):
        raise ArchiveError(f"{periods}: not a folder of the archive's own (a link or a file)")
    periods.mkdir(exist_ok=True)
    # A killed surveil's working folder stays in periods/: removed here unless a live
    # surveil claims it (`output.leftovers`).
    sweep(periods, WORK_PREFIX)
    with claimed_folder(periods, WORK_PREFIX) as work:
        result = survey_period(nights, start, end, work / "period", alert_fdr, budget_bytes)
        period = periods / period_name(start, end)
        with waiting(folder, "a period's surveillance", SURVEIL_WAIT_SECONDS):
            if period.is_symlink() or (period.exists() and not period.is_dir()):
                raise ArchiveError(f"{period}: not a folder of the archive's own (a link, a file)")
            period.mkdir(exist_ok=True)
            # Numbered under the lock, and moved in in one step: the catalog's views never
            # see half of a run, and two surveils never take one number.
            place = period / str(next_run_number(period))
            os.rename(work / "period", place)
            _record_period(folder, place, alert_fdr)
            rebuild_catalog(folder)
    moved = PeriodSurveillance(place / result.tests.name, result.alerts, result.nights)
    return PeriodRun(moved, place, notes, int(place.name))
