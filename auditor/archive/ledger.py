"""The review ledger, `ARCHIVE/reviews.jsonl`: how the compliance team resolved each
archived finding, one JSON record per line (UTF-8), appended and never rewritten.

    {"seq":1,"finding_id":"…","run_id":"…","status":"explained","note":"…","by":"…",
     "at":"2026-11-25T09:14:03.512044+00:00","prev":"000…0","hash":"…"}

`hash` is the SHA-256 of the record's other fields as canonical JSON (keys sorted, no
spaces, UTF-8), `prev` included, and `prev` is the hash of the record before (64 zeros
for the first): a chain, so that an edited, deleted, inserted or reordered record shows
(`ledger_check.verify_ledger`). A finding's current status is its latest record (`current_status`).

A batch is all or nothing: an unknown finding, status or an empty reviewer refuses it
whole. Appends hold the ledger's lock (`.reviews.jsonl.lock` in the archive), waiting for
another append to end, and write the ledger anew with the batch at its end beside it, then
switch it in (`os.replace`): a kill leaves the ledger as it was, never part of a batch.
A batch equal to one already in the ledger, whose records are still its findings' latest,
is not entered again (a batch entered once more after a kill that landed after the switch).

A torn last line (an append of an earlier version, or a copy, cut off mid-write) is cut
off by the next append, under the lock: its bytes are kept beside the ledger in
`reviews.jsonl.torn-<UTC time>` and the cut is said on stderr, never dropped silently.

Each record is signed (`sig`, not part of its hash: the HMAC-SHA256 of its hash) when the
archive's key is found (`archive.keys`); without the key, re-chaining after an edit cannot
be told from the records alone, but records removed from the end show against the heads
the archive's record kept at each add, or a head kept elsewhere (`--head`).

The ledger is read only as a regular file of at most 2 GB (about 6 million records).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from auditor.archive.keys import find_key, signature
from auditor.archive.ledger_format import (
    GENESIS,
    IDENTITY_FIELD,
    IDENTITY_KEYS,
    LEDGER_FILE,
    STATUSES,
    LedgerLine,
    checked_line,
    encoded_line,
    line_hash,
    record_hash,
)
from auditor.archive.live_runs import LIVE_RUN_PREFIX, live_held, live_identities
from auditor.errors import AuditorError, InputError, summarize
from auditor.output.lock import FolderBusy, waiting
from auditor.output.outdir import fsync_folder
from auditor.regular_files import read_regular

# Far above any year of reviews (a record is about 300 bytes), far below what a reader
# holding the ledger in memory can afford.
LEDGER_LIMIT = 2 * 1024**3

LOCK_WAIT_SECONDS = 30.0
RUNS_GLOB = "runs/*/set/findings.parquet"
RUN_FILE = "run.json"


class LedgerError(AuditorError):
    """The review ledger or a batch for it cannot be used; nothing was written (exit 2)."""

    def __init__(self, message: str, *, problems: Sequence[str] = ()):
        self.problems = list(problems)
        super().__init__(message)


@dataclass(frozen=True)
class ReviewInput:
    finding_id: str
    status: str
    note: str
    by: str


def ledger_path(archive: Path) -> Path:
    return Path(archive) / LEDGER_FILE


def say_on_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")


def append_reviews(
    archive: Path,
    reviews: Sequence[ReviewInput],
    *,
    lock_wait: float = LOCK_WAIT_SECONDS,
    notify: Callable[[str], None] = say_on_stderr,
) -> list[dict]:
    """Append `reviews` to the ledger, all or none; returns the records written (none
    when the same batch is already in). The record chained from, the last, is checked; the
    whole chain is `verify_ledger`'s. What was recovered or skipped is said to `notify`."""
    archive = Path(archive)
    if not archive.is_dir():
        raise LedgerError(f"{archive}: no such archive folder")
    reviews = list(reviews)
    if not reviews:
        return []
    runs = latest_runs(archive, {r.finding_id for r in reviews if isinstance(r.finding_id, str)})
    problems = batch_problems(reviews, runs)
    ledger = ledger_path(archive)
    if problems:
        raise LedgerError(
            f"{ledger}: batch of {len(reviews)} refused, nothing written:\n" + summarize(problems),
            problems=problems,
        )
    key, _, said = find_key(archive)
    with _ledger_lock(ledger, lock_wait):
        data = _without_torn_tail(ledger, ledger_bytes(ledger), notify)
        entered = _entered_before(data, reviews)
        if entered:
            notify(f"{ledger}: this batch is already in the ledger ({entered}); nothing written")
            return []
        identities = finding_identities(archive, runs)
        records = _chained(reviews, runs, identities, _last_record(ledger, data), key)
        _write_with(ledger, data, records)
    if key is None:
        notify(f"{ledger}: records not signed: {said}")
    return records


