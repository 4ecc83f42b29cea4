"""The review ledger against tampering that its chain alone does not show (records cut from
its end, the file emptied or removed, a record edited and the rest re-chained, records
`review` would refuse), and a `review --from-file` killed mid-write: all or nothing, and
never entered twice."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest

from auditor.archive.ledger_format import record_hash
from tests.support.cli import AUDITOR, cli
from tests.support.paths import SAMPLE

BIG_BATCH = 40_000
KILL_TRIES = 30


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("night") / "out"
    assert cli("audit", SAMPLE, "--out", out, "--exit-zero").exit_code == 0
    return out


@pytest.fixture(scope="module")
def night_again(tmp_path_factory) -> Path:
    """The same night audited a second time: a run of its own, under another id."""
    out = tmp_path_factory.mktemp("again") / "out"
    assert cli("audit", SAMPLE, "--out", out, "--exit-zero").exit_code == 0
    return out


@pytest.fixture
def keys(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "keys"
    monkeypatch.setenv("AUDITOR_KEY_DIR", str(folder))
    monkeypatch.delenv("AUDITOR_KEY_FILE", raising=False)
    return folder


@pytest.fixture
def archive(night, night_again, keys, tmp_path) -> Path:
    """A signed archive with one run and three reviews, then the run added again under
    another id so that the record anchors the ledger's head (seq 3)."""
    folder = tmp_path / "archive"
    assert cli("archive", "init", folder).exit_code == 0
    assert cli("archive", "add", folder, night).exit_code == 0
    ids = finding_ids(night)[:3]
    for finding_id, status in zip(ids, ("explained", "escalated", "dismissed"), strict=True):
        assert cli("review", folder, finding_id, "--status", status, "--by", "ana").exit_code == 0
    assert cli("archive", "add", folder, night_again).exit_code == 0
    return folder


def finding_ids(night: Path) -> list[str]:
    return pl.read_parquet(night / "findings.parquet")["finding_id"].to_list()


def ledger(archive: Path) -> Path:
    return archive / "reviews.jsonl"


def records(archive: Path) -> list[dict]:
    return [json.loads(line) for line in ledger(archive).read_text().splitlines()]


def write_records(archive: Path, rows: list[dict]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows)
    ledger(archive).write_text(text)


def verify(archive: Path, *extra: object) -> tuple[int, str]:
    result = cli("verify", archive, *extra)
    return result.exit_code, result.output


def test_a_signed_archive_with_reviews_verifies_intact(archive: Path, keys: Path) -> None:
    code, output = verify(archive)
    assert code == 0, output
    assert "signed with the archive's key" in output
    (key_file,) = keys.iterdir()
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert all("sig" in r for r in records(archive))


def test_init_never_overwrites_a_key_nor_writes_one_inside(tmp_path: Path, keys: Path) -> None:
    key = tmp_path / "my.key"
    assert cli("archive", "init", tmp_path / "a", "--key", key).exit_code == 0
    kept = key.read_bytes()
    refused = cli("archive", "init", tmp_path / "b", "--key", key)
    assert refused.exit_code == 2 and "never overwritten" in refused.output
    assert key.read_bytes() == kept
    inside = cli("archive", "init", tmp_path / "c", "--key", tmp_path / "c" / "k.key")
    assert inside.exit_code == 2 and "inside the archive" in inside.output


@pytest.mark.parametrize("keep", [2, 0])
def test_records_cut_from_the_end_are_caught_by_the_anchored_head(archive, keep) -> None:
    write_records(archive, records(archive)[:keep])
    code, output = verify(archive)
    assert code == 1 and "seq 3: the ledger's last record when record entry 2" in output


def test_a_removed_ledger_is_caught(archive: Path) -> None:
    ledger(archive).unlink()
    code, output = verify(archive)
    assert code == 1 and "gone: records were removed from its end" in output


