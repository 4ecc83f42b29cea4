"""The nightly report: `OUTDIR/report.html` for the compliance team each morning, and one
page per table beside it (`OUTDIR/report/table-NNN.html`) with that table's findings.

Built from the run's catalog alone (`write_nightly(folder)` reads `folder/audit.duckdb`),
so the audit writes it into its staging folder with the rest of the set, and the same
catalog always gives the same bytes.

The first page is a summary a manager reads in a minute, a few screens long at any size
of night: every group shows its first rows (the next ones folded away, the rest counted),
each chart its top bars and says how many it leaves out, and the findings to look at
first each carry their evidence folded behind them (`<details>`: no script). The table
pages list each table's findings in the same order with the evidence of the first of
them, also folded; the catalog and `auditor report --table` hold the rest.

Given the archive the run goes into, each finding also says whether earlier nights found
it and how it was reviewed, and the findings of earlier nights still open or escalated
are listed (`history`); without one, the pages are as they always were.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

from auditor.output.sandboxed_query import Catalog, QueryError
from auditor.packs.loaded import builtin_packs
from auditor.packs.model import RulePack
from auditor.report import data, evidence, history
from auditor.report.render import render
from auditor.report.scope import run_scope

REPORT_FILE = "report.html"
PAGES_FOLDER = "report"
FIRST_FINDINGS = 10  # findings with evidence on the first page
GROUP_SHOWN = 10  # rows of each group table in sight (rules, dealers, properties)...
GROUP_ROWS = 30  # ...and folded away under them, up to this many in all
TABLES_SHOWN = 30  # tables in sight: the table pages' index
CHART_BARS = 12
TABLE_PAGE_ROWS = 200  # findings listed on a table's page
TABLE_EVIDENCE = 25  # evidence sections on a table's page, at most...
ALL_EVIDENCE = 800  # ...and on all table pages together
INPUT_FILES_SHOWN = 40
ALERTS_SHOWN = 50
HOLDS_SHOWN = 60  # tables' holds on the first page...
HOLDS_IN_SIGHT = 5  # ...the first of them in sight, the others folded away
NO_TABLE = "(no table)"


@dataclass
class Group:
    label: str
    plural: str
    headers: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    more: int = 0
    more_findings: int = 0
    shown: int = GROUP_SHOWN  # rows in sight; the others of `rows` are folded away

    @property
    def in_sight(self) -> list[dict[str, Any]]:
        return self.rows[: self.shown]

    @property
    def folded(self) -> list[dict[str, Any]]:
        return self.rows[self.shown :]


def write_nightly(
    folder: Path, archive: Path | None = None, packs: Mapping[str, RulePack] | None = None
) -> list[str]:
    """Write the report of the catalog in `folder` beside it; the files written, relative
    to `folder` (the audit adds them to its manifest). `archive`: the archive the run
    goes into, whose earlier runs the report compares the night with."""
    pages = render_nightly(folder, being_written=True, archive=archive, packs=packs)
    for name, text in pages.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return list(pages)


def render_nightly(
    folder: Path,
    being_written: bool = False,
    archive: Path | None = None,
    packs: Mapping[str, RulePack] | None = None,
) -> dict[str, str]:
    """Every page of the nightly report, by its path relative to the output folder;
    `being_written`: the set in its staging folder, before its manifest; `archive`: the
    archive whose other runs the night is compared with; `packs`: those the run audited
    under (the built-in ones if None), whose rules the evidence shows."""
    catalog = data.open_report_catalog(folder, being_written)
    try:
        return _pages(catalog, folder, archive, builtin_packs() if packs is None else packs)
    finally:
        catalog.close()


def _pages(
    catalog: Catalog, folder: Path, archive: Path | None, packs: Mapping[str, RulePack]
) -> dict[str, str]:
    run = data.run_record(catalog)
    counts = data.row_counts(catalog)
    checks = data.checks(catalog)
    titles = {code: c["title"] for code, c in checks.items()}
    try:
        # Patrons come with the wagers the evidence reads: one read of that view, not two.
        findings = data.located(catalog, patrons=False)
        readable = True
    except QueryError:
        # Views over a dataset the audit could read but DuckDB cannot (a type it reads
        # otherwise): the report still shows every finding, without place or evidence.
        findings, readable = data.located(catalog, plain=True), False
    findings = findings.with_columns(
        pl.col("rule").replace_strict(titles, default="").alias("title"),
        pl.col("table_id").fill_null(NO_TABLE).alias("_table"),
    )
    tables = sorted(findings["_table"].unique().to_list())
    page_of = {t: f"{PAGES_FOLDER}/table-{i:03d}.html" for i, t in enumerate(tables, start=1)}
    ordered = data.by_priority(findings)
    first = ordered.head(FIRST_FINDINGS)
    per_table = max(5, min(TABLE_EVIDENCE, ALL_EVIDENCE // max(1, len(tables))))
    listed = ordered.group_by("_table", maintain_order=True).head(TABLE_PAGE_ROWS)
    listed = listed.select(ordered.columns)
    on_pages = listed.group_by("_table", maintain_order=True).head(per_table)
    on_pages = on_pages.select(ordered.columns)
    shown = pl.concat([first, on_pages]).unique("finding_id", maintain_order=True)
    sources, wagers = evidence.no_sources(checks, packs), None
    reading = None
    if readable:
        # DuckDB reads the hand histories (its own threads, no GIL) while this thread
        # draws the charts; a cursor is a connection of its own with the same sandbox.
        listed_wagers = data.ids_of(pl.concat([first, listed])["wager_id"])
        cursor = replace(catalog, con=catalog.con.cursor())
        pool = ThreadPoolExecutor(max_workers=1)
        reading = pool.submit(
            evidence.load_sources, cursor, shown, findings, checks, packs, listed_wagers
        )
        pool.shutdown(wait=False)
    drawn = _charts(findings)
    watched = _surveillance(catalog)
    remembered = None
    if archive is not None:
        remembered = history.read_history(
            archive, folder, catalog, findings["finding_id"].to_list()
        )
    if reading is not None:
        try:
            sources, wagers = reading.result()
        except QueryError:
            readable = False
    if wagers is not None:
        patrons = wagers.select("wager_id", pl.col("seat").alias("_seat"), "patron_id")
        first, listed, shown = (
            frame.drop("seat", "patron_id")
            .join(patrons, on="wager_id", how="left", maintain_order="left")
            .rename({"_seat": "seat"})
            for frame in (first, listed, shown)
        )
    built = {f["finding_id"]: evidence.build(f, sources) for f in shown.iter_rows(named=True)}

    scope = run_scope(catalog, folder)
    context = {
        "run": run,
        "scope": scope,
        "readable": readable,
        "inputs": (run["inputs"] or [])[:INPUT_FILES_SHOWN],
        "inputs_more": max(0, len(run["inputs"] or []) - INPUT_FILES_SHOWN),
        "counts": counts.iter_rows(named=True),
        "adds_up": all(
            r["rows_in"] == r["rows_audited"] + r["rows_quarantined"]
            for r in counts.iter_rows(named=True)
        ),
        "totals": _totals(findings, counts),
        "by_rule": _by_rule(findings, checks),
        "by_table": _group(
            findings,
            "_table",
            Group("table", "tables", ["property", "ruleset"], shown=TABLES_SHOWN),
            details=("property_id", "ruleset"),
            links=page_of,
        ),
        "by_dealer": _group(
            findings, "dealer_id", Group("dealer", "dealers", ["tables"]), details=("_tables",)
        ),
        "by_property": _group(
            findings,
            "property_id",
            Group("property", "properties", ["tables"]),
            details=("_tables",),
        ),
        "charts": drawn,
        "first": list(first.iter_rows(named=True)),
        "first_more": max(0, findings.height - FIRST_FINDINGS),
        "evidence_of": {f: (built[f], evidence.anchor(f)) for f in first["finding_id"]},
        "table_pages": [(t, page_of[t]) for t in tables],
        "rules_found": [checks[c] for c in sorted(findings["rule"].unique()) if c in checks],
        **watched,
        "history": remembered,
        "ledger": remembered.ledger if remembered else None,
        "titles": titles,
    }
    pages = {REPORT_FILE: render("nightly.html", **context)}
    for (table,), rows in listed.group_by("_table", maintain_order=True):
        with_evidence = rows.head(per_table)["finding_id"].to_list()
        total = findings.filter(pl.col("_table") == table)
        pages[page_of[table]] = render(
            "table.html",
            run=run,
            scope=scope.of_table(table),
            table=table,
            totals=_totals(total, None),
            rows=list(rows.iter_rows(named=True)),
            more=total.height - rows.height,
            evidence_of={f: (built[f], evidence.anchor(f)) for f in with_evidence},
            hold=watched["hold_of"].get(table),
            history=remembered,
            ledger=remembered.ledger if remembered else None,
        )
    return pages


def _surveillance(catalog: Catalog) -> dict[str, Any]:
    """The night's surveillance as the pages show it: the summary, the strongest alerts
    and each table's hold (empty for a catalog written before surveillance)."""
    summary = data.surveillance_summary(catalog)
    if summary is None:
        return {"surveillance": None, "alerts": [], "alerts_more": 0, "holds": [],
                "holds_in_sight": HOLDS_IN_SIGHT, "holds_more": 0, "hold_of": {}}  # fmt: skip
    # The first alerts only: the summary counts them all.
    alerts = data.strongest_alerts(catalog, ALERTS_SHOWN)
    holds = data.holds(catalog)
    return {
        "surveillance": summary,
        "alerts": list(alerts.iter_rows(named=True)),
        "alerts_more": max(0, summary["alerts"] - alerts.height),
        "holds": list(holds.head(HOLDS_SHOWN).iter_rows(named=True)),
        "holds_in_sight": HOLDS_IN_SIGHT,
        "holds_more": max(0, holds.height - HOLDS_SHOWN),
        "hold_of": {h["table_id"]: h for h in holds.iter_rows(named=True)},
    }


