"""The wager findings: PAY001-PAY006 (result, payout, line), COM001-COM003 (commission)
and WAG001-WAG010 (permissibility)."""

from __future__ import annotations

from collections import defaultdict

from .finding import Finding, dollars
from .hands import Deal, as_it_should_have_been_dealt
from .settle import Settlement, net_result, settle
from .tables import (
    CDF,
    DRAGON_BONUS,
    HOUSE_MONEY_RULESETS,
    ROLLOVER_BETS,
    ROYAL9_DECKS,
    ROYAL9_RULESETS,
    ROYAL9_SEATS,
    ROYAL9_STAKE_CENTS,
    STAX_RULESETS,
    TIE_MINIMUM_ODDS,
    TIE_WAGER_RULESETS,
    Combo,
    bet_has_terms,
    bet_permitted,
)


def wager_findings(
    ruleset: str,
    table: dict,
    rnd: dict,
    d: Deal,
    wagers: list[dict],
    chairs: dict[int, set[Combo]],
) -> list[Finding]:
    settled: dict[str, Settlement] = {}
    found: list[Finding] = []
    # The wagers are settled on the round as it should have been dealt (Ambiguity 28).
    d = as_it_should_have_been_dealt(d)
    for w in wagers:
        found += permissibility(ruleset, table, rnd, w)
        # An impermissible wager is still settled where the ruleset's text fixes its terms
        # (`bet_has_terms`): the patron is owed what those terms give. On a void round
        # "all wagers shall be returned" (ma §15(e)), whatever they are.
        if d.void or bet_has_terms(ruleset, w["bet"], table):
            settled[w["wager_id"]] = settle(ruleset, table, d, w, wagers, chairs)
            found += settlement(ruleset, table, w, settled[w["wager_id"]], d.void)
    found += rollovers(ruleset, table, wagers, settled)
    return found


def permissibility(ruleset: str, table: dict, rnd: dict, w: dict) -> list[Finding]:
    found: list[Finding] = []

    def add(rule: str, expected: object, logged: object) -> None:
        found.append(Finding(rule, w["round_id"], w["wager_id"], None, str(expected), str(logged)))

    bet = w["bet"]
    permitted = bet_permitted(ruleset, bet, table)
    if not permitted:  # ma §8(a), midi §7(a), md .07A, CdF §5(a) and §6(a)
        add("WAG001", "a permissible wager", bet)
    if bet == "royal9" and ruleset in ROYAL9_RULESETS and w["amount"] != ROYAL9_STAKE_CENTS:
        # ma §13(i), midi §12(i): the ruleset's Royal 9 wager is a fixed $5, offered or not.
        add("WAG002", dollars(ROYAL9_STAKE_CENTS), dollars(w["amount"]))
    if permitted and bet == "royal9":
        decks_ok = table["decks"] in ROYAL9_DECKS[ruleset]
        seats_ok = ruleset not in ROYAL9_SEATS or table["seats"] in ROYAL9_SEATS[ruleset]
        if not (decks_ok and seats_ok):  # ma §13(i): 8 decks; midi §12(i): 6/8 decks, 6/7 seats
            add("WAG003", "a Royal 9 table", f"{table['decks']} decks, {table['seats']} seats")
    late = w["placed_at"] is not None and rnd["no_more_bets_at"] is not None
    if late and w["placed_at"] > rnd["no_more_bets_at"]:
        # ma §8(c), midi §7(d), md .07D, CdF §6(e): nothing made or increased after it.
        add("WAG004", f"by {rnd['no_more_bets_at']}", w["placed_at"])
    if rnd["kind"] in ("free", "simulated"):
        # midi §1 Free Hand "without any wagers" (Ambiguity 11); simulated rounds "in which
        # wagers may not be accepted" (ma §15(c)(2), §15(d) and twins).
        add("WAG005", "no wager", rnd["kind"])
    if w["seat"] > table["seats"]:  # ma §2(a), midi §2(a), md .02A(1)
        add("WAG006", f"seat 1-{table['seats']}", w["seat"])
    # Only a wager against the Chemin de Fer Banker carries a call (§6(b)-(d)).
    takes_call = ruleset == CDF and bet == "player"
    if takes_call != (w["call"] is not None):
        add("WAG007", "a call" if takes_call else "no call", w["call"])
    return found


