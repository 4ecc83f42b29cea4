"""YAML pass and fail cases per check, run through the real pipeline on real Parquet.

Each `tests/cases/CODE.yaml` holds named cases for one check:

- a `pass_*` case is a clean round: the audit yields no finding of any code and
  quarantines no row;
- a `fail_*` case breaks that check's rule alone: it yields `count` findings of its code
  (default 1, each with the `citation`, `severity` and `impact` given, if any) and no
  finding of any other code, unless the case lists each other code it must also yield,
  with a one-line reason: `also: {TOT003: "the announced winner is wrong too"}`. It
  quarantines no row unless it names each quarantined row, as `table row_key`, with a
  reason: `quarantines: {"rounds R2": "a hand of four cards is no hand"}`. A pass case
  takes neither key.

A fail case may pin the words of its findings, as `message`, `expected` and `logged`:
each finding of the case's code must then read exactly so, and a change of wording is a
visible change to the case rather than a silent one. With `count` 1 each key is a
string; with a larger `count` each is a list of `count` strings, one per finding in the
order the audit reports them. Every check pins all three keys in at least one fail case.

Every check with a numeric or positional threshold has a `pass_at_the_edge_*` case (the
boundary itself, which must not be flagged) and a `fail_just_past_*` one; a file whose
check has no such threshold says why in its top-level `no_edge: "..."`.

A case names its `ruleset` and may override the `table` options and the `shoe`; it holds
one `round` or a list of `rounds`, and optional `wagers`, `tables_rows` (extra `tables`
rows), `shoes_rows` (extra shoes over a copy of the first; their rounds name `shoe_id`
and `round_no`), `commission_collections` and `royal9_seats`.

What a case leaves out is correct by the rules, so that a case spells out only what it
gets wrong:

- announced totals and outcome are the ones the cards give (by the plain reference
  below); a `void` round is announced void, and without cards of its own it holds the
  cards dealt before the shoe ran out, Player KS 2H (a 2, to draw) and Banker 4C 3D;
- the shoe is the table's decks, cut 100 cards in, the cover card 16 from the back, burn
  card 5S burning five; a `card_sequence` the case gives is the start of the reader's
  log and the rest of the shoe's decks follow it (each card up to `decks` times, at most
  52 x `decks` cards), so the cover card lies behind the case's rounds, unless the case
  sets `sequence_ends: true` (the sequence ends where the case writes it);
- ma-baccarat's curator and Chemin de Fer's Banker sit at seat 1, and after a regular
  round the Banker's Hand lost, a round that names no holder has the shoe at the next
  seat (seat `seats` passes to seat 1), as §14(a)(1) and §10(a)(1) require;
- a Chemin de Fer regular round the case gives no wager holds the Bank's wager, at
  `banker_seat`, covered by one banco at the next seat, both settled by the cards: the
  Bank's bid where it names one, else $1,000.00 at a new Bank and the Bank's preceding
  wager after it; the first regular round of each Bank (of each shoe, and wherever the
  Banker's seat changes) logs the Bank's first wager as its `banker_bid`, unless the
  round names `banker_bid` itself (`banker_bid: null`: none logged);
- a wager belongs to the first round, seat 1, placed 30 seconds before "no more bets".
"""

from __future__ import annotations

from collections import Counter
from copy import deepcopy
from datetime import datetime, timedelta
from decimal import Decimal
from difflib import ndiff
from pathlib import Path

import polars as pl
import pytest
import yaml

from auditor.audit import all_checks, find, run_validation

from .conftest import T0, base_rows