# ---- figures ------------------------------------------------------------------------------


def _money_columns(frame: pl.DataFrame) -> list[pl.Expr]:
    impact = pl.col("impact")
    return [
        impact.filter(impact > 0).sum().alias("over"),
        (-impact.filter(impact < 0).sum()).alias("under"),
    ]


def _totals(findings: pl.DataFrame, counts: pl.DataFrame | None) -> dict[str, Any]:
    sums = findings.select(
        *_money_columns(findings),
        pl.col("impact").is_not_null().sum().alias("with_money"),
    ).row(0, named=True)
    by_severity = dict(findings.group_by("severity").len().iter_rows())
    totals = {
        "findings": findings.height,
        "severity": [(s, by_severity.get(s, 0)) for s in data.SEVERITIES],
        "over": sums["over"] or Decimal(0),
        "under": sums["under"] or Decimal(0),
        "with_money": sums["with_money"],
    }
    totals["net"] = totals["over"] - totals["under"]
    if counts is not None:
        for column in ("rows_in", "rows_audited", "rows_quarantined"):
            totals[column] = int(counts[column].sum())
    return totals


def _aggregate(findings: pl.DataFrame, key: str) -> pl.DataFrame:
    return (
        findings.group_by(key)
        .agg(
            pl.len().alias("findings"),
            *((pl.col("severity") == s).sum().alias(s) for s in data.SEVERITIES),
            *_money_columns(findings),
            pl.col("_table").n_unique().alias("_tables"),
            *(
                pl.col(c).drop_nulls().first().alias(c)
                for c in ("property_id", "ruleset")
                if c != key
            ),
        )
        .sort(["findings", key], descending=[True, False], nulls_last=True)
    )


