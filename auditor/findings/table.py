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
    """All findings in one frame, in a deterministic order (table by table, shoe by shoe),
    each naming only its entity (`named_entity_only`)."""
    frames = [f.select(list(FINDINGS_SCHEMA)).cast(FINDINGS_SCHEMA) for f in frames if f.height]
    if not frames:
        return empty_findings()
    ordered = pl.concat(frames, how="vertical").sort(
        SORT_KEY, nulls_last=False, maintain_order=True
    )
    return ordered.with_columns(named_entity_only())


def named_entity_only() -> list[pl.Expr]:
    """The contract's rule: a finding names the most specific thing it is about, and only
    that. A wager finding keeps `wager_id` and its `round_id`, a round finding `round_id`,
    a shoe finding `shoe_id`, a table finding `table_id`; the checks carry the table and
    shoe of every finding up to here, for the order above, and this drops them."""
    no_round = pl.col("round_id").is_null()
    return [
        pl.when(no_round & pl.col("shoe_id").is_null()).then(pl.col("table_id")).alias("table_id"),
        pl.when(no_round).then(pl.col("shoe_id")).alias("shoe_id"),
    ]


ID_COLUMNS = ("table_id", "shoe_id", "round_id", "wager_id")
NO_ID = pl.lit(None, dtype=pl.String)
