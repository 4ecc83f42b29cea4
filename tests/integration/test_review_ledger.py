"""The review ledger: appends chain and are all or nothing, two writers both land, and any
change to the file afterwards shows in verification, naming the first bad record."""

from __future__ import annotations

import hashlib
import itertools
import json
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.archive.ledger import (
    LedgerError,
    ReviewInput,
    append_reviews,
    current_status,
    read_reviews,
)
from auditor.archive.ledger_check import verify_ledger
from auditor.archive.ledger_format import (
    FIELDS,
    GENESIS,
    IDENTITY_FIELD,
    IDENTITY_KEYS,
    LEDGER_FILE,
    LINE_ORDER,
    record_hash,
)
from auditor.archive.review_file import read_review_file
from auditor.output.lock import holding

T0 = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)


def fid(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


F1, F2, F3, F_OLD = fid("f1"), fid("f2"), fid("f3"), fid("old")


def add_run(archive: Path, run_id: str, started_at: datetime, finding_ids: list[str]) -> None:
    folder = archive / "runs" / run_id
    (folder / "set").mkdir(parents=True)
    pl.DataFrame(
        {
            "finding_id": finding_ids,
            "rule": ["tie_payout"] * len(finding_ids),
            "table_id": ["T1"] * len(finding_ids),
        },
        schema={"finding_id": pl.String, "rule": pl.String, "table_id": pl.String},
    ).write_parquet(folder / "set" / "findings.parquet")
    run = {"run_id": run_id, "started_at": started_at.isoformat(timespec="microseconds")}
    (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """Two runs: `b` audited first, `a` (a later audit) finds F1 and F2 again."""
    folder = tmp_path / "ARCHIVE"
    add_run(folder, "b", T0, [F1, F2, F_OLD])
    add_run(folder, "a", T0 + timedelta(days=1), [F1, F2, F3])
    return folder


def review(finding_id: str, status: str = "explained", note: str = "", by: str = "ana"):
    return ReviewInput(finding_id=finding_id, status=status, note=note, by=by)


def ledger_bytes(archive: Path) -> bytes:
    return (archive / LEDGER_FILE).read_bytes()


def six_records(archive: Path) -> list[bytes]:
    """A valid ledger of six records, as its lines (each with its line end)."""
    append_reviews(archive, [review(F1, "open"), review(F2, "escalated", "over the limit")])
    append_reviews(archive, [review(F1, "explained", "dealer error, refunded")])
    append_reviews(archive, [review(F3), review(F_OLD, "dismissed"), review(F2, "corrected")])
    assert verify_ledger(archive) == []
    return ledger_bytes(archive).splitlines(keepends=True)


def write_lines(archive: Path, lines: list[bytes]) -> None:
    (archive / LEDGER_FILE).write_bytes(b"".join(lines))


def encoded(record: dict) -> bytes:
    ordered = {key: record[key] for key in LINE_ORDER if key in record}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def first_problem(archive: Path) -> str:
    problems = verify_ledger(archive)
    assert problems, "the change went unnoticed"
    return problems[0]


# Appending


def test_appends_chain_and_verify_clean(archive: Path) -> None:
    first = append_reviews(archive, [review(F1, "open", by="ana"), review(F_OLD, by="ben")])
    second = append_reviews(archive, [review(F1, "corrected", note="paid the 8:1 tie")])
    records = read_reviews(archive)
    assert records == first + second
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[0]["prev"] == GENESIS
    for before, record in itertools.pairwise(records):
        assert record["prev"] == before["hash"]
    for record in records:
        # The finding's identity beside its id, as its run states it.
        assert list(record) == [*FIELDS[:2], IDENTITY_FIELD, *FIELDS[2:]]
        assert set(record[IDENTITY_FIELD]) == set(IDENTITY_KEYS)
        assert record["hash"] == record_hash(record)
        stamp = datetime.fromisoformat(record["at"])
        assert stamp.utcoffset() == timedelta(0) and "." in record["at"]
    # F1 is in both runs: read from the later audit, `a`, though `b` sorts after it by name
    assert [r["run_id"] for r in records] == ["a", "b", "a"]
    assert verify_ledger(archive) == []
    assert ledger_bytes(archive).count(b"\n") == 3


def test_an_empty_or_missing_ledger_is_fine(archive: Path) -> None:
    assert verify_ledger(archive) == [] and read_reviews(archive) == []
    (archive / LEDGER_FILE).touch()
    assert verify_ledger(archive) == [] and read_reviews(archive) == []
    assert append_reviews(archive, []) == []
    assert append_reviews(archive, [review(F1)])[0]["seq"] == 1


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        (review(fid("nowhere")), "in no archived run's findings"),
        (review(F1, status="fixed"), "status 'fixed' is not one of"),
        (review(F1, by=""), "`by` is empty"),
        (review(F1, by="  \t"), "`by` is empty"),
        (review(F1, note="\ud800"), "UTF-8"),
    ],
)
def test_a_bad_entry_refuses_the_whole_batch(archive: Path, bad: ReviewInput, named: str) -> None:
    append_reviews(archive, [review(F1, "open")])
    before = ledger_bytes(archive)
    with pytest.raises(LedgerError) as refused:
        append_reviews(archive, [review(F2), bad, review(F3)])
    assert refused.value.exit_code == 2
    assert f"entry 2 ({bad.finding_id!r}): " in str(refused.value)
    assert named in str(refused.value)
    assert ledger_bytes(archive) == before


