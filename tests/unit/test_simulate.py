"""Tests of the test-data simulator.

The simulated data is checked against a small, independent plain-Python statement of
the regulations (`Checker`, in tests/support/checker.py), written from the regulation
texts and INDEX.md and not from the simulator's code: on clean data it must find
nothing, and on faulted data it must find something in exactly the rounds and shoes
that the fault key names.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from auditor.contract import BETS, TABLES
from auditor.simulator.faults import FAMILIES, MONEY_FAULTS
from auditor.simulator.settle import commission
from auditor.simulator.simulate import simulate
from tests.support.checker import FILES, SYMPTOMS, Checker, expected_vig

# -- fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clean")
    simulate(out, 2500, seed=11)
    return out


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("faulty")
    summary = simulate(out, 3000, seed=5, fault_rate=0.2)
    return out, summary


# -- tests ------------------------------------------------------------------------------


def test_same_seed_same_bytes_other_seed_other_data(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    simulate(a, 400, seed=3, fault_rate=0.1)
    simulate(b, 400, seed=3, fault_rate=0.1)
    simulate(c, 400, seed=4, fault_rate=0.1)
    for name in FILES:
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes(), name
    assert (a / "rounds.parquet").read_bytes() != (c / "rounds.parquet").read_bytes()
    assert (a / "wagers.parquet").read_bytes() != (c / "wagers.parquet").read_bytes()


def test_every_contract_column_and_dtype_in_order(clean: Path) -> None:
    for table, columns in TABLES.items():
        schema = pl.read_parquet_schema(clean / f"{table}.parquet")
        assert list(schema) == list(columns), table
        for name, (dtype, nullable) in columns.items():
            assert schema[name] == dtype, (table, name)
            if not nullable:
                assert pl.read_parquet(clean / f"{table}.parquet")[name].null_count() == 0


def test_clean_data_breaks_no_rule(clean: Path) -> None:
    assert Checker(clean).run() == []
    assert pl.read_parquet(clean / "fault_key.parquet").height == 0


def test_clean_data_covers_the_floor(clean: Path) -> None:
    tables = pl.read_parquet(clean / "tables.parquet")
    assert set(tables["ruleset"]) == {
        "ma-baccarat",
        "ma-midi-baccarat",
        "md-mini-baccarat",
        "ma-chemin-de-fer",
    }
    assert tables["table_id"].is_duplicated().any()  # a later options row
    assert set(tables["dragon_bonus_paytable"].drop_nulls()) == {"A", "B", "C"}
    rounds = pl.read_parquet(clean / "rounds.parquet")
    assert rounds.height == 2500
    assert {"regular", "free", "simulated", "void"} <= set(rounds["kind"])
    assert rounds["discarded_after"].drop_nulls().len() > 0
    assert set(rounds["ez_event"].drop_nulls()) == {"dragon7", "panda8"}
    wagers = pl.read_parquet(clean / "wagers.parquet")
    assert set(wagers["bet"]) == set(BETS)  # every bet type of the contract is placed
    assert set(wagers["call"].drop_nulls()) == {"suivi", "banco", "partial"}
    assert wagers["rollover"].drop_nulls().len() > 0
    assert wagers["patron_id"].null_count() > 0
    assert (wagers["amount"] * 100 % 100 != 0).any()  # amounts with cents
    assert pl.read_parquet(clean / "commission_collections.parquet").height > 0
    shoes = pl.read_parquet(clean / "shoes.parquet")
    assert shoes["card_sequence"].null_count() > 0


def test_void_rounds_end_their_shoe_with_the_cards_that_were_left(clean: Path) -> None:
    rounds = pl.read_parquet(clean / "rounds.parquet")
    void = rounds.filter(pl.col("kind") == "void")
    hand = pl.col("player_cards").list.len() + pl.col("banker_cards").list.len()
    assert void.filter(hand < 4).height > 0  # short hands, as the shoe ran out
    last = rounds.group_by("shoe_id").agg(pl.col("round_no").max())
    assert void.join(last, on=["shoe_id", "round_no"], how="anti").height == 0
    wagers = pl.read_parquet(clean / "wagers.parquet").join(void, on="round_id", how="semi")
    assert wagers.height > 0
    assert set(wagers["result"]) == {"push"}


def _first_holder_is_the_last_loser(rounds: pl.DataFrame, seat: str) -> pl.DataFrame:
    """Shoes whose first regular round is held by the seat that held the previous shoe's
    last regular round of the table, which the Banker's Hand lost."""
    regular = rounds.filter(pl.col("kind") == "regular").sort("table_id", "dealt_at")
    ends = regular.group_by("shoe_id", maintain_order=True).agg(
        pl.col("table_id").first(),
        pl.col(seat).first().alias("first_seat"),
        pl.col(seat).last().alias("last_seat"),
        (pl.col("outcome").last() == "player").alias("last_lost"),
    )
    previous = [pl.col(c).shift(1).over("table_id") for c in ("last_seat", "last_lost")]
    return ends.with_columns(previous[0].alias("prev_seat"), previous[1].alias("prev_lost")).filter(
        pl.col("prev_lost") & (pl.col("prev_seat") == pl.col("first_seat"))
    )


