"""The period report: the findings in force of a range of gaming days across the archive,
for a manager or a regulator, as one self-contained HTML page (or a PDF printed by
headless Chromium).

`auditor report ARCHIVE --from FROM --to TO [--property P]` reads the archive's catalog
alone (`ARCHIVE/archive.duckdb`, in the query sandbox), so it needs neither the datasets
nor the runs' output folders: the period at a glance, findings and money per night, by
rule, property, table and dealer, the same rule again and again at one dealer or table,
the findings still open by age, the reviews, and each table's hold against its theory
week by week. A re-audit supersedes: only the findings of the runs in force count.

The page is built like the nightly report (`report.nightly`): jinja2 with autoescape, the
same CSS and Content-Security-Policy, charts as checked inline SVG, every list cut at its
first rows with the rest counted. The same archive gives the same bytes: nothing on the
page depends on the clock.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl

from auditor import __version__
from auditor.archive.attached_runs import open_archive_catalog
from auditor.archive.integrity import refuse_changed_periods
from auditor.output.sandboxed_query import Catalog
from auditor.report.data import SEVERITIES, read_ledger_head
from auditor.report.period import data as reads
from auditor.report.period import figures, surveillance
from auditor.report.period.data import Period, PeriodReportError
from auditor.report.render import render
from auditor.report.writing import BROWSERS, find_browser, print_pdf

CHART_BARS = 20
DEALER_BARS = 15
SERIES_POINTS = 2  # a series of fewer points is no chart

__all__ = [
    "PeriodReportError",
    "default_name",
    "gather_period",
    "parse_period",
    "render_period_report",
    "write_period_report",
]


def parse_period(text: str) -> tuple[date, date]:
    """`FROM..TO` (ISO dates, TO inclusive) as two dates; a `PeriodReportError` naming
    what is wrong otherwise."""
    first, dots, last = text.partition("..")
    if not dots:
        raise PeriodReportError(
            f"--period {text!r}: write it FROM..TO, e.g. 2026-11-01..2026-11-30"
        )
    try:
        start, end = date.fromisoformat(first.strip()), date.fromisoformat(last.strip())
    except ValueError as exc:
        raise PeriodReportError(f"--period {text!r}: {exc} (dates are YYYY-MM-DD)") from exc
    _check_order(start, end)
    return start, end


def _check_order(start: date, end: date) -> None:
    if start > end:
        raise PeriodReportError(
            f"--period {start}..{end}: FROM {start} is after TO {end}; the period runs "
            "from its first gaming day to its last"
        )


def default_name(start: date, end: date, property_id: str | None, pdf: bool) -> str:
    """period-FROM-TO[-PROPERTY].html (or .pdf): only safe characters of the property."""
    tail = ""
    if property_id is not None:
        tail = "-" + (re.sub(r"[^A-Za-z0-9._-]+", "_", property_id).strip("._")[:60] or "property")
    return f"period-{start}-{end}{tail}.{'pdf' if pdf else 'html'}"


def write_period_report(
    archive: Path,
    start: date,
    end: date,
    property_id: str | None = None,
    target: Path | None = None,
    pdf: bool = False,
) -> Path:
    """Write the period report of ARCHIVE's gaming days `start` to `end` (inclusive),
    of one property when given, and return where it went: `target`, or
    ./period-FROM-TO[-PROPERTY].html (.pdf with `pdf`). A period the archive cannot
    report (FROM after TO, an unknown property), an archive that cannot be read, a
    target that cannot be written, or `pdf` without Chromium is an `AuditorError`
    (exit 2), raised before anything is written."""
    _check_order(start, end)
    browser = find_browser() if pdf else None
    if pdf and browser is None:
        raise PeriodReportError(
            "--pdf prints through headless Chromium, and none is installed (looked for "
            f"{', '.join(BROWSERS)} on PATH); install it (Debian: apt-get install chromium) "
            "or leave out --pdf for the HTML page"
        )
    target = Path(target or default_name(start, end, property_id, pdf))
    _check_writable(target)
    html = render_period_report(archive, start, end, property_id)
    if browser is not None:
        print_pdf(browser, html, target)
        return target
    try:
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise PeriodReportError(f"{target}: cannot write the report ({reason})") from exc
    return target


def _check_writable(target: Path) -> None:
    if not target.parent.is_dir():
        raise PeriodReportError(
            f"{target}: no folder {target.parent} to write the report into; create it"
        )
    if target.is_dir():
        raise PeriodReportError(f"{target} is a folder; --out names the report's file")


def render_period_report(
    archive: Path, start: date, end: date, property_id: str | None = None
) -> str:
    """The period report as one self-contained HTML page."""
    return render("period.html", **gather_period(archive, start, end, property_id))


def gather_period(
    archive: Path, start: date, end: date, property_id: str | None = None
) -> dict[str, Any]:
    """What the page shows, as the template receives it (for checks against the
    catalog)."""
    _check_order(start, end)
    catalog = open_archive_catalog(Path(archive), inputs=False)
    try:
        refuse_changed_periods(Path(archive))
        # Read before the catalog's views: the page's reviews are as of this head or later.
        ledger = read_ledger_head(Path(archive))
        return {
            **_context(catalog, Path(archive), Period(start, end, property_id)),
            "ledger": ledger,
        }
    finally:
        catalog.close()


def _check_property(catalog: Catalog, property_id: str | None) -> None:
    if property_id is None:
        return
    known = reads.properties(catalog)
    if property_id in known:
        return
    listed = ", ".join(repr(p) for p in known[:20]) + (" ..." if len(known) > 20 else "")
    raise PeriodReportError(
        f"no property {property_id!r} in the archive: its runs audited "
        + (f"the properties {listed}" if known else "no property yet")
        + " (ids are matched exactly)"
    )


def _context(catalog: Catalog, archive: Path, period: Period) -> dict[str, Any]:
    _check_property(catalog, period.property_id)
    reads.fix_scope(catalog, period)
    coverage = reads.coverage(catalog)
    base = {
        "period": period,
        # Absolute: the page is read away from the folder it was written in.
        "archive": str(archive.resolve()),
        "properties": sorted(coverage["property_id"].drop_nulls().unique()),
        "tool_version": __version__,
        "span": reads.archive_span(catalog, period.property_id),
        "repeat_nights": figures.REPEAT_NIGHTS,
    }
    if coverage.height == 0:
        return {**base, "empty": True}
    runs = reads.runs(catalog)
    findings = reads.findings(catalog)
    checks = reads.checks(catalog, archive, findings["rule"].unique().sort().to_list())
    nights = figures.per_span(coverage, findings, False, period.start)
    glance = figures.glance(period.start, period.end, coverage, runs, findings)
    found = figures.reviewed(findings, reads.statuses(catalog))
    run_rows, runs_more = figures.run_rows(runs)
    holds = figures.holds(reads.nightly_holds(catalog), period.start)
    repeats, repeats_more = figures.repeats(findings)
    return {
        **base,
        "empty": False,
        "glance": glance,
        "superseded_findings": reads.superseded_findings(catalog),
        "runs": run_rows,
        "runs_more": runs_more,
        "over_time": figures.over_time(coverage, findings, period.start),
        "charts": _charts(nights, findings, holds["overall"]),
        "by_rule": figures.by_rule(findings, checks),
        "by_property": figures.group(
            findings,
            "property_id",
            figures.Group("property", "properties", ["tables", "dealers"]),
            ("tables", "dealers"),
            figures.GROUP_ROWS,
        ),
        "by_table": figures.group(
            findings,
            "table_id",
            figures.Group("table", "tables", ["property", "ruleset"]),
            ("property_id", "ruleset"),
            figures.GROUP_ROWS,
        ),
        "by_dealer": figures.group(
            findings,
            "dealer_id",
            figures.Group("dealer", "dealers", ["tables"]),
            ("tables",),
            figures.GROUP_ROWS,
        ),
        "without_dealer": findings.filter(pl.col("dealer_id").is_null()).height,
        "repeats": repeats,
        "repeats_more": repeats_more,
        "open": figures.open_by_age(found, glance["last_night"]),
        "reviews": figures.review_summary(found, reads.reviews(catalog)),
        "ledger_as_of": reads.ledger_as_of(catalog),
        "holds": holds,
        "surveillance": surveillance.period_section(
            catalog,
            period.start,
            period.end,
            None if period.property_id is None else "SELECT table_id FROM period_coverage",
        ),
    }


def _charts(nights: pl.DataFrame, findings: pl.DataFrame, weekly: pl.DataFrame) -> list[Any]:
    """The page's charts; those with nothing to draw are left out, and so is a series of
    a single night or week: its one figure is in the page's tables."""
    # matplotlib is imported when a chart is drawn, as in the nightly report.
    from auditor.report.period import charts

    drawn = []
    if findings.height and nights.height >= SERIES_POINTS:
        days = nights["start"].to_list()
        per_severity = {s: nights[s].to_list() for s in SEVERITIES}
        drawn.append(charts.findings_per_night("per-night", days, per_severity))
        over = [float(v) for v in nights["over"].to_list()]
        under = [float(v) for v in nights["under"].to_list()]
        if any(over) or any(under):
            drawn.append(charts.money_per_night("money-per-night", days, over, under))
    if findings.height:
        drawn += _ranked_charts(findings)
    if weekly.height >= SERIES_POINTS:
        drawn.append(
            charts.weekly_hold(
                "hold-week",
                weekly["week"].to_list(),
                weekly["hold"].to_list(),
                weekly["theory"].to_list(),
            )
        )
    return drawn


