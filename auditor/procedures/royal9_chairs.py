"""The Royal 9 combinations posted at a table's chairs (TBL004), a table finding.

Each chair's Personal King-9 combinations (`royal9_seats`) follow the ruleset's rules for
them (the curator game's §13(i) Table 2, Midi Baccarat's §12(i)): no combination posted at two
chairs, at most `per_seat` at one chair, and where the ruleset wants them non-suited,
a face card and a nine of different suits. The curator game's default Table 2 is checked
when its pack loads; here only the rows a table supplies.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names, discriminated
from auditor.findings.frames import CHAIR_FRAME
from auditor.findings.table import NO_ID
from auditor.packs.tables import PackTables

CHAIR_CHECKS = CheckSet()


def chair_rules(tables: PackTables) -> pl.DataFrame:
    """Per ruleset with Royal 9: how its chairs' combinations are constrained."""
    return tables.rulesets.filter(pl.col("royal9_seat_combinations_citation").is_not_null()).select(
        "ruleset", pl.col("^royal9_seat_combinations_.*$")
    )


@CHAIR_CHECKS.check(
    Check(
        code="TBL004",
        name="Royal9ChairCombinationsNotAllowed",
        title="Royal 9 combinations posted at the chairs break the ruleset's rules for them",
        severity="medium",
        subject="the Personal King-9 combinations",
        rules=("payouts.royal9.seat_combinations",),
        what="At a table offering Royal 9, the `royal9_seats` rows must not post one "
        "combination at two chairs, nor more combinations at a chair than the ruleset "
        "allows (Midi: one), nor a suited combination where the ruleset wants them "
        "non-suited (Midi). One finding per combination or chair at fault, on the table; "
        "a table that offers Royal 9 under two rulesets has its chairs judged under each, "
        "a fault reported once, under the ruleset it offered Royal 9 under first.",
        why="The personal lines pay the player seated at the chair whose combination "
        "appears; a combination posted twice, or too many at one chair, pays progressive "
        "meters to the wrong seat.",
        example="KS9H posted at chairs 2 and 5 of a Midi Royal 9 table.",
        frame=CHAIR_FRAME,
        reads=column_names(
            "_discriminator _expected _problem royal9_seat_combinations_citation table_id"
        ),
    )
)
def _chair_combinations() -> Violation:
    return Violation(
        discriminator=pl.col("_discriminator"),
        when=pl.col("_problem").is_not_null(),
        citation=pl.col("royal9_seat_combinations_citation"),
        expected=pl.col("_expected"),
        logged=pl.col("_problem"),
        message=pl.format("table {}: {}", pl.col("table_id"), pl.col("_problem")),
    )


def _problems(seats: pl.LazyFrame) -> pl.LazyFrame:
    """One row per fault under each ruleset the table offers Royal 9 under: a combination
    at several chairs, too many at a chair, a suited combination where none may be."""
    repeated = (
        seats.filter(pl.col("royal9_seat_combinations_unique"))
        .group_by("table_id", "ruleset", "combo")
        .agg(pl.col("seat").unique().sort().cast(pl.String).alias("_seats"))
        .filter(pl.col("_seats").list.len() > 1)
        .select(
            "table_id",
            "ruleset",
            pl.format("{} posted at chairs {}", "combo", pl.col("_seats").list.join(", ")).alias(
                "_problem"
            ),
            pl.lit("each combination at one chair").alias("_expected"),
            discriminated(combination=pl.col("combo")).alias("_discriminator"),
        )
    )
    per_seat = pl.col("royal9_seat_combinations_per_seat")
    crowded = (
        seats.filter(per_seat.is_not_null())
        .group_by("table_id", "ruleset", "seat", per_seat)
        .agg(pl.col("combo").unique().sort().alias("_combos"))
        .filter(pl.col("_combos").list.len() > per_seat)
        .select(
            "table_id",
            "ruleset",
            pl.format(
                "{} combinations at chair {}: {}",
                pl.col("_combos").list.len(),
                "seat",
                pl.col("_combos").list.join(", "),
            ).alias("_problem"),
            pl.format("at most {} per chair", per_seat).alias("_expected"),
            discriminated(chair=pl.col("seat")).alias("_discriminator"),
        )
    )
    same_suit = pl.col("combo").str.slice(1, 1) == pl.col("combo").str.slice(3, 1)
    suited = seats.filter(~pl.col("royal9_seat_combinations_suited") & same_suit).select(
        "table_id",
        "ruleset",
        pl.format("suited {} at chair {}", "combo", "seat").alias("_problem"),
        pl.lit("a face card and a nine of different suits").alias("_expected"),
        discriminated(chair=pl.col("seat"), combination=pl.col("combo")).alias("_discriminator"),
    )
    return pl.concat([repeated, crowded, suited], how="vertical_relaxed")


def chair_findings(
    seats: pl.LazyFrame | None, tables: pl.LazyFrame, form: PackTables
) -> list[pl.LazyFrame]:
    """Findings about the chairs' combinations of tables offering Royal 9 (`table_id`).

    The chairs are posted for the table, not for a tables row: a table that offers Royal 9
    under two rulesets in a night has them judged under each, and a fault either finds is
    reported once, under the ruleset the table offered Royal 9 under first."""
    if seats is None:
        return []
    offering = (
        tables.filter(pl.col("royal9_paytable").is_not_null())
        .group_by("table_id", "ruleset")
        .agg(pl.col("effective_from").min().alias("_offered_from"))
        .join(chair_rules(form).lazy(), on="ruleset", how="inner")
    )
    problems = _problems(seats.select("table_id", "seat", "combo").join(offering, on="table_id"))
    frame = (
        problems.join(offering, on=["table_id", "ruleset"], how="inner")
        .sort("table_id", "_discriminator", "_offered_from", "ruleset")
        .unique(["table_id", "_discriminator"], keep="first", maintain_order=True)
    )
    return [
        CHAIR_CHECKS.emit(
            frame,
            {
                "table_id": pl.col("table_id"),
                "shoe_id": NO_ID,
                "round_id": NO_ID,
                "wager_id": NO_ID,
            },
        )
    ]
