"""The end of a shoe (PRC001, PRC002): at most the hands the pack allows after the round in
which the cover card appeared (INDEX Ambiguity 10), and no round after a void round."""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import AFTER_COVER_FRAME, AFTER_VOID_FRAME, VOID_ROUND_FRAME
from auditor.findings.words import counted
from auditor.procedures.frames import (
    counted_hand_keys,
)

LAST_HAND_CHECKS = CheckSet()
VOID_CHECKS = CheckSet()
# On each void round itself (VOID_CHECKS report the round dealt after a shoe's first).
VOID_CARDS_CHECKS = CheckSet()


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
        subject="the last hand",
        rules=("procedures.last_hand_after_cover",),
        what="After the round in which the cover card appeared (the first round with "
        '`cover_card_drawn`), the hand is completed, "last hand" is announced and one more hand'
        " is dealt; then the shoe ends. Hands are the round kinds the pack counts: `regular`, "
        "and `free` at midi; `simulated` rounds only dispose of cards (INDEX Ambiguity 10). The"
        " first hand beyond the one allowed is reported, with the count. Chemin de Fer has no "
        "last-hand rule (INDEX Ambiguity 5).",
        why="Dealing on into the cards behind the cover card lets the end of the shoe be "
        "played by someone who has counted it down.",
        example="The cover card came out in round 56; rounds 57 and 58 were both dealt.",
        frame=AFTER_COVER_FRAME,
        reads=column_names(
            "after_cover_nos first_cover_no last_hand_after_cover_citation "
            "last_hand_after_cover_hands_after"
        ),
    )
)
def _hand_after_last_hand() -> Violation:
    dealt = pl.col("after_cover_nos").list.len()
    hands_after = pl.col("last_hand_after_cover_hands_after")
    return Violation(
        when=dealt > hands_after,
        citation=pl.col("last_hand_after_cover_citation"),
        expected=pl.format(
            "{} after round {}", counted(hands_after, "hand", "hands"), "first_cover_no"
        ),
        logged=counted(dealt, "hand", "hands"),
        message=pl.format(
            "the cover card came out in round {}; round {} is the {} hand after it, and only "
            "{} more may be dealt ({} dealt after it)",
            pl.col("first_cover_no"),
            pl.col("after_cover_nos").list.get(hands_after, null_on_oob=True),
            _ordinal(hands_after + 1),
            hands_after,
            counted(dealt, "hand", "hands"),
        ),
    )


@VOID_CHECKS.check(
    Check(
        code="PRC002",
        name="RoundDealtAfterVoidRound",
        title="A round was dealt from the shoe after a void round",
        severity="medium",
        subject="void rounds",
        rules=("procedures.void_ends_shoe",),
        what="A `void` round (too few cards to complete it) must be the last round of its shoe: "
        "the next round is dealt only with replaced cards, i.e. from a new shoe. The first round of"
        " the same shoe after the void round is reported. Not at Chemin de Fer, whose voids "
        "need not end the shoe (INDEX Ambiguity 7).",
        why="A shoe that could not complete a round has no cards left to deal honestly; rounds "
        "after it were dealt from cards that should have been replaced.",
        example="Round 61 was void, yet round 62 was dealt from the same shoe.",
        frame=AFTER_VOID_FRAME,
        reads=column_names("after_void_count after_void_no first_void_no void_ends_shoe_citation"),
    )
)
def _round_after_void() -> Violation:
    rounds_after = counted(pl.col("after_void_count"), "round", "rounds")
    return Violation(
        when=pl.col("after_void_count") > 0,
        citation=pl.col("void_ends_shoe_citation"),
        expected=pl.format("no round after round {}", pl.col("first_void_no")),
        logged=pl.format("{} after it", rounds_after),
        message=pl.format(
            "round {} was dealt after void round {} in the same shoe ({} after it); "
            "a void round ends the shoe",
            pl.col("after_void_no"),
            pl.col("first_void_no"),
            rounds_after,
        ),
    )


