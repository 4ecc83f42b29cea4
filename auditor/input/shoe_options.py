"""The Rules Submission options in force for each shoe.

`tables` rows are versioned by `effective_from`: a shoe is governed by the latest row
of its table that took effect at or before the shoe opened (contract: "the row
applies to shoes opened at or after it, until the next row of the same table").
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

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


def shoe_options(
    shoes: pl.LazyFrame,
    tables: pl.LazyFrame,
    versions: Sequence[tuple[str, datetime, str]] = (),
) -> pl.LazyFrame:
    """One row per shoe: `shoe_id` and the table options in force when it opened, its
    ruleset the version in force then (`in_force`)."""
    left = shoes.select("shoe_id", "table_id", "opened_at").sort("opened_at")
    right = tables.select(
        "table_id", "effective_from", *(pl.col(c).alias(f"table_{c}") for c in OPTION_COLUMNS)
    ).sort("effective_from")
    options = left.join_asof(
        right,
        left_on="opened_at",
        right_on="effective_from",
        by="table_id",
        strategy="backward",
        # Both sides are sorted on the time key just above; per-group order follows.
        check_sortedness=False,
    ).select("shoe_id", "opened_at", *(pl.col(f"table_{c}").alias(c) for c in OPTION_COLUMNS))
    return in_force(options, "opened_at", versions).drop("opened_at")


def in_force(
    frame: pl.LazyFrame, at: str, versions: Sequence[tuple[str, datetime, str]]
) -> pl.LazyFrame:
    """`frame` with its `ruleset` replaced by the version in force at its column `at`:
    `versions` lists (ruleset, start, pack id) of every later version; before the first
    start, and for a ruleset without versions, the ruleset's own id stays. The rows keep
    their order."""
    if not versions:
        return frame
    moment = frame.collect_schema()[at]
    starts = pl.LazyFrame(
        {
            "ruleset": [ruleset for ruleset, _, _ in versions],
            "_from": [start for _, start, _ in versions],
            "_version": [pack for _, _, pack in versions],
        },
        schema={"ruleset": pl.String, "_from": moment, "_version": pl.String},
    ).sort("_from")
    return (
        frame.with_row_index("_row")
        .sort(at)
        .join_asof(
            starts,
            left_on=at,
            right_on="_from",
            by="ruleset",
            strategy="backward",
            # Both sides are sorted on the time key just above.
            check_sortedness=False,
        )
        .sort("_row")
        .with_columns(pl.coalesce("_version", "ruleset").alias("ruleset"))
        .drop("_row", "_from", "_version")
    )
