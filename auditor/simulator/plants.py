"""Slow frauds planted in a simulation, for surveillance over a period to find.

Neither breaks a rule a night's audit checks: every wager is settled exactly as the cards
dealt say, so no finding comes of them, and each night's counts stay within what fair
play gives. Both are a past-post, a wager moved to the side that won after the cards
were out:

- a patron whose Dragon Bonus wagers win at up to twice the game's chance: seated at
  one table every shoe (or a share of its shoes, `patron_shoes`), a share
  (`patron_rate`) of the Dragon Bonus wagers of theirs that lost is moved to the other
  hand's Dragon Bonus when that one won (one hand's Dragon Bonus wins about as often as
  the other's, and they never both win, so moving them all doubles the rate, half of
  them makes it one and a half times);
- a dealer whose tables hold about two points under theory: dealing every shoe of their
  tables, a small share of the hand wagers that lost (`dealer_rate`) are moved to the
  hand that won.

A plant draws from random streams of its own, so a planted night deals the same cards
and wagers as the clean one, but for the planted moves; without a plant (the default),
nothing here runs and the simulation is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.simulator.settle import Round, Wager

OTHER_SIDE = {
    "dragon_bonus_banker": "dragon_bonus_player",
    "dragon_bonus_player": "dragon_bonus_banker",
    "banker": "player",
    "player": "banker",
}
# Hand wagers moved per hand wager that lost: each moved one turns a loss of its stake
# into a win of about its stake, so the table's hold drops by about 2 x 0.46 x this
# share of the money on the hands: 2.2% of the losing hand wagers, two points of hold.
DEALER_RATE = 0.022


@dataclass(frozen=True)
class Plant:
    """The planted patterns; a field left None plants nothing of its kind."""

    patron: str | None = None  # the patron id of the past-posting Dragon Bonus player
    patron_table: str | None = None  # the table they sit at, every shoe
    dealer: str | None = None  # the dealer id who pays out the hands
    dealer_tables: tuple[str, ...] = ()  # the tables they deal every shoe of
    dealer_rate: float = DEALER_RATE
    patron_rate: float = 1.0
    patron_shoes: float = 1.0  # the share of their table's shoes the patron sits at

    def deals(self, table_id: str) -> bool:
        return self.dealer is not None and table_id in self.dealer_tables

    def seats(self, table_id: str) -> bool:
        return self.patron is not None and table_id == self.patron_table


def seat_planted(
    plant: Plant,
    table_id: str,
    seats: list[tuple[int, str | None]],
    gen: np.random.Generator | None,
) -> None:
    """The planted patron takes the first seat of a shoe at their table (of each one,
    or of a share `patron_shoes` of them drawn from `gen`)."""
    if not (plant.seats(table_id) and seats):
        return
    if plant.patron_shoes < 1 and (gen is None or gen.random() >= plant.patron_shoes):
        return
    seat, _ = seats[0]
    seats[0] = (seat, plant.patron)
    for k in range(1, len(seats)):  # never twice at one table
        if seats[k][1] == plant.patron:
            seats[k] = (seats[k][0], None)


def past_post(plant: Plant, table_id: str, rd: Round, gen: np.random.Generator) -> None:
    """The planted moves on one played regular round (not Chemin de Fer)."""
    if rd.kind != "regular" or rd.opts.chemin:
        return
    if plant.patron is not None:
        for w in rd.wagers:
            side = w.patron == plant.patron and w.bet.startswith("dragon_bonus_")
            if side and w.result == "lose" and gen.random() < plant.patron_rate:
                _move(rd, w)
    if plant.deals(table_id) and rd.dealer == plant.dealer:
        for w in rd.wagers:
            # The curator's hand wager is left alone (the shoe's holder bets on it).
            hand = w.bet in ("banker", "player") and w.seat != rd.curator
            if hand and w.call is None and w.result == "lose" and gen.random() < plant.dealer_rate:
                _move(rd, w)


def _move(rd: Round, w: Wager) -> None:
    """`w` moved to the other side if it lost there and won here, and the seat has no
    wager on that side already; the round settled again either way."""
    if w.result != "lose":
        return
    other = OTHER_SIDE[w.bet]
    if any(x.seat == w.seat and x.bet == other for x in rd.wagers):
        return
    before = w.bet
    w.bet = other
    rd.settle()
    if w.result != "win":
        w.bet = before
        rd.settle()
