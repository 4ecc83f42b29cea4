"""The live runs an archive holds: what a watcher read and reported, kept so that a
watcher killed and started again resumes without losing or repeating a finding.

    ARCHIVE/live/files.jsonl          every landed file read (path, size, time, day), or
                                      refused once read (changed, unreadable)
    ARCHIVE/live/batches.jsonl        each batch audited: its day, the files it read, when done
    ARCHIVE/live/DAY/findings.jsonl   every finding reported live for the gaming day, with
                                      when it was found and its change (new, changed,
                                      withdrawn, again), in the order reported
    ARCHIVE/live/DAY/closed.json      the closing run's id, once the day is closed
    ARCHIVE/live/DAY/dataset/         the day's files as a dataset (links into the landing
                                      folder), which the closing audit read
    ARCHIVE/live/DAY/batch/           the last batch's dataset: the day's files of the
                                      tables it touched (links), made anew each batch

Each line is appended whole and synced before it is acted on; a line torn by a kill (no
newline at its end) is cut off before the next append and never read.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from auditor.archive.live_runs import CLOSED_FILE, LIVE, LIVE_FINDINGS
from auditor.output.outdir import fsync_folder

FILES = "files.jsonl"
BATCHES = "batches.jsonl"
DATASET = "dataset"
BATCH = "batch"  # a batch's dataset: the day's files of the tables it touched (links)


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def append_lines(path: Path, records: list[dict]) -> None:
    """Append `records`, one JSON object a line, synced; a torn last line is cut first."""
    if not records:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)
    handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        size = os.fstat(handle).st_size
        if size and os.pread(handle, 1, size - 1) != b"\n":
            whole = _whole_length(handle, size)
            os.ftruncate(handle, whole)
            size = whole
        os.pwrite(handle, text.encode("utf-8"), size)
        os.fsync(handle)
    finally:
        os.close(handle)


def _whole_length(handle: int, size: int) -> int:
    data = os.pread(handle, size, 0)
    return data.rfind(b"\n") + 1


def read_lines(path: Path) -> list[dict]:
    """Every whole line's record (a torn last line left out)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines() if line]


class LiveStore:
    """The archive's live runs, one folder per gaming day."""

    def __init__(self, archive: Path) -> None:
        self.root = archive / LIVE
        self.root.mkdir(exist_ok=True)

    def day(self, day: str) -> Path:
        return self.root / day

    def files(self) -> list[dict]:
        return read_lines(self.root / FILES)

    def record_files(self, records: list[dict]) -> None:
        append_lines(self.root / FILES, records)

    def record_batch(self, record: dict) -> None:
        append_lines(self.root / BATCHES, [record])

    def batched(self) -> set[str]:
        """Every file a batch has audited."""
        return {path for record in read_lines(self.root / BATCHES) for path in record["files"]}

    def reported(self, day: str) -> dict[str, dict]:
        """Each finding reported for the day, as last reported (withdrawn ones included,
        with their change)."""
        return {r["finding_id"]: r for r in read_lines(self.day(day) / LIVE_FINDINGS)}

    def report(self, day: str, records: list[dict]) -> None:
        append_lines(self.day(day) / LIVE_FINDINGS, records)

    def closed(self, day: str) -> dict | None:
        path = self.day(day) / CLOSED_FILE
        return json.loads(path.read_text("utf-8")) if path.is_file() else None

    def mark_closed(self, day: str, run_id: str) -> None:
        folder = self.day(day)
        staged = folder / f".{CLOSED_FILE}.tmp"
        staged.write_text(json.dumps({"run_id": run_id, "closed_at": now_text()}) + "\n")
        with staged.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(staged, folder / CLOSED_FILE)
        fsync_folder(folder)
