"""The period report's figures, from the frames `period.data` reads: each a plain dict or
list the template writes as it is. Large periods stay readable: every list keeps its
first rows and counts the rest."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import polars as pl

from auditor.report.data import SEVERITIES
from auditor.report.nightly import Group  # the nightly report's groups, cut alike

GROUP_ROWS = 30  # rules, properties, tables, dealers
NIGHT_ROWS = 62  # a period of more nights is listed week by week...
WEEK_ROWS = 60  # ...and then its first weeks
REPEAT_NIGHTS = 3  # the same rule on this many nights or more at one dealer or table
REPEAT_ROWS = 50
REPEAT_COLUMNS = (
    "kind", "who", "rule", "nights", "findings", "first_night", "last_night", "over", "under",
    "tables", "dealers",
)  # fmt: skip
OPEN_ROWS = 100
REVIEW_ROWS = 50
REVIEWERS = 30
HOLD_TABLES = 40
HOLD_WEEK_ROWS = 120
RUN_ROWS = 40
MISSING_NIGHTS_LISTED = 14
STATUSES = ("open", "escalated", "explained", "corrected", "dismissed")
OPEN = ("open", "escalated")
AGE_BUCKETS = ((7, "up to a week"), (30, "8 to 30 days"), (90, "31 to 90 days"))
ZERO = Decimal(0)


def money_columns() -> list[pl.Expr]:
    impact = pl.col("impact")
    return [
        impact.filter(impact > 0).sum().alias("over"),
        (-impact.filter(impact < 0).sum()).alias("under"),
    ]


def severity_columns() -> list[pl.Expr]:
    return [(pl.col("severity") == s).sum().alias(s) for s in SEVERITIES]


def _days(start: date, end: date) -> list[date]:
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


# ---- at a glance ---------------------------------------------------------------------------


def glance(
    start: date, end: date, coverage: pl.DataFrame, runs: pl.DataFrame, findings: pl.DataFrame
) -> dict[str, Any]:
    covered = set(coverage["gaming_day"].to_list())
    missing = [d for d in _days(start, end) if d not in covered]
    sums = findings.select(
        *money_columns(), pl.col("impact").is_not_null().sum().alias("with_money")
    ).row(0, named=True)
    by_severity = dict(findings.group_by("severity").len().iter_rows())
    over, under = sums["over"] or ZERO, sums["under"] or ZERO
    return {
        "days": (end - start).days + 1,
        "nights": len(covered),
        "first_night": min(covered) if covered else None,
        "last_night": max(covered) if covered else None,
        "missing": missing[:MISSING_NIGHTS_LISTED],
        "missing_more": max(0, len(missing) - MISSING_NIGHTS_LISTED),
        "tables": coverage["table_id"].n_unique(),
        "table_nights": coverage.height,
        "rounds": int(coverage["rounds"].sum() or 0),
        "runs": runs.height,
        "runs_in_force": coverage["run_id"].n_unique(),
        "reaudits": int(runs["reaudit"].sum() or 0),
        "superseded_runs": runs.filter(pl.col("in_force") < pl.col("table_nights")).height,
        "findings": findings.height,
        "severity": [(s, by_severity.get(s, 0)) for s in SEVERITIES],
        "over": over,
        "under": under,
        "net": over - under,
        "with_money": sums["with_money"],
    }


def run_rows(runs: pl.DataFrame) -> tuple[list[dict[str, Any]], int]:
    rows = []
    for run in runs.head(RUN_ROWS).iter_rows(named=True):
        if run["in_force"] == run["table_nights"]:
            state = "in force"
        elif run["in_force"] == 0:
            state = "superseded"
        else:
            state = f"partly superseded ({run['in_force']:,} of {run['table_nights']:,} in force)"
        rows.append({**run, "state": state})
    return rows, max(0, runs.height - RUN_ROWS)


# ---- over time -------------------------------------------------------------------------------


def week_of(first: date) -> pl.Expr:
    """The week of each gaming day, named by its Monday, or by the period's first day
    for the days before the period's first Monday."""
    return pl.max_horizontal(pl.col("gaming_day").dt.truncate("1w"), pl.lit(first))