def _group(
    findings: pl.DataFrame,
    key: str,
    group: Group,
    details: tuple[str, ...],
    links: Mapping[str, str] | None = None,
) -> Group:
    found = _aggregate(findings, key)
    for row in found.head(GROUP_ROWS).iter_rows(named=True):
        label = row[key] if row[key] is not None else "(none)"
        group.rows.append(
            {
                **{s: row[s] for s in ("findings", *data.SEVERITIES, "over", "under")},
                "label": label,
                "link": (links or {}).get(row[key]),
                "details": [row[d] for d in details],
            }
        )
    group.more = max(0, found.height - GROUP_ROWS)
    group.more_findings = int(found["findings"].sum()) - sum(r["findings"] for r in group.rows)
    return group


def _by_rule(findings: pl.DataFrame, checks: Mapping[str, dict[str, Any]]) -> Group:
    """Every rule that found something, the most findings first (what each cites is in
    the checks' section at the foot of the page)."""
    group = Group("rule", "rules", ["title", "severity"])
    for row in _aggregate(findings, "rule").iter_rows(named=True):
        check = checks.get(row["rule"], {})
        group.rows.append(
            {
                **{s: row[s] for s in ("findings", *data.SEVERITIES, "over", "under")},
                "label": row["rule"],
                "link": None,
                "details": [check.get("title"), check.get("severity")],
            }
        )
    return group


