"""Stage 5, procedures: shoe checks (decks, burn, cut, cover card, card counts, sequence)
and table procedures (last hand, curator and Bank passing, Bank stakes, marker commission).

(Being built: the checks of the SHO and PRC families register here.)
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.findings import CheckSet, empty_findings
from auditor.rulepack import RulePack

SHOE_CHECKS = CheckSet()


def procedure_findings(
    audited: Mapping[str, pl.LazyFrame],
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> pl.LazyFrame:
    """Findings about shoes and table procedures."""
    return empty_findings().lazy()
