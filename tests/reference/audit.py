"""The reference audit: every round and wager of a dataset, row by row."""

from __future__ import annotations

from pathlib import Path

from .dataset import load
from .finding import Finding
from .hands import deal, round_findings
from .wagers import wager_findings

# The engine's codes this reference states independently.
COVERED = (
    *(f"DRW{n:03}" for n in range(1, 5)),
    *(f"TOT{n:03}" for n in range(1, 5)),
    *(f"PAY{n:03}" for n in range(1, 7)),
    *(f"COM{n:03}" for n in range(1, 4)),
    *(f"WAG{n:03}" for n in range(1, 11)),
)


def reference_findings(root: Path) -> list[Finding]:
    data = load(root)
    found: list[Finding] = []
    for rnd in data.rounds:
        table = data.options(rnd["shoe_id"])
        if table is None:
            continue  # no Rules Submission in force: nothing to audit against
        ruleset = table["ruleset"]
        d = deal(ruleset, rnd)
        found += round_findings(ruleset, table, rnd, d)
        wagers = data.wagers_by_round.get(rnd["round_id"])
        if wagers:
            chairs = data.chairs(table["table_id"], ruleset)
            found += wager_findings(ruleset, table, rnd, d, wagers, chairs)
    return found
