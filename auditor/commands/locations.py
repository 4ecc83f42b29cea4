"""Datasets and output folders on any fsspec file system (s3://, gs://, az://, memory://...).

A dataset elsewhere is copied to a temporary local folder first (`input.remote`); an
OUTDIR elsewhere (never an archive's file system, zip:// or tar://) is written to a
temporary local folder, since the audit switches its output set into a local folder at
once, and its files are uploaded when the run has written them all, the manifest last, so
that a reader who finds the manifest finds the whole set. A path, or a URL of local disk
(`file://`, `local://`, either behind fsspec's caches), is used in place, through the
same checks as a path.

The catalog records the dataset by its URL (`runs.dataset`, `runs.inputs.path`) and its
views name the files by URL: DuckDB reads s3://, gs://, az:// and http(s):// itself (its
httpfs extension, with the reader's credentials); `auditor query`, sandboxed to local
folders, leaves a remote dataset's views unread and checks its inputs by URL only.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auditor.input.remote import copy_dataset, file_system, is_remote, local_path
from auditor.output.files import MANIFEST_FILE
from auditor.output.outdir import OutdirError, foreign_files, is_manifest


@contextmanager
def dataset_folder(location: str | Path) -> Iterator[Path]:
    """The dataset's local folder: `location` itself, or a local copy of its Parquet
    files (removed afterwards) when it is on another file system."""
    if not is_remote(location):
        yield local_path(location)
        return
    with tempfile.TemporaryDirectory(prefix="auditor-dataset-") as temporary:
        folder = Path(temporary) / "dataset"
        copy_dataset(str(location), folder)
        yield folder


@contextmanager
def output_folder(location: str | Path) -> Iterator[Path]:
    """A local folder to write the output set into: `location` itself, or a temporary
    folder whose files are uploaded to `location` once the block ends without error.

    A remote OUTDIR is checked first, as a local one is (`outdir.prepare`): missing,
    empty, or a previous run's output set (which the upload replaces)."""
    if not is_remote(location):
        yield local_path(location)
        return
    from fsspec.archive import AbstractArchiveFileSystem

    fs, root = file_system(str(location))
    if isinstance(fs, AbstractArchiveFileSystem):
        raise OutdirError(
            f"{location}: an archive's file system (zip://, tar://) is read-only here; "
            "choose a folder"
        )
    previous = _previous_set(fs, root, str(location))
    with tempfile.TemporaryDirectory(prefix="auditor-out-") as temporary:
        folder = Path(temporary) / "out"
        yield folder
        if previous:
            fs.rm(root, recursive=True)
        written = sorted(p for p in folder.rglob("*") if p.is_file())
        # The manifest last: its presence says the set is complete.
        for path in sorted(written, key=lambda p: p.name == MANIFEST_FILE):
            target = f"{root.rstrip('/')}/{path.relative_to(folder).as_posix()}"
            fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            fs.put_file(str(path), target)


def _previous_set(fs: Any, root: str, location: str) -> bool:
    """Whether `root` holds a previous output set; refuses a folder of other files."""
    if not fs.exists(root):
        return False
    if not fs.isdir(root):
        raise OutdirError(f"{location}: not a folder")
    if not fs.ls(root, detail=False):
        return False
    try:
        with fs.open(f"{root.rstrip('/')}/{MANIFEST_FILE}", "rb") as handle:
            manifest = handle.read()
    except OSError:
        manifest = b""
    if not is_manifest(manifest):
        raise foreign_files(location)
    return True
