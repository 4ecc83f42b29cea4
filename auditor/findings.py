"""Findings: one row per discrepancy, in the contract's columns, sorted stably.

Every stage that checks something returns a frame in FINDINGS_SCHEMA; this module
concatenates and orders them so that a re-run writes the same bytes.
"""

from __future__ import annotations

import polars as pl

from auditor.contract import MONEY

FINDINGS_SCHEMA = {
    "rule": pl.String(),
    "severity": pl.String(),
    "citation": pl.String(),
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "round_id": pl.String(),
    "wager_id": pl.String(),
    "expected": pl.String(),
    "logged": pl.String(),
    "impact": MONEY,
    "message": pl.String(),
}

SORT_KEY = ["table_id", "shoe_id", "round_id", "wager_id", "rule"]


def empty_findings() -> pl.DataFrame:
    return pl.DataFrame(schema=FINDINGS_SCHEMA)


def combine(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """All findings in one frame, in a deterministic order."""
    frames = [f.select(list(FINDINGS_SCHEMA)).cast(FINDINGS_SCHEMA) for f in frames if f.height]
    if not frames:
        return empty_findings()
    return pl.concat(frames, how="vertical").sort(SORT_KEY, nulls_last=False, maintain_order=True)
