"""The patrons' tests: how often each rated patron's side wagers win, and the money each
won, against the exact chances of the tables and decks they played.

Both are one-sided: surveillance looks for a patron who wins more than the game allows
(a dealer paying a friend, a marked shoe); one who loses more is the house's gain, and a
wager settled short is a PAY finding anyway.

- Win rate, per patron and side-wager family (Dragon Bonus on either hand together: one
  paytable settles both), against the binomial at the mean chance of the wagers, which
  is conservative for wagers of unlike chances (see `stats`). Banker and Player are
  left to the money test: their wins are near even, their money is the signal.
- Money won, per patron over every wager the packs can price (Royal 9 is left out: a
  progressive line pays a meter the logs do not hold), against the exact mean and
  variance of each wager's result, with Bernstein's bound as its p-value.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from auditor.money import usd
from auditor.surveillance.schema import TEST_SCHEMA, empty_tests
from auditor.surveillance.stats import bernstein_upper, binomial_upper
from auditor.surveillance.text import details, fixed_text, grouped_text, nearest_cent, of_text

FAMILIES = {
    "tie": ("tie",),
    "dragon_bonus": ("dragon_bonus_banker", "dragon_bonus_player"),
    "dragon7": ("dragon7",),
    "panda8": ("panda8",),
    "house_money": ("house_money",),
    "royal9": ("royal9",),
}
FAMILY_OF = {bet: family for family, bets in FAMILIES.items() for bet in bets}
MONEY = "money_won"


def patron_tests(cells: pl.DataFrame) -> pl.DataFrame:
    """The rated patrons' tests over their cells (`gather.PATRON_CELL_SCHEMA`)."""
    if cells.height == 0:
        return empty_tests()
    return pl.concat([win_rates(cells), money_won(cells)])


def win_rates(cells: pl.DataFrame) -> pl.DataFrame:
    family = pl.col("bet").replace_strict(FAMILY_OF, default=None, return_dtype=pl.String)
    g = (
        cells.with_columns(family.alias("family"))
        .filter(pl.col("family").is_not_null())
        .group_by("patron_id", "family")
        .agg(pl.col("n").sum(), pl.col("wins").sum(), pl.col("expected_wins").sum())
        .sort("patron_id", "family")
    )
    n = g["n"].to_numpy().astype(float)
    k = g["wins"].to_numpy().astype(float)
    chance = g["expected_wins"].to_numpy() / n
    keep = (chance > 0) & (chance < 1)
    g, n, k, chance = g.filter(pl.Series(keep)), n[keep], k[keep], chance[keep]
    z, p = binomial_upper(k, n, chance)
    return pl.DataFrame(
        {
            "level": "patron",
            "key": g["patron_id"],
            "table_id": None,
            "statistic": g["family"] + "_win_rate",
            "observed": k / n,
            "expected": chance,
            "z": z,
            "p_value": p,
            "rounds": None,
            "wagers": n.astype(np.int64),
            "detail": details(
                {"k": k, "n": n, "e": chance * n},
                pl.concat_str(
                    of_text(pl.col("k"), pl.col("n"), " won ("),
                    fixed_text(pl.col("e"), 1),
                    pl.lit(" expected)"),
                ),
            ),
        },
        schema=TEST_SCHEMA,
    )


def money_sums(cells: pl.DataFrame, key: str) -> pl.DataFrame:
    """Per `key`, over the wagers whose money is priced: how many, the stake, the money
    won, its exact mean and variance, and the largest swing of one wager."""
    return (
        cells.group_by(key)
        .agg(
            pl.col("money_n").sum().alias("n"),
            *(pl.col(c).sum() for c in ("stake", "net", "expected", "variance")),
            pl.col("spread").max(),
        )
        .filter(pl.col("variance") > 0)
        .sort(key)
    )


def money_won(cells: pl.DataFrame) -> pl.DataFrame:
    g = money_sums(cells, "patron_id")
    net, expected = g["net"].to_numpy(), g["expected"].to_numpy()
    z, p = bernstein_upper(net - expected, g["variance"].to_numpy(), g["spread"].to_numpy())
    return pl.DataFrame(
        {
            "level": "patron",
            "key": g["patron_id"],
            "table_id": None,
            "statistic": MONEY,
            "observed": net,
            "expected": expected,
            "z": z,
            "p_value": p,
            "rounds": None,
            "wagers": g["n"].cast(pl.Int64),
            "detail": details(
                {"a": net, "n": g["n"], "e": expected, "v": g["variance"]},
                pl.concat_str(
                    pl.lit("won "),
                    usd(nearest_cent(pl.col("a"))),
                    pl.lit(" on "),
                    grouped_text(pl.col("n")),
                    pl.lit(" wagers ("),
                    usd(nearest_cent(pl.col("e"))),
                    pl.lit(" expected, sd "),
                    usd(nearest_cent(pl.col("v").sqrt())),
                    pl.lit(")"),
                ),
            ),
        },
        schema=TEST_SCHEMA,
    )