@VOID_CARDS_CHECKS.check(
    Check(
        code="SHO013",
        name="VoidRoundWithCardsLeft",
        title="A round logged void although the shoe still held cards",
        severity="high",
        subject="void rounds: insufficient cards to complete the round",
        rules=("procedures.void_ends_shoe",),
        what="With a card-reading shoe, a `void` round (too few cards to complete it) takes "
        "the shoe's last cards: its hands end where `card_sequence` ends. A void round "
        "after which the sequence still holds cards could have been dealt on; each such "
        "round, the shoe's first void round or a later one, is reported on the round. Not "
        "at Chemin de Fer, whose §11(a) and §11(j) voids are not for want of cards (INDEX "
        "Ambiguity 7).",
        why="A void returns every wager: declared while cards remain, it undoes a round the "
        "house may have been losing.",
        example="Round 58 logged void with Player 7 and Banker 3 dealt; the reader shows 40 "
        "more cards in the shoe.",
        frame=VOID_ROUND_FRAME,
        reads=column_names("_cards_left round_no shoe_id void_ends_shoe_citation"),
    )
)
def _void_with_cards_left() -> Violation:
    cards_left = pl.col("_cards_left")
    return Violation(
        when=pl.col("_cards_left") > 0,
        citation=pl.col("void_ends_shoe_citation"),
        expected=pl.lit("void only when the shoe runs out of cards"),
        logged=pl.format("{} left in the shoe", counted(cards_left, "card", "cards")),
        message=pl.format(
            "round {} of shoe {} was logged void, yet the reader saw {} after its hands",
            pl.col("round_no"),
            pl.col("shoe_id"),
            counted(cards_left, "more card", "more cards"),
        ),
    )


def after_cover(rounds: pl.LazyFrame, per_shoe: pl.LazyFrame, rules: pl.DataFrame) -> pl.LazyFrame:
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
    counted = pl.concat_str("ruleset", "_after_kind", separator="|").is_in(counted_hand_keys(rules))
    keys = ("table_id", "shoe_id", "ruleset", "first_cover_no", "last_hand_after_cover_hands_after")
    return (
        covered.join(
            per_shoe.filter(pl.col("last_hand_after_cover_hands_after").is_not_null()).select(
                "shoe_id", "table_id", "ruleset", "last_hand_after_cover_hands_after"
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
    """Per shoe with a void round (where the pack ends the shoe there), the rounds after
    its first; None when no shoe has one, so that the rounds are not read again for
    nothing."""
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
    return (
        voided.lazy()
        .select("shoe_id", "first_void_no")
        .join(after, on=["shoe_id", "first_void_no"], how="left")
        .with_columns(pl.col("after_void_count").fill_null(0))
        .join(_ending_void(per_shoe), on="shoe_id", how="inner")
    )


def void_cards_left(
    rounds: pl.LazyFrame, per_shoe: pl.LazyFrame, frame: pl.DataFrame
) -> pl.LazyFrame | None:
    """Per void round of a reader shoe (where the pack ends the shoe there), the cards its
    sequence holds after the round's hands (`_cards_left`); None when no reader shoe has
    one. Every void round, not only a shoe's first: each must have run out of cards."""
    voided = frame.filter(pl.col("reader") & pl.col("first_void_no").is_not_null())
    if voided.height == 0:
        return None
    # A round's place among the shoe's rounds gives where its hands end.
    ends = (
        voided.lazy()
        .select("shoe_id", "seq_len", "burn_count", "round_nos", "hand_ends")
        .explode("round_nos", "hand_ends")
        .select(
            "shoe_id",
            pl.col("round_nos").alias("round_no"),
            (
                pl.col("seq_len").cast(pl.Int64)
                - 1
                - pl.col("burn_count").cast(pl.Int64)
                - pl.col("hand_ends").cast(pl.Int64)
            ).alias("_cards_left"),
        )
    )
    void_rounds = rounds.filter(pl.col("kind") == "void").select("shoe_id", "round_no", "round_id")
    return ends.join(void_rounds, on=["shoe_id", "round_no"], how="inner").join(
        _ending_void(per_shoe), on="shoe_id", how="inner"
    )


def _ending_void(per_shoe: pl.LazyFrame) -> pl.LazyFrame:
    """The shoes whose pack ends the shoe at a void round."""
    return per_shoe.filter(pl.col("void_ends_shoe")).select("shoe_id", "table_id", "ruleset")
