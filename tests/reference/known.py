"""Known differences: narrow cases where the reference and the engine disagree and the
reference's reading of the regulation is kept (the engine is not changed here). Each is
recognised from the dataset's own rows, so that any other difference still fails.
"""

from __future__ import annotations

from decimal import Decimal

from .dataset import Dataset
from .tables import CDF, is_natural, point_count

Key = tuple[str, str, str | None, Decimal | None]

CALL_LESS_WAGER_AGAINST_THE_BANK = (
    "ma-chemin-de-fer §6(a), §9(b): a `player` row logged without a call is still a wager "
    "against the Banker (the engine settles it as one, 1 to 1 on its own amount), so the "
    "Bank wins or loses it too; the engine leaves it out of the Bank's covered amount"
)
DRAGON_BONUS_AFTER_A_NATURAL_DREW = (
    "ma-baccarat §8(a)(4) and twins: 'Natural 9', 'Natural 8' and 'a Natural of equal Point "
    "Count' are the Naturals' two-card counts, and a non-Natural hand wins by its Point "
    "Count's margin over the other hand's; the engine compares final counts between "
    "Naturals and loses a non-Natural hand against any Natural. They differ only where a "
    "Natural hand was wrongly given a third card (a DRW finding on the round)"
)

SIDE_WAGER_ROLLOVER_IN_THE_SEAT_TOTAL = (
    "ma-baccarat §9(e)(1)a, midi §8(c)(3)(i)a: the share rides on the Banker or Player "
    "wager, so only their rollovers are held against it; the engine adds a side wager's "
    "rollover (itself WAG010) into the seat's total and flags the Banker or Player wager"
)

ROLLOVER_ON_A_CHEMIN_DE_FER_BANK = (
    "CONTRACT: a rolled-over wager settles on amount + rollover; the engine applies it to "
    "every wager but a Chemin de Fer Bank, whose covered amount it takes from `amount` "
    "alone (a rollover there is itself WAG010: Chemin de Fer has no House Money)"
)


def known_difference(key: Key, data: Dataset) -> str | None:
    """The reason this finding is a known difference, or None."""
    rule, round_id, wager_id, _ = key
    rnd = data.round_by_id.get(round_id)
    if rnd is None:
        return None
    table = data.options(rnd["shoe_id"])
    wagers = data.wagers_by_round.get(round_id, [])
    wager = next((w for w in wagers if w["wager_id"] == wager_id), None)
    if (
        table is not None
        and table["ruleset"] == CDF
        and wager is not None
        and wager["bet"] == "banker"
        and rule in ("PAY001", "PAY002", "COM001", "COM002", "COM003")
        and any(w["bet"] == "player" and w["call"] is None for w in wagers)
    ):
        return CALL_LESS_WAGER_AGAINST_THE_BANK
    if (
        table is not None
        and table["ruleset"] == CDF
        and wager is not None
        and wager["bet"] == "banker"
        and (wager["rollover"] or 0) > 0
        and rule in ("PAY001", "PAY002", "COM001", "COM002", "COM003")
    ):
        return ROLLOVER_ON_A_CHEMIN_DE_FER_BANK
    if (
        wager is not None
        and rule in ("WAG008", "WAG009")
        and any(
            w["seat"] == wager["seat"]
            and w["bet"] not in ("banker", "player")
            and (w["rollover"] or 0) > 0
            for w in wagers
        )
    ):
        return SIDE_WAGER_ROLLOVER_IN_THE_SEAT_TOTAL
    if (
        wager is not None
        and wager["bet"] in ("dragon_bonus_banker", "dragon_bonus_player")
        and rule in ("PAY001", "PAY002", "PAY003")
        and natural_drew(rnd)
    ):
        return DRAGON_BONUS_AFTER_A_NATURAL_DREW
    return None


def natural_drew(rnd: dict) -> bool:
    """A hand whose first two cards were a Natural holds a third card."""
    hands = (rnd["player_cards"], rnd["banker_cards"])
    return any(len(h) == 3 and is_natural(point_count(h[:2])) for h in hands)
