"""`auditor odds`: the enumeration reproduces the published 8-deck figures and agrees
exactly with brute-force counts written apart from it (the draw rules typed out here
as the regulations print them, not read from the packs)."""

from __future__ import annotations

import json
import re
from collections import Counter
from fractions import Fraction
from itertools import product

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.contract import SUITS
from auditor.odds.report import decimal, odds_report, percent, ruleset_odds
from auditor.odds.royal9 import COMBOS, hand_pairs, line_chances, posted
from auditor.odds.shoe import State, enumerate_rounds, falling
from auditor.odds.table_options import OddsError, TableOptions, parse_table_options
from auditor.packs.model import load_all, load_pack, parse_pack
from tests.support.packs import NEW, new_pack_text
from tests.support.paths import RULES

MA = "ma-baccarat"


def row(report, bet: str, variant: str):
    found = [w for w in report.wagers if w.bet == bet and w.variant == variant]
    assert len(found) == 1, [(w.bet, w.variant) for w in report.wagers]
    return found[0]


@pytest.fixture(scope="module")
def eight_decks():
    return ruleset_odds(load_pack(MA), 8, TableOptions())


# ---- the published 8-deck figures -----------------------------------------------------


def test_published_eight_deck_outcomes(eight_decks) -> None:
    chances = eight_decks.outcomes[""]
    assert decimal(chances["banker"]) == "0.458597423"
    assert decimal(chances["player"]) == "0.446246609"
    assert decimal(chances["tie"]) == "0.095155968"
    assert sum(chances.values()) == 1


def test_published_banker_and_tie_edges(eight_decks) -> None:
    banker = row(eight_decks, "banker", "5% commission")
    assert f"{float(banker.house_edge) * 100:.4f}" == "1.0579"
    assert percent(banker.house_edge).startswith("1.0579")
    tie8 = row(eight_decks, "tie", "8 to 1")
    assert f"{float(tie8.house_edge) * 100:.4f}" == "14.3596"
    nine = ruleset_odds(load_pack(MA), 8, TableOptions(tie_pays=9))
    assert f"{float(row(nine, 'tie', '9 to 1').house_edge) * 100:.4f}" == "4.8440"
    # The edges follow from the outcome chances exactly.
    chances = eight_decks.outcomes[""]
    assert banker.ev == chances["banker"] * Fraction(95, 100) - chances["player"]
    assert tie8.ev == 9 * chances["tie"] - 1


def test_published_ez_and_dragon_bonus_figures(eight_decks) -> None:
    assert f"{float(row(eight_decks, 'dragon7', 'Dragon 7').win):.6f}" == "0.022534"
    assert f"{float(row(eight_decks, 'panda8', 'Panda 8').win):.6f}" == "0.034543"
    ez = row(eight_decks, "banker", "EZ Banker, push on Dragon 7")
    assert f"{float(ez.house_edge) * 100:.4f}" == "1.0183"
    player_a = row(eight_decks, "dragon_bonus_player", "Player hand, paytable A")
    banker_a = row(eight_decks, "dragon_bonus_banker", "Banker hand, paytable A")
    assert f"{float(player_a.house_edge) * 100:.2f}" == "2.65"
    assert f"{float(banker_a.house_edge) * 100:.2f}" == "9.37"


# ---- brute force over the shoe, by value --------------------------------------------

# Table 1 / .10E(3) / Table 3 after a Player draw, typed out: Banker total -> third cards
# on which he draws.
BANKER_DRAWS_ON = {
    3: {0, 1, 2, 3, 4, 5, 6, 7, 9},
    4: {2, 3, 4, 5, 6, 7},
    5: {4, 5, 6, 7},
    6: {6, 7},
}


def banker_draws(banker: int, third: int | None) -> bool:
    if third is None:
        return banker <= 5
    if banker <= 2:
        return True
    if banker == 7:
        return False
    return third in BANKER_DRAWS_ON[banker]


