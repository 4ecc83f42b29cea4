"""The archive's signing key, kept outside the archive: whoever can rewrite the archive's
files cannot re-chain its review ledger or its record without it.

`auditor archive init ARCHIVE` makes a key of 32 random bytes, written (mode 0600, never
over an existing file) to `--key FILE` or to `$AUDITOR_KEY_DIR/<archive id>.key`
(default `~/.config/auditor/keys/`). Commands find it at `$AUDITOR_KEY_FILE` when set,
else at that default place. `archive.json` keeps the key's check value (an HMAC of a fixed
text, which tells a found key from another without revealing it). Each ledger record's
and each record entry's hash is signed: HMAC-SHA256 under the key, hex.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from auditor.errors import InputError
from auditor.regular_files import read_regular

KEY_DIR_ENV = "AUDITOR_KEY_DIR"
KEY_FILE_ENV = "AUDITOR_KEY_FILE"
KEY_BYTES = 32
_CHECK_TEXT = "auditor archive key"


class KeyFileError(InputError):
    """The key file cannot be made or read (exit 2)."""


def default_key_file(archive_id: str) -> Path:
    folder = os.environ.get(KEY_DIR_ENV) or Path.home() / ".config" / "auditor" / "keys"
    return Path(folder) / f"{archive_id}.key"


def key_file(archive_id: str) -> Path:
    explicit = os.environ.get(KEY_FILE_ENV)
    return Path(explicit) if explicit else default_key_file(archive_id)


def inside(path: Path, folder: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(os.path.abspath(folder))


def signature(key: bytes, digest: str) -> str:
    return hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest()


def check_value(key: bytes) -> str:
    return signature(key, _CHECK_TEXT.encode().hex())


def create_key(path: Path) -> bytes:
    """A new key written to `path` (its folder made 0700 when missing), readable by its
    owner alone; an existing file is never overwritten."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_bytes(KEY_BYTES)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        handle = os.open(path, flags, 0o600)
    except FileExistsError:
        raise KeyFileError(
            f"{path}: a key file is already there; it is never overwritten"
        ) from None
    except OSError as exc:
        raise KeyFileError(f"{path}: the key cannot be written ({exc.strerror})") from exc
    try:
        os.fchmod(handle, 0o600)  # whatever the umask
        os.write(handle, key.hex().encode("ascii") + b"\n")
        os.fsync(handle)
    finally:
        os.close(handle)
    return key


def load_key(archive_id: str | None, expected_check: str | None) -> tuple[bytes | None, str]:
    """The archive's key when found and it is the archive's own, with a sentence saying
    where it was looked for and what was found."""
    if archive_id is None or expected_check is None:
        return None, "the archive has no key (made without `auditor archive init`)"
    path = key_file(archive_id)
    try:
        text = read_regular(path, 1024).decode("ascii").strip()
        key = bytes.fromhex(text)
    except FileNotFoundError:
        return None, f"the archive's key was not found at {path}"
    except (InputError, UnicodeDecodeError, ValueError) as exc:
        return None, f"the archive's key at {path} cannot be read ({exc})"
    if not hmac.compare_digest(check_value(key), expected_check):
        return None, f"{path} is not this archive's key"
    return key, f"signed with the archive's key ({path})"


def find_key(archive: Path) -> tuple[bytes | None, bool, str]:
    """The key of the archive at `archive` when found, whether the archive has one at all
    (its marker names a key), and a sentence saying what was found."""
    try:
        marker = json.loads(read_regular(Path(archive) / "archive.json", 1 << 20))
    except (FileNotFoundError, InputError, ValueError):
        marker = {}
    if not isinstance(marker, dict):
        marker = {}
    key, said = load_key(marker.get("id"), marker.get("key_check"))
    return key, marker.get("key_check") is not None, said
