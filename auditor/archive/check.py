"""`auditor verify ARCHIVE`: every run's set against its manifest (and its catalog against
its Parquet files), nothing else in a run's folder, and the review ledger's chain."""

from __future__ import annotations

import json
from pathlib import Path

from auditor.archive.catalog import RUNS, SET
from auditor.archive.ledger import verify_ledger
from auditor.archive.store import MANIFEST_SHA256, RUN_FILE, open_archive
from auditor.errors import AuditorError
from auditor.output.outdir import MANIFEST_FILE
from auditor.output.verify import manifest_sha256, read_manifest, verify_set
from auditor.regular_files import read_regular_text


def is_archive(folder: Path) -> bool:
    from auditor.archive.store import ARCHIVE_FILE

    return (Path(folder) / ARCHIVE_FILE).is_file()


def verify_archive(archive: Path, tables: bool = True) -> list[str]:
    """Every difference in the archive, one line each, naming the run; empty when intact."""
    folder = open_archive(archive)
    problems = []
    for place in sorted((folder / RUNS).iterdir()):
        if place.name.startswith(".adding-"):
            continue  # an add that was killed: never read, removed by the next add
        if place.is_symlink() or (place / SET).is_symlink():
            problems.append(f"run {place.name}: a link, not a folder of the archive's own")
            continue
        if not (place / RUN_FILE).is_file() or not (place / SET).is_dir():
            problems.append(f"run {place.name}: not an archived run (no {RUN_FILE} or {SET}/)")
            continue
        extra = sorted(p.name for p in place.iterdir() if p.name not in (RUN_FILE, SET))
        problems += [f"run {place.name}: extra: {name}" for name in extra]
        problems += [f"run {place.name}: {p}" for p in verify_set(place / SET, tables)]
        if (problem := manifest_problem(place)) is not None:
            problems.append(f"run {place.name}: {problem}")
    problems += [f"reviews: {p}" for p in verify_ledger(folder)]
    return problems


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
    """Why the run's manifest is not the one the archive added (its SHA-256 against the
    one `run.json` recorded), or None when it is."""
    try:
        recorded = json.loads(read_regular_text(place / RUN_FILE)).get(MANIFEST_SHA256)
        actual = manifest_sha256(place / SET)
    except (OSError, ValueError, AttributeError, AuditorError) as error:
        return f"its {RUN_FILE} or {MANIFEST_FILE} cannot be read ({error})"
    if recorded is None:
        return f"its {RUN_FILE} records no SHA-256 of the manifest it was added with"
    if recorded != actual:
        return f"changed: {SET}/{MANIFEST_FILE} (not the manifest the run was added with)"
    return None
