"""The page of an investigation across nights (`across`): the nights one by one, the money
at stake per night and in all, the findings in force with their reviews, the rounds and
wagers of the nights whose datasets are in place, and the surveillance naming the subject.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import matplotlib
import polars as pl
from markupsafe import Markup
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from auditor import __version__
from auditor.archive.catalog import CATALOG_FILE, RUNS, SET
from auditor.check_docs import check_docs
from auditor.report import charts, data
from auditor.report.across.cells import NIGHT_ROWS, Measure
from auditor.report.across.data import Gathered, NightSource
from auditor.report.render import render
from auditor.report.writing import ROUND_LISTING, WAGER_LISTING, Beside, Listing, listing

FINDINGS_SHOWN, ROUNDS_SHOWN, WAGERS_SHOWN = 2000, 1000, 2000
TESTS_SHOWN, REVIEWS_SHOWN, QUIET_SHOWN = 300, 1000, 40
ZERO = Decimal(0)
DATES_ON_AXIS = 5  # what fits under the chart, ten characters each


def page(found: Gathered, beside: Beside) -> str:
    titles = {doc.code: doc.title for doc in check_docs()}
    findings = found.findings.with_columns(
        pl.col("rule").replace_strict(titles, default="").alias("title"),
        pl.col("severity")
        .replace_strict({s: i for i, s in enumerate(data.SEVERITIES)}, default=len(data.SEVERITIES))
        .alias("_severity_rank"),
        (-pl.col("impact").abs().cast(pl.Float64)).fill_null(0.0).alias("_abs_impact"),
    ).sort("gaming_day", "_severity_rank", "_abs_impact", "finding_id", nulls_last=True)
    nights = _nights(found, findings)
    listed = {n["day"] for n in nights}
    quiet = [d for d in _covered_days(found) if d not in listed]
    unread = {d for d in quiet if not all(s.read for s in _sources_of(found, d))}
    rule_of = dict(zip(findings["finding_id"], findings["rule"], strict=True))
    night_of = dict(zip(findings["finding_id"], findings["gaming_day"], strict=True))
    per_round = findings.filter(pl.col("round_id").is_not_null()).group_by("round_id")
    codes = {r: sorted(set(rules)) for r, rules in per_round.agg("rule").iter_rows()}
    listings = _listings(found, findings, beside)
    rounds, wagers = listings["rounds"].shown, listings["wagers"].shown
    return render(
        "across.html",
        subject=found.subject,
        # Absolute: the page is read away from the folder it was written in.
        archive=str(Path(found.archive).resolve()),
        properties=_properties(found),
        printed=beside.printed,
        listings=listings,
        catalog_file=CATALOG_FILE,
        run_folder=f"{RUNS}/RUN_ID/{SET}",
        tool_version=__version__,
        nights=nights,
        totals=_totals(findings, nights, found),
        chart=_money_chart(nights),
        findings=list(findings.head(FINDINGS_SHOWN).iter_rows(named=True)),
        findings_total=findings.height,
        reviews=[
            {**r, "rule": rule_of.get(r["finding_id"]), "night": night_of.get(r["finding_id"])}
            for r in found.reviews.head(REVIEWS_SHOWN).iter_rows(named=True)
        ],
        reviews_total=found.reviews.height,
        rounds=list(rounds.head(ROUNDS_SHOWN).iter_rows(named=True)),
        rounds_total=rounds.height,
        round_codes=codes,
        wagers=list(wagers.head(WAGERS_SHOWN).iter_rows(named=True)),
        wagers_total=wagers.height,
        unread_nights=[n for n in nights if not n["read"]],
        quiet=quiet[:QUIET_SHOWN],
        quiet_more=max(0, len(quiet) - QUIET_SHOWN),
        quiet_unread=sorted(unread),
        tests=list(found.tests.head(TESTS_SHOWN).iter_rows(named=True)),
        tests_total=found.tests.height,
        alerts=int(found.tests["alert"].sum()) if found.tests.height else 0,
        against=found.against,
        suggest_from=found.subject.start or min(_covered_days(found), default="FROM"),
        suggest_to=found.subject.end or max(_covered_days(found), default="TO"),
        against_charts=[_against_chart(m) for m in found.against.measures if not _flat(m)],
        against_flat=[m for m in found.against.measures if _flat(m)],
        night_rows=NIGHT_ROWS,
        surveilled=found.surveilled,
        periods=found.periods,
        period_tests=list(found.period_tests.head(TESTS_SHOWN).iter_rows(named=True)),
        period_tests_total=found.period_tests.height,
        period_alerts=_period_alerts(found),
        ledger=found.ledger,
    )


def _properties(found: Gathered) -> list[str]:
    """The properties of the subject's findings and of its rounds read."""
    frames = [f for f in (found.findings, found.rounds) if "property_id" in f.columns]
    return sorted({p for f in frames for p in f["property_id"] if p is not None})


