"""A round's exact outcomes (`shoe.enumerate_rounds`) for the common shoes, shipped as data,
and cached per rules read: surveillance prices every wager of a night from them.

An enumeration reads only the card values, the Naturals, the Player's rule (with the
choice an ``either`` total is given) and the Banker's table of a pack, the decks and
whether ranks are enumerated: `ShoeRules` holds exactly that, so that packs drawing
alike (the built-in Baccarat, Midi and Mini packs do) share one enumeration, and an edit
of a pack's citations or payouts changes nothing here. `outcomes.json` holds the
enumerations of the built-in packs' rules for 1 to `SHIPPED_DECKS` decks, by point value,
keyed by `ShoeRules.key()` (a digest of those rules); any other shoe is enumerated once
per process. A test proves every shipped entry equals the enumeration; after a change
to a built-in pack's drawing rules, `python -m auditor.tools.generate` writes the file again.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from importlib.resources import files

from auditor import contract
from auditor.odds.shoe import (
    ROUND_CARDS,
    SUITS_PER_RANK,
    Outcomes,
    banker_table,
    enumerate_rounds,
    falling,
    player_table,
    state_key,
    state_of,
)
from auditor.packs.game import game_of
from auditor.packs.model import RulePack

DATA_FILE = "outcomes.json"
SHIPPED_DECKS = 8


@dataclass(frozen=True)
class ShoeRules:
    """What an enumeration of `pack` reads of it; equal and hashed by the rules alone."""

    values: tuple[int, ...]  # point value per rank, in `contract.RANKS` order
    naturals: tuple[int, ...]
    player_draws: tuple[bool, ...]  # per two-card total 0-9, the ``either`` choice applied
    banker_draws: tuple[tuple[bool, ...], ...]  # `shoe.banker_table`
    pack: RulePack = field(compare=False, repr=False)
    either_draws: bool = field(compare=False, repr=False)

    @classmethod
    def of(cls, pack: RulePack, either_draws: bool) -> ShoeRules:
        values = game_of(pack).values_of(pack.ruleset)
        return cls(
            tuple(values[rank] for rank in contract.RANKS),
            game_of(pack).natural_totals(pack.ruleset),
            tuple(bool(x) for x in player_table(pack, either_draws)),
            tuple(tuple(bool(x) for x in row) for row in banker_table(pack)),
            pack,
            either_draws,
        )

    def key(self, decks: int, by_rank: bool) -> str:
        """The shipped table's key of these rules' enumeration."""
        rules = [self.values, self.naturals, self.player_draws, self.banker_draws, decks, by_rank]
        return hashlib.sha256(json.dumps(rules).encode()).hexdigest()[:24]


def outcomes(pack: RulePack, decks: int, either_draws: bool = True) -> Outcomes:
    """`shoe.enumerate_rounds(pack, decks, either_draws=...)` (by point value), from the
    shipped table where it holds these rules, else enumerated once per process."""
    return _outcomes(ShoeRules.of(pack, either_draws), decks)


@functools.lru_cache(maxsize=256)
def _outcomes(rules: ShoeRules, decks: int) -> Outcomes:
    entry = shipped().get(rules.key(decks, False))
    if entry is None:
        return enumerate_rounds(rules.pack, decks, either_draws=rules.either_draws)
    weights = {state_of(int(k)): int(w) for k, w in entry}
    cards = len(rules.values) * SUITS_PER_RANK * decks
    return Outcomes(decks, falling(cards, ROUND_CARDS), weights, False)


@functools.cache
def shipped() -> dict[str, list[list[int]]]:
    """The shipped enumerations: key -> [[state key, weight], ...]."""
    return json.loads((files("auditor.odds") / DATA_FILE).read_text())


def table(packs: list[RulePack]) -> dict[str, list[list[int]]]:
    """The enumerations of `packs`' rules for 1 to `SHIPPED_DECKS` decks, as shipped."""
    entries: dict[str, list[list[int]]] = {}
    for pack in packs:
        for either_draws in (True, False):
            rules = ShoeRules.of(pack, either_draws)
            for decks in range(1, SHIPPED_DECKS + 1):
                key = rules.key(decks, False)
                if key not in entries:
                    shoe = enumerate_rounds(pack, decks, either_draws=either_draws)
                    entries[key] = sorted([state_key(s), w] for s, w in shoe.weights.items())
    return dict(sorted(entries.items()))
