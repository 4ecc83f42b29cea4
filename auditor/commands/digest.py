"""The few lines `auditor audit` ends with: the findings by rule, most frequent first,
with the money each rule puts at stake, then the night's money at stake (overpaid and
underpaid) and the rules that put the most of it at stake, so that nobody has to open
summary.txt to see what the night held."""

from __future__ import annotations

import polars as pl

from auditor.commands.terminal import visible
from auditor.findings.words import count_text
from auditor.money import usd_text
from auditor.output.files import SUMMARY_FILE
from auditor.report.nightly import REPORT_FILE

__all__ = ["REPORT_FILE", "findings_digest"]

RULES_SHOWN = 5
RULES_BY_MONEY_SHOWN = 3


def findings_digest(findings: pl.DataFrame, folder: str, shown: int = RULES_SHOWN) -> list[str]:
    """ "N findings written to FOLDER", then the `shown` rules with the most findings:
    code, count and money at stake (overpaid plus underpaid), and how many rules more."""
    written = count_text(findings.height, "finding", "findings")
    lines = [f"{written} written to {folder}" + (":" if findings.height else "")]
    if findings.height == 0:
        return lines
    by_rule = findings_by_rule(findings)
    lines.append(f"  {'rule':<8}{'findings':>10}  {'money at stake':>16}")
    for rule, count, at_stake in by_rule.head(shown).iter_rows():
        lines.append(f"  {visible(rule):<8}{count:>10,}  {usd_text(at_stake):>16}")
    if by_rule.height > shown:
        more = by_rule.height - shown
        lines.append(f"  and {more:,} more rule{'s' * (more > 1)} ({folder}/{SUMMARY_FILE})")
    return lines + money_lines(findings, by_rule)


def money_lines(findings: pl.DataFrame, by_rule: pl.DataFrame) -> list[str]:
    """The night's money at stake, overpaid and underpaid apart (a positive impact is
    paid more than owed), and the rules with the most of it; nothing when no finding
    names money."""
    impact = findings["impact"].drop_nulls()
    if impact.is_empty():
        return []
    overpaid = impact.filter(impact > 0).sum()
    underpaid = -impact.filter(impact < 0).sum()
    total = usd_text(overpaid + underpaid)
    lines = [
        f"  money at stake: {total} ({usd_text(overpaid)} overpaid, "
        f"{usd_text(underpaid)} underpaid)"
    ]
    costliest = (
        by_rule.filter(pl.col("at_stake") > 0)
        .sort(["at_stake", "rule"], descending=[True, False])
        .head(RULES_BY_MONEY_SHOWN)
    )
    shown = ", ".join(
        f"{visible(r)} {usd_text(s)}" for r, s in costliest.select("rule", "at_stake").iter_rows()
    )
    lines.append(f"  most money at stake: {shown}")
    return lines


def findings_by_rule(findings: pl.DataFrame) -> pl.DataFrame:
    """rule, findings, at_stake (Decimal, the sum of each finding's impact either way;
    None for a rule whose findings name no money), most findings first."""
    impact = pl.col("impact")
    return (
        findings.group_by("rule")
        .agg(
            pl.len().alias("findings"),
            pl.when(impact.is_not_null().any()).then(impact.abs().sum()).alias("at_stake"),
        )
        .sort(["findings", "rule"], descending=[True, False])
    )