def _listings(found: Gathered, findings: pl.DataFrame, beside: Beside) -> dict[str, Listing]:
    """The rounds and wagers a finding names, for the page, and every round and wager of
    the nights read in a CSV beside it."""
    listings = {}
    for what, rows, key, columns in (
        ("rounds", found.rounds, "round_id", ROUND_LISTING),
        ("wagers", found.wagers, "wager_id", WAGER_LISTING),
    ):
        if key not in rows.columns:  # no night's hand history could be read
            listings[what] = Listing(rows, 0)
            continue
        rules = (
            findings.filter(pl.col(key).is_not_null())
            .group_by(key)
            .agg(pl.col("rule").unique().sort().str.join(" ").alias("findings"))
        )
        listings[what] = listing(beside, what, rows.join(rules, on=key, how="left"), columns)
    return listings


def _flat(measure: Measure) -> bool:
    """Nothing beyond the game on any night (a dealer whose nights had no finding)."""
    return all(r["observed"] == 0 and r["expected"] == 0 for r in measure.rows)


def _period_alerts(found: Gathered) -> int:
    tests = found.period_tests
    return int(tests["alert"].sum()) if tests.height else 0


# ---- night by night ----------------------------------------------------------------------


def _covered_days(found: Gathered) -> list[date]:
    return sorted(set(found.coverage["gaming_day"].drop_nulls()))


def _sources_of(found: Gathered, day: date) -> list[NightSource]:
    runs = found.coverage.filter(pl.col("gaming_day") == day)["run_id"].unique().sort()
    return [found.sources[r] for r in runs if r in found.sources]


def _days_with_rows(found: Gathered, findings: pl.DataFrame) -> list[date]:
    """The nights with anything of the subject: a finding, a test, a round or a wager;
    for a table, every night the archive audited it."""
    frames = [findings, found.tests, found.rounds, found.wagers]
    days = {d for f in frames if "gaming_day" in f.columns for d in f["gaming_day"] if d}
    if found.subject.kind == "table":
        days |= set(_covered_days(found))
    return sorted(days)


def _nights(found: Gathered, findings: pl.DataFrame) -> list[dict[str, Any]]:
    """One row per night with anything of the subject, oldest first, with the money at
    stake that night and up to it."""
    rows = []
    at_stake, net = ZERO, ZERO
    for day in _days_with_rows(found, findings):
        found_that_night = findings.filter(pl.col("gaming_day") == day)
        money = _money_at_stake(found_that_night)
        at_stake += money["over"] + money["under"]
        net += money["over"] - money["under"]
        sources = _sources_of(found, day)
        rows.append(
            {
                "day": day,
                "sources": sources,
                "read": bool(sources) and all(s.read for s in sources),
                **_played(found, day),
                "findings": found_that_night.height,
                "severity": [
                    (s, found_that_night.filter(pl.col("severity") == s).height)
                    for s in data.SEVERITIES
                ],
                **money,
                "at_stake_to_date": at_stake,
                "net_to_date": net,
                "alerts": _alerts_on(found.tests, day),
            }
        )
    return rows


def _money_at_stake(findings: pl.DataFrame) -> dict[str, Decimal]:
    impact = pl.col("impact")
    sums = findings.select(
        impact.filter(impact > 0).sum().alias("over"),
        (-impact.filter(impact < 0).sum()).alias("under"),
    ).row(0, named=True)
    return {k: Decimal(v) if v is not None else ZERO for k, v in sums.items()}