def _ranked_charts(findings: pl.DataFrame) -> list[Any]:
    """Findings per rule and per table, money at stake by dealer: the first bars of each."""
    from auditor.report.charts import OVERPAID, SEVERITY_COLOURS, UNDERPAID
    from auditor.report.period import charts

    drawn = []
    for key, name, noun in (("rule", "per-rule", "rule"), ("table_id", "per-table", "table")):
        ranked = figures.aggregate(findings, key)
        shown = ranked.head(CHART_BARS)
        drawn.append(
            charts.ranked_bars(
                name,
                f"Findings per {noun}" + _cut(shown.height, ranked.height),
                shown[key].to_list(),
                {s: shown[s].to_list() for s in SEVERITIES},
                "findings",
                SEVERITY_COLOURS,
            )
        )
    money = (
        figures.aggregate(findings.filter(pl.col("impact").is_not_null()), "dealer_id")
        .with_columns((pl.col("over") + pl.col("under")).alias("_at_stake"))
        .filter(pl.col("_at_stake") > 0)
        .sort(["_at_stake", "dealer_id"], descending=[True, False])
    )
    if money.height:
        shown = money.head(DEALER_BARS)
        drawn.append(
            charts.ranked_bars(
                "money-dealer",
                "Money at stake by dealer" + _cut(shown.height, money.height),
                shown["dealer_id"].to_list(),
                {
                    "overpaid": [float(v or 0) for v in shown["over"].to_list()],
                    "underpaid": [float(v or 0) for v in shown["under"].to_list()],
                },
                "money at stake",
                {"overpaid": OVERPAID, "underpaid": UNDERPAID},
                money=True,
            )
        )
    return drawn


def _cut(shown: int, total: int) -> str:
    return f" (top {shown} of {total})" if shown < total else ""
