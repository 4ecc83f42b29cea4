"""The one way money is written for people: "$1,234.50", "-$0.25". Finding messages, their
expected and logged values, the summary and the reports all use it, so that an amount
reads the same wherever it appears. Money is held in integer cents or Decimal dollars,
never float: these only write it."""

from __future__ import annotations

from decimal import Decimal

import polars as pl


def usd(cents_expr: pl.Expr) -> pl.Expr:
    """Integer cents as "$1,234.50" / "-$0.25", as a polars expression."""
    magnitude = cents_expr.abs()
    whole = (magnitude // 100).cast(pl.String)
    # Thousands separators: group the reversed digits by three (polars' regex has no
    # lookahead to do it in place).
    grouped = whole.str.reverse().str.replace_all(r"(\d{3})", "${1},")
    grouped = grouped.str.strip_suffix(",").str.reverse()
    return pl.concat_str(
        pl.when(cents_expr < 0).then(pl.lit("-$")).otherwise(pl.lit("$")),
        grouped,
        pl.lit("."),
        (magnitude % 100).cast(pl.String).str.zfill(2),
    )


def usd_text(dollars: Decimal | int | str | None, signed: bool = False) -> str:
    """Dollars as "$1,234.50" / "-$0.25" (with `signed`, "+$1.00" for a gain); "—" for
    no amount."""
    if dollars is None:
        return "—"
    amount = Decimal(str(dollars))
    sign = "-" if amount < 0 else ("+" if signed and amount > 0 else "")
    return f"{sign}${abs(amount):,.2f}"
