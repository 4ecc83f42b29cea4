"""pandera models (polars backend) of the hand-history contract, version 1.

One DataFrameModel per contract table. Every column carries the contract's type and
its meaning as the description. Row checks are vectorized polars expressions; the
cross-row checks (unique ids, foreign keys) are polars queries in
`auditor.validate`, because pandera serialises every failing row of a frame-level
check and that does not scale.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Literal, TypeAlias

import pandera.polars as pa
import polars as pl

from auditor.contract import (
    BETS,
    CALLS,
    CARD_PATTERN,
    COMMISSION_COLLECTIONS,
    DRAGON_BONUS_PAYTABLES,
    EZ_EVENTS,
    OUTCOMES,
    RANKS,
    RESULTS,
    ROUND_KINDS,
    ROYAL9_PAYTABLES,
    SUITS,
    TABLES,
)

ROYAL9_COMBO_PATTERN = r"^[JQK][SHDC]9[SHDC]$"
Money = pl.Decimal(18, 2)
Timestamp = pl.Datetime("us", "UTC")
Cards = pl.List(pl.String)
# The same three as column annotations: a dtype instance is a value, not a type, so a
# model names the class and pandera builds the column's dtype from the arguments after it.
MoneyColumn: TypeAlias = Annotated[pl.Decimal, 18, 2]
TimestampColumn: TypeAlias = Annotated[pl.Datetime, "us", "UTC"]
CardsColumn: TypeAlias = Annotated[pl.List, pl.String]

# The largest sum of money a row may hold. decimal(18,2) holds ten thousand times more,
# but the settlement multiplies a stake by its odds (up to thousands to one) and sums a
# night's nets in integer cents and decimal(18,2) dollars: past this bound that
# arithmetic would overflow. No real stake, payout or commission comes near it.
MONEY_BOUND = Decimal("10000000000.00")
# The instants a timestamp can name as a date and time (years 1 to 9999); Parquet's
# 64-bit microseconds reach year 294,247, which no report, query or reader can show.
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
TimeUnit: TypeAlias = Literal["ms", "us", "ns"]
_UNIT: dict[TimeUnit, timedelta | None] = {
    "ms": timedelta(milliseconds=1),
    "us": timedelta(microseconds=1),
    "ns": None,
}


def within_years(column: pl.Expr, unit: TimeUnit) -> pl.Expr:
    """Whether a timestamp of `unit` ("ms", "us", "ns") lies within `EARLIEST` and
    `LATEST`, compared as the integer the file holds: converting a value outside them to
    another unit is what fails."""
    step = _UNIT[unit]
    if step is None:  # 64-bit nanoseconds reach years 1677 to 2262 only
        return column.is_not_null()
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return column.dt.epoch(unit).is_between((EARLIEST - epoch) // step, (LATEST - epoch) // step)


# Ids are short in every real log (a few dozen characters at most). A longer value is not
# an id: one 100 MB dealer_id shared by a few hundred rounds took the surveillance's sort
# past 7 GB. Row checks quarantine it (`auditor.input.validate`, one vectorized pass per
# batch rather than a pandera check per column) before any later stage holds it. The
# bound applies to every id column (`*_id`) and to `award`, the one free-text name; every
# other string column is held to an enumeration or a pattern already.
MAX_ID_CHARS = 1_000
# A value past the bound is shown (in the quarantine, in a message) by its first
# characters and its length, never whole.
SHOWN_CHARS = 64
# Its start and its length; polars' `format` and DuckDB's read the same placeholders, so the
# catalog's `quarantine_id` macro writes it from this one template too.
SHOWN_PAST_BOUND = "{}… ({} characters)"


def shown_past_bound(start: pl.Expr, length: pl.Expr) -> pl.Expr:
    """How a value longer than `MAX_ID_CHARS` is shown, from its first `SHOWN_CHARS`
    characters and its length: `DDDD… (104857600 characters)`."""
    return pl.format(SHOWN_PAST_BOUND, start, length)


def money_columns(table: str) -> list[str]:
    return [c for c, (t, _) in TABLES[table].items() if t == Money]


def timestamp_columns(table: str) -> list[str]:
    return [c for c, (t, _) in TABLES[table].items() if t == Timestamp]


def bounded_text_columns(table: str) -> list[str]:
    """The string columns of `table` held to `MAX_ID_CHARS`: its ids and `award`."""
    return [
        column
        for column, (dtype, _) in TABLES[table].items()
        if dtype == pl.String and (column.endswith("_id") or column == "award")
    ]


# The 52 strings `CARD_PATTERN` matches: looking a card up among them costs a fraction of
# matching the pattern (a shoe's 416 cards, 12 million at 2 million rounds).
VALID_CARDS = [rank + suit for rank in RANKS for suit in SUITS]


def _cards_match(column: str) -> pl.Expr:
    # A null list is judged by the column's nullability, not by this check; a null card
    # is neither a match nor a failure, as with the pattern.
    return pl.col(column).list.eval(pl.element().is_in(VALID_CARDS)).list.all()


def _hand_size_ok(column: str) -> pl.Expr:
    # A void round holds the cards dealt before the shoe ran out: possibly fewer than two.
    cards = pl.col(column).list.len()
    return pl.when(pl.col("kind") == "void").then(cards <= 3).otherwise(cards.is_between(2, 3))


class _Strictness:
    # The contract allows more optional columns than it names (hive partition keys, say).
    strict = False
    coerce = False


class TablesModel(pa.DataFrameModel):
    """tables: the Rules Submission options in force at each table."""

    table_id: str = pa.Field(description="table")
    property_id: str = pa.Field(description="casino")
    # Which ids are known depends on the packs a run loads (`--rules DIR` adds its own):
    # the validation checks the column against them before any row check.
    ruleset: str = pa.Field(description="the id of a rule pack the run loaded")
    effective_from: TimestampColumn = pa.Field(
        description="the row applies to shoes opened at or after it, "
        "until the next row of the same table"
    )
    seats: pl.Int8 = pa.Field(ge=1, description="numbered seat positions at the table")
    decks: pl.Int8 = pa.Field(ge=1, description="decks per dealing shoe")
    automated_shuffler: bool = pa.Field(
        description="two batches alternate (where the ruleset's pack allows an automated shuffler)"
    )
    ez_baccarat: bool = pa.Field(
        description="EZ table: no commission; banker wager pushes on Dragon 7"
    )
    tie_pays: pl.Int16 = pa.Field(ge=0, description="tie wager odds, X to 1")
    commission_percent: pl.Int8 = pa.Field(
        ge=0, le=100, description="5, or 4 where the ruleset's pack allows it"
    )
    commission_rounding: bool = pa.Field(
        description="commission rounded up to the next multiple of 25 cents (20 cents for 4%)"
    )
    commission_collection: str = pa.Field(
        isin=list(COMMISSION_COLLECTIONS), description="`at_payout` or `marker`"
    )
    dragon_bonus_paytable: str = pa.Field(
        nullable=True,
        isin=list(DRAGON_BONUS_PAYTABLES),
        description="`A`, `B`, `C`; null: not offered",
    )
    house_money: bool = pa.Field(description="House Money wager offered")
    house_money_rollover_percent: pl.Int8 = pa.Field(
        ge=0,
        le=100,
        description="the authorised share of a winning House Money payout that a patron "
        "who chooses to add it places on the original wager (100 = all)",
    )
    royal9_paytable: str = pa.Field(
        nullable=True,
        isin=list(ROYAL9_PAYTABLES),
        description="a paytable the ruleset's pack offers (`1`, `2`, `midi`); null: not offered",
    )
    free_hands: bool = pa.Field(
        description="Free Hands allowed (where the ruleset's pack has them)"
    )

    class Config(_Strictness):
        name = "tables"


class ShoesModel(pa.DataFrameModel):
    """shoes: one row per dealing shoe."""

    shoe_id: str = pa.Field(description="shoe")
    table_id: str = pa.Field(description="table")
    opened_at: TimestampColumn = pa.Field(description="first card burned")
    decks: pl.Int8 = pa.Field(ge=1, description="decks in this shoe")
    card_sequence: CardsColumn = pa.Field(
        nullable=True,
        description="every card in shoe order after the cut, first out first, as read by "
        "a card-reading shoe; null when the shoe has no reader",
    )
    cut_index: pl.Int32 = pa.Field(
        nullable=True,
        ge=0,
        description="cards above the cut card when the stack was cut, counted from the top "
        "of the stack before the cut",
    )
    cover_from_back: pl.Int32 = pa.Field(
        nullable=True, ge=0, description="cards behind the cover card placed near the back"
    )
    burn_card: str = pa.Field(str_matches=CARD_PATTERN, description="the exposed first card")
    burn_count: pl.Int16 = pa.Field(ge=0, description="further cards burned face down after it")

    @pa.check("card_sequence", name="card_format")
    def card_sequence_cards(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_cards_match(data.key))

    class Config(_Strictness):
        name = "shoes"


class RoundsModel(pa.DataFrameModel):
    """rounds: one row per round of play."""

    round_id: str = pa.Field(description="round")
    shoe_id: str = pa.Field(description="shoe")
    table_id: str = pa.Field(description="table")
    round_no: pl.Int32 = pa.Field(ge=1, description="1, 2, 3 ... in dealing order within the shoe")
    dealt_at: TimestampColumn = pa.Field(description='"cards"')
    no_more_bets_at: TimestampColumn = pa.Field(
        nullable=True, description='"no more bets" announced'
    )
    kind: str = pa.Field(
        isin=list(ROUND_KINDS),
        description="`regular`; `free` (Free Hand, no wagers); `simulated` (irregularity "
        "procedure, no wagers); `void` (insufficient cards, all wagers returned)",
    )
    player_cards: CardsColumn = pa.Field(description="Player's Hand in the order dealt to it")
    banker_cards: CardsColumn = pa.Field(description="Banker's Hand in the order dealt to it")
    player_total: pl.Int8 = pa.Field(ge=0, le=9, description="point count announced")
    banker_total: pl.Int8 = pa.Field(ge=0, le=9, description="point count announced")
    outcome: str = pa.Field(
        isin=list(OUTCOMES), description="`player`, `banker`, `tie` as announced (`void`)"
    )
    ez_event: str = pa.Field(
        nullable=True,
        isin=list(EZ_EVENTS),
        description="`dragon7` or `panda8` when announced at an EZ table",
    )
    cover_card_drawn: bool = pa.Field(
        description="the cover card appeared before or during this round"
    )
    discarded_after: CardsColumn = pa.Field(
        nullable=True,
        description="cards taken from the shoe after this round and put in the discard "
        "without being dealt to a hand (irregularity procedures), in order",
    )
    dealer_id: str = pa.Field(description="dealer calling the game")
    curator_seat: pl.Int8 = pa.Field(
        nullable=True, ge=1, description="seat of the curator (a curator game); null: dealer deals"
    )
    banker_seat: pl.Int8 = pa.Field(
        nullable=True,
        ge=1,
        description="seat of the Banker (a game whose Bank passes among the patrons)",
    )
    banker_bid: MoneyColumn = pa.Field(
        nullable=True,
        ge=0,
        description="the winning bid for the Bank, on the first round of a new Bank only",
    )

    @pa.check("player_cards", name="card_format")
    def player_card_format(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_cards_match(data.key))

    @pa.check("banker_cards", name="card_format")
    def banker_card_format(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_cards_match(data.key))

    @pa.check("player_cards", name="two_or_three_cards")
    def player_hand_size(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_hand_size_ok(data.key))

    @pa.check("banker_cards", name="two_or_three_cards")
    def banker_hand_size(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_hand_size_ok(data.key))

    @pa.check("discarded_after", name="card_format")
    def discarded_card_format(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_cards_match(data.key))

    class Config(_Strictness):
        name = "rounds"


class WagersModel(pa.DataFrameModel):
    """wagers: one row per wager."""

    wager_id: str = pa.Field(description="wager")
    round_id: str = pa.Field(description="round")
    seat: pl.Int8 = pa.Field(ge=1, description="seat position")
    patron_id: str = pa.Field(nullable=True, description="patron (null: unrated)")
    bet: str = pa.Field(isin=list(BETS), description="bet type")
    call: str = pa.Field(
        nullable=True,
        isin=list(CALLS),
        description="wagers against the Banker: `suivi`, `banco`, `partial`",
    )
    amount: MoneyColumn = pa.Field(ge=0, description="stake placed")
    rollover: MoneyColumn = pa.Field(
        nullable=True, ge=0, description="House Money payout added to this banker/player wager"
    )
    placed_at: TimestampColumn = pa.Field(
        nullable=True, description="when the stake was placed or last changed"
    )
    result: str = pa.Field(isin=list(RESULTS), description="`win`, `lose`, `push` as settled")
    payout: MoneyColumn = pa.Field(
        ge=0,
        description="amount paid to the patron on top of the returned stake (0 on lose and push)",
    )
    commission: MoneyColumn = pa.Field(
        ge=0, description="commission charged on this wager (0 if none)"
    )
    award: str = pa.Field(
        nullable=True,
        description="royal9 only: the paytable line awarded, named as printed in the "
        "ruleset's Royal 9 paytable; null when none",
    )

    class Config(_Strictness):
        name = "wagers"


class CommissionCollectionsModel(pa.DataFrameModel):
    """commission_collections: marker commission collected (optional table)."""

    collection_id: str = pa.Field(description="collection")
    table_id: str = pa.Field(description="table")
    shoe_id: str = pa.Field(description="shoe whose marker commission is collected")
    seat: pl.Int8 = pa.Field(ge=1, description="seat position")
    patron_id: str = pa.Field(nullable=True, description="patron (null: unrated)")
    collected_at: TimestampColumn = pa.Field(description="when the commission was collected")
    amount: MoneyColumn = pa.Field(ge=0, description="amount collected")

    class Config(_Strictness):
        name = "commission_collections"


class Royal9SeatsModel(pa.DataFrameModel):
    """royal9_seats: Personal King-9 combinations (optional table)."""

    table_id: str = pa.Field(description="table")
    seat: pl.Int8 = pa.Field(ge=1, description="seat position")
    combo: str = pa.Field(
        str_matches=ROYAL9_COMBO_PATTERN,
        description='two cards, face card first: "KS9H"',
    )

    class Config(_Strictness):
        name = "royal9_seats"


MODELS: dict[str, type[pa.DataFrameModel]] = {
    "tables": TablesModel,
    "shoes": ShoesModel,
    "rounds": RoundsModel,
    "wagers": WagersModel,
    "commission_collections": CommissionCollectionsModel,
    "royal9_seats": Royal9SeatsModel,
}
