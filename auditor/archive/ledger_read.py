"""The review ledger is checked on every read: a command that reads an archive (`query`,
`report`, `surveil`, `archive list`) refuses a ledger whose chain is broken, with exit 2
naming the first bad record, as it refuses a changed run set. `auditor verify` checks more
(each record's finding in the runs, the heads anchored in the archive's record); this is
the part that costs little enough to run before every read.

What a read checks, from the first record or from the checkpoint on: each line a record
as the ledger writes it, its hash its content's, its seq one more than the one before and
its `prev` that one's hash; its status one `review` takes, `by` not empty, `at` a time
with its zone (the catalog's `reviews` view reads it as one); with the archive's key,
its signature.

The checkpoint (`ARCHIVE/.reviews.jsonl.verified`) lets a read skip the prefix it already
checked: the prefix's length and SHA-256, and its last record's seq and hash, signed with
the archive's key when there is one. A read hashes the prefix (tens of milliseconds for
100,000 records) instead of parsing it (seconds); a prefix changed since, or a checkpoint
edited, is read again from the first record. Without the key a checkpoint can be forged
with the ledger, as the chain can be re-chained: the heads anchored in the archive's
record, and `verify`, are what catch that.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from auditor.archive.keys import find_key, signature
from auditor.archive.ledger import LedgerError, ledger_bytes, ledger_path
from auditor.archive.ledger_format import GENESIS, STATUSES, checked_line, is_time
from auditor.errors import AuditorError
from auditor.regular_files import read_regular

CHECKPOINT_FILE = ".reviews.jsonl.verified"


def check_for_reading(archive: Path) -> None:
    """Refuse (LedgerError, exit 2) a ledger whose chain is broken, naming the first bad
    record; move the checkpoint to the end of what was checked."""
    archive = Path(archive)
    ledger = ledger_path(archive)
    data = ledger_bytes(ledger)
    if not data:
        return
    key, keyed, _ = find_key(archive)
    start, seq, prev = _checkpoint(archive, data, key)
    end = data.rfind(b"\n") + 1  # a torn last line is no record yet: the next append cuts it
    number = data.count(b"\n", 0, start) + 1
    for raw in data[start:end].split(b"\n")[:-1]:
        problem, seq, prev = _problem(number, raw, seq, prev, key, keyed)
        if problem is not None:
            raise LedgerError(
                f"{ledger}: {problem}; nothing was read from the archive. `auditor verify "
                f"{archive}` lists every difference"
            )
        number += 1
    if end > start:
        _write_checkpoint(archive, data[:end], seq, prev, key)


def _problem(
    number: int, raw: bytes, seq: int, prev: str, key: bytes | None, keyed: bool
) -> tuple[str | None, int, str]:
    """Why line `number` does not follow the record (`seq`, `prev`) before it, or None,
    with the seq and hash the next line must follow."""
    line = checked_line(number, raw)
    where = f"line {number} (seq {seq + 1} expected)"
    if line.record is None:
        return f"{where}: {line.problem}", seq, prev
    record = line.record
    reasons = []
    if not line.hash_ok:
        reasons.append("edited: its content does not match its hash")
    if record["seq"] != seq + 1 or record["prev"] != prev:
        reasons.append("does not follow the record before it (removed, inserted or moved)")
    if record["status"] not in STATUSES or not record["by"].strip() or not is_time(record["at"]):
        reasons.append("not a record `review` writes (status, reviewer or time)")
    if key is not None and record.get("sig") != signature(key, record["hash"]):
        reasons.append("its signature is not the archive key's")
    elif key is None and keyed and "sig" not in record:
        reasons.append("unsigned, in an archive whose records are signed")
    if reasons:
        return f"{where}: {'; '.join(reasons)}", seq, prev
    return None, record["seq"], record["hash"]


def _checkpoint(archive: Path, data: bytes, key: bytes | None) -> tuple[int, int, str]:
    """Where to check from: the end of the prefix the checkpoint vouches for, with its
    last record's seq and hash; the first record when it vouches for nothing here."""
    try:
        mark = json.loads(read_regular(archive / CHECKPOINT_FILE, 1 << 16))
        length, seq, last = int(mark["bytes"]), int(mark["seq"]), str(mark["hash"])
        prefix = str(mark["prefix_sha256"])
    except (OSError, ValueError, KeyError, TypeError, AuditorError):
        return 0, 0, GENESIS  # a checkpoint that cannot be read vouches for nothing
    if not 0 < length <= len(data) or data[length - 1 : length] != b"\n":
        return 0, 0, GENESIS
    if hashlib.sha256(data[:length]).hexdigest() != prefix:
        return 0, 0, GENESIS
    signed = _signed_text(length, seq, last, prefix)
    if key is not None and mark.get("sig") != signature(key, signed):
        return 0, 0, GENESIS
    return length, seq, last


def _write_checkpoint(archive: Path, prefix: bytes, seq: int, last: str, key: bytes | None) -> None:
    digest = hashlib.sha256(prefix).hexdigest()
    mark: dict[str, object] = {
        "bytes": len(prefix),
        "seq": seq,
        "hash": last,
        "prefix_sha256": digest,
    }
    if key is not None:
        mark["sig"] = signature(key, _signed_text(len(prefix), seq, last, digest))
    staged = archive / f"{CHECKPOINT_FILE}.{os.getpid()}.tmp"
    # Created anew, never through a link planted at its name.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        handle = os.open(staged, flags, 0o644)
    except OSError:
        return  # a read-only archive (a copy handed to a regulator) is read without one
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(mark))
        os.replace(staged, archive / CHECKPOINT_FILE)
    except OSError:
        staged.unlink(missing_ok=True)


def _signed_text(length: int, seq: int, last: str, digest: str) -> str:
    return f"ledger prefix {length}:{seq}:{last}:{digest}"
