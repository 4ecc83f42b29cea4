"""The discards of an irregularity (SHO014): how many cards a round's `discarded_after`
may hold, by the ruleset's procedure (`irregular_discards` in the packs).

The curator game's §15(c)(1), Midi Baccarat's §13(c)(1), Mini Baccarat's .13C(2)(a): the
disclosed card and one undisclosed card, two in all. Chemin de Fer §11(h)(1) discards the
disclosed card and as many cards as its value (a ten-value card: one or ten), §11(h)(2)
two cards, §11(j) a face-up card and as many as its value (a ten-value card read as 0, 1
or 10: INDEX Ambiguity 6). Where the discards sit in the card sequence is SHO011's.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import DISCARD_FRAME
from auditor.findings.words import agreeing, counted
from auditor.packs.tables import PackTables
from auditor.procedures.frames import ids

DISCARD_CHECKS = CheckSet()


def discard_counts(tables: PackTables) -> pl.DataFrame:
    """(ruleset, rank of the first discarded card) -> the numbers of cards allowed, with
    the citation; no row for a ruleset without the procedure."""
    return (
        tables.ranks.select(
            "ruleset", pl.col("rank").alias("_first_rank"), "irregular_discards_allowed"
        )
        .drop_nulls("irregular_discards_allowed")
        .join(
            tables.rulesets.select("ruleset", "irregular_discards_citation"),
            on="ruleset",
            how="left",
        )
    )


@DISCARD_CHECKS.check(
    Check(
        code="SHO014",
        name="DiscardCountWrong",
        title="An irregularity discarded more or fewer cards than its procedure takes",
        severity="medium",
        subject="the irregularity procedures",
        rules=("procedures.irregular_discards",),
        what="A round's `discarded_after` holds as many cards as the ruleset's procedure "
        "puts in the discard: two at the Baccarat games; at Chemin de Fer two, or one plus "
        "the value of the first (disclosed) card, a ten-value card counting 0, 1 or 10 "
        "(INDEX Ambiguity 6).",
        why="Each discarded card leaves the game unseen by the players: discarding more than "
        "the procedure takes changes the cards the next hands are dealt from.",
        example="Round 20 discarded five cards after an exposed Player third card; the "
        "procedure discards two.",
        frame=DISCARD_FRAME,
        reads=column_names(
            "discarded_after irregular_discards_allowed irregular_discards_citation round_no "
            "shoe_id"
        ),
    )
)
def _discard_count_wrong() -> Violation:
    count = pl.col("discarded_after").list.len()
    allowed = pl.col("irregular_discards_allowed")
    cards = counted(count, "card", "cards")
    return Violation(
        when=~allowed.list.contains(count.cast(pl.Int64)),
        citation=pl.col("irregular_discards_citation"),
        # "1 or 2 cards": the noun agrees with the nearest count, the largest.
        expected=pl.format(
            "{} {}",
            allowed.cast(pl.List(pl.String)).list.join(" or "),
            agreeing(allowed.list.max(), "card", "cards"),
        ),
        logged=pl.format("{}: {}", cards, pl.col("discarded_after").list.join(" ")),
        message=pl.format(
            "round {} of shoe {} discarded {} ({}) after an irregularity",
            pl.col("round_no"),
            pl.col("shoe_id"),
            cards,
            pl.col("discarded_after").list.join(" "),
        ),
    )


def discard_findings(
    rounds: pl.LazyFrame, options: pl.LazyFrame, tables: PackTables
) -> pl.LazyFrame:
    """Findings about the number of discarded cards (`round_id` set); rounds without
    discards, nearly all of them, are left out before any join."""
    frame = (
        rounds.filter(pl.col("discarded_after").is_not_null())
        .select("table_id", "shoe_id", "round_id", "round_no", "discarded_after")
        .join(options.select("shoe_id", "ruleset"), on="shoe_id", how="inner")
        .with_columns(
            pl.col("discarded_after").list.first().str.head(1).fill_null("").alias("_first_rank")
        )
        # An empty list discarded nothing; a ruleset without the procedure has no row.
        .join(discard_counts(tables).lazy(), on=["ruleset", "_first_rank"], how="inner")
    )
    return DISCARD_CHECKS.emit(frame, ids(pl.col("round_id")))