def test_every_bad_entry_is_named(archive: Path) -> None:
    batch = [review(fid("x")), review(F1), review(F2, "maybe"), review(F3, by=" ")]
    with pytest.raises(LedgerError) as refused:
        append_reviews(archive, batch)
    assert [p.split(" (")[0] for p in refused.value.problems] == ["entry 1", "entry 3", "entry 4"]
    assert all(p in str(refused.value) for p in refused.value.problems)
    assert not (archive / LEDGER_FILE).exists()


def test_a_run_being_added_is_not_read(archive: Path) -> None:
    add_run(archive, ".adding-x1", T0 + timedelta(days=9), [F1, fid("half")])
    assert append_reviews(archive, [review(F1)])[0]["run_id"] == "a"
    with pytest.raises(LedgerError, match="in no archived run"):
        append_reviews(archive, [review(fid("half"))])


def test_an_unreadable_findings_file_is_named(archive: Path) -> None:
    (archive / "runs" / "b" / "set" / "findings.parquet").write_bytes(b"not parquet")
    with pytest.raises(LedgerError, match=r"runs/b/set/findings\.parquet"):
        append_reviews(archive, [review(F1)])


def test_an_append_waits_for_the_lock_then_gives_up(archive: Path) -> None:
    append_reviews(archive, [review(F1)])
    before = ledger_bytes(archive)
    with (
        holding(archive / LEDGER_FILE),
        pytest.raises(LedgerError, match="held by another process"),
    ):
        append_reviews(archive, [review(F2)], lock_wait=0.2)
    assert ledger_bytes(archive) == before
    assert not (archive / f".{LEDGER_FILE}.lock").exists()


APPENDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from auditor.archive.ledger import ReviewInput, append_reviews
    archive, who, times, ids = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    (Path(archive).parent / f"ready-{who}").touch()
    while not (Path(archive).parent / "go").exists():  # start together, imports done
        time.sleep(0.005)
    for n in range(times):
        batch = [ReviewInput(i, "explained", f"{who} {n}", who) for i in ids]
        append_reviews(archive, batch)
    """
)


@pytest.mark.e2e
def test_two_processes_appending_at_once_both_land(archive: Path) -> None:
    times = 25
    writers = [
        # From the archive's parent, not the repository: `-c` imports from there first.
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(archive), who, str(times), F1, F2],
            cwd=archive.parent,
        )
        for who in ("ana", "ben")
    ]
    deadline = time.monotonic() + 120
    while not all((archive.parent / f"ready-{who}").exists() for who in ("ana", "ben")):
        assert time.monotonic() < deadline and all(w.poll() is None for w in writers)
        time.sleep(0.01)
    (archive.parent / "go").touch()
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    records = read_reviews(archive)
    assert verify_ledger(archive) == []
    assert [r["seq"] for r in records] == list(range(1, 4 * times + 1))
    for who in ("ana", "ben"):
        notes = [r["note"] for r in records if r["by"] == who]
        assert notes == [f"{who} {n}" for n in range(times) for _ in (F1, F2)]


# Batches from a file


def test_a_csv_batch(archive: Path, tmp_path: Path) -> None:
    path = tmp_path / "reviews.csv"
    path.write_bytes(
        "\ufefffinding_id,status,note,by\n"  # a spreadsheet's byte-order mark
        f'{F1},explained,"shoe 4, round 12: a misdeal",Ana Díaz\n'
        f"{F2},open,,ben\n".encode()
    )
    batch = read_review_file(path)
    assert batch == [
        review(F1, "explained", "shoe 4, round 12: a misdeal", "Ana Díaz"),
        review(F2, "open", "", "ben"),
    ]
    append_reviews(archive, batch)
    assert [r["by"] for r in read_reviews(archive)] == ["Ana Díaz", "ben"]


def test_a_parquet_batch(archive: Path, tmp_path: Path) -> None:
    path = tmp_path / "reviews.parquet"
    pl.DataFrame(
        {"finding_id": [F3], "status": ["escalated"], "note": [None], "by": ["cy"], "x": [1]}
    ).write_parquet(path)
    assert read_review_file(path) == [review(F3, "escalated", "", "cy")]


@pytest.mark.parametrize(
    ("name", "content", "named"),
    [
        ("r.csv", b"finding_id,status,by\nx,open,ana\n", "no column note"),
        ("r.csv", b"finding_id,status,note,by\n\xff\xfe,open,,ana\n", "not a readable CSV"),
        ("r.parquet", b"PAR1 but not really", "not a readable Parquet"),
        ("r.xlsx", b"", "a .csv or .parquet file"),
    ],
)
def test_a_bad_review_file_is_named(tmp_path: Path, name: str, content: bytes, named: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(LedgerError) as refused:
        read_review_file(path)
    assert str(path) in str(refused.value) and named in str(refused.value)


def test_a_missing_review_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match=r"missing\.csv"):
        read_review_file(tmp_path / "missing.csv")


def test_current_status_is_the_latest_record(archive: Path) -> None:
    append_reviews(archive, [review(F1, "open"), review(F2, "escalated")])
    append_reviews(archive, [review(F1, "explained"), review(F1, "corrected", by="ben")])
    current = current_status(read_reviews(archive))
    assert {k: (v["status"], v["seq"]) for k, v in current.items()} == {
        F1: ("corrected", 4),
        F2: ("escalated", 2),
    }
    assert current_status(list(reversed(read_reviews(archive))))[F1]["status"] == "corrected"


# Tampering


def test_an_edited_note_is_named(archive: Path) -> None:
    lines = six_records(archive)
    lines[2] = lines[2].replace(b"dealer error, refunded", b"dealer error, resolved")
    write_lines(archive, lines)
    problem = first_problem(archive)
    assert problem.startswith("line 3 (seq 3): edited")
    assert len(verify_ledger(archive)) == 1


def test_an_edit_with_its_hash_recomputed_is_named(archive: Path) -> None:
    lines = six_records(archive)
    record = json.loads(lines[2])
    record["note"] = "nothing happened"
    record["hash"] = record_hash(record)
    lines[2] = encoded(record)
    write_lines(archive, lines)
    assert first_problem(archive).startswith("line 3 (seq 3): changed and re-hashed")


@pytest.mark.parametrize(("gone", "named"), [(2, "line 3 (seq 4)"), (0, "line 1 (seq 2)")])
def test_a_deleted_record_is_named(archive: Path, gone: int, named: str) -> None:
    lines = six_records(archive)
    del lines[gone]
    write_lines(archive, lines)
    assert first_problem(archive).startswith(f"{named}: seq")


def test_an_inserted_record_with_a_hash_of_its_own_is_named(archive: Path) -> None:
    lines = six_records(archive)
    forged = json.loads(lines[2])  # a plausible third record, chained to the second
    forged |= {"status": "dismissed", "note": "no issue", "prev": json.loads(lines[1])["hash"]}
    forged["hash"] = record_hash(forged)
    lines.insert(2, encoded(forged))
    write_lines(archive, lines)
    assert first_problem(archive).startswith("line 3 (seq 3): inserted")
    assert len(verify_ledger(archive)) == 1


def test_a_repeated_record_is_named(archive: Path) -> None:
    lines = six_records(archive)
    lines.insert(4, lines[1])
    write_lines(archive, lines)
    assert first_problem(archive).startswith("line 5 (seq 2): inserted")


def test_two_swapped_records_are_named(archive: Path) -> None:
    lines = six_records(archive)
    lines[2], lines[3] = lines[3], lines[2]
    write_lines(archive, lines)
    assert first_problem(archive).startswith("line 3 (seq 4): out of order")
    assert len(verify_ledger(archive)) == 1


def test_two_records_swapped_far_apart_are_named(archive: Path) -> None:
    lines = six_records(archive)
    lines[1], lines[4] = lines[4], lines[1]
    write_lines(archive, lines)
    assert first_problem(archive).startswith("line 2 (seq 5)")


@pytest.mark.parametrize("keep", [1, 40, -1])
def test_a_truncated_last_line_is_named(archive: Path, keep: int) -> None:
    lines = six_records(archive)
    lines[-1] = lines[-1][:keep]
    write_lines(archive, lines)
    problem = first_problem(archive)
    assert problem.startswith("line 6 (seq 6 expected): incomplete")
    with pytest.raises(LedgerError, match="line 6"):
        read_reviews(archive)


def test_the_next_append_cuts_a_torn_line_and_keeps_it(archive: Path) -> None:
    lines = six_records(archive)
    lines[-1] = lines[-1][:50]
    write_lines(archive, lines)
    said: list[str] = []
    written = append_reviews(archive, [review(F1)], notify=said.append)
    assert written[0]["seq"] == 6
    assert verify_ledger(archive) == []
    (side,) = archive.glob(f"{LEDGER_FILE}.torn-*")
    assert side.read_bytes() == lines[-1]
    assert any("torn" in line and str(side) in line for line in said)


def test_no_append_after_an_altered_last_record(archive: Path) -> None:
    lines = six_records(archive)
    lines[-1] = lines[-1].replace(b'"corrected"', b'"dismissed"')
    write_lines(archive, lines)
    with pytest.raises(LedgerError, match="cannot be chained from"):
        append_reviews(archive, [review(F1)])


@pytest.fixture(scope="module")
def valid_ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A ledger whose notes hold what JSON escapes or leaves as UTF-8."""
    folder = tmp_path_factory.mktemp("property") / "ARCHIVE"
    add_run(folder, "r1", T0, [F1, F2])
    notes = ["tab\there, \x1f unit sep", 'quote " and \\ slash', "café ☕ \u2028 line sep", ""]
    for note in notes:
        append_reviews(folder, [review(F1, note=note), review(F2, "open", note, by="Zoë")])
    assert verify_ledger(folder) == []
    return folder, ledger_bytes(folder)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_single_byte_change_is_detected(valid_ledger: tuple[Path, bytes], data) -> None:
    folder, original = valid_ledger
    at = data.draw(st.integers(0, len(original) - 1), label="at")
    how = data.draw(st.sampled_from(["replace", "delete", "insert"]), label="how")
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != original[at]), label="byte")
    changed = {
        "replace": original[:at] + bytes([byte]) + original[at + 1 :],
        "delete": original[:at] + original[at + 1 :],
        "insert": original[:at] + bytes([byte]) + original[at:],
    }[how]
    (folder / LEDGER_FILE).write_bytes(changed)
    try:
        assert verify_ledger(folder) != []
    finally:
        (folder / LEDGER_FILE).write_bytes(original)
