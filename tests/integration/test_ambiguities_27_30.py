"""INDEX.md Ambiguities 27-30, each on a round of real cards where its reading matters:
the engine's findings and impacts when the logs follow the reading, and when they follow
the other one. The packs name each reading; the simulator settles by it too.

- 27: a Chemin de Fer `player` wager without a call is still against the Bank.
- 28: where a Natural was wrongly given a third card, every wager is settled on the round
  as it should have been dealt (each hand's first two cards).
- 29: a rollover on a side wager is one WAG010 on that wager and stays out of the seat's
  total.
- 30: a Chemin de Fer Bank carrying a rollover is settled and covered on amount + rollover.
"""

from __future__ import annotations

from decimal import Decimal
from importlib.resources import files
from pathlib import Path

import polars as pl
import pytest
import yaml

from auditor.casework.build import case_rows
from auditor.errors import RulesetError
from auditor.packs.loaded import load_pack_file
from auditor.packs.model import load_all
from auditor.pipeline import find, run_validation
from auditor.simulator.settle import (
    CARD_CODES,
    CHEMIN,
    MA_BACCARAT,
    TableOptions,
    Wager,
    natural_drew,
    settle_chemin,
    settle_round,
    settled_facts,
)

Found = set[tuple[str, str | None, Decimal | None]]
RULES = files("auditor.rules")


def audit(case: dict, write_dataset, families: tuple[str, ...] = ()) -> Found:
    """(rule, wager_id, impact) of every finding of the case (of `families` if given)."""
    validated = run_validation(write_dataset(case_rows(case)))
    assert validated.quarantine.height == 0, validated.quarantine.to_dicts()
    found = find(validated)
    if families:
        found = found.filter(pl.col("rule").str.slice(0, 3).is_in(families))
    return {(r["rule"], r["wager_id"], r["impact"]) for r in found.iter_rows(named=True)}


def usd(text: str) -> Decimal:
    return Decimal(text)


def cards(*names: str) -> list[int]:
    return [CARD_CODES[name] for name in names]


# ---- the packs name the readings --------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "numbers"),
    [
        ("ma-baccarat", {28, 29}),
        ("ma-midi-baccarat", {28, 29}),
        ("md-mini-baccarat", {28}),
        ("ma-chemin-de-fer", {27, 28, 30}),
    ],
)
def test_each_pack_names_the_readings_it_applies(ruleset: str, numbers: set[int]) -> None:
    pack = load_all()[ruleset]
    assert {reading.ambiguity for reading in pack.readings} & {27, 28, 29, 30} == numbers
    assert pack.naturals.drawn_in_error.settle_on == "first_two_cards"
    assert "Ambiguity 28" in (pack.naturals.drawn_in_error.note or "")
    banker = pack.payouts.banker
    if ruleset == "ma-chemin-de-fer":
        assert (banker.basis, banker.covered_by) == ("covered", ("player",))
        assert "Ambiguity 27" in banker.note and "Ambiguity 30" in banker.note
    else:
        assert (banker.basis, banker.covered_by) == ("stake", None)
    rollover = pack.procedure("house_money_rollover")
    if rollover is not None:
        assert "Ambiguity 29" in (rollover.note or "")


# ---- 27: a call-less wager against the Bank -------------------------------------------

# Banker 4 4 (8) beats Player K 2 (2). The Bank of $300.00 faces a partial wager of
# $100.00 and one of $100.00 logged without a call: it covers $200.00 (§6(e), §9(b)).
CALL_LESS = {
    "ruleset": "ma-chemin-de-fer",
    "round": {"player_cards": ["KS", "2H"], "banker_cards": ["4C", "4D"]},
}


def call_less(bank_payout: str, bank_commission: str) -> dict:
    return {
        **CALL_LESS,
        "wagers": [
            {
                "bet": "banker",
                "amount": "300.00",
                "result": "win",
                "payout": bank_payout,
                "commission": bank_commission,
            },
            {"bet": "player", "seat": 2, "call": "partial", "amount": "100.00", "result": "lose"},
            {"bet": "player", "seat": 3, "amount": "100.00", "result": "lose"},
        ],
    }


