"""The Rules Submission options in force for each shoe.

`tables` rows are versioned by `effective_from`: a shoe is governed by the latest row
of its table that took effect at or before the shoe opened (contract: "the row
applies to shoes opened at or after it, until the next row of the same table").
"""

from __future__ import annotations

import polars as pl

OPTION_COLUMNS = (
    "ruleset",
    "seats",
    "decks",
    "automated_shuffler",
    "ez_baccarat",
    "tie_pays",
    "commission_percent",
    "commission_rounding",
    "commission_collection",
    "dragon_bonus_paytable",
    "house_money",
    "house_money_rollover_percent",
    "royal9_paytable",
    "free_hands",
)


def shoe_options(shoes: pl.LazyFrame, tables: pl.LazyFrame) -> pl.LazyFrame:
    """One row per shoe: `shoe_id` and the table options in force when it opened."""
    left = shoes.select("shoe_id", "table_id", "opened_at").sort("opened_at")
    right = tables.select(
        "table_id", "effective_from", *(pl.col(c).alias(f"table_{c}") for c in OPTION_COLUMNS)
    ).sort("effective_from")
    return left.join_asof(
        right,
        left_on="opened_at",
        right_on="effective_from",
        by="table_id",
        strategy="backward",
        # Both sides are sorted on the time key just above; per-group order follows.
        check_sortedness=False,
    ).select("shoe_id", *(pl.col(f"table_{c}").alias(c) for c in OPTION_COLUMNS))
