"""One round replayed from its cards: counts, draws, winner, EZ events; the round findings
DRW001-DRW004 and TOT001-TOT004."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .finding import Finding
from .tables import (
    CDF,
    DRAW,
    EZ_EVENTS,
    STAND,
    banker_rule,
    is_dragon7,
    is_natural,
    is_panda8,
    player_rule,
    point_count,
)


@dataclass(frozen=True)
class Deal:
    """The cards as dealt and logged, and what the rules make of them."""

    player: list[str]
    banker: list[str]
    player_total: int
    banker_total: int
    void: bool
    # None where the hands are too short to apply the rule (a void round)
    player_rule: str | None
    banker_rule: str | None
    dragon7: bool
    panda8: bool

    @property
    def outcome(self) -> str:
        """ma §8(a)(1)-(3), §12(a): the higher count wins, equal counts tie."""
        if self.player_total > self.banker_total:
            return "player"
        if self.banker_total > self.player_total:
            return "banker"
        return "tie"

    @property
    def played_out(self) -> bool:
        """Both hands hold every card the rules deal them (a short hand needs none)."""
        if len(self.player) < 2 or len(self.banker) < 2:
            return False
        if self.player_rule == DRAW and len(self.player) == 2:
            return False
        return not (self.banker_rule == DRAW and len(self.banker) == 2)


def deal(ruleset: str, rnd: dict) -> Deal:
    player, banker = list(rnd["player_cards"]), list(rnd["banker_cards"])
    p_total, b_total = point_count(player), point_count(banker)
    p_rule = b_rule = None
    if len(player) >= 2 and len(banker) >= 2:
        p_two, b_two = point_count(player[:2]), point_count(banker[:2])
        p_rule = player_rule(ruleset, p_two, b_two)
        # The Banker's rule looks at the Player's third card as dealt; a void round whose
        # Player still had to draw never reached the Banker's decision.
        if not (rnd["kind"] == "void" and p_rule == DRAW and len(player) == 2):
            third = player[2] if len(player) == 3 else None
            b_rule = banker_rule(ruleset, p_two, b_two, third)
    return Deal(
        player=player,
        banker=banker,
        player_total=p_total,
        banker_total=b_total,
        void=rnd["kind"] == "void",
        player_rule=p_rule,
        banker_rule=b_rule,
        dragon7=is_dragon7(banker, b_total, p_total),
        panda8=is_panda8(player, p_total, b_total),
    )


def natural_drew(player: list[str], banker: list[str]) -> bool:
    """A hand whose first two cards are a Natural holds a third card: no card may be dealt
    to either hand after a Natural (ma §11(a), midi §10(a), md .10A, CdF §8(a)(4), §8(b))."""
    return any(len(hand) == 3 and is_natural(point_count(hand[:2])) for hand in (player, banker))


def as_it_should_have_been_dealt(d: Deal) -> Deal:
    """The round the wagers are settled on. INDEX Ambiguity 28: where a Natural was
    wrongly given a third card, every wager is settled on the round as it should have
    been dealt, each hand's first two cards (so the Naturals' two-card counts decide the
    Dragon Bonus, and no hand holds the three cards of a Dragon 7 or Panda 8); the misdeal
    itself is the draw finding. Otherwise the cards as dealt (the contract)."""
    if d.void or not natural_drew(d.player, d.banker):
        return d
    player, banker = d.player[:2], d.banker[:2]
    p_total, b_total = point_count(player), point_count(banker)
    return replace(
        d,
        player=player,
        banker=banker,
        player_total=p_total,
        banker_total=b_total,
        dragon7=is_dragon7(banker, b_total, p_total),
        panda8=is_panda8(player, p_total, b_total),
    )


def expected_ez_event(ruleset: str, ez: bool, d: Deal) -> str | None:
    """ma §12(a), midi §11(a), md .11A(2): the events announced at an EZ table; none
    elsewhere, and none on a void round (no hand was completed)."""
    if not ez or d.void:
        return None
    events = EZ_EVENTS[ruleset]
    if "dragon7" in events and d.dragon7:
        return "dragon7"
    if "panda8" in events and d.panda8:
        return "panda8"
    return None


def round_findings(ruleset: str, table: dict, rnd: dict, d: Deal) -> list[Finding]:
    found: list[Finding] = []
    rid = rnd["round_id"]

    def add(rule: str, expected: object, logged: object) -> None:
        found.append(Finding(rule, rid, None, None, str(expected), str(logged)))

    # Draws (ma §11, midi §10, md .10, Chemin de Fer §8). A void round ran out of cards,
    # so only a card the rules forbid is a finding there, never a missing one.
    if d.player_rule is not None:
        if len(d.player) == 3 and d.player_rule == STAND:
            add("DRW001", "stand", "draw")
        if len(d.player) == 2 and d.player_rule == DRAW and not d.void:
            add("DRW002", "draw", "stand")
    if d.banker_rule is not None:
        if len(d.banker) == 3 and d.banker_rule == STAND:
            add("DRW003", "stand", "draw")
        if len(d.banker) == 2 and d.banker_rule == DRAW and not d.void:
            add("DRW004", "draw", "stand")

    # Totals: ma §12(a) and twins announce each hand's final Point Count "after each hand
    # has received all the cards to which it is entitled", which a void round never does:
    # its logged totals are no announcement.
    if not d.void and rnd["player_total"] != d.player_total:
        add("TOT001", d.player_total, rnd["player_total"])
    if not d.void and rnd["banker_total"] != d.banker_total:
        add("TOT002", d.banker_total, rnd["banker_total"])

    # Winner. A round is void for want of cards (ma §15(e), midi §13(e), md .13E): one
    # whose hands were played out is not; Chemin de Fer also voids played hands (§11(a),
    # §11(j); INDEX Ambiguity 7).
    if d.void:
        if rnd["outcome"] != "void":
            add("TOT003", "void", rnd["outcome"])
        elif ruleset != CDF and d.played_out:
            add("TOT003", d.outcome, "void")
    elif rnd["outcome"] != d.outcome:
        add("TOT003", d.outcome, rnd["outcome"])

    event = expected_ez_event(ruleset, bool(table["ez_baccarat"]), d)
    if rnd["ez_event"] != event:
        add("TOT004", event, rnd["ez_event"])
    return found
