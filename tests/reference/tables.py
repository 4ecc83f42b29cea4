"""The regulations' tables, copied by hand from the texts, each value beside its section.

Sections are those of the regulation texts (`shared/regulations/` beside the repository):
ma-baccarat (205 CMR), ma-midi-baccarat, md-mini-baccarat (COMAR 36.05.17) and
ma-chemin-de-fer. Where a text is ambiguous the reading is the one INDEX.md's
"Ambiguities" gives, named by its number.
"""

from __future__ import annotations

MA = "ma-baccarat"
MIDI = "ma-midi-baccarat"
MD = "md-mini-baccarat"
CDF = "ma-chemin-de-fer"
RULESETS = (MA, MIDI, MD, CDF)

DRAW = "draw"
STAND = "stand"
EITHER = "either"  # Chemin de Fer §8(a)(2): the Dominant Player's option on 5

# ---- cards and counts -----------------------------------------------------------------

# ma-baccarat §6(a), midi §6(a), md .06A, Chemin de Fer §1(b): 2-9 at face value,
# 10, J, Q, K zero, ace one.
CARD_VALUE = {
    "A": 1,
    "2": 2,
    "3": 3,
    "4": 4,
    "5": 5,
    "6": 6,
    "7": 7,
    "8": 8,
    "9": 9,
    "T": 0,
    "J": 0,
    "Q": 0,
    "K": 0,
}


def value(card: str) -> int:
    return CARD_VALUE[card[0]]


def point_count(cards: list[str]) -> int:
    """ma-baccarat §6(b) (md .06B-C, CdF §1(c)): the right digit of the total."""
    return sum(value(c) for c in cards) % 10


def is_natural(two_card_count: int) -> bool:
    """ma-baccarat §1 *Natural*: 8 or 9 on the first two cards (md: Ambiguity 14)."""
    return two_card_count in (8, 9)


# ---- drawing rules --------------------------------------------------------------------


def player_rule(ruleset: str, player_two: int, banker_two: int) -> str:
    """Whether the Player's Hand takes a third card."""
    # A Natural in either hand stops both: ma §11(a), midi §10(a), md .10A,
    # Chemin de Fer §8(a)(4) and §8(b).
    if is_natural(player_two) or is_natural(banker_two):
        return STAND
    if ruleset == CDF:
        # §8(a)(1) 0-4 "shall request"; (2) 5 "the option"; (3) 6-7 "shall not draw".
        if player_two <= 4:
            return DRAW
        return EITHER if player_two == 5 else STAND
    # ma §11(b)(1)-(2), midi §10(b)(1)-(2), md .10B(1)-(2): draw under 6, stay on 6 or more.
    return DRAW if player_two < 6 else STAND


# ma §11(c)(2)(iii) Table 1 (midi §10(c)(2)(iii) Table 1 and Chemin de Fer §8(c) Table 3
# print the same rows): the Banker's two-card total -> the values of the Player's third
# card on which the Banker draws. 0-2 "always draws"; 3 "unless Player's third card is 8";
# 4 "2 - 7"; 5 "4 - 7"; 6 "6 - 7"; 7 "stands".
TABLE_1: dict[int, frozenset[int]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset(range(10)) - {8},
    4: frozenset(range(2, 8)),
    5: frozenset(range(4, 8)),
    6: frozenset({6, 7}),
    7: frozenset(),
}

# md .10E(3)(a)-(j), keyed as the Maryland text is, on the point count of the Player's
# third card -> the Banker two-card totals among 3-6 that draw (the others stay).
MARYLAND_10E3: dict[int, frozenset[int]] = {
    0: frozenset({3}),  # (a)
    1: frozenset({3}),  # (b)
    2: frozenset({3, 4}),  # (c)
    3: frozenset({3, 4}),  # (d)
    4: frozenset({3, 4, 5}),  # (e), items numbered (1)-(4)
    5: frozenset({3, 4, 5}),  # (f)
    6: frozenset({3, 4, 5, 6}),  # (g)
    7: frozenset({3, 4, 5, 6}),  # (h)
    8: frozenset(),  # (i)
    9: frozenset({3}),  # (j)
}


def banker_rule(ruleset: str, player_two: int, banker_two: int, player_third: str | None) -> str:
    """Whether the Banker's Hand takes a third card, given the Player's third card as dealt
    (None when the Player's Hand holds two cards)."""
    if is_natural(player_two) or is_natural(banker_two):
        return STAND
    if player_third is None:
        # The Player stayed: ma §11(c)(1), midi §10(c)(1), md .10D: draw on 5 or less.
        # Chemin de Fer has no such rule (INDEX Ambiguity 1); its reading binds Table 3's
        # rows that need no third card (0-3 draw, 7 stands) and applies ma §11(c)(1) to
        # 4-6, which is the same draw on 0-5 and stand on 6-7.
        return DRAW if banker_two <= 5 else STAND
    third = value(player_third)
    if ruleset == MD:
        if banker_two < 3:  # .10E(1)
            return DRAW
        if banker_two == 7:  # .10E(2)
            return STAND
        return DRAW if banker_two in MARYLAND_10E3[third] else STAND  # .10E(3)
    return DRAW if third in TABLE_1[banker_two] else STAND