def test_27_the_bank_covers_a_call_less_wager(write_dataset) -> None:
    # $200.00 won, 5% of it $10.00 (§9(c)): only the missing call is reported.
    found = audit(call_less("200.00", "10.00"), write_dataset)
    assert found == {("WAG007", "W3", None)}


def test_27_a_bank_settled_without_the_call_less_wager_is_short(write_dataset) -> None:
    # Logged as if the call-less wager were not against the Bank: $100.00 and $5.00.
    found = audit(call_less("100.00", "5.00"), write_dataset)
    assert found == {
        ("WAG007", "W3", None),
        ("PAY002", "W1", usd("-100.00")),
        ("COM002", "W1", usd("5.00")),
    }


def test_27_a_call_less_wager_wins_from_the_bank(write_dataset) -> None:
    # Player 9 (K 9) beats Banker 8: the Bank loses the covered $200.00; each wager
    # against it wins its own amount.
    case = {
        **CALL_LESS,
        "round": {"player_cards": ["KS", "9H"], "banker_cards": ["4C", "4D"]},
        "wagers": [
            {"bet": "banker", "amount": "300.00", "result": "lose"},
            {"bet": "player", "seat": 2, "call": "partial", "amount": "100.00",
             "result": "win", "payout": "100.00"},
            {"bet": "player", "seat": 3, "amount": "100.00", "result": "win", "payout": "0.00"},
        ],
    }  # fmt: skip
    assert audit(case, write_dataset) == {
        ("WAG007", "W3", None),
        ("PAY002", "W3", usd("-100.00")),
    }


# ---- 28: a Natural given a third card -------------------------------------------------

# The Player's 2 6 is a Natural 8, wrongly given a 4 (DRW001); the Banker's 8 6 (4)
# wrongly drew a 2 (DRW003). As dealt Banker 6 beats Player 2 by four; as it should have
# been dealt the Player's Natural 8 beats the Banker's 4.
DREW = {
    "ruleset": "ma-baccarat",
    "table": {"dragon_bonus_paytable": "A"},
    "round": {"player_cards": ["2C", "6D", "4D"], "banker_cards": ["8S", "6C", "2H"]},
}


def drew(wagers: list[dict]) -> dict:
    return {**DREW, "wagers": wagers}


def test_28_wagers_settled_on_the_round_as_it_should_have_been_dealt(write_dataset) -> None:
    found = audit(
        drew(
            [
                {"bet": "player", "amount": "10.00", "result": "win", "payout": "10.00"},
                {"bet": "banker", "seat": 2, "amount": "10.00", "result": "lose"},
                {"bet": "tie", "seat": 3, "amount": "10.00", "result": "lose"},
                # A Natural winner, 1 to 1 on Paytable A (§8(a)(4)(i)a, §13(e)).
                {"bet": "dragon_bonus_player", "seat": 4, "amount": "10.00", "result": "win",
                 "payout": "10.00"},
                # Not a Natural, and short of the Player's 8 (§8(a)(4)(ii)b).
                {"bet": "dragon_bonus_banker", "seat": 5, "amount": "10.00", "result": "lose"},
            ]
        ),
        write_dataset,
    )  # fmt: skip
    assert found == {("DRW001", None, None), ("DRW003", None, None)}


def test_28_wagers_settled_on_the_cards_as_dealt_are_wrong(write_dataset) -> None:
    found = audit(
        drew(
            [
                {"bet": "player", "amount": "10.00", "result": "lose"},
                {"bet": "banker", "seat": 2, "amount": "10.00", "result": "win",
                 "payout": "10.00", "commission": "0.50"},
                {"bet": "tie", "seat": 3, "amount": "10.00", "result": "lose"},
                {"bet": "dragon_bonus_player", "seat": 4, "amount": "10.00", "result": "lose"},
                # Banker 6 over Player 2 by four: 1 to 1 on Paytable A, as dealt.
                {"bet": "dragon_bonus_banker", "seat": 5, "amount": "10.00", "result": "win",
                 "payout": "10.00"},
            ]
        ),
        write_dataset,
    )  # fmt: skip
    assert found == {
        ("DRW001", None, None),
        ("DRW003", None, None),
        ("PAY001", "W1", usd("-20.00")),
        ("PAY001", "W2", usd("19.50")),
        ("PAY001", "W4", usd("-20.00")),
        ("PAY001", "W5", usd("20.00")),
    }