def _played(found: Gathered, day: date) -> dict[str, Any]:
    """The subject's rounds and wagers that night, from the hand histories read; for a
    table, also the audit's own count of its rounds, known when they cannot be read."""
    audited_rounds = None
    if found.subject.kind == "table":
        covered = found.coverage.filter(pl.col("gaming_day") == day)["rounds"]
        audited_rounds = int(covered.sum()) if covered.len() else None
    played = {"rounds": None, "wagers": None, "staked": None, "net": None,
              "audited_rounds": audited_rounds}  # fmt: skip
    if "gaming_day" not in found.rounds.columns:
        return played  # no night's hand history could be read
    rounds = found.rounds.filter(pl.col("gaming_day") == day)
    wagers = found.wagers.filter((pl.col("gaming_day") == day) & ~pl.col("quarantined"))
    if not rounds.height and not wagers.height:
        return played
    stake = pl.col("amount") + pl.col("rollover").fill_null(0)
    sums = wagers.select(stake.sum().alias("staked"), pl.col("net").sum().alias("net"))
    return played | {
        "rounds": rounds.height,
        "wagers": wagers.height,
        **{k: (v if v is not None else ZERO) for k, v in sums.row(0, named=True).items()},
    }


def _alerts_on(tests: pl.DataFrame, day: date) -> int:
    if not tests.height:
        return 0
    return int(tests.filter((pl.col("gaming_day") == day) & pl.col("alert")).height)


def _totals(findings: pl.DataFrame, nights: list[dict], found: Gathered) -> dict[str, Any]:
    money = _money_at_stake(findings)
    statuses = (
        findings["status"]
        .fill_null("open")
        .value_counts(name="n")
        .sort("n", "status", descending=[True, False])
    )
    return {
        "nights": len(nights),
        "nights_read": sum(n["read"] for n in nights),
        "findings": findings.height,
        "severity": [(s, findings.filter(pl.col("severity") == s).height) for s in data.SEVERITIES],
        "statuses": list(statuses.iter_rows()),
        "reviewed": findings["reviewed_by"].is_not_null().sum(),
        **money,
        "alerts": int(found.tests["alert"].sum()) if found.tests.height else 0,
        "tests": found.tests.height,
        "period_alerts": _period_alerts(found),
        "period_tests": found.period_tests.height,
    }


# ---- the chart ---------------------------------------------------------------------------


def _money_chart(nights: Sequence[dict[str, Any]]) -> Markup | None:
    """Money at stake per night (stacked: overpaid, underpaid) above the running total.
    The nights are days counted from the first, labelled with their dates: one night
    gives one bar over its date, never a date axis stretched over years."""
    if not any(n["over"] or n["under"] for n in nights):
        return None
    first = nights[0]["day"]
    offsets = [(n["day"] - first).days for n in nights]
    over = [float(n["over"]) for n in nights]
    under = [float(n["under"]) for n in nights]
    running = list(itertools.accumulate(o + u for o, u in zip(over, under, strict=True)))
    # One night's running total is that night's bar again: no line of a single point.
    several = len(nights) > 1
    height = 4.4 if several else 2.6
    with matplotlib.rc_context(charts.STYLE):
        figure = Figure(figsize=(6.4, height), dpi=72)
        figure.subplots_adjust(left=0.9 / 6.4, right=1 - 0.2 / 6.4, top=1 - 0.4 / height,
                               bottom=0.6 / height, hspace=0.35)  # fmt: skip
        per_night, to_date = (
            figure.subplots(2, 1, sharex=True) if several else (figure.subplots(1, 1), None)
        )
        # A side with no money is neither drawn nor named in the legend.
        if any(over):
            per_night.bar(offsets, over, width=0.7, color=charts.OVERPAID, label="overpaid")
        if any(under):
            per_night.bar(
                offsets, under, width=0.7, bottom=over, color=charts.UNDERPAID, label="underpaid"
            )
        per_night.set_title("Money at stake, night by night", loc="left")
        # On the title's line, right: inside the axes it would cover the first night's bar.
        per_night.legend(
            loc="lower right", bbox_to_anchor=(1, 1), frameon=False, ncols=2, borderaxespad=0
        )
        scaled = [(per_night, max(a + b for a, b in zip(over, under, strict=True)))]
        if to_date is not None:
            # Steps, not slopes: the money is found a night at a time.
            to_date.plot(offsets, running, color="#1d4e89", marker="o", markersize=4,
                         linewidth=1.4, drawstyle="steps-post")  # fmt: skip
            to_date.set_title("Money at stake to date", loc="left")
            scaled.append((to_date, running[-1]))
        bottom = to_date if to_date is not None else per_night
        bottom.set_xlabel("gaming day (noon to noon UTC)")
        for axes, top in scaled:
            axes.set_ylim(0, top * 1.25)
            axes.yaxis.set_major_locator(MaxNLocator(nbins=4))
            axes.yaxis.set_major_formatter(FuncFormatter(_dollars))
        _day_axis(bottom, offsets, first)
        return charts.svg(figure, "money-by-night")


