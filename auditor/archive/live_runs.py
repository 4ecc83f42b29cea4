"""Where an archive keeps its live runs (`auditor watch`): `ARCHIVE/live/DAY/`, one
folder per gaming day, whose `findings.jsonl` holds every finding reported while the
day was dealt, in the order reported, and `closed.json` the run that closed the day
(an archived run like any other, under `runs/`, which a later audit supersedes).
`auditor verify` leaves the folder alone: it vouches for runs and periods only.

A day's closing run is the archived run that audited the day's own dataset
(`ARCHIVE/live/DAY/dataset/`, as its `run.json` records, hashed in the archive's
record): the archive itself says whether a day was closed, so a close cut off between
adding its run and writing `closed.json` finishes with that run instead of adding a
second."""

from __future__ import annotations

from pathlib import PurePath

LIVE = "live"
LIVE_FINDINGS = "findings.jsonl"
CLOSED_FILE = "closed.json"
LIVE_DATASET = "dataset"


def closed_live_day(dataset: object) -> str | None:
    """The gaming day whose live dataset a run audited (its `run.json` `dataset`), None
    for a run of any other dataset. By the path's end only: a moved archive's closing
    runs name where it was."""
    if not isinstance(dataset, str):
        return None
    parts = PurePath(dataset).parts
    if len(parts) >= 3 and parts[-3] == LIVE and parts[-1] == LIVE_DATASET:
        return parts[-2]
    return None


def closing_run(archive: PurePath, day: str) -> str | None:
    """The id of the run the archive holds that closed `day` (the latest, should there be
    several), None when the day was never closed into it."""
    from auditor.archive.store import archived_runs

    found = [
        run.run_id
        for run in archived_runs(archive)
        if closed_live_day(run.record.get("dataset")) == day
    ]
    return found[-1] if found else None
