"""What the engine reads from a pack, reshaped from the file for lookup.

The file writes a draw table as rules covering many cells and a list of announcements;
the engine looks up one cell, one event. Entries the engine reads as the file writes
them (``Range``, ``BankerOdds``, ``SeatCombinations``, ...) are the pack models
themselves; the types here are the ones whose shape differs from the file's.
Money is ``Decimal``: the file's whole dollars, never a float.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, TypeVar

from auditor.packs.entries import Flag, Range
from auditor.packs.payouts import BankerOdds, HouseMoney, SeatCombinations, TieOdds
from auditor.packs.sections import AutomatedShuffler, Call, Royal9Limits
from auditor.packs.vocabulary import DEFAULT_SEVERITY

T = TypeVar("T")


@dataclass(frozen=True)
class Cited(Generic[T]):
    """One value with the reference it encodes."""

    value: T
    cite: str
    note: str | None = None

    @classmethod
    def of_flag(cls, flag: Flag) -> Cited[bool]:
        return Cited(flag.value, flag.cite, flag.note)


@dataclass(frozen=True)
class BankerDrawCell:
    """The Banker's decision for one two-card total and Player third card (None: stood)."""

    banker_two_card: int
    player_third: int | None
    draws: bool
    cite: str
    severity: str = DEFAULT_SEVERITY
    note: str | None = None


@dataclass(frozen=True)
class EzEvent:
    """Dragon 7 / Panda 8: `hand` has `total` with `cards` cards, the other hand is below."""

    name: str
    hand: str
    total: int
    cards: int
    other_hand_below: int
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Ez:
    offered: Cited[bool]
    announce: dict[str, str]  # event -> ref of the announcement rule
    events: dict[str, EzEvent]
    banker_push_on: Cited[str] | None


@dataclass(frozen=True)
class Announce:
    """Refs of the rules announcing the final counts (`totals`) and the winner (`outcome`)."""

    totals: str
    outcome: str


@dataclass(frozen=True)
class Bet:
    bet: str
    requires: str | None  # the tables option that must be set, None: always permitted
    cite: str
    calls: dict[str, Call]  # empty: `wagers.call` must be null
    note: str | None = None


@dataclass(frozen=True)
class DragonBonusPaytable:
    name: str
    win_by: dict[int, int]  # margin (non-Natural) -> odds
    natural_winner: int
    natural_tie: str  # push
    cite: str
    note: str | None = None


@dataclass(frozen=True)
class Royal9Line:
    name: str  # exactly as printed: `wagers.award` must use it
    amount: Decimal | None  # dollars; None for a progressive line
    meter: str | None
    match: str  # a key of ROYAL9_MATCHES

    @property
    def progressive(self) -> bool:
        return self.amount is None


@dataclass(frozen=True)
class Royal9Paytable:
    name: str
    lines: tuple[Royal9Line, ...]  # priority order: a wager gets the first line it meets
    cite: str
    note: str | None = None
    # ref of a random award the paytable allows with no qualifying hand and no line name
    # (midi §12(j) Stax, INDEX Ambiguity 25); None: every payout needs a line.
    random_award: Cited[bool] | None = None


@dataclass(frozen=True)
class Royal9:
    wager: Cited[Decimal]
    paytables: dict[str, Royal9Paytable]
    seat_combinations: SeatCombinations


@dataclass(frozen=True)
class Payouts:
    player: Cited[int]
    banker: BankerOdds
    tie: TieOdds | None
    dragon7: Cited[int] | None
    panda8: Cited[int] | None
    house_money: HouseMoney | None
    dragon_bonus: dict[str, DragonBonusPaytable]  # empty: not in this ruleset
    royal9: Royal9 | None


@dataclass(frozen=True)
class Commission:
    percents: Cited[tuple[int, ...]]
    rounding_step_cents: Cited[dict[int, int]]  # percent -> step when rounding is on
    bets: Cited[tuple[str, ...]]
    exempt: Cited[tuple[str, ...]] | None
    none_at_ez: Cited[bool] | None
    collection: Cited[tuple[str, ...]]


@dataclass(frozen=True)
class Limits:
    seats: Range | None
    decks: Range
    royal9: Royal9Limits | None
    automated_shuffler: AutomatedShuffler
    cut_min_from_either_end: Cited[int]
    cover_min_from_back: Cited[int | None]
    cards_per_hand: Range


@dataclass(frozen=True)
class Procedure:
    name: str
    params: dict[str, Any]
    cite: str
    note: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.params[key]
