"""Closing a gaming day: the nightly audit over exactly the files the watch read, added
to the archive as the day's run, and the findings it gives that were not reported live
(those that waited for the day's last shoes) reported, as those it no longer gives are
withdrawn.

The closing run is a run like any other: it supersedes nothing of an audit started
after it, which supersedes it as any re-audit does.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from auditor.live.batch import FINAL_AFTER, as_records
from auditor.output.files import FINDINGS_FILE
from auditor.packs.loaded import LoadedPacks

DAY_CLOSED = "the day closed"


def day_end(day: str) -> datetime:
    """When a gaming day ends: noon UTC of the next day."""
    return datetime.combine(date.fromisoformat(day) + timedelta(days=1), time(12), UTC)


def due(days: list[str], close_at: time, zone: ZoneInfo, now: datetime) -> list[str]:
    """The open days to close now: those that ended by the latest `close_at` (in `zone`)
    that has passed."""
    local = now.astimezone(zone)
    moment = datetime.combine(local.date(), close_at, zone)
    if moment > local:
        moment -= timedelta(days=1)
    return [day for day in days if day_end(day) <= moment]


def audit_and_add(
    dataset: Path, archive: Path, packs: LoadedPacks | None, command: list[str]
) -> str:
    """The nightly audit of the day's dataset, added to the archive; the run's id. The
    first of the close's two steps: once it is done, the archive holds the day's closing
    run (`archive.live_runs.closing_run`), and a close cut off after it ends with that run."""
    from auditor.archive.store import add_run
    from auditor.pipeline import run_audit

    with tempfile.TemporaryDirectory(prefix="auditor-live-close-") as work:
        out = Path(work) / "run"
        run_audit(dataset, out, command=command, archive=archive, packs=packs)
        archived, _ = add_run(archive, out)
    return archived.run_id


def run_records(archive: Path, run_id: str) -> list[dict]:
    """The closing run's findings as records, final because the day closed."""
    from auditor.archive.catalog import RUNS, SET

    findings = pl.read_parquet(archive / RUNS / run_id / SET / FINDINGS_FILE)
    return as_records(findings.with_columns(pl.lit(DAY_CLOSED).alias(FINAL_AFTER)))