CASES = Path(__file__).parent / "cases"
RULESET_TABLE = {
    "ma-baccarat": {"seats": 12, "decks": 8, "commission_percent": 5},
    "ma-midi-baccarat": {"seats": 7, "decks": 8, "commission_percent": 5},
    "md-mini-baccarat": {"seats": 7, "decks": 8, "commission_percent": 5},
    "ma-chemin-de-fer": {"seats": 10, "decks": 6, "commission_percent": 5},
}
SEAT_COLUMN = {"ma-baccarat": "curator_seat", "ma-chemin-de-fer": "banker_seat"}
CHEMIN_DE_FER = "ma-chemin-de-fer"
CARDS_PER_DECK = 52
DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
# A void round's cards where the case gives none: the Player's 2 must draw, so the round
# was not played out (a played-out round logged void is TOT003).
VOID_CARDS = {"player_cards": ["KS", "2H"], "banker_cards": ["4C", "3D"]}
DEFAULT_BANK = Decimal("1000.00")
# The keys a case may hold; anything else is a typo that would otherwise be ignored.
CASE_KEYS = {
    "ruleset", "table", "tables_rows", "shoe", "shoes_rows", "sequence_ends", "round",
    "rounds", "wagers", "commission_collections", "royal9_seats",
    "count", "citation", "severity", "impact", "also", "quarantines",
    "message", "expected", "logged",
}  # fmt: skip
# A finding's words a fail case may pin, exactly as the audit reports them.
WORDING_KEYS = ("message", "expected", "logged")
FILE_KEYS = {"check", "cases", "no_edge"}


def point(cards: list[str]) -> int:
    """Reference point count: the last digit of the card values (tens and faces 0, ace 1)."""
    value = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}
    return sum(value.get(c[0], int(c[0]) if c[0].isdigit() else 0) for c in cards) % 10


def winner(row: dict) -> str:
    """The hand the cards as dealt give the round to: "player", "banker" or "tie"."""
    player, banker = point(row["player_cards"]), point(row["banker_cards"])
    return "player" if player > banker else "banker" if banker > player else "tie"


def load_files() -> list[tuple[Path, dict]]:
    return [(path, yaml.safe_load(path.read_text())) for path in sorted(CASES.glob("*.yaml"))]


def load_cases() -> list[tuple[str, str, dict]]:
    return [
        (spec["check"], name, case)
        for _, spec in load_files()
        for name, case in spec["cases"].items()
    ]


# ---- a case's rows ---------------------------------------------------------------------


def case_rows(case: dict) -> dict[str, list[dict]]:
    rows = deepcopy(base_rows())
    ruleset = case["ruleset"]
    table = rows["tables"][0]
    table.update(ruleset=ruleset, **RULESET_TABLE[ruleset])
    table.update(case.get("table", {}))
    rows["tables"] += [{**table, **extra} for extra in case.get("tables_rows", [])]
    shoe = rows["shoes"][0]
    shoe["decks"] = table["decks"]
    shoe.update(case.get("shoe", {}))
    rows["shoes"] += [{**shoe, **extra} for extra in case.get("shoes_rows", [])]
    if not case.get("sequence_ends"):
        for row in rows["shoes"]:
            if row["card_sequence"] is not None:
                row["card_sequence"] = completed(row["card_sequence"], row["decks"])
    template = rows["rounds"][0]
    template.update(curator_seat=None, banker_seat=None)
    if ruleset in SEAT_COLUMN:
        template[SEAT_COLUMN[ruleset]] = 1
    specs = case.get("rounds") or [case["round"]]
    rows["rounds"] = [round_row(template, spec, i) for i, spec in enumerate(specs)]
    if ruleset in SEAT_COLUMN:
        pass_the_shoe(rows["rounds"], specs, SEAT_COLUMN[ruleset], table["seats"])
    first = rows["rounds"][0]
    rows["wagers"] = [wager_row(first, spec, i) for i, spec in enumerate(case.get("wagers", []))]
    if ruleset == CHEMIN_DE_FER:
        hold_the_banks(rows, specs, table)
    for optional in ("commission_collections", "royal9_seats"):
        if optional in case:
            rows[optional] = [money_fields(r) for r in case[optional]]
    return rows


def completed(sequence: list[str], decks: int) -> list[str]:
    """The reader's log of a whole shoe: `sequence`, then the rest of the decks (each card
    up to `decks` times, deck by deck), at most 52 x `decks` cards in all."""
    seen = Counter(sequence)
    rest = [card for copy in range(decks) for card in DECK if seen[card] <= copy]
    return [*sequence, *rest[: max(0, CARDS_PER_DECK * decks - len(sequence))]]


