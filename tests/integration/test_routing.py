"""Routing: a time-ordered export (every table in every file) is routed once into files
per partition, and the audit finds exactly what it finds in the table-clustered layout."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from auditor.cli import main
from auditor.input import routing
from auditor.input.partition import partitions
from auditor.input.quarantine import ROW_KEY
from auditor.input.routing import needs_routing, route, routed
from auditor.input.validate import STAGES
from auditor.pipeline import Tally, check_row_accounting, find, run_audit, run_validation
from auditor.simulator.simulate import simulate

TIME_KEYS = {
    "tables": "effective_from",
    "shoes": "opened_at",
    "rounds": "dealt_at",
    "commission_collections": "collected_at",
}


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> tuple[Path, Path]:
    """The same night twice: as the simulator writes it (table by table), and as a
    nightly export by time would, in four files per table, each holding every table."""
    clustered = tmp_path_factory.mktemp("clustered")
    simulate(clustered, rounds=40_000, seed=3, fault_rate=0.05, shoe_fault_rate=0.3)
    # Table by table in small row groups, as an export by table would be.
    for table in ("shoes", "rounds", "wagers"):
        path = clustered / f"{table}.parquet"
        pl.read_parquet(path).write_parquet(path, row_group_size=2_000)
    by_time = tmp_path_factory.mktemp("by_time")
    rounds = pl.read_parquet(clustered / "rounds.parquet")
    dealt = rounds.select("round_id", "dealt_at")
    for table in ("tables", "shoes", "rounds", "wagers", "commission_collections", "royal9_seats"):
        frame = pl.read_parquet(clustered / f"{table}.parquet")
        if table == "wagers":
            frame = frame.join(dealt, on="round_id").sort("dealt_at", "wager_id").drop("dealt_at")
        elif table in TIME_KEYS:
            frame = frame.sort(TIME_KEYS[table])
        folder = by_time / table
        folder.mkdir()
        for index, part in enumerate(frame.iter_slices(n_rows=max(1, -(-frame.height // 4)))):
            part.write_parquet(folder / f"part-{index}.parquet", row_group_size=2_000)
    return clustered, by_time


def test_only_the_time_ordered_layout_is_routed(layouts):
    clustered, by_time = layouts
    for path, expected in ((clustered, False), (by_time, True)):
        validated = run_validation(path)
        groups = partitions(validated.audited, 8_000)
        assert len(groups) > 2
        assert needs_routing(validated.dataset, groups) is expected


def test_routed_partitions_find_exactly_what_the_clustered_layout_finds(layouts, tmp_path):
    clustered, by_time = layouts
    expected = find(run_validation(clustered), partition_rounds=8_000, route_dir=tmp_path / "a")
    assert not (tmp_path / "a").exists(), "a clustered layout is read in place"
    got = find(run_validation(by_time), partition_rounds=8_000, route_dir=tmp_path / "b")
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == sorted(
        ["tables", "shoes", "rounds", "wagers", "commission_collections", "royal9_seats"]
    )
    assert expected.height > 100
    assert got.equals(expected)


def test_surveillance_counts_the_same_night_in_either_layout(layouts):
    clustered, by_time = layouts
    nights = []
    for path in (clustered, by_time):
        tally = Tally()
        find(run_validation(path), partition_rounds=8_000, tally=tally)
        nights.append(tally.night_cells())
    for name, key in (("rounds", "shoe_id"), ("patrons", "patron_id"), ("tables", "table_id")):
        one, other = (getattr(n, name).sort(key, pl.all(), nulls_last=True) for n in nights)
        assert one.height > 0
        assert_frame_equal(one, other, check_exact=False, rel_tol=1e-12)


def test_every_long_stage_reports_progress(layouts, tmp_path):
    """The stages in the order they run, each named, the rows and rounds all counted."""
    _, by_time = layouts
    seen: list[tuple[str, int]] = []
    run_audit(by_time, tmp_path / "out", lambda stage, n: seen.append((stage, n)), 8_000)
    stages = list(dict.fromkeys(stage for stage, _ in seen))
    tables = [s for s in stages if s not in STAGES]
    assert {"tables", "rounds", "wagers"} <= set(tables)
    assert stages[len(tables) :] == ["routing", "audit", "surveillance", "outputs"]
    rounds = pl.scan_parquet(by_time / "rounds" / "*.parquet").select(pl.len()).collect().item()
    assert sum(n for stage, n in seen if stage == "audit") == rounds
    assert sum(n for stage, n in seen if stage == "rounds") == rounds  # validated


def test_routing_in_passes_writes_the_same_rows(layouts, tmp_path):
    """Under a small budget the wagers are routed in several passes, each holding the
    map of some partitions' rounds only: every partition gets the same rows."""
    _, by_time = layouts
    validated = run_validation(by_time)
    groups = partitions(validated.audited, 8_000)
    args = (validated.dataset, validated.audited, validated.quarantine, groups)
    small = 400_000  # the map of 5,000 rounds at a time
    assert len(routing._passes(groups, small)) > 2
    route(*args, tmp_path / "one")
    route(*args, tmp_path / "passes", budget_bytes=small)
    for index in range(len(groups)):
        one, passes = routed(tmp_path / "one", index), routed(tmp_path / "passes", index)
        for table, frame in one.items():
            key = list(ROW_KEY[table])
            expected = frame.collect().sort(key)
            assert expected.height > 0 or table == "royal9_seats"
            assert passes[table].collect().sort(key).equals(expected)


def test_rounds_sharing_a_hash_still_get_exactly_their_own_wagers(layouts, tmp_path, monkeypatch):
    """The map of rounds holds hashes of their ids: where rounds of different partitions
    share one (forced here: five hashes for every round), their wagers go to each, and
    each partition keeps its own only: the same findings, every row counted once."""
    clustered, by_time = layouts
    expected = find(run_validation(clustered), partition_rounds=8_000)
    coarse = (pl.col("round_id").hash(seed=0) % 5).alias(routing.HASH)
    monkeypatch.setattr(routing, "_round_hash", lambda: coarse)
    validated = run_validation(by_time)
    tally = Tally()
    got = find(validated, partition_rounds=8_000, tally=tally, route_dir=tmp_path / "r")
    assert got.equals(expected)
    check_row_accounting(validated, tally.rows)
    assert len(list((tmp_path / "r" / "wagers").glob("*/*.parquet"))) > 2


@pytest.mark.parametrize(("limit", "warned"), [("1MB", True), ("1TB", False)])
def test_a_run_above_its_memory_limit_says_so(layouts, tmp_path, limit, warned):
    clustered, _ = layouts
    args = ["audit", str(clustered), "--out", str(tmp_path / "o"), "--memory-limit", limit]
    result = CliRunner().invoke(main, [*args, "--quiet"])
    assert result.exit_code in (0, 1), result.output
    assert ("above --memory-limit " + limit in result.stderr) is warned
