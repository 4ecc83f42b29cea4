"""Every way a round can fall from a fresh shoe, by full enumeration with exact weights.

A round takes at most six cards, dealt P1 B1 P2 B2, then the Player's third card, then
the Banker's. The enumeration runs over every ordered six-card sequence of card
classes (the ten point values; or, for the first four cards, the thirteen ranks when a
wager needs pairs), drawing without replacement: a sequence's weight is the product
of the cards left of its class at each draw, so the weights sum to
T(T-1)...(T-5) for a shoe of T cards. A round that ends after four or five cards is
decided by its first cards alone, so summing over the unused cards weights it by
exactly the cards not used: (T-4)(T-5) or (T-5) times its own chance. Every weight is
an integer and every probability a `Fraction` of that common denominator.

The rules come from the pack's game (`auditor.packs.game`): card values, Naturals, the
Player's rule (an ``either`` total drawn or stood as the caller chooses) and the
Banker's table, so no ruleset's name appears here. The sequences are held as numpy
arrays (10^6 by value, 13^4 x 10^2 by rank) and grouped into a few thousand outcome
`State`s with exact int64 sums.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import polars as pl

from auditor import contract
from auditor.packs.entries import MAX_DECKS
from auditor.packs.game import PLAYER_STOOD, game_of
from auditor.packs.model import RulePack

ROUND_CARDS = 6
SUITS_PER_RANK = len(contract.SUITS)


class State(NamedTuple):
    """One outcome of a round, as far as any wager's settlement needs it."""

    player: int  # final Point Counts
    banker: int
    player_cards: int  # 2 or 3
    banker_cards: int
    player_natural: bool
    banker_natural: bool
    player_pair: bool  # first two cards of the same rank (only when enumerated by rank)
    banker_pair: bool


@dataclass(frozen=True)
class Outcomes:
    """The outcome states of a round and their integer weights over `denominator`."""

    decks: int
    denominator: int
    weights: dict[State, int]
    by_rank: bool  # pairs are known (the first four cards were enumerated by rank)

    def probability(self, event: Callable[[State], bool]) -> Fraction:
        return Fraction(sum(w for s, w in self.weights.items() if event(s)), self.denominator)

    def expectation(self, net: Callable[[State], Fraction | int]) -> Fraction:
        """The expected value of `net` (a wager's result per unit, say) over the states."""
        # Weights are summed per distinct value first: a handful of Fractions, not thousands.
        by_value: dict[Fraction | int, int] = defaultdict(int)
        for state, weight in self.weights.items():
            by_value[net(state)] += weight
        return sum((Fraction(v) * w for v, w in by_value.items()), Fraction(0)) / self.denominator

    def distribution(self, net: Callable[[State], Fraction | int]) -> dict[Fraction, Fraction]:
        """The probability of each value `net` takes."""
        by_value: dict[Fraction, int] = defaultdict(int)
        for state, weight in self.weights.items():
            by_value[Fraction(net(state))] += weight
        return {v: Fraction(w, self.denominator) for v, w in sorted(by_value.items())}


def cards_in_shoe(pack: RulePack, decks: int) -> int:
    return len(game_of(pack).values_of(pack.ruleset)) * SUITS_PER_RANK * decks


def has_either(pack: RulePack) -> bool:
    """The Player's rule leaves a total to his choice (Chemin de Fer's 5)."""
    return "either" in game_of(pack).player_actions(pack.ruleset)


def player_table(pack: RulePack, either_draws: bool) -> np.ndarray:
    """Whether the Player draws on each two-card total 0-9 (a Natural stands)."""
    actions = game_of(pack).player_actions(pack.ruleset)
    return np.array([a == "draw" or (a == "either" and either_draws) for a in actions])


def banker_table(pack: RulePack) -> np.ndarray:
    """Whether the Banker draws: rows his two-card total 0-9, columns the Player's third
    card 0-9 and `PLAYER_STOOD` (a Natural stands)."""
    return np.array(game_of(pack).banker_draws(pack.ruleset), dtype=bool)


def _classes(values: tuple[int, ...], decks: int, by_rank: bool) -> tuple[np.ndarray, np.ndarray]:
    """(point value, cards in the shoe) per class of the first four cards; `values`: each
    rank's point value, in `contract.RANKS` order."""
    per_rank = SUITS_PER_RANK * decks
    if by_rank:
        return np.array(values, dtype=np.int64), np.full(len(values), per_rank, dtype=np.int64)
    counts = np.bincount(values, minlength=10).astype(np.int64) * per_rank
    return np.arange(10, dtype=np.int64), counts


class _Game(NamedTuple):
    """All of a pack that decides how a round falls: what `enumerate_rounds` reads."""

    values: tuple[int, ...]  # each rank's point value, in `contract.RANKS` order
    naturals: tuple[int, ...]
    player_draws: tuple[bool, ...]  # on each two-card total 0-9
    banker_draws: tuple[tuple[bool, ...], ...]  # `banker_table`'s rows

    @classmethod
    def of(cls, pack: RulePack, either_draws: bool) -> _Game:
        game = game_of(pack)
        values_of = game.values_of(pack.ruleset)
        return cls(
            tuple(values_of[rank] for rank in contract.RANKS),
            tuple(game.natural_totals(pack.ruleset)),
            tuple(bool(d) for d in player_table(pack, either_draws)),
            tuple(tuple(bool(d) for d in row) for row in banker_table(pack)),
        )


