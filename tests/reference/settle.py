"""The correct settlement of one wager against the cards as dealt: result, payout and
commission in cents, and the Royal 9 line."""

from __future__ import annotations

from dataclasses import dataclass

from .hands import Deal
from .tables import (
    CDF,
    DRAGON7_ODDS,
    DRAGON_BONUS,
    EZ_RULESETS,
    HOUSE_MONEY_BOTH_PAIRS,
    HOUSE_MONEY_ONE_PAIR,
    MA,
    PANDA8_ODDS,
    ROYAL9_FACES,
    ROYAL9_LINES,
    Combo,
    commission_cents,
    commission_percent,
    is_natural,
    point_count,
)


@dataclass(frozen=True)
class Settlement:
    result: str
    payout: int | None  # None: a progressive Royal 9 line, whose amount the logs lack
    commission: int
    at_risk: int  # what a loss costs the patron: the stake (a Bank: the covered amount)
    line: str | None = None  # Royal 9 only
    margin: int | str | None = None  # Dragon Bonus only: its paytable row

    def net(self) -> int | None:
        if self.payout is None:
            return None
        return net_result(self.result, self.payout, self.commission, self.at_risk)


def net_result(result: str, payout: int, commission: int, at_risk: int) -> int:
    """The patron's net result: a lost stake, plus whatever was paid, less the commission
    (a payout logged on a lost wager is still money paid)."""
    return (-at_risk if result == "lose" else 0) + payout - commission


def win(stake: int, odds: int, at_risk: int) -> Settlement:
    return Settlement("win", stake * odds, 0, at_risk)


def lose(at_risk: int) -> Settlement:
    return Settlement("lose", 0, 0, at_risk)


def push(at_risk: int) -> Settlement:
    return Settlement("push", 0, 0, at_risk)


def settle(
    ruleset: str,
    table: dict,
    d: Deal,
    wager: dict,
    round_wagers: list[dict],
    chairs: dict[int, set[Combo]],
) -> Settlement:
    bet = wager["bet"]
    # The contract: a rolled-over wager settles on amount + rollover (ma §9(e)(1)a).
    stake = wager["amount"] + (wager["rollover"] or 0)
    at_risk = stake
    if ruleset == CDF and bet == "banker":
        # §6(e): the uncovered part of the Bank is withdrawn; §9(b): the Banker wins or
        # loses only what the wagers against him cover. Every `player` row is a wager
        # against him, with a call or without (INDEX Ambiguity 27), and each covers its
        # stake; the Bank's own stake includes its rollover (Ambiguity 30).
        against = sum(
            w["amount"] + (w["rollover"] or 0) for w in round_wagers if w["bet"] == "player"
        )
        at_risk = min(stake, against)
    if d.void:
        # ma §15(e), midi §13(e), md .13E, CdF §11(k): every wager returned.
        return push(at_risk)
    p, b = d.player_total, d.banker_total
    ez = ruleset in EZ_RULESETS and bool(table["ez_baccarat"])

    if bet == "banker":
        if ez and d.dragon7:  # ma §8(a)(1)(iii), midi §7(a)(1)(iii), md .07A(1)(c)(ii)
            return push(at_risk)
        if b > p:
            # 1 to 1 (ma §13(c), md .12C; CdF §9(b) on the covered amount), less the
            # vigorish on the amount won, none at EZ (md: INDEX Ambiguity 13).
            owed = 0
            if not ez:
                percent = commission_percent(ruleset, table["commission_percent"])
                owed = commission_cents(at_risk, percent, bool(table["commission_rounding"]))
            return Settlement("win", at_risk, owed, at_risk)
        return lose(at_risk) if b < p else push(at_risk)
    if bet == "player":
        # ma §8(a)(2), §13(a); a Panda 8 is an ordinary 1:1 win (INDEX Ambiguity 12);
        # CdF §6(g), §9(b): 1 to 1, void on equal counts.
        if p > b:
            return win(stake, 1, at_risk)
        return lose(at_risk) if p < b else push(at_risk)
    if bet == "tie":
        # ma §8(a)(3); paid at the table's odds here, its minimum is PAY004's concern.
        return win(stake, table["tie_pays"], at_risk) if p == b else lose(at_risk)
    if bet in ("dragon_bonus_banker", "dragon_bonus_player"):
        return dragon_bonus(bet, table["dragon_bonus_paytable"], d, stake)
    if bet == "dragon7":  # ma §8(a)(5), §13(f)
        return win(stake, DRAGON7_ODDS, at_risk) if d.dragon7 else lose(at_risk)
    if bet == "panda8":  # ma §8(a)(6), §13(g)
        return win(stake, PANDA8_ODDS, at_risk) if d.panda8 else lose(at_risk)
    if bet == "house_money":
        # ma §8(a)(7), §13(h): a pair of the same rank in the first two cards of a hand.
        pairs = sum(1 for hand in (d.player, d.banker) if hand[0][0] == hand[1][0])
        if pairs == 0:
            return lose(at_risk)
        return win(stake, HOUSE_MONEY_BOTH_PAIRS if pairs == 2 else HOUSE_MONEY_ONE_PAIR, at_risk)
    if bet == "royal9":
        line = royal9_line(ruleset, d.player[:2], d.banker[:2], wager["seat"], chairs)
        if line is None:
            return lose(at_risk)
        return Settlement("win", ROYAL9_LINES[ruleset][line], 0, at_risk, line=line)
    raise ValueError(f"unknown bet {bet!r}")


