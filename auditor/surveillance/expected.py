"""What a fair game gives, exactly, per ruleset and deck count: from `auditor.odds`.

The outcome chances (Banker, Player, Tie) and Naturals come from the enumeration of a
fresh shoe (`odds.shoe.enumerate_rounds`, by point value, shipped as data for the
common shoes: `odds.shipped`); each wager's chance of a win and its result per unit
(mean, variance, the most one unit can move from its mean) from the nets `odds.wagers`
settles them with. Where the Player's rule leaves a total to his
choice (Chemin de Fer's 5) both strategies are priced and kept: the tests take the
interval between them as the expectation.

Pairs (the first two cards of a hand of the same rank, House Money's event) depend on
the cards alone, not on any drawing rule, so they are counted in closed form; a test
proves the closed form equals the enumeration by rank, which costs six times more.

Everything is cached per (ruleset, decks, options): a night holds a handful of them.
"""

from __future__ import annotations

import functools
from dataclasses import astuple, dataclass
from fractions import Fraction

from auditor import contract
from auditor.odds.royal9 import royal9_wagers
from auditor.odds.shipped import outcomes
from auditor.odds.shoe import MAX_DECKS, Outcomes, cards_in_shoe, has_either
from auditor.odds.table_options import TableOptions
from auditor.odds.wagers import (
    Net,
    banker_net,
    banker_won,
    dragon_bonus_net,
    event_occurred,
    player_net,
    player_won,
)
from auditor.packs.model import RulePack

OUTCOME_NAMES = ("banker", "player", "tie")


@dataclass(frozen=True)
class RoundChances:
    """The chance of each outcome under the first and the last strategy (the same where
    the rules leave no choice), of a Natural in either hand and of a pair in either."""

    first: dict[str, float]
    last: dict[str, float]
    natural: float
    pair: float


@dataclass(frozen=True)
class Price:
    """A wager's chance of a win and its result per unit wagered, under a fair game."""

    win: float
    mean: float
    variance: float
    spread: float  # the largest |result - mean| of one unit


def in_range(decks: int | None) -> bool:
    return decks is not None and 1 <= decks <= MAX_DECKS


def strategies(pack: RulePack) -> tuple[bool, ...]:
    """Whether the Player draws on an ``either`` total: both choices where there is one."""
    return (True, False) if has_either(pack) else (True,)


def _outcomes(pack: RulePack, decks: int, either_draws: bool) -> Outcomes:
    # Shipped for the common shoes, cached per rules read for the others (`odds.shipped`).
    return outcomes(pack, decks, either_draws)


@functools.lru_cache(maxsize=256)
def round_chances(pack: RulePack, decks: int) -> RoundChances:
    """The exact chances of a round dealt from a fresh shoe of `decks` decks."""
    shoes = [_outcomes(pack, decks, choice) for choice in strategies(pack)]
    events = {
        "banker": banker_won,
        "player": player_won,
        "tie": lambda s: s.banker == s.player,
    }
    first, last = (
        {name: float(shoe.probability(event)) for name, event in events.items()}
        for shoe in (shoes[0], shoes[-1])
    )
    natural = float(shoes[0].probability(lambda s: s.player_natural or s.banker_natural))
    one, both = pair_chances(pack, decks)
    return RoundChances(first, last, natural, float(2 * one - both))


def pair_chances(pack: RulePack, decks: int) -> tuple[Fraction, Fraction]:
    """(a pair in one given hand, pairs in both hands) among the first four cards.

    The Player holds the 1st and 3rd cards, the Banker the 2nd and 4th; of N cards with
    c of each of R ranks, a given hand pairs with chance R c (c-1) / N (N-1), and both
    do when the second pair is of the same rank (c-2)(c-3) ways or of another
    (R-1) c (c-1) ways, over (N-2)(N-3).
    """
    ranks = len(pack.card_values)
    per_rank = len(contract.SUITS) * decks
    total = cards_in_shoe(pack, decks)
    one = Fraction(ranks * per_rank * (per_rank - 1), total * (total - 1))
    second = (per_rank - 2) * (per_rank - 3) + (ranks - 1) * per_rank * (per_rank - 1)
    both = one * Fraction(second, (total - 2) * (total - 3))
    return one, both


# ---- wagers -------------------------------------------------------------------------