def _dollars(value: float, _position: Any) -> str:
    return charts.dollars_tick(value, signed=False)


def _day_label(first: date, offset: float) -> str:
    if offset != round(offset):
        return ""
    return (first + timedelta(days=round(offset))).isoformat()


# Above the game (the subject won more than its chances give) and below it.
ABOVE, BELOW, TO_DATE = "#dc8a0e", "#9aa5b1", "#1d4e89"


def _against_chart(measure: Measure) -> Markup:
    """One quantity against the game: each night's excess over what the game gives as a
    bar, above the running sum as a line. As the money chart, the nights are days from
    the first, labelled with their dates. Each bar's and the line's group is named in
    the SVG (`night-N`, `to-date`), so the series can be read back."""
    rows = measure.rows
    first = rows[0]["day"]
    offsets = [(r["day"] - first).days for r in rows]
    excess = [r["excess"] for r in rows]
    running = [r["to_date"] for r in rows]
    money = measure.unit == "money"
    axis = FuncFormatter(_signed_dollars if money else _signed_count)
    # One night's running sum is that night's bar again: no line of a single point.
    several = len(rows) > 1
    height = 4.6 if several else 2.8
    with matplotlib.rc_context(charts.STYLE):
        figure = Figure(figsize=(charts.WIDTH, height), dpi=72)
        figure.subplots_adjust(left=0.9 / charts.WIDTH, right=1 - 0.2 / charts.WIDTH,
                               top=1 - 0.62 / height, bottom=0.6 / height, hspace=0.45)  # fmt: skip
        per_night, to_date = (
            figure.subplots(2, 1, sharex=True) if several else (figure.subplots(1, 1), None)
        )
        # Each sign its own bars, labelled only when it has any (an empty series would
        # show in the legend in a colour of its own); each bar named by its night.
        for label, colour, sign in (("above the game", ABOVE, True), ("below", BELOW, False)):
            nights = [i for i, v in enumerate(excess) if (v > 0) == sign]
            if not nights:
                continue
            named = label if any(excess[i] != 0 for i in nights) else None
            drawn = per_night.bar([offsets[i] for i in nights], [excess[i] for i in nights],
                                  width=0.7, color=colour, label=named)  # fmt: skip
            for index, bar in zip(nights, drawn, strict=True):
                bar.set_gid(f"night-{index}")
        per_night.axhline(0, color="#444444", linewidth=0.8)
        per_night.set_title(f"{measure.title}\nnight by night", loc="left", pad=20)
        charts.legend_above(per_night, 2)
        scaled = [(per_night, excess)]
        if to_date is not None:
            (line,) = to_date.plot(offsets, running, color=TO_DATE, marker="o", markersize=4,
                                   linewidth=1.4)  # fmt: skip
            line.set_gid("to-date")
            to_date.axhline(0, color="#444444", linewidth=0.8)
            to_date.set_title("to date (the running sum)", loc="left")
            scaled.append((to_date, running))
        bottom = to_date if to_date is not None else per_night
        bottom.set_xlabel("gaming day (noon to noon UTC)")
        for axes, values in scaled:
            low, high = min(0.0, *values), max(0.0, *values)
            pad = 0.12 * (high - low) or 1.0
            axes.set_ylim(low - (pad if low < 0 else 0), high + pad)
            axes.yaxis.set_major_locator(MaxNLocator(nbins=4, integer=not money))
            axes.yaxis.set_major_formatter(axis)
        _day_axis(bottom, offsets, first)
        return charts.svg(figure, f"against-{measure.name}")


def _day_axis(axes: Any, offsets: list[int], first: date) -> None:
    """Gaming days along the bottom, the nights' offsets from `first`: at least four days
    wide, so that one night's bar is a bar and not the whole chart."""
    span = offsets[-1]
    margin = max(0.6, (4 - span) / 2)
    axes.set_xlim(-margin, span + margin)
    if len(offsets) <= DATES_ON_AXIS:
        axes.set_xticks(offsets)
    else:
        axes.xaxis.set_major_locator(MaxNLocator(nbins=DATES_ON_AXIS, integer=True))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: _day_label(first, x)))


def _signed_dollars(value: float, _position: Any) -> str:
    return charts.dollars_tick(value, signed=True)


def _signed_count(value: float, _position: Any) -> str:
    # Signed by the count shown, not by the float under it: never "−0".
    count = round(value)
    sign = "−" if count < 0 else ("+" if count > 0 else "")
    return f"{sign}{abs(count):,}"