def test_28_equal_naturals_push_after_one_drew(write_dataset) -> None:
    # Both hands Natural 8; the Banker wrongly drew a 3 (8 + 3: 1). As dealt the Player
    # wins 8 to 1; as it should have been dealt the two Naturals tie: Banker and Player
    # wagers and both Dragon Bonuses push (§8(a)(4)(iii)), the Tie wins 8 to 1.
    case = {
        **DREW,
        "round": {"player_cards": ["8C", "JS"], "banker_cards": ["6H", "2S", "3S"]},
    }
    reading = [
        {"bet": "player", "amount": "10.00", "result": "push"},
        {"bet": "banker", "seat": 2, "amount": "10.00", "result": "push"},
        {"bet": "tie", "seat": 3, "amount": "10.00", "result": "win", "payout": "80.00"},
        {"bet": "dragon_bonus_player", "seat": 4, "amount": "10.00", "result": "push"},
        {"bet": "dragon_bonus_banker", "seat": 5, "amount": "10.00", "result": "push"},
    ]
    assert audit({**case, "wagers": reading}, write_dataset) == {("DRW003", None, None)}
    as_dealt = [
        {"bet": "player", "amount": "10.00", "result": "win", "payout": "10.00"},
        {"bet": "banker", "seat": 2, "amount": "10.00", "result": "lose"},
        {"bet": "tie", "seat": 3, "amount": "10.00", "result": "lose"},
        {"bet": "dragon_bonus_player", "seat": 4, "amount": "10.00", "result": "win",
         "payout": "10.00"},
        {"bet": "dragon_bonus_banker", "seat": 5, "amount": "10.00", "result": "lose"},
    ]  # fmt: skip
    assert audit({**case, "wagers": as_dealt}, write_dataset) == {
        ("DRW003", None, None),
        ("PAY001", "W1", usd("10.00")),
        ("PAY001", "W2", usd("-10.00")),
        ("PAY001", "W3", usd("-90.00")),
        ("PAY001", "W4", usd("10.00")),
        ("PAY001", "W5", usd("-10.00")),
    }


def test_28_no_dragon_7_in_the_round_as_it_should_have_been_dealt(write_dataset) -> None:
    # EZ table. The Banker's 4 4 is a Natural 8, wrongly given a 9: as dealt a three-card
    # 7 against the Player's 5, a Dragon 7 (announced, as the cards show). As it should
    # have been dealt the Natural 8 wins: the Banker wager is paid 1 to 1 without vig and
    # Dragon 7 Insurance loses.
    case = {
        "ruleset": "ma-baccarat",
        "table": {"ez_baccarat": True},
        "round": {"player_cards": ["2C", "3D"], "banker_cards": ["4S", "4H", "9C"],
                  "ez_event": "dragon7"},
    }  # fmt: skip
    reading = [
        {"bet": "banker", "amount": "10.00", "result": "win", "payout": "10.00"},
        {"bet": "dragon7", "seat": 2, "amount": "5.00", "result": "lose"},
    ]
    assert audit({**case, "wagers": reading}, write_dataset) == {("DRW003", None, None)}
    as_dealt = [
        {"bet": "banker", "amount": "10.00", "result": "push"},
        {"bet": "dragon7", "seat": 2, "amount": "5.00", "result": "win", "payout": "200.00"},
    ]
    assert audit({**case, "wagers": as_dealt}, write_dataset) == {
        ("DRW003", None, None),
        ("PAY001", "W1", usd("-10.00")),
        ("PAY001", "W2", usd("205.00")),
    }


def test_28_a_round_without_a_natural_is_settled_as_dealt(write_dataset) -> None:
    # Player 2 3 (5) stood, a missing draw (DRW002), and the Banker's 3 4 (7) drew a K, a
    # card too many (DRW003). No Natural: the wagers follow the cards as dealt (the
    # contract), Banker 7 over Player 5.
    case = {
        "ruleset": "ma-baccarat",
        "round": {"player_cards": ["2C", "3D"], "banker_cards": ["3S", "4H", "KC"]},
        "wagers": [{"bet": "banker", "amount": "10.00", "result": "win", "payout": "10.00",
                    "commission": "0.50"}],
    }  # fmt: skip
    assert audit(case, write_dataset, ("PAY", "COM")) == set()


