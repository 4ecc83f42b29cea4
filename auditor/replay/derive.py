"""Stage 3, replay: re-derive every round from its cards (the checks are in `checks`).

The whole stage is polars expressions over whole frames. The rule packs are turned
into one small decision table keyed by (ruleset, Player two-card total, Banker
two-card total, Player's third card or `PLAYER_STOOD`); a single join
brings each round its Player action, Banker decision, the citations and the EZ
announcements its ruleset makes. Each check is then an expression that yields a
finding struct or null, and the findings of all checks come out of one pass.

Wagers are settled against the cards as dealt (contract), so this stage judges the
cards, draws, totals, outcome and announcements only.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import polars as pl

from auditor.codes import code
from auditor.contract import EZ_EVENTS, OUTCOMES
from auditor.packs.game import PLAYER_STOOD, THIRD_CARDS
from auditor.packs.model import RulePack
from auditor.replay.decisions import (
    CARD_SLOTS,
    decision_table,
    event_exprs,
    rank_code,
    rank_value,
)

# ---- replay ------------------------------------------------------------------------

# Decision-table columns every round needs, all booleans: a gather of booleans is
# cheap, a gather of strings for every round is not. The words and citations are
# joined to flagged rows only.
DECISION_FLAGS = (
    "player_must_draw",
    "player_must_stand",
    "banker_draws",
    "player_natural",
    "banker_natural",
    "void_short",
)
DECISION_TEXTS = (
    "player_citation",
    "banker_citation",
    "banker_severity",
    "natural_hand",
    "totals_citation",
    "outcome_citation",
    "ez_citation",
)
BANKER_KEYS = 10 * len(THIRD_CARDS)  # decision keys per Player two-card total
TOTALS_KEYS = 10 * BANKER_KEYS  # decision keys per ruleset
PLAYER_WINS, BANKER_WINS, TIE = (code(o, OUTCOMES) for o in ("player", "banker", "tie"))


def decision_key(ruleset_index: pl.Expr) -> pl.Expr:
    """Dense index into the decision table: ruleset, two-card totals, third card (or stood)."""
    return (
        ruleset_index.cast(pl.Int32) * TOTALS_KEYS
        + pl.col("player_two").cast(pl.Int32) * BANKER_KEYS
        + pl.col("banker_two").cast(pl.Int32) * len(THIRD_CARDS)
        + pl.col("third_key").cast(pl.Int32)
    ).alias("decision_key")


def ordered_decisions(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """The decision table in `decision_key` order, with the key as a column.

    Built once per set of packs (a pack is hashed by its ruleset and digest) rather than
    by every partition's replay and round checks: the table is read, never changed.
    """
    return _ordered_decisions(tuple(packs.items()))


@functools.lru_cache(maxsize=16)
def _ordered_decisions(items: tuple[tuple[str, RulePack], ...]) -> pl.DataFrame:
    packs = dict(items)
    order = {ruleset: i for i, ruleset in enumerate(packs)}
    table = decision_table(packs).with_columns(
        pl.col("ruleset").replace_strict(order, return_dtype=pl.Int32).alias("_ruleset_order")
    )
    keyed = table.with_columns(decision_key(pl.col("_ruleset_order"))).sort("decision_key")
    assert keyed["decision_key"].to_list() == list(range(len(packs) * TOTALS_KEYS))
    return keyed.drop("_ruleset_order")


def replay(
    rounds: pl.LazyFrame, shoe_options: pl.LazyFrame, packs: Mapping[str, RulePack]
) -> pl.LazyFrame:
    """Rounds with their replayed values: card values, counts, totals, decisions, events.

    Every replayed column is a small integer or a boolean (codes into `OUTCOMES` and
    `EZ_EVENTS`); words are for the few flagged rows.
    """
    order = {ruleset: i for i, ruleset in enumerate(packs)}
    options = shoe_options.select(
        "shoe_id",
        "ruleset",
        "ez_baccarat",
        pl.col("ruleset").replace_strict(order, return_dtype=pl.Int8).alias("ruleset_index"),
    )
    # Decoding the card strings is the expensive part: every card's rank is read once,
    # by integer arithmetic over each hand's list; the value table is applied to the
    # three positions afterwards (a gather inside `list.eval` is many times slower).
    ranked = rounds.join(options, on="shoe_id", how="left").with_columns(
        *(
            pl.col(column).list.eval(rank_code(pl.element())).alias(f"_{p}")
            for column, p in CARD_SLOTS
        ),
        pl.col("player_cards").list.len().cast(pl.Int8).alias("player_count"),
        pl.col("banker_cards").list.len().cast(pl.Int8).alias("banker_count"),
    )
    valued = ranked.with_columns(
        rank_value(pl.col(f"_{p}").list.get(i, null_on_oob=True), packs).alias(f"{p}{i + 1}")
        for _, p in CARD_SLOTS
        for i in range(3)
    ).drop("_p", "_b")
    return derive(valued, packs)


def derive(valued: pl.LazyFrame, packs: Mapping[str, RulePack]) -> pl.LazyFrame:
    """From card values p1..p3, b1..b3, counts and `ruleset_index`: totals, decisions, events.

    Split from `replay` so that a test can feed it card values directly.
    """
    zero = pl.lit(0, dtype=pl.Int8)
    totals = valued.with_columns(
        ((pl.col("p1") + pl.col("p2")) % 10).cast(pl.Int8).alias("player_two"),
        ((pl.col("b1") + pl.col("b2")) % 10).cast(pl.Int8).alias("banker_two"),
        ((pl.col("p1") + pl.col("p2") + pl.col("p3").fill_null(zero)) % 10)
        .cast(pl.Int8)
        .alias("player_final"),
        ((pl.col("b1") + pl.col("b2") + pl.col("b3").fill_null(zero)) % 10)
        .cast(pl.Int8)
        .alias("banker_final"),
        pl.when(pl.col("player_count") >= 3)
        .then(pl.col("p3"))
        .otherwise(pl.lit(PLAYER_STOOD, dtype=pl.Int8))
        .alias("third_key"),
    ).with_columns(decision_key(pl.col("ruleset_index")))
    decisions = ordered_decisions(packs)
    events = event_exprs(packs)
    # A gather from the small table is a lookup by position: no hash join over the rounds.
    looked_up = [
        pl.lit(decisions[column]).gather(pl.col("decision_key")).alias(column)
        for column in DECISION_FLAGS
    ]
    expected_event = pl.lit(None, dtype=pl.Int8)
    for name, occurred in events.items():
        announces = decisions["announces"].list.contains(name)
        announced = pl.lit(announces).gather(pl.col("decision_key"))
        expected_event = (
            pl.when(pl.col("ez_baccarat") & occurred & announced)
            .then(pl.lit(code(name, EZ_EVENTS), dtype=pl.Int8))
            .otherwise(expected_event)
        )
    player, banker = pl.col("player_final"), pl.col("banker_final")
    return totals.with_columns(
        *looked_up,
        *(occurred.alias(f"event_{name}") for name, occurred in events.items()),
        pl.when(player > banker)
        .then(pl.lit(PLAYER_WINS, dtype=pl.Int8))
        .when(player < banker)
        .then(pl.lit(BANKER_WINS, dtype=pl.Int8))
        .otherwise(pl.lit(TIE, dtype=pl.Int8))
        .alias("expected_outcome_code"),
        expected_event.alias("expected_ez_code"),
    )
