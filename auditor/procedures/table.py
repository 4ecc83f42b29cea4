"""The table's own options, who holds the shoe, and "no more bets" (TBL001-TBL004,
PRC010-PRC012, TOT005, COM004).

A table finding names the table only: its Rules Submission options (each `tables` row)
against what its ruleset allows: the number of seats, the seats of a Royal 9 table, how
commission is collected, the Royal 9 combinations posted at its chairs. Round findings:
a seat holding the shoe that the table does not have or that the game does not give a
seat, a Free Hand where the table or the ruleset allows none, and a regular round
without "no more bets" announced before the cards. A shoe finding: commission
collections logged for a shoe of a table that does not collect by marker. Every limit
comes from the packs' table form (`PackTables.rulesets_in_force`).
"""

from __future__ import annotations

import polars as pl

from auditor.contract import MINUTE_TEXT
from auditor.findings.check import (
    Check,
    CheckSet,
    Violation,
    column_names,
    discriminated,
    instant_text,
)
from auditor.findings.frames import COLLECTION_FRAME, HOLDER_ROUND_FRAME, TABLE_FRAME
from auditor.findings.table import NO_ID
from auditor.findings.words import moment, with_article
from auditor.money import cents, usd
from auditor.packs.model import SEAT_COLUMNS
from auditor.procedures.frames import ids

# The contract's ways of collecting commission, as a message writes them.
COLLECTED_WORDS = {"at_payout": "at payout", "marker": "by marker"}

TABLE_CHECKS = CheckSet()
HOLDER_CHECKS = CheckSet()
COLLECTION_CHECKS = CheckSet()

# ---- the table's options ----------------------------------------------------------------


@TABLE_CHECKS.check(
    Check(
        code="TBL001",
        name="TableSeatsOutOfRange",
        title="The table has more or fewer seats than its ruleset allows",
        severity="medium",
        subject="the numbered seats",
        rules=("limits.seats",),
        what="Each `tables` row's `seats` must lie within the ruleset's seat limits: 10 to "
        "14 in the curator game, at most nine in Midi and Mini Baccarat; Chemin de Fer "
        "states no number. Reported on the table, once per options row that breaks it.",
        why="The seat count fixes which positions may wager and hold the shoe; a table "
        "submitted with a layout the game does not have is not the game approved.",
        example="A curator-game table submitted with 8 seats; the game seats 10 to 14.",
        frame=TABLE_FRAME,
        reads=column_names(
            "effective_from ruleset seats seats_citation seats_max seats_min table_id"
        ),
    )
)
def _table_seats_out_of_range() -> Violation:
    low, high = pl.col("seats_min"), pl.col("seats_max")
    seats = pl.col("seats").cast(pl.Int32)
    return Violation(
        discriminator=options_row(),
        when=(seats < low).fill_null(False) | (seats > high).fill_null(False),
        citation=pl.col("seats_citation"),
        expected=pl.when(low.is_null())
        .then(pl.format("at most {} seats", high))
        .when(high.is_null())
        .then(pl.format("at least {} seats", low))
        .otherwise(pl.format("{} to {} seats", low, high)),
        logged=pl.format("{} seats", pl.col("seats")),
        message=pl.format(
            "table {} ({}) has {} seats in its options from {}",
            pl.col("table_id"),
            pl.col("ruleset"),
            pl.col("seats"),
            pl.col("effective_from").dt.to_string(MINUTE_TEXT),
        ),
    )


@TABLE_CHECKS.check(
    Check(
        code="TBL002",
        name="Royal9TableSeatsNotAllowed",
        title="A Royal 9 table with a number of seats the Royal 9 rules do not allow",
        severity="medium",
        subject="Royal 9 decks and seats",
        rules=("limits.royal9",),
        what="Where a `tables` row offers Royal 9 (`royal9_paytable` set) and the ruleset "
        "limits the seats of a Royal 9 table, `seats` must be one of those counts.",
        why="The Royal 9 paytable and its per-seat combinations are approved for that layout only.",
        example="A midi table offering Royal 9 with 9 seats; Royal 9 is played at 6 or 7.",
        frame=TABLE_FRAME,
        reads=column_names(
            "effective_from royal9_limits_citation royal9_limits_seats royal9_paytable seats "
            "table_id"
        ),
    )
)
def _royal9_table_seats() -> Violation:
    allowed = pl.col("royal9_limits_seats")
    return Violation(
        discriminator=options_row(),
        when=pl.col("royal9_paytable").is_not_null()
        & allowed.is_not_null()
        & ~allowed.list.contains(pl.col("seats").cast(pl.Int32)),
        citation=pl.col("royal9_limits_citation"),
        expected=pl.format("{} seats", allowed.cast(pl.List(pl.String)).list.join(" or ")),
        logged=pl.format("{} seats", pl.col("seats")),
        message=pl.format(
            "table {} offers Royal 9 with {} seats in its options from {}",
            pl.col("table_id"),
            pl.col("seats"),
            pl.col("effective_from").dt.to_string(MINUTE_TEXT),
        ),
    )