def round_row(template: dict, spec: dict, index: int) -> dict:
    row = deepcopy(template)
    for field in ("player_total", "banker_total", "outcome"):
        row.pop(field)  # the template's are for its own cards; these default below
    dealt_at = T0 + timedelta(minutes=1 + index)
    row.update(
        round_id=f"R{index + 1}",
        round_no=index + 1,
        dealt_at=dealt_at,
        no_more_bets_at=dealt_at - timedelta(seconds=5),
    )
    if spec.get("kind") == "void":
        row.update(deepcopy(VOID_CARDS))
    row.update(money_fields(spec))
    row.setdefault("player_total", point(row["player_cards"]))
    row.setdefault("banker_total", point(row["banker_cards"]))
    if "outcome" not in spec:
        row["outcome"] = "void" if row["kind"] == "void" else winner(row)
    return row


def pass_the_shoe(rounds: list[dict], specs: list[dict], column: str, seats: int) -> None:
    """Rounds that name no holder: the shoe stays with its holder, and after a regular
    round the Banker's Hand lost it passes to the next seat (within each shoe)."""
    held: dict[str, tuple[int | None, bool]] = {}  # shoe -> (holder, a pass is owed)
    for spec, row in zip(specs, rounds, strict=True):
        holder, owed = held.get(row["shoe_id"], (row[column], False))
        if column not in spec and owed and holder is not None:
            row[column] = holder % seats + 1
        elif column not in spec:
            row[column] = holder
        if row[column] != holder:
            owed = False
        if row["kind"] == "regular":
            owed = row[column] is not None and winner(row) == "player"
        held[row["shoe_id"]] = (row[column], owed)


def hold_the_banks(rows: dict[str, list[dict]], specs: list[dict], table: dict) -> None:
    """Chemin de Fer: a covered Bank in each regular round the case gives no wager, and the
    winning bid on each Bank's first regular round that names none."""
    wagered = {w["round_id"] for w in rows["wagers"]}
    last: dict[str, tuple[int, Decimal | None]] = {}  # shoe -> (Banker's seat, stake)
    for spec, row in zip(specs, rows["rounds"], strict=True):
        seat = row["banker_seat"]
        if row["kind"] != "regular" or seat is None:
            continue
        previous = last.get(row["shoe_id"])
        starts = previous is None or previous[0] != seat or row["banker_bid"] is not None
        if row["round_id"] not in wagered:
            carried = None if starts or previous is None else previous[1]
            stake = carried or row["banker_bid"] or DEFAULT_BANK
            rows["wagers"] += covered_bank(row, stake, table, len(rows["wagers"]))
        own = [
            w
            for w in rows["wagers"]
            if w["round_id"] == row["round_id"] and w["bet"] == "banker" and w["seat"] == seat
        ]
        stake = own[0]["amount"] if len(own) == 1 else None
        if starts and "banker_bid" not in spec and stake is not None:
            row["banker_bid"] = stake
        last[row["shoe_id"]] = (seat, stake)


def covered_bank(row: dict, stake: Decimal, table: dict, count: int) -> list[dict]:
    """The Bank's wager at `banker_seat` and a banco at the next seat, settled by the cards:
    the winner is paid the whole stake 1 to 1, the Bank owes its commission on it."""
    won = winner(row)
    seat = row["banker_seat"]
    commission = (stake * table["commission_percent"] / 100).quantize(Decimal("0.01"))
    result = {"banker": "win", "player": "lose", "tie": "push"}[won]
    against = {"win": "lose", "lose": "win", "push": "push"}[result]
    common = {"round_id": row["round_id"], "amount": stake}
    bank = {
        **common,
        "seat": seat,
        "bet": "banker",
        "result": result,
        "payout": stake if result == "win" else Decimal("0.00"),
        "commission": commission if result == "win" else Decimal("0.00"),
    }
    banco = {
        **common,
        "seat": seat % table["seats"] + 1,
        "bet": "player",
        "call": "banco",
        "result": against,
        "payout": stake if against == "win" else Decimal("0.00"),
    }
    return [wager_row(row, spec, count + i) for i, spec in enumerate((bank, banco))]


def wager_row(first_round: dict, spec: dict, index: int) -> dict:
    row = {
        "wager_id": f"W{index + 1}",
        "round_id": first_round["round_id"],
        "seat": 1,
        "patron_id": "PAT1",
        "call": None,
        "rollover": None,
        "placed_at": announced(first_round) - timedelta(seconds=30),
        "payout": "0.00",
        "commission": "0.00",
        "award": None,
    }
    row.update(spec)
    return money_fields(row)


