"""Datasets and output folders on any fsspec file system (s3://, gs://, az://, memory://...).

The audit reads its input by local path (validation's batches, the partitions' reads by
`table_id` range, the catalog's views) and switches its output set into a local folder at
once. A dataset elsewhere is therefore copied, file by file, into a temporary local folder
first (local disk, not memory); an OUTDIR elsewhere is written to a temporary local folder
and its files uploaded when the run has written them all, the manifest last, so that a
reader who finds the manifest finds the whole set. A path or `file://` URL is used in
place, as before.

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

from auditor.engines.task import local_path
from auditor.errors import InputError
from auditor.output.files import MANIFEST_FILE
from auditor.output.outdir import OutdirError, foreign_files, is_manifest


def is_remote(location: str | Path) -> bool:
    """Whether `location` names a file system other than this machine's."""
    text = str(location)
    return "://" in text and not text.startswith("file://")


@contextmanager
def dataset_folder(location: str | Path) -> Iterator[Path]:
    """The dataset's local folder: `location` itself, or a local copy of its Parquet
    files (removed afterwards) when it is on another file system."""
    if not is_remote(location):
        yield local_path(location)
        return
    fs, root = _file_system(str(location))
    files = sorted(p for p in fs.find(root) if p.endswith(".parquet"))
    if not files:
        raise InputError(f"{location}: no Parquet files found there", path=str(location))
    with tempfile.TemporaryDirectory(prefix="auditor-dataset-") as temporary:
        folder = Path(temporary) / "dataset"
        for remote in files:
            target = folder / _relative(remote, root)
            target.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(remote, str(target))
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
    fs, root = _file_system(str(location))
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


def _file_system(location: str) -> tuple[Any, str]:
    try:
        from fsspec.core import url_to_fs

        return url_to_fs(location)
    except (ImportError, ValueError) as exc:
        raise InputError(f"{location}: not a location the auditor can open ({exc})") from exc


def _relative(path: str, root: str) -> str:
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path.rsplit("/", 1)[-1]
