"""One money formatter for messages, reports and the summary, right on negatives."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.money import usd, usd_text


@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (0, "$0.00"),
        (-25, "-$0.25"),
        (-175, "-$1.75"),
        (5, "$0.05"),
        (100_000, "$1,000.00"),
        (4_371_900, "$43,719.00"),
        (-123_456_789_01, "-$123,456,789.01"),
        (99_999, "$999.99"),
    ],
)
def test_amounts_read_as_people_write_them(cents, text):
    assert pl.select(usd(pl.lit(cents, dtype=pl.Int64))).item() == text
    assert usd_text(Decimal(cents) / 100) == text


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_the_expression_and_the_text_agree_to_the_cent(cents):
    expression = pl.select(usd(pl.lit(cents, dtype=pl.Int64))).item()
    assert expression == usd_text(Decimal(cents) / 100)
    assert Decimal(expression.replace("$", "").replace(",", "")) * 100 == cents


def test_no_amount_and_a_signed_gain():
    assert usd_text(None) == "—"
    assert usd_text(Decimal("1.5"), signed=True) == "+$1.50"
    assert usd_text(Decimal("-1.5"), signed=True) == "-$1.50"
