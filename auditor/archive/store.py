"""The archive folder: every run's output set, kept across nights.

    ARCHIVE/archive.json            what the folder is (tool, format)
    ARCHIVE/archive.duckdb          the catalog across runs (`archive.catalog`), rebuilt on add
    ARCHIVE/reviews.jsonl           the review ledger (`archive.ledger`)
    ARCHIVE/record.jsonl            what the archive holds, chained (`archive.record`)
    ARCHIVE/runs/RUN_ID/set/        a run's output set, as verified against its manifest
    ARCHIVE/runs/RUN_ID/run.json    what the archive records of it (added, nights, tables)

Adding is atomic: the set is copied into a new folder under `runs/`, verified there
against its own manifest, and renamed into place in one step; a killed add leaves a
`.adding-*` folder beside `runs/` that no reader looks at and the next add removes. Adds hold the
archive's lock, so two at once both land, one after the other. The archive keeps output
sets, not datasets: a run's `located.parquet` and `coverage.parquet` say where and when
its findings happened and which tables and gaming days it audited.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

from auditor.archive import keys
from auditor.archive.carry import carry_reviews
from auditor.archive.catalog import RUNS, SET, current_catalog, ensure_catalog, is_run_id
from auditor.archive.ledger import LEDGER_FILE, ledger_head, say_on_stderr
from auditor.archive.record import (
    RECORD_FILE,
    RecordMissing,
    append_entry,
    file_sha256,
    has_record,
    recorded_runs,
)
from auditor.errors import AuditorError
from auditor.output.files import DUCKDB_FILE, FINDINGS_FILE, MANIFEST_FILE
from auditor.output.located import COVERAGE_FILE, LOCATED_FILE
from auditor.output.lock import waiting
from auditor.output.outdir import fsync_folder, resolved
from auditor.output.sandbox import sandboxed
from auditor.output.verify import (
    manifest_sha256,
    read_manifest,
    set_problems,
    verified,
    verify_set,
)
from auditor.regular_files import read_regular_text

ARCHIVE_FILE = "archive.json"
RUN_FILE = "run.json"
MANIFEST_SHA256 = "manifest_sha256"  # run.json's record of the set's manifest as added
ARCHIVE_FORMAT = 1
ADD_WAIT_SECONDS = 300.0
# What an archive being made holds before its marker (an add killed while making it).
_PARTS = {RUNS, LEDGER_FILE, RECORD_FILE, f".{ARCHIVE_FILE}.tmp"}  # and .adding-* folders
TOOL = "auditor"


class ArchiveError(AuditorError):
    """The archive or the run to add cannot be used; nothing was changed (exit 2)."""


@dataclass(frozen=True)
class ArchivedRun:
    run_id: str
    record: dict  # run.json
    folder: Path  # ARCHIVE/runs/RUN_ID


def open_archive(
    archive: Path, create: bool = False, archive_id: str | None = None, key_check: str | None = None
) -> Path:
    """The archive folder, resolved; created (with its marker, and the check value of its
    key when it has one) when missing and asked."""
    folder = resolved(archive)
    marker = folder / ARCHIVE_FILE
    if marker.is_file():
        _check_marker(marker)
        return folder
    if not create:
        raise ArchiveError(
            f"{folder}: not an archive (no {ARCHIVE_FILE}); `auditor archive add` makes one"
        )
    if folder.exists() and any(
        p.name not in _PARTS and not p.name.startswith(".adding-") for p in folder.iterdir()
    ):
        raise ArchiveError(
            f"{folder}: holds files but no {ARCHIVE_FILE}: not an archive; choose an empty "
            "or new folder"
        )
    (folder / RUNS).mkdir(parents=True, exist_ok=True)
    (folder / LEDGER_FILE).touch()  # the review ledger starts empty
    (folder / RECORD_FILE).touch()  # and so does the archive's record
    # The marker last, and whole: a folder with it is an archive with its parts.
    staged = folder / f".{ARCHIVE_FILE}.tmp"
    marker_data = {"tool": TOOL, "kind": "archive", "format": ARCHIVE_FORMAT}
    marker_data["id"] = archive_id or uuid.uuid4().hex
    if key_check is not None:
        marker_data["key_check"] = key_check
    _write_json(staged, marker_data)
    os.replace(staged, marker)
    return folder


def init_archive(archive: Path, key_path: Path | None = None) -> tuple[Path, Path]:
    """A new, empty archive with its signing key written outside it; returns the archive
    folder and the key file. An existing archive or key file is refused."""
    folder = resolved(archive)
    if (folder / ARCHIVE_FILE).exists():
        raise ArchiveError(f"{folder}: already an archive; its key, if any, was made with it")
    archive_id = uuid.uuid4().hex
    key_path = key_path or keys.default_key_file(archive_id)
    if keys.inside(key_path, folder):
        raise ArchiveError(f"{key_path}: inside the archive; the key is kept outside it")
    with waiting(folder, "an archive add", ADD_WAIT_SECONDS):
        key = keys.create_key(key_path)
        open_archive(folder, create=True, archive_id=archive_id, key_check=keys.check_value(key))
    return folder, key_path


def archive_key(folder: Path) -> tuple[bytes | None, str]:
    """The archive's signing key when found, and a sentence saying what was found."""
    key, _, said = keys.find_key(folder)
    return key, said