def brute_force(decks: int, player_draws_on_5: bool = True) -> dict[State, int]:
    """Deal every round card by card from the counts left, ending where the rules end
    it; a round of k cards is weighted by the (T-k)(T-k-1)... ways to continue."""
    counts = [16 * decks] + [4 * decks] * 9
    total = sum(counts)
    tally: Counter[State] = Counter()

    def draw(weight: int):
        for value in range(10):
            if counts[value]:
                left = counts[value]
                counts[value] -= 1
                yield value, weight * left
                counts[value] += 1

    def leaf(weight: int, used: int, p: int, b: int, pc: int, bc: int, pn: bool, bn: bool):
        state = State(p, b, pc, bc, pn, bn, False, False)
        tally[state] += weight * falling(total - used, 6 - used)

    for p1, w1 in draw(1):
        for b1, w2 in draw(w1):
            for p2, w3 in draw(w2):
                for b2, w4 in draw(w3):
                    p, b = (p1 + p2) % 10, (b1 + b2) % 10
                    if p >= 8 or b >= 8:
                        leaf(w4, 4, p, b, 2, 2, p >= 8, b >= 8)
                    elif p <= 4 or (p == 5 and player_draws_on_5):
                        for p3, w5 in draw(w4):
                            if banker_draws(b, p3):
                                for b3, w6 in draw(w5):
                                    leaf(w6, 6, (p + p3) % 10, (b + b3) % 10, 3, 3, False, False)
                            else:
                                leaf(w5, 5, (p + p3) % 10, b, 3, 2, False, False)
                    elif banker_draws(b, None):
                        for b3, w5 in draw(w4):
                            leaf(w5, 5, p, (b + b3) % 10, 2, 3, False, False)
                    else:
                        leaf(w4, 4, p, b, 2, 2, False, False)
    return dict(tally)


@pytest.fixture(scope="module")
def one_deck_brute_force() -> dict[State, int]:
    return brute_force(1)


@pytest.mark.parametrize("ruleset", ["ma-baccarat", "ma-midi-baccarat", "md-mini-baccarat"])
def test_one_deck_enumeration_is_the_brute_force_count(ruleset, one_deck_brute_force) -> None:
    shoe = enumerate_rounds(load_pack(ruleset), 1)
    assert shoe.denominator == falling(52, 6)
    assert shoe.weights == one_deck_brute_force


def test_chemin_de_fer_both_choices_on_5_match_brute_force(one_deck_brute_force) -> None:
    pack = load_pack("ma-chemin-de-fer")
    assert enumerate_rounds(pack, 1, either_draws=True).weights == one_deck_brute_force
    assert enumerate_rounds(pack, 1, either_draws=False).weights == brute_force(1, False)


def test_one_deck_bets_from_brute_force(one_deck_brute_force) -> None:
    """Banker, Player, Tie, Dragon 7 and Panda 8 as Fractions of the brute-force count."""
    denominator = falling(52, 6)

    def chance(event) -> Fraction:
        return Fraction(sum(w for s, w in one_deck_brute_force.items() if event(s)), denominator)

    report = ruleset_odds(load_pack(MA), 1, TableOptions())
    banker = chance(lambda s: s.banker > s.player)
    player = chance(lambda s: s.player > s.banker)
    tie = chance(lambda s: s.player == s.banker)
    assert report.outcomes[""] == {"banker": banker, "player": player, "tie": tie}
    assert row(report, "banker", "5% commission").ev == banker * Fraction(19, 20) - player
    assert row(report, "tie", "8 to 1").ev == 9 * tie - 1
    dragon7 = chance(lambda s: s.banker == 7 and s.banker_cards == 3 and s.player < 7)
    panda8 = chance(lambda s: s.player == 8 and s.player_cards == 3 and s.banker < 8)
    assert row(report, "dragon7", "Dragon 7").win == dragon7
    assert row(report, "panda8", "Panda 8").win == panda8
    assert row(report, "banker", "EZ Banker, push on Dragon 7").ev == banker - dragon7 - player


def test_by_rank_gives_the_same_rounds_and_the_pairs() -> None:
    pack = load_pack(MA)
    by_value, by_rank = enumerate_rounds(pack, 2), enumerate_rounds(pack, 2, by_rank=True)
    merged: Counter[State] = Counter()
    for state, weight in by_rank.weights.items():
        merged[state._replace(player_pair=False, banker_pair=False)] += weight
    assert dict(merged) == by_value.weights
    # Pairs by rank from the first four cards, counted rank by rank.
    cards, per_rank = 104, 8
    both = Fraction(0)
    for ranks in product(range(13), repeat=4):
        if ranks[0] == ranks[2] and ranks[1] == ranks[3]:
            ways = 1
            for used in Counter(ranks).values():
                ways *= falling(per_rank, used)
            both += Fraction(ways, falling(cards, 4))
    assert by_rank.probability(lambda s: s.player_pair) == Fraction(per_rank - 1, cards - 1)
    assert by_rank.probability(lambda s: s.player_pair and s.banker_pair) == both


