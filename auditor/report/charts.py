"""Charts as static inline SVG, drawn by matplotlib's SVG backend.

The same data gives the same bytes: a fixed `svg.hashsalt` names the clip paths, the SVG
carries no date, and text stays text (`svg.fonttype = none`, no font embedded or fetched).
Labels come from the data (table, dealer, rule ids), so mathtext is off (a dealer id
"$x$" is drawn as written, never parsed), their control and formatting characters are
spelled out as on the pages (`render.visible`), and matplotlib escapes them as XML text.
Each chart's ids are prefixed with its name, so several charts share one page without
their clip paths colliding.

A chart keeps its own size on the page (its width and height in points, shrunk only to fit
a narrow window), so its text reads at the body's size: `FONT_POINTS` points are 13.3 CSS
pixels, above the pages' smallest text (12 px). Legends sit above the plot, never over
the data.

`svg()` returns the document as `markupsafe.Markup` only after checking it is plain
drawing: no script, no foreign content, no event attribute, no link out of the document.
That check, not trust in the labels, is why the templates may insert it unescaped.

A chart is a function of its arguments alone, so the latest ones drawn are kept
(`remembered`): the desk, the live watch's batches and a re-audit draw the same night's
charts again, and matplotlib takes a twentieth of a second for each.
"""

from __future__ import annotations

import functools
import io
import re
import threading
import xml.etree.ElementTree as ET
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any, ParamSpec

import matplotlib
import numpy as np
from markupsafe import Markup

matplotlib.use("svg")  # no display, no GUI toolkit: the SVG backend only

import matplotlib.dates
import matplotlib.ticker
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from auditor.report.chart_fit import fit
from auditor.report.render import visible

# The pages' colours (report.css): severities red, gold and grey; the two sides of money
# paid wrong blue and brown, which no kind of colour blindness confuses, and neither the
# green of "all is well" nor a severity's colour.
SEVERITY_COLOURS = {"high": "#b42318", "medium": "#f0b429", "low": "#a3acb7"}
OVERPAID, UNDERPAID = "#1a5fb4", "#8a5a00"
WIDTH = 6.0  # inches: two charts side by side in a 1,280 px window
FONT_POINTS = 10
BAR_INCHES = 0.25  # per bar of a horizontal bar chart
STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": "auditor-report",
    "svg.fonttype": "none",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": FONT_POINTS,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": FONT_POINTS + 1,
    "axes.titleweight": "bold",
}
_SVG = "{http://www.w3.org/2000/svg}"
_ALLOWED = {
    "svg", "g", "path", "rect", "text", "tspan", "defs", "clipPath", "style", "use",
    "line", "polyline", "polygon", "circle", "ellipse", "title", "desc", "metadata",
}  # fmt: skip


MOST_REMEMBERED = 128  # charts kept: a few nights' worth; a year's chart is 80 KB of SVG
_REMEMBERED: OrderedDict[tuple[object, ...], Markup] = OrderedDict()
_REMEMBERED_LOCK = threading.Lock()
Arguments = ParamSpec("Arguments")


class _Unkeyable(TypeError):
    """An argument whose value a key could not hold exactly (the chart is drawn anew)."""