@TABLE_CHECKS.check(
    Check(
        code="TBL003",
        name="CommissionCollectionNotAllowed",
        title="Commission collected in a way the ruleset does not allow",
        severity="medium",
        subject="collecting the commission",
        rules=("commission.collection",),
        what="Each `tables` row's `commission_collection` must be one the ruleset allows: "
        "at payout or by marker in the Baccarat games; Chemin de Fer collects at payout "
        "only, immediately after each round the Banker wins.",
        why="Deferred collection by marker lets commission go uncollected; where the rules do "
        "not allow it, every marker is a debt the game does not provide for.",
        example="A Chemin de Fer table submitted with commission_collection = marker.",
        frame=TABLE_FRAME,
        reads=column_names(
            "commission_collection commission_collection_citation commission_collection_modes "
            "effective_from ruleset table_id"
        ),
    )
)
def _collection_not_allowed() -> Violation:
    modes = pl.col("commission_collection_modes")
    return Violation(
        discriminator=options_row(),
        when=~modes.list.contains(pl.col("commission_collection")),
        citation=pl.col("commission_collection_citation"),
        expected=modes.list.join(" or "),
        logged=pl.col("commission_collection"),
        message=pl.format(
            "table {} ({}) collects commission {} in its options from {}",
            pl.col("table_id"),
            pl.col("ruleset"),
            collected(pl.col("commission_collection")),
            pl.col("effective_from").dt.to_string(MINUTE_TEXT),
        ),
    )


def collected(collection: pl.Expr) -> pl.Expr:
    """A `commission_collection` value as the words that follow "collects":
    "by marker", "at payout"."""
    return collection.replace_strict(COLLECTED_WORDS, default=collection)


def options_row() -> pl.Expr:
    """A table finding's discriminator: the tables row it reads, by when it took effect
    (a table may carry one finding of a rule per options row)."""
    return discriminated(effective_from=instant_text(pl.col("effective_from")))


def table_findings(tables: pl.LazyFrame, rules: pl.DataFrame) -> pl.LazyFrame:
    """Findings about the tables' own options (`table_id` only)."""
    frame = tables.join(
        rules.lazy().select(
            "ruleset",
            "seats_min",
            "seats_max",
            "seats_citation",
            "royal9_limits_seats",
            "royal9_limits_citation",
            "commission_collection_modes",
            "commission_collection_citation",
        ),
        on="ruleset",
        how="left",
    )
    return TABLE_CHECKS.emit(
        frame,
        {"table_id": pl.col("table_id"), "shoe_id": NO_ID, "round_id": NO_ID, "wager_id": NO_ID},
    )


# ---- who holds the shoe, and Free Hands -------------------------------------------------


def _holder_seat() -> pl.Expr:
    """The seat of the ruleset's holder column (`deals.seat_column`), null where none."""
    return pl.coalesce(
        pl.when(pl.col("deals_seat_column") == column).then(pl.col(column))
        for column in SEAT_COLUMNS
    )


def _foreign_holder() -> pl.Expr:
    """A holder column the ruleset does not use, when it holds a seat: its name."""
    return pl.coalesce(
        pl.when(pl.col(column).is_not_null() & pl.col("deals_seat_column").ne_missing(column)).then(
            pl.lit(column)
        )
        for column in SEAT_COLUMNS
    )


@HOLDER_CHECKS.check(
    Check(
        code="PRC010",
        name="HolderSeatOutOfRange",
        title="The shoe is held at a seat the table does not have",
        severity="medium",
        subject="the numbered seats, or the seat of who deals",
        rules=("limits.seats", "procedures.deals"),
        what="A round's `curator_seat` (the curator game) or `banker_seat` (Chemin de Fer) "
        "must be a seat of the table: 1 to the `seats` of the options in force when the "
        "shoe opened (the curator game's numbered seats; at Chemin de Fer, whose pack limits "
        "no seats, the Banker's seat among the table's).",
        why="A holder at a position the layout does not have cannot be a seated player: the "
        "record of who dealt, and who owes the pass, is wrong.",
        example="Round 12 logged curator_seat 13 at a table of 12 seats.",
        frame=HOLDER_ROUND_FRAME,
        reads=column_names(
            "banker_seat curator_seat deals_citation deals_seat_column round_no seats "
            "seats_citation shoe_id"
        ),
    )
)
def _holder_seat_out_of_range() -> Violation:
    return Violation(
        when=_holder_seat().cast(pl.Int32) > pl.col("seats").cast(pl.Int32),
        citation=pl.coalesce("seats_citation", "deals_citation"),
        expected=pl.format("seat 1-{}", pl.col("seats")),
        logged=pl.format("{} {}", pl.col("deals_seat_column"), _holder_seat()),
        message=pl.format(
            "round {} of shoe {}: {} {} at a table of {} seats",
            pl.col("round_no"),
            pl.col("shoe_id"),
            pl.col("deals_seat_column"),
            _holder_seat(),
            pl.col("seats"),
        ),
    )


