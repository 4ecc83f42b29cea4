"""Routing: a time-ordered export (every table in every file) is routed once into files
per partition, and the audit finds exactly what it finds in the table-clustered layout."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from auditor.cli import main
from auditor.input import router, routing
from auditor.input.load import open_dataset
from auditor.input.partition import Partition, partition_bytes, partitions
from auditor.input.quarantine import ROW_KEY
from auditor.input.router import ROUTE_PREFIX
from auditor.input.routing import needs_routing, route, routed
from auditor.input.validate import STAGES, validate
from auditor.pipeline import Tally, check_row_accounting, find, run_audit, run_validation
from auditor.simulator.simulate import simulate

# A night of the floor's twelve tables (a thousand rounds each), partitions of about two
# tables and row groups of a fraction of one: what routing does at scale, at a size a test
# runs in seconds.
ROUNDS = 12_000
PARTITION_ROUNDS = 2_400
ROW_GROUP = 600

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
    simulate(clustered, rounds=ROUNDS, seed=3, fault_rate=0.05, shoe_fault_rate=0.3)
    # Table by table in small row groups, as an export by table would be.
    for table in ("shoes", "rounds", "wagers"):
        path = clustered / f"{table}.parquet"
        pl.read_parquet(path).write_parquet(path, row_group_size=ROW_GROUP)
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
            part.write_parquet(folder / f"part-{index}.parquet", row_group_size=ROW_GROUP)
    return clustered, by_time


def test_only_the_time_ordered_layout_is_routed(layouts):
    clustered, by_time = layouts
    for path, expected in ((clustered, False), (by_time, True)):
        validated = run_validation(path)
        groups = partitions(validated.audited, PARTITION_ROUNDS)
        assert len(groups) > 2
        assert needs_routing(validated.dataset, groups) is expected


def test_routed_partitions_find_exactly_what_the_clustered_layout_finds(layouts, tmp_path):
    clustered, by_time = layouts
    expected = find(
        run_validation(clustered), partition_rounds=PARTITION_ROUNDS, route_dir=tmp_path / "a"
    )
    assert not (tmp_path / "a").exists(), "a clustered layout is read in place"
    got = find(run_validation(by_time), partition_rounds=PARTITION_ROUNDS, route_dir=tmp_path / "b")
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
        find(run_validation(path), partition_rounds=PARTITION_ROUNDS, tally=tally)
        nights.append(tally.night_cells())
    for name, key in (("rounds", "shoe_id"), ("patrons", "patron_id"), ("tables", "table_id")):
        one, other = (getattr(n, name).sort(key, pl.all(), nulls_last=True) for n in nights)
        assert one.height > 0
        assert_frame_equal(one, other, check_exact=False, rel_tol=1e-12)


def test_every_long_stage_reports_progress(layouts, tmp_path):
    """The stages in the order they run, each named, the rows and rounds all counted."""
    _, by_time = layouts
    seen: list[tuple[str, int]] = []
    run_audit(by_time, tmp_path / "out", lambda stage, n: seen.append((stage, n)), PARTITION_ROUNDS)
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
    groups = partitions(validated.audited, PARTITION_ROUNDS)
    args = (validated.dataset, validated.audited, groups)
    small = 120_000  # the map of 1,500 rounds at a time
    assert len(routing.passes(groups, small)) > 2
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
    expected = find(run_validation(clustered), partition_rounds=PARTITION_ROUNDS)
    coarse = (pl.col("round_id").hash(seed=0) % 5).alias(routing.HASH)
    monkeypatch.setattr(routing, "_round_hash", lambda: coarse)
    validated = run_validation(by_time)
    tally = Tally()
    got = find(validated, partition_rounds=PARTITION_ROUNDS, tally=tally, route_dir=tmp_path / "r")
    assert got.equals(expected)
    check_row_accounting(validated, tally.rows)
    assert len(list((tmp_path / "r" / "wagers").glob("*/*.parquet"))) > 2


@pytest.fixture(scope="module")
def broken_by_time(layouts, tmp_path_factory) -> Path:
    """The time-ordered night with rows validation quarantines: rounds with a card that
    is none, a round id given twice, wagers of no round. Each partition's files hold them
    when validation routes its read, and it leaves them out where it reads them."""
    _, by_time = layouts
    broken = tmp_path_factory.mktemp("broken_by_time")
    rounds = pl.read_parquet(by_time / "rounds" / "*.parquet")
    round_ids = rounds.get_column("round_id")
    bad_cards, twice = round_ids.gather([10, 1_500, 6_000]), round_ids.gather([7, 9_000])
    for table in ("tables", "shoes", "rounds", "wagers", "commission_collections", "royal9_seats"):
        (broken / table).mkdir()
        for path in sorted((by_time / table).glob("*.parquet")):
            frame = pl.read_parquet(path)
            if table == "rounds":
                frame = frame.with_columns(
                    pl.when(pl.col("round_id").is_in(bad_cards.implode()))
                    .then(pl.lit(["XX", "9H"]))
                    .otherwise(pl.col("player_cards"))
                    .alias("player_cards")
                )
                frame = pl.concat([frame, frame.filter(pl.col("round_id").is_in(twice.implode()))])
            elif table == "wagers":
                orphans = frame.head(3).with_columns(
                    pl.concat_str(pl.col("wager_id"), pl.lit("-orphan")).alias("wager_id"),
                    pl.lit("no-such-round").alias("round_id"),
                )
                frame = pl.concat([frame, orphans])
            frame.write_parquet(broken / table / path.name, row_group_size=ROW_GROUP)
    return broken


def test_validation_routes_its_read_and_finds_what_routing_afterwards_finds(broken_by_time):
    """Routed by validation's own read, before the quarantine is known, the partitions
    give the findings, rows held and counts that routing the audited rows afterwards
    gives; the files are validation's, and nothing is routed again."""
    routed = run_validation(broken_by_time, partition_rounds=PARTITION_ROUNDS, route=True)
    afterwards = run_validation(broken_by_time, partition_rounds=PARTITION_ROUNDS)
    assert routed.routed is not None and afterwards.routed is None
    assert len(routed.routed.groups) > 2
    assert routed.quarantine.equals(afterwards.quarantine)
    assert {"rounds", "wagers"} <= set(routed.quarantine.get_column("table"))
    results = []
    for validated in (routed, afterwards):
        tally = Tally()
        results.append((find(validated, partition_rounds=PARTITION_ROUNDS, tally=tally), tally))
    (got, got_tally), (expected, expected_tally) = results
    assert expected.height > 100
    assert got.equals(expected)
    assert got_tally.rows == expected_tally.rows
    check_row_accounting(routed, got_tally.rows)