def _check_marker(marker: Path) -> None:
    try:
        data = json.loads(read_regular_text(marker))
    except (AuditorError, OSError, ValueError) as exc:
        raise ArchiveError(f"{marker}: unreadable ({exc})") from exc
    if not isinstance(data, dict) or data.get("tool") != TOOL or data.get("kind") != "archive":
        raise ArchiveError(f"{marker}: not an archive of {TOOL}")
    if data.get("format") != ARCHIVE_FORMAT:
        raise ArchiveError(
            f"{marker}: archive format {data.get('format')!r}; this auditor reads {ARCHIVE_FORMAT}"
        )


def add_run(
    archive: Path, outdir: Path, notify: Callable[[str], None] = say_on_stderr
) -> tuple[ArchivedRun, bool]:
    """Add the verified output set in `outdir` to the archive (created when missing);
    returns the archived run and whether it was new (a run already there is left as it
    is). The archive's catalog sees it at once (its views read every run's folder)."""
    manifest = verified(outdir)
    for needed in (LOCATED_FILE, COVERAGE_FILE):
        if needed not in manifest.files:
            raise ArchiveError(
                f"{outdir}: the set has no {needed} (written by an earlier auditor): audit the "
                "night again with this version to archive it"
            )
    run_id = _run_id(Path(outdir))
    # Held before the archive is made, so that two first adds do not both make it; a
    # second add waits for the first (each takes seconds), then lands after it.
    with waiting(resolved(archive), "an archive add", ADD_WAIT_SECONDS):
        folder = open_archive(archive, create=True)
        _require_record(folder)
        _clear_partial_adds(folder)
        place = folder / RUNS / run_id
        if place.exists():
            return ArchivedRun(run_id, _read_json(place / RUN_FILE), place), False
        # Beside runs/, not in it: the catalog's views read runs/*/ and must never see
        # a run that is not whole.
        partial = Path(tempfile.mkdtemp(prefix=".adding-", dir=folder))
        mask = os.umask(0o022)
        os.umask(mask)
        partial.chmod(0o777 & ~mask)  # a folder's usual permissions, not a temporary one's
        try:
            shutil.copytree(outdir, partial / SET, symlinks=True)
            problems = set_problems(read_manifest(partial / SET))
            if problems:
                raise ArchiveError(
                    f"{outdir}: changed while it was copied ({problems[0]}); add it again"
                )
            record = _run_record(run_id, partial / SET)
            # The manifest as added: `verify ARCHIVE` and `query ARCHIVE` hold it to this.
            record[MANIFEST_SHA256] = manifest_sha256(partial / SET)
            _write_json(partial / RUN_FILE, record)
            _fsync_tree(partial)
            os.rename(partial, place)
            fsync_folder(folder / RUNS)
            _record_run(folder, place, record["started_at"])
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        # The views read runs/*/ by pattern: a new run needs no new catalog, only a
        # missing or moved one does (rebuilding read every run's footers: seconds a year on).
        ensure_catalog(folder)
        # A review follows its finding to the id another scheme gives it.
        carry_reviews(folder, place, notify)
    return ArchivedRun(run_id, record, place), True


def _require_record(folder: Path) -> None:
    """An archive made before the record was kept is sealed first, by its owner's choice:
    adding to it would record new runs beside old ones nobody vouched for."""
    if has_record(folder):
        return
    if any(not p.name.startswith(".") for p in (folder / RUNS).iterdir()):
        raise ArchiveError(
            f"{folder}: made before the archive kept its record of the runs it holds; "
            f"check it with `auditor verify {folder}`, then record its runs with "
            f"`auditor archive seal {folder}`"
        )
    (folder / RECORD_FILE).touch()


def _record_run(folder: Path, place: Path, started_at: str) -> dict:
    """The run's entry in the archive's record: its id, the hashes of its run.json and
    its set's manifest, its start as read at add time, and the ledger's head now."""
    ledger_seq, ledger_hash = ledger_head(folder)
    key, _ = archive_key(folder)
    fields = {
        "kind": "run",
        "name": place.name,
        "started_at": started_at,
        "files": {
            RUN_FILE: file_sha256(place / RUN_FILE),
            f"{SET}/{MANIFEST_FILE}": file_sha256(place / SET / MANIFEST_FILE),
        },
        "ledger_seq": ledger_seq,
        "ledger_hash": ledger_hash,
    }
    return append_entry(folder, fields, key)


