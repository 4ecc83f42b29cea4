"""Shoe checks (SHO001-SHO008): decks, burn, cut and cover-card placement, one row per shoe.

`shoe_frame` puts each shoe beside the options in force when it opened, its ruleset's
limits (from the packs' table form, keyed by ruleset and automated shuffler: no check
names a ruleset), the previous shoe of its table, its card sequence's summary and the
rounds folded per shoe (`cards.shoe_rounds`). The frame is collected once and
read by these checks and by the card checks.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import SHOE_FRAME
from auditor.findings.words import counted
from auditor.packs.tables import PackTables
from auditor.procedures.frames import SHOE_ORDER, beside, ids

CARDS_PER_DECK = 52
CARD_CHARS = 2  # a card is rank then suit (contract)


def shoe_rules(tables: PackTables) -> pl.DataFrame:
    """One row per (ruleset, automated_shuffler): the packs' table form with the decks a
    dealing shoe may hold (`shoe_decks_*`, and `shoe_batches_citation` where the batches
    halve them).

    With an automated shuffler whose two batches must be equal, each dealing shoe holds
    half of the permitted total (Mini Baccarat's .03B, INDEX Ambiguity 16).
    """
    columns = (
        "decks_citation",
        "royal9_limits_decks",
        "royal9_limits_citation",
        "cut_min_from_either_end",
        "cut_citation",
        "cover_card_min_from_back",
        "cover_card_citation",
        "burn_citation",
        "deal_order_citation",
        "last_hand_after_cover_citation",
    )
    total = "automated_shuffler_total_decks"
    frames = []
    for automated in (False, True):
        halves = (
            pl.lit(automated)
            & pl.col("automated_shuffler_two_batches")
            & pl.col("automated_shuffler_equal_batches")
        )
        halved = halves & pl.col(f"{total}_citation").is_not_null()
        frames.append(
            tables.rulesets.select(
                "ruleset",
                pl.lit(automated).alias("automated_shuffler"),
                pl.when(halved)
                .then((pl.col(f"{total}_min") + 1) // 2)
                .otherwise(pl.col("decks_min"))
                .alias("shoe_decks_min"),
                pl.when(halved)
                .then(pl.col(f"{total}_max") // 2)
                .otherwise(pl.col("decks_max"))
                .alias("shoe_decks_max"),
                pl.when(halved)
                .then(pl.col(f"{total}_citation"))
                .otherwise(pl.col("decks_citation"))
                .alias("shoe_decks_citation"),
                pl.when(halves)
                .then(pl.col("automated_shuffler_citation"))
                .alias("shoe_batches_citation"),
                *columns,
            )
        )
    return pl.concat(frames)


def burn_rules(tables: PackTables) -> pl.DataFrame:
    """(ruleset, rank of the burn card) -> cards burned after it, with the citation."""
    return tables.ranks.select(
        "ruleset", pl.col("rank").alias("burn_rank"), "burn_value", "burn_value_citation"
    )


# ---- the shoe frame ---------------------------------------------------------------------


def shoe_sequences(shoes: pl.LazyFrame) -> pl.LazyFrame:
    """One row per shoe: its log, with its card sequence summed up (length, first card,
    the cards as one string, the most times any card appears)."""
    seq = pl.col("card_sequence")
    decks = pl.col("decks").cast(pl.Int32)
    return shoes.select(
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
        # Cards are validated as two base-36 characters: the number they read as names
        # the card exactly, and counting integers costs half of counting strings.
        seq.list.eval(pl.element().str.to_integer(base=36, strict=False).unique_counts().max())
        .list.first()
        .alias("seq_max"),
    )


def shoe_frame(
    sequences: pl.LazyFrame,
    options: pl.LazyFrame,
    folded: pl.LazyFrame,
    tables: PackTables,
) -> pl.LazyFrame:
    """One row per shoe: its log and sequence (`shoe_sequences`), the options and pack
    limits in force, the folded rounds (`cards.shoe_rounds`)."""
    opts = options.select(
        "shoe_id",
        "ruleset",
        pl.col("decks").cast(pl.Int32).alias("table_decks"),
        "automated_shuffler",
        "royal9_paytable",
    )
    framed = (
        sequences.join(opts, on="shoe_id", how="inner")
        .join(shoe_rules(tables).lazy(), on=["ruleset", "automated_shuffler"], how="left")
        .with_columns(pl.col("burn_card").str.head(1).alias("burn_rank"))
        .join(burn_rules(tables).lazy(), on=["ruleset", "burn_rank"], how="left")
        .join(folded, on="shoe_id", how="left")
        .sort(*SHOE_ORDER)
    )
    start = (1 + pl.col("burn_count")) * CARD_CHARS
    dealt = pl.col("dealt_text").fill_null("")
    return framed.with_columns(
        beside(c, within="table_id").alias(f"prev_{c}")
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
    return _within(pl.col("decks"), pl.col("shoe_decks_min"), pl.col("shoe_decks_max"))


def _royal9_decks_ok() -> pl.Expr:
    return (
        pl.col("royal9_paytable").is_null()
        | pl.col("royal9_limits_decks").is_null()
        | pl.col("royal9_limits_decks").list.contains(pl.col("decks"))
    )


@shoe_check(
    Check(
        code="SHO001",
        name="DecksOutOfRange",
        title="Shoe holds a number of decks the ruleset does not permit",
        severity="medium",
        subject="the deck limits, with an automated shuffler's batches",
        rules=("limits.decks", "limits.automated_shuffler"),
        what="The shoe's `decks` lies outside the ruleset's limits: 6 to 8 in the curator game and "
        "Mini Baccarat, at least 6 in Midi Baccarat and Chemin de Fer. With a "
        "Mini Baccarat automated shuffler each shoe is one of two equal batches of 12 to 16 decks "
        "in all, so 6 to 8 (INDEX Ambiguity 16).",
        why="The house edge and every card-count check assume the approved number of decks; "
        "a short or overfull shoe is a game the regulator never approved.",
        example="A curator-game shoe logged with 9 decks: §3(a) permits six to eight.",
        frame=SHOE_FRAME,
        reads=column_names("decks shoe_decks_citation shoe_decks_max shoe_decks_min"),
    )
)
def _decks_out_of_range() -> Violation:
    return Violation(
        when=~_decks_in_range(),
        citation=pl.col("shoe_decks_citation"),
        expected=_range_words(pl.col("shoe_decks_min"), pl.col("shoe_decks_max"), "decks"),
        logged=pl.format("{} decks", pl.col("decks")),
        message=pl.format(
            "shoe holds {} decks; {} permitted",
            pl.col("decks"),
            _range_words(pl.col("shoe_decks_min"), pl.col("shoe_decks_max"), "decks"),
        ),
    )


@shoe_check(
    Check(
        code="SHO002",
        name="Royal9DecksWrong",
        title="Shoe at a Royal 9 table does not hold the decks Royal 9 requires",
        severity="medium",
        subject="the Royal 9 deck rule",
        rules=("limits.royal9",),
        what="While the table offers Royal 9 (`royal9_paytable` set), every shoe must hold "
        "exactly 8 decks in the curator game, 6 or 8 in Midi Baccarat. Reported only when the "
        "deck count is otherwise within the ruleset's limits (else SHO001).",
        why="The Royal 9 paytable and its progressive meters are approved for those shoes only.",
        example="A midi table offering Royal 9 dealt a 7-deck shoe: §12(i) requires 6 or 8.",
        frame=SHOE_FRAME,
        reads=column_names(
            "decks royal9_limits_citation royal9_limits_decks royal9_paytable shoe_decks_max "
            "shoe_decks_min"
        ),
    )
)
def _royal9_decks_wrong() -> Violation:
    allowed = pl.col("royal9_limits_decks").cast(pl.List(pl.String)).list.join(" or ")
    return Violation(
        when=_decks_in_range() & ~_royal9_decks_ok(),
        citation=pl.col("royal9_limits_citation"),
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
        subject="the deck limits as submitted in `tables.decks`",
        rules=("limits.decks",),
        what="The shoe's `decks` differs from the `decks` option of the `tables` row in force "
        "when it opened. Reported only when the count is otherwise permitted (else SHO001 or "
        "SHO002).",
        why="The table is approved to deal the submitted number of decks; a different shoe is "
        "a departure from the Rules Submission even if the regulation would allow it.",
        example="A table submitted with 8 decks dealt a 6-deck shoe.",
        frame=SHOE_FRAME,
        reads=column_names(
            "decks decks_citation royal9_limits_decks royal9_paytable shoe_decks_max "
            "shoe_decks_min table_decks"
        ),
    )
)
def _decks_differ_from_table() -> Violation:
    return Violation(
        when=_decks_in_range()
        & _royal9_decks_ok()
        & pl.col("decks").ne_missing(pl.col("table_decks")),
        citation=pl.col("decks_citation"),
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
        subject="two batches with equal numbers of decks",
        rules=("limits.automated_shuffler",),
        what="At a table with `automated_shuffler` where the pack requires equal batches, "
        "consecutive shoes (alternate batches) hold different numbers of decks although each "
        "matches the table's options (a mismatch with the options is SHO003).",
        why="The two batches alternate shoe by shoe (.03B(4)); unequal batches mean one of "
        "them is not the approved 6-to-8-deck half of the 12-to-16 total.",
        example="Shoe S2 holds 6 decks after shoe S1 held 8 at the same automated-shuffler table.",
        frame=SHOE_FRAME,
        reads=column_names(
            "automated_shuffler decks prev_automated_shuffler prev_decks prev_shoe_id "
            "prev_table_decks shoe_batches_citation table_decks"
        ),
    )
)
def _shuffler_batches_unequal() -> Violation:
    both = pl.col("automated_shuffler") & pl.col("prev_automated_shuffler").fill_null(False)
    matched = (pl.col("decks") == pl.col("table_decks")) & (
        pl.col("prev_decks") == pl.col("prev_table_decks")
    )
    return Violation(
        when=pl.col("shoe_batches_citation").is_not_null()
        & both
        & matched
        & (pl.col("decks") != pl.col("prev_decks")),
        citation=pl.col("shoe_batches_citation"),
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
        subject="the burn",
        rules=("procedures.burn", "burn_values"),
        what="After the exposed first card, as many more cards must be burned as it counts: "
        "2-9 their face value, ten and faces 10, ace 1 (the pack's `burn_values`). The "
        "shoe's `burn_count` differs.",
        why="A wrong burn changes which cards are dealt; a dealer who burns short or long can "
        "steer the first hands of a shoe.",
        example="Burn card KS burns 10 more cards, but burn_count is 9.",
        frame=SHOE_FRAME,
        reads=column_names("burn_card burn_count burn_value burn_value_citation"),
    )
)
def _burn_count_wrong() -> Violation:
    return Violation(
        when=pl.col("burn_count").ne_missing(pl.col("burn_value")),
        citation=pl.col("burn_value_citation"),
        expected=pl.col("burn_value").cast(pl.String),
        logged=pl.col("burn_count").cast(pl.String),
        message=pl.format(
            "burn card {} burns {}; {}",
            pl.col("burn_card"),
            counted(pl.col("burn_value"), "more card", "more cards"),
            counted(pl.col("burn_count"), "was burned", "were burned"),
        ),
    )


@shoe_check(
    Check(
        code="SHO006",
        name="BurnCardNotFirstInSequence",
        title="The card-reading shoe's first card is not the logged burn card",
        severity="medium",
        subject="the burn: the first card is exposed and burned",
        rules=("procedures.burn",),
        what="With a card-reading shoe, `card_sequence` must start with `burn_card`.",
        why="The burn card is the first card out of the shoe; if the reader saw another card "
        "first, the shoe log or the burn record is wrong.",
        example="burn_card KS, but card_sequence starts with 7H.",
        frame=SHOE_FRAME,
        reads=column_names("burn_card burn_citation reader seq_first"),
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
        subject="the cut",
        rules=("limits.cut",),
        what="`cut_index` (cards above the cut card) must leave the pack's margin at both "
        "ends: margin <= cut_index <= 52 x decks - margin, with a margin of 52 (a "
        "deck) in the curator game, Midi Baccarat and Chemin de Fer, 10 in Mini "
        "Baccarat (INDEX Ambiguity 15: from each end).",
        why="A shallow cut leaves the top or bottom of the shuffled stack where it was, which "
        "a player who tracked the previous shoe could exploit.",
        example="Cut at 31 cards from the top in the curator game: at least 52 required.",
        frame=SHOE_FRAME,
        reads=column_names("cut_citation cut_index cut_min_from_either_end decks"),
    )
)
def _cut_too_shallow() -> Violation:
    cut, margin = pl.col("cut_index"), pl.col("cut_min_from_either_end")
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
        subject="the cover card",
        rules=("limits.cover_card",),
        what="`cover_from_back` must be at least the pack's minimum (14) where the ruleset "
        "places the cover card; Midi Baccarat has no placement rule and is not checked.",
        why="The cover card announces the last hand; placed too deep, the shoe can run out of "
        "cards in the middle of a round.",
        example="Cover card 10 cards from the back in the curator game: at least 14 required.",
        frame=SHOE_FRAME,
        reads=column_names("cover_card_citation cover_card_min_from_back cover_from_back"),
    )
)
def _cover_card_too_close() -> Violation:
    cover, least = pl.col("cover_from_back"), pl.col("cover_card_min_from_back")
    return Violation(
        when=cover.is_not_null() & least.is_not_null() & (cover < least),
        citation=pl.col("cover_card_citation"),
        expected=pl.format("at least {}", least),
        logged=cover.cast(pl.String),
        message=pl.format("cover card {} cards from the back; at least {} required", cover, least),
    )


def shoe_findings(frame: pl.DataFrame) -> list[pl.LazyFrame]:
    """Findings about shoes (round_id and wager_id null) over the collected shoe frame."""
    return [SHOE_CHECKS.emit(frame.lazy(), ids())]
