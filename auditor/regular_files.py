"""Reading a file the tool did not just write: a regular file only, and a bounded read.

An archive, an output set or a dataset is a folder anyone may have edited. A FIFO planted
where a file is expected hangs a plain `open()` for ever; a link to `/dev/zero` reads
without end; a link elsewhere reads a file the folder does not hold. So a file of such a
folder is opened without following a link at its last component and without blocking,
checked to be a regular file on the open descriptor (no race between the check and the
read), and read up to a limit that names what it is for.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from auditor.errors import InputError

# A JSON record the tool writes (a manifest, run.json, archive.json) is a few KB; a bound
# well above that, far below what would exhaust memory.
SMALL_FILE_LIMIT = 64 * 1024 * 1024


class NotRegularFile(InputError):
    """A path that should name a regular file names a FIFO, device, folder or link, or a
    file larger than the bound its reader sets."""


def regular_file_problem(path: Path) -> str | None:
    """Why `path` is not a regular file (never following a link at its last component),
    or None when it is one. A missing file is a problem too."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return "a link, not a regular file"
    if not stat.S_ISREG(info.st_mode):
        return f"a {_kind(info.st_mode)}, not a regular file"
    return None


def open_regular(path: Path) -> int:
    """A read-only descriptor of the regular file `path`: refuses a link at its last
    component, a FIFO (opened without blocking, so it cannot hang), a device or a folder."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        handle = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        problem = regular_file_problem(path) or f"cannot be opened ({exc.strerror})"
        raise NotRegularFile(f"{path}: {problem}", path=str(path)) from exc
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(
                f"{path}: a {_kind(info.st_mode)}, not a regular file", path=str(path)
            )
        # Reads of a regular file never block; the flag was for the open only.
        os.set_blocking(handle, True)
    except BaseException:
        os.close(handle)
        raise
    return handle


def read_regular(path: Path, limit: int = SMALL_FILE_LIMIT) -> bytes:
    """The bytes of the regular file `path`, refused past `limit` bytes (FileNotFoundError
    when it is missing, as `Path.read_bytes`)."""
    handle = open_regular(path)
    try:
        size = os.fstat(handle).st_size
        if size > limit:
            raise NotRegularFile(
                f"{path}: {size:,} bytes, more than the {limit:,} this file may hold",
                path=str(path),
            )
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(handle, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise NotRegularFile(
                f"{path}: grew past the {limit:,} bytes this file may hold while read",
                path=str(path),
            )
        return data
    finally:
        os.close(handle)


def read_regular_text(path: Path, limit: int = SMALL_FILE_LIMIT) -> str:
    """`read_regular` decoded as UTF-8 (an undecodable file is an InputError)."""
    data = read_regular(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})", path=str(path)) from exc


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISLNK(mode):
        return "link"
    return "special file"