# ---- every deck count ------------------------------------------------------------------


@pytest.mark.parametrize("decks", range(1, 9))
def test_every_deck_count_sums_to_one(decks: int) -> None:
    packs = load_all()
    for report in odds_report(None, decks, TableOptions()):
        # Every wager the pack permits is priced, and nothing else.
        assert {w.bet for w in report.wagers} == set(packs[report.ruleset].permitted)
        for chances in report.outcomes.values():
            assert sum(chances.values()) == 1
        for wager in report.wagers:
            assert wager.win + wager.push + wager.lose == 1, (report.ruleset, wager.variant)
            assert wager.ev is None or -1 <= wager.ev < 1


def test_a_game_is_enumerated_once_and_another_game_anew() -> None:
    text = (RULES / "ma-baccarat.yaml").read_text(encoding="utf-8")
    base, again = (parse_pack(text, file="ma-baccarat.yaml") for _ in range(2))
    assert base is not again  # read twice: the same game, not the same pack
    assert enumerate_rounds(again, 6) is enumerate_rounds(base, 6)
    # One Banker cell drawn where it stood: another game, enumerated for itself.
    changed = parse_pack(new_pack_text(), file=f"{NEW}.yaml", ruleset=NEW)
    assert enumerate_rounds(changed, 6).weights != enumerate_rounds(base, 6).weights
    chemin = load_pack("ma-chemin-de-fer")
    drawn, stood = (enumerate_rounds(chemin, 6, either_draws=e) for e in (True, False))
    assert drawn.weights != stood.weights


# ---- Royal 9 ---------------------------------------------------------------------------


def royal9_brute_force(decks: int) -> dict[tuple, Fraction]:
    """(Player combination, Banker combination) from the first four cards, each card one
    of the sixteen nines and faces by suit, or any other card."""
    faces = [f"{r}{s}" for r in "KQJ" for s in SUITS]
    nines = [f"9{s}" for s in SUITS]
    named = faces + nines
    other = "other"
    count = {card: decks for card in named} | {other: (52 - len(named)) * decks}
    total = falling(52 * decks, 4)

    def combo(a: str, b: str):
        if a in faces and b in nines:
            return a + b
        if b in faces and a in nines:
            return b + a
        return None

    found: Counter = Counter()
    for cards in product([*named, other], repeat=4):
        ways = 1
        for card, used in Counter(cards).items():
            ways *= falling(count[card], used)
        if ways:
            found[(combo(cards[0], cards[2]), combo(cards[1], cards[3]))] += ways
    return {key: Fraction(n, total) for key, n in found.items()}


@pytest.mark.parametrize("decks", [1, 2, 8])
def test_royal9_hands_match_a_card_by_card_count(decks: int) -> None:
    exact = hand_pairs(decks)
    brute = royal9_brute_force(decks)
    assert {k: v for k, v in exact.items() if v} == brute
    assert len(COMBOS) == 48


def test_royal9_lines_at_eight_decks() -> None:
    pack = load_pack(MA)
    mine, other, _ = posted(pack, TableOptions(seat=1))
    assert mine == {"KS9H", "QS9H", "JS9H"}
    table = pack.payouts.royal9.paytables["1"]
    chances = line_chances(table, 8, mine, other)
    cards = 416
    # Both hands the same posted combination: 2 orders per hand, 8 then 7 copies of each card.
    assert chances["Exact Match Personal Progressive"] == Fraction(
        3 * 4 * 8 * 7 * 8 * 7, falling(cards, 4)
    )
    royal9_hand = Fraction(2 * 12 * 8 * 4 * 8, falling(cards, 2))
    either = sum(chances.values())
    both = hand_pairs(8)
    assert either == 1 - sum(v for (p, b), v in both.items() if p is None and b is None)
    assert abs(float(either) - (2 * float(royal9_hand) - float(royal9_hand) ** 2)) < 1e-4
    # A chair with no posted combination can never win a personal line.
    empty, _, notes = posted(pack, TableOptions(seat=12))
    assert not empty and any("posts no combination" in n for n in notes)