def test_28_the_simulator_settles_on_the_round_as_it_should_have_been_dealt() -> None:
    opts = TableOptions(MA_BACCARAT, 12, 8, dragon_bonus_paytable="A")
    pc, bc = cards("2C", "6D", "4D"), cards("8S", "6C", "2H")
    assert natural_drew(pc, bc)
    facts = settled_facts(pc, bc)
    assert (facts.pt, facts.bt, facts.outcome, facts.p_nat) == (8, 4, "player", True)
    wagers = [
        Wager(1, None, "player", 1000, None, 0.9),
        Wager(2, None, "dragon_bonus_banker", 1000, None, 0.9),
    ]
    settle_round(wagers, facts, opts)
    assert [(w.result, w.payout) for w in wagers] == [("win", 1000), ("lose", 0)]
    assert not natural_drew(cards("2C", "3D"), cards("3S", "4H", "KC"))


# ---- 29: a side wager's rollover ------------------------------------------------------

# Player 9 9 (a pair, Natural 8) beats Banker 2 3: House Money wins 3 to 1, $30.00, all of
# which may roll over (100%). The Tie wager carries $5.00 of rollover, which only a Banker
# or Player wager may carry (§9(e)(1)a): WAG010 on the Tie wager alone.
ROLLOVER = {
    "ruleset": "ma-baccarat",
    "table": {"house_money": True, "house_money_rollover_percent": 100},
    "round": {"player_cards": ["9S", "9H"], "banker_cards": ["2C", "3D"]},
}


def rollovers(player_rollover: str, player_payout: str) -> dict:
    return {
        **ROLLOVER,
        "wagers": [
            {"bet": "house_money", "amount": "10.00", "result": "win", "payout": "30.00"},
            {"bet": "player", "amount": "10.00", "rollover": player_rollover, "result": "win",
             "payout": player_payout},
            {"bet": "tie", "amount": "5.00", "rollover": "5.00", "result": "lose"},
        ],
    }  # fmt: skip


def test_29_the_whole_share_on_the_player_wager_is_right(write_dataset) -> None:
    # The seat's total is the Player wager's $30.00, the share: nothing on it; counting
    # the Tie wager's $5.00 in would have made it $35.00, above the share.
    assert audit(rollovers("30.00", "40.00"), write_dataset) == {("WAG010", "W3", None)}


def test_29_the_side_wager_does_not_make_up_the_share(write_dataset) -> None:
    # $25.00 on the Player wager is short of the $30.00 share (WAG009), although with
    # the Tie wager's $5.00 the seat carries $30.00.
    found = audit(rollovers("25.00", "35.00"), write_dataset)
    assert found == {("WAG010", "W3", None), ("WAG009", "W2", None)}
    messages = find(run_validation(write_dataset(case_rows(rollovers("25.00", "35.00")))))
    short = messages.filter(pl.col("rule") == "WAG009").row(0, named=True)
    assert (short["expected"], short["logged"]) == ("$30.00", "$25.00")


def test_29_the_side_wager_is_settled_on_amount_plus_rollover(write_dataset) -> None:
    # The Tie wager lost its $5.00 + $5.00: a payout on it is an overpayment of the lost
    # $10.00 stake, found on it beside its WAG010.
    case = rollovers("30.00", "40.00")
    case["wagers"][2] = {"bet": "tie", "amount": "5.00", "rollover": "5.00", "result": "push"}
    assert audit(case, write_dataset) == {
        ("WAG010", "W3", None),
        ("PAY001", "W3", usd("10.00")),
    }


# ---- 30: a rollover on a Chemin de Fer Bank --------------------------------------------

# Banker 5 2 (7) beats Player K 6 (6). The Bank of $100.00 carries a $50.00 rollover
# (WAG010: Chemin de Fer has no House Money); partial wagers of $60.00 and $60.00 cover
# $120.00 of its $150.00. (The §6(a) limits are procedure checks on the amount placed,
# left out here: PRC007.)
BANK_ROLLOVER = {
    "ruleset": "ma-chemin-de-fer",
    "round": {"player_cards": ["KS", "6H"], "banker_cards": ["5C", "2D"]},
}