def _key(value: object) -> object:
    """`value` as a key equal only to the same values of the same types (1, 1.0 and True
    are three labels), a sequence read whole (an array's repr would elide its middle)."""
    if isinstance(value, str):
        return value
    if isinstance(value, np.generic):
        return (type(value).__name__, repr(value.item()))
    # By repr: -0.0 is not 0.0, nor an instant in one time zone the same in another.
    if value is None or isinstance(value, (bool, int, float, date, timedelta)):
        return (type(value).__name__, repr(value))
    if isinstance(value, Mapping):
        return ("mapping", tuple((_key(k), _key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, range, np.ndarray)):
        return ("sequence", tuple(_key(item) for item in value))
    raise _Unkeyable(type(value).__name__)


def remembered(draw: Callable[Arguments, Markup]) -> Callable[Arguments, Markup]:
    """`draw`, answering arguments it drew lately with the same chart, drawn once."""

    @functools.wraps(draw)
    def drawn(*args: Arguments.args, **kwargs: Arguments.kwargs) -> Markup:
        try:
            key = (draw.__module__, draw.__qualname__, _key(args), _key(kwargs))
        except _Unkeyable:
            return draw(*args, **kwargs)
        with _REMEMBERED_LOCK:
            chart = _REMEMBERED.get(key)
            if chart is not None:
                _REMEMBERED.move_to_end(key)
                return chart
        chart = draw(*args, **kwargs)
        with _REMEMBERED_LOCK:
            _REMEMBERED[key] = chart
            while len(_REMEMBERED) > MOST_REMEMBERED:
                _REMEMBERED.popitem(last=False)
        return chart

    return drawn


def _figure(width: float, height: float, left: float = 0.1, top: float = 0.68) -> Figure:
    """A figure with fixed margins (in inches): a layout engine would draw it twice. The
    top margin holds the title and, under it, the legend."""
    figure = Figure(figsize=(width, height), dpi=72)
    figure.subplots_adjust(
        left=left / width, right=1 - 0.2 / width, top=1 - top / height, bottom=0.6 / height
    )
    return figure


def _title_and_legend(ax: Any, title: str, legend: bool, columns: int = 3) -> None:
    """The title above the plot, and the legend on one line between them: outside the
    data, so it never covers a bar or a point."""
    ax.set_title(title, loc="left", pad=24 if legend else 8)
    if legend:
        legend_above(ax, columns)


def legend_above(ax: Any, columns: int) -> None:
    """The legend on one line just above the plot, outside the data."""
    ax.legend(
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
        ncol=columns,
        frameon=False,
        borderaxespad=0.2,
        handlelength=1.2,
        columnspacing=1.2,
    )


def whole_ticks(axis: Axis) -> None:
    """Ticks at whole numbers only, on an axis that counts: no tick between two findings."""
    locator = axis.get_major_locator()
    if isinstance(locator, matplotlib.ticker.MaxNLocator):  # the default, AutoLocator
        locator.set_params(integer=True)


def _bars_height(count: int) -> float:
    return 1.45 + BAR_INCHES * max(count, 3)


def svg(figure: Figure, name: str) -> Markup:
    """The figure as an inline SVG element, checked, its ids prefixed with `name`."""
    with matplotlib.rc_context(STYLE):
        fit(figure)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # no XML prolog or DOCTYPE inside HTML
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", text)
    text = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{name}-\1"', text)
    # Its own size stays (width and height in points): CSS only shrinks it to fit.
    text = text.replace("<svg ", '<svg class="chart-svg" ', 1)
    _check(text)
    return Markup(text)


def _check(text: str) -> None:
    root = ET.fromstring(text)
    for element in root.iter():
        tag = element.tag.removeprefix(_SVG)
        if tag not in _ALLOWED:
            raise ValueError(f"chart SVG holds a <{tag}> element")
        for attribute, value in element.attrib.items():
            local = attribute.rsplit("}", 1)[-1].lower()
            if local.startswith("on"):
                raise ValueError(f"chart SVG holds an event attribute {attribute}")
            if local == "href" and not value.startswith("#"):
                raise ValueError("chart SVG links out of the document")


def _short(label: str, width: int = 28) -> str:
    # Spelled out as on the page: a control character is not even well-formed XML.
    label = visible(label)
    return label if len(label) <= width else label[: width - 1] + "…"


@remembered
def stacked_bars(
    name: str,
    title: str,
    labels: Sequence[str],
    series: dict[str, Sequence[int]],
    xlabel: str,
    colours: dict[str, str] | None = None,
) -> Markup:
    """Horizontal bars, one per label (first at the top), stacked by series."""
    colours = colours or SEVERITY_COLOURS
    with matplotlib.rc_context(STYLE):
        figure = _figure(WIDTH, _bars_height(len(labels)), left=1.9)
        ax = figure.subplots()
        positions = list(range(len(labels)))[::-1]
        left = [0] * len(labels)
        for key, values in series.items():
            if not any(values):
                continue
            ax.barh(positions, values, left=left, color=colours.get(key), label=key, height=0.7)
            left = [a + b for a, b in zip(left, values, strict=True)]
        ax.set_yticks(positions, [_short(str(x)) for x in labels])
        ax.set_ylim(-0.6, max(len(labels), 1) - 0.4)
        ax.set_xlabel(xlabel)
        _title_and_legend(ax, title, len([v for v in series.values() if any(v)]) > 1)
        whole_ticks(ax.xaxis)
        return svg(figure, name)


@remembered
def signed_bars(
    name: str, title: str, labels: Sequence[str], over: Sequence[float], under: Sequence[float]
) -> Markup:
    """Money by label: overpaid to the right, underpaid to the left, each axis tick the
    dollars on its side."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(WIDTH, _bars_height(len(labels)), left=1.9)
        ax = figure.subplots()
        positions = list(range(len(labels)))[::-1]
        ax.barh(positions, over, color=OVERPAID, label="overpaid", height=0.7)
        ax.barh(positions, [-u for u in under], color=UNDERPAID, label="underpaid", height=0.7)
        ax.axvline(0, color="#444444", linewidth=0.8)
        ax.set_yticks(positions, [_short(str(x)) for x in labels])
        ax.set_ylim(-0.6, max(len(labels), 1) - 0.4)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=5))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_dollars_either_side))
        ax.set_xlabel("← underpaid   dollars   overpaid →")
        _title_and_legend(ax, title, True, columns=2)
        return svg(figure, name)


def _dollars_either_side(value: float, _position: Any) -> str:
    # The side says which way the money went: the tick says how much.
    return dollars_tick(abs(value), signed=False)


@remembered
def hourly_bars(
    name: str, title: str, hours: Sequence[str], series: Mapping[str, Sequence[int]]
) -> Markup:
    """Vertical bars over the hours of the gaming day, stacked by severity."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(WIDTH, 3.2, left=0.7)
        ax = figure.subplots()
        positions = list(range(len(hours)))
        bottom = [0] * len(hours)
        for key, values in series.items():
            if not any(values):
                continue
            colour = SEVERITY_COLOURS.get(key)
            ax.bar(positions, values, bottom=bottom, color=colour, label=key, width=0.8)
            bottom = [a + b for a, b in zip(bottom, values, strict=True)]
        ax.set_xticks(positions[::3], list(hours)[::3])
        ax.set_xlabel("hour of the gaming day (UTC, from noon)")
        _title_and_legend(ax, title, len([v for v in series.values() if any(v)]) > 1)
        whole_ticks(ax.yaxis)
        return svg(figure, name)


@remembered
def timeline(
    name: str,
    title: str,
    times: Sequence[datetime],
    running: Sequence[float],
    marked_times: Sequence[datetime],
    marked_values: Sequence[float],
    ylabel: str,
) -> Markup:
    """A running total over time, with the rounds that hold findings marked. The time
    axis spans the times drawn and a little more: never years around one evening."""
    with matplotlib.rc_context(STYLE):
        height = 3.4
        figure = _figure(WIDTH + 1.6, height, left=1.1)
        figure.subplots_adjust(bottom=0.72 / height)  # room for the date under the times
        ax = figure.subplots()
        if times:
            ax.step(_moments(times), list(running), where="post", color="#1d4e89", linewidth=1.2)
        if marked_times:
            ax.plot(
                _moments(marked_times),
                list(marked_values),
                linestyle="none",
                marker="o",
                markersize=5,
                color=SEVERITY_COLOURS["high"],
                label="round with a finding",
            )
        ax.axhline(0, color="#888888", linewidth=0.6)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("time (UTC)")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_signed_dollars))
        _title_and_legend(ax, title, bool(marked_times))
        drawn = [*times, *marked_times]
        if drawn:
            ax.set_xlim(*matplotlib.dates.date2num(time_span(min(drawn), max(drawn))))
        locator = matplotlib.dates.AutoDateLocator(minticks=3, maxticks=8)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(matplotlib.dates.ConciseDateFormatter(locator))
        return svg(figure, name)


