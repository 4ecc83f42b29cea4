"""Card checks (SHO009-SHO012): cards seen more often than the decks hold, each round's
place in a card-reading shoe's sequence, and the round in which the cover card appeared.

The rounds are folded once into one row per shoe (`shoe_rounds`): the cards the rounds
took from the shoe, in dealing order, as one string, and where each round's hands end.
Against a card-reading shoe's `card_sequence` the common case, every card where the
reader saw it, is then one string comparison per shoe; only the shoes that fail it are
exploded card by card to find the first card out of place in each round. A shoe whose
rounds match its sequence, after the burn card, holds no card more often than the
sequence does, so card counts are taken from the sequence there and from the logged
cards (burn card, hands, discards) only where there is no reader or no match.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import COUNTED_SHOE_FRAME, COVER_FLAG_FRAME, SEQUENCE_MISMATCH_FRAME
from auditor.procedures.frames import ids, materialize

CARDS_PER_DECK = 52

# Slots of a round's cards in dealing order (contract: P, B, P, B, P3, B3), then discards.
FIRST_FOUR = ("Player's first card", "Banker's first card", "Player's second card")
FOURTH = "Banker's second card"


def _card(column: str, i: int) -> pl.Expr:
    return pl.col(column).list.get(i, null_on_oob=True)


def dealt_text() -> pl.Expr:
    """A round's cards in the order they left the shoe, as one string: P1 B1 P2 B2 P3 B3,
    then the cards discarded after it. Hands hold two or three cards (validation quarantines
    others). String concatenation of single cards, not `concat_list` or list slices: those
    cost two to four times more at a million rounds."""
    return pl.concat_str(
        *(_card(hand, i) for i in (0, 1, 2) for hand in ("player_cards", "banker_cards")),
        pl.col("discarded_after").list.join(""),
        # A missing third card or discard adds nothing; the first four are never missing.
        ignore_nulls=True,
    )


def dealt_list() -> pl.Expr:
    """The same cards as a list (used only on the few shoes whose sequence does not match)."""
    empty = pl.lit([], dtype=pl.List(pl.String))
    player, banker = pl.col("player_cards"), pl.col("banker_cards")
    return pl.concat_list(
        player.list.slice(0, 1),
        banker.list.slice(0, 1),
        player.list.slice(1, 1),
        banker.list.slice(1, 1),
        player.list.slice(2),
        banker.list.slice(2),
        pl.col("discarded_after").fill_null(empty),
    )


def shoe_rounds(rounds: pl.LazyFrame) -> pl.LazyFrame:
    """One row per shoe from its rounds, in `round_no` order: the cards they took from the
    shoe as one string, where each round's hands end, the first round logged with the cover
    card and the first void round."""
    rn = pl.col("round_no")
    hand_cards = (pl.col("player_cards").list.len() + pl.col("banker_cards").list.len()).cast(
        pl.Int32
    )
    discards = pl.col("discarded_after").list.len().fill_null(0).cast(pl.Int32)
    prepared = rounds.select(
        "shoe_id",
        "round_no",
        "kind",
        "cover_card_drawn",
        dealt_text().alias("_dealt"),
        (hand_cards + discards).alias("_taken"),
        discards.alias("_discards"),
    )
    folded = prepared.group_by("shoe_id").agg(
        pl.col("_dealt").sort_by(rn).str.join("").alias("dealt_text"),
        # Cards taken from the shoe through each round's hands (its discards come after).
        (pl.col("_taken").sort_by(rn).cum_sum() - pl.col("_discards").sort_by(rn)).alias(
            "hand_ends"
        ),
        rn.sort().alias("round_nos"),
        rn.filter(pl.col("cover_card_drawn")).min().alias("first_cover_no"),
        rn.filter(pl.col("kind") == "void").min().alias("first_void_no"),
    )
    return folded


# ---- card counts ----------------------------------------------------------------------

CARD_COUNT_CHECKS = CheckSet()


@CARD_COUNT_CHECKS.check(
    Check(
        code="SHO009",
        name="CardSeenTooOften",
        title="A card appears more often than the shoe's decks hold",
        severity="high",
        subject="the deck rule",
        rules=("limits.decks",),
        what="Counting the burn card, every card dealt to a hand and every discarded card of "
        "the shoe, no card (rank and suit) may appear more than `decks` times.",
        why="A card seen once too often did not come from the shoe's decks: a foreign card, a "
        "card brought back from the discards, or a falsified log.",
        example="QS seen 9 times in an 8-deck shoe.",
        frame=COUNTED_SHOE_FRAME,
        reads=column_names("decks decks_citation over_logged"),
    )
)
def _card_seen_too_often() -> Violation:
    return Violation(
        when=pl.col("over_logged").is_not_null(),
        citation=pl.col("decks_citation"),
        expected=pl.format("at most {} of each card", pl.col("decks")),
        logged=pl.col("over_logged"),
        message=pl.format(
            "{} in the burn card, hands and discards; {} decks hold {} of each card",
            pl.col("over_logged"),
            pl.col("decks"),
            pl.col("decks"),
        ),
    )


@CARD_COUNT_CHECKS.check(
    Check(
        code="SHO010",
        name="SequenceExceedsDecks",
        title="The card-reading shoe saw more cards than the decks hold",
        severity="high",
        subject="the deck rule",
        rules=("limits.decks",),
        what="With a card-reading shoe, `card_sequence` may hold at most 52 x decks cards and "
        "no card more than `decks` times.",
        why="The reader saw every card that left the shoe; more cards, or a card too often, "
        "means cards were added to the shoe or the reader log is corrupt.",
        example="An 8-deck shoe whose card_sequence holds 417 cards.",
        frame=COUNTED_SHOE_FRAME,
        reads=column_names("decks decks_citation over_sequence reader seq_len"),
    )
)
def _sequence_exceeds_decks() -> Violation:
    cards = pl.col("decks") * CARDS_PER_DECK
    too_long = pl.col("seq_len") > cards
    return Violation(
        when=pl.col("reader") & (too_long | pl.col("over_sequence").is_not_null()),
        citation=pl.col("decks_citation"),
        expected=pl.format("at most {} cards, {} of each", cards, pl.col("decks")),
        logged=pl.when(too_long)
        .then(pl.format("{} cards", pl.col("seq_len")))
        .otherwise(pl.col("over_sequence")),
        message=pl.format(
            "card_sequence holds {} cards{}; {} decks hold {}, {} of each card",
            pl.col("seq_len"),
            pl.when(pl.col("over_sequence").is_not_null())
            .then(pl.format(" ({})", pl.col("over_sequence")))
            .otherwise(pl.lit("")),
            pl.col("decks"),
            cards,
            pl.col("decks"),
        ),
    )


def _over_cards(cards: pl.LazyFrame, name: str) -> pl.LazyFrame:
    """(shoe_id, decks, card) rows -> shoe_id and "QS seen 9 times, …" for cards over decks."""
    counted = cards.group_by("shoe_id", "decks", "card").agg(pl.len().alias("seen"))
    over = counted.filter(pl.col("seen") > pl.col("decks"))
    return over.group_by("shoe_id").agg(
        pl.format("{} seen {} times", pl.col("card"), pl.col("seen"))
        .sort_by(pl.col("card"))
        .str.join(", ")
        .alias(name)
    )


def _with_card_counts(frame: pl.LazyFrame, shoes: pl.LazyFrame) -> pl.LazyFrame:
    """Add `over_logged` and `over_sequence` (null where no card is over the decks).

    Only shoes that can hold a surplus are exploded: a shoe whose rounds match its
    sequence, starting after the burn card, holds no card more often than the sequence.
    """
    suspect = (
        ~pl.col("reader")
        | ~pl.col("dealt_ok")
        | pl.col("seq_first").ne_missing(pl.col("burn_card"))
        | (pl.col("seq_max") > pl.col("decks"))
    )
    logged = (
        frame.filter(suspect)
        .select(
            "shoe_id",
            "decks",
            pl.concat_str("burn_card", pl.col("dealt_text").fill_null(""))
            .str.extract_all("..")
            .alias("card"),
        )
        .explode("card")
    )
    surplus = frame.filter(pl.col("reader") & (pl.col("seq_max") > pl.col("decks"))).select(
        "shoe_id", "decks"
    )
    sequence = (
        shoes.select("shoe_id", pl.col("card_sequence").alias("card"))
        .join(surplus, on="shoe_id", how="inner")
        .explode("card")
    )
    return frame.join(_over_cards(logged, "over_logged"), on="shoe_id", how="left").join(
        _over_cards(sequence, "over_sequence"), on="shoe_id", how="left"
    )


# ---- round findings from the sequence -------------------------------------------------

SEQUENCE_CHECKS = CheckSet()
COVER_FLAG_CHECKS = CheckSet()


@SEQUENCE_CHECKS.check(
    Check(
        code="SHO011",
        name="CardOutOfSequence",
        title="A round's cards are not the next cards of the card-reading shoe",
        severity="high",
        subject="the dealing order",
        rules=("procedures.deal_order",),
        what="Where `card_sequence` is logged, the burn card and `burn_count` burned cards come "
        "first; then each round, simulated and void rounds too, takes the next cards in the "
        "order P1, B1, P2, B2, P3, B3, followed by its `discarded_after` cards. The first card "
        "of a round that differs from the sequence is reported, with its position. Cards left "
        "undisclosed (the curator game's §15(a)) still take their place in the order.",
        why="The reader records what really left the shoe; a hand that does not match it was "
        "dealt out of order, swapped, or logged falsely.",
        example="Card 57 of the card_sequence is 7H, but the round's Player's second card is QS.",
        frame=SEQUENCE_MISMATCH_FRAME,
        reads=column_names("card deal_order_citation mismatches pos seq_card seq_len slot"),
    )
)
def _card_out_of_sequence() -> Violation:
    read = pl.col("seq_card").fill_null("no card")
    message = (
        pl.when(pl.col("seq_card").is_null())
        .then(
            pl.format(
                "card {} of the card_sequence does not exist (it holds {}); the round's {} is {}",
                pl.col("pos") + 1,
                pl.col("seq_len"),
                pl.col("slot"),
                pl.col("card"),
            )
        )
        .otherwise(
            pl.format(
                "card {} of the card_sequence is {}; the round's {} is {}",
                pl.col("pos") + 1,
                read,
                pl.col("slot"),
                pl.col("card"),
            )
        )
    )
    return Violation(
        when=pl.lit(True),
        citation=pl.col("deal_order_citation"),
        expected=read,
        logged=pl.col("card"),
        message=pl.concat_str(
            message,
            pl.when(pl.col("mismatches") > 1)
            .then(pl.format(" ({} cards of the round differ)", pl.col("mismatches")))
            .otherwise(pl.lit("")),
        ),
    )


def _slot() -> pl.Expr:
    k = pl.col("pos") - pl.col("start")
    p3 = (pl.col("player_cards").list.len() >= 3).cast(pl.Int64)
    b3 = (pl.col("banker_cards").list.len() >= 3).cast(pl.Int64)
    expr = pl.lit("discarded card")
    expr = pl.when((k == 4 + p3) & (b3 == 1)).then(pl.lit("Banker's third card")).otherwise(expr)
    expr = pl.when((k == 4) & (p3 == 1)).then(pl.lit("Player's third card")).otherwise(expr)
    expr = pl.when(k == 3).then(pl.lit(FOURTH)).otherwise(expr)
    for i in (2, 1, 0):
        expr = pl.when(k == i).then(pl.lit(FIRST_FOUR[i])).otherwise(expr)
    return expr


def _failing_shoes(frame: pl.DataFrame) -> pl.DataFrame:
    """Shoes with a reader whose rounds are not, card for card, the sequence after the burn."""
    return frame.filter(pl.col("reader") & ~pl.col("dealt_ok").fill_null(False)).select(
        "shoe_id", "burn_count", "seq_len", "deal_order_citation"
    )


def _sequence_mismatches(
    failing: pl.DataFrame, shoes: pl.LazyFrame, rounds: pl.LazyFrame
) -> pl.LazyFrame:
    """The first card out of place in each round of the shoes whose sequence did not match."""
    failing_shoes = failing.lazy()
    taken = pl.col("_cards").list.len().cast(pl.Int32)
    dealt = (
        rounds.select(
            "table_id",
            "shoe_id",
            "round_id",
            "round_no",
            "player_cards",
            "banker_cards",
            "discarded_after",
        )
        .join(failing_shoes, on="shoe_id", how="inner")
        .with_columns(dealt_list().alias("_cards"))
        .with_columns(
            (
                1
                + pl.col("burn_count")
                + taken.cum_sum().over("shoe_id", order_by="round_no")
                - taken
            ).alias("start")
        )
        .with_columns(
            pl.int_ranges("start", pl.col("start") + taken, dtype=pl.Int32).alias("pos"),
        )
        .explode("_cards", "pos")
        .rename({"_cards": "card"})
    )
    sequence = (
        shoes.select("shoe_id", "card_sequence")
        .join(failing_shoes.select("shoe_id"), on="shoe_id", how="inner")
        .select(
            "shoe_id",
            pl.col("card_sequence").alias("seq_card"),
            pl.int_ranges(0, pl.col("card_sequence").list.len(), dtype=pl.Int32).alias("pos"),
        )
        .explode("seq_card", "pos")
    )
    wrong = dealt.join(sequence, on=["shoe_id", "pos"], how="left").filter(
        pl.col("seq_card").ne_missing(pl.col("card"))
    )
    first = pl.col("pos").min()
    return (
        wrong.group_by("table_id", "shoe_id", "round_id")
        .agg(
            first.alias("pos"),
            pl.len().alias("mismatches"),
            *(
                pl.col(c).sort_by("pos").first()
                for c in ("card", "seq_card", "start", "player_cards", "banker_cards")
            ),
            pl.col("seq_len", "deal_order_citation").first(),
        )
        .with_columns(_slot().alias("slot"))
    )


@COVER_FLAG_CHECKS.check(
    Check(
        code="SHO012",
        name="CoverCardFlagInconsistent",
        title="cover_card_drawn does not match where the cover card lies in the sequence",
        severity="low",
        subject="the last-hand rule",
        rules=("procedures.last_hand_after_cover.cite",),
        what="With a card-reading shoe and `cover_from_back`, the cover card lies in front of "
        "card (length - cover_from_back) of the sequence: it appears in the round whose hands "
        "take that card. The first round logged with `cover_card_drawn` must be that round.",
        why="The last-hand rule runs from the round in which the cover card appeared; a flag "
        "set early or late hides extra hands or ends the shoe early.",
        example="The cover card, 16 cards from the back of 416, was reached in round 57, but "
        "cover_card_drawn is first set on round 59.",
        frame=COVER_FLAG_FRAME,
        reads=column_names(
            "cover_from_back expected_cover_no first_cover_no last_hand_after_cover_citation "
            "seq_len"
        ),
    )
)
def _cover_card_flag_inconsistent() -> Violation:
    # Either round may be missing: no round's hands reach the card, or the flag is never set.
    logged, expected = pl.col("first_cover_no"), pl.col("expected_cover_no")
    return Violation(
        when=pl.lit(True),
        citation=pl.col("last_hand_after_cover_citation"),
        expected=pl.format("round {}", expected).fill_null("never set"),
        logged=pl.format("round {}", logged).fill_null("never set"),
        message=pl.format(
            "the cover card, {} cards from the back of {}, lies before card {} of the "
            "card_sequence, {}; cover_card_drawn is {}",
            pl.col("cover_from_back"),
            pl.col("seq_len"),
            pl.col("seq_len") - pl.col("cover_from_back") + 1,
            pl.format("reached in round {}", expected).fill_null("which no round reached"),
            pl.format("first set on round {}", logged).fill_null("never set"),
        ),
    )


def _cover_flag_shoes(frame: pl.DataFrame) -> pl.DataFrame:
    """Shoes with a reader whose first `cover_card_drawn` round is not the round whose
    hands reach the card behind the cover card, with the round to report."""
    reached = (pl.col("hand_ends") - pl.col("_cover_threshold")).list.eval(pl.element() > 0)
    expected_no = (
        pl.when(reached.list.any())
        .then(pl.col("round_nos").list.get(reached.list.arg_max(), null_on_oob=True))
        .otherwise(None)
    )
    return (
        frame.filter(
            pl.col("reader")
            & pl.col("cover_from_back").is_not_null()
            & pl.col("last_hand_after_cover_citation").is_not_null()
            & pl.col("round_nos").is_not_null()
        )
        .with_columns(expected_no.alias("expected_cover_no"))
        .filter(pl.col("expected_cover_no").ne_missing(pl.col("first_cover_no")))
        .with_columns(pl.min_horizontal("expected_cover_no", "first_cover_no").alias("round_no"))
    )


def _cover_flag_rows(flagged: pl.DataFrame, rounds: pl.LazyFrame) -> pl.LazyFrame:
    ids = rounds.select("shoe_id", "round_no", "round_id")
    return flagged.lazy().join(ids, on=["shoe_id", "round_no"], how="inner")


def card_findings(
    frame: pl.DataFrame, shoes: pl.LazyFrame, rounds: pl.LazyFrame
) -> list[pl.LazyFrame]:
    """Findings about card counts (shoe) and rounds' places in the card sequence (round),
    over the collected shoe frame (`shoe.shoe_frame`)."""
    shoe_ids = ids()
    round_ids = ids(pl.col("round_id"))
    (counted,) = materialize(_with_card_counts(frame.lazy(), shoes))
    found = [CARD_COUNT_CHECKS.emit(counted.lazy(), shoe_ids)]
    # The round-level checks read the rounds again, but only for the rare shoes that fail.
    failing = _failing_shoes(frame)
    if failing.height:
        found.append(SEQUENCE_CHECKS.emit(_sequence_mismatches(failing, shoes, rounds), round_ids))
    misflagged = _cover_flag_shoes(frame)
    if misflagged.height:
        found.append(COVER_FLAG_CHECKS.emit(_cover_flag_rows(misflagged, rounds), round_ids))
    return found
