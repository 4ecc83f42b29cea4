"""How a finding's words write a count and a moment, so that every check writes them alike:
"1 round" and "2 rounds" (never "round(s)" where the number is known), and a logged time
to the second unless it has a fraction of one."""

from __future__ import annotations

import polars as pl

from auditor.contract import MOMENT_TEXT, SECOND_TEXT


def agreeing(count: pl.Expr, singular: str, plural: str) -> pl.Expr:
    """The words that agree with `count`: `singular` where it is 1, else `plural`."""
    return pl.when(count == 1).then(pl.lit(singular)).otherwise(pl.lit(plural))


def counted(count: pl.Expr, singular: str, plural: str) -> pl.Expr:
    """`count` and the words that agree with it: "1 round", "2 rounds", "0 were burned"."""
    return pl.format("{} {}", count, agreeing(count, singular, plural))


def moment(instant: pl.Expr) -> pl.Expr:
    """A logged timestamp to the second, and to the microsecond where it has a fraction of a
    second: the order of two moments within one second can decide a finding (a wager
    placed after "no more bets"), so a fraction the log holds is never dropped."""
    return (
        pl.when(instant.dt.microsecond() == 0)
        .then(instant.dt.strftime(SECOND_TEXT))
        .otherwise(instant.dt.strftime(MOMENT_TEXT))
    )
