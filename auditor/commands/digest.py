"""The few lines `auditor audit` ends with: the findings by rule, most frequent first,
with the money each rule puts at stake, then the night's money at stake (overpaid and
underpaid) and the rules that put the most of it at stake, so that nobody has to open
summary.txt to see what the night held."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import polars as pl

from auditor.commands.terminal import visible
from auditor.findings.words import count_text
from auditor.money import usd_text
from auditor.output.files import SUMMARY_FILE, money_total, nothing_audited
from auditor.report.nightly import REPORT_FILE

__all__ = ["REPORT_FILE", "audit_summary", "findings_digest", "summary_rows"]

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
    overpaid = money_total(impact.filter(impact > 0))
    underpaid = -money_total(impact.filter(impact < 0))
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


SUMMARY_COLUMNS = ["part", "name", "figure", "value"]


def audit_summary(
    counts: pl.DataFrame, quarantined: int, findings: pl.DataFrame, alerts: int, folder: str
) -> dict[str, Any]:
    """What the audit's closing lines say, as data for `--format json`: the row
    accounting, every rule's findings and money at stake (not only the first few), the
    findings by severity, the night's money at stake, the costliest rules, the alerts.
    Money is Decimal (written as its digits), never a float."""
    by_rule = findings_by_rule(findings)
    by_severity = (
        findings.group_by("severity")
        .len("findings")
        .sort(["findings", "severity"], descending=[True, False])
    )
    impact = findings["impact"].drop_nulls()
    money = None
    if not impact.is_empty():
        overpaid, underpaid = (
            _cents(money_total(impact.filter(impact > 0))),
            -_cents(money_total(impact.filter(impact < 0))),
        )
        money = {"total": overpaid + underpaid, "overpaid": overpaid, "underpaid": underpaid}
    costliest = by_rule.filter(pl.col("at_stake") > 0).sort(
        ["at_stake", "rule"], descending=[True, False]
    )
    return {
        "out": folder,
        "report": f"{folder}/{REPORT_FILE}",
        "counts": [dict(zip(COUNT_FIGURES, row, strict=True)) for row in counts.iter_rows()],
        "quarantine_entries": quarantined,
        "nothing_audited": nothing_audited(counts),
        "findings": findings.height,
        "by_rule": [
            {"rule": rule, "findings": n, "at_stake": None if s is None else _cents(s)}
            for rule, n, s in by_rule.iter_rows()
        ],
        "by_severity": by_severity.to_dicts(),
        "money_at_stake": money,
        "most_money_at_stake": [
            {"rule": rule, "at_stake": _cents(s)}
            for rule, s in costliest.head(RULES_BY_MONEY_SHOWN)
            .select("rule", "at_stake")
            .iter_rows()
        ],
        "alerts": alerts,
    }


COUNT_FIGURES = ("table", "rows_in", "audited", "quarantined")


def summary_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The summary as csv rows of part, name, figure, value: one figure a row, so that
    its parts of different shapes read back with one csv reader."""
    rows = [
        {"part": "counts", "name": c["table"], "figure": figure, "value": c[figure]}
        for c in summary["counts"]
        for figure in COUNT_FIGURES[1:]
    ]
    rows.append(_figure("quarantine", "", "entries", summary["quarantine_entries"]))
    rows.append(_figure("findings", "", "findings", summary["findings"]))
    for rule in summary["by_rule"]:
        rows.append(_figure("rule", rule["rule"], "findings", rule["findings"]))
        if rule["at_stake"] is not None:
            rows.append(_figure("rule", rule["rule"], "at_stake", rule["at_stake"]))
    for severity in summary["by_severity"]:
        rows.append(_figure("severity", severity["severity"], "findings", severity["findings"]))
    for figure, value in (summary["money_at_stake"] or {}).items():
        rows.append(_figure("money_at_stake", "", figure, value))
    for rule in summary["most_money_at_stake"]:
        rows.append(_figure("most_money_at_stake", rule["rule"], "at_stake", rule["at_stake"]))
    rows.append(_figure("alerts", "", "alerts", summary["alerts"]))
    return rows


def _figure(part: str, name: str, figure: str, value: Any) -> dict[str, Any]:
    return {"part": part, "name": name, "figure": figure, "value": value}


def _cents(dollars: Decimal | int | None) -> Decimal:
    """An amount as dollars and cents (an empty sum is the integer 0)."""
    return Decimal(str(dollars or 0)).quantize(CENT)


CENT = Decimal("0.01")
