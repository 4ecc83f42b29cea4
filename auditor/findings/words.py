"""How a finding's words write a count, a moment and a ruleset's article, so that every
check writes them alike: "1 round" and "2 rounds" (never "round(s)" where the number is
known), a logged time to the second unless it has a fraction of one, and "a" or "an"
before a ruleset's id as it is read aloud."""

from __future__ import annotations

import polars as pl

from auditor.contract import MOMENT_TEXT, SECOND_TEXT


def agreeing(count: pl.Expr, singular: str, plural: str) -> pl.Expr:
    """The words that agree with `count`: `singular` where it is 1, else `plural`."""
    return pl.when(count == 1).then(pl.lit(singular)).otherwise(pl.lit(plural))


def counted(count: pl.Expr, singular: str, plural: str) -> pl.Expr:
    """`count` and the words that agree with it: "1 round", "2 rounds", "0 were burned"."""
    return pl.format("{} {}", count, agreeing(count, singular, plural))


def count_text(count: int, singular: str, plural: str) -> str:
    """A count for a person, in words that agree with it: "1 run", "2,000 runs"."""
    return f"{count:,} {singular if count == 1 else plural}"


# Letters whose names begin with a vowel sound ("em", "ess", "aitch"): a ruleset's id
# begins with its jurisdiction's initials, read letter by letter ("md" is "em-dee").
VOWEL_SOUNDING_LETTERS = "aefhilmnorsx"


def with_article(ruleset: pl.Expr) -> pl.Expr:
    """A ruleset's id after "a" or "an", by the sound of its first letter read as a letter:
    "an m…" (em), "a b…" (bee)."""
    first = ruleset.str.slice(0, 1).str.to_lowercase()
    vowel_sound = first.is_in(list(VOWEL_SOUNDING_LETTERS))
    return pl.format(
        "{} {}", pl.when(vowel_sound).then(pl.lit("an")).otherwise(pl.lit("a")), ruleset
    )


def moment(instant: pl.Expr) -> pl.Expr:
    """A logged timestamp to the second, and to the microsecond where it has a fraction of a
    second: the order of two moments within one second can decide a finding (a wager
    placed after "no more bets"), so a fraction the log holds is never dropped."""
    return (
        pl.when(instant.dt.microsecond() == 0)
        .then(instant.dt.strftime(SECOND_TEXT))
        .otherwise(instant.dt.strftime(MOMENT_TEXT))
    )