@HOLDER_CHECKS.check(
    Check(
        code="PRC011",
        name="HolderNotOfTheGame",
        title="A seat is logged holding the shoe where the game gives it none",
        severity="medium",
        subject="who deals",
        rules=("procedures.deals",),
        what="At Midi and Mini Baccarat the dealer deals, so `curator_seat` and "
        "`banker_seat` are null; the curator game logs a curator and never a `banker_seat`; "
        "Chemin de Fer logs the Banker and never a `curator_seat`.",
        why="A holder recorded where the game has none means the log describes another game "
        "than the one approved, or a player handled the cards.",
        example="A Mini Baccarat round logged curator_seat 3: the dealer deals this game.",
        frame=HOLDER_ROUND_FRAME,
        reads=column_names(
            "_foreign_seat banker_seat curator_seat deals_citation deals_seat_column round_no "
            "ruleset shoe_id"
        ),
    )
)
def _holder_not_of_the_game() -> Violation:
    return Violation(
        when=_foreign_holder().is_not_null(),
        citation=pl.col("deals_citation"),
        expected=pl.when(pl.col("deals_seat_column").is_null())
        .then(pl.lit("the dealer deals: no seat holds the shoe"))
        .otherwise(pl.format("only {}", pl.col("deals_seat_column"))),
        logged=pl.format("{} {}", _foreign_holder(), pl.col("_foreign_seat")),
        message=pl.format(
            "round {} of shoe {} ({}) logged {} {}",
            pl.col("round_no"),
            pl.col("shoe_id"),
            pl.col("ruleset"),
            _foreign_holder(),
            pl.col("_foreign_seat"),
        ),
    )


@HOLDER_CHECKS.check(
    Check(
        code="PRC012",
        name="FreeHandNotAllowed",
        title="A Free Hand dealt where the table or the ruleset allows none",
        severity="medium",
        subject="Free Hands, where the table's options allow them; elsewhere the permissible "
        "wagers",
        rules=("procedures.free_hands", "bets.cite"),
        what="A round of kind `free` is dealt only at a ruleset with Free Hands and at a table "
        "whose options in force set `free_hands` (INDEX Ambiguity 11).",
        why="A Free Hand burns cards without wagers; where it is not allowed it changes the "
        "cards the next wagers are settled on.",
        example="A Mini Baccarat round logged as free: the game has no Free Hand.",
        frame=HOLDER_ROUND_FRAME,
        reads=column_names(
            "bets_citation free_hands free_hands_citation kind round_no ruleset shoe_id"
        ),
    )
)
def _free_hand_not_allowed() -> Violation:
    allowed = pl.col("free_hands_citation").is_not_null() & pl.col("free_hands")
    return Violation(
        when=(pl.col("kind") == "free") & ~allowed.fill_null(False),
        citation=pl.coalesce("free_hands_citation", "bets_citation"),
        expected=pl.when(pl.col("free_hands_citation").is_null())
        .then(pl.lit("no Free Hand in this ruleset"))
        .otherwise(pl.lit("no Free Hand: the table's options do not allow it")),
        logged=pl.lit("free"),
        message=pl.format(
            "round {} of shoe {} was a Free Hand at {} table{}",
            pl.col("round_no"),
            pl.col("shoe_id"),
            with_article(pl.col("ruleset")),
            pl.when(pl.col("free_hands_citation").is_not_null())
            .then(pl.lit(" whose options do not allow Free Hands"))
            .otherwise(pl.lit("")),
        ),
    )


