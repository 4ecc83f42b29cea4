"""Every word of a chart inside its drawing: a title too long for the width is wrapped onto
more lines, and tick labels, axis labels and legends that would cross an edge move the
plots in, for the SVG shows nothing past its own box.

The charts are laid out by hand (fixed margins in inches, `charts._figure`), which suits
the usual labels; the labels come from the data, though (a 28-character dealer id, a
title that says "top 12 of 21 dealers with money at stake"), so the layout is measured
once drawn and mended where it does not fit. The figure keeps its width (two charts side
by side in a wide window) and grows taller when a title takes more lines.
"""

from __future__ import annotations

from collections.abc import Iterator

from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

EDGE = 3.0  # points kept clear inside each edge: browsers' glyph boxes run a little wider
ROUNDS = 4  # mending moves the plots, which moves their labels: measure again, this often


def fit(figure: Figure) -> None:
    """Mend `figure` in place until every text lies inside it."""
    # Agg measures text with the same font files the SVG names (text stays text). No
    # drawing first: measuring a plot's box lays out what a drawing would (its aspect,
    # ticks and titles' places), and a drawing cost a third of a report's charts.
    renderer = FigureCanvasAgg(figure).get_renderer()
    for _ in range(ROUNDS):
        if not (_wrap_titles(figure, renderer) or _move_plots_in(figure, renderer)):
            return


def _titles(ax: Axes) -> Iterator[Text]:
    # Axes keep their three titles (centre, left, right) as attributes of their own.
    for name in ("title", "_left_title", "_right_title"):
        title = getattr(ax, name, None)
        if isinstance(title, Text) and title.get_visible() and title.get_text():
            yield title


def _wrap_titles(figure: Figure, renderer: RendererBase) -> bool:
    """Wrap each title that runs past the right edge; the figure grows by the lines added,
    above the plot the title belongs to. Whether anything changed."""
    changed = False
    right = figure.bbox.width - EDGE
    for ax in figure.axes:
        for title in _titles(ax):
            box = title.get_window_extent(renderer)
            if box.x1 <= right:
                continue
            lines = _wrapped(title, box.x0, right, renderer)
            if lines == title.get_text():
                continue
            title.set_text(lines)
            grown = title.get_window_extent(renderer).height - box.height
            _make_room_above(figure, ax, grown)
            changed = True
    return changed


def _wrapped(title: Text, left: float, right: float, renderer: RendererBase) -> str:
    """The title's words on as few lines as fit between `left` and `right`; a single word
    wider than that keeps a line of its own."""
    original = title.get_text()
    words = original.replace("\n", " ").split(" ")
    lines: list[str] = []
    for word in words:
        trial = f"{lines[-1]} {word}" if lines else word
        title.set_text(trial)
        if not lines or title.get_window_extent(renderer).width > right - left:
            lines.append(word)
        else:
            lines[-1] = trial
    title.set_text(original)
    return "\n".join(lines)


def _make_room_above(figure: Figure, ax: Axes, points: float) -> None:
    """The figure `points` taller, the new height above `ax`: every plot keeps its place
    from the bottom, those above `ax` moving up."""
    if points <= 0:
        return
    width, height = figure.get_size_inches()
    grown = points / figure.dpi
    below = ax.get_position().y0
    boxes = [(other, other.get_position()) for other in figure.axes]
    figure.set_size_inches(width, height + grown)
    for other, box in boxes:
        lift = grown if box.y0 > below else 0.0
        bottom = box.y0 * height + lift
        other.set_position(
            Bbox.from_bounds(
                box.x0, bottom / (height + grown), box.width, box.height * height / (height + grown)
            )
        )


def _move_plots_in(figure: Figure, renderer: RendererBase) -> bool:
    """Narrow the plots so that what sticks out left or right (tick labels, a y label, a
    legend) fits, and grow the figure where it sticks out above or below. Whether
    anything changed."""
    # A hidden plot draws nothing, and has no box (None).
    boxes = [tight for ax in figure.axes if (tight := ax.get_tightbbox(renderer)) is not None]
    if not boxes:
        return False
    drawn = Bbox.union(boxes)
    box = figure.bbox
    left = max(0.0, EDGE - drawn.x0)
    right = max(0.0, drawn.x1 - (box.width - EDGE))
    below = max(0.0, EDGE - drawn.y0)
    above = max(0.0, drawn.y1 - (box.height - EDGE))
    if not (left or right or below or above):
        return False
    width, height = figure.get_size_inches()
    taller = (below + above) / figure.dpi
    for ax in figure.axes:
        place = ax.get_position()
        x0 = place.x0 + left / box.width
        x1 = place.x1 - right / box.width
        bottom = place.y0 * height + below / figure.dpi
        ax.set_position(
            Bbox.from_bounds(
                x0,
                bottom / (height + taller),
                x1 - x0,
                place.height * height / (height + taller),
            )
        )
    figure.set_size_inches(width, height + taller)
    return True
