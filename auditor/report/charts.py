"""Charts as static inline SVG, drawn by matplotlib's SVG backend.

The same data gives the same bytes: a fixed `svg.hashsalt` names the clip paths, the SVG
carries no date, and text stays text (`svg.fonttype = none`, no font embedded or fetched).
Labels come from the data (table, dealer, rule ids), so mathtext is off (a dealer id
"$x$" is drawn as written, never parsed), their control and formatting characters are
spelled out as on the pages (`render.visible`), and matplotlib escapes them as XML text.
Each chart's ids are prefixed with its name, so several charts share one page without
their clip paths colliding.

`svg()` returns the document as `markupsafe.Markup` only after checking it is plain
drawing: no script, no foreign content, no event attribute, no link out of the document.
That check, not trust in the labels, is why the templates may insert it unescaped.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import datetime

import matplotlib
from markupsafe import Markup

matplotlib.use("svg")  # no display, no GUI toolkit: the SVG backend only

from matplotlib.figure import Figure

from auditor.report.render import visible

SEVERITY_COLOURS = {"high": "#b42318", "medium": "#dc8a0e", "low": "#5b7fa6"}
OVERPAID, UNDERPAID = "#b42318", "#1f6f43"
STYLE = {
    "svg.hashsalt": "auditor-report",
    "svg.fonttype": "none",
    "text.parse_math": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
}
_SVG = "{http://www.w3.org/2000/svg}"
_ALLOWED = {
    "svg", "g", "path", "rect", "text", "tspan", "defs", "clipPath", "style", "use",
    "line", "polyline", "polygon", "circle", "ellipse", "title", "desc", "metadata",
}  # fmt: skip


def _figure(width: float, height: float, left: float = 0.1) -> Figure:
    """A figure with fixed margins (in inches): a layout engine would draw it twice."""
    figure = Figure(figsize=(width, height), dpi=72)
    figure.subplots_adjust(
        left=left / width, right=1 - 0.15 / width, top=1 - 0.35 / height, bottom=0.55 / height
    )
    return figure


def svg(figure: Figure, name: str) -> Markup:
    """The figure as an inline SVG element, checked, its ids prefixed with `name`."""
    with matplotlib.rc_context(STYLE):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # no XML prolog or DOCTYPE inside HTML
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", text)
    text = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{name}-\1"', text)
    text = re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r'<svg \1class="chart-svg"', text)
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
        figure = _figure(6.4, 0.9 + 0.22 * max(len(labels), 3), left=1.9)
        ax = figure.subplots()
        positions = list(range(len(labels)))[::-1]
        left = [0] * len(labels)
        for key, values in series.items():
            if not any(values):
                continue
            ax.barh(positions, values, left=left, color=colours.get(key), label=key, height=0.7)
            left = [a + b for a, b in zip(left, values, strict=True)]
        ax.set_yticks(positions, [_short(str(x)) for x in labels])
        ax.set_xlabel(xlabel)
        ax.set_title(title, loc="left")
        if len([v for v in series.values() if any(v)]) > 1:
            ax.legend(loc="lower right", frameon=False)
        ax.xaxis.get_major_locator().set_params(integer=True)
        return svg(figure, name)


def signed_bars(
    name: str, title: str, labels: Sequence[str], over: Sequence[float], under: Sequence[float]
) -> Markup:
    """Money by label: overpaid to the right, underpaid (as a negative) to the left."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(6.4, 0.9 + 0.22 * max(len(labels), 3), left=1.9)
        ax = figure.subplots()
        positions = list(range(len(labels)))[::-1]
        ax.barh(positions, over, color=OVERPAID, label="overpaid", height=0.7)
        ax.barh(positions, [-u for u in under], color=UNDERPAID, label="underpaid", height=0.7)
        ax.axvline(0, color="#444444", linewidth=0.8)
        ax.set_yticks(positions, [_short(str(x)) for x in labels])
        ax.set_xlabel("dollars (overpaid right, underpaid left)")
        ax.set_title(title, loc="left")
        ax.legend(loc="lower right", frameon=False)
        return svg(figure, name)


def hourly_bars(
    name: str, title: str, hours: Sequence[str], series: dict[str, Sequence[int]]
) -> Markup:
    """Vertical bars over the hours of the gaming day, stacked by severity."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(6.4, 2.6, left=0.6)
        ax = figure.subplots()
        positions = list(range(len(hours)))
        bottom = [0] * len(hours)
        for key, values in series.items():
            if not any(values):
                continue
            colour = SEVERITY_COLOURS.get(key)
            ax.bar(positions, values, bottom=bottom, color=colour, label=key, width=0.8)
            bottom = [a + b for a, b in zip(bottom, values, strict=True)]
        ax.set_xticks(positions[::2], list(hours)[::2])
        ax.set_xlabel("hour of the gaming day (UTC, from noon)")
        ax.set_title(title, loc="left")
        ax.yaxis.get_major_locator().set_params(integer=True)
        if len([v for v in series.values() if any(v)]) > 1:
            ax.legend(loc="upper right", frameon=False)
        return svg(figure, name)


def timeline(
    name: str,
    title: str,
    times: Sequence[datetime],
    running: Sequence[float],
    marked_times: Sequence[datetime],
    marked_values: Sequence[float],
    ylabel: str,
) -> Markup:
    """A running total over time, with the rounds that hold findings marked."""
    with matplotlib.rc_context(STYLE):
        figure = _figure(6.4, 2.8, left=0.9)
        figure.subplots_adjust(bottom=0.75 / 2.8)  # room for the date under the times
        ax = figure.subplots()
        if times:
            ax.step(list(times), list(running), where="post", color="#1d4e89", linewidth=1.2)
        if marked_times:
            ax.plot(
                list(marked_times),
                list(marked_values),
                linestyle="none",
                marker="o",
                markersize=5,
                color=SEVERITY_COLOURS["high"],
                label="round with a finding",
            )
            ax.legend(loc="best", frameon=False)
        ax.axhline(0, color="#888888", linewidth=0.6)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("time (UTC)")
        ax.set_title(title, loc="left")
        locator = matplotlib.dates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(matplotlib.dates.ConciseDateFormatter(locator))
        return svg(figure, name)