def test_validation_routes_the_partitions_the_routing_pass_would(broken_by_time, tmp_path):
    """Partition by partition, validation's routed files read as the routing pass's over
    the audited rows: the same rows in the same order, the quarantined ones left out."""
    validated = run_validation(broken_by_time, partition_rounds=PARTITION_ROUNDS, route=True)
    assert validated.routed is not None
    groups = list(validated.routed.groups)
    # Counted before the quarantine, the rounds differ; the tables are the same.
    tables = [group.tables for group in partitions(validated.audited, PARTITION_ROUNDS)]
    assert [group.tables for group in groups] == tables
    route(validated.dataset, validated.audited, groups, tmp_path / "pass")
    quarantine = validated.quarantine
    for index in range(len(groups)):
        got = routed(validated.routed.folder, index, quarantine)
        expected = routed(tmp_path / "pass", index, quarantine)
        for table, frame in expected.items():
            assert_frame_equal(got[table].collect(), frame.collect())


def test_quarantined_rows_are_routed_and_left_out_where_read(broken_by_time):
    """Routed before the quarantine is known, a quarantined round is in its partition's
    files; read, no partition holds it, and every audited round is held once."""
    validated = run_validation(broken_by_time, partition_rounds=PARTITION_ROUNDS, route=True)
    assert validated.routed is not None
    folder, groups = validated.routed.folder, validated.routed.groups
    bad = validated.quarantine.filter(pl.col("table") == "rounds")
    written = pl.read_parquet(folder / "rounds" / "*" / "*.parquet")
    assert written.join(
        bad.select(pl.col("file").alias("_file"), pl.col("row").alias("_row")),
        on=["_file", "_row"],
    ).height == len(bad)
    held = pl.concat(
        [routed(folder, i, validated.quarantine)["rounds"].collect() for i in range(len(groups))]
    )
    audited = validated.audited["rounds"].collect()
    assert held.height == audited.height < written.height
    assert held.sort("round_id").equals(audited.drop("_file", "_row").sort("round_id"))


def test_validation_routes_the_wagers_afterwards_when_the_map_would_not_fit(
    broken_by_time, monkeypatch
):
    """Where the map of every round would pass what validation's ids leave of the budget,
    validation routes the tables keyed by table as it reads them, and the wagers by the
    audited rounds once its ids are let go, in passes within a partition's budget."""
    expected = find(run_validation(broken_by_time), partition_rounds=PARTITION_ROUNDS)
    afterwards: list[int] = []
    route_wagers = router.route_wagers

    def counted(*args, **kwargs) -> None:
        afterwards.append(1)
        route_wagers(*args, **kwargs)

    monkeypatch.setattr(router, "route_wagers", counted)
    budget = partition_bytes(PARTITION_ROUNDS) * 3 // 4
    for map_bytes, routed_afterwards in ((1_000, True), (None, False)):
        afterwards.clear()
        routing = router.Routing(PARTITION_ROUNDS, map_bytes=map_bytes)
        validated = validate(open_dataset(broken_by_time), None, budget, routing=routing)
        assert validated.routed is not None
        assert bool(afterwards) is routed_afterwards
        tally = Tally()
        assert find(validated, partition_rounds=PARTITION_ROUNDS, tally=tally).equals(expected)
        check_row_accounting(validated, tally.rows)


