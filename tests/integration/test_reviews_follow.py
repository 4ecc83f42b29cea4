"""Reviews follow their finding's identity: across a re-audit under reworded packs (the id
does not change) and across a change of id scheme (the review is carried over by
`archive add`). The scheme-1 set in tests/fixtures/scheme1/set was written by the auditor
before finding ids stopped hashing the message, from the night in
tests/fixtures/scheme1/night (300 simulated rounds with faults)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import polars as pl

from auditor.archive.catalog import current_catalog
from auditor.archive.ledger import read_reviews
from tests.support.cli import cli
from tests.support.paths import FIXTURES, RULES, SAMPLE

FIXTURE = FIXTURES / "scheme1"


def status_of(archive: Path, finding_id: str) -> tuple[str, str | None]:
    with duckdb.connect(str(current_catalog(archive)), read_only=True) as con:
        row = con.execute(
            "SELECT status, note FROM finding_status WHERE finding_id = ?", [finding_id]
        ).fetchone()
    assert row is not None, finding_id
    return row


def test_a_review_of_a_scheme_1_finding_is_carried_to_its_id_under_scheme_2(tmp_path):
    archive = tmp_path / "archive"
    old_set = FIXTURE / "set"
    assert "finding_id_scheme" not in json.loads((old_set / "manifest.json").read_text())
    assert cli("archive", "add", archive, old_set).exit_code == 0
    old = pl.read_parquet(old_set / "findings.parquet")
    wager = old.filter(pl.col("wager_id").is_not_null()).sort("finding_id").row(0, named=True)
    # A table finding: scheme 2 tells a table's options rows apart by a discriminator.
    table = old.filter(pl.col("rule") == "TBL003").row(0, named=True)
    for finding, status in ((wager, "explained"), (table, "escalated")):
        reviewed = cli(
            "review", archive, finding["finding_id"], "--status", status,
            "--note", f"checked {finding['rule']}", "--by", "J. Doe",
        )  # fmt: skip
        assert reviewed.exit_code == 0, reviewed.output

    night = tmp_path / "night-2026-11-24"
    shutil.copytree(FIXTURE / "night", night)
    new_set = tmp_path / "reaudit"
    assert cli("audit", night, "--out", new_set, "--exit-zero", "--quiet").exit_code == 0
    added = cli("archive", "add", archive, new_set)
    assert added.exit_code == 0, added.output
    assert "2 reviews carried over" in added.output

    new = pl.read_parquet(new_set / "findings.parquet")
    assert not set(new["finding_id"]) & set(old["finding_id"])  # every id is new
    for finding, status in ((wager, "explained"), (table, "escalated")):
        (successor,) = new.filter(
            (pl.col("rule") == finding["rule"])
            & pl.col("table_id").eq_missing(finding["table_id"])
            & pl.col("shoe_id").eq_missing(finding["shoe_id"])
            & pl.col("round_id").eq_missing(finding["round_id"])
            & pl.col("wager_id").eq_missing(finding["wager_id"])
        )["finding_id"]
        carried_status, note = status_of(archive, successor)
        assert carried_status == status
        assert f"carried over from finding {finding['finding_id']}" in note
    # The carried records are ordinary records: chained, stating the new finding's
    # identity, by the archive add; the archive verifies intact.
    carried = [r for r in read_reviews(archive) if r["by"] == "auditor archive add"]
    assert len(carried) == 2 and all(r["identity"]["rule"] for r in carried)
    verified = cli("verify", archive)
    assert verified.exit_code == 0, verified.output
    # Adding the same run again carries nothing twice.
    assert "carried over" not in cli("archive", "add", archive, new_set).output


def test_an_unreviewed_finding_carries_nothing(tmp_path):
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, FIXTURE / "set").exit_code == 0
    night = tmp_path / "night"
    shutil.copytree(FIXTURE / "night", night)
    assert cli("audit", night, "--out", tmp_path / "again", "--exit-zero", "--quiet").exit_code == 0
    added = cli("archive", "add", archive, tmp_path / "again")
    assert added.exit_code == 0 and "carried over" not in added.output
    assert read_reviews(archive) == []


def _reworded_packs(folder: Path) -> Path:
    shutil.copytree(RULES, folder)
    for path in [*folder.glob("*.yaml"), *folder.glob("regulations/*")]:
        path.write_text(path.read_text(encoding="utf-8").replace("§", "Sec. "), "utf-8")
    for path in folder.glob("__*"):
        path.unlink() if path.is_file() else shutil.rmtree(path)
    return folder


def test_reviews_survive_a_reaudit_under_reworded_packs(tmp_path):
    archive = tmp_path / "archive"
    first = tmp_path / "first"
    assert cli("audit", SAMPLE, "--out", first, "--exit-zero", "--quiet").exit_code == 0
    assert cli("archive", "add", archive, first).exit_code == 0
    findings = pl.read_parquet(first / "findings.parquet").sort("finding_id")
    finding = findings.filter(pl.col("citation").str.contains("§")).row(0, named=True)
    assert cli(
        "review", archive, finding["finding_id"], "--status", "corrected",
        "--note", "paid at the cage", "--by", "J. Doe",
    ).exit_code == 0  # fmt: skip
    packs = _reworded_packs(tmp_path / "packs")
    second = tmp_path / "second"
    audited = cli(
        "audit", SAMPLE, "--out", second, "--exit-zero", "--quiet",
        "--rules", packs, "--replace-builtin",
    )  # fmt: skip
    assert audited.exit_code == 0, audited.output
    reworded = pl.read_parquet(second / "findings.parquet")
    same = reworded.filter(pl.col("finding_id") == finding["finding_id"]).row(0, named=True)
    assert same["citation"] != finding["citation"]  # reworded, the same finding
    added = cli("archive", "add", archive, second)
    assert added.exit_code == 0 and "carried over" not in added.output
    assert status_of(archive, finding["finding_id"]) == ("corrected", "paid at the cage")
    assert len(read_reviews(archive)) == 1  # nothing to carry: the id is the same


# ---- the ledger is checked on every read -----------------------------------------------


def _reviewed_archive(tmp_path: Path) -> tuple[Path, list[str]]:
    archive = tmp_path / "archive"
    assert cli("archive", "add", archive, FIXTURE / "set").exit_code == 0
    ids = pl.read_parquet(FIXTURE / "set" / "findings.parquet")["finding_id"].sort().to_list()
    for finding_id in ids[:3]:
        reviewed = cli(
            "review", archive, finding_id, "--status", "explained", "--note", "ok", "--by", "A"
        )
        assert reviewed.exit_code == 0, reviewed.output
    return archive, ids


def _edit_note(archive: Path, line: int, note: str) -> None:
    ledger = archive / "reviews.jsonl"
    lines = ledger.read_bytes().split(b"\n")
    record = json.loads(lines[line - 1])
    record["note"] = note
    lines[line - 1] = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
    ledger.write_bytes(b"\n".join(lines))


def test_an_edited_review_is_refused_by_every_reader_naming_its_line(tmp_path):
    archive, _ = _reviewed_archive(tmp_path)
    sql = "SELECT count(*) FROM reviews"
    assert cli("query", archive, sql).exit_code == 0  # and a checkpoint is kept
    assert (archive / ".reviews.jsonl.verified").is_file()
    _edit_note(archive, 2, "forged: nothing to see")
    for args in (
        ("query", archive, sql),
        ("report", archive, "--period", "2026-11-24..2026-11-24", "-o", tmp_path / "p.html"),
        ("archive", "list", archive),
        ("surveil", archive, "--from", "2026-11-24", "--to", "2026-11-24"),
    ):
        refused = cli(*args)
        assert refused.exit_code == 2, (args[0], refused.output)
        assert "line 2 (seq 2 expected)" in refused.output, (args[0], refused.output)
        assert "forged" not in refused.output
    assert not (tmp_path / "p.html").exists()


def test_a_forged_checkpoint_of_an_unsigned_archive_is_caught_by_verify(tmp_path):
    archive, _ = _reviewed_archive(tmp_path)
    assert cli("query", archive, "SELECT 1").exit_code == 0
    _edit_note(archive, 1, "forged")
    # A changed prefix is read again from the first record, and named.
    refused = cli("query", archive, "SELECT 1")
    assert refused.exit_code == 2 and "line 1 (seq 1 expected)" in refused.output
    # The checkpoint rewritten to vouch for the forged bytes: without a key nothing tells
    # it from one the tool wrote, so reads believe it (as they would a re-chained ledger);
    # `verify` reads every record and names the edit.
    checkpoint = archive / ".reviews.jsonl.verified"
    data = (archive / "reviews.jsonl").read_bytes()
    mark = {"bytes": len(data), "seq": 3, "hash": json.loads(data.split(b"\n")[2])["hash"]}
    mark["prefix_sha256"] = hashlib.sha256(data).hexdigest()
    checkpoint.write_text(json.dumps(mark))
    assert cli("query", archive, "SELECT 1").exit_code == 0
    verified = cli("verify", archive)
    assert verified.exit_code == 1 and "line 1 (seq 1)" in verified.output


def test_a_checkpoint_of_a_signed_archive_cannot_be_forged_without_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDITOR_KEY_DIR", str(tmp_path / "keys"))
    archive = tmp_path / "archive"
    assert cli("archive", "init", archive).exit_code == 0
    assert cli("archive", "add", archive, FIXTURE / "set").exit_code == 0
    ids = pl.read_parquet(FIXTURE / "set" / "findings.parquet")["finding_id"].sort().to_list()
    for finding_id in ids[:2]:
        assert cli("review", archive, finding_id, "--status", "explained",
                   "--note", "ok", "--by", "A").exit_code == 0  # fmt: skip
    assert cli("query", archive, "SELECT 1").exit_code == 0
    _edit_note(archive, 1, "forged")
    checkpoint = archive / ".reviews.jsonl.verified"
    mark = json.loads(checkpoint.read_text())
    data = (archive / "reviews.jsonl").read_bytes()
    mark["prefix_sha256"] = hashlib.sha256(data[: mark["bytes"]]).hexdigest()
    checkpoint.write_text(json.dumps(mark))
    refused = cli("query", archive, "SELECT 1")
    assert refused.exit_code == 2 and "line 1 (seq 1 expected)" in refused.output
