"""`auditor watch`: the landing folder watched, each batch of complete files audited on
its gaming day so far, the findings reported as they become final, and the day closed
into the archive as a nightly run.

One watcher per archive: it holds the archive's live lock (`ARCHIVE/.live.lock`) for its
whole length, and a second is refused. Started again after a kill, it reads back what
the archive's live runs hold (`live.store`) and audits every open day once before it
looks for new files: a finding reported before the kill is not reported again, one
found but not yet written is reported then.
"""

from __future__ import annotations

import shutil
import signal
import threading
import time as clock
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from auditor.archive.live_runs import closing_run
from auditor.contract import REQUIRED_TABLES
from auditor.errors import InputError
from auditor.interrupts import interrupts_deferred
from auditor.live.batch import changes, finals, link_files
from auditor.live.close import audit_and_add, due, run_records
from auditor.live.days import STANDING, UndatedFile, place
from auditor.live.landing import Seen, Settler, footer_reads, look, table_of
from auditor.live.notify import Notifier
from auditor.live.scope import DayTables, batch_paths
from auditor.live.store import BATCH, DATASET, LiveStore, now_text
from auditor.output.lock import holding
from auditor.packs.loaded import LoadedPacks


class WatchError(InputError):
    """The watch cannot start: its folders, its archive or its arguments (exit 2)."""


@dataclass
class WatchOptions:
    landing: Path
    archive: Path
    settle: float = 2.0
    poll: float = 0.5
    on_finding: str | None = None
    close_at: time | None = None
    zone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    packs: LoadedPacks | None = None
    command: list[str] = field(default_factory=list)


def check_folders(landing: Path, archive: Path) -> tuple[Path, Path]:
    """Both folders resolved; neither inside the other (the watch would read its own
    writing, or write into what it reads)."""
    landing, archive = landing.resolve(), archive.resolve()
    if not landing.is_dir():
        raise WatchError(f"{landing}: not a folder; the landing folder must exist")
    if landing == archive or landing.is_relative_to(archive) or archive.is_relative_to(landing):
        raise WatchError(
            f"{landing} and {archive}: the landing folder and the archive must be apart, "
            "neither inside the other"
        )
    return landing, archive


