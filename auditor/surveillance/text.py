"""The tests' detail text as polars expressions: a night holds hundreds of thousands of
tests (a 2-million-round night 437,000), and formatting each in Python took a second.

Numbers are shown as Python's fixed-point formats show them, money as `auditor.money`
writes it, but for a value that, scaled to the shown digit, is a tie in binary (0.005 is
shown $0.00, rounded half to even, where Python rounds the binary fraction just above it
up).
"""

from __future__ import annotations

import polars as pl

from auditor.money import thousands


def whole_text(number: pl.Expr) -> pl.Expr:
    """A count as digits ("1234")."""
    return number.cast(pl.Int64).cast(pl.String)


def grouped_text(number: pl.Expr) -> pl.Expr:
    """A count with thousands separators ("1,234")."""
    value = number.cast(pl.Int64)
    sign = pl.when(value < 0).then(pl.lit("-")).otherwise(pl.lit(""))
    return pl.concat_str(sign, thousands(value.abs()))


def fixed_text(number: pl.Expr, decimals: int) -> pl.Expr:
    """A number with `decimals` digits after the point ("12.5" at one)."""
    scaled = (number * 10**decimals).round(0).cast(pl.Int64)
    digits = scaled.abs().cast(pl.String).str.zfill(decimals + 1)
    sign = pl.when(number < 0).then(pl.lit("-")).otherwise(pl.lit(""))
    whole, fraction = digits.str.head(-decimals), digits.str.tail(decimals)
    return pl.concat_str(sign, whole, pl.lit("."), fraction)


def nearest_cent(dollars: pl.Expr) -> pl.Expr:
    """A statistic in dollars (a float: a sum of nets, an expectation, a deviation; not
    money held) to the nearest cent, as Int64 cents for `money.usd` to write."""
    return (dollars * 100).round(0).cast(pl.Int64)


def details(columns: dict[str, object], text: pl.Expr) -> pl.Series:
    """`text` evaluated over `columns` (numpy arrays or series of one length)."""
    return pl.DataFrame(columns).select(text.alias("detail")).to_series()


def of_text(part: pl.Expr, whole: pl.Expr, then: str) -> pl.Expr:
    """ "3 of 40" and what follows it."""
    return pl.concat_str(whole_text(part), pl.lit(" of "), whole_text(whole), pl.lit(then))
