"""Stage 5a, shoe checks (SHO): decks, burn, cut, cover card, card counts, card sequence.

Everything here is a handful of whole-frame polars queries. The rounds are folded once
into one row per shoe (`shoe_rounds`): the cards the rounds took from the shoe, in
dealing order, as one string; where each round's cards end; the first round logged with
the cover card. Against a card-reading shoe's `card_sequence` the common case — every
card where the reader saw it — is then a single string comparison per shoe, and only
the shoes that fail it are exploded card by card to find the first card out of place
in each round. A shoe whose rounds match its sequence holds no card more often than
the sequence does, so card counts are taken from the sequence there and from the
logged cards (burn card, hands, discards) only where there is no reader or no match.

Decks, cut, cover card and burn limits come from the pack of the shoe's ruleset, joined
as a small table keyed by ruleset (and automated shuffler); no check names a ruleset.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.checks import Check
from auditor.findings import NO_ID, CheckSet, Violation
from auditor.rulepack import RulePack

CARDS_PER_DECK = 52
CARD_CHARS = 2  # a card is rank then suit (contract)

# Slots of a round's cards in dealing order (contract: P, B, P, B, P3, B3), then discards.
FIRST_FOUR = ("Player's first card", "Banker's first card", "Player's second card")
FOURTH = "Banker's second card"

_RULES_SCHEMA = {
    "ruleset": pl.String(),
    "automated_shuffler": pl.Boolean(),
    "decks_min": pl.Int32(),
    "decks_max": pl.Int32(),
    "decks_citation": pl.String(),
    "table_decks_citation": pl.String(),
    "batches_citation": pl.String(),
    "royal9_decks": pl.List(pl.Int32()),
    "royal9_citation": pl.String(),
    "cut_margin": pl.Int32(),
    "cut_citation": pl.String(),
    "cover_min": pl.Int32(),
    "cover_citation": pl.String(),
    "burn_citation": pl.String(),
    "order_citation": pl.String(),
    "cover_flag_citation": pl.String(),
}


def shoe_rules(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """One row per (ruleset, automated_shuffler): the shoe limits of the pack, with citations.

    With an automated shuffler whose two batches must be equal, each dealing shoe holds
    half of the permitted total (md-mini-baccarat .03B, INDEX Ambiguity 16).
    """
    rows = []
    for pack in packs.values():
        limits, cite = pack.limits, pack.cite
        shuffler = limits.automated_shuffler
        royal9 = limits.royal9
        burn = pack.procedure("burn")
        order = pack.procedure("deal_order")
        last_hand = pack.procedure("last_hand_after_cover")
        for automated in (False, True):
            halves = automated and shuffler.two_batches and shuffler.equal_batches
            total = shuffler.total_decks
            if halves and total is not None:
                low = None if total.min is None else -(-total.min // 2)
                high = None if total.max is None else total.max // 2
                decks_cite = total.cite
            else:
                low, high, decks_cite = limits.decks.min, limits.decks.max, limits.decks.cite
            rows.append(
                {
                    "ruleset": pack.ruleset,
                    "automated_shuffler": automated,
                    "decks_min": low,
                    "decks_max": high,
                    "decks_citation": cite(decks_cite),
                    "table_decks_citation": cite(limits.decks.cite),
                    "batches_citation": cite(shuffler.cite) if halves else None,
                    "royal9_decks": None if royal9 is None else list(royal9.decks),
                    "royal9_citation": None if royal9 is None else cite(royal9.cite),
                    "cut_margin": limits.cut_min_from_either_end.value,
                    "cut_citation": cite(limits.cut_min_from_either_end.cite),
                    "cover_min": limits.cover_min_from_back.value,
                    "cover_citation": cite(limits.cover_min_from_back.cite),
                    "burn_citation": None if burn is None else cite(burn.cite),
                    "order_citation": None if order is None else cite(order.cite),
                    "cover_flag_citation": None if last_hand is None else cite(last_hand.cite),
                }
            )
    return pl.DataFrame(rows, schema=_RULES_SCHEMA)


def burn_rules(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """(ruleset, rank of the burn card) -> cards burned after it, with the citation."""
    rows = [
        (pack.ruleset, rank, value.value, pack.cite(value.cite))
        for pack in packs.values()
        for rank, value in pack.burn_values.items()
    ]
    return pl.DataFrame(
        rows,
        schema={
            "ruleset": pl.String(),
            "burn_rank": pl.String(),
            "burn_value": pl.Int32(),
            "burn_value_citation": pl.String(),
        },
        orient="row",
    )


# ---- the rounds folded per shoe ---------------------------------------------------------


def _card(column: str, i: int) -> pl.Expr:
    return pl.col(column).list.get(i, null_on_oob=True)


def dealt_text() -> pl.Expr:
    """A round's cards in the order they left the shoe, as one string: P1 B1 P2 B2 P3 B3,
    then the cards discarded after it. String concatenation, not `concat_list`: the list
    version costs several times more at a million rounds."""
    return pl.concat_str(
        _card("player_cards", 0),
        _card("banker_cards", 0),
        _card("player_cards", 1),
        _card("banker_cards", 1),
        pl.col("player_cards").list.slice(2).list.join(""),
        pl.col("banker_cards").list.slice(2).list.join(""),
        pl.col("discarded_after").list.join("").fill_null(""),
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


def shoe_rounds(rounds: pl.LazyFrame, counted_keys: list[str]) -> pl.LazyFrame:
    """One row per shoe from its rounds, in `round_no` order.

    `counted_keys` are "ruleset|kind" pairs that count as hands after the cover card
    (the pack's `last_hand_after_cover.counted_kinds`); the procedures stage reads the
    `after_cover_*` and `*void*` columns.
    """
    rn = pl.col("round_no")
    hand_cards = (pl.col("player_cards").list.len() + pl.col("banker_cards").list.len()).cast(
        pl.Int32
    )
    discards = pl.col("discarded_after").list.len().fill_null(0).cast(pl.Int32)
    prepared = rounds.select(
        "shoe_id",
        "round_id",
        "round_no",
        "kind",
        "cover_card_drawn",
        pl.concat_str("ruleset", "kind", separator="|").is_in(counted_keys).alias("_counted"),
        dealt_text().alias("_dealt"),
        (hand_cards + discards).alias("_taken"),
        discards.alias("_discards"),
    )
    cover_no = rn.filter(pl.col("cover_card_drawn")).min()
    after_cover = pl.col("_counted") & (rn > cover_no)
    void_no = rn.filter(pl.col("kind") == "void").min()
    after_void = rn > void_no
    return prepared.group_by("shoe_id").agg(
        pl.col("_dealt").sort_by(rn).str.join("").alias("dealt_text"),
        # Cards taken from the shoe through each round's hands (its discards come after).
        (pl.col("_taken").sort_by(rn).cum_sum() - pl.col("_discards").sort_by(rn)).alias(
            "hand_ends"
        ),
        rn.sort().alias("round_nos"),
        cover_no.alias("first_cover_no"),
        rn.filter(after_cover).sort().alias("after_cover_nos"),
        pl.col("round_id")
        .filter(after_cover)
        .sort_by(rn.filter(after_cover))
        .alias("after_cover_ids"),
        void_no.alias("first_void_no"),
        rn.filter(after_void).min().alias("after_void_no"),
        rn.filter(after_void).len().alias("after_void_count"),
        pl.col("round_id")
        .filter(after_void)
        .sort_by(rn.filter(after_void))
        .first()
        .alias("after_void_id"),
    )


# ---- the shoe frame ---------------------------------------------------------------------


def shoe_frame(
    shoes: pl.LazyFrame,
    options: pl.LazyFrame,
    folded: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> pl.LazyFrame:
    """One row per shoe: its log, the options and pack limits in force, the folded rounds."""
    seq = pl.col("card_sequence")
    decks = pl.col("decks").cast(pl.Int32)
    base = shoes.select(
        "shoe_id",
        "table_id",
        "opened_at",
        decks.alias("decks"),
        pl.col("cut_index").cast(pl.Int32),
        pl.col("cover_from_back").cast(pl.Int32),
        "burn_card",
        pl.col("burn_count").cast(pl.Int32),
        seq.is_not_null().alias("reader"),
        seq.list.len().cast(pl.Int32).alias("seq_len"),
        seq.list.first().alias("seq_first"),
        seq.list.join("").alias("seq_text"),
        seq.list.eval(pl.element().unique_counts().max()).list.first().alias("seq_max"),
    )
    opts = options.select(
        "shoe_id",
        "ruleset",
        pl.col("decks").cast(pl.Int32).alias("table_decks"),
        "automated_shuffler",
        "royal9_paytable",
    )
    framed = (
        base.join(opts, on="shoe_id", how="inner")
        .join(shoe_rules(packs).lazy(), on=["ruleset", "automated_shuffler"], how="left")
        .with_columns(pl.col("burn_card").str.head(1).alias("burn_rank"))
        .join(burn_rules(packs).lazy(), on=["ruleset", "burn_rank"], how="left")
        .join(folded, on="shoe_id", how="left")
        .sort("table_id", "opened_at", "shoe_id")
    )
    same_table = pl.col("table_id").shift(1) == pl.col("table_id")
    start = (1 + pl.col("burn_count")) * CARD_CHARS
    dealt = pl.col("dealt_text").fill_null("")
    return framed.with_columns(
        pl.when(same_table).then(pl.col(c).shift(1)).alias(f"prev_{c}")
        for c in ("decks", "table_decks", "automated_shuffler", "shoe_id")
    ).with_columns(
        (pl.col("seq_text").str.slice(start, dealt.str.len_bytes()) == dealt).alias("dealt_ok"),
        # cover_card_drawn is expected from the round whose hands reach the card behind it.
        (pl.col("seq_len") - pl.col("cover_from_back") - 1 - pl.col("burn_count")).alias(
            "_cover_threshold"
        ),
    )


# ---- shoe checks ------------------------------------------------------------------------

SHOE_CHECKS = CheckSet()
shoe_check = SHOE_CHECKS.check


def _within(value: pl.Expr, low: pl.Expr, high: pl.Expr) -> pl.Expr:
    return (low.is_null() | (value >= low)) & (high.is_null() | (value <= high))


def _range_words(low: pl.Expr, high: pl.Expr, unit: str) -> pl.Expr:
    low_s, high_s = low.cast(pl.String), high.cast(pl.String)
    return (
        pl.when(low.is_not_null() & high.is_not_null() & (low == high))
        .then(pl.format("{} {}", low_s, pl.lit(unit)))
        .when(low.is_not_null() & high.is_not_null())
        .then(pl.format("{} to {} {}", low_s, high_s, pl.lit(unit)))
        .when(low.is_not_null())
        .then(pl.format("at least {} {}", low_s, pl.lit(unit)))
        .otherwise(pl.format("at most {} {}", high_s, pl.lit(unit)))
    )


def _decks_in_range() -> pl.Expr:
    return _within(pl.col("decks"), pl.col("decks_min"), pl.col("decks_max"))


def _royal9_decks_ok() -> pl.Expr:
    return (
        pl.col("royal9_paytable").is_null()
        | pl.col("royal9_decks").is_null()
        | pl.col("royal9_decks").list.contains(pl.col("decks"))
    )


@shoe_check(
    Check(
        code="SHO001",
        name="DecksOutOfRange",
        title="Shoe holds a number of decks the ruleset does not permit",
        severity="medium",
        citation="the deck limits (ma-baccarat §3(a); md-mini-baccarat .03A, .03B with an "
        "automated shuffler; ma-midi-baccarat §3(a); ma-chemin-de-fer §1(a))",
        what="The shoe's `decks` lies outside the ruleset's limits: 6 to 8 at ma-baccarat and "
        "md-mini-baccarat, at least 6 at ma-midi-baccarat and ma-chemin-de-fer. With a "
        "Maryland automated shuffler each shoe is one of two equal batches of 12 to 16 decks "
        "in all, so 6 to 8 (INDEX Ambiguity 16).",
        why="The house edge and every card-count check assume the approved number of decks; "
        "a short or overfull shoe is a game the regulator never approved.",
        example="A ma-baccarat shoe logged with 9 decks: §3(a) permits six to eight.",
    )
)
def _decks_out_of_range() -> Violation:
    return Violation(
        when=~_decks_in_range(),
        citation=pl.col("decks_citation"),
        expected=_range_words(pl.col("decks_min"), pl.col("decks_max"), "decks"),
        logged=pl.format("{} decks", pl.col("decks")),
        message=pl.format(
            "shoe holds {} decks; {} permitted",
            pl.col("decks"),
            _range_words(pl.col("decks_min"), pl.col("decks_max"), "decks"),
        ),
    )


@shoe_check(
    Check(
        code="SHO002",
        name="Royal9DecksWrong",
        title="Shoe at a Royal 9 table does not hold the decks Royal 9 requires",
        severity="medium",
        citation="the Royal 9 deck rule (ma-baccarat §13(i): eight decks; ma-midi-baccarat "
        "§12(i): six or eight)",
        what="While the table offers Royal 9 (`royal9_paytable` set), every shoe must hold "
        "exactly 8 decks at ma-baccarat, 6 or 8 at ma-midi-baccarat. Reported only when the "
        "deck count is otherwise within the ruleset's limits (else SHO001).",
        why="The Royal 9 paytable and its progressive meters are approved for those shoes only.",
        example="A midi table offering Royal 9 dealt a 7-deck shoe: §12(i) requires 6 or 8.",
    )
)
def _royal9_decks_wrong() -> Violation:
    allowed = pl.col("royal9_decks").cast(pl.List(pl.String)).list.join(" or ")
    return Violation(
        when=_decks_in_range() & ~_royal9_decks_ok(),
        citation=pl.col("royal9_citation"),
        expected=pl.format("{} decks", allowed),
        logged=pl.format("{} decks", pl.col("decks")),
        message=pl.format(
            "Royal 9 offered (paytable {}): shoe holds {} decks; {} required",
            pl.col("royal9_paytable"),
            pl.col("decks"),
            allowed,
        ),
    )


@shoe_check(
    Check(
        code="SHO003",
        name="DecksDifferFromTable",
        title="Shoe holds another number of decks than the table's Rules Submission",
        severity="low",
        citation="the deck limits (ma-baccarat §3(a) and twins) as submitted in `tables.decks`",
        what="The shoe's `decks` differs from the `decks` option of the `tables` row in force "
        "when it opened. Reported only when the count is otherwise permitted (else SHO001 or "
        "SHO002).",
        why="The table is approved to deal the submitted number of decks; a different shoe is "
        "a departure from the Rules Submission even if the regulation would allow it.",
        example="A table submitted with 8 decks dealt a 6-deck shoe.",
    )
)
def _decks_differ_from_table() -> Violation:
    return Violation(
        when=_decks_in_range()
        & _royal9_decks_ok()
        & pl.col("decks").ne_missing(pl.col("table_decks")),
        citation=pl.col("table_decks_citation"),
        expected=pl.format("{} decks", pl.col("table_decks")),
        logged=pl.format("{} decks", pl.col("decks")),
        message=pl.format(
            "shoe holds {} decks; the table's options in force say {}",
            pl.col("decks"),
            pl.col("table_decks"),
        ),
    )


@shoe_check(
    Check(
        code="SHO004",
        name="ShufflerBatchesUnequal",
        title="Automated shuffler batches of unequal size",
        severity="low",
        citation="md-mini-baccarat .03B(1): two batches with equal numbers of decks",
        what="At a table with `automated_shuffler` where the pack requires equal batches, "
        "consecutive shoes (alternate batches) hold different numbers of decks although each "
        "matches the table's options (a mismatch with the options is SHO003).",
        why="The two batches alternate shoe by shoe (.03B(4)); unequal batches mean one of "
        "them is not the approved 6-to-8-deck half of the 12-to-16 total.",
        example="Shoe S2 holds 6 decks after shoe S1 held 8 at the same automated-shuffler table.",
    )
)
def _shuffler_batches_unequal() -> Violation:
    both = pl.col("automated_shuffler") & pl.col("prev_automated_shuffler").fill_null(False)
    matched = (pl.col("decks") == pl.col("table_decks")) & (
        pl.col("prev_decks") == pl.col("prev_table_decks")
    )
    return Violation(
        when=pl.col("batches_citation").is_not_null()
        & both
        & matched
        & (pl.col("decks") != pl.col("prev_decks")),
        citation=pl.col("batches_citation"),
        expected=pl.format("{} decks", pl.col("prev_decks")),
        logged=pl.format("{} decks", pl.col("decks")),
        message=pl.format(
            "shoe holds {} decks, the previous shoe {} held {}; the two batches must be equal",
            pl.col("decks"),
            pl.col("prev_shoe_id"),
            pl.col("prev_decks"),
        ),
    )


@shoe_check(
    Check(
        code="SHO005",
        name="BurnCountWrong",
        title="Burned cards do not match the value of the burn card",
        severity="medium",
        citation="the burn (ma-baccarat §5(e), ma-midi-baccarat §5(e), md-mini-baccarat "
        ".05F-.05G, ma-chemin-de-fer §3(e))",
        what="After the exposed first card, as many more cards must be burned as it counts: "
        "2-9 their face value, ten and faces 10, ace 1 (the pack's `burn_values`). The "
        "shoe's `burn_count` differs.",
        why="A wrong burn changes which cards are dealt; a dealer who burns short or long can "
        "steer the first hands of a shoe.",
        example="Burn card KS burns 10 more cards, but burn_count is 9.",
    )
)
def _burn_count_wrong() -> Violation:
    return Violation(
        when=pl.col("burn_count").ne_missing(pl.col("burn_value")),
        citation=pl.col("burn_value_citation"),
        expected=pl.col("burn_value").cast(pl.String),
        logged=pl.col("burn_count").cast(pl.String),
        message=pl.format(
            "burn card {} burns {} more cards; {} were burned",
            pl.col("burn_card"),
            pl.col("burn_value"),
            pl.col("burn_count"),
        ),
    )


@shoe_check(
    Check(
        code="SHO006",
        name="BurnCardNotFirstInSequence",
        title="The card-reading shoe's first card is not the logged burn card",
        severity="medium",
        citation="the burn (ma-baccarat §5(e) and twins): the first card is exposed and burned",
        what="With a card-reading shoe, `card_sequence` must start with `burn_card`.",
        why="The burn card is the first card out of the shoe; if the reader saw another card "
        "first, the shoe log or the burn record is wrong.",
        example="burn_card KS, but card_sequence starts with 7H.",
    )
)
def _burn_card_not_first() -> Violation:
    first = pl.col("seq_first").fill_null("no card")
    return Violation(
        when=pl.col("reader")
        & pl.col("burn_citation").is_not_null()
        & pl.col("seq_first").ne_missing(pl.col("burn_card")),
        citation=pl.col("burn_citation"),
        expected=pl.col("burn_card"),
        logged=first,
        message=pl.format(
            "card_sequence starts with {}; the burn card was {}", first, pl.col("burn_card")
        ),
    )


@shoe_check(
    Check(
        code="SHO007",
        name="CutTooShallow",
        title="Cut card placed too close to the top or bottom of the stack",
        severity="medium",
        citation="the cut (ma-baccarat §5(d), ma-midi-baccarat §5(d), ma-chemin-de-fer §3(d): "
        "a deck from either end; md-mini-baccarat .05B(4): ten cards)",
        what="`cut_index` (cards above the cut card) must leave the pack's margin at both "
        "ends: margin <= cut_index <= 52 x decks - margin, with a margin of 52 in "
        "Massachusetts and 10 in Maryland (INDEX Ambiguity 15: from each end).",
        why="A shallow cut leaves the top or bottom of the shuffled stack where it was, which "
        "a player who tracked the previous shoe could exploit.",
        example="Cut at 31 cards from the top at ma-baccarat: at least 52 required.",
    )
)
def _cut_too_shallow() -> Violation:
    cut, margin = pl.col("cut_index"), pl.col("cut_margin")
    cards = pl.col("decks") * CARDS_PER_DECK
    from_bottom = cards - cut
    return Violation(
        when=cut.is_not_null() & ((cut < margin) | (from_bottom < margin)),
        citation=pl.col("cut_citation"),
        expected=pl.format("{} to {}", margin, cards - margin),
        logged=cut.cast(pl.String),
        message=pl.when(cut < margin)
        .then(pl.format("cut at {} cards from the top; at least {} required", cut, margin))
        .otherwise(
            pl.format(
                "cut at {} of {} cards, {} from the bottom; at least {} required",
                cut,
                cards,
                from_bottom,
                margin,
            )
        ),
    )


@shoe_check(
    Check(
        code="SHO008",
        name="CoverCardTooClose",
        title="Cover card placed too close to the back of the shoe",
        severity="medium",
        citation="the cover card (ma-baccarat §5(e), md-mini-baccarat .05C(1), "
        "ma-chemin-de-fer §3(e): at least 14 cards from the back; none at ma-midi-baccarat)",
        what="`cover_from_back` must be at least the pack's minimum (14) where the ruleset "
        "places the cover card; ma-midi-baccarat has no placement rule and is not checked.",
        why="The cover card announces the last hand; placed too deep, the shoe can run out of "
        "cards in the middle of a round.",
        example="Cover card 10 cards from the back at ma-baccarat: at least 14 required.",
    )
)
def _cover_card_too_close() -> Violation:
    cover, least = pl.col("cover_from_back"), pl.col("cover_min")
    return Violation(
        when=cover.is_not_null() & least.is_not_null() & (cover < least),
        citation=pl.col("cover_citation"),
        expected=pl.format("at least {}", least),
        logged=cover.cast(pl.String),
        message=pl.format("cover card {} cards from the back; at least {} required", cover, least),
    )


@shoe_check(
    Check(
        code="SHO009",
        name="CardSeenTooOften",
        title="A card appears more often than the shoe's decks hold",
        severity="high",
        citation="the deck rule (ma-baccarat §3(a), ma-midi-baccarat §3(a), md-mini-baccarat "
        ".03A, ma-chemin-de-fer §1(a))",
        what="Counting the burn card, every card dealt to a hand and every discarded card of "
        "the shoe, no card (rank and suit) may appear more than `decks` times.",
        why="A card seen once too often did not come from the shoe's decks: a foreign card, a "
        "card brought back from the discards, or a falsified log.",
        example="QS seen 9 times in an 8-deck shoe.",
    )
)
def _card_seen_too_often() -> Violation:
    return Violation(
        when=pl.col("over_logged").is_not_null(),
        citation=pl.col("table_decks_citation"),
        expected=pl.format("at most {} of each card", pl.col("decks")),
        logged=pl.col("over_logged"),
        message=pl.format(
            "{} in the burn card, hands and discards; {} decks hold {} of each card",
            pl.col("over_logged"),
            pl.col("decks"),
            pl.col("decks"),
        ),
    )


@shoe_check(
    Check(
        code="SHO010",
        name="SequenceExceedsDecks",
        title="The card-reading shoe saw more cards than the decks hold",
        severity="high",
        citation="the deck rule (ma-baccarat §3(a) and twins)",
        what="With a card-reading shoe, `card_sequence` may hold at most 52 x decks cards and "
        "no card more than `decks` times.",
        why="The reader saw every card that left the shoe; more cards, or a card too often, "
        "means cards were added to the shoe or the reader log is corrupt.",
        example="An 8-deck shoe whose card_sequence holds 417 cards.",
    )
)
def _sequence_exceeds_decks() -> Violation:
    cards = pl.col("decks") * CARDS_PER_DECK
    too_long = pl.col("seq_len") > cards
    return Violation(
        when=pl.col("reader") & (too_long | pl.col("over_sequence").is_not_null()),
        citation=pl.col("table_decks_citation"),
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
        citation="the dealing order (ma-baccarat §9(c), ma-midi-baccarat §8(c), "
        "md-mini-baccarat .08C, ma-chemin-de-fer §7(d)); undisclosed cards (ma-baccarat §15(a))",
        what="Where `card_sequence` is logged, the burn card and `burn_count` burned cards "
        "come first; then each round, simulated and void rounds too, takes the next cards "
        "in the order P1, B1, P2, B2, P3, B3, followed by its `discarded_after` cards. The "
        "first card of a round that differs from the sequence is reported, with its "
        "position.",
        why="The reader records what really left the shoe; a hand that does not match it was "
        "dealt out of order, swapped, or logged falsely.",
        example="Card 57 of the card_sequence is 7H, but the round's Player's second card is QS.",
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
        citation=pl.col("order_citation"),
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


def _sequence_mismatches(
    frame: pl.LazyFrame, shoes: pl.LazyFrame, rounds: pl.LazyFrame
) -> pl.LazyFrame:
    """The first card out of place in each round of the shoes whose sequence did not match."""
    failing = frame.filter(pl.col("reader") & ~pl.col("dealt_ok").fill_null(False)).select(
        "shoe_id", "burn_count", "seq_len", "order_citation"
    )
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
        .join(failing, on="shoe_id", how="inner")
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
        .join(failing.select("shoe_id"), on="shoe_id", how="inner")
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
            pl.col("seq_len", "order_citation").first(),
        )
        .with_columns(_slot().alias("slot"))
    )


@COVER_FLAG_CHECKS.check(
    Check(
        code="SHO012",
        name="CoverCardFlagInconsistent",
        title="cover_card_drawn does not match where the cover card lies in the sequence",
        severity="low",
        citation="the last-hand rule (ma-baccarat §10(d), ma-midi-baccarat §9(d), "
        "md-mini-baccarat .09D, ma-chemin-de-fer §11(k))",
        what="With a card-reading shoe and `cover_from_back`, the cover card lies in front of "
        "card (length - cover_from_back) of the sequence: it appears in the round whose hands "
        "take that card. The first round logged with `cover_card_drawn` must be that round.",
        why="The last-hand rule runs from the round in which the cover card appeared; a flag "
        "set early or late hides extra hands or ends the shoe early.",
        example="The cover card, 16 cards from the back of 416, was reached in round 57, but "
        "cover_card_drawn is first set on round 59.",
    )
)
def _cover_card_flag_inconsistent() -> Violation:
    logged = pl.col("first_cover_no").cast(pl.String).fill_null("never")
    expected = pl.col("expected_cover_no").cast(pl.String).fill_null("never")
    return Violation(
        when=pl.lit(True),
        citation=pl.col("cover_flag_citation"),
        expected=pl.format("round {}", expected),
        logged=pl.format("round {}", logged),
        message=pl.format(
            "the cover card, {} cards from the back of {}, lies before card {} of the "
            "card_sequence, reached in round {}; cover_card_drawn is first set on round {}",
            pl.col("cover_from_back"),
            pl.col("seq_len"),
            pl.col("seq_len") - pl.col("cover_from_back") + 1,
            expected,
            logged,
        ),
    )


def _cover_flag_rows(frame: pl.LazyFrame, rounds: pl.LazyFrame) -> pl.LazyFrame:
    reached = (pl.col("hand_ends") - pl.col("_cover_threshold")).list.eval(pl.element() > 0)
    expected_no = (
        pl.when(reached.list.any())
        .then(pl.col("round_nos").list.get(reached.list.arg_max(), null_on_oob=True))
        .otherwise(None)
    )
    flagged = (
        frame.filter(
            pl.col("reader")
            & pl.col("cover_from_back").is_not_null()
            & pl.col("cover_flag_citation").is_not_null()
            & pl.col("round_nos").is_not_null()
        )
        .with_columns(expected_no.alias("expected_cover_no"))
        .filter(pl.col("expected_cover_no").ne_missing(pl.col("first_cover_no")))
        .with_columns(pl.min_horizontal("expected_cover_no", "first_cover_no").alias("round_no"))
    )
    ids = rounds.select("shoe_id", "round_no", "round_id")
    return flagged.join(ids, on=["shoe_id", "round_no"], how="inner")


# ---- entry ---------------------------------------------------------------------------


def shoe_findings(
    shoes: pl.LazyFrame,
    rounds: pl.LazyFrame,
    options: pl.LazyFrame,
    folded: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> list[pl.LazyFrame]:
    """Findings about shoes (round_id null) and about rounds' places in the card sequence."""
    frame = shoe_frame(shoes, options, folded, packs)
    shoe_ids = {
        "table_id": pl.col("table_id"),
        "shoe_id": pl.col("shoe_id"),
        "round_id": NO_ID,
        "wager_id": NO_ID,
    }
    round_ids = {**shoe_ids, "round_id": pl.col("round_id")}
    return [
        SHOE_CHECKS.emit(_with_card_counts(frame, shoes), shoe_ids),
        SEQUENCE_CHECKS.emit(_sequence_mismatches(frame, shoes, rounds), round_ids),
        COVER_FLAG_CHECKS.emit(_cover_flag_rows(frame, rounds), round_ids),
    ]
