"""Is an output set as the audit wrote it? `auditor verify OUTDIR`, and the check that
`query`, `report` and `diff` make before they read a set.

The manifest, written last, names every file of the set with its size and SHA-256, and
what the run read (the dataset and each input file with its size). A set is intact when
every file it names is there, a regular file of that size and hash, and no other file
is. The catalog's tables are then compared with the Parquet files they were loaded from
(`auditor verify` only): a catalog rewritten together with its manifest entry still
shows, for its findings must be those of `findings.parquet`.

The manifest is the set's root of trust: the query sandbox takes the folders it admits
from it, never from the catalog (a table any DuckDB client can edit). The manifest is
not hashed by itself, so its inputs must also equal those the catalog (which it hashes)
records: an edited list of inputs is a changed set, and admits nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections import Counter
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
from auditor.output.macros import sql_literal
from auditor.output.outdir import TOOL
from auditor.output.sandbox import sandboxed
from auditor.regular_files import read_regular

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
    if not isinstance(files, dict) or not all(_inside_set(name) for name in files):
        raise NotAnOutputSet(
            f"{path}: its file list is malformed or names a file outside the set",
            path=str(path),
        )
    inputs = tuple(
        (str(entry["path"]), int(entry["bytes"]))
        for entry in data.get("inputs") or ()
        if isinstance(entry, dict) and "path" in entry and "bytes" in entry
    )
    dataset = data.get("dataset")
    return Manifest(folder, files, str(dataset) if dataset else None, inputs)


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
        with sandboxed(folder / DUCKDB_FILE, [folder]) as con:
            return [
                p
                for table, file in TABLE_FILES.items()
                if (p := _differs(con, table, folder / file))
            ]
    except duckdb.Error as exc:
        return [f"changed: {DUCKDB_FILE} (cannot be opened: {exc})"]


def input_problems(manifest: Manifest) -> list[str]:
    """Every input file the manifest names that the catalog's record of the run
    (`input_files`: path and size) does not, and the reverse. The manifest is not hashed
    by itself: without this, a manifest edited to name `/etc/passwd` would read as
    intact and lend its folder to the query sandbox."""
    catalog = manifest.folder.resolve() / DUCKDB_FILE
    try:
        recorded = _recorded_inputs(catalog)
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        return [
            f"changed: {MANIFEST_FILE} (its inputs cannot be checked against {catalog}: {first})"
        ]
    if recorded is None:
        return [
            f"changed: {MANIFEST_FILE} (its inputs cannot be checked against {catalog}: the "
            "catalog lacks runs.inputs; written by another version, or edited)"
        ]
    named = Counter(manifest.inputs)
    problems = [
        f"changed: {MANIFEST_FILE} names an input the catalog does not record: {path} "
        f"({size:,} bytes)"
        for path, size in sorted((named - recorded).elements())
    ]
    problems += [
        f"changed: {MANIFEST_FILE} leaves out an input the catalog records: {path} ({size:,} bytes)"
        for path, size in sorted((recorded - named).elements())
    ]
    return problems


def _recorded_inputs(catalog: Path) -> Counter[tuple[str, int]] | None:
    """The input files the catalog's `runs` records, in the sandbox reaching nothing: a
    catalog's `runs` may be a view that reads files. None recorded without `runs` (a set
    written by a library caller with frames only); None returned when `runs` lacks its
    `inputs`."""
    with sandboxed(catalog) as con:
        columns = {
            name
            for (name,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = 'runs'"
            ).fetchall()
        }
        if not columns:
            return Counter()
        if "inputs" not in columns:
            return None
        rows = con.execute(
            "SELECT i.path, i.bytes FROM (SELECT unnest(inputs) AS i FROM runs)"
        ).fetchall()
    return Counter((str(path), int(size)) for path, size in rows)


def _differs(con: duckdb.DuckDBPyConnection, table: str, file: Path) -> str | None:
    # `table` is one of this module's own names; the file's path is quoted by DuckDB.
    source = f"read_parquet({sql_literal(str(file))})"
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
    problems = set_problems(manifest)
    if tables and not any(DUCKDB_FILE in p for p in problems):
        problems += table_problems(manifest)
    return problems


def manifest_sha256(folder: Path) -> str:
    """The SHA-256 of the set's manifest as it is now: an archive records it when it adds
    the set, so that a manifest edited later (its inputs, its hashes) shows."""
    return hashlib.sha256(read_regular(Path(folder) / MANIFEST_FILE)).hexdigest()


def set_problems(manifest: Manifest) -> list[str]:
    """The set's files against its manifest, then (its catalog intact) the manifest's
    inputs against the catalog's record of them."""
    problems = file_problems(manifest)
    if not any(DUCKDB_FILE in p for p in problems):
        problems += input_problems(manifest)
    return problems


def verified(folder: Path) -> Manifest:
    """The set's manifest, once every file of it is as the manifest says; a changed set
    is refused, so that no reader renders or answers from it."""
    manifest = read_manifest(folder)
    problems = set_problems(manifest)
    if problems:
        shown = "; ".join(problems[:5]) + (
            f"; ... and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise ChangedSet(
            f"{folder}: the output set is not as the audit wrote it ({shown}); "
            f"`auditor verify {folder}` lists every difference; re-run the audit"
        )
    return manifest
