"""Procedures: the conduct rules a pack switches on and parameterises.

Every procedure is a key of ``procedures`` in every pack, null where the ruleset has no
such rule, so that a pack cannot leave one out by accident. A few parameters are
constrained by what the engine can look up (a seat column, a round kind, a call).
"""

from __future__ import annotations

import types
import typing
from typing import Literal, get_args

from pydantic import StrictBool, model_validator

from auditor.packs.entries import Count, Entry, Flag, NonEmpty, NonNegative, PackModel, refuse
from auditor.packs.vocabulary import CallName, Dealer, Hand, RoundKind, SeatColumn


class Deals(Entry):
    """Who deals (`by`), the `rounds` column naming his seat, and whether the house dealer
    may deal in his place."""

    by: Dealer
    seat_column: SeatColumn | None
    dealer_may_deal: StrictBool


class LastHandAfterCover(Entry):
    """How many hands are dealt once the cover card is out, and which round kinds count."""

    value: StrictBool
    hands_after: NonNegative | None
    counted_kinds: tuple[RoundKind, ...]


class PassOnBankerLoss(Entry):
    """The seat (column) that must pass after the Banker's Hand loses."""

    seat_column: SeatColumn | None


class HouseMoneyRollover(Entry):
    """The wagers a House Money payout may roll onto."""

    onto: NonEmpty[Hand]


class BankStake(Entry):
    """The Bank's stake against the previous one (Chemin de Fer)."""

    first_at_least_bid: StrictBool
    min_multiple: NonNegative | None
    max_multiple: NonNegative | None
    tied_rounds_count: StrictBool


class WagersAgainstBank(Entry):
    each_at_most_bank: StrictBool
    total_at_most_bank: StrictBool


class Suivi(Entry):
    """Who may call suivi: the calls that qualify, skipping ties, reset by a new Bank."""

    qualifying_calls: NonEmpty[CallName]
    skip_ties: StrictBool
    new_bank_resets: StrictBool


# The ranks of a card, for the discards an irregularity takes by the disclosed card's value.
Rank = Literal["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"]


class IrregularDiscards(Entry):
    """How many cards an irregularity puts in the discard (`rounds.discarded_after`): one
    of `counts`, or the disclosed (first) card and as many more as `plus_card_value`
    gives for its rank (each rank listed, or null where the count never depends on it)."""

    counts: NonEmpty[Count]
    plus_card_value: dict[Rank, NonEmpty[NonNegative]] | None

    @model_validator(mode="after")
    def _every_rank(self) -> IrregularDiscards:
        missing = set(get_args(Rank)) - set(self.plus_card_value or get_args(Rank))
        if missing:
            raise refuse(f"plus_card_value leaves out the ranks {''.join(sorted(missing))}")
        return self


class ProceduresSection(PackModel):
    """Every procedure the engine knows; null where the ruleset has no such rule."""

    deals: Deals | None
    deal_order: Flag | None
    burn: Flag | None
    no_wager_after_no_more_bets: Flag | None
    no_more_bets_announced: Flag | None
    last_hand_after_cover: LastHandAfterCover | None
    void_ends_shoe: Flag | None
    irregular_discards: IrregularDiscards | None
    pass_on_banker_loss: PassOnBankerLoss | None
    marker_collected_before_next_shoe: Flag | None
    house_money_rollover: HouseMoneyRollover | None
    free_hands: Flag | None
    no_wagers_on_simulated: Flag | None
    bank_bid_logged: Flag | None
    bank_stake: BankStake | None
    wagers_against_bank: WagersAgainstBank | None
    suivi: Suivi | None


def _parameters(annotation: object) -> tuple[str, ...]:
    """The data keys of the procedure model in `annotation` (``Model | None``)."""
    model = next(t for t in typing.get_args(annotation) if t is not types.NoneType)
    return tuple(name for name in model.model_fields if name not in Entry.model_fields)


# procedure name -> its parameters (all required when the procedure is given).
PROCEDURES: dict[str, tuple[str, ...]] = {
    name: _parameters(field.annotation) for name, field in ProceduresSection.model_fields.items()
}
