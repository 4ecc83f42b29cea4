"""`ARCHIVE/record.jsonl`: the archive's own record of what it holds, one chained entry per
run added and per period's surveillance written, in the order they happened.

    {"seq":3,"kind":"run","name":"RUN_ID","started_at":"…","files":{"run.json":"<sha256>",
     "set/manifest.json":"<sha256>"},"ledger_seq":12,"ledger_hash":"…","at":"…",
     "prev":"…","hash":"…","sig":"…"}

`hash` is the SHA-256 of the entry's other fields (`sig` aside) as canonical JSON, `prev`
the hash of the entry before (64 zeros for the first), as in the review ledger. `sig`,
when the archive's key was found, is the HMAC-SHA256 of `hash` under that key
(`archive.keys`). A run's `started_at` is the one its own catalog recorded, read when the
run was added (the set verified against its manifest): the run in force for a table and
gaming day is decided from it, never from a `run.json` anyone may rewrite. `ledger_seq`
and `ledger_hash` are the review ledger's last record when the entry was written: records
removed from the ledger's end show against them, without the key.

An entry is written under the archive's lock: the whole file written anew beside it and
switched in (a few hundred lines a year), so a kill leaves the record as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from auditor.archive.keys import signature
from auditor.output.outdir import fsync_folder
from auditor.regular_files import SMALL_FILE_LIMIT, read_regular

RECORD_FILE = "record.jsonl"
GENESIS = "0" * 64
FIELDS = ("seq", "kind", "name", "started_at", "files", "ledger_seq", "ledger_hash", "at")
CHAIN_FIELDS = ("prev", "hash")


class RecordMissing(Exception):
    """The archive has no record: made before the record was kept, or it was removed."""


def record_path(archive: Path) -> Path:
    return Path(archive) / RECORD_FILE


def entry_hash(entry: dict) -> str:
    fields = {key: value for key, value in entry.items() if key not in ("hash", "sig")}
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    """The SHA-256 of a regular file of the archive (a link or FIFO is refused)."""
    return hashlib.sha256(read_regular(path, SMALL_FILE_LIMIT)).hexdigest()


def read_entries(archive: Path) -> list[dict | None]:
    """Every entry in file order (RecordMissing when there is no record); a line that is
    not a JSON object is kept as None, for `record_problems` to name."""
    try:
        data = read_regular(record_path(archive), SMALL_FILE_LIMIT)
    except FileNotFoundError:
        raise RecordMissing(str(record_path(archive))) from None
    entries: list[dict | None] = []
    for raw in data.splitlines():
        try:
            entry = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            entry = None
        entries.append(entry if isinstance(entry, dict) else None)
    return entries


def has_record(archive: Path) -> bool:
    return os.path.lexists(record_path(archive))


def recorded_runs(archive: Path) -> dict[str, dict]:
    """Each run the record holds, by its id, with its entry (RecordMissing without one)."""
    return {
        entry["name"]: entry
        for entry in read_entries(archive)
        if entry is not None and entry.get("kind") == "run"
    }


def append_entry(archive: Path, fields: dict, key: bytes | None) -> dict:
    """Chain and write one entry; the caller holds the archive's lock."""
    entries = read_entries(archive) if has_record(archive) else []
    last = entries[-1] if entries else None
    entry = {
        **fields,
        "seq": (last["seq"] if last else 0) + 1,
        "at": datetime.now(UTC).isoformat(timespec="microseconds"),
        "prev": last["hash"] if last else GENESIS,
    }
    entry["hash"] = entry_hash(entry)
    if key is not None:
        entry["sig"] = signature(key, entry["hash"])
    lines = [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in [*entries, entry]]
    write_record(archive, "".join(line + "\n" for line in lines))
    return entry


def write_record(archive: Path, text: str) -> None:
    target = record_path(archive)
    staged = target.with_name(f".{RECORD_FILE}.tmp")
    staged.unlink(missing_ok=True)
    with staged.open("x", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(staged, target)
    fsync_folder(target.parent)


def chain_problems(entries: list[dict | None], key: bytes | None) -> list[str]:
    """Every break in the record's chain (and, with the key, every entry not signed by
    it), naming the entry."""
    problems = []
    expected_seq = 1
    expected_prev: str | None = GENESIS  # None after an unreadable entry: any prev will do
    for number, entry in enumerate(entries, start=1):
        where = f"record entry {number}"
        if entry is None or not set(FIELDS + CHAIN_FIELDS) <= set(entry):
            problems.append(f"{where}: not an entry of the archive's record")
            expected_seq, expected_prev = expected_seq + 1, None
            continue
        if entry_hash(entry) != entry["hash"]:
            problems.append(
                f"{where} ({entry['name']}): edited: its content does not match its hash"
            )
        if entry["seq"] != expected_seq:
            problems.append(f"{where}: seq {entry['seq']} where {expected_seq} was expected")
        if expected_prev is not None and entry["prev"] != expected_prev:
            problems.append(f"{where}: its prev is not the hash of the entry before it")
        if key is not None and entry.get("sig") != signature(key, entry["hash"]):
            problems.append(f"{where} ({entry['name']}): not signed with the archive's key")
        expected_seq, expected_prev = entry["seq"] + 1, entry["hash"]
    return problems