def ledger_head(archive: Path) -> tuple[int, str]:
    """The seq and hash of the ledger's last whole record ((0, 64 zeros) when empty)."""
    lines = [line for line in _lines(ledger_path(archive)) if line.record is not None]
    return (lines[-1].seq, line_hash(lines[-1])) if lines else (0, GENESIS)


def _without_torn_tail(ledger: Path, data: bytes, notify: Callable[[str], None]) -> bytes:
    """The ledger's bytes up to its last whole line; a torn tail is kept in a side file
    beside it and said, then cut off when the ledger is written next."""
    if not data or data.endswith(b"\n"):
        return data
    keep = data.rfind(b"\n") + 1
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    side = ledger.with_name(f"{ledger.name}.torn-{stamp}")
    with side.open("xb") as handle:
        handle.write(data[keep:])
        handle.flush()
        os.fsync(handle.fileno())
    notify(
        f"{ledger}: its last line was torn (an append cut off mid-write): {len(data) - keep:,} "
        f"bytes cut off and kept in {side}; enter that batch again if it is not in the ledger"
    )
    return data[:keep]


def _entered_before(data: bytes, reviews: list[ReviewInput]) -> str | None:
    """The seqs of a batch already in the ledger equal to `reviews`, when its records are
    still the latest of their findings (entering it again would change nothing)."""
    records = [line.record for line in _parsed(data) if line.record is not None]
    latest = current_status(records)
    stamps = {latest[r.finding_id]["at"] for r in reviews if r.finding_id in latest}
    if len(stamps) != 1 or any(r.finding_id not in latest for r in reviews):
        return None
    (stamp,) = stamps
    batch = [r for r in records if r["at"] == stamp]
    if [ReviewInput(r["finding_id"], r["status"], r["note"], r["by"]) for r in batch] != reviews:
        return None
    return f"seq {batch[0]['seq']} to {batch[-1]['seq']}, written {stamp}"


def batch_problems(reviews: Sequence[ReviewInput], runs: dict[str, str]) -> list[str]:
    """One line per bad entry (numbered from 1), naming what is wrong with it."""
    return [
        f"entry {number} ({review.finding_id!r}): {'; '.join(reasons)}"
        for number, review in enumerate(reviews, start=1)
        if (reasons := _review_problems(review, runs))
    ]


def _review_problems(review: ReviewInput, runs: dict[str, str]) -> list[str]:
    reasons = []
    if not isinstance(review.finding_id, str) or not review.finding_id:
        reasons.append("no finding_id")
    elif review.finding_id not in runs:
        reasons.append("finding_id is in no archived run's findings")
    if review.status not in STATUSES:
        reasons.append(f"status {review.status!r} is not one of {', '.join(STATUSES)}")
    if not isinstance(review.by, str) or not review.by.strip():
        reasons.append("`by` is empty or not text: name who reviewed it")
    if not isinstance(review.note, str):
        reasons.append("note is not text")
        return reasons
    try:
        json.dumps(asdict(review), ensure_ascii=False).encode("utf-8")
    except (TypeError, UnicodeEncodeError):  # a lone surrogate, say
        reasons.append("holds what cannot be written as UTF-8 text")
    return reasons


def latest_runs(archive: Path, finding_ids: set[str]) -> dict[str, str]:
    """Each of `finding_ids` found in the archive, with the run it is read from: the last
    to start (by its run.json) among the runs whose findings hold it; else, for a finding
    reported live on a day not yet closed, that day's live run (`archive.live_runs`)."""
    found = _latest_archived_runs(Path(archive), finding_ids)
    live = live_held(Path(archive), finding_ids - found.keys(), current=True)
    return found | {finding_id: max(runs) for finding_id, runs in live.items()}


def _latest_archived_runs(archive: Path, finding_ids: set[str]) -> dict[str, str]:
    files = [
        path
        for path in sorted(Path(archive).glob(RUNS_GLOB))
        if not path.parents[1].name.startswith(".")  # an add in progress or killed
    ]
    if not files or not finding_ids:
        return {}
    hits = _scan_finding_ids(files, finding_ids)
    recorded = _recorded_starts(Path(archive))
    dated = {
        source: _run_of(Path(source).parents[1], recorded) for source in hits["source"].unique()
    }
    latest: dict[str, tuple[datetime, str]] = {}
    for finding_id, source in hits.iter_rows():
        if finding_id not in latest or dated[source] > latest[finding_id]:
            latest[finding_id] = dated[source]
    return {finding_id: run_id for finding_id, (_, run_id) in latest.items()}