@HOLDER_CHECKS.check(
    Check(
        code="TOT005",
        name="NoMoreBetsNotAnnounced",
        title='"No more bets" not announced before the cards',
        severity="medium",
        subject='the "no more bets" announcement',
        rules=("procedures.no_more_bets_announced",),
        what="A regular round's `no_more_bets_at` must be logged and not later than its "
        "`dealt_at`: the call closes the wagers before any card is dealt. Chemin de Fer has "
        "no such announcement rule.",
        why="Without the call, or after the cards, nothing separates the wagers from the "
        "cards: late wagers cannot even be judged (WAG004).",
        example='Round 14 logged "no more bets" at 20:01:07, after "cards" at 20:01:05.',
        frame=HOLDER_ROUND_FRAME,
        reads=column_names(
            "dealt_at kind no_more_bets_announced_citation no_more_bets_at round_no shoe_id"
        ),
    )
)
def _no_more_bets_not_announced() -> Violation:
    announced, dealt = pl.col("no_more_bets_at"), pl.col("dealt_at")
    return Violation(
        when=pl.col("no_more_bets_announced_citation").is_not_null()
        & (pl.col("kind") == "regular")
        & (announced.is_null() | (announced > dealt)),
        citation=pl.col("no_more_bets_announced_citation"),
        expected=pl.format('"no more bets" by {}', moment(dealt)),
        logged=pl.when(announced.is_null())
        .then(pl.lit("not announced"))
        .otherwise(moment(announced)),
        message=pl.format(
            'round {} of shoe {}: "no more bets" {} ("cards" at {})',
            pl.col("round_no"),
            pl.col("shoe_id"),
            pl.when(announced.is_null())
            .then(pl.lit("was not logged"))
            .otherwise(pl.format("was called at {}", moment(announced))),
            moment(dealt),
        ),
    )


def holder_findings(
    rounds: pl.LazyFrame, options: pl.LazyFrame, rules: pl.DataFrame
) -> pl.LazyFrame:
    """Findings about who holds the shoe, Free Hands and "no more bets" (`round_id` set)."""
    foreign_seat = pl.coalesce(
        pl.when(pl.col("deals_seat_column").ne_missing(column)).then(pl.col(column))
        for column in SEAT_COLUMNS
    )
    frame = (
        rounds.select(
            "table_id",
            "shoe_id",
            "round_id",
            "round_no",
            "kind",
            "dealt_at",
            "no_more_bets_at",
            *SEAT_COLUMNS,
        )
        .join(options.select("shoe_id", "ruleset", "seats", "free_hands"), on="shoe_id")
        .join(
            rules.lazy().select(
                "ruleset",
                "seats_citation",
                "deals_seat_column",
                "deals_citation",
                "free_hands_citation",
                "bets_citation",
                "no_more_bets_announced_citation",
            ),
            on="ruleset",
            how="left",
        )
        .with_columns(foreign_seat.alias("_foreign_seat"))
    )
    return HOLDER_CHECKS.emit(frame, ids(pl.col("round_id")))


# ---- commission collections -------------------------------------------------------------


@COLLECTION_CHECKS.check(
    Check(
        code="COM004",
        name="CollectionAtTableWithoutMarker",
        title="Commission collection logged at a table that does not collect by marker",
        severity="medium",
        subject="collecting the commission",
        rules=("commission.collection",),
        what="A `commission_collections` row belongs to a shoe of a table whose options in "
        "force collect commission by marker; at an `at_payout` table each wager's "
        "commission is taken with its payout and no marker is ever collected. Reported on "
        "the shoe, with the seat and patron in the message.",
        why="A collection the table's procedure has no place for is money moved outside the "
        "settlement of any wager: it may hide a commission taken twice.",
        example="$12.50 collected from seat 3 for shoe S12 at a table that collects at payout.",
        frame=COLLECTION_FRAME,
        reads=column_names(
            "_amount collection_id commission_collection commission_collection_citation "
            "patron_id seat shoe_id"
        ),
    )
)
def _collection_without_marker() -> Violation:
    return Violation(
        discriminator=discriminated(collection=pl.col("collection_id")),
        when=pl.col("commission_collection") != "marker",
        citation=pl.col("commission_collection_citation"),
        expected=pl.lit("no marker collection: commission taken at payout"),
        logged=pl.format("{} collected", usd(pl.col("_amount"))),
        message=pl.format(
            "{} collected from seat {} (patron {}) for shoe {} at a table that collects {}",
            usd(pl.col("_amount")),
            pl.col("seat"),
            pl.col("patron_id").fill_null("unrated"),
            pl.col("shoe_id"),
            collected(pl.col("commission_collection")),
        ),
    )


def collection_findings(
    collections: pl.LazyFrame | None, options: pl.LazyFrame, rules: pl.DataFrame
) -> list[pl.LazyFrame]:
    """Findings about collections at tables without marker (`shoe_id` only)."""
    if collections is None:
        return []
    frame = (
        collections.select(
            "collection_id", "shoe_id", "seat", "patron_id", cents("amount").alias("_amount")
        )
        .join(options.select("shoe_id", "ruleset", "commission_collection"), on="shoe_id")
        .join(
            rules.lazy().select("ruleset", "commission_collection_citation"),
            on="ruleset",
            how="left",
        )
        .with_columns(pl.lit(None, dtype=pl.String).alias("table_id"))
    )
    return [COLLECTION_CHECKS.emit(frame, ids())]
