"""A jurisdiction of its own as a pack in a folder: Massachusetts Baccarat under a new id
with five rules changed (a Banker draw cell, a payout, the commission's rounding, the
burn, and a side wager no longer offered), as tests write it into a folder for `--rules`."""

from __future__ import annotations

import re

from tests.support.paths import RULES

NEW = "xx-baccarat"
BASE = "ma-baccarat"
# The five changes, each as (text of the base pack, its replacement).
CHANGES = {
    "draw cell": (
        '  - {banker: [4], player_third: [2, 3, 4, 5, 6, 7], action: draw, cite: "§11(c)(2)(iii) '
        'Table 1"}\n  - {banker: [4], player_third: [0, 1, 8, 9], action: stand, cite: '
        '"§11(c)(2)(iii) Table 1"}',
        '  - {banker: [4], player_third: [0, 2, 3, 4, 5, 6, 7], action: draw, cite: "§11(c)(4)"}\n'
        '  - {banker: [4], player_third: [1, 8, 9], action: stand, cite: "§11(c)(4)"}',
    ),
    "payout": ('panda8: {odds: 25, cite: "§13(g)"}', 'panda8: {odds: 30, cite: "§13(g-1)"}'),
    "commission": (
        'rounding: {step_cents: {5: 25}, cite: "§13(c)"',
        'rounding: {step_cents: {5: 10}, cite: "§13(c-1)"',
    ),
    "burn": (
        '  - {ranks: TJQK, value: 10, cite: "§5(e)"}',
        '  - {ranks: TJQK, value: 8, cite: "§5(e-1)"}',
    ),
    "side wager": (
        '    - {bet: house_money, requires: house_money, cite: "§8(a)(7)"}\n',
        "",
    ),
}


def new_pack_text(ruleset: str = NEW) -> str:
    text = (RULES / f"{BASE}.yaml").read_text(encoding="utf-8")
    text = text.replace(f"ruleset: {BASE}\n", f"ruleset: {ruleset}\n")
    for old, new in CHANGES.values():
        assert old in text, old
        text = text.replace(old, new)
    # No House Money: its paytable and rollover rule go with the wager.
    text = re.sub(r"  house_money: \{both.*\}\n", "  house_money: null\n", text)
    text = re.sub(r"  house_money_rollover: \{.*\}\n", "  house_money_rollover: null\n", text)
    return text