def test_a_head_kept_elsewhere_catches_a_cut_without_the_record(archive: Path) -> None:
    head = records(archive)[-1]["hash"]
    intact = cli("review", archive, "--verify", "--head", head)
    assert intact.exit_code == 0 and f"holds the head {head}" in intact.output
    write_records(archive, records(archive)[:2])
    cut = cli("review", archive, "--verify", "--head", head)
    assert cut.exit_code == 1 and f"head {head}: no record of the ledger" in cut.output


def rechained(rows: list[dict]) -> list[dict]:
    """The records chained again from the first, each hash recomputed (signatures kept,
    for the key is not at hand)."""
    prev = "0" * 64
    for row in rows:
        row["prev"] = prev
        row["hash"] = prev = record_hash(row)
    return rows


def test_an_edit_with_the_rest_rechained_is_caught_with_the_key(archive: Path) -> None:
    rows = records(archive)
    rows[0]["note"] = "nothing happened"
    write_records(archive, rechained(rows))
    code, output = verify(archive)
    assert code == 1 and "signature is not the archive key's" in output
    # The anchored head shows it without the key too: the last hash is not the one kept.
    os.environ["AUDITOR_KEY_FILE"] = "/nonexistent/key"
    try:
        code, output = verify(archive)
    finally:
        del os.environ["AUDITOR_KEY_FILE"]
    assert code == 1 and "key was not found" in output and "changed" in output


def test_records_review_would_refuse_are_named(archive: Path) -> None:
    rows = records(archive)
    forged = {
        "seq": 4,
        "finding_id": hashlib.sha256(b"nothing").hexdigest(),
        "run_id": rows[-1]["run_id"],
        "status": "approved-by-regulator",
        "note": "",
        "by": "",
        "at": "not a time",
        "prev": rows[-1]["hash"],
    }
    forged["hash"] = record_hash(forged)
    write_records(archive, [*rows, forged])
    code, output = verify(archive)
    assert code == 1
    line = next(line for line in output.splitlines() if "seq 4" in line)
    for reason in ("no archived run's findings", "approved-by-regulator", "`by` is empty", "time"):
        assert reason in line


def big_batch(night: Path, path: Path) -> Path:
    ids = finding_ids(night)
    rows = [(ids[i % len(ids)], "explained", f"batch note {i}", "ana") for i in range(BIG_BATCH)]
    pl.DataFrame(rows, schema=["finding_id", "status", "note", "by"], orient="row").write_csv(path)
    return path


def kill_mid_write(archive: Path, batch: Path) -> bool:
    """Start the batch and SIGKILL it once its ledger is being written (the staged file is
    there); False when it finished first."""
    staged = archive / ".reviews.jsonl.new"
    process = subprocess.Popen(
        [AUDITOR, "review", str(archive), "--from-file", str(batch)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while process.poll() is None and not staged.exists():
        time.sleep(0.0005)
    if process.poll() is not None:
        return False
    process.send_signal(signal.SIGKILL)
    process.wait()
    return True


@pytest.mark.e2e
def test_a_killed_batch_is_all_or_nothing_and_entered_once(archive, night, tmp_path) -> None:
    batch = big_batch(night, tmp_path / "big.csv")
    before = ledger(archive).read_bytes()
    for _ in range(KILL_TRIES):
        if kill_mid_write(archive, batch):
            break
        ledger(archive).write_bytes(before)  # it finished first: as it was, and again
    else:
        pytest.fail(f"no kill in {KILL_TRIES} landed while the ledger was written")
    assert ledger(archive).read_bytes() == before  # nothing of the batch, no torn line
    assert verify(archive)[0] == 0
    status = cli("query", archive, "SELECT count(*) FROM finding_status", "--format", "csv")
    assert status.exit_code == 0, status.output
    entered = cli("review", archive, "--from-file", batch)
    assert entered.exit_code == 0, entered.output
    again = cli("review", archive, "--from-file", batch)
    assert again.exit_code == 0 and "already in the ledger" in again.output
    notes = [r["note"] for r in records(archive) if r["note"].startswith("batch note")]
    assert len(notes) == len(set(notes)) == BIG_BATCH
    assert verify(archive)[0] == 0
