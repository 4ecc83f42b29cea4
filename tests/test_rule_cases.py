"""YAML pass and fail cases per check, run through the real pipeline on real Parquet.

Each `tests/cases/CODE.yaml` holds named cases: a `fail_*` case must produce a finding
of that code (with the citation and severity given, if any); a `pass_*` case must not.
A case names its ruleset, optional `tables` option overrides, one round and optional
wagers. Omitted announced totals and outcome default to the correct ones, computed by
the plain reference below, so a case spells out only what it gets wrong.
"""

from __future__ import annotations

from copy import deepcopy
from pathlib import Path

import polars as pl
import pytest
import yaml

from auditor.audit import find, run_validation
from auditor.checks import all_checks

from .conftest import base_rows

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
    rows["shoes"][0]["decks"] = table["decks"]
    round_ = rows["rounds"][0]
    round_.update(curator_seat=None, banker_seat=None)
    if ruleset in SEAT_COLUMN:
        round_[SEAT_COLUMN[ruleset]] = 1
    round_.update(case["round"])
    player, banker = point(round_["player_cards"]), point(round_["banker_cards"])
    round_.setdefault("player_total", player)
    round_.setdefault("banker_total", banker)
    if "outcome" not in case["round"]:
        round_["outcome"] = "player" if player > banker else "banker" if banker > player else "tie"
    rows["rounds"] = [round_]
    rows["wagers"] = case.get("wagers", [])
    return rows


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
    assert findings.height == 1, findings.to_dicts()
    finding = findings.row(0, named=True)
    if "citation" in case:
        assert finding["citation"] == case["citation"]
    assert finding["citation"].startswith(case["ruleset"] + " ")
    if "severity" in case:
        assert finding["severity"] == case["severity"]
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
