"""Hostile data, generated (hypothesis strategies): the base dataset with cells, rows and
tables damaged by the values a logging system or an operator could hand the auditor."""

from __future__ import annotations

from copy import deepcopy
from datetime import UTC, datetime
from decimal import Decimal

import polars as pl
from hypothesis import strategies as st

from auditor.contract import TABLES
from tests.support.datasets import base_rows

HOSTILE_TEXT = st.sampled_from(
    [
        "",
        " ",
        "<script>alert(1)</script>",
        "ÆØÅ 漢字 🂡",
        "x" * 1_000_000,
        "R1",
        "W1",
        "S1",
        "T1",
        "'; DROP TABLE findings; --",
        "\x00",
    ]
)
HOSTILE_MONEY = st.sampled_from(
    [
        Decimal("-5.00"),
        Decimal("0.00"),
        Decimal("9999999999999999.99"),
        Decimal("0.01"),
        None,
    ]
)
HOSTILE_TIMES = st.sampled_from(
    [
        None,
        datetime(1969, 12, 31, 23, 59, tzinfo=UTC),
        datetime(1900, 1, 1, tzinfo=UTC),
        datetime(2100, 1, 1, tzinfo=UTC),
        datetime(2026, 11, 24, 17, 0, tzinfo=UTC),
    ]
)
HOSTILE_CARDS = st.sampled_from(
    [
        None,
        [],
        ["9H"],
        ["9H", "KS", "2C", "3D"],
        ["XX", "1S"],
        ["9h", "ks"],
        ["TS"] * 10_000,
        ["", ""],
    ]
)
HOSTILE_INTS = st.sampled_from([None, -1, 0, 127, 99])


def hostile_value(dtype: pl.DataType) -> st.SearchStrategy:
    """Values of the column's contract type that break its meaning, and nulls."""
    if dtype == pl.String:
        return HOSTILE_TEXT
    if isinstance(dtype, pl.Decimal):
        return HOSTILE_MONEY
    if isinstance(dtype, pl.Datetime):
        return HOSTILE_TIMES
    if isinstance(dtype, pl.List):
        return HOSTILE_CARDS
    if dtype == pl.Boolean:
        return st.sampled_from([None, True, False])
    return HOSTILE_INTS


@st.composite
def damaged_rows(draw: st.DrawFn) -> dict[str, list[dict]]:
    """The base dataset with a few cells, rows and tables damaged."""
    rows = deepcopy(base_rows())
    for _ in range(draw(st.integers(1, 6))):
        table = draw(st.sampled_from(["tables", "shoes", "rounds", "wagers"]))
        if not rows[table]:
            continue
        action = draw(st.sampled_from(["cell", "cell", "cell", "duplicate", "drop", "empty"]))
        index = draw(st.integers(0, len(rows[table]) - 1))
        if action == "cell":
            column = draw(st.sampled_from(list(TABLES[table])))
            rows[table][index][column] = draw(hostile_value(TABLES[table][column][0]))
        elif action == "duplicate":
            rows[table].append(deepcopy(rows[table][index]))
        elif action == "drop":
            rows[table].pop(index)
        else:
            rows[table] = []
    return rows
