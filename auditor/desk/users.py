"""The review desk's users file: who may log in, with which role, and their Argon2 hash.

One JSON document, `{"users": {NAME: {"role": ROLE, "hash": ARGON2}}}`, written whole to a
new file beside it and switched in, mode 0600. The hash is Argon2id in its encoded form,
which carries its own cost (memory, time, lanes), so a file written with other costs
still verifies; new hashes use argon2-cffi's defaults (RFC 9106's low-memory choice).

The file decides who may record a review in the archive's ledger: it is refused when it
is a link, not a regular file, or writable by its group or by everyone, as ssh refuses
a key anyone could have swapped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from auditor.errors import InputError

ROLES = ("reviewer", "regulator", "admin")
# A name is what the ledger's `by` will say: printable, no control or layout characters.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._@'-]{0,63}")
MIN_PASSWORD = 8
USERS_FILE_LIMIT = 1024 * 1024
# Verified against when the name is unknown, so that a wrong name costs as long as a wrong
# password and the answer's time does not tell which names exist.
_HASHER = PasswordHasher()


class UsersError(InputError):
    """The users file or a change to it cannot be used (exit 2)."""


@dataclass(frozen=True)
class User:
    name: str
    role: str
    hash: str


def _decoy() -> str:
    return _HASHER.hash("not a password anyone has")


_DECOY: list[str] = []


def hasher() -> PasswordHasher:
    return _HASHER


def check_name(name: str) -> str:
    if not isinstance(name, str) or NAME.fullmatch(name) is None:
        raise UsersError(
            f"{name!r}: a user's name is 1 to 64 letters, digits, spaces or . _ @ ' - "
            "(it becomes the reviewer's name in the ledger), starting with a letter or digit"
        )
    return name


def check_role(role: str) -> str:
    if role not in ROLES:
        raise UsersError(f"{role!r}: a role is one of {', '.join(ROLES)}")
    return role


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise UsersError(f"a password has at least {MIN_PASSWORD} characters")
    return password


def file_problem(path: Path) -> str | None:
    """Why the users file at `path` cannot be trusted, or None; a missing file is none."""
    try:
        status = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(status.st_mode):
        return "is a link; give the file itself"
    if not stat.S_ISREG(status.st_mode):
        return "is not a regular file"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (
            "may be written by its group or by everyone (anyone could add an admin); "
            f"chmod 600 {path}"
        )
    if status.st_size > USERS_FILE_LIMIT:
        return f"{status.st_size:,} bytes, more than a users file holds"
    return None


def read_users(path: Path, *, must_exist: bool = True) -> dict[str, User]:
    path = Path(path)
    problem = file_problem(path)
    if problem is not None:
        raise UsersError(f"{path}: {problem}; not read")
    if not path.exists():
        if must_exist:
            raise UsersError(
                f"{path}: no users file; `auditor users add {path} NAME --role reviewer` makes one"
            )
        return {}
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        handle = os.open(path, flags)
        with os.fdopen(handle, "rb") as opened:
            raw = opened.read(USERS_FILE_LIMIT + 1)
        data = json.loads(raw.decode("utf-8"))
        users = {
            name: User(check_name(name), check_role(entry["role"]), str(entry["hash"]))
            for name, entry in data["users"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsersError(f"{path}: not a users file ({exc})") from exc
    return users


def write_users(path: Path, users: dict[str, User]) -> None:
    """Write `users` to a new file beside `path` (0600 from its creation) and switch it in."""
    path = Path(path)
    problem = file_problem(path)
    if problem is not None:
        raise UsersError(f"{path}: {problem}; not changed")
    if not path.parent.is_dir():
        raise UsersError(f"{path}: no folder {path.parent}")
    document = {
        "users": {
            u.name: {"role": u.role, "hash": u.hash} for u in sorted(users.values(), key=_key)
        }
    }
    staged = path.with_name(f".{path.name}.new")
    staged.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        handle = os.open(staged, flags, 0o600)
        with os.fdopen(handle, "wb") as opened:
            opened.write((json.dumps(document, indent=1) + "\n").encode("utf-8"))
            opened.flush()
            os.fsync(opened.fileno())
        os.chmod(staged, 0o600)  # whatever the umask left
        os.replace(staged, path)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise UsersError(f"{path}: cannot be written ({exc.strerror})") from exc


def _key(user: User) -> str:
    return user.name


def add_user(path: Path, name: str, role: str, password: str) -> User:
    users = read_users(path, must_exist=False)
    check_name(name)
    check_role(role)
    if name in users:
        raise UsersError(
            f"{name!r} is already a user of {path}; `auditor users passwd` changes a password"
        )
    user = User(name, role, hasher().hash(check_password(password)))
    write_users(path, {**users, name: user})
    return user


def remove_user(path: Path, name: str) -> None:
    users = read_users(path)
    if name not in users:
        raise UsersError(f"{name!r} is no user of {path}")
    write_users(path, {n: u for n, u in users.items() if n != name})


def change_password(path: Path, name: str, password: str) -> None:
    users = read_users(path)
    if name not in users:
        raise UsersError(f"{name!r} is no user of {path}")
    user = users[name]
    fresh = User(user.name, user.role, hasher().hash(check_password(password)))
    write_users(path, {**users, name: fresh})


def authenticate(users: dict[str, User], name: str, password: str) -> User | None:
    """The user when `password` is theirs; None otherwise, after as long a check."""
    user = users.get(name)
    if user is None:
        if not _DECOY:
            _DECOY.append(_decoy())
        with contextlib.suppress(VerificationError, InvalidHashError):
            hasher().verify(_DECOY[0], password)
        return None
    try:
        hasher().verify(user.hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    return user
