"""The users file as a running desk sees it: read again whenever it changes, so that a
user removed or given another role (`auditor users`) is logged out at their next request.
A file that can no longer be trusted (made group-writable, replaced by a link) lets
nobody in until it is fixed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from auditor.desk.users import User, UsersError, read_users


class UsersSource:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int, int] | None = None
        self._users: dict[str, User] = {}

    def current(self) -> dict[str, User]:
        try:
            status = os.lstat(self.path)
            stamp = (status.st_ino, status.st_size, status.st_mtime_ns, status.st_mode)
        except OSError:
            return {}
        with self._lock:
            if stamp != self._stamp:
                try:
                    self._users = read_users(self.path)
                except UsersError:
                    self._users = {}
                self._stamp = stamp
            return self._users