def _scan_finding_ids(files: list[Path], finding_ids: set[str]) -> pl.DataFrame:
    try:
        # A list rather than a glob: an archive path may hold glob characters itself.
        scan = pl.scan_parquet(
            files, glob=False, include_file_paths="source", extra_columns="ignore"
        )
        return (
            scan.select("finding_id", "source")
            .filter(pl.col("finding_id").is_in(sorted(finding_ids)))
            .unique()
            .collect()
        )
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise LedgerError(f"{_unreadable_findings(files) or files[0].parents[3]}: {exc}") from exc


def _unreadable_findings(files: list[Path]) -> Path | None:
    """The first findings file without a readable finding_id column: polars' error on a
    scan of many files does not say which."""
    for path in files:
        try:
            if "finding_id" not in pl.read_parquet_schema(path):
                return path
        except (pl.exceptions.PolarsError, OSError):
            return path
    return None


def finding_runs(
    archive: Path, finding_ids: set[str], live_runs: Iterable[str] = ()
) -> dict[str, set[str]]:
    """Each of `finding_ids` found in the archive, with every run whose findings hold it,
    and those of the `live_runs` (their ids) that ever reported it."""
    files = [p for p in sorted(Path(archive).glob(RUNS_GLOB)) if _is_run(p.parents[1])]
    held: dict[str, set[str]] = {}
    if files and finding_ids:
        for finding_id, source in _scan_finding_ids(files, finding_ids).iter_rows():
            held.setdefault(finding_id, set()).add(Path(source).parents[1].name)
    live = live_held(Path(archive), finding_ids, current=False, runs=live_runs)
    for finding_id, runs in live.items():
        held.setdefault(finding_id, set()).update(runs)
    return held


def finding_identities(archive: Path, runs: dict[str, str]) -> dict[str, dict]:
    """Each finding's identity, as the run it is read from (`runs`: finding id to run id)
    states it; a run written before findings had a discriminator states it as null."""
    wanted: dict[str, set[str]] = {}
    for finding_id, run_id in runs.items():
        wanted.setdefault(run_id, set()).add(finding_id)
    identities = live_identities(
        Path(archive),
        {
            finding_id: run_id
            for finding_id, run_id in runs.items()
            if run_id.startswith(LIVE_RUN_PREFIX)
        },
    )
    for run_id, finding_ids in wanted.items():
        if run_id.startswith(LIVE_RUN_PREFIX):
            continue
        path = Path(archive) / RUNS_GLOB.replace("*", run_id)
        for row in run_identities(path, finding_ids).iter_rows(named=True):
            identities[row.pop("finding_id")] = row
    return identities


def run_identities(path: Path, finding_ids: Iterable[str] | None = None) -> pl.DataFrame:
    """finding_id and the identity's fields of the findings in one run's `path` (those
    of `finding_ids` only, when given); a run written before findings had a
    discriminator states it as null."""
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise LedgerError(f"{path}: {exc}") from exc
    missing = [key for key in IDENTITY_KEYS if key not in frame.columns]
    frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(key) for key in missing)
    if finding_ids is not None:
        frame = frame.filter(pl.col("finding_id").is_in(sorted(finding_ids)))
    return frame.select("finding_id", *IDENTITY_KEYS)


def _is_run(run_folder: Path) -> bool:
    return not run_folder.name.startswith(".")


def _recorded_starts(archive: Path) -> dict[str, str] | None:
    """Each recorded run's start, as the archive's record took it when the run was added;
    None in an archive without its record (its runs' run.json are read instead)."""
    from auditor.archive.record import RecordMissing, recorded_runs

    try:
        return {name: entry["started_at"] for name, entry in recorded_runs(archive).items()}
    except RecordMissing:
        return None
    except (AuditorError, KeyError, TypeError) as exc:
        raise LedgerError(f"{archive}: its record cannot be read ({exc})") from exc


def _run_of(run_folder: Path, recorded: dict[str, str] | None) -> tuple[datetime, str]:
    """When the run started and its id: from the archive's record, else its run.json."""
    if recorded is not None:
        if run_folder.name not in recorded:
            return datetime.min.replace(tzinfo=UTC), run_folder.name  # never the latest
        return datetime.fromisoformat(recorded[run_folder.name]), run_folder.name
    path = run_folder / RUN_FILE
    try:
        data = json.loads(read_regular(path))
        run_id, started = data["run_id"], datetime.fromisoformat(data["started_at"])
        if not isinstance(run_id, str) or not run_id:
            raise ValueError("run_id is not a name")
    except (OSError, InputError, ValueError, KeyError, TypeError) as exc:
        raise LedgerError(f"{path}: no run_id and started_at to be read ({exc})") from exc
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)  # run.json records UTC
    return started, run_id


