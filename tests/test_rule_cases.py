"""YAML pass and fail cases per check, run through the real pipeline on real Parquet.

Each `tests/cases/CODE.yaml` holds named cases: a `fail_*` case must produce findings
of that code (`count` of them, default 1, with the `citation`, `severity` and `impact`
given, if any); a `pass_*` case must produce none. A case names its `ruleset` and may
override the `table` options and the `shoe`; it holds one `round` or a list of
`rounds`, and optional `wagers`, `tables_rows` (extra `tables` rows), `shoes_rows`
(extra shoes over a copy of the first; their rounds name `shoe_id` and `round_no`),
`commission_collections` and `royal9_seats`. Omitted fields get defaults: announced
totals and outcome are the correct ones, computed by the plain reference below, so a
case spells out only what it gets wrong; a wager belongs to the first round, seat 1,
placed 30 seconds before "no more bets".
"""

from __future__ import annotations

from copy import deepcopy
from datetime import timedelta
from decimal import Decimal
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


def point(cards: list[str]) -> int:
    """Reference point count: the last digit of the card values (tens and faces 0, ace 1)."""
    value = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}
    return sum(value.get(c[0], int(c[0]) if c[0].isdigit() else 0) for c in cards) % 10


def load_cases() -> list[tuple[str, str, dict]]:
    found = []
    for path in sorted(CASES.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        for name, case in spec["cases"].items():
            found.append((spec["check"], name, case))
    return found


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
    template = rows["rounds"][0]
    template.update(curator_seat=None, banker_seat=None)
    if ruleset in SEAT_COLUMN:
        template[SEAT_COLUMN[ruleset]] = 1
    specs = case.get("rounds") or [case["round"]]
    rows["rounds"] = [round_row(template, spec, i) for i, spec in enumerate(specs)]
    first = rows["rounds"][0]
    rows["wagers"] = [wager_row(first, spec, i) for i, spec in enumerate(case.get("wagers", []))]
    for optional in ("commission_collections", "royal9_seats"):
        if optional in case:
            rows[optional] = [money_fields(r) for r in case[optional]]
    return rows


def round_row(template: dict, spec: dict, index: int) -> dict:
    row = deepcopy(template)
    for announced in ("player_total", "banker_total", "outcome"):
        row.pop(announced)  # the template's are for its own cards; these default below
    dealt_at = T0 + timedelta(minutes=1 + index)
    row.update(
        round_id=f"R{index + 1}",
        round_no=index + 1,
        dealt_at=dealt_at,
        no_more_bets_at=dealt_at - timedelta(seconds=5),
    )
    row.update(money_fields(spec))
    player, banker = point(row["player_cards"]), point(row["banker_cards"])
    row.setdefault("player_total", player)
    row.setdefault("banker_total", banker)
    if "outcome" not in spec:
        row["outcome"] = "player" if player > banker else "banker" if banker > player else "tie"
    return row


def wager_row(first_round: dict, spec: dict, index: int) -> dict:
    row = {
        "wager_id": f"W{index + 1}",
        "round_id": first_round["round_id"],
        "seat": 1,
        "patron_id": "PAT1",
        "call": None,
        "rollover": None,
        "placed_at": first_round["no_more_bets_at"] - timedelta(seconds=30),
        "payout": "0.00",
        "commission": "0.00",
        "award": None,
    }
    row.update(spec)
    return money_fields(row)


MONEY_FIELDS = ("amount", "rollover", "payout", "commission", "banker_bid")


def money_fields(row: dict) -> dict:
    """YAML numbers and strings for money become exact Decimals (never floats)."""
    return {
        k: Decimal(str(v)) if k in MONEY_FIELDS and v is not None else v for k, v in row.items()
    }


ALL_CASES = load_cases()


@pytest.mark.parametrize(
    ("code", "name", "case"), ALL_CASES, ids=[f"{c}_{n}" for c, n, _ in ALL_CASES]
)
def test_rule_case(code: str, name: str, case: dict, write_dataset):
    validated = run_validation(write_dataset(case_rows(case)))
    assert validated.quarantine.height == 0, validated.quarantine.to_dicts()
    findings = find(validated).filter(pl.col("rule") == code)
    if name.startswith("pass_"):
        assert findings.height == 0, findings.to_dicts()
        return
    assert name.startswith("fail_"), f"case {name} must be named pass_* or fail_*"
    assert findings.height == case.get("count", 1), findings.to_dicts()
    for finding in findings.iter_rows(named=True):
        if "citation" in case:
            assert finding["citation"] == case["citation"]
        assert finding["citation"].startswith(case["ruleset"] + " ")
        if "severity" in case:
            assert finding["severity"] == case["severity"]
        if "impact" in case:
            assert finding["impact"] == Decimal(str(case["impact"]))
        assert finding["message"] and finding["expected"] != finding["logged"]


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
