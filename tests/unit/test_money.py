"""One money formatter for messages, reports and the summary, right on negatives, and one
conversion of a money column to integer cents and back."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.money import cents, dollars, thousands, usd, usd_text


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


@given(st.integers(min_value=-(10**16) + 1, max_value=10**16 - 1))
def test_a_money_column_is_its_cents_and_back(amount_cents):
    column = pl.DataFrame(
        {"amount": [Decimal(amount_cents) / 100]}, schema={"amount": pl.Decimal(18, 2)}
    )
    held = column.select(cents("amount"))
    assert held.schema["amount"] == pl.Int64
    assert held.item() == amount_cents
    back = held.select(dollars(pl.col("amount")).cast(pl.Decimal(18, 2)))
    assert back.item() == Decimal(amount_cents) / 100


def test_cents_read_the_unscaled_value_not_a_rounded_one():
    column = pl.DataFrame({"amount": [Decimal("0.01"), Decimal("-0.01"), None]})
    column = column.cast({"amount": pl.Decimal(18, 2)})
    assert column.select(cents("amount"))["amount"].to_list() == [1, -1, None]


@pytest.mark.parametrize(
    ("number", "text"),
    [(0, "0"), (999, "999"), (1000, "1,000"), (1_234_567, "1,234,567"), (2**63 - 1, None)],
)
def test_thousands_groups_every_int64(number, text):
    shown = pl.select(thousands(pl.lit(number, dtype=pl.Int64))).item()
    assert shown == (text or f"{number:,}")


def test_no_module_but_money_converts_or_writes_money():
    """One conversion to cents and one formatter: a second `cents` or `usd` elsewhere
    would drift from this one (two `cents()` did: one read the unscaled value, the other
    multiplied). The simulator is apart: it stands on the contract alone, never on the
    auditor's own modules, so that it cannot share a mistake with them."""
    import ast
    from pathlib import Path

    import auditor

    package = Path(auditor.__file__).parent
    names = {"cents", "dollars", "thousands", "usd", "usd_text", "usd_expr"}
    elsewhere = [
        f"{path.relative_to(package)}:{node.lineno} {node.name}"
        for path in sorted(package.rglob("*.py"))
        if path != package / "money.py" and "simulator" not in path.relative_to(package).parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name in names
    ]
    assert elsewhere == []