def per_span(
    coverage: pl.DataFrame, findings: pl.DataFrame, by_week: bool, first: date
) -> pl.DataFrame:
    """One row per night covered (or per week, from Monday), nights without a finding
    included: runs in force, tables and rounds of the span, and its findings."""
    span = week_of(first) if by_week else pl.col("gaming_day")
    covered = coverage.group_by(span.alias("start")).agg(
        pl.col("gaming_day").n_unique().alias("nights"),
        pl.col("run_id").n_unique().alias("runs"),
        pl.col("table_id").n_unique().alias("tables"),
        pl.col("rounds").sum().alias("rounds"),
    )
    found = findings.group_by(span.alias("start")).agg(
        pl.len().alias("findings"), *severity_columns(), *money_columns()
    )
    return (
        covered.join(found, on="start", how="left")
        .with_columns(
            pl.col("findings", *SEVERITIES).fill_null(0),
            pl.col("over", "under").fill_null(ZERO),
        )
        .sort("start")
    )


def over_time(coverage: pl.DataFrame, findings: pl.DataFrame, first: date) -> dict[str, Any]:
    """The nights one per row, or, past `NIGHT_ROWS` nights, week by week."""
    by_week = coverage["gaming_day"].n_unique() > NIGHT_ROWS
    rows = per_span(coverage, findings, by_week, first)
    shown = rows.head(WEEK_ROWS if by_week else NIGHT_ROWS)
    rest = rows.slice(shown.height)
    return {
        "by_week": by_week,
        "rows": list(shown.iter_rows(named=True)),
        "more": rest.height,
        "more_findings": int(rest["findings"].sum() or 0),
    }


# ---- groups ----------------------------------------------------------------------------------


def aggregate(findings: pl.DataFrame, key: str) -> pl.DataFrame:
    return (
        findings.filter(pl.col(key).is_not_null())
        .group_by(key)
        .agg(
            pl.len().alias("findings"),
            pl.col("gaming_day").n_unique().alias("nights"),
            *severity_columns(),
            *money_columns(),
            pl.col("table_id").n_unique().alias("tables"),
            pl.col("dealer_id").n_unique().alias("dealers"),
            *(
                pl.col(c).drop_nulls().first().alias(c)
                for c in ("property_id", "ruleset")
                if c != key
            ),
        )
        .sort(["findings", key], descending=[True, False])
    )


def group(
    findings: pl.DataFrame, key: str, shape: Group, details: tuple[str, ...], limit: int
) -> Group:
    found = aggregate(findings, key)
    for row in found.head(limit).iter_rows(named=True):
        shape.rows.append(
            {
                **{k: row[k] for k in ("findings", "nights", *SEVERITIES, "over", "under")},
                "label": row[key],
                "details": [row[d] for d in details],
            }
        )
    shape.more = max(0, found.height - limit)
    shape.more_findings = int(found["findings"].sum() or 0) - sum(r["findings"] for r in shape.rows)
    return shape


def by_rule(findings: pl.DataFrame, checks: dict[str, dict[str, Any]]) -> Group:
    """Every rule found, with its check's title and citation (the finding's own citation
    when no run's checks name the rule)."""
    shape = Group("rule", "rules", ["title", "cites", "severity"])
    cited = findings.group_by("rule").agg(pl.col("citation").drop_nulls().first())
    citation = dict(cited.iter_rows())
    found = aggregate(findings, "rule").sort("rule")
    for row in found.head(GROUP_ROWS * 2).iter_rows(named=True):
        check = checks.get(row["rule"], {})
        shape.rows.append(
            {
                **{k: row[k] for k in ("findings", "nights", *SEVERITIES, "over", "under")},
                "label": row["rule"],
                "details": [
                    check.get("title"),
                    check.get("citation") or citation.get(row["rule"]),
                    check.get("severity"),
                ],
            }
        )
    shape.more = max(0, found.height - len(shape.rows))
    shape.more_findings = int(found["findings"].sum() or 0) - sum(r["findings"] for r in shape.rows)
    return shape