def test_partitions_other_than_those_routed_are_routed_again(broken_by_time, tmp_path):
    """Where the audited rows' partitions are not those validation routed (other tables,
    as a quarantine moving a table across a bound makes them, or another size), the
    night is routed again, and the findings are the same."""
    validated = run_validation(broken_by_time, partition_rounds=PARTITION_ROUNDS, route=True)
    assert validated.routed is not None
    expected = find(validated, partition_rounds=PARTITION_ROUNDS, route_dir=tmp_path / "unused")
    assert not (tmp_path / "unused").exists()
    first, second, *rest = validated.routed.groups
    merged = Partition(first.tables + second.tables, first.rounds + second.rounds)
    moved = replace(validated, routed=replace(validated.routed, groups=(merged, *rest)))
    assert moved.routed is not None and moved.routed.folder_for(rest, PARTITION_ROUNDS) is None
    assert find(moved, partition_rounds=PARTITION_ROUNDS, route_dir=tmp_path / "again").equals(
        expected
    )
    assert (tmp_path / "again" / "wagers").is_dir()


@pytest.mark.e2e
def test_a_run_killed_while_routing_leaves_nothing_a_later_run_reads(layouts, tmp_path):
    """The routed files live in a folder the run claims: killed mid-write, its folder is
    left, and the next run sweeps it and routes into a folder of its own."""
    _, by_time = layouts
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    environment = {**os.environ, "TMPDIR": str(scratch)}
    command = [str(Path(sys.executable).with_name("auditor")), "audit", str(by_time)]
    options = ["--partition-rounds", str(PARTITION_ROUNDS), "--quiet"]
    run = subprocess.Popen([*command, "--out", str(tmp_path / "killed"), *options], env=environment)
    try:
        deadline = time.monotonic() + 120
        while not list(scratch.glob(f"{ROUTE_PREFIX}*/*/*/*.parquet")):
            assert run.poll() is None, "the run ended before it routed a file"
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        run.kill()
        run.wait()
    (left,) = scratch.glob(f"{ROUTE_PREFIX}*")
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "out"), *options], env=environment, check=False
    )
    assert done.returncode in (0, 1)
    assert not left.exists()
    assert not list(scratch.glob(f"{ROUTE_PREFIX}*"))
    expected = find(run_validation(by_time), partition_rounds=PARTITION_ROUNDS)
    assert pl.read_parquet(tmp_path / "out" / "findings.parquet").height == expected.height


def test_the_ids_give_up_what_routing_holds_beside_them(layouts, monkeypatch):
    """One budget for validation's ids and the router's map and unwritten rows: routing
    by time, the ids are held to what the router leaves; table by table, to all of it."""
    clustered, by_time = layouts
    from auditor.input import validate as validation

    budgets: list[int | None] = []
    buckets_for = validation.buckets_for

    def recorded(dataset, budget):
        budgets.append(budget)
        return buckets_for(dataset, budget)

    monkeypatch.setattr(validation, "buckets_for", recorded)
    held: list[int] = []
    router_init = router.Router.__init__

    def kept(self, *args, **kwargs) -> None:
        router_init(self, *args, **kwargs)
        held.append(self.bytes_held)

    monkeypatch.setattr(router.Router, "__init__", kept)
    budget = partition_bytes(PARTITION_ROUNDS) * 3 // 4
    routing = router.Routing(PARTITION_ROUNDS)
    validate(open_dataset(by_time), None, budget, routing=routing)
    assert len(held) == 1 and 0 < held[0] < budget
    assert budgets[0] == budget - held[0]
    budgets.clear()
    validate(open_dataset(clustered), None, budget, routing=routing)
    assert budgets[0] == budget and len(held) == 1


def test_a_night_table_by_table_is_not_routed_by_validation(layouts):
    clustered, _ = layouts
    assert run_validation(clustered, partition_rounds=PARTITION_ROUNDS, route=True).routed is None


@pytest.mark.parametrize(("limit", "warned"), [("1MB", True), ("1TB", False)])
def test_a_run_above_its_memory_limit_says_so(layouts, tmp_path, limit, warned):
    clustered, _ = layouts
    args = ["audit", str(clustered), "--out", str(tmp_path / "o"), "--memory-limit", limit]
    result = CliRunner().invoke(main, [*args, "--quiet"])
    assert result.exit_code in (0, 1), result.output
    assert ("above --memory-limit " + limit in result.stderr) is warned
