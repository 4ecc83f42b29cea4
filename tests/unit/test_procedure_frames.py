"""The stages' shared pieces: a wager's round found by its number (`partition.of_round`,
which procedures and surveillance read), and rounds put in dealing order by one integer
key."""

from __future__ import annotations

from datetime import datetime

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from auditor.input.partition import ROUND_ROW, of_round, round_bound
from auditor.procedures.frames import HELD_ROW, deal_order, in_deal_order


def test_of_round_gives_each_wager_its_rounds_value_and_null_for_other_rounds():
    rounds = pl.DataFrame({ROUND_ROW: [0, 1, 2, 3], "ruleset": ["a", "b", "c", "d"]})
    keyed = rounds.filter(pl.col(ROUND_ROW).is_in([1, 3]))
    wagers = pl.DataFrame({ROUND_ROW: [3, 0, 1, 1, 2]})
    looked_up = wagers.select(
        of_round(round_bound(rounds), keyed[ROUND_ROW], keyed["ruleset"]).alias("ruleset")
    )
    assert looked_up["ruleset"].to_list() == ["d", None, "b", "b", None]


@given(st.lists(st.integers(0, 40), min_size=1, max_size=60), st.randoms())
def test_of_round_agrees_with_a_join(wager_rounds, random):
    rounds = pl.DataFrame({ROUND_ROW: list(range(41)), "value": [i * 7 for i in range(41)]})
    keyed = rounds.sample(n=random.randrange(0, 42), seed=random.randrange(1000))
    wagers = pl.DataFrame({ROUND_ROW: wager_rounds}).with_row_index("wager")
    joined = wagers.join(keyed, on=ROUND_ROW, how="left").sort("wager")["value"]
    looked_up = wagers.select(of_round(round_bound(rounds), keyed[ROUND_ROW], keyed["value"]))
    assert looked_up.to_series().to_list() == joined.to_list()


def _shoes() -> pl.LazyFrame:
    # Shoe S2 opened before S1 at table T1; T0 sorts before T1.
    return pl.LazyFrame(
        {
            "shoe_id": ["S1", "S2", "S3"],
            "table_id": ["T1", "T1", "T0"],
            "opened_at": [datetime(2026, 1, 1, 12), datetime(2026, 1, 1, 10), datetime(2026, 1, 2)],
        }
    )


def test_rounds_are_put_in_dealing_order_table_by_table_and_shoe_by_shoe():
    rounds = pl.DataFrame(
        {
            "round_id": ["a", "b", "c", "d", "e", "f"],
            "shoe_id": ["S1", "S2", "S3", "S1", "S2", "S9"],
            "round_no": [2, 1, 1, 1, 2, 1],
        }
    )
    keyed = rounds.with_columns(deal_order(_shoes()).alias("_deal_order"))
    # A round whose shoe is unknown has no place in the order.
    assert keyed.filter(pl.col("_deal_order").is_null())["round_id"].to_list() == ["f"]
    ordered = in_deal_order(keyed.drop_nulls("_deal_order"))
    assert ordered["round_id"].to_list() == ["c", "b", "e", "d", "a"]
    assert ordered[HELD_ROW].to_list() == [0, 1, 2, 3, 4]


def test_rounds_already_in_dealing_order_and_rounds_sharing_a_place_keep_their_order():
    rounds = pl.DataFrame(
        {"round_id": ["x", "y", "z"], "shoe_id": ["S2", "S2", "S1"], "round_no": [1, 1, 1]}
    )
    keyed = rounds.with_columns(deal_order(_shoes()).alias("_deal_order"))
    assert in_deal_order(keyed)["round_id"].to_list() == ["x", "y", "z"]
    swapped = keyed[[1, 0, 2]]
    assert in_deal_order(swapped)["round_id"].to_list() == ["y", "x", "z"]
