"""`auditor verify ARCHIVE`: every run's set against its manifest (and its catalog against
its Parquet files), nothing else in a run's folder, the review ledger's chain, and all of
it against the archive's own record (`archive.record`): every run and period it holds and
no other, their run.json, manifest and period files by SHA-256, the ledger's heads it
anchored, its signatures when the key is found, and the catalog's views against the
code's own."""

from __future__ import annotations

import json
from pathlib import Path

from auditor.archive.catalog import CATALOG_FILE, RUNS, SET, is_earlier_catalog, view_problems
from auditor.archive.keys import find_key
from auditor.archive.ledger_check import anchor_problems, verify_ledger
from auditor.archive.period_layout import (
    PERIODS,
    is_run_folder,
    period_folders,
    period_runs,
    run_files,
)
from auditor.archive.record import (
    RECORD_FILE,
    RecordMissing,
    chain_problems,
    file_sha256,
    read_entries,
    recorded_runs,
)
from auditor.archive.store import MANIFEST_SHA256, RUN_FILE, ArchiveError, open_archive
from auditor.errors import AuditorError
from auditor.output.outdir import MANIFEST_FILE
from auditor.output.verify import manifest_sha256, read_manifest, verify_set
from auditor.regular_files import read_regular_text, regular_file_problem


def is_archive(folder: Path) -> bool:
    from auditor.archive.store import ARCHIVE_FILE

    return (Path(folder) / ARCHIVE_FILE).is_file()


def verify_archive(archive: Path, tables: bool = True) -> list[str]:
    """Every difference in the archive, one line each, naming the run; empty when intact."""
    return archive_check(archive, tables)[0]


def archive_check(archive: Path, tables: bool = True) -> tuple[list[str], str]:
    """The archive's differences and a sentence saying what the signatures told: checked
    with the archive's key, or why not."""
    folder = open_archive(archive)
    key, keyed, said = find_key(folder)
    if (folder / RUNS).is_symlink() or not (folder / RUNS).is_dir():
        return [f"{RUNS}: a link or file, not the archive's own folder of runs"], said
    try:
        entries = read_entries(folder)
    except RecordMissing:
        entries = None
    except AuditorError as error:
        return [f"{RECORD_FILE}: {error}"], said
    problems = _catalog_problems(folder)
    if entries is None:
        problems.append(
            f"{RECORD_FILE}: missing: the archive was made before it kept its record of the "
            f"runs it holds, or the record was removed; `auditor archive seal {folder}` "
            "records the runs it holds now, once they are checked"
        )
        problems += _runs_problems(folder, None, tables)
    else:
        problems += chain_problems(entries, key)
        if keyed and key is None:
            problems += [
                f"record entry {n}: not signed"
                for n, e in enumerate(entries, 1)
                if e is not None and "sig" not in e
            ]
        whole = [e for e in entries if e is not None and isinstance(e.get("files"), dict)]
        problems += _runs_problems(folder, whole, tables)
        problems += _period_problems(folder, whole)
        problems += [f"reviews: {p}" for p in anchor_problems(folder, whole)]
    problems += [f"reviews: {p}" for p in verify_ledger(folder, key=key, keyed=keyed)]
    return problems, said


def _catalog_problems(folder: Path) -> list[str]:
    problem = regular_file_problem(folder / CATALOG_FILE)
    if problem == "missing":
        return []  # written again by the next reader, from the code's own views
    if problem:
        return [f"{CATALOG_FILE}: {problem}"]
    problems = view_problems(folder)
    # An earlier auditor's catalog, word for word: the next reader writes it anew.
    return [] if problems and is_earlier_catalog(folder) else problems


def _runs_problems(folder: Path, entries: list[dict] | None, tables: bool) -> list[str]:
    recorded = {e["name"]: e for e in entries or [] if e.get("kind") == "run"}
    problems = []
    present = {place.name: place for place in (folder / RUNS).iterdir()}
    for name in sorted(present):
        if entries is not None and name not in recorded:
            problems.append(f"run {name}: not in the archive's record (not added by the auditor)")
        elif entries is None and name.startswith("."):
            continue  # an archive without its record: its own adds' leftovers
        else:
            problems += _run_problems(present[name], recorded.get(name), tables)
    problems += [
        f"run {name}: missing: the archive's record holds it (entry {recorded[name]['seq']})"
        for name in sorted(recorded.keys() - present.keys())
    ]
    return problems


def _run_problems(place: Path, entry: dict | None, tables: bool) -> list[str]:
    if place.is_symlink() or (place / SET).is_symlink():
        return [f"run {place.name}: a link, not a folder of the archive's own"]
    run_file = regular_file_problem(place / RUN_FILE)
    if run_file is not None or not (place / SET).is_dir():
        why = f"{RUN_FILE}: {run_file}" if run_file else f"no {SET}/"
        return [f"run {place.name}: not an archived run ({why})"]
    extra = sorted(p.name for p in place.iterdir() if p.name not in (RUN_FILE, SET))
    problems = [f"run {place.name}: extra: {name}" for name in extra]
    problems += [f"run {place.name}: {p}" for p in _hash_problems(place, entry)]
    if entry is None and (problem := manifest_problem(place)) is not None:
        problems.append(f"run {place.name}: {problem}")
    return problems + [f"run {place.name}: {p}" for p in verify_set(place / SET, tables)]