def test_royal9_chairs_of_a_pack_that_states_no_seat_limit() -> None:
    """A pack may leave the table's seats and Royal 9's unbounded (null): the chairs
    posted are then counted as at a table of no stated maximum (one chair)."""
    text = (RULES / "ma-midi-baccarat.yaml").read_text(encoding="utf-8")
    unbounded = re.sub(r"(?m)^  seats: \{.*\}$", "  seats: null", text)
    unbounded = unbounded.replace("seats: [6, 7], cite", "seats: null, cite")
    pack = parse_pack(unbounded, file="unbounded.yaml")
    assert pack.limits.seats is None and pack.limits.royal9.seats is None
    mine, other, notes = posted(pack, TableOptions(seat=1))
    assert len(mine) == 1 and not other and "1 chairs" in notes[0]


# ---- options and the command line -------------------------------------------------------


def test_table_options_parse() -> None:
    options = parse_table_options(
        ["tie_pays=9 commission_percent=4", "commission_rounding=false,dragon_bonus_paytable=b"]
    )
    assert options == TableOptions(
        tie_pays=9, commission_percent=4, commission_rounding=False, dragon_bonus_paytable="B"
    )
    for bad in ("tie_pays", "tie_pays=x", "nope=1", "commission_percent=101", "ez_baccarat=maybe"):
        with pytest.raises(OddsError):
            parse_table_options([bad])


def test_options_select_the_wagers() -> None:
    pack = load_pack(MA)
    report = ruleset_odds(
        pack, 8, TableOptions(dragon_bonus_paytable="B", ez_baccarat=True, house_money=False)
    )
    bets = {(w.bet, w.variant) for w in report.wagers}
    assert ("banker", "5% commission") not in bets  # an EZ table has only the EZ Banker
    assert ("dragon_bonus_player", "Player hand, paytable B") in bets
    assert not any(w.bet == "house_money" for w in report.wagers)
    assert not any("paytable A" in w.variant for w in report.wagers)
    four = ruleset_odds(pack, 8, TableOptions(commission_percent=4))
    assert any("not a percent" in (w.note or "") for w in four.wagers)


def test_cli_json_is_exact() -> None:
    result = CliRunner().invoke(
        main, ["odds", "--decks", "8", "--ruleset", "md-mini-baccarat", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    outcome = data["rulesets"][0]["outcomes"][0]
    assert outcome["banker"]["decimal"] == "0.458597423"
    numerator, denominator = map(int, outcome["tie"]["fraction"].split("/"))
    assert decimal(Fraction(numerator, denominator)) == "0.095155968"


def test_cli_table_and_bad_arguments() -> None:
    runner = CliRunner()
    ok = runner.invoke(
        main, ["odds", "--decks", "6", "--ruleset", "ma-chemin-de-fer", "commission_percent=4"]
    )
    assert ok.exit_code == 0, ok.output
    assert "Player stands on 5" in ok.output
    for args in (
        ["odds", "--decks", "0"],
        ["odds", "--decks", "8", "--table-options", "tie=9"],
        ["odds", "--decks", "8", "--ruleset", "nowhere"],
        ["odds", "--decks", "8", "--ruleset", MA, "royal9_paytable=midi"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert "error:" in result.output


def test_naturals_by_direct_count() -> None:
    """The chance of a Player Natural, counted from the first two cards alone."""
    decks = 3
    counts = [16 * decks] + [4 * decks] * 9
    ways = sum(
        counts[a] * (counts[b] - (a == b))
        for a in range(10)
        for b in range(10)
        if (a + b) % 10 in (8, 9)
    )
    shoe = enumerate_rounds(load_pack(MA), decks)
    assert shoe.denominator == falling(52 * decks, 6)
    assert shoe.probability(lambda s: s.player_natural) == Fraction(ways, falling(52 * decks, 2))


def test_one_deck_is_said_in_the_singular():
    from click.testing import CliRunner

    from auditor.cli import main
    from auditor.packs.loaded import builtin_packs

    ruleset = next(iter(builtin_packs()))
    shown = CliRunner().invoke(main, ["odds", "--decks", "1", "--ruleset", ruleset]).stdout
    assert ", 1 deck\n" in shown and "note: 1 deck is outside" in shown
    assert "deck(s)" not in shown and "1 decks" not in shown
