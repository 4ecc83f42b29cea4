"""Small enumerations (the contract's outcomes, results, bets, round kinds) as integer
codes inside frames: comparing and gathering small integers costs far less than strings,
and the words come back only for the few rows a finding needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from polars.expr.whenthen import ChainedThen, Then


def code(name: str, names: tuple[str, ...]) -> int:
    """The code of one name of `names` (its index)."""
    return names.index(name)


def code_of(column: str, names: tuple[str, ...]) -> pl.Expr:
    """A string column's index in `names` (Int8): null stays null, anything else is -1.

    Comparisons with literals, not a cast or a hash lookup: cheapest on short strings.
    """
    found: Then | ChainedThen = pl.when(pl.col(column).is_null()).then(pl.lit(None, dtype=pl.Int8))
    for index, name in enumerate(names):
        found = found.when(pl.col(column) == name).then(pl.lit(index, dtype=pl.Int8))
    return found.otherwise(pl.lit(-1, dtype=pl.Int8))


def enum_code(column: str, values: tuple[str, ...]) -> pl.Expr:
    """A string column of known values as its index in `values` (Int32), by a cast to
    the enumeration: a value outside it is an error, not a code."""
    return pl.col(column).cast(pl.Enum(values)).to_physical().cast(pl.Int32)


def names_of(code: pl.Expr, names: tuple[str, ...]) -> pl.Expr:
    """The words for a code of `names` (null stays null)."""
    return pl.lit(pl.Series(names, dtype=pl.String)).gather(code)
