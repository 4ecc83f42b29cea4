"""One record of the review ledger (`archive.ledger`): its fields, its line as the ledger
writes it, its hash, and the reading of a line back into a record or the reason it is
none. The format is the regulator's to check by hand: one JSON object a line, in the key
order `LINE_ORDER`, UTF-8, no spaces; `hash` the SHA-256 of the other fields but `sig`
as canonical JSON (keys sorted)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

STATUSES = ("open", "explained", "corrected", "escalated", "dismissed")
LEDGER_FILE = "reviews.jsonl"
FIELDS = ("seq", "finding_id", "run_id", "status", "note", "by", "at", "prev", "hash")
# The finding's identity beside its id (`findings.table.IDENTITY`), so that a review
# follows its finding to the id another scheme gives it; records written before it have
# none. Hashed with the record's other fields.
IDENTITY_FIELD = "identity"
IDENTITY_KEYS = ("rule", "table_id", "shoe_id", "round_id", "wager_id", "discriminator")
SIGNED_FIELDS = (*FIELDS, "sig")
LINE_ORDER = ("seq", "finding_id", IDENTITY_FIELD, *FIELDS[2:], "sig")
REVIEW_COLUMNS = ("finding_id", "status", "note", "by")
GENESIS = "0" * 64


def is_time(text: str) -> bool:
    """Whether a record's `at` is a time with its zone (the catalog reads it as one)."""
    try:
        return datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def record_hash(record: dict) -> str:
    """The SHA-256 of every field but `hash` and `sig`, as canonical JSON."""
    fields = {key: value for key, value in record.items() if key not in ("hash", "sig")}
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def encoded_line(record: dict) -> bytes:
    """A record's line, as the ledger writes it (without its line end)."""
    ordered = {key: record[key] for key in LINE_ORDER if key in record}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class LedgerLine:
    number: int
    record: dict[str, Any] | None  # None when the line is not a record as the ledger writes one
    problem: str | None
    hash_ok: bool

    @property
    def fields(self) -> dict[str, Any]:
        """The record of a line already known to be one."""
        if self.record is None:
            raise ValueError(f"line {self.number} is not a record: {self.problem}")
        return self.record

    @property
    def seq(self) -> int:
        seq: int = self.fields["seq"]
        return seq

    @property
    def where(self) -> str:
        return f"line {self.number} (seq {self.seq})"


def checked_line(number: int, raw: bytes) -> LedgerLine:
    record, problem = parse_line(raw)
    if record is None:
        return LedgerLine(number, None, problem, False)
    return LedgerLine(number, record, None, record_hash(record) == record["hash"])


def parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The record on a line, or why it is none."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "not a JSON record"
    if not isinstance(record, dict) or set(record) - {"sig", IDENTITY_FIELD} != set(FIELDS):
        return None, f"not a review record (its fields must be {', '.join(FIELDS)})"
    if IDENTITY_FIELD in record and not is_identity(record[IDENTITY_FIELD]):
        keys = ", ".join(IDENTITY_KEYS)
        return None, f"its {IDENTITY_FIELD} is not a finding's identity ({keys})"
    seq = record["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return None, "its seq is not a whole number from 1"
    texts = (record[key] for key in record if key not in ("seq", IDENTITY_FIELD))
    if not all(isinstance(text, str) for text in texts):
        return None, "a field that must be text is not"
    if encoded_line(record) != raw:
        return None, "not written as the ledger writes a record: its bytes were changed"
    return record, None


def is_identity(value: object) -> bool:
    return (
        isinstance(value, dict)
        and tuple(value) == IDENTITY_KEYS
        and isinstance(value["rule"], str)
        and all(v is None or isinstance(v, str) for v in value.values())
    )


def line_hash(line: LedgerLine) -> str:
    return str(line.fields["hash"])
