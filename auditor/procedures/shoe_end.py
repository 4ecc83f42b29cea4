"""The end of a shoe (PRC001, PRC002): at most the hands the pack allows after the round in
which the cover card appeared (INDEX Ambiguity 10), and no round after a void round."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation
from auditor.packs.model import RulePack
from auditor.procedures.frames import (
    counted_hand_keys,
)

LAST_HAND_CHECKS = CheckSet()
VOID_CHECKS = CheckSet()


def _ordinal(n: pl.Expr) -> pl.Expr:
    suffix = (
        pl.when(((n % 100) >= 11) & ((n % 100) <= 13))
        .then(pl.lit("th"))
        .when(n % 10 == 1)
        .then(pl.lit("st"))
        .when(n % 10 == 2)
        .then(pl.lit("nd"))
        .when(n % 10 == 3)
        .then(pl.lit("rd"))
        .otherwise(pl.lit("th"))
    )
    return pl.concat_str(n.cast(pl.String), suffix)


@LAST_HAND_CHECKS.check(
    Check(
        code="PRC001",
        name="HandDealtAfterLastHand",
        title="More than one hand dealt after the round in which the cover card appeared",
        severity="medium",
        citation="the last hand (ma-baccarat §10(d), ma-midi-baccarat §9(d), "
        "md-mini-baccarat .09D(3)); not at ma-chemin-de-fer (INDEX Ambiguity 5)",
        what="After the round in which the cover card appeared (the first round with "
        '`cover_card_drawn`), the hand is completed, "last hand" is announced and one more '
        "hand is dealt; then the shoe ends. Hands are the round kinds the pack counts: "
        "`regular`, and `free` at midi; `simulated` rounds only dispose of cards (INDEX "
        "Ambiguity 10). The first hand beyond the one allowed is reported, with the count.",
        why="Dealing on into the cards behind the cover card lets the end of the shoe be "
        "played by someone who has counted it down.",
        example="The cover card came out in round 56; rounds 57 and 58 were both dealt.",
    )
)
def _hand_after_last_hand() -> Violation:
    dealt = pl.col("after_cover_nos").list.len()
    return Violation(
        when=dealt > pl.col("hands_after"),
        citation=pl.col("last_hand_citation"),
        expected=pl.format("{} hand(s) after round {}", pl.col("hands_after"), "first_cover_no"),
        logged=pl.format("{} hands", dealt),
        message=pl.format(
            "the cover card came out in round {}; round {} is the {} hand after it, and only "
            "{} more may be dealt ({} hands dealt after it)",
            pl.col("first_cover_no"),
            pl.col("after_cover_nos").list.get(pl.col("hands_after"), null_on_oob=True),
            _ordinal(pl.col("hands_after") + 1),
            pl.col("hands_after"),
            dealt,
        ),
    )


@VOID_CHECKS.check(
    Check(
        code="PRC002",
        name="RoundDealtAfterVoidRound",
        title="A round was dealt from the shoe after a void round",
        severity="medium",
        citation="void rounds (ma-baccarat §15(e), ma-midi-baccarat §13(e), md-mini-baccarat "
        ".13E(2)); not at ma-chemin-de-fer, whose voids need not end the shoe (Ambiguity 7)",
        what="A `void` round (too few cards to complete it) must be the last round of its shoe: "
        "the next round is dealt only with replaced cards, i.e. from a new shoe. The first "
        "round of the same shoe after the void round is reported.",
        why="A shoe that could not complete a round has no cards left to deal honestly; rounds "
        "after it were dealt from cards that should have been replaced.",
        example="Round 61 was void, yet round 62 was dealt from the same shoe.",
    )
)
def _round_after_void() -> Violation:
    return Violation(
        when=pl.col("after_void_count") > 0,
        citation=pl.col("void_citation"),
        expected=pl.format("no round after round {}", pl.col("first_void_no")),
        logged=pl.format("{} round(s) after it", pl.col("after_void_count")),
        message=pl.format(
            "round {} was dealt after void round {} in the same shoe ({} round(s) after it); "
            "a void round ends the shoe",
            pl.col("after_void_no"),
            pl.col("first_void_no"),
            pl.col("after_void_count"),
        ),
    )


def after_cover(
    rounds: pl.LazyFrame, per_shoe: pl.LazyFrame, packs: Mapping[str, RulePack]
) -> pl.LazyFrame:
    """Per shoe, the hands (the kinds the pack counts) dealt after the round in which the
    cover card appeared. The rounds after it are those logged with `cover_card_drawn`
    ("the cover card appeared before or during this round"); a reader shoe whose flag
    contradicts the card sequence is SHO012's finding."""
    rn = pl.col("round_no")
    later = rn > rn.min()
    covered = (
        rounds.filter(pl.col("cover_card_drawn"))
        .select("shoe_id", "round_id", "round_no", "kind")
        .group_by("shoe_id")
        .agg(
            rn.min().alias("first_cover_no"),
            *(
                pl.col(c).filter(later).alias(f"_after_{c}")
                for c in ("round_no", "round_id", "kind")
            ),
        )
    )
    columns = ("_after_round_no", "_after_round_id", "_after_kind")
    counted = pl.concat_str("ruleset", "_after_kind", separator="|").is_in(counted_hand_keys(packs))
    keys = ("table_id", "shoe_id", "ruleset", "first_cover_no", "hands_after")
    return (
        covered.join(
            per_shoe.filter(pl.col("hands_after").is_not_null()).select(
                "shoe_id", "table_id", "ruleset", "hands_after"
            ),
            on="shoe_id",
            how="inner",
        )
        .explode(*columns)
        .filter(counted)
        .group_by(*keys)
        .agg(
            pl.col("_after_round_no").sort().alias("after_cover_nos"),
            pl.col("_after_round_id").sort_by("_after_round_no").alias("after_cover_ids"),
        )
    )


def after_void(
    rounds: pl.LazyFrame, per_shoe: pl.LazyFrame, frame: pl.DataFrame
) -> pl.LazyFrame | None:
    """Per shoe with a void round (where the pack ends the shoe there), the rounds after it;
    None when no shoe has one, so that the rounds are not read again for nothing."""
    voided = frame.filter(pl.col("first_void_no").is_not_null())
    if voided.height == 0:
        return None
    after = (
        rounds.select("shoe_id", "round_id", "round_no")
        .join(voided.lazy().select("shoe_id", "first_void_no"), on="shoe_id", how="inner")
        .filter(pl.col("round_no") > pl.col("first_void_no"))
        .group_by("shoe_id", "first_void_no")
        .agg(
            pl.col("round_no").min().alias("after_void_no"),
            pl.len().alias("after_void_count"),
            pl.col("round_id").sort_by("round_no").first().alias("after_void_id"),
        )
    )
    return after.join(
        per_shoe.filter(pl.col("void_ends_shoe")).select("shoe_id", "table_id", "ruleset"),
        on="shoe_id",
        how="inner",
    )