def bank_rollover(payout: str, commission: str, player_rollover: str | None = None) -> dict:
    return {
        **BANK_ROLLOVER,
        "wagers": [
            {"bet": "banker", "amount": "100.00", "rollover": "50.00", "result": "win",
             "payout": payout, "commission": commission},
            {"bet": "player", "seat": 2, "call": "partial", "amount": "60.00", "result": "lose"},
            {"bet": "player", "seat": 3, "call": "partial", "amount": "60.00",
             "rollover": player_rollover, "result": "lose"},
        ],
    }  # fmt: skip


SETTLEMENT = ("PAY", "COM", "WAG")


def test_30_the_bank_is_covered_on_amount_plus_rollover(write_dataset) -> None:
    # min($150.00, $120.00) won, 5% of it $6.00.
    found = audit(bank_rollover("120.00", "6.00"), write_dataset, SETTLEMENT)
    assert found == {("WAG010", "W1", None)}


def test_30_a_bank_covered_on_its_amount_alone_is_short(write_dataset) -> None:
    # Logged on the amount alone: min($100.00, $120.00), and $5.00.
    found = audit(bank_rollover("100.00", "5.00"), write_dataset, SETTLEMENT)
    assert found == {
        ("WAG010", "W1", None),
        ("PAY002", "W1", usd("-20.00")),
        ("COM002", "W1", usd("1.00")),
    }


def test_30_a_wager_against_the_bank_covers_its_rollover_too(write_dataset) -> None:
    # As for every other wager, the second partial wager stakes $60.00 + $20.00: the
    # Bank covers $140.00 of its $150.00 and wins it, 5% $7.00.
    found = audit(bank_rollover("140.00", "7.00", "20.00"), write_dataset, SETTLEMENT)
    assert found == {("WAG010", "W1", None), ("WAG010", "W3", None)}


def test_27_30_the_simulator_covers_the_bank_alike() -> None:
    opts = TableOptions(CHEMIN, 10, 6)
    facts = settled_facts(cards("KS", "6H"), cards("5C", "2D"))
    bank = Wager(1, None, "banker", 10000, None, 0.5)
    bank.rollover = 5000
    wagers = [
        bank,
        Wager(2, None, "player", 6000, None, 0.5, "partial"),
        Wager(3, None, "player", 6000, None, 0.5),  # no call: still against the Bank
    ]
    settle_chemin(wagers, facts, opts)
    assert (bank.result, bank.payout, bank.commission) == ("win", 12000, 600)


# ---- the pack entries are checked on load ---------------------------------------------


def _pack_error(tmp_path: Path, ruleset: str, change) -> str:
    data = yaml.safe_load(RULES.joinpath(f"{ruleset}.yaml").read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / f"{ruleset}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    with pytest.raises(RulesetError) as err:
        load_pack_file(path)
    return str(err.value)


@pytest.mark.parametrize(
    ("ruleset", "change", "expected"),
    [
        (
            "ma-chemin-de-fer",
            lambda d: d["payouts"]["banker"].pop("covered_by"),
            "payouts.banker: basis covered needs covered_by",
        ),
        (
            "ma-baccarat",
            lambda d: d["payouts"]["banker"].update(covered_by=["player"]),
            "payouts.banker.covered_by: covered_by given, but basis is stake",
        ),
        (
            "ma-chemin-de-fer",
            lambda d: d["payouts"]["banker"].update(covered_by=["tie"]),
            "payouts.banker.covered_by[0]: 'tie' is not one of the permitted bets against "
            "the Bank (player)",
        ),
        (
            "md-mini-baccarat",
            lambda d: d["naturals"].pop("drawn_in_error"),
            "naturals.drawn_in_error: missing key",
        ),
        (
            "md-mini-baccarat",
            lambda d: d["naturals"]["drawn_in_error"].update(settle_on="third_card"),
            "naturals.drawn_in_error.settle_on",
        ),
    ],
    ids=["covered-without-bets", "bets-without-covered", "bet-not-against", "no-drawn", "bad-word"],
)
def test_a_malformed_reading_entry_is_refused(tmp_path, ruleset, change, expected) -> None:
    assert expected in _pack_error(tmp_path, ruleset, change)