@dataclass(frozen=True)
class WagerKey:
    """What a wager's price depends on; options that do not matter for `bet` are None."""

    ruleset: str
    decks: int
    bet: str
    ez_baccarat: bool | None = None
    tie_pays: int | None = None
    commission_percent: int | None = None
    dragon_bonus_paytable: str | None = None
    royal9_paytable: str | None = None
    seats: int | None = None
    seat: int | None = None


# The options each bet's price reads (the rest are nulled before grouping).
PRICE_OPTIONS = {
    "banker": ("ez_baccarat", "commission_percent"),
    "tie": ("tie_pays",),
    "dragon_bonus_banker": ("dragon_bonus_paytable",),
    "dragon_bonus_player": ("dragon_bonus_paytable",),
    "royal9": ("royal9_paytable", "seats", "seat"),
}


@functools.lru_cache(maxsize=4096)
def wager_price(pack: RulePack, key: WagerKey) -> Price | None:
    """The price of a wager under `pack` (its ruleset's), or None where the pack cannot
    price it (a bet or option the ruleset does not have: a WAG finding already, and
    nothing to expect of it)."""
    if not in_range(key.decks):
        return None
    if key.bet not in pack.permitted:
        return None
    if key.bet == "royal9":
        return _royal9_price(pack, key)
    if key.bet == "house_money":
        return _house_money_price(pack, key.decks)
    prices = []
    for choice in strategies(pack):
        net = _net(pack, key)
        if net is None:
            return None
        prices.append(_priced(_outcomes(pack, key.decks, choice).distribution(net)))
    # Under a free choice, the larger figure of each: the tests of winning too much (or
    # too little, for the variance) stay conservative whichever strategy was played.
    return Price(*(max(values) for values in zip(*map(astuple, prices), strict=True)))


def _net(pack: RulePack, key: WagerKey) -> Net | None:
    pay = pack.payouts
    if key.bet == "player":
        return player_net(pack)
    if key.bet == "banker":
        percent = key.commission_percent
        if percent is None:
            percent = min(pack.commission.percents.values, default=0)
        return banker_net(pack, percent, ez=bool(key.ez_baccarat))
    if key.bet == "tie":
        tie_odds = (
            key.tie_pays if key.tie_pays is not None else pay.tie.min_odds if pay.tie else None
        )
        if tie_odds is None:
            return None
        return lambda state: tie_odds if state.player == state.banker else -1
    if key.bet in ("dragon7", "panda8"):
        odds, event = getattr(pay, key.bet), pack.ez.events.get(key.bet)
        if odds is None or event is None:
            return None
        occurred = event_occurred(event)
        return lambda state: odds.odds if occurred(state) else -1
    if key.bet.startswith("dragon_bonus_"):
        table = (pay.dragon_bonus or {}).get(key.dragon_bonus_paytable or "")
        return (
            None
            if table is None
            else dragon_bonus_net(table, key.bet.removeprefix("dragon_bonus_"))
        )
    return None


def _priced(distribution: dict[Fraction, Fraction]) -> Price:
    mean = sum((v * p for v, p in distribution.items()), Fraction(0))
    variance = sum(((v - mean) ** 2 * p for v, p in distribution.items()), Fraction(0))
    win = sum((p for v, p in distribution.items() if v > 0), Fraction(0))
    spread = max(abs(v - mean) for v in distribution)
    return Price(float(win), float(mean), float(variance), float(spread))


def _house_money_price(pack: RulePack, decks: int) -> Price | None:
    """House Money taken as paid (any rollover settles on the hand wager it joins)."""
    terms = pack.payouts.house_money
    if terms is None:
        return None
    one, both = pair_chances(pack, decks)
    exactly_one = 2 * (one - both)
    return _priced(
        {
            Fraction(terms.both): both,
            Fraction(terms.one): exactly_one,
            Fraction(-1): 1 - both - exactly_one,
        }
    )


def _royal9_price(pack: RulePack, key: WagerKey) -> Price | None:
    """The chance that any line pays; its money is not priced (a progressive line pays a
    meter the logs do not hold), so mean and variance are NaN and money tests skip it."""
    royal9 = pack.payouts.royal9
    if royal9 is None or key.royal9_paytable not in royal9.paytables:
        return None
    options = TableOptions(royal9_paytable=key.royal9_paytable, seats=key.seats, seat=key.seat or 1)
    fixed = [w for w in royal9_wagers(pack, key.decks, options) if w.ev is not None]
    if not fixed:
        return None
    nan = float("nan")
    return Price(float(fixed[0].win), nan, nan, nan)
