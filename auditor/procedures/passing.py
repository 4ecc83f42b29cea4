"""Passing the shoe (PRC003): after the Banker's Hand loses a regular round, the curator
(the curator game) or the Banker (Chemin de Fer) gives up the shoe before the next regular
round of the same shoe (INDEX Ambiguities 8, 9)."""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import PASS_FRAME
from auditor.packs.model import SEAT_COLUMNS
from auditor.procedures.frames import beside

PASS_CHECKS = CheckSet()


@PASS_CHECKS.check(
    Check(
        code="PRC003",
        name="ShoeNotPassedAfterBankerLoss",
        title="Curator or Banker kept the shoe after the Banker's Hand lost",
        severity="medium",
        subject="the mandatory pass",
        rules=("procedures.pass_on_banker_loss",),
        what="When the Banker's Hand loses a regular round dealt by a player (the curator game: "
        "`curator_seat` not null; Chemin de Fer: the Banker at `banker_seat`), the next "
        "regular round of the same shoe must have another seat holding the shoe (in "
        "the curator game the dealer, null, will do). A new shoe starts a new selection (the "
        "curator game's §7(b) offers it to seat 1 first, Chemin de Fer's §4(b) auctions "
        "the Bank), so the "
        "seat that lost the last round of a shoe may hold the next shoe. Simulated rounds "
        "neither force nor show a pass, and a tie is not a loss (INDEX Ambiguities 8, 9). "
        "Reported on the round that should have been dealt by someone else.",
        why="Passing the shoe on a loss is how the game spreads the deal; a holder who keeps "
        "it controls the cards round after round.",
        example="The Banker's Hand lost round 12 with the curator at seat 3; round 13 was "
        "again dealt by seat 3.",
        frame=PASS_FRAME,
        reads=column_names(
            "_prev_banker_final _prev_outcome _prev_player_final _prev_round_no _prev_seat "
            "_seat holder pass_on_banker_loss_citation shoe_id"
        ),
    )
)
def _shoe_not_passed() -> Violation:
    return Violation(
        when=(pl.col("_prev_outcome") == "player")
        & pl.col("_prev_seat").is_not_null()
        & (pl.col("_seat") == pl.col("_prev_seat")),
        citation=pl.col("pass_on_banker_loss_citation"),
        expected=pl.format("a seat other than {}", pl.col("_prev_seat")),
        logged=pl.format("seat {}", pl.col("_seat")),
        message=pl.format(
            "{} at seat {} kept the shoe after the Banker's Hand lost round {} of shoe {} "
            "(Player {} against Banker {})",
            pl.col("holder"),
            pl.col("_seat"),
            pl.col("_prev_round_no"),
            pl.col("shoe_id"),
            pl.col("_prev_player_final"),
            pl.col("_prev_banker_final"),
        ),
    )


def pass_frame(held: pl.DataFrame, rules: pl.DataFrame) -> pl.LazyFrame:
    """The regular rounds of tables with a mandatory pass, each beside the regular round
    before it in the same shoe (`held`: `frames.holder_rounds`, in dealing order)."""
    seat = pl.coalesce(
        pl.when(pl.col("pass_on_banker_loss_seat_column") == column).then(pl.col(column))
        for column in SEAT_COLUMNS
    )
    previous = {
        "_prev_seat": "_seat",
        "_prev_outcome": "outcome",
        "_prev_round_no": "round_no",
        "_prev_player_final": "player_final",
        "_prev_banker_final": "banker_final",
    }
    # A lookup, not a join: the rounds stay in dealing order.
    seat_column = pl.col("ruleset").replace_strict(
        rules["ruleset"], rules["pass_on_banker_loss_seat_column"], default=None
    )
    return (
        held.lazy()
        .with_columns(seat_column.alias("pass_on_banker_loss_seat_column"))
        .filter(
            (pl.col("kind") == "regular") & pl.col("pass_on_banker_loss_seat_column").is_not_null()
        )
        .with_columns(seat.alias("_seat"))
        .with_columns(
            beside(column, within="shoe_id").alias(name) for name, column in previous.items()
        )
    )