def test_a_new_shoe_may_go_to_the_seat_that_lost_the_last_round(tmp_path: Path) -> None:
    # INDEX Ambiguity 8: a new shoe starts a new selection; clean data exercises the case.
    simulate(tmp_path, 20_000, seed=2)
    rounds = pl.read_parquet(tmp_path / "rounds.parquet")
    assert _first_holder_is_the_last_loser(rounds, "curator_seat").height > 0
    assert _first_holder_is_the_last_loser(rounds, "banker_seat").height > 0


def test_free_and_simulated_rounds_have_no_wagers(clean: Path) -> None:
    rounds = pl.read_parquet(clean / "rounds.parquet")
    wagers = pl.read_parquet(clean / "wagers.parquet")
    irregular = rounds.filter(pl.col("kind").is_in(["free", "simulated"]))
    assert irregular.height > 0
    assert wagers.join(irregular, on="round_id").height == 0


@pytest.mark.parametrize(
    ("won", "pct", "rounding", "owed"),
    [
        (100, 5, True, 25),
        (1010, 5, True, 75),
        (1010, 5, False, 51),
        (10000, 5, True, 500),
        (2000, 5, True, 100),
        (2100, 5, True, 125),
        (100, 4, True, 20),
        (12345, 4, False, 494),
    ],
)
def test_commission_examples(won: int, pct: int, rounding: bool, owed: int) -> None:
    assert commission(won, pct, rounding) == owed


def test_commission_rounds_up_to_the_step() -> None:
    for won in range(1, 20_000, 7):
        for pct, unit in ((5, 25), (4, 20)):
            vig = commission(won, pct, True)
            assert vig % unit == 0
            assert 0 <= vig - Fraction(won * pct, 100) < unit
            assert commission(won, pct, False) == expected_vig(won, pct, False)


def test_fault_key_covers_many_kinds_with_valid_ids(faulty) -> None:
    out, summary = faulty
    key = pl.read_parquet(out / "fault_key.parquet")
    assert key.height == summary.total_faults > 300
    assert len(set(key["fault"])) >= 24
    assert set(key["fault"]) <= set(FAMILIES)
    assert all(FAMILIES[k] == f for k, f in key.select("fault", "family").iter_rows())
    ids = {
        "round_id": set(pl.read_parquet(out / "rounds.parquet")["round_id"]),
        "wager_id": set(pl.read_parquet(out / "wagers.parquet")["wager_id"]),
        "shoe_id": set(pl.read_parquet(out / "shoes.parquet")["shoe_id"]),
        "table_id": set(pl.read_parquet(out / "tables.parquet")["table_id"]),
    }
    for column, known in ids.items():
        assert set(key[column].drop_nulls()) <= known, column
    money = key.filter(pl.col("fault").is_in(list(MONEY_FAULTS)))
    assert money["impact"].null_count() == 0 and (money["impact"] != 0).all()
    assert key.filter(~pl.col("fault").is_in(list(MONEY_FAULTS)))["impact"].null_count() == (
        key.height - money.height
    )


def test_every_fault_kind_has_a_symptom() -> None:
    assert set(SYMPTOMS) == set(FAMILIES)


def test_each_fault_breaks_exactly_its_rule_where_keyed(faulty) -> None:
    out, _ = faulty
    found: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    for code, shoe, rnd, _ in Checker(out).run():
        found[(shoe, rnd)].add(code)
    expected: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    key = pl.read_parquet(out / "fault_key.parquet")
    shoes = pl.read_parquet(out / "shoes.parquet")
    readers = set(shoes.filter(pl.col("card_sequence").is_not_null())["shoe_id"])
    for fault, table, shoe, rnd in key.select(
        "fault", "table_id", "shoe_id", "round_id"
    ).iter_rows():
        if shoe is None:  # a table fault
            expected[(table, None)].add(SYMPTOMS[fault])
        elif fault == "foreign_card":
            expected[(shoe, None)].add("card_count")
            if shoe in readers:  # the hand no longer matches what the reader saw
                expected[(shoe, rnd)].add("sequence")
        else:
            expected[(shoe, rnd)].add(SYMPTOMS[fault])
    assert dict(found) == dict(expected)


def test_progress_counts_every_round_and_zero_rounds_write_empty_files(tmp_path: Path) -> None:
    seen: list[int] = []
    summary = simulate(tmp_path / "p", 2345, seed=1, progress=seen.append)
    assert sum(seen) == 2345 == summary.rows["rounds"]
    empty = simulate(tmp_path / "e", 0, seed=1)
    assert empty.rows["rounds"] == empty.rows["fault_key"] == 0
    assert pl.read_parquet(tmp_path / "e" / "fault_key.parquet").height == 0
    assert pl.read_parquet(tmp_path / "e" / "tables.parquet").height > 0
