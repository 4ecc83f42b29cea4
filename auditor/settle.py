"""Stage 4, settle: every wager's result, payout and commission, to the cent.

(Being built: the checks of the PAY, COM and WAG families register here.)
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.findings import CheckSet
from auditor.rulepack import RulePack

WAGER_CHECKS = CheckSet()


def wager_findings(
    wagers: pl.LazyFrame,
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> pl.LazyFrame:
    """Findings about wagers (`wager_id` set) and wager-level money."""
    frame = wagers.join(
        replayed.select("round_id", "table_id", "shoe_id"), on="round_id", how="inner"
    )
    ids = {c: pl.col(c) for c in ("table_id", "shoe_id", "round_id", "wager_id")}
    return WAGER_CHECKS.emit(frame, ids)