def repeats(findings: pl.DataFrame) -> tuple[list[dict[str, Any]], int]:
    """Dealers and tables with findings of one rule on `REPEAT_NIGHTS` nights or more,
    the most nights first."""
    frames = []
    for kind, key in (("dealer", "dealer_id"), ("table", "table_id")):
        frames.append(
            findings.filter(pl.col(key).is_not_null())
            .group_by(key, "rule")
            .agg(
                pl.col("gaming_day").n_unique().alias("nights"),
                pl.len().alias("findings"),
                pl.col("gaming_day").min().alias("first_night"),
                pl.col("gaming_day").max().alias("last_night"),
                *money_columns(),
                pl.col("table_id").unique().sort().str.join(", ").alias("tables"),
                pl.col("dealer_id").n_unique().alias("dealers"),
            )
            .filter(pl.col("nights") >= REPEAT_NIGHTS)
            .rename({key: "who"})
            .with_columns(pl.lit(kind).alias("kind"))
            .select(REPEAT_COLUMNS)
        )
    found = pl.concat(frames).sort(
        ["nights", "findings", "kind", "who", "rule"], descending=[True, True, False, False, False]
    )
    return list(found.head(REPEAT_ROWS).iter_rows(named=True)), max(0, found.height - REPEAT_ROWS)


# ---- reviews -----------------------------------------------------------------------------------


def reviewed(findings: pl.DataFrame, statuses: pl.DataFrame) -> pl.DataFrame:
    """The period's findings with their review status now; "open" until reviewed."""
    return findings.join(statuses, on="finding_id", how="left").with_columns(
        pl.col("status").fill_null("open")
    )


def open_by_age(found: pl.DataFrame, as_of: date | None) -> dict[str, Any]:
    """The findings still open or escalated, aged in days from the first night each was
    found to `as_of` (the period's last night audited): the oldest age band first, and
    within a band the most money at stake first, so that a large sum is never buried
    under many small ones of the same age. `status_open` counts the status "open" alone,
    as the catalog's `finding_status` does; `total` adds the escalated ones."""
    still = found.filter(pl.col("status").is_in(OPEN)).with_columns(
        pl.coalesce("first_night", "gaming_day").alias("first_night")
    )
    if as_of is not None and still.height:
        still = still.with_columns(
            (pl.lit(as_of) - pl.col("first_night")).dt.total_days().alias("age")
        )
    else:
        still = still.with_columns(pl.lit(0, pl.Int64).alias("age"))
    still = still.with_columns(_age_band().alias("_band")).sort(
        ["_band", pl.col("impact").abs(), "finding_id"],
        descending=[True, True, False],
        nulls_last=True,
    )
    ages = still["age"].to_list()
    buckets, low = [], -1
    for high, label in AGE_BUCKETS:
        buckets.append((label, sum(1 for a in ages if low < a <= high)))
        low = high
    buckets.append((f"over {low} days", sum(1 for a in ages if a > low)))
    return {
        "as_of": as_of,
        "total": still.height,
        "status_open": still.filter(pl.col("status") == "open").height,
        "escalated": still.filter(pl.col("status") == "escalated").height,
        "buckets": buckets,
        "rows": list(still.head(OPEN_ROWS).iter_rows(named=True)),
        "more": max(0, still.height - OPEN_ROWS),
    }


def _age_band() -> pl.Expr:
    """The index of the age band of `AGE_BUCKETS` each finding falls in: 0 for the
    youngest, one more past each band's upper bound."""
    return pl.sum_horizontal(*((pl.col("age") > high).cast(pl.Int32) for high, _ in AGE_BUCKETS))