def enumerate_rounds(
    pack: RulePack, decks: int, *, either_draws: bool = True, by_rank: bool = False
) -> Outcomes:
    """Every round a fresh shoe of `decks` decks can deal under `pack`, as exact weights.

    `either_draws`: what the Player does on a total his rule leaves to him (``either``).
    `by_rank`: enumerate the first four cards by rank, so that pairs are known (House
    Money); by point value otherwise, which is all the other wagers need.
    """
    if not 1 <= decks <= MAX_DECKS:
        raise ValueError(f"decks must be 1 to {MAX_DECKS}, not {decks}")
    return _enumerated(_Game.of(pack, either_draws), decks, by_rank)


# The odds report, the generated outcomes file and surveillance's unshipped shoes ask for
# the same few games again (a tenth of a second each); keyed by what decides the
# outcomes, never by a pack's name or identity. Callers must not change what they get.
@functools.lru_cache(maxsize=64)
def _enumerated(game: _Game, decks: int, by_rank: bool) -> Outcomes:
    class_value, class_count = _classes(game.values, decks, by_rank)
    value_count = np.zeros(10, dtype=np.int64)
    np.add.at(value_count, class_value, class_count)
    k = len(class_value)
    # Small integers (int8) for the card classes: the grid has up to 2.9 million rows.
    grid = np.indices((k, k, k, k, 10, 10), dtype=np.int8).reshape(ROUND_CARDS, -1)
    first, v5, v6 = grid[:4], grid[4], grid[5]
    vals = class_value.astype(np.int8)[first]

    # Without replacement: each draw takes one of the cards of its class still in the
    # shoe. A factor below zero can only follow a factor of zero of the same class, so
    # flooring at zero changes no product; it only keeps every factor obviously in range.
    def left(count: np.ndarray, taken: np.ndarray) -> np.ndarray:
        return np.maximum(count - taken, 0)

    weight = class_count[first[0]].copy()
    for i in range(1, 4):
        taken = np.sum([first[j] == first[i] for j in range(i)], axis=0)
        weight *= left(class_count[first[i]], taken)
    weight *= left(value_count[v5], (vals == v5).sum(axis=0))
    weight *= left(value_count[v6], (vals == v6).sum(axis=0) + (v5 == v6))

    naturals = np.array(game.naturals)
    player_two = (vals[0] + vals[2]) % 10  # int8 holds 18
    banker_two = (vals[1] + vals[3]) % 10
    player_natural = np.isin(player_two, naturals)
    banker_natural = np.isin(banker_two, naturals)
    natural = player_natural | banker_natural
    player_draws = ~natural & np.array(game.player_draws)[player_two]
    third = np.where(player_draws, v5, PLAYER_STOOD)
    banker_draws = ~natural & np.array(game.banker_draws)[banker_two, third]
    banker_third = np.where(player_draws, v6, v5)
    player = np.where(player_draws, (player_two + v5) % 10, player_two)
    banker = np.where(banker_draws, (banker_two + banker_third) % 10, banker_two)
    if by_rank:
        player_pair, banker_pair = first[0] == first[2], first[1] == first[3]
    else:
        player_pair = banker_pair = np.zeros_like(natural)

    key = player.astype(np.int32) * 10 + banker  # up to 6,399: past int8
    for flag in (player_draws, banker_draws, player_natural, banker_natural):
        key = key * 2 + flag
    key = (key * 2 + player_pair) * 2 + banker_pair
    # Exact integer group sums (numpy's bincount would sum the weights as floats).
    grouped = (
        pl.DataFrame({"key": key, "weight": weight})
        .group_by("key")
        .agg(pl.col("weight").sum())
        .filter(pl.col("weight") > 0)
    )
    weights = {
        state_of(int(k)): int(w) for k, w in zip(grouped["key"], grouped["weight"], strict=True)
    }
    total = falling(int(value_count.sum()), ROUND_CARDS)
    if sum(weights.values()) != total:  # every sequence of six cards counted once
        raise AssertionError(f"weights sum to {sum(weights.values())}, not {total}")
    return Outcomes(decks, total, weights, by_rank)


def state_key(state: State) -> int:
    """The integer `enumerate_rounds` groups a state by (`state_of` reads it back)."""
    key = state.player * 10 + state.banker
    for flag in (
        state.player_cards == 3,
        state.banker_cards == 3,
        state.player_natural,
        state.banker_natural,
        state.player_pair,
        state.banker_pair,
    ):
        key = key * 2 + flag
    return key


def state_of(key: int) -> State:
    key, banker_pair = divmod(key, 2)
    key, player_pair = divmod(key, 2)
    key, banker_natural = divmod(key, 2)
    key, player_natural = divmod(key, 2)
    key, banker_drew = divmod(key, 2)
    key, player_drew = divmod(key, 2)
    player, banker = divmod(key, 10)
    return State(
        player,
        banker,
        2 + player_drew,
        2 + banker_drew,
        bool(player_natural),
        bool(banker_natural),
        bool(player_pair),
        bool(banker_pair),
    )


def falling(n: int, k: int) -> int:
    """n (n-1) ... (n-k+1): the ordered ways to draw k of n cards."""
    result = 1
    for i in range(k):
        result *= n - i
    return result
