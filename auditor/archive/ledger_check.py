"""Checking the review ledger (`archive.ledger`): its chain, each record as `review`
validates an entry, its signatures, and the heads kept of it elsewhere (the archive's
record at each run added, or a head the reader kept).

Each check names the first line and seq of every break, so that an investigator can find
the record edited, deleted, inserted or reordered without reading the code.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeGuard

from auditor.archive.keys import signature
from auditor.archive.ledger import (
    GENESIS,
    LedgerError,
    LedgerLine,
    ReviewInput,
    _lines,
    _review_problems,
    finding_runs,
    ledger_path,
    line_hash,
)
from auditor.archive.ledger_format import is_time


def verify_ledger(
    archive: Path, *, key: bytes | None = None, keyed: bool = False, head: str | None = None
) -> list[str]:
    """Every break in the ledger, first one first, naming its line and seq: its chain,
    each record as `review` validates an entry, its signatures (with `key`; without it,
    in a `keyed` archive, only that each record is signed), and a `head` kept elsewhere
    (a record hash the ledger must still hold). Empty when intact (or no ledger yet)."""
    try:
        lines = _lines(ledger_path(archive))
    except LedgerError as exc:
        return [str(exc)]
    problems = _chain_problems(lines) + _record_problems(archive, lines)
    problems += _signature_problems(lines, key, keyed)
    if head is not None and head not in {line_hash(line) for line in lines if line.record}:
        problems.append(
            f"head {head}: no record of the ledger has this hash: records were removed from "
            "its end or rewritten since it was kept"
        )
    return problems


def anchor_problems(archive: Path, entries: Sequence[dict[str, Any]]) -> list[str]:
    """Each ledger head the archive's record anchored (at each run added) that the ledger
    no longer holds: records removed from its end, or rewritten."""
    try:
        lines = _lines(ledger_path(archive))
    except LedgerError:
        return []  # said by verify_ledger
    held = {line.seq: line_hash(line) for line in lines if line.record is not None}
    return [
        f"seq {entry['ledger_seq']}: the ledger's last record when record entry "
        f"{entry['seq']} was written ({entry['ledger_hash'][:12]}…) is "
        + ("gone: records were removed from its end" if seq not in held else "changed")
        for entry in entries
        if (seq := entry.get("ledger_seq")) and held.get(seq) != entry.get("ledger_hash")
    ]


def _record_problems(archive: Path, lines: list[LedgerLine]) -> list[str]:
    """Each record that `review` would have refused as an entry, or that names a run that
    does not hold its finding."""
    records = [line for line in lines if line.record is not None]
    # A live run is read only where a record names it: a day's live lines are many.
    named = {line.fields["run_id"] for line in records}
    found = finding_runs(archive, {line.fields["finding_id"] for line in records}, named)
    problems = []
    for line in records:
        record = line.fields
        entry = ReviewInput(record["finding_id"], record["status"], record["note"], record["by"])
        runs = {fid: sorted(held)[0] for fid, held in found.items()}
        reasons = _review_problems(entry, runs)
        if record["finding_id"] in found and record["run_id"] not in found[record["finding_id"]]:
            reasons.append(f"run {record['run_id']!r} holds no such finding")
        if not is_time(record["at"]):
            reasons.append(f"at {record['at']!r} is not a time with its zone")
        if reasons:
            problems.append(f"{line.where}: {'; '.join(reasons)}")
    return problems


def _signature_problems(lines: list[LedgerLine], key: bytes | None, keyed: bool) -> list[str]:
    problems = []
    for line in lines:
        if line.record is None:
            continue
        sig = line.record.get("sig")
        if key is not None and sig != signature(key, line_hash(line)):
            why = "unsigned" if sig is None else "its signature is not the archive key's"
            problems.append(f"{line.where}: {why}: written or re-chained without the key")
        elif key is None and keyed and sig is None:
            problems.append(f"{line.where}: unsigned, in an archive whose records are signed")
    return problems


def _chain_problems(lines: list[LedgerLine]) -> list[str]:
    """Walk the chain, each record against the one it must follow. A record the next one
    chains past is an insertion; two whose order fits only swapped are swapped; a record
    the next one was chained to with another hash was changed and re-hashed."""
    problems: list[str] = []
    expected_seq = 1
    expected_prev: str | None = GENESIS  # None: after an unreadable line, unknown
    at = 0
    while at < len(lines):
        line, after, later = lines[at], _nth(lines, at + 1), _nth(lines, at + 2)
        if line.record is None:
            problems.append(f"line {line.number} (seq {expected_seq} expected): {line.problem}")
            expected_seq, expected_prev = expected_seq + 1, None
            at += 1
            continue
        if _follows(after, expected_seq, expected_prev) and after.fields["prev"] != line_hash(line):
            # The next record is the one due here: this one was put in, or swapped with it.
            swapped = _follows(line, after.seq + 1, line_hash(after))
            how = "out of order, swapped with" if swapped else "inserted: skipped by"
            problems.append(
                f"{line.where}: {how} line {after.number} (seq {after.seq}), which chains "
                "from the record before it"
            )
            if swapped:
                expected_seq, expected_prev = line.seq + 1, line_hash(line)
            at += 2 if swapped else 1
            continue
        reasons = _link_problems(line, expected_seq, expected_prev)
        expected_seq, expected_prev = line.seq + 1, line_hash(line)
        if reasons:
            problems.append(f"{line.where}: {'; '.join(reasons)}")
        elif (
            _follows(after, expected_seq, None)
            and after.fields["prev"] != line_hash(line)
            and not _follows(later, expected_seq, line_hash(line))  # else `after` was inserted
        ):
            problems.append(
                f"{line.where}: changed and re-hashed: line {after.number} (seq {after.seq}) "
                "was chained to another version of it (or was itself)"
            )
            expected_prev = after.fields["prev"]  # reported once, not again at the next line
        at += 1
    return problems


def _nth(lines: list[LedgerLine], index: int) -> LedgerLine | None:
    return lines[index] if index < len(lines) else None


def _follows(line: LedgerLine | None, seq: int, prev: str | None) -> TypeGuard[LedgerLine]:
    """Whether `line` is an intact record with this seq, chained to `prev` (None: any)."""
    if line is None or line.record is None or not line.hash_ok or line.seq != seq:
        return False
    return prev is None or line.record["prev"] == prev


def _link_problems(line: LedgerLine, expected_seq: int, expected_prev: str | None) -> list[str]:
    reasons = []
    if not line.hash_ok:
        reasons.append("edited: its content does not match its hash")
    if line.seq != expected_seq:
        why = "missing or moved" if line.seq > expected_seq else "moved or repeated"
        reasons.append(f"seq {line.seq} where {expected_seq} was expected (records {why})")
    if expected_prev is not None and line.fields["prev"] != expected_prev:
        reasons.append("its prev is not the hash of the record before it")
    return reasons
