"""Datasets on any fsspec file system (s3://, gs://, az://, ftp://, memory://...), read by
the audit from a copy on local disk.

The audit reads its input by local path (validation's batches, the partitions' reads by
`table_id` range, the catalog's views), so a dataset elsewhere is copied, file by file, into
a local folder first: on the machine that validates it (`copy_dataset`), and, when the
partitions are audited on a Dask cluster's machines, once on each of them
(`worker_copy`). A copy is checked against the one validation read by its content
(`content_digest`): a worker must not audit bytes that were never validated, and the
file names, row counts and schemas `engines.task.fingerprint` compares would not show a
file rewritten in place.

A path or `file://` URL is read in place.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from auditor.contract import TABLES
from auditor.errors import InputError
from auditor.input.load import sha256_files

# A worker machine's copies, one folder per run (`worker_copy`), under its temporary folder.
WORKER_COPIES = "auditor-datasets"


def is_remote(location: str | Path) -> bool:
    """Whether `location` names a file system other than this machine's."""
    return local_disk_path(location) is None


def local_disk_path(location: str | Path) -> Path | None:
    """The local path a path or URL names when it is this machine's disk, else None.

    Every spelling of local disk is one: a path, `file://`, `local://`, and either behind
    fsspec's caches (`simplecache::`, `filecache::`, `blockcache::`) or `dir::`. Each must
    reach the same checks as the path itself (the overlap with the dataset, a folder of
    other files): a URL let past them as "remote" had its folder replaced wholesale.
    An archive's file system (`zip://`, `tar://`) is not local disk, even over a local
    file: its entries are copied out (`copy_dataset`).
    """
    text = str(location)
    if "://" not in text and "::" not in text:
        return Path(text)
    if text.startswith("file://"):
        # Percent-decoded (RFC 8089: `Path.as_uri()` writes a space as %20), which fsspec
        # leaves as it is.
        return Path(url2pathname(urlparse(text).path))
    chain = _protocol_chain(text)
    if chain is None or not _is_local_chain([protocol for _, protocol in chain]):
        return None
    if "dir" in (protocol for _, protocol in chain):
        return _dir_file_system_path(text)
    return Path(chain[-1][0])


def _protocol_chain(text: str) -> list[tuple[str, str]] | None:
    """Each link of an fsspec URL chain as (path, protocol), the wrapped file system last;
    None for a URL fsspec cannot parse."""
    from fsspec.core import _un_chain

    try:
        return [(path, protocol) for path, protocol, _ in _un_chain(text, {})]
    except (ValueError, TypeError, ImportError):
        # Unknown, or its library missing: a file system elsewhere, refused when opened.
        return None


def _is_local_chain(protocols: list[str]) -> bool:
    """Whether a chain of file systems ends on local disk through wrappers that only
    cache or re-root it (which write through to the same files)."""
    from fsspec import get_filesystem_class
    from fsspec.implementations.cached import CachingFileSystem
    from fsspec.implementations.dirfs import DirFileSystem
    from fsspec.implementations.local import LocalFileSystem

    try:
        classes = [get_filesystem_class(protocol) for protocol in protocols]
    except (ValueError, ImportError):
        return False
    wrappers_only = all(issubclass(c, CachingFileSystem | DirFileSystem) for c in classes[:-1])
    return wrappers_only and issubclass(classes[-1], LocalFileSystem)


def _dir_file_system_path(text: str) -> Path:
    """The local path behind `dir::`, which joins its own root to the path it is given."""
    from fsspec.implementations.dirfs import DirFileSystem

    fs, path = file_system(text)
    while not _is_plain_local(fs):
        if isinstance(fs, DirFileSystem):
            path = fs._join(path)
        fs = fs.fs
    return Path(path)


def _is_plain_local(fs: Any) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def local_path(location: str | Path) -> Path:
    """The dataset's folder from a path or a URL of local disk (`local_disk_path`: any
    mounted file system, shared with the workers when they run elsewhere).

    Other fsspec file systems (s3://, gs://, memory://, zip://, ...) are refused: the
    audit reads by local path, from a copy (`copy_dataset`, `worker_copy`).
    """
    path = local_disk_path(location)
    if path is None:
        raise InputError(
            f"{location}: the auditor reads datasets from a local or mounted file system only "
            "(a path or file:// URL); copy or mount the dataset first",
            path=str(location),
        )
    return path