def announced(row: dict) -> datetime:
    """When "no more bets" was called, or would have been where the round logs none."""
    return row["no_more_bets_at"] or row["dealt_at"] - timedelta(seconds=5)


MONEY_FIELDS = ("amount", "rollover", "payout", "commission", "banker_bid")


def money_fields(row: dict) -> dict:
    """YAML numbers and strings for money become exact Decimals (never floats)."""
    return {
        k: Decimal(str(v)) if k in MONEY_FIELDS and v is not None else v for k, v in row.items()
    }


# ---- the verdict on a case -------------------------------------------------------------


def case_problems(code: str, name: str, case: dict) -> list[str]:
    """What is wrong with a case as written (not with its audit)."""
    problems = [f"unknown key {key!r}" for key in sorted(set(case) - CASE_KEYS)]
    codes = {check.code for check in all_checks()}
    if not name.startswith(("pass_", "fail_")):
        problems.append("a case is named pass_* or fail_*")
    if name.startswith("pass_"):
        problems += [f"a pass case takes no {key!r}"
                     for key in ("also", "quarantines", "count", *WORDING_KEYS)
                     if key in case]  # fmt: skip
    count = case.get("count", 1)
    for key in WORDING_KEYS:
        if key not in case or name.startswith("pass_"):
            continue
        pinned = case[key]
        if count == 1 and not isinstance(pinned, str):
            problems.append(f"{key!r} of a single finding is a string")
        if count != 1 and not (
            isinstance(pinned, list)
            and len(pinned) == count
            and all(isinstance(words, str) for words in pinned)
        ):
            problems.append(f"{key!r} of {count} findings is a list of {count} strings")
    for key, known in (("also", codes - {code}), ("quarantines", None)):
        given = case.get(key, {})
        if not isinstance(given, dict):
            problems.append(f"{key!r} maps each entry to its reason")
            continue
        for entry, reason in given.items():
            if known is not None and entry not in known:
                problems.append(f"{key}: {entry!r} is not another check's code")
            if not isinstance(reason, str) or not reason.strip():
                problems.append(f"{key}: {entry!r} needs a one-line reason")
    return problems


def assert_case(
    code: str, name: str, case: dict, quarantine: pl.DataFrame, findings: pl.DataFrame
) -> None:
    """The meta-test's verdict on one case's audit (its quarantine and all its findings)."""
    problems = case_problems(code, name, case)
    assert not problems, f"{code} {name}: {problems}"
    quarantined = Counter(f"{r['table']} {r['row_key']}" for r in quarantine.iter_rows(named=True))
    found = [(f["rule"], f["message"]) for f in findings.iter_rows(named=True)]
    if name.startswith("pass_"):
        assert not quarantined, f"pass case {code} {name} quarantines {quarantine.to_dicts()}"
        assert not found, f"pass case {code} {name} is not clean: {found}"
        return
    assert set(quarantined) == set(case.get("quarantines", {})), (
        f"fail case {code} {name} quarantines {quarantine.to_dicts()}"
    )
    expected = {code, *case.get("also", {})}
    assert {rule for rule, _ in found} == expected, (
        f"fail case {code} {name} must yield {sorted(expected)}, yields {found}"
    )
    own = findings.filter(pl.col("rule") == code)
    assert own.height == case.get("count", 1), own.to_dicts()
    for finding in own.iter_rows(named=True):
        if "citation" in case:
            assert finding["citation"] == case["citation"]
        assert finding["citation"].startswith(case["ruleset"] + " ")
        if "severity" in case:
            assert finding["severity"] == case["severity"]
        if "impact" in case:
            assert finding["impact"] == Decimal(str(case["impact"]))
        assert finding["message"] and finding["expected"] != finding["logged"]
    mismatches = wording_mismatches(case, own)
    assert not mismatches, f"fail case {code} {name}:\n" + "\n".join(mismatches)


def pinned_wording(case: dict, key: str) -> list[str] | None:
    """The words a case pins for `key`, one per finding, or None where it pins none."""
    if key not in case:
        return None
    pinned = case[key]
    return [pinned] if isinstance(pinned, str) else list(pinned)