# ---- EZ events ------------------------------------------------------------------------

# ma §12(a), midi §11(a): "Dragon 7" or "Panda 8" announced at EZ tables; md .11A(2):
# "Dragon 7" only (Maryland has no Panda 8). Chemin de Fer has no EZ game.
EZ_EVENTS: dict[str, tuple[str, ...]] = {
    MA: ("dragon7", "panda8"),
    MIDI: ("dragon7", "panda8"),
    MD: ("dragon7",),
    CDF: (),
}


def is_dragon7(banker_cards: list[str], banker_total: int, player_total: int) -> bool:
    """ma §1 *Dragon 7*: a Banker's Hand of 7 with three cards, the Player's under 7."""
    return len(banker_cards) == 3 and banker_total == 7 and player_total < 7


def is_panda8(player_cards: list[str], player_total: int, banker_total: int) -> bool:
    """ma §1 *Panda* (midi §1 *Panda 8*): a Player's Hand of 8 with three cards, the
    Banker's under 8."""
    return len(player_cards) == 3 and player_total == 8 and banker_total < 8


# ---- permissible wagers ---------------------------------------------------------------

HOUSE_MONEY_RULESETS = (MA, MIDI)  # ma §8(a)(7), midi §7(a)(7); none in md .07A or CdF
ROYAL9_RULESETS = (MA, MIDI)  # ma §13(i), midi §12(i)
TIE_WAGER_RULESETS = (MA, MIDI, MD)  # Chemin de Fer has no Tie wager (§5(a)(3), §6(g)(3))


def bet_permitted(ruleset: str, bet: str, table: dict) -> bool:
    """The permissible wagers of the ruleset, with the table's options in force."""
    if ruleset == CDF:
        # §5(a): the Banker's wager on the Banker's Hand; §6(a): wagers against it.
        return bet in ("banker", "player")
    if bet in ("banker", "player", "tie"):  # ma §8(a)(1)-(3), midi §7(a)(1)-(3), md .07A(1)-(3)
        return True
    if bet in ("dragon_bonus_banker", "dragon_bonus_player"):
        # "If offered by a licensee": ma §8(a)(4), midi §7(a)(4), md .07A(4).
        return table["dragon_bonus_paytable"] is not None
    if bet == "dragon7":  # EZ tables only: ma §8(a)(5), midi §7(a)(5), md .07A(5)
        return bool(table["ez_baccarat"])
    if bet == "panda8":  # EZ tables only: ma §8(a)(6), midi §7(a)(6); not in md .07A
        return ruleset != MD and bool(table["ez_baccarat"])
    if bet == "house_money":  # "If offered": ma §8(a)(7), midi §7(a)(7)
        return ruleset in HOUSE_MONEY_RULESETS and bool(table["house_money"])
    if bet == "royal9":  # authorised by ma §13(i), midi §12(i) alone (INDEX Ambiguity 26)
        return ruleset in ROYAL9_RULESETS and table["royal9_paytable"] is not None
    return False


def bet_has_terms(ruleset: str, bet: str, table: dict) -> bool:
    """Whether the ruleset's text alone fixes how the wager settles, so that it can be
    settled even where the table does not offer it (WAG001 reports that apart): Dragon 7
    (ma §8(a)(5), §13(f); md .07A(5), .12G), Panda 8 (ma §8(a)(6), §13(g)) and House
    Money (ma §8(a)(7), §13(h)) carry their own odds. A Dragon Bonus needs the paytable
    "selected by the licensee" (§13(e)) and Royal 9 its paytable (§13(i)); a bet the
    ruleset does not know at all has no terms."""
    if bet_permitted(ruleset, bet, table):
        return True
    if ruleset == CDF:
        return False
    if bet == "dragon7":
        return True
    return bet in ("panda8", "house_money") and ruleset in HOUSE_MONEY_RULESETS


# ---- payout odds ----------------------------------------------------------------------

TIE_MINIMUM_ODDS = 8  # ma §13(b), midi §12(b), md .12B: "at least 8 to 1"
DRAGON7_ODDS = 40  # ma §13(f), midi §12(f), md .12G
PANDA8_ODDS = 25  # ma §13(g), midi §12(g)
HOUSE_MONEY_BOTH_PAIRS = 15  # ma §13(h), midi §12(h): "Player and Banker Pair 15 to 1"
HOUSE_MONEY_ONE_PAIR = 3  # "Player or Banker Pair 3 to 1"

# ma §13(e), midi §12(e), md .12F(1)-(3): margin of a non-Natural win -> odds; "natural"
# is the "Natural winner" line. A Natural tie pushes (all three).
DRAGON_BONUS: dict[str, dict[int | str, int]] = {
    "A": {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1, "natural": 1},
    "B": {9: 20, 8: 8, 7: 7, 6: 4, 5: 3, 4: 1, "natural": 1},
    "C": {9: 30, 8: 10, 7: 4, 6: 4, 5: 2, 4: 2, "natural": 1},
}