def _hour_of_gaming_day(column: str) -> pl.Expr:
    # The gaming day runs noon to noon UTC (docs/queries.md): hour 0 of the chart is 12:00.
    return (pl.col(column).dt.hour().cast(pl.Int32) + 12) % 24


HOURS = [f"{(h + 12) % 24:02d}" for h in range(24)]


def _top(title: str, shown: int, total: int, plural: str) -> str:
    """A chart's title, saying so when it leaves some out: "…: top 15 of 42 rules"."""
    return title if shown >= total else f"{title}: top {shown} of {total} {plural}"


def _charts(findings: pl.DataFrame) -> list[Any]:
    if findings.height == 0:
        return []
    # matplotlib is imported when a chart is drawn, not by every command that imports the
    # pipeline (`auditor rules` has no use for it).
    from auditor.report import charts

    out = []
    every_table = _aggregate(findings, "_table")
    tables = every_table.head(CHART_BARS)
    out.append(
        charts.stacked_bars(
            "per-table",
            _top("Findings per table", tables.height, every_table.height, "tables"),
            tables["_table"].to_list(),
            {s: tables[s].to_list() for s in data.SEVERITIES},
            "findings",
        )
    )
    every_rule = _aggregate(findings, "rule")
    rules = every_rule.head(CHART_BARS)
    out.append(
        charts.stacked_bars(
            "per-rule",
            _top("Findings per rule", rules.height, every_rule.height, "rules"),
            rules["rule"].to_list(),
            {s: rules[s].to_list() for s in data.SEVERITIES},
            "findings",
        )
    )
    every_dealer = (
        _aggregate(findings.filter(pl.col("impact").is_not_null() & (pl.col("impact") != 0)),
                   "dealer_id")
        .with_columns((pl.col("over") + pl.col("under")).alias("_at_stake"))
        .sort(["_at_stake", "dealer_id"], descending=[True, False], nulls_last=True)
    )  # fmt: skip
    money = every_dealer.head(CHART_BARS)
    if money.height:
        out.append(
            charts.signed_bars(
                "impact-dealer",
                _top(
                    "Money at stake by dealer",
                    money.height,
                    every_dealer.height,
                    "dealers with money at stake",
                ),
                [d if d is not None else "(none)" for d in money["dealer_id"].to_list()],
                [float(v or 0) for v in money["over"].to_list()],
                [float(v or 0) for v in money["under"].to_list()],
            )
        )
    timed = findings.filter(pl.col("dealt_at").is_not_null()).with_columns(
        _hour_of_gaming_day("dealt_at").alias("_hour")
    )
    if timed.height:
        hours = {s: [0] * 24 for s in data.SEVERITIES}
        for hour, severity, n in timed.group_by("_hour", "severity").len().iter_rows():
            if severity in hours:
                hours[severity][hour] = n
        out.append(
            charts.hourly_bars(
                "over-day", "Findings over the gaming day (rounds and wagers)", HOURS, hours
            )
        )
    return out