def settlement(ruleset: str, table: dict, w: dict, s: Settlement, void: bool) -> list[Finding]:
    """Impact: the patron's logged net result minus the correct one. A wrong result carries
    the wager's whole error; otherwise payout and commission each carry their own part."""
    found: list[Finding] = []

    def add(rule: str, impact: int | None, expected: object, logged: object) -> None:
        found.append(
            Finding(rule, w["round_id"], w["wager_id"], dollars(impact), str(expected), str(logged))
        )

    bet = w["bet"]
    logged_net = net_result(w["result"], w["payout"], w["commission"], s.at_risk)
    # midi §13(e): a void round returns every wager, so no Stax award explains a win there.
    stax = ruleset in STAX_RULESETS and bet == "royal9" and s.line is None and not void
    if w["result"] != s.result:
        if stax and w["result"] == "win" and w["award"] is None:
            # midi §12(j): a random Stax award pays without a line (INDEX Ambiguity 25).
            add("PAY006", None, "lose or a Stax award", "win")
        else:
            correct = s.net()
            add("PAY001", None if correct is None else logged_net - correct, s.result, w["result"])
    else:
        if s.payout is not None and w["payout"] != s.payout:
            # ma §13(a)-(i) and twins; a Dragon Bonus paid at another paytable's odds for
            # its margin is PAY003 (§13(e): "one of the following pay tables selected").
            other = s.margin is not None and any(
                w["payout"] == s.at_risk * odds[s.margin]
                for name, odds in DRAGON_BONUS.items()
                if name != table["dragon_bonus_paytable"]
            )
            rule = "PAY003" if other else "PAY002"
            add(rule, w["payout"] - s.payout, dollars(s.payout), dollars(w["payout"]))
        if w["commission"] != s.commission:
            # The commission is taken from the patron: charging less is a positive impact.
            impact = s.commission - w["commission"]
            if s.commission == 0:
                rule = "COM003"
            elif w["commission"] == 0:
                rule = "COM001"
            else:
                rule = "COM002"
            add(rule, impact, dollars(s.commission), dollars(w["commission"]))
    if bet == "tie" and ruleset in TIE_WAGER_RULESETS and table["tie_pays"] < TIE_MINIMUM_ODDS:
        # ma §13(b), midi §12(b), md .12B: "at least 8 to 1"; what the table's odds leave
        # short of it on a winning Tie wager, so that PAY002 + PAY004 is the whole error.
        short = (TIE_MINIMUM_ODDS - table["tie_pays"]) * s.at_risk if s.result == "win" else 0
        add("PAY004", -short, f"{TIE_MINIMUM_ODDS} to 1", f"{table['tie_pays']} to 1")
    if bet == "royal9" and w["result"] == s.result and w["award"] != s.line:
        # ma §13(i) Table 1, midi §12(i) Table 1: the line the first four cards give. On a
        # wrong result PAY001 carries the wager's whole error, the line included.
        add("PAY005", None, s.line, w["award"])
    return found


def rollovers(
    ruleset: str, table: dict, wagers: list[dict], settled: dict[str, Settlement]
) -> list[Finding]:
    """ma §9(e)(1)a, midi §8(c)(3)(i)a: a rollover is a winning House Money payout, all
    or the authorised share, on the same seat's Banker or Player wager (Ambiguity 20)."""
    share: dict[int, int] = defaultdict(int)
    won: set[int] = set()
    for w in wagers:
        s = settled.get(w["wager_id"])
        if w["bet"] == "house_money" and s is not None and s.result == "win":
            won.add(w["seat"])
            # The share is rounded down to the cent (the contract's `tables` column).
            share[w["seat"]] += s.payout * table["house_money_rollover_percent"] // 100
    carried = [w for w in wagers if (w["rollover"] or 0) > 0]

    def sourced(w: dict) -> bool:
        return ruleset in HOUSE_MONEY_RULESETS and w["bet"] in ROLLOVER_BETS and w["seat"] in won

    total: dict[int, int] = defaultdict(int)
    for w in carried:
        if sourced(w):
            total[w["seat"]] += w["rollover"]
    found: list[Finding] = []
    for w in carried:
        seat = w["seat"]
        if not sourced(w):
            rule = "WAG010"
        elif total[seat] > share[seat]:
            rule = "WAG008"
        elif total[seat] < share[seat]:
            rule = "WAG009"
        else:
            continue
        found.append(
            Finding(
                rule,
                w["round_id"],
                w["wager_id"],
                None,
                str(dollars(share.get(seat, 0))),
                str(dollars(total.get(seat, w["rollover"]))),
            )
        )
    return found
