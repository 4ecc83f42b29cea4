"""Shared pieces of the shoe and procedure stage: reading the packs' procedures, the rounds
of a table in dealing order, and how intermediate frames are collected (money in cents is
`auditor.money`'s, as everywhere).

Checks read the packs through their table form as its rules are in force
(`PackTables.rulesets_in_force`, passed as `rules`: one row per ruleset, null where the
ruleset has no such rule or switches it off) and never branch on a ruleset's name.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from auditor.codes import names_of
from auditor.contract import OUTCOMES
from auditor.findings.table import NO_ID
from auditor.input.partition import ROUND_ROW
from auditor.money import cents
from auditor.packs.model import SEAT_COLUMNS

# A round's row among rounds put in dealing order (`in_deal_order`): unique, an integer.
HELD_ROW = "_held_row"

# The words a message uses for the holder of the shoe, by the pack's `deals.by`.
HOLDER_WORDS = {"curator": "the curator", "banker": "the Banker", "dealer": "the dealer"}


def counted_hand_keys(rules: pl.DataFrame) -> list[str]:
    """Keys "ruleset|kind" of the rounds counted as hands after the cover card (Ambiguity
    10), where the last hand rule is in force (`rules`: `PackTables.rulesets_in_force`)."""
    return _keys(rules, "last_hand_after_cover_counted_kinds")


def suivi_keys(rules: pl.DataFrame) -> list[str]:
    """Keys "ruleset|call" of the calls that qualify a losing participant for Suivi."""
    return _keys(rules, "suivi_qualifying_calls")


def _keys(rules: pl.DataFrame, column: str) -> list[str]:
    pairs = rules.select("ruleset", column).explode(column).drop_nulls()
    return sorted(f"{ruleset}|{value}" for ruleset, value in pairs.iter_rows())


def holder_words() -> pl.Expr:
    """Over `rules`: the words for who holds the shoe, by the pack's `deals.by`."""
    return pl.col("deals_by").replace_strict(HOLDER_WORDS, default=None, return_dtype=pl.String)


def rulesets_with(rules: pl.DataFrame, column: str) -> list[str]:
    """The rulesets whose pack gives `column` (a citation: the rule exists there)."""
    return sorted(rules.filter(pl.col(column).is_not_null())["ruleset"].to_list())


def ids(round_id: pl.Expr = NO_ID, wager_id: pl.Expr = NO_ID) -> dict[str, pl.Expr]:
    """The id columns of a finding: table and shoe always, round and wager when named."""
    return {
        "table_id": pl.col("table_id"),
        "shoe_id": pl.col("shoe_id"),
        "round_id": round_id,
        "wager_id": wager_id,
    }


def citations(
    rules: pl.DataFrame, *columns: str | pl.Expr
) -> Callable[[pl.LazyFrame], pl.LazyFrame]:
    """An `emit` enrichment: the pack's citations (and words) for the flagged rows only."""
    cites = rules.lazy().select("ruleset", *columns)
    return lambda flagged: flagged.join(cites, on="ruleset", how="left")


def materialize(*frames: pl.LazyFrame) -> list[pl.DataFrame]:
    """Collect intermediate frames that several check sets read (see `procedures`), in one
    `collect_all` so that independent ones run side by side.

    Rechunked: on a collected frame of several chunks, the streaming engine has panicked
    ("assertion failed: i < self.len()" in a string kernel) formatting messages after a
    filter (polars 2.1); one chunk avoids it.
    """
    return [frame.rechunk() for frame in pl.collect_all(frames)]


# Shoes in dealing order: table by table, as they opened (the id breaks a tie).
SHOE_ORDER = ("table_id", "opened_at", "shoe_id")


def shoe_order(shoes: pl.LazyFrame) -> pl.LazyFrame:
    """Shoes numbered in dealing order (`SHOE_ORDER`)."""
    return shoes.select(*SHOE_ORDER).sort(*SHOE_ORDER).with_row_index("_shoe_order")


def beside(column: str, within: str, steps: int = 1) -> pl.Expr:
    """`column` of the row `steps` rows before (1) or after (-1) in a frame in order, where
    that row has the same `within` (the table, the shoe); null at the edges of a group."""
    same = pl.col(within).shift(steps) == pl.col(within)
    return pl.when(same).then(pl.col(column).shift(steps))


def deal_order(shoes: pl.LazyFrame) -> pl.Expr:
    """A round's place in dealing order as one integer: its shoe's place (`shoe_order`)
    above, `round_no` (validated at least 1) below. Null for a round whose shoe is not in
    `shoes`. One integer sorts faster than the pair, and a lookup keeps the rounds' order
    where a join would not."""
    order = shoe_order(shoes).select("shoe_id", "_shoe_order").collect()
    place = pl.col("shoe_id").replace_strict(
        order["shoe_id"], order["_shoe_order"].cast(pl.Int64), default=None
    )
    return place * (1 << 32) + pl.col("round_no").cast(pl.Int64)


def in_deal_order(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` sorted by its `_deal_order` (rows of one place keep their order), each row
    numbered in that order as `HELD_ROW`. Exports list a shoe's rounds in order, so the
    sort, which moves every column, is usually skipped."""
    if not frame.get_column("_deal_order").is_sorted():
        frame = frame.sort("_deal_order", maintain_order=True)
    return frame.with_row_index(HELD_ROW)


def holder_rounds(
    replayed: pl.LazyFrame,
    shoes: pl.LazyFrame,
    rules: pl.DataFrame,
    *applies: str,
) -> pl.LazyFrame:
    """The replayed rounds of the rulesets whose pack gives one of the `applies`
    citations, with their `_deal_order` and the Banker's Hand result (from the replay's
    outcome of the cards). The passing and the Bank checks both read it: it is collected
    and put in dealing order by `in_deal_order`."""
    rulesets = sorted({r for column in applies for r in rulesets_with(rules, column)})
    return (
        # The replay carries each round's ruleset: a filter, not a join with the options.
        replayed.filter(pl.col("ruleset").is_in(rulesets))
        .select(
            "table_id",
            "shoe_id",
            "round_id",
            ROUND_ROW,
            "round_no",
            "kind",
            "ruleset",
            *SEAT_COLUMNS,
            cents("banker_bid").alias("_bid"),
            "player_final",
            "banker_final",
            names_of(pl.col("expected_outcome_code"), OUTCOMES).alias("outcome"),
            deal_order(shoes).alias("_deal_order"),
        )
        .filter(pl.col("_deal_order").is_not_null())
    )