def review_summary(found: pl.DataFrame, records: pl.DataFrame) -> dict[str, Any]:
    """The period's findings by review status now; who recorded which statuses (every
    ledger record about them) and the latest records."""
    counts = dict(found.group_by("status").len().iter_rows())
    money = dict(found.group_by("status").agg(pl.col("impact").abs().sum().alias("m")).iter_rows())
    by_status = [(s, counts.get(s, 0), money.get(s) or ZERO) for s in STATUSES]
    by_status += [(s, n, money.get(s) or ZERO) for s, n in counts.items() if s not in STATUSES]
    people = (
        records.group_by("by")
        .agg(
            pl.len().alias("records"),
            pl.col("finding_id").n_unique().alias("findings"),
            *((pl.col("status") == s).sum().alias(s) for s in STATUSES),
            pl.col("at").max().alias("last_at"),
        )
        .sort(["records", "by"], descending=[True, False])
    )
    placed = found.select("finding_id", "rule", "severity", "table_id", "gaming_day")
    latest = records.sort("seq", descending=True).head(REVIEW_ROWS)
    latest = latest.join(placed, on="finding_id", how="left").sort("seq", descending=True)
    return {
        "by_status": by_status,
        "reviewed": found.height - counts.get("open", 0),
        "people": list(people.head(REVIEWERS).iter_rows(named=True)),
        "people_more": max(0, people.height - REVIEWERS),
        "records": records.height,
        "latest": list(latest.iter_rows(named=True)),
        "latest_more": max(0, records.height - latest.height),
    }


# ---- hold --------------------------------------------------------------------------------------


def _hold_sums(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return (
        frame.group_by(keys)
        .agg(
            pl.col("gaming_day").n_unique().alias("nights"),
            pl.col("wagers").sum(),
            pl.col("_stake").sum().alias("wagered"),
            pl.col("_kept").sum().alias("kept"),
            pl.col("_theory").sum().alias("theory_kept"),
            # Nights are independent: their variances add up (null when one is unknown).
            pl.col("_variance").sum().alias("_variance"),
            pl.col("_variance").is_null().any().alias("_unknown"),
        )
        .with_columns(
            (pl.col("kept") / pl.col("wagered")).alias("hold"),
            (pl.col("theory_kept") / pl.col("wagered")).alias("theory"),
            pl.when(~pl.col("_unknown") & (pl.col("_variance") > 0))
            .then((pl.col("kept") - pl.col("theory_kept")) / pl.col("_variance").sqrt())
            .alias("sds"),
        )
        .with_columns((pl.col("hold") - pl.col("theory")).alias("difference"))
    )


def holds(nightly: pl.DataFrame, first: date) -> dict[str, Any]:
    """Each table's hold beside its theoretical hold, over the period and week by week,
    weighted by the money wagered; the tables that kept the least against their theory
    first. Every table together, week by week, for the chart."""
    usable = nightly.filter(pl.col("stake").is_not_null() & (pl.col("stake") > 0))
    unread = nightly.height - usable.height
    usable = usable.with_columns(
        pl.col("stake").cast(pl.Float64).alias("_stake"),
        week_of(first).alias("week"),
    ).with_columns(
        (pl.col("observed") * pl.col("_stake")).alias("_kept"),
        (pl.col("expected") * pl.col("_stake")).alias("_theory"),
        (pl.col("sd") ** 2).alias("_variance"),
    )
    tables = _hold_sums(usable, ["table_id"]).join(
        usable.group_by("table_id").agg(pl.col("property_id").drop_nulls().first()),
        on="table_id",
    )
    weeks = _hold_sums(usable, ["table_id", "week"])
    below = weeks.group_by("table_id").agg(
        pl.len().alias("weeks"), (pl.col("difference") < 0).sum().alias("weeks_below")
    )
    tables = tables.join(below, on="table_id").sort("difference", "table_id")
    shown = tables.head(HOLD_TABLES)
    order = {t: i for i, t in enumerate(tables["table_id"])}
    weeks = weeks.with_columns(
        pl.col("table_id").replace_strict(order, default=None).alias("_order")
    ).sort("_order", "week")
    listed = weeks.head(HOLD_WEEK_ROWS)
    overall = _hold_sums(usable.with_columns(pl.lit("all").alias("_all")), ["_all", "week"])
    return {
        "tables": list(shown.iter_rows(named=True)),
        "tables_more": tables.height - shown.height,
        "weeks": list(listed.iter_rows(named=True)),
        "weeks_more": weeks.height - listed.height,
        "weeks_more_tables": weeks.slice(listed.height)["table_id"].n_unique(),
        "overall": overall.sort("week"),
        # A period of one week: its one figure, written out instead of charted.
        "one_week": overall.row(0, named=True) if overall.height == 1 else None,
        "unread": unread,
    }