class Watch:
    def __init__(self, options: WatchOptions, say: Callable[[str], None]) -> None:
        from auditor.archive.store import open_archive
        from auditor.pipeline import all_checks

        self.options = options
        self.landing, archive = check_folders(options.landing, options.archive)
        self.archive = open_archive(archive, create=True)
        self.say = say
        self.store = LiveStore(self.archive)
        self.notifier = Notifier(options.on_finding, say)
        self.settler = Settler(options.settle)
        self.when = finals(all_checks())
        self.stopping = threading.Event()
        self.said: set[str] = set()
        self.read: dict[str, dict] = {}  # path -> the files.jsonl record
        self.day_tables: dict[str, DayTables] = {}  # what each open day's files name
        for record in self.store.files():
            self.read[record["path"]] = record
        # Files read that no batch has audited yet (the day could not be audited as it
        # stood, or a watch was stopped between reading and auditing), with the tables
        # they touch (None: the whole day): the day's next batch takes them with its own.
        self.unaudited: dict[str, tuple[list[str], set[str] | None]] = {}
        batched = self.store.batched()
        unbatched = [
            r for path, r in sorted(self.read.items())
            if r.get("status") == "read" and r.get("day") is not None and path not in batched
        ]  # fmt: skip
        for day in self.open_days():
            files = [r["path"] for r in unbatched if r["day"] in (day, STANDING)]
            if files:
                self.unaudited[day] = (files, None)

    # ---- what the archive holds ---------------------------------------------------------

    def days(self) -> list[str]:
        days = {r.get("day") for r in self.read.values()}
        return sorted(day for day in days if day not in (None, STANDING))

    def open_days(self) -> list[str]:
        return [day for day in self.days() if self.store.closed(day) is None]

    def day_files(self, day: str) -> list[str]:
        return sorted(
            path
            for path, r in self.read.items()
            if r.get("status") == "read" and r["day"] in (day, STANDING)
        )

    # ---- the loop -----------------------------------------------------------------------

    def run(self) -> None:
        """Watch until SIGTERM (the batch under way finished) or Ctrl-C."""
        with holding(self.store.root, "a watch"):
            before = signal.signal(signal.SIGTERM, lambda *_: self.stopping.set())
            try:
                self.finish_cut_off_closes()
                self.catch_up()
                while not self.stopping.is_set():
                    self.tick()
                    self.stopping.wait(self.options.poll)
            finally:
                signal.signal(signal.SIGTERM, before)
        self.say("watch stopped")

    def close(self, day: str) -> str:
        """Read what has landed for `day`, audit it a last time and close it; the run id."""
        with holding(self.store.root, "a watch"):
            if day in self.finish_cut_off_closes():
                finished = self.store.closed(day)
                assert finished is not None  # finishing its close marked it closed
                return str(finished["run_id"])
            if (closed := self.store.closed(day)) is not None:
                raise WatchError(f"gaming day {day}: already closed by run {closed['run_id']}")
            # Two looks a settle time apart: a file still being written is not taken.
            self.tick(close_due=False)
            clock.sleep(self.options.settle)
            self.tick(close_due=False)
            if day not in self.days():
                raise WatchError(f"gaming day {day}: no file of it has landed; nothing to close")
            return self.close_day(day)

    def finish_cut_off_closes(self) -> list[str]:
        """Finish each close cut off after its run was added to the archive (before the
        day was marked closed): with that run, never a second. The days finished."""
        cut_off = [(day, closing_run(self.archive, day)) for day in self.open_days()]
        for day, run_id in cut_off:
            if run_id is not None:
                self.say(
                    f"gaming day {day}: its closing run {run_id} is in the archive; "
                    "finishing the close cut off before it was marked"
                )
                self.finish_close(day, run_id)
        return [day for day, run_id in cut_off if run_id is not None]

    def catch_up(self) -> None:
        for day in self.open_days():
            self.audit_day(day, [])

    def tick(self, close_due: bool = True) -> None:
        fresh = self.take_new_files()
        open_days = self.open_days()
        touched = set(fresh) | (set(open_days) if STANDING in fresh else set())
        for day in sorted(touched & set(open_days)):
            if self.stopping.is_set():
                break
            # The tables' options or chairs bear on every table: the whole day again.
            tables = None if STANDING in fresh else self.tables_of(day, fresh.get(day, []))
            self.audit_day(day, fresh.get(day, []) + fresh.get(STANDING, []), tables)
        if close_due and self.options.close_at is not None:
            now = datetime.now(UTC)
            for day in due(self.open_days(), self.options.close_at, self.options.zone, now):
                self.close_day(day)

    def take_new_files(self) -> dict[str, list[str]]:
        """Record each complete new file with its day; the new files by day touched."""
        seen, refused = look(self.landing)
        for refusal in refused:
            self.once(refusal.path, f"{refusal.path}: {refusal.reason}")
        unread: list[Seen] = []
        for file in seen:
            known = self.read.get(file.path)
            if known is None:
                unread.append(file)
            elif known["status"] == "read" and (known["size"], known["mtime_ns"]) != (
                file.size,
                file.mtime_ns,
            ):
                self.refuse(file.path, "changed after it was read; not read again", known)
        records: list[dict[str, Any]] = []
        for file in self.settler.complete(unread, clock.monotonic()):
            path = self.landing / file.path
            if not footer_reads(path):
                continue  # not whole yet: looked at again next time
            record: dict[str, Any] = {
                "path": file.path,
                "table": file.table,
                "size": file.size,
                "mtime_ns": file.mtime_ns,
                "read_at": now_text(),
            }
            try:
                placed = place(path, file.path, file.table)
            except (UndatedFile, OSError) as exc:
                records.append({**record, "status": "refused", "reason": str(exc), "day": None})
                self.say(str(exc))
                continue
            closed = placed.day != STANDING and self.store.closed(placed.day) is not None
            if closed:
                reason = f"landed after gaming day {placed.day} was closed; not read"
                records.append({**record, "status": "refused", "reason": reason, "day": None})
                self.say(f"{file.path}: {reason}")
                continue
            records.append(
                {**record, "status": "read", "day": placed.day, "tables": list(placed.tables)}
            )
        with interrupts_deferred():
            self.store.record_files(records)
            for record in records:
                self.read[record["path"]] = record
        fresh: dict[str, list[str]] = {}
        for record in records:
            if record["status"] == "read":
                fresh.setdefault(record["day"], []).append(record["path"])
        return fresh

    def refuse(self, path: str, reason: str, known: dict) -> None:
        if known.get("status") == "changed":
            return
        record = {**known, "status": "changed", "reason": reason, "read_at": now_text()}
        with interrupts_deferred():
            self.store.record_files([record])
            self.read[path] = record
        self.say(f"{path}: {reason}")

    def once(self, key: str, text: str) -> None:
        if key not in self.said:
            self.said.add(key)
            self.say(text)

    # ---- a day --------------------------------------------------------------------------

    def link_day(self, day: str) -> Path:
        dataset = self.store.day(day) / DATASET
        dataset.mkdir(parents=True, exist_ok=True)
        link_files(dataset, self.landing, self.day_files(day))
        return dataset

    def tables_of(self, day: str, fresh: list[str]) -> set[str]:
        """The tables the day's new files touch (`scope.DayTables`, read once a start)."""
        known = self.day_tables.get(day)
        if known is None:
            known = self.day_tables[day] = DayTables(self.landing)
            known.add(
                r
                for path, r in sorted(self.read.items())
                if path not in fresh and r.get("status") == "read" and r["day"] == day
            )
        return known.add(self.read[path] for path in fresh)

    def batch_dataset(self, day: str, tables: set[str]) -> Path | None:
        """A dataset of the day's files of `tables` (links, made anew for each batch); None
        when they hold no file of a table the loader requires (a shoe landed before the
        first round of its table): the whole day is audited then."""
        paths = batch_paths(self.day_files(day), self.day_tables[day], tables)
        if set(REQUIRED_TABLES) - {table_of(path) for path in paths}:
            return None
        folder = self.store.day(day) / BATCH
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        link_files(folder, self.landing, paths)
        return folder

    def audit_day(self, day: str, files: list[str], tables: set[str] | None = None) -> None:
        """Audit the day so far: the whole of it (`tables` None), or its files of `tables`,
        whose findings alone are compared with those reported."""
        from auditor.errors import AuditorError
        from auditor.live.batch import LOCATED_TABLE, as_records, audit_so_far

        started = clock.monotonic()
        if day in self.unaudited:
            earlier, earlier_tables = self.unaudited.pop(day)
            files = sorted({*earlier, *files})
            tables = None if tables is None or earlier_tables is None else tables | earlier_tables
        if tables is not None and not tables:
            self.store.record_batch({"day": day, "files": files, "ended_at": now_text()})
            return  # wagers whose rounds have not landed: audited when they do
        dataset = None if tables is None else self.batch_dataset(day, tables)
        if dataset is None:
            dataset, tables = self.link_day(day), None
        try:
            audited = audit_so_far(dataset, self.options.packs, self.when)
        except AuditorError as error:
            # The day's files as they stand cannot be audited (a file of another schema, a
            # shoe landed before any round of the day): said, and the files tried again
            # with the day's next batch.
            self.say(f"gaming day {day}: not audited this time: {error}")
            self.unaudited[day] = (files, tables)
            return
        found, reported = as_records(audited.final), self.store.reported(day)
        if tables is not None:
            found = [r for r in found if r[LOCATED_TABLE] in tables]
            reported = {k: r for k, r in reported.items() if r.get(LOCATED_TABLE) in tables}
        count = self.report(day, changes(found, reported))
        # What each batch read and when it was done: the latency a file's findings took.
        self.store.record_batch({"day": day, "files": files, "ended_at": now_text()})
        scope = "the whole day" if tables is None else f"{len(tables):,} tables"
        self.say(
            f"gaming day {day}: {len(files):,} new files audited ({scope}) in "
            f"{clock.monotonic() - started:.1f} s, {count:,} reported, "
            f"{audited.waiting:,} findings waiting for their shoe to close"
        )

    def close_day(self, day: str) -> str:
        self.say(f"gaming day {day}: closing")
        run_id = self.add_closing_run(day)
        self.finish_close(day, run_id)
        return run_id

    def add_closing_run(self, day: str) -> str:
        """The close's first step: the nightly audit of the day's files, added to the
        archive, which from then on says the day is closed (`closing_run`)."""
        dataset = self.link_day(day)
        return audit_and_add(dataset, self.archive, self.options.packs, self.options.command)

    def finish_close(self, day: str, run_id: str) -> None:
        """The close's second step: what the closing run changes reported, and the day
        marked closed."""
        records = run_records(self.archive, run_id)
        reported = self.report(day, changes(records, self.store.reported(day)))
        self.store.mark_closed(day, run_id)
        self.say(f"gaming day {day}: closed by run {run_id}, {reported:,} reported at the close")

    def report(self, day: str, found: list[dict]) -> int:
        """Write, print and hand over; the archive first, so that a finding printed is one
        a restarted watch will not report again."""
        if not found:
            return 0
        at = now_text()
        records = [{**record, "gaming_day": day, "found_at": at} for record in found]
        with interrupts_deferred():
            self.store.report(day, records)
            self.notifier.print(records)
        self.notifier.hand_over(records)
        return len(records)