def _moments(times: Sequence[datetime]) -> np.ndarray[tuple[int], np.dtype[np.datetime64]]:
    """Times (naive, UTC) as numpy's, which matplotlib draws on a date axis as it does
    `datetime`s (and which its annotations, unlike `datetime`s, accept)."""
    return np.array(times, dtype="datetime64[us]")


def _signed_dollars(value: float, _position: Any) -> str:
    return dollars_tick(value, signed=False)


def dollars_tick(value: float, signed: bool) -> str:
    """An axis tick in dollars: whole dollars, or cents where the tick falls between two
    (an axis spanning a few dollars); signed by the amount shown, so never "−$0"."""
    cents = round(value * 100)
    amount = abs(cents) / 100
    shown = f"${amount:,.0f}" if cents % 100 == 0 else f"${amount:,.2f}"
    if not signed:
        return f"-{shown}" if cents < 0 else shown
    return ("−" if cents < 0 else ("+" if cents > 0 else "")) + shown


TIME_MARGIN = timedelta(minutes=5)


def time_span(first: datetime, last: datetime) -> tuple[datetime, datetime]:
    """The time axis's limits: the times drawn with 3% either side, and at least five
    minutes either side of a single moment."""
    margin = max((last - first) * 0.03, TIME_MARGIN if first == last else timedelta(0))
    return first - margin, last + margin
