"""Working folders a killed run leaves behind, and how the next run tells them from a live
run's.

A run's working folder (`auditor-survey-*` in the temporary folder, `.surveil-*` in an
archive's `periods/`) holds a claim: a file inside it that the run keeps locked with the
kernel's `flock` for as long as it uses the folder. The kernel releases the lock when the
process ends, however it ends (SIGKILL included), so a folder whose claim can be locked
by another process belongs to no live run: the next run that makes such folders removes
it. A folder whose claim is locked is left alone, however old. The claim is locked
before it is given its name (`.claim.new`, locked, renamed to `.claim`), so a claim
under its name is always one that was locked; a folder without one is a run's in the
instant between making the folder and claiming it, or one killed in that instant, and
is removed only once it is older than `UNCLAIMED_SECONDS`. Only the user's own folders,
never links, are swept.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CLAIM_FILE = ".claim"
UNCLAIMED_SECONDS = 3600.0


@contextmanager
def claimed_folder(parent: Path, prefix: str) -> Iterator[Path]:
    """A new private folder in `parent`, claimed by this process for the block and
    removed after it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        handle = _claim(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield folder
    finally:
        # Removed while still claimed: no sweeper can take it for a dead run's meanwhile.
        shutil.rmtree(folder, ignore_errors=True)
        os.close(handle)


def _claim(folder: Path) -> int:
    staged = folder / f"{CLAIM_FILE}.new"
    handle = os.open(staged, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        os.write(handle, f"{os.getpid()}\n".encode())
        os.rename(staged, folder / CLAIM_FILE)
    except BaseException:
        os.close(handle)
        raise
    return handle


def sweep(parent: Path, prefix: str) -> list[Path]:
    """Remove the folders named `prefix*` in `parent` that no live run claims; the
    folders removed."""
    try:
        entries = [entry for entry in Path(parent).iterdir() if entry.name.startswith(prefix)]
    except OSError:
        return []
    removed = []
    for folder in entries:
        if _abandoned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _abandoned(folder: Path) -> bool:
    try:
        status = folder.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
        return False
    try:
        handle = os.open(folder / CLAIM_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return time.time() - status.st_mtime > UNCLAIMED_SECONDS
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # its run is alive
    finally:
        with contextlib.suppress(OSError):
            os.close(handle)
    return True