def seal_archive(archive: Path) -> list[str]:
    """Record the runs of an archive made before the record was kept, each verified
    against its manifest first; returns the run ids recorded. Refused when any run is not
    as written, or the archive already has its record."""
    folder = open_archive(archive)
    with waiting(folder, "an archive add", ADD_WAIT_SECONDS):
        if has_record(folder):
            raise ArchiveError(f"{folder}: already keeps its record; nothing to seal")
        places = sorted(p for p in (folder / RUNS).iterdir() if not p.name.startswith("."))
        problems = [
            f"run {p.name}: {problem}"
            for p in places
            for problem in (
                verify_set(p / SET) if (p / SET).is_dir() and not p.is_symlink() else ["not a run"]
            )
        ]
        if problems:
            raise ArchiveError(
                f"{folder}: not sealed, a run is not as written: {'; '.join(problems[:3])}"
            )
        runs = sorted(
            ((_read_json(p / RUN_FILE)["started_at"], p) for p in places), key=lambda r: r[0]
        )
        (folder / RECORD_FILE).touch()
        for started_at, place in runs:
            _record_run(folder, place, started_at)
    return [place.name for _, place in runs]


def _run_id(outdir: Path) -> str:
    # The set is someone else's until verified: its catalog's `runs` may be a view that
    # reads files, so it is read in the sandbox, reaching nothing outside the catalog.
    try:
        with sandboxed(outdir / DUCKDB_FILE) as con:
            row = con.execute("SELECT run_id FROM runs ORDER BY ended_at DESC LIMIT 1").fetchone()
    except duckdb.Error as exc:
        raise ArchiveError(f"{outdir}: its catalog records no run it can read ({exc})") from exc
    # The id becomes a folder's name: only the ids the auditor writes, never a path.
    if row is None or not is_run_id(row[0]):
        raise ArchiveError(f"{outdir}: its catalog records no run (or a malformed run id)")
    return str(row[0])


def _run_record(run_id: str, folder: Path) -> dict:
    """What the archive keeps beside a run's set: when it was audited and added, and what
    it covers (tables, properties, gaming days) and found."""
    with sandboxed(folder / DUCKDB_FILE) as con:
        row = con.execute(
            "SELECT started_at, ended_at, dataset, command_line FROM runs WHERE run_id = $id",
            {"id": run_id},
        ).fetchone()
    if row is None:  # the set copied is not the one whose run id was read before the copy
        raise ArchiveError(
            f"run {run_id}: its catalog no longer records it: changed while it was copied; "
            "add it again"
        )
    started, ended, dataset, command = row
    coverage = pl.read_parquet(folder / COVERAGE_FILE)
    findings = pl.scan_parquet(folder / FINDINGS_FILE).select(pl.len()).collect().item()
    days = sorted({d.isoformat() for d in coverage["gaming_day"].drop_nulls()})
    return {
        "run_id": run_id,
        "added_at": datetime.now(UTC).isoformat(timespec="microseconds"),
        "started_at": started.astimezone(UTC).isoformat(timespec="microseconds"),
        "ended_at": ended.astimezone(UTC).isoformat(timespec="microseconds"),
        "dataset": dataset,
        "command_line": command,
        "gaming_days": days,
        "tables": sorted(set(coverage["table_id"].drop_nulls())),
        "properties": sorted(set(coverage["property_id"].drop_nulls())),
        "findings": int(findings),
    }


def archived_runs(archive: Path) -> list[ArchivedRun]:
    """Every run the archive's record holds, oldest audit first (by its start as recorded
    when it was added, then its id); in an archive made before the record, every run
    folder, by its run.json's start."""
    folder = open_archive(archive)
    try:
        starts = {name: entry["started_at"] for name, entry in recorded_runs(folder).items()}
    except RecordMissing:
        starts = None
    runs = []
    for place in sorted((folder / RUNS).iterdir()):
        if not is_run_id(place.name) or not (place / RUN_FILE).is_file():
            continue
        if starts is not None and place.name not in starts:
            continue  # not a run the archive added: `auditor verify` names it
        runs.append(ArchivedRun(place.name, _read_json(place / RUN_FILE), place))
    started = (lambda r: starts[r.run_id]) if starts else (lambda r: r.record["started_at"])
    return sorted(runs, key=lambda r: (started(r), r.run_id))


def _clear_partial_adds(folder: Path) -> None:
    """Folders of adds that were killed: never read, removed under the lock."""
    for partial in [*folder.glob(".adding-*"), *(folder / RUNS).glob(".adding-*")]:
        if partial.is_dir() and not partial.is_symlink():
            shutil.rmtree(partial, ignore_errors=True)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(read_regular_text(path))
    except (AuditorError, OSError, ValueError) as exc:
        raise ArchiveError(f"{path}: unreadable ({exc})") from exc


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
    for path in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        fsync_folder(path)


def superseded(archive: Path) -> dict[str, str]:
    """Each run a later run supersedes, wholly or in part: "superseded" or "partly
    superseded (N of M table-days)"."""
    folder = open_archive(archive)
    if not any((folder / RUNS).iterdir()):
        return {}
    with sandboxed(current_catalog(folder), [folder]) as con:
        rows = con.execute("SELECT * FROM superseded_runs WHERE days_superseded > 0").fetchall()
    return {
        run_id: "superseded" if gone == days else f"partly superseded ({gone} of {days} table-days)"
        for run_id, gone, days in rows
    }