def file_system(location: str) -> tuple[Any, str]:
    """fsspec's file system for `location`, and the path on it."""
    try:
        from fsspec.core import url_to_fs

        return url_to_fs(location)
    except (ImportError, ValueError, OSError) as exc:  # OSError: an archive's missing file
        raise InputError(f"{location}: not a location the auditor can open ({exc})") from exc


def copy_dataset(location: str, folder: Path) -> None:
    """Copy the tables' files under `location` into `folder`, keeping their relative
    paths: each `NAME.parquet` and everything in a table's folder `NAME/`, Parquet or
    not, so that the copy is judged as the dataset would be in place (a stray file in a
    table's folder is refused there, not left behind here).

    Every entry is checked before the first is copied: one whose name leaves `folder`
    (`..`, an absolute name) or that is a link (an archive's symlink or hard link) is
    refused, so that an archive cannot write outside the copy (zip-slip)."""
    fs, root = file_system(location)
    try:
        listed = fs.find(root, detail=True)
    except OSError as exc:
        raise InputError(f"{location}: cannot list the dataset ({exc})", path=location) from exc
    files = sorted(
        (remote, info)
        for remote, info in listed.items()
        if _belongs_to_a_table(_relative(remote, root))
    )
    if not files:
        raise InputError(f"{location}: no Parquet files found there", path=location)
    targets = [
        (remote, _copy_target(folder, remote, root, info, location)) for remote, info in files
    ]
    for remote, target in targets:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(remote, str(target))
        except OSError as exc:
            raise InputError(f"{remote}: cannot copy it ({exc})", path=location) from exc


def _copy_target(folder: Path, remote: str, root: str, info: dict, location: str) -> Path:
    """Where the entry `remote` is copied to: inside `folder`, or refused."""
    relative = _relative(remote, root)
    if _is_link(info):
        raise InputError(
            f"{location}: the entry {remote} is a link; a dataset's files must be files",
            path=location,
        )
    parts = relative.replace("\\", "/").split("/")
    if relative.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise InputError(
            f"{location}: the entry {remote} names a place outside the dataset's folder",
            path=location,
        )
    return folder.joinpath(*parts)


def _is_link(info: dict) -> bool:
    """An entry that stands for another file: a tar member's symlink or hard link (its
    `linkname`), a zip entry whose Unix mode says symlink, or any type but a file."""
    zip_mode = info.get("external_attr", 0) >> 16
    return (
        bool(info.get("linkname"))
        or info.get("islink") is True
        or stat.S_ISLNK(zip_mode)
        or info.get("type") not in ("file", None)
    )


def content_digest(folder: Path) -> str:
    """SHA-256 of the Parquet files under `folder`: each one's relative path and bytes."""
    paths = sorted(folder.rglob("*.parquet"))
    digest = hashlib.sha256()
    for path, file_digest in zip(paths, sha256_files(paths), strict=True):
        digest.update(f"{path.relative_to(folder).as_posix()}\x1f{file_digest}\x1e".encode())
    return digest.hexdigest()


def worker_copy(location: str, digest: str, run: str) -> Path:
    """This machine's copy of the dataset at `location` for the run `run`, made by the
    first task that needs it and read by the run's later tasks on this machine (the
    worker processes of a machine share it). The copy must have the `digest` of the one
    the client validated: otherwise the dataset changed since, and it is refused.

    Two workers may copy at once: each copies into a folder of its own and renames it into
    place, and the one that finds the place taken removes its copy and reads the other.
    `remove_worker_copies` removes the run's folder when the run ends.
    """
    run_folder = Path(tempfile.gettempdir()) / WORKER_COPIES / run
    copy = run_folder / "dataset"
    if copy.is_dir():
        return copy
    run_folder.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=run_folder))
    try:
        copy_dataset(location, partial)
        if content_digest(partial) != digest:
            raise InputError(
                f"{location}: the dataset's files differ from those validated (changed since "
                "validation); run the audit again",
                path=location,
            )
        os.rename(partial, copy)
    except OSError:
        # Another worker of this machine renamed its copy into place first.
        if not copy.is_dir():
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return copy


def remove_worker_copies(run: str) -> None:
    """Remove this machine's copies for the run `run`, if any."""
    shutil.rmtree(Path(tempfile.gettempdir()) / WORKER_COPIES / run, ignore_errors=True)


def _belongs_to_a_table(relative: str) -> bool:
    first, _, rest = relative.partition("/")
    if rest:
        return first in TABLES
    return first.endswith(".parquet") and first.removesuffix(".parquet") in TABLES


def _relative(path: str, root: str) -> str:
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path.rsplit("/", 1)[-1]
