"""A chart drawn lately is answered from memory for the same arguments, and only for them."""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime, timedelta, timezone

import polars as pl
import pytest
from markupsafe import Markup

from auditor.report import charts
from auditor.report.period import charts as period_charts

TABLES = ["T-MA-BAC-01", "T-MA-BAC-02"]


@pytest.fixture
def drawings(monkeypatch) -> list[str]:
    """The names of the charts matplotlib draws from here on, in an empty memory."""
    drawn: list[str] = []
    svg = charts.svg

    def counted(figure, name: str) -> Markup:
        drawn.append(name)
        return svg(figure, name)

    monkeypatch.setattr(charts, "svg", counted)
    monkeypatch.setattr(period_charts, "svg", counted)
    monkeypatch.setattr(charts, "_REMEMBERED", OrderedDict())
    return drawn


def bars(labels, series) -> Markup:
    return charts.stacked_bars("per-table", "Findings per table", labels, series, "findings")


def test_the_same_arguments_again_are_the_same_chart_drawn_once(drawings):
    first = bars(list(TABLES), {"high": [3, 1]})
    again = bars(list(TABLES), {"high": [3, 1]})  # equal, not the same objects
    assert again == first and drawings == ["per-table"]
    days = [datetime(2026, 11, d, tzinfo=UTC).date() for d in (1, 2)]
    for _ in range(2):
        period_charts.findings_per_night("nights", days, {"high": [1, 2]})
    assert drawings == ["per-table", "nights"]


@pytest.mark.parametrize(
    ("labels", "series"),
    [
        (TABLES, {"high": [3, 2]}),  # another count
        (TABLES, {"low": [3, 1]}),  # another severity
        (TABLES[::-1], {"high": [3, 1]}),  # another order
        ([1, 2], {"high": [3, 1]}),  # labels that print as 1 and 2 ...
        ([1.0, 2.0], {"high": [3, 1]}),  # ... and as 1.0 and 2.0, though equal
        ([True, 2], {"high": [3, 1]}),  # ... and as True
    ],
)
def test_arguments_that_differ_in_value_or_type_are_drawn(drawings, labels, series):
    remembered = bars(list(TABLES), {"high": [3, 1]})
    assert bars(labels, series) != remembered
    assert drawings == ["per-table", "per-table"]


def test_a_signed_zero_and_a_time_zone_are_part_of_the_arguments(drawings):
    for zero in (0.0, -0.0):
        charts.signed_bars("money", "Money", TABLES, [zero, 5.0], [1.0, 0.0])
    assert drawings == ["money", "money"]
    # The same instant in another zone is another argument (equal as datetimes).
    utc = datetime(2026, 11, 24, 18, tzinfo=UTC)
    eastern = utc.astimezone(timezone(timedelta(hours=-5)))
    assert utc == eastern and charts._key([utc]) != charts._key([eastern])


def test_only_the_latest_charts_are_kept(drawings, monkeypatch):
    monkeypatch.setattr(charts, "MOST_REMEMBERED", 2)
    for count in (1, 2, 3, 1):  # the first is pushed out by the third, so drawn again
        bars(TABLES, {"high": [count, 0]})
    assert len(drawings) == 4
    bars(TABLES, {"high": [3, 0]})  # still kept
    assert len(drawings) == 4


def test_an_argument_a_key_cannot_hold_exactly_is_drawn_every_time(drawings):
    # A Series prints its middle elided: never a key, so never a wrong chart.
    for _ in range(2):
        bars(TABLES, {"high": pl.Series([3, 1])})
    assert drawings == ["per-table", "per-table"]
