"""Marker commission (PRC009): at a `marker` table, the commission each seat and patron
owed in a shoe is collected before the table's next shoe opens (INDEX Ambiguity 19 for
the rounding)."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names, discriminated
from auditor.findings.frames import MARKER_FRAME
from auditor.input.partition import ROUND_ROW, of_round
from auditor.money import cents, dollars, usd
from auditor.packs.tables import PackTables
from auditor.procedures.frames import (
    SHOE_ORDER,
    beside,
    rulesets_with,
)

MARKER_CHECKS = CheckSet()


@MARKER_CHECKS.check(
    Check(
        code="PRC009",
        name="MarkerCommissionUncollected",
        title="Marker commission not collected before the next shoe",
        severity="high",
        subject="deferred vig",
        rules=("procedures.marker_collected_before_next_shoe",),
        what="At a `marker` table, all commission a seat and patron owed in a shoe (the sum of "
        "`wagers.commission`) must be collected, in `commission_collections` rows for that "
        "shoe, seat and patron, before the table's next shoe opens. A shortfall no larger "
        "than the difference between rounding each wager and rounding the total is accepted "
        "(INDEX Ambiguity 19). `impact` is the uncollected amount: money the patron kept.",
        why="Marked commission is house money owed on won Banker wagers; left uncollected it "
        "is a loss to the house and a favour to the patron.",
        example="Seat 3 owed $12.50 in a shoe; $5.00 was collected before the next shoe "
        "opened: $7.50 uncollected.",
        frame=MARKER_FRAME,
        reads=column_names(
            "_in_time _late _next_open _owed _tolerance "
            "marker_collected_before_next_shoe_citation patron_id seat"
        ),
    )
)
def _marker_uncollected() -> Violation:
    short = pl.col("_owed") - pl.col("_in_time")
    patron = (
        pl.when(pl.col("patron_id").is_null())
        .then(pl.lit("an unrated patron"))
        .otherwise(pl.format("patron {}", pl.col("patron_id")))
    )
    late = pl.when(pl.col("_late") > 0).then(
        pl.format(" ({} collected after the next shoe opened)", usd(pl.col("_late")))
    )
    deadline = pl.when(pl.col("_next_open").is_null()).then(
        pl.lit(" (no later shoe at this table in the data)")
    )
    return Violation(
        discriminator=discriminated(seat=pl.col("seat"), patron=pl.col("patron_id")),
        when=short > pl.col("_tolerance"),
        citation=pl.col("marker_collected_before_next_shoe_citation"),
        expected=usd(pl.col("_owed")),
        logged=usd(pl.col("_in_time")),
        impact=dollars(short),
        message=pl.concat_str(
            pl.format(
                "seat {}, {}: {} marker commission owed in the shoe, {} collected before the "
                "next shoe; {} uncollected",
                pl.col("seat"),
                patron,
                usd(pl.col("_owed")),
                usd(pl.col("_in_time")),
                usd(short),
            ),
            late.otherwise(pl.lit("")),
            deadline.otherwise(pl.lit("")),
        ),
    )


def _rounding_steps(tables: PackTables) -> pl.DataFrame:
    """The commission rounding step of each percent a ruleset allows."""
    return tables.steps.drop_nulls("commission_rounding_step_cents").select(
        "ruleset",
        pl.col("percent").cast(pl.Int64).alias("commission_percent"),
        pl.col("commission_rounding_step_cents").alias("_step"),
    )


def marker_frame(
    audited: Mapping[str, pl.LazyFrame],
    numbered: pl.DataFrame,
    bound: int,
    options: pl.LazyFrame,
    rules: pl.DataFrame,
    tables: PackTables,
) -> pl.LazyFrame:
    """Per marker shoe, seat and patron: the commission owed and what was collected in
    time (`numbered`: the partition's rounds with their numbers; `bound`: `round_bound`)."""
    rulesets = rulesets_with(rules, "marker_collected_before_next_shoe_citation")
    marker_shoes = (
        options.filter(
            (pl.col("commission_collection") == "marker") & pl.col("ruleset").is_in(rulesets)
        )
        .select(
            "shoe_id",
            "ruleset",
            pl.col("commission_percent").cast(pl.Int64),
            "commission_rounding",
        )
        .join(
            rules.lazy().select("ruleset", "marker_collected_before_next_shoe_citation"),
            on="ruleset",
            how="left",
        )
        .join(_rounding_steps(tables).lazy(), on=["ruleset", "commission_percent"], how="left")
    )
    shoes = (
        audited["shoes"]
        .select(*SHOE_ORDER)
        .sort(*SHOE_ORDER)
        .with_columns(beside("opened_at", within="table_id", steps=-1).alias("_next_open"))
        .join(marker_shoes, on="shoe_id", how="inner")
    )
    marker_rounds = numbered.join(shoes.select("shoe_id").collect(), on="shoe_id", how="semi")
    shoe_of_round = of_round(bound, marker_rounds[ROUND_ROW], marker_rounds["shoe_id"])
    keys = ["shoe_id", "seat", "patron_id"]
    owed = (
        audited["wagers"]
        .filter(pl.col("commission") > 0)
        .select(
            shoe_of_round.alias("shoe_id"),
            "seat",
            "patron_id",
            cents("commission"),
            cents("payout"),
        )
        .filter(pl.col("shoe_id").is_not_null())
        .group_by(keys)
        .agg(
            pl.col("commission").sum().alias("_owed"),
            pl.col("payout").sum().alias("_won"),
        )
    )
    deadline = pl.col("_next_open").is_null() | (pl.col("collected_at") < pl.col("_next_open"))
    collected = (
        audited["commission_collections"]
        .select("shoe_id", "seat", "patron_id", "collected_at", cents("amount"))
        .join(shoes.select("shoe_id", "_next_open"), on="shoe_id", how="inner")
        .group_by(keys)
        .agg(
            pl.col("amount").filter(deadline).sum().alias("_in_time"),
            pl.col("amount").filter(~deadline).sum().alias("_late"),
        )
    )
    # Ambiguity 19: the collection may round the shoe's total once instead of each wager.
    exact = pl.col("_won") * pl.col("commission_percent")  # hundredths of a cent
    step = pl.col("_step") * 100
    once = (
        pl.when(pl.col("commission_rounding"))
        .then((exact + step - 1) // step * pl.col("_step"))
        .otherwise((exact + 50) // 100)
    )
    return (
        owed.join(collected, on=keys, how="left", nulls_equal=True)
        .join(shoes, on="shoe_id", how="inner")
        .with_columns(pl.col("_in_time", "_late").fill_null(0))
        .with_columns(pl.max_horizontal(pl.col("_owed") - once, pl.lit(0)).alias("_tolerance"))
    )
