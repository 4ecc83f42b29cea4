"""The words a pack may use: every enumeration a pack value is checked against.

Each is a ``Literal`` for the pack models (and so an ``enum`` in the JSON Schema) and a
tuple for the engine. Enumerations the hand-history contract already defines are taken
from ``auditor.contract``, so that a contract change is made in one place.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from auditor import contract


def one_of(choices: tuple[Any, ...]) -> Any:
    """The ``Literal`` of `choices`, for enumerations held as tuples elsewhere."""
    return Literal[choices]


Stood = Literal["stood"]  # player_third of a Banker draw rule that applies when the Player stayed
STOOD: str = get_args(Stood)[0]

PlayerAction = Literal["draw", "stand", "either"]
BankerAction = Literal["draw", "stand"]
Severity = Literal["high", "medium", "low"]
TableOption = Literal["dragon_bonus_paytable", "ez_baccarat", "house_money", "royal9_paytable"]
Hand = Literal["banker", "player"]
CallAmount = Literal["equal_to_bank", "part_of_bank"]
Dealer = Literal["curator", "dealer", "banker"]
SeatColumn = Literal["curator_seat", "banker_seat"]
# stake: the amount and any rollover win; covered: only what the wagers against it cover
BankerPayoutBasis = Literal["stake", "covered"]
# What the wagers of a round are settled on where a hand whose first two cards are a
# Natural holds a third card: the cards as dealt, or the round as it should have been
# dealt (no hand draws on a Natural: each hand's first two cards).
NaturalDrawnSettlement = Literal["as_dealt", "first_two_cards"]
Margin = Literal[4, 5, 6, 7, 8, 9]  # Dragon Bonus: a non-Natural win by this many points

PLAYER_ACTIONS: tuple[str, ...] = get_args(PlayerAction)
BANKER_ACTIONS: tuple[str, ...] = get_args(BankerAction)
SEVERITIES: tuple[str, ...] = get_args(Severity)
DEFAULT_SEVERITY: Severity = "high"
TABLE_OPTIONS: tuple[str, ...] = get_args(TableOption)  # the engine numbers them by position
HANDS: tuple[str, ...] = get_args(Hand)
CALL_AMOUNTS: tuple[str, ...] = get_args(CallAmount)
DEALERS: tuple[str, ...] = get_args(Dealer)
SEAT_COLUMNS: tuple[str, ...] = get_args(SeatColumn)
BANKER_PAYOUT_BASIS: tuple[str, ...] = get_args(BankerPayoutBasis)
NATURAL_DRAWN_SETTLEMENTS: tuple[str, ...] = get_args(NaturalDrawnSettlement)
DRAGON_BONUS_MARGINS: tuple[Margin, ...] = get_args(Margin)

# What a Royal 9 paytable line requires of the first two cards of each hand. The
# engine implements these predicates once; a pack only names them, in priority order.
ROYAL9_MATCHES = {
    "personal_both_same": "both hands hold the same combination posted at the wagering chair",
    "personal_both_different": "both hands hold combinations posted at the chair, not the same",
    "personal_banker": "the Banker's Hand holds a combination posted at the chair",
    "personal_player": "the Player's Hand holds a combination posted at the chair",
    "other_seat_both_same": "both hands hold the same combination, posted at another seat",
    "suited_royal9_both": "both hands are suited Royal 9s",
    "royal9_both": "both hands are Royal 9s",
    "suited_royal9_any": "either hand is a suited Royal 9",
    "royal9_any": "either hand is a Royal 9",
}
Royal9Match = one_of(tuple(ROYAL9_MATCHES))

# From the contract: the values the hand-history columns hold.
BetName = one_of(contract.BETS)
CallName = one_of(contract.CALLS)
EzEventName = one_of(contract.EZ_EVENTS)
RoundKind = one_of(contract.ROUND_KINDS)
CommissionCollection = one_of(contract.COMMISSION_COLLECTIONS)
DragonBonusPaytableName = one_of(contract.DRAGON_BONUS_PAYTABLES)
Royal9PaytableName = one_of(contract.ROYAL9_PAYTABLES)

# The optional payouts and the bets that need them: a pack must give one iff it permits the other.
PAYOUT_BETS = {
    "tie": ("tie",),
    "dragon7": ("dragon7",),
    "panda8": ("panda8",),
    "house_money": ("house_money",),
    "dragon_bonus": ("dragon_bonus_banker", "dragon_bonus_player"),
    "royal9": ("royal9",),
}
