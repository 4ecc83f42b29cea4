"""The period report's charts, in the nightly charts' style (`report.charts`: static SVG,
checked, text kept as text), with the legend above the plot, never over the bars.

Over a long period a bar a night would be thinner than a pixel: past `BARS_UP_TO` nights
the series are drawn as steps, one path each, which also keeps a year's chart small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import matplotlib
import matplotlib.ticker
import numpy as np
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from auditor.report.charts import (
    OVERPAID,
    SEVERITY_COLOURS,
    STYLE,
    UNDERPAID,
    legend_above,
    remembered,
    svg,
    whole_ticks,
)
from auditor.report.charts import WIDTH as NIGHTLY_WIDTH
from auditor.report.render import visible

BARS_UP_TO = 92  # nights drawn as bars; more as steps
WIDTH = NIGHTLY_WIDTH  # inches: two charts side by side in a 1,280 px window
LABEL_WIDTH = 28
DATES_NAMED = 12  # dates up to this many are each named on the axis
HOLD, THEORY = "#1d4e89", "#8a94a0"


def _figure(height: float, left: float) -> Figure:
    """Fixed margins in inches (no layout engine), with room above the plot for the
    title and the legend."""
    figure = Figure(figsize=(WIDTH, height), dpi=72)
    figure.subplots_adjust(
        left=left / WIDTH, right=1 - 0.2 / WIDTH, top=1 - 0.62 / height, bottom=0.6 / height
    )
    return figure


def _title(ax: Axes, title: str) -> None:
    # Above the legend: the legend sits on the plot's top edge.
    ax.set_title(title, loc="left", pad=22)


def _short(label: str) -> str:
    label = visible(label)
    return label if len(label) <= LABEL_WIDTH else label[: LABEL_WIDTH - 1] + "…"


def _dollar_axis(axis: Any) -> None:
    axis.set_major_formatter(
        matplotlib.ticker.FuncFormatter(lambda x, _: f"{'−' if x < 0 else ''}${abs(x):,.0f}")
    )


def _date_axis(ax: Axes, dates: Sequence[date]) -> None:
    """A few dates of a short period each named in full ("01 Nov"), at the dates drawn
    (a week's Monday, not the days between); a long period's by matplotlib's locator."""
    if len(dates) <= DATES_NAMED:
        ax.set_xticks(_days(dates), [d.strftime("%d %b") for d in dates])
        return
    locator = matplotlib.dates.AutoDateLocator(minticks=3, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(matplotlib.dates.ConciseDateFormatter(locator))


def _days(days: Sequence[date]) -> np.ndarray[tuple[int], np.dtype[np.datetime64]]:
    """Days as numpy's, which matplotlib draws on a date axis as it does `date`s (and which
    its annotations, unlike `date`s, accept)."""
    return np.array(days, dtype="datetime64[D]")


def _stacked(ax: Axes, dates: Sequence[date], series: Mapping[str, Sequence[float]]) -> int:
    """Series stacked over the days: bars for a short period, steps for a long one; the
    number drawn (an all-zero series is left out of the chart and its legend)."""
    days = _days(dates)
    bottom = [0.0] * len(days)
    drawn = 0
    for key, values in series.items():
        if not any(values):
            continue
        top = [a + b for a, b in zip(bottom, values, strict=True)]
        colour = SEVERITY_COLOURS.get(key)
        if len(days) <= BARS_UP_TO:
            ax.bar(days, values, bottom=bottom, color=colour, label=key, width=0.8)
        else:
            ax.fill_between(days, bottom, top, step="mid", color=colour, label=key, linewidth=0)
        bottom = top
        drawn += 1
    return drawn


@remembered
def findings_per_night(
    name: str, days: Sequence[date], series: Mapping[str, Sequence[int]]
) -> Markup:
    """Findings in force per gaming day, stacked by severity."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(2.9, left=0.6)
        ax = figure.subplots()
        if _stacked(ax, days, series):
            legend_above(ax, 3)
        _date_axis(ax, days)
        ax.set_xlabel("gaming day (noon to noon UTC)")
        ax.set_ylabel("findings")
        whole_ticks(ax.yaxis)
        _title(ax, "Findings per gaming day")
        return svg(figure, name)


@remembered
def money_per_night(
    name: str, dates: Sequence[date], over: Sequence[float], under: Sequence[float]
) -> Markup:
    """Money at stake per gaming day: overpaid up, underpaid down."""
    days = _days(dates)
    with matplotlib.rc_context(STYLE):
        figure = _figure(2.9, left=0.9)
        ax = figure.subplots()
        if len(days) <= BARS_UP_TO:
            ax.bar(days, over, color=OVERPAID, label="overpaid", width=0.8)
            ax.bar(days, [-u for u in under], color=UNDERPAID, label="underpaid", width=0.8)
        else:
            ax.fill_between(days, 0, over, step="mid", color=OVERPAID, label="overpaid", lw=0)
            negative = [-u for u in under]
            ax.fill_between(days, negative, 0, step="mid", color=UNDERPAID, label="underpaid", lw=0)
        ax.axhline(0, color="#444444", linewidth=0.8)
        # A side with no money is left out of the legend: it names only what is drawn
        # (matplotlib leaves out labels that start with an underscore).
        for artist in ax.containers + ax.collections:
            side = artist.get_label()
            if not any(over if side == "overpaid" else under):
                artist.set_label(f"_{side}")
        if any(over) or any(under):
            legend_above(ax, 2)
        _date_axis(ax, dates)
        ax.set_xlabel("gaming day (noon to noon UTC)")
        _dollar_axis(ax.yaxis)
        _title(ax, "Money at stake per gaming day (overpaid up, underpaid down)")
        return svg(figure, name)


@remembered
def ranked_bars(
    name: str,
    title: str,
    labels: Sequence[str],
    series: dict[str, Sequence[float]],
    xlabel: str,
    colours: dict[str, str],
    money: bool = False,
) -> Markup:
    """Horizontal bars, the first label at the top, stacked by series."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(1.4 + 0.22 * max(len(labels), 3), left=1.9)
        ax = figure.subplots()
        positions = list(range(len(labels)))[::-1]
        left = [0.0] * len(labels)
        drawn = 0
        for key, values in series.items():
            if not any(values):
                continue
            ax.barh(positions, values, left=left, color=colours.get(key), label=key, height=0.7)
            left = [a + b for a, b in zip(left, values, strict=True)]
            drawn += 1
        ax.set_yticks(positions, [_short(str(x)) for x in labels])
        ax.set_xlabel(xlabel)
        if money:
            _dollar_axis(ax.xaxis)
        else:  # counts: no tick between two whole findings
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        if drawn:
            legend_above(ax, 3)
        _title(ax, title)
        return svg(figure, name)


@remembered
def weekly_hold(
    name: str, weeks: Sequence[date], hold: Sequence[float], theory: Sequence[float]
) -> Markup:
    """Every table of the scope together, week by week: the hold beside its theory."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(3.2, left=0.7)
        ax = figure.subplots()
        percent = [100 * h for h in hold]
        ax.plot(_days(weeks), percent, color=HOLD, marker="o", markersize=3.5, label="hold")
        ax.plot(
            _days(weeks),
            [100 * t for t in theory],
            color=THEORY,
            linestyle="--",
            marker="o",
            markersize=3,
            label="theoretical hold",
        )
        ax.axhline(0, color="#444444", linewidth=0.6)
        legend_above(ax, 2)
        _date_axis(ax, weeks)
        ax.set_xlabel("week (from Monday, or the first day of the period)")
        ax.set_ylabel("hold, %")
        _title(ax, "Hold against theoretical hold, all tables, per week")
        return svg(figure, name)