def dragon_bonus(bet: str, paytable: str, d: Deal, stake: int) -> Settlement:
    """ma §8(a)(4), §13(e) (midi §7(a)(4), §12(e); md .07A(4), .12F)."""
    mine, other = (d.banker, d.player) if bet == "dragon_bonus_banker" else (d.player, d.banker)
    my_two, other_two = point_count(mine[:2]), point_count(other[:2])
    if is_natural(my_two):
        if not is_natural(other_two) or my_two > other_two:  # (4)(i)a-b: "Natural winner"
            return Settlement("win", stake, 0, stake, margin="natural")
        if my_two == other_two:  # (4)(iii): equal Naturals push
            return push(stake)
        return lose(stake)  # (4)(ii)a: Natural 8 against Natural 9
    margin = point_count(mine) - point_count(other)
    if margin >= 4:  # (4)(i)c: a non-Natural winning by four or more points
        return Settlement("win", stake * DRAGON_BONUS[paytable][margin], 0, stake, margin=margin)
    return lose(stake)  # (4)(ii)b-c


def is_royal9(two: list[str]) -> bool:
    """A 9 and a Jack, Queen or King in the first two cards (ma §13(i), midi §12(i))."""
    ranks = sorted(card[0] for card in two)
    return len(two) == 2 and "9" in ranks and any(r in ROYAL9_FACES for r in ranks)


def is_suited(two: list[str]) -> bool:
    return two[0][1] == two[1][1]


def royal9_line(
    ruleset: str,
    player: list[str],
    banker: list[str],
    seat: int,
    chairs: dict[int, set[Combo]],
) -> str | None:
    """The highest line of the paytable that the first two cards of each hand qualify for
    (INDEX Ambiguity 23: one line per wager, the highest printed)."""
    if len(player) < 2 or len(banker) < 2:
        return None
    p_hand, b_hand = frozenset(player), frozenset(banker)
    own = chairs.get(seat, set())
    p_own, b_own = p_hand in own, b_hand in own
    p_r9, b_r9 = is_royal9(player), is_royal9(banker)
    p_suited, b_suited = p_r9 and is_suited(player), b_r9 and is_suited(banker)
    if ruleset == MA:
        # §13(i) Table 1; "Exact Match": both hands the same combination posted at the
        # chair; "Any Two Personal": both posted there, not the same (INDEX Ambiguity 21).
        if p_own and b_own:
            return (
                "Exact Match Personal Progressive"
                if p_hand == b_hand
                else "Any Two Personal Progressive"
            )
        if b_own:
            return "Personal K9 on Banker Hand"
        if p_own:
            return "Personal K9 on Player Hand"
        # "Tie Hand" lines: both hands Royal 9s, both suited for $1,500 (Ambiguity 23).
        if p_suited and b_suited:
            return "Suited Royal 9 Tie Hand"
        if p_r9 and b_r9:
            return "Royal 9 Tie Hand"
    else:
        # midi §12(i) Table 1 and its hand definitions: "the exact 'King-9' combination"
        # in both hands (a chair posts one; where it posts more, two different ones are
        # each hand matching, the Banker's line the higher).
        if p_own and b_own and p_hand == b_hand:
            return "Personal King-9 vs. Personal King-9"
        if b_own:
            return "Banker Personal King-9"
        if p_own:
            return "Player Personal King-9"
        others = set().union(*(combos for s, combos in chairs.items() if s != seat))
        if p_hand == b_hand and p_hand in others:  # INDEX Ambiguity 24: the same combination
            return "Other Personal King-9 vs. Identical King-9"
        if p_suited and b_suited:
            return "Suited Royal 9 vs. Suited Royal 9"
        if p_r9 and b_r9:
            return "Royal 9 vs. Royal 9"
    if p_suited or b_suited:
        return "Any Suited Royal 9"
    if p_r9 or b_r9:
        return "Any Royal 9"
    return None