# ---- commission -----------------------------------------------------------------------

# ma §13(c), midi §12(c), md .12C: 5%; Chemin de Fer §9(c): four or five percent.
COMMISSION_PERCENTS: dict[str, tuple[int, ...]] = {MA: (5,), MIDI: (5,), MD: (5,), CDF: (4, 5)}
# "round off the vigorish to 25¢ or the next highest multiple of 25¢" (ma §13(c), midi
# §12(c), md .12D(1)); Chemin de Fer §9(c): 20¢ for a four percent vigorish.
ROUNDING_STEP_CENTS = {5: 25, 4: 20}
# EZ Baccarat: "vigorish is not collected" (ma §1, §13(c); midi §12(c); md .12C). No EZ
# game in Chemin de Fer.
EZ_RULESETS = (MA, MIDI, MD)


def commission_percent(ruleset: str, table_percent: int) -> int:
    """The percent due: the table's when the ruleset allows it, else the nearest one it
    allows (a 4% table at ma-baccarat owes the 5% of §13(c))."""
    allowed = COMMISSION_PERCENTS[ruleset]
    return min(allowed, key=lambda p: (abs(p - table_percent), p))


def commission_cents(won_cents: int, percent: int, rounding: bool) -> int:
    """`percent` of the amount won: rounded up to the next multiple of the step where the
    table rounds (INDEX Ambiguity 19: up, per wager), else half up to the cent (the
    contract's "Meanings")."""
    hundredths = won_cents * percent  # the exact commission in hundredths of a cent
    if rounding:
        step = ROUNDING_STEP_CENTS[percent] * 100
        return -(-hundredths // step) * ROUNDING_STEP_CENTS[percent]
    return (hundredths + 50) // 100


# ---- House Money rollover -------------------------------------------------------------
# ma §9(e)(1)a, midi §8(c)(3)(i)a: all of the payout, or the Rules Submission's portion,
# rides on the same player's Banker or Player wager; INDEX Ambiguity 20: exactly the share
# (payout x percent / 100, the contract rounds it down to the cent) or nothing.
ROLLOVER_BETS = ("banker", "player")

# ---- Royal 9 --------------------------------------------------------------------------

ROYAL9_STAKE_CENTS = 500  # ma §13(i) "a fixed $5 wager"; midi §12(i) "fixed at $5.00"
# ma §13(i): "standard 52 card, eight deck shoe"; midi §12(i): six or eight decks, six or
# seven seats.
ROYAL9_DECKS: dict[str, tuple[int, ...]] = {MA: (8,), MIDI: (6, 8)}
ROYAL9_SEATS: dict[str, tuple[int, ...]] = {MIDI: (6, 7)}
# midi §12(j): a random Must Hit award for Stax, with no line name (INDEX Ambiguity 25).
STAX_RULESETS = (MIDI,)
ROYAL9_FACES = "JQK"  # "a 9 and any face card (Jack, Queen, or King)": not a ten

# ma §13(i) Table 2: chair -> (suit of the face card, suit of the 9); each chair holds the
# King, Queen and Jack of that suit with that 9 (INDEX Ambiguity 22: all three are its
# personal combinations; chairs 10-14 have none).
TABLE_2_SUITS: dict[int, tuple[str, str]] = {
    1: ("S", "H"),
    2: ("S", "D"),
    3: ("C", "H"),
    4: ("C", "D"),
    5: ("H", "S"),
    6: ("H", "C"),
    7: ("D", "S"),
    8: ("D", "C"),
    9: ("D", "H"),
}

Combo = frozenset[str]


def table_2() -> dict[int, set[Combo]]:
    return {
        chair: {frozenset({face + face_suit, "9" + nine_suit}) for face in "KQJ"}
        for chair, (face_suit, nine_suit) in TABLE_2_SUITS.items()
    }


# Paytable lines in the order printed, highest first, with the fixed payout in cents or
# None for a progressive (meter) line. ma §13(i) Table 1 (Paytables 1 and 2 differ only
# in meters and seeds, which the logs do not hold):
MA_ROYAL9_LINES: dict[str, int | None] = {
    "Exact Match Personal Progressive": None,
    "Any Two Personal Progressive": None,
    "Personal K9 on Banker Hand": None,
    "Personal K9 on Player Hand": None,
    "Suited Royal 9 Tie Hand": 150000,
    "Royal 9 Tie Hand": 25000,
    "Any Suited Royal 9": 5000,
    "Any Royal 9": 2500,
}
# midi §12(i) Table 1:
MIDI_ROYAL9_LINES: dict[str, int | None] = {
    "Personal King-9 vs. Personal King-9": None,
    "Banker Personal King-9": None,
    "Player Personal King-9": None,
    "Other Personal King-9 vs. Identical King-9": 500000,
    "Suited Royal 9 vs. Suited Royal 9": 150000,
    "Royal 9 vs. Royal 9": 25000,
    "Any Suited Royal 9": 5000,
    "Any Royal 9": 2500,
}
ROYAL9_LINES = {MA: MA_ROYAL9_LINES, MIDI: MIDI_ROYAL9_LINES}