def _chained(
    reviews: list[ReviewInput],
    runs: dict[str, str],
    identities: dict[str, dict],
    last: dict | None,
    key: bytes | None,
) -> list[dict]:
    at = datetime.now(UTC).isoformat(timespec="microseconds")
    last_seq, prev = (last["seq"], last["hash"]) if last else (0, GENESIS)
    records = []
    for seq, review in enumerate(reviews, start=last_seq + 1):
        record = {"seq": seq, **asdict(review), "run_id": runs[review.finding_id]}
        if review.finding_id in identities:
            record[IDENTITY_FIELD] = identities[review.finding_id]
        record |= {"at": at, "prev": prev}
        record["hash"] = prev = record_hash(record)
        if key is not None:
            record["sig"] = signature(key, record["hash"])
        records.append(record)
    return records


@contextmanager
def _ledger_lock(ledger: Path, wait: float) -> Iterator[None]:
    """Hold the ledger's lock, waiting up to `wait` seconds for another holder to end."""
    try:
        with waiting(ledger, "an append to the review ledger", wait):
            yield
    except FolderBusy:
        busy = f"held by another process for over {wait:g} s; try again later"
        raise LedgerError(f"{ledger}: {busy}") from None


def _last_record(ledger: Path, data: bytes) -> dict | None:
    """The record to chain from: the last line, whole and as written."""
    if not data:
        return None
    line_start = data.rfind(b"\n", 0, len(data) - 1) + 1
    line = checked_line(data.count(b"\n"), data[line_start:-1])
    if line.record is None or not line.hash_ok:
        raise LedgerError(
            f"{ledger}: its last record cannot be chained from "
            f"({line.problem or 'its content does not match its hash'}); nothing was "
            "appended; `auditor verify` on the archive lists what is wrong"
        )
    return line.record


def _write_with(ledger: Path, data: bytes, records: list[dict]) -> None:
    """The ledger written anew beside it, `data` then the records, and switched in: a kill
    at any moment leaves either the ledger as it was or with the whole batch."""
    staged = ledger.with_name(f".{ledger.name}.new")
    staged.unlink(missing_ok=True)  # a kill's leftover: we hold the lock
    batch = b"".join(encoded_line(record) + b"\n" for record in records)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        handle = os.open(staged, flags, 0o644)
    except OSError as exc:
        raise LedgerError(f"{staged}: cannot be written ({exc.strerror})") from exc
    try:
        _write_all(handle, data)
        _write_all(handle, batch)
        os.fsync(handle)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise LedgerError(f"{ledger}: append failed ({exc.strerror}); nothing kept") from exc
    finally:
        os.close(handle)
    os.replace(staged, ledger)
    fsync_folder(ledger.parent)


def _write_all(handle: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view) :]


def read_reviews(archive: Path) -> list[dict]:
    """Every record in file order; the chain is not checked here (`verify_ledger` does),
    but a line that is not a whole record is refused."""
    ledger = ledger_path(archive)
    lines = _lines(ledger)
    for line in lines:
        if line.record is None:
            raise LedgerError(
                f"{ledger}: line {line.number}: {line.problem}; `auditor verify` on the "
                "archive lists what is wrong"
            )
    return [line.fields for line in lines]


def current_status(records: Sequence[dict]) -> dict[str, dict]:
    """Each finding's latest record (the highest seq)."""
    return {record["finding_id"]: record for record in sorted(records, key=lambda r: r["seq"])}


def _lines(ledger: Path) -> list[LedgerLine]:
    return _parsed(_read_settled(ledger))


def _parsed(data: bytes) -> list[LedgerLine]:
    pieces = data.split(b"\n")
    lines = [checked_line(number, raw) for number, raw in enumerate(pieces[:-1], start=1)]
    if pieces[-1]:
        torn = "incomplete: the file ends inside it (an append was cut off mid-write)"
        lines.append(LedgerLine(len(pieces), None, torn, False))
    return lines


def _read_settled(ledger: Path) -> bytes:
    """The ledger's bytes; when they end mid-line, read again under the lock, for an
    append may have been under way (a reader on a read-only copy keeps the first read)."""
    data = ledger_bytes(ledger)
    if not data or data.endswith(b"\n"):
        return data
    try:
        with _ledger_lock(ledger, LOCK_WAIT_SECONDS):
            return ledger_bytes(ledger)
    except (InputError, LedgerError, OSError):  # a read-only copy: keep the first read
        return data


def ledger_bytes(ledger: Path) -> bytes:
    """The ledger's bytes, as a regular file within LEDGER_LIMIT; none when it is missing
    (an archive with no review yet)."""
    try:
        return read_regular(ledger, LEDGER_LIMIT)
    except FileNotFoundError:
        return b""
    except InputError as exc:
        raise LedgerError(str(exc)) from exc
    except OSError as exc:
        raise LedgerError(f"{ledger}: unreadable ({exc.strerror})") from exc
