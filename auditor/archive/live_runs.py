"""Where an archive keeps its live runs (`auditor watch`): `ARCHIVE/live/DAY/`, one
folder per gaming day, whose `findings.jsonl` holds every finding reported while the
day was dealt, in the order reported, and `closed.json` the run that closed the day
(an archived run like any other, under `runs/`, which a later audit supersedes).
`auditor verify` leaves the folder alone: it vouches for runs and periods only."""

from __future__ import annotations

LIVE = "live"
LIVE_FINDINGS = "findings.jsonl"
CLOSED_FILE = "closed.json"
