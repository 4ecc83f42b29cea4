"""Is an output set as the audit wrote it? `auditor verify OUTDIR`, and the check that
`query`, `report` and `diff` make before they read a set.

The manifest, written last, names every file of the set with its size and SHA-256, and
what the run read (the dataset and each input file with its size). A set is intact when
every file it names is there, a regular file of that size and hash, and no other file
is. The catalog's tables are then compared with the Parquet files they were loaded from
(`auditor verify` only): a catalog rewritten together with its manifest entry still
shows, for its findings must be those of `findings.parquet`.

The manifest is the set's root of trust: the query sandbox takes the folders it admits
from it, never from the catalog (a table any DuckDB client can edit).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import duckdb

from auditor.errors import AuditorError, InputError
from auditor.input.load import sha256_files
from auditor.output.files import (
    ALERTS_FILE,
    COUNTS_FILE,
    DUCKDB_FILE,
    FINDINGS_FILE,
    MANIFEST_FILE,
    QUARANTINE_FILE,
    SURVEILLANCE_FILE,
)
from auditor.output.macros import admitted_folders, literal_path, sql_literal
from auditor.output.outdir import TOOL

# Each catalog table and the Parquet file of the set it was loaded from.
TABLE_FILES = {
    "findings": FINDINGS_FILE,
    "quarantine": QUARANTINE_FILE,
    "row_counts": COUNTS_FILE,
    "surveillance": SURVEILLANCE_FILE,
    "alerts": ALERTS_FILE,
}


class NotAnOutputSet(InputError):
    """The folder holds no readable manifest of this tool: nothing to verify against."""


class ChangedSet(AuditorError):
    """The set is not as its manifest says; a reader refuses it (exit 2)."""


@dataclass(frozen=True)
class Manifest:
    folder: Path
    files: dict[str, dict]  # name in the set -> {"bytes": n, "sha256": hex}
    dataset: str | None  # a local path or a URL, as the run named it
    inputs: tuple[tuple[str, int], ...]  # (path or URL, bytes) of every input file


def read_manifest(folder: Path) -> Manifest:
    """The set's manifest, checked to be this tool's and to name files inside the set."""
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise NotAnOutputSet(
            f"{folder}: no {MANIFEST_FILE}: not an audit's output set (or not a complete "
            "one); `auditor audit DATASET --out OUTDIR` writes one",
            path=str(folder),
        ) from None
    except (OSError, ValueError) as exc:
        raise NotAnOutputSet(f"{path}: unreadable manifest ({exc})", path=str(path)) from exc
    if not isinstance(data, dict) or data.get("tool") != TOOL:
        raise NotAnOutputSet(f"{path}: not a manifest written by {TOOL}", path=str(path))
    files = data.get("files")
    if not isinstance(files, dict) or not all(
        _inside_set(name) and _sized(entry) for name, entry in files.items()
    ):
        raise NotAnOutputSet(
            f"{path}: its file list is malformed or names a file outside the set",
            path=str(path),
        )
    recorded = data.get("inputs") or ()
    if not isinstance(recorded, list) or not all(_sized(entry) for entry in recorded):
        raise NotAnOutputSet(f"{path}: its list of input files is malformed", path=str(path))
    inputs = tuple((str(entry["path"]), entry["bytes"]) for entry in recorded if "path" in entry)
    dataset = data.get("dataset")
    return Manifest(folder, files, str(dataset) if dataset else None, inputs)


def _sized(entry: object) -> bool:
    """An entry whose `bytes` is a count of bytes: a whole number, not text or a flag."""
    if not isinstance(entry, dict):
        return False
    size = entry.get("bytes")
    return isinstance(size, int) and not isinstance(size, bool) and size >= 0


def _inside_set(name: object) -> bool:
    if not isinstance(name, str) or not name or name == MANIFEST_FILE:
        return False
    parts = PurePosixPath(name).parts
    return not PurePosixPath(name).is_absolute() and ".." not in parts and "." not in parts


def file_problems(manifest: Manifest) -> list[str]:
    """Every file of the set that is missing, changed or extra, one line each."""
    problems = []
    present = []
    for name, entry in sorted(manifest.files.items()):
        path = manifest.folder / name
        try:
            status = path.lstat()
        except OSError:
            problems.append(f"missing: {name}")
            continue
        if not stat.S_ISREG(status.st_mode):
            problems.append(f"changed: {name} (no longer a regular file)")
        elif status.st_size != entry.get("bytes"):
            problems.append(
                f"changed: {name} ({status.st_size:,} bytes; the manifest says "
                f"{entry.get('bytes'):,})"
            )
        else:
            present.append((name, path, entry))
    digests = sha256_files([path for _, path, _ in present])
    for (name, _, entry), digest in zip(present, digests, strict=True):
        if digest != entry.get("sha256"):
            problems.append(f"changed: {name} (its SHA-256 differs from the manifest's)")
    problems += [f"extra: {name}" for name in _extra_files(manifest)]
    return problems


def _extra_files(manifest: Manifest) -> list[str]:
    """Files and links in the folder that the manifest does not name (links are not
    followed: a link to elsewhere is itself an extra entry)."""
    named = {*manifest.files, MANIFEST_FILE}
    extra = []
    for top, folders, files in os.walk(manifest.folder, followlinks=False):
        base = Path(top).relative_to(manifest.folder)
        links = [f for f in folders if (Path(top) / f).is_symlink()]
        for entry in (*files, *links):
            name = (base / entry).as_posix()
            if name not in named:
                extra.append(name)
    return sorted(extra)


def table_problems(manifest: Manifest) -> list[str]:
    """Every catalog table that differs from the Parquet file it was loaded from."""
    folder = manifest.folder.resolve()
    try:
        con = duckdb.connect(str(folder / DUCKDB_FILE), read_only=True, config=_SAFE)
    except duckdb.Error as exc:
        return [f"changed: {DUCKDB_FILE} (cannot be opened: {exc})"]
    try:
        con.execute("SET allowed_directories = $dirs", {"dirs": admitted_folders(str(folder))})
        con.execute("SET enable_external_access = false")
        return [
            p for table, file in TABLE_FILES.items() if (p := _differs(con, table, folder / file))
        ]
    finally:
        con.close()


_SAFE = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}


def _differs(con: duckdb.DuckDBPyConnection, table: str, file: Path) -> str | None:
    # `table` is one of this module's own names; the file's path is quoted by DuckDB.
    source = f"read_parquet({sql_literal(literal_path(str(file)))})"
    try:
        row = con.execute(
            f"SELECT (SELECT count(*) FROM {table}), (SELECT count(*) FROM {source}), "
            f"(SELECT count(*) FROM (FROM {table} EXCEPT ALL FROM {source})), "
            f"(SELECT count(*) FROM (FROM {source} EXCEPT ALL FROM {table}))"
        ).fetchone()
    except duckdb.Error as exc:
        return f"catalog: table {table} cannot be compared with {file.name} ({exc})"
    assert row is not None
    in_table, in_file, only_table, only_file = row
    if only_table or only_file:
        return (
            f"catalog: table {table} differs from {file.name} ({in_table:,} rows against "
            f"{in_file:,}; {only_table:,} rows only in the catalog, {only_file:,} only in "
            "the file)"
        )
    return None


def verify_set(folder: Path, tables: bool = True) -> list[str]:
    """Every difference between the set in `folder` and its manifest (and, with `tables`,
    between the catalog's tables and their Parquet files); empty when intact."""
    manifest = read_manifest(folder)
    problems = file_problems(manifest)
    if tables and not any(DUCKDB_FILE in p for p in problems):
        problems += table_problems(manifest)
    return problems


def verified(folder: Path) -> Manifest:
    """The set's manifest, once every file of it is as the manifest says; a changed set
    is refused, so that no reader renders or answers from it."""
    manifest = read_manifest(folder)
    problems = file_problems(manifest)
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; ... and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise ChangedSet(
            f"{folder}: the output set is not as the audit wrote it ({shown}); "
            f"`auditor verify {folder}` lists every difference; re-run the audit"
        )
    return manifest