def wording_mismatches(case: dict, own: pl.DataFrame) -> list[str]:
    """Each pinned word the audit's findings do not report exactly, as a diff of the two."""
    mismatches = []
    for key in WORDING_KEYS:
        pinned = pinned_wording(case, key)
        if pinned is None:
            continue
        for number, (words, reported) in enumerate(zip(pinned, own[key], strict=True), 1):
            if words != reported:
                diff = "\n".join(f"    {line}" for line in ndiff([words], [reported]))
                mismatches.append(f"  finding {number}'s {key} (- pinned, + reported):\n{diff}")
    return mismatches


def audit_case(case: dict, write_dataset) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The quarantine and every finding of the case's dataset, through the real pipeline."""
    validated = run_validation(write_dataset(case_rows(case)))
    return validated.quarantine, find(validated)


ALL_CASES = load_cases()


@pytest.mark.parametrize(
    ("code", "name", "case"), ALL_CASES, ids=[f"{c}_{n}" for c, n, _ in ALL_CASES]
)
def test_rule_case(code: str, name: str, case: dict, write_dataset):
    assert_case(code, name, case, *audit_case(case, write_dataset))


def test_every_check_is_documented_and_has_pass_and_fail_cases():
    cases_by_code: dict[str, list[str]] = {}
    for code, name, _ in ALL_CASES:
        cases_by_code.setdefault(code, []).append(name)
    for check in all_checks():
        for field in ("title", "citation", "what", "why", "example"):
            assert getattr(check, field).strip(), f"{check.code} has no {field}"
        names = cases_by_code.get(check.code, [])
        assert any(n.startswith("pass_") for n in names), f"{check.code}: no pass case"
        assert any(n.startswith("fail_") for n in names), f"{check.code}: no fail case"
    assert set(cases_by_code) <= {c.code for c in all_checks()}, "cases for unknown codes"


def test_every_check_pins_the_wording_of_a_finding():
    """A change of a finding's words is then a visible change to a case file."""
    pinned_by_code: dict[str, list[str]] = {}
    for code, name, case in ALL_CASES:
        if name.startswith("fail_") and all(key in case for key in WORDING_KEYS):
            pinned_by_code.setdefault(code, []).append(name)
    missing = sorted({c.code for c in all_checks()} - set(pinned_by_code))
    assert not missing, (
        f"no fail case states the message, expected and logged of a finding of {missing}"
    )


def test_every_check_has_its_edge_cases_or_says_why_none():
    for path, spec in load_files():
        assert set(spec) <= FILE_KEYS, f"{path.name}: unknown keys {set(spec) - FILE_KEYS}"
        assert path.stem == spec["check"], path.name
        names = list(spec["cases"])
        edges = [n for n in names if n.startswith(("pass_at_the_edge_", "fail_just_past_"))]
        if "no_edge" in spec:
            assert spec["no_edge"].strip(), f"{path.name}: no_edge needs its reason"
            assert not edges, f"{path.name} has edge cases and says it has no edge"
            continue
        assert any(n.startswith("pass_at_the_edge_") for n in names), path.name
        assert any(n.startswith("fail_just_past_") for n in names), path.name


# ---- the meta-test's own test: dirtied cases must fail it ------------------------------

# A clean Banker win (Banker 8 against Player 2) with its commission, and the same round
# with its winner announced wrongly.
CLEAN_PASS = {
    "ruleset": "ma-baccarat",
    "round": {"player_cards": ["KS", "2H"], "banker_cards": ["4C", "4D"]},
    "wagers": [{"bet": "banker", "amount": "20.00", "result": "win", "payout": "20.00",
                "commission": "1.00"}],
}  # fmt: skip
WRONG_WINNER = {**CLEAN_PASS, "round": {**CLEAN_PASS["round"], "outcome": "player"}}
# The commission left uncharged (COM001), and the same round also announced wrongly.
UNCHARGED = {**CLEAN_PASS, "wagers": [{**CLEAN_PASS["wagers"][0], "commission": "0.00"}]}
UNCHARGED_AND_WRONG_WINNER = {**UNCHARGED, "round": WRONG_WINNER["round"]}


def test_the_clean_cases_of_the_test_of_the_test_are_clean(write_dataset):
    assert_case("COM001", "pass_clean", CLEAN_PASS, *audit_case(CLEAN_PASS, write_dataset))
    assert_case("COM001", "fail_uncharged", UNCHARGED, *audit_case(UNCHARGED, write_dataset))


