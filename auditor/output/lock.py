"""One writer at a time: an exclusive lock beside a folder that a run replaces.

A run claims OUTDIR for its whole length, from the first check to the switch of its
output set; a second run into the same OUTDIR is refused at once with the holder's
process, host, start and command, rather than clearing the first run's staging folder
under it. The lock is the kernel's (`flock`), so a killed holder releases it with its
process; the lock file beside the folder (`.NAME.lock`) names the holder for the refusal
and is removed when the holder ends.

The lock file is opened without following a symlink and must be a regular file: a link
planted there cannot redirect the holder's note to another file. Removing a lock file
while others may open it is safe only with the check that the path still names the file
locked (a second process may have opened the old one just before it went): `acquire`
retries until it holds the lock on the file the path names.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from auditor.errors import InputError


class FolderBusy(InputError):
    """Another process holds the folder; nothing was written or removed (exit 2)."""


def lock_path(folder: Path) -> Path:
    return folder.with_name(f".{folder.name}.lock")


@contextmanager
def holding(folder: Path, what: str = "an audit") -> Iterator[None]:
    """Hold `folder`'s lock for the block; refuse (FolderBusy) when another holds it."""
    path = lock_path(folder)
    handle = _acquire(path, folder, what)
    try:
        _write_holder(handle)
        yield
    finally:
        # Removed while still held: a process that opened it meanwhile sees the path gone
        # or another file there once it gets the lock, and starts again.
        try:
            if _same_file(handle, path):
                path.unlink()
        finally:
            os.close(handle)


@contextmanager
def waiting(folder: Path, what: str, wait: float) -> Iterator[None]:
    """Hold `folder`'s lock, waiting up to `wait` seconds for another holder to end (for
    short holders, such as an archive add); FolderBusy past that."""
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            held = holding(folder, what)
            held.__enter__()
            break
        except FolderBusy:
            if time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
    try:
        yield
    finally:
        held.__exit__(None, None, None)


def _acquire(path: Path, folder: Path, what: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        handle = _open_lock_file(path)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            os.close(handle)
            raise FolderBusy(
                f"{folder}: in use by {what} ({holder}); wait for it to end, or choose "
                "another output folder",
                path=str(folder),
            ) from None
        if _same_file(handle, path):
            return handle
        os.close(handle)  # the holder before us removed it: lock the file there now


def _open_lock_file(path: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        handle = os.open(path, flags, 0o644)
    except OSError as exc:
        raise InputError(
            f"{path}: cannot be used as the output folder's lock file ({exc.strerror}; a "
            "symlink or folder there is refused); remove it",
            path=str(path),
        ) from exc
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise InputError(f"{path}: not a regular file; remove it", path=str(path))
    return handle


def _same_file(handle: int, path: Path) -> bool:
    try:
        there = os.lstat(path)
    except OSError:
        return False
    mine = os.fstat(handle)
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


def _write_holder(handle: int) -> None:
    note = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
    }
    os.ftruncate(handle, 0)
    os.pwrite(handle, (json.dumps(note) + "\n").encode(), 0)


def _read_holder(handle: int) -> str:
    try:
        note = json.loads(os.pread(handle, 65536, 0) or b"{}")
        return f"process {note['pid']} on {note['host']} since {note['since']}: {note['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"