def _hash_problems(folder: Path, entry: dict | None) -> list[str]:
    """Each file the record entry hashes, changed since (none without an entry)."""
    problems = []
    for name, digest in (entry or {}).get("files", {}).items():
        try:
            actual = file_sha256(folder / name)
        except FileNotFoundError:
            actual = None
        except AuditorError as error:
            problems.append(f"{name}: {error}")
            continue
        if actual != digest:
            problems.append(f"{name}: not as recorded when it was added (SHA-256 differs)")
    return problems


def _hash_files(folder: Path, names: list[str], entry: dict) -> list[str]:
    """Each of `names` (in `folder`) the entry does not hash, and each it hashes changed."""
    problems = [f"extra: {name}" for name in sorted(set(names) - set(entry["files"]))]
    return problems + _hash_problems(folder, entry)


def _period_problems(folder: Path, entries: list[dict]) -> list[str]:
    """Each surveil run's files against the latest entry that wrote it (`FROM_TO/N`, or
    `FROM_TO` for an earlier archive's one surveillance of the period)."""
    latest = {e["name"]: e for e in entries if e.get("kind") == "period"}
    problems = []
    periods = folder / PERIODS
    if periods.is_symlink():
        return [f"{PERIODS}: a link, not the archive's own folder"]
    folders = period_folders(folder)
    if periods.is_dir():
        strays = {p.name for p in periods.iterdir() if not p.name.startswith(".")}
        strays -= {p.name for p in folders}
        problems += [f"{PERIODS}/{name}: not a period the auditor wrote" for name in sorted(strays)]
    runs = period_runs(folder)
    for run in runs:
        entry = latest.get(run.name)
        if entry is None:
            problems.append(f"{PERIODS}/{run.name}: not in the archive's record")
            continue
        names = [p.name for p in run_files(run)]
        problems += [f"{PERIODS}/{run.name}: {p}" for p in _hash_files(run.folder, names, entry)]
    earlier = {run.period for run in runs if run.earlier}
    for place in folders:
        if place.name not in earlier:
            problems += [
                f"{PERIODS}/{place.name}: extra: {p.name}"
                for p in sorted(place.iterdir())
                if not is_run_folder(p)
            ]
    problems += [
        f"{PERIODS}/{name}: missing: the archive's record holds it"
        for name in sorted(latest.keys() - {run.name for run in runs})
    ]
    return problems


def changed_periods(archive: Path) -> list[str]:
    """Each difference between the periods' folders and the archive's record (their files
    by SHA-256, no folder it does not hold, none it holds gone), and every break in the
    record's chain that would let an edited entry vouch for them; none in an archive
    without its record, whose periods were never recorded."""
    folder = open_archive(archive)
    try:
        entries = read_entries(folder)
    except RecordMissing:
        return []
    whole = [e for e in entries if e is not None and isinstance(e.get("files"), dict)]
    return chain_problems(entries, None) + _period_problems(folder, whole)


def refuse_changed_periods(archive: Path) -> None:
    """An `ArchiveError` (exit 2) naming the first differences when a period's files are
    not as surveilled: the catalog's period views read every period's folder, so a
    report would show an edited or planted alert as the auditor's own."""
    problems = changed_periods(archive)
    if problems:
        raise ArchiveError(
            f"{archive}: the periods' surveillance is not as written ({'; '.join(problems[:3])});"
            f" `auditor verify {archive}` lists every difference"
        )


def changed_runs(archive: Path) -> list[str]:
    """A quick look before a query: each run's files there with their manifest's sizes
    (no hashes; `verify_archive` hashes)."""
    folder = open_archive(archive)
    problems = []
    for place in sorted((folder / RUNS).iterdir()):
        if place.name.startswith("."):
            continue
        if place.is_symlink() or (place / SET).is_symlink():
            # The catalog and the query sandbox read runs/ by its paths: a link would lend
            # them files from outside the archive.
            problems.append(f"run {place.name}: a link, not a folder of the archive's own")
            continue
        try:
            manifest = read_manifest(place / SET)
        except AuditorError as error:
            problems.append(f"run {place.name}: {error}")
            continue
        for name, entry in manifest.files.items():
            path = place / SET / name
            if path.is_symlink() or not path.is_file() or path.stat().st_size != entry["bytes"]:
                problems.append(f"run {place.name}: changed or missing: {name}")
        if (problem := manifest_problem(place)) is not None:
            problems.append(f"run {place.name}: {problem}")
    return problems


def manifest_problem(place: Path) -> str | None:
    """Why the run's manifest is not the one the archive added, or None when it is: its
    SHA-256 against the one the archive's record holds for the run, or, in an archive
    made before the record, the one `run.json` recorded."""
    try:
        recorded = _recorded_manifest(place)
        actual = manifest_sha256(place / SET)
    except (OSError, ValueError, AttributeError, AuditorError) as error:
        return f"its {RUN_FILE} or {MANIFEST_FILE} cannot be read ({error})"
    if recorded is None:
        return "the archive records no SHA-256 of the manifest it was added with"
    if recorded != actual:
        return f"changed: {SET}/{MANIFEST_FILE} (not the manifest the run was added with)"
    return None


def _recorded_manifest(place: Path) -> str | None:
    try:
        entry = recorded_runs(place.parent.parent).get(place.name)
    except RecordMissing:
        return json.loads(read_regular_text(place / RUN_FILE)).get(MANIFEST_SHA256)
    files = entry.get("files") if entry else None
    return files.get(f"{SET}/{MANIFEST_FILE}") if isinstance(files, dict) else None