def test_a_dirtied_pass_case_fails_the_meta_test(write_dataset):
    audited = audit_case(WRONG_WINNER, write_dataset)
    assert set(audited[1]["rule"]) == {"TOT003"}  # no finding of the case's own code
    with pytest.raises(AssertionError, match="is not clean"):
        assert_case("COM001", "pass_clean", WRONG_WINNER, *audited)


def test_a_pass_case_that_quarantines_a_row_fails_the_meta_test(write_dataset):
    four_cards = {**CLEAN_PASS, "round": {**CLEAN_PASS["round"], "player_cards": list("ABCD")}}
    audited = audit_case(four_cards, write_dataset)
    assert audited[0].height
    with pytest.raises(AssertionError, match="quarantines"):
        assert_case("COM001", "pass_clean", four_cards, *audited)


def test_a_dirtied_fail_case_fails_the_meta_test(write_dataset):
    audited = audit_case(UNCHARGED_AND_WRONG_WINNER, write_dataset)
    assert set(audited[1]["rule"]) == {"COM001", "TOT003"}
    with pytest.raises(AssertionError, match=r"must yield \['COM001'\]"):
        assert_case("COM001", "fail_uncharged", UNCHARGED_AND_WRONG_WINNER, *audited)
    # Said, with its reason, the other code is allowed; not said, a missing one fails.
    said = {**UNCHARGED_AND_WRONG_WINNER, "also": {"TOT003": "the winner is announced wrongly"}}
    assert_case("COM001", "fail_uncharged", said, *audited)
    with pytest.raises(AssertionError, match="must yield"):
        assert_case("COM001", "fail_uncharged", {**UNCHARGED, "also": said["also"]},
                    *audit_case(UNCHARGED, write_dataset))  # fmt: skip


@pytest.mark.parametrize(
    ("name", "extra", "problem"),
    [
        ("fail_x", {"also": {"TOT003": ""}}, "needs a one-line reason"),
        ("fail_x", {"also": ["TOT003"]}, "maps each entry to its reason"),
        ("fail_x", {"also": {"COM001": "its own code"}}, "not another check's code"),
        ("fail_x", {"quarantines": {"rounds R1": None}}, "needs a one-line reason"),
        ("pass_x", {"also": {"TOT003": "a reason"}}, "a pass case takes no 'also'"),
        ("pass_x", {"alsoo": {"TOT003": "a reason"}}, "unknown key 'alsoo'"),
        ("clean_x", {}, "named pass_* or fail_*"),
        ("pass_x", {"message": "a message"}, "a pass case takes no 'message'"),
        ("fail_x", {"logged": ["$0.00"]}, "'logged' of a single finding is a string"),
        ("fail_x", {"count": 2, "expected": "$2.00"}, "a list of 2 strings"),
        ("fail_x", {"count": 2, "expected": ["$2.00"]}, "a list of 2 strings"),
    ],
)
def test_a_case_written_wrongly_fails_the_meta_test(name: str, extra: dict, problem: str):
    case = {**UNCHARGED, **extra}
    assert any(problem in p for p in case_problems("COM001", name, case))
    with pytest.raises(AssertionError, match="COM001"):
        assert_case("COM001", name, case, pl.DataFrame(), pl.DataFrame())


# What the audit reports for UNCHARGED's COM001 finding.
UNCHARGED_WORDS = {
    "message": "Banker wager of $20.00 won; commission 5% of $20.00 rounds up to $1.00, "
    "none was charged",
    "expected": "$1.00",
    "logged": "$0.00",
}


def test_a_fail_case_pinning_other_words_fails_the_meta_test_with_both(write_dataset):
    audited = audit_case(UNCHARGED, write_dataset)
    assert_case("COM001", "fail_uncharged", {**UNCHARGED, **UNCHARGED_WORDS}, *audited)
    reworded = {**UNCHARGED, **UNCHARGED_WORDS, "expected": "$1.25"}
    with pytest.raises(AssertionError) as failure:
        assert_case("COM001", "fail_uncharged", reworded, *audited)
    assert "finding 1's expected (- pinned, + reported)" in str(failure.value)
    assert "- $1.25" in str(failure.value) and "+ $1.00" in str(failure.value)
