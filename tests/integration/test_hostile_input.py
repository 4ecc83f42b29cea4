"""Hostile input, generated: whatever a logging system or an operator hands the auditor,
it never crashes (no traceback) and never loses a row. Every row is audited or
quarantined with a reason, or the run is refused with one exit-2 message naming the file.

A bounded number of examples runs in CI; `HYPOTHESIS_PROFILE=hostile` runs many more.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.errors import AuditorError
from auditor.pipeline import run_audit
from tests.support.datasets import base_rows, contract_frame, write_rows
from tests.support.hostile import damaged_rows


def assert_every_row_accounted(results, written: dict[str, int]) -> None:
    counts = {row[0]: row[1:] for row in results.counts.iter_rows()}
    for table, rows_in in written.items():
        got_in, audited, quarantined = counts[table]
        assert got_in == rows_in, table
        assert audited + quarantined == rows_in, table
    assert results.quarantine["reason"].null_count() == 0
    assert (results.quarantine["reason"].str.len_chars() > 0).all()


def audit_or_refuse(root: Path, out: Path, written: dict[str, int]) -> None:
    """The property: a result with every row accounted for, or one clear refusal."""
    try:
        results = run_audit(root, out)
    except AuditorError as error:
        assert error.exit_code == 2
        assert str(error).strip(), "a refusal says why"
        return
    assert_every_row_accounted(results, written)


@pytest.mark.e2e
@given(rows=damaged_rows())
def test_damaged_values_never_crash_and_never_lose_a_row(tmp_path_factory, rows):
    root = tmp_path_factory.mktemp("hostile")
    written = write_rows(root / "data", rows)
    audit_or_refuse(root / "data", root / "out", written)


@pytest.mark.e2e
@given(
    seat_types=st.lists(st.sampled_from([pl.Int8, pl.Int16, pl.Int64, pl.UInt8]), min_size=2),
    money_as=st.sampled_from(["decimal", "float", "cents"]),
)
def test_mixed_types_across_files_of_one_table(tmp_path_factory, seat_types, money_as):
    root = tmp_path_factory.mktemp("mixed") / "data"
    rows = base_rows()
    written = write_rows(root, {t: r for t, r in rows.items() if t != "wagers"})
    (root / "wagers").mkdir()
    wagers = contract_frame("wagers", rows["wagers"])
    for index, seat_type in enumerate(seat_types):
        part = wagers.with_columns(pl.col("seat").cast(seat_type))
        if index == 1 and money_as == "float":
            part = part.with_columns(pl.col("amount").cast(pl.Float64))
        elif index == 1 and money_as == "cents":
            part = part.with_columns((pl.col("amount") * 100).cast(pl.Int64))
        # Every file holds the same three wagers: duplicates across files are quarantined.
        part.write_parquet(root / "wagers" / f"part{index}.parquet")
    written["wagers"] = wagers.height * len(seat_types)
    try:
        results = run_audit(root, root.parent / "out")
    except AuditorError as error:
        assert money_as != "decimal", str(error)
        assert "amount" in str(error) and "part1.parquet" in str(error)
        return
    assert money_as == "decimal"
    assert_every_row_accounted(results, written)


@pytest.mark.parametrize(
    "damage",
    ["truncated", "not_parquet", "empty_file", "zero_rows", "zero_row_groups", "no_wagers"],
)
def test_broken_files_are_refused_or_audited_whole(tmp_path, damage):
    root = tmp_path / "data"
    written = write_rows(root, base_rows())
    wagers = root / "wagers.parquet"
    if damage == "truncated":
        wagers.write_bytes(wagers.read_bytes()[: wagers.stat().st_size // 2])
    elif damage == "not_parquet":
        wagers.write_text("wager_id,round_id\nW1,R1\n")
    elif damage == "empty_file":
        wagers.write_bytes(b"")
    elif damage == "zero_rows":
        contract_frame("wagers", []).write_parquet(wagers)
        written["wagers"] = 0
    elif damage == "zero_row_groups":
        contract_frame("wagers", []).write_parquet(wagers, row_group_size=1)
        written["wagers"] = 0
    else:
        wagers.unlink()
    try:
        results = run_audit(root, tmp_path / "out")
    except AuditorError as error:
        assert damage in ("truncated", "not_parquet", "empty_file", "no_wagers")
        assert "wagers" in str(error)
        return
    assert damage in ("zero_rows", "zero_row_groups")
    assert_every_row_accounted(results, written)


def test_rounds_out_of_time_order_and_before_1970_are_audited(tmp_path):
    rows = base_rows()
    epoch = datetime(1969, 12, 31, 23, 0, tzinfo=UTC)
    rows["tables"][0]["effective_from"] = epoch - timedelta(days=1)
    rows["shoes"][0]["opened_at"] = epoch
    for index, round_row in enumerate(reversed(rows["rounds"])):
        round_row["dealt_at"] = epoch + timedelta(minutes=index + 1)
        round_row["no_more_bets_at"] = round_row["dealt_at"] - timedelta(seconds=5)
    for wager in rows["wagers"]:
        wager["placed_at"] = epoch - timedelta(seconds=1)
    written = write_rows(tmp_path / "data", rows)
    results = run_audit(tmp_path / "data", tmp_path / "out")
    assert_every_row_accounted(results, written)
    assert results.quarantine.height == 0
