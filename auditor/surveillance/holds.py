"""Each table's and each dealer's hold: what the house kept of the money wagered, beside
its theoretical hold.

The theoretical hold of a table is the house edge of each wager its patrons placed
(`expected.wager_price`, exact for the shoe's decks and the table's options) weighted
by the money staked, over every wager the packs can price (Royal 9 is left out: a
progressive line pays a meter the logs do not hold) on the rounds played, a bet the
table does not offer left out (`gather.partition_cells`). The observed hold is what the
logs say the house kept of the same wagers: the stakes lost less the payouts net of
commission, over the money staked. docs/queries.md's first question computes both
figures in SQL, to the cent.

The test is one-sided, as the patrons' money test is: a table or a dealer that keeps
less than the game gives (a dealer paying out, a stacked shoe); its p-value is
Bernstein's bound on the patrons' money won against its exact mean and variance. One
that keeps more is the house's gain, and a wager settled short is a PAY finding anyway.
The z-score is the hold's: negative when the house kept less than in theory, as a reader
of a hold below theory expects. A dealer's hold sums every table the dealer dealt at
(`gather.DEALER_CELL_SCHEMA`): a dealer moving between tables is tested as one.
"""

from __future__ import annotations

import math

import polars as pl

from auditor.money import usd_text
from auditor.surveillance.patrons import money_sums
from auditor.surveillance.schema import TEST_SCHEMA, empty_tests
from auditor.surveillance.stats import bernstein_upper

HOLD = "hold"
KEY_OF = {"table": "table_id", "dealer": "dealer_id"}


def table_holds(cells: pl.DataFrame) -> pl.DataFrame:
    """One test per table over its cells (`gather.TABLE_CELL_SCHEMA`: rated wagers and
    unrated alike)."""
    return holds("table", cells)


def dealer_holds(cells: pl.DataFrame) -> pl.DataFrame:
    """One test per dealer over their cells (`gather.DEALER_CELL_SCHEMA`)."""
    return holds("dealer", cells)


def holds(level: str, cells: pl.DataFrame) -> pl.DataFrame:
    """One hold test per key of `level` (table or dealer)."""
    key = KEY_OF[level]
    g = money_sums(cells.filter(pl.col(key).is_not_null() & (pl.col(key) != "")), key)
    g = g.filter(pl.col("stake") > 0)
    if g.height == 0:
        return empty_tests()
    stake, net, expected = g["stake"].to_numpy(), g["net"].to_numpy(), g["expected"].to_numpy()
    z, p = bernstein_upper(net - expected, g["variance"].to_numpy(), g["spread"].to_numpy())
    return pl.DataFrame(
        {
            "level": level,
            "key": g[key],
            "table_id": g[key] if level == "table" else None,
            "statistic": HOLD,
            "observed": -net / stake,
            "expected": -expected / stake,
            "z": -z,
            "p_value": p,
            "rounds": None,
            "wagers": g["n"].cast(pl.Int64),
            "detail": [
                f"{_kept(-w)} of {usd_text(f'{s:.2f}')} wagered on {n:,} wagers "
                f"({_kept(-e)} in theory, sd {usd_text(f'{math.sqrt(v):.2f}')})"
                for w, s, n, e, v in zip(net, stake, g["n"], expected, g["variance"], strict=True)
            ],
        },
        schema=TEST_SCHEMA,
    )


def _kept(amount: float) -> str:
    return f"{'kept' if amount >= 0 else 'lost'} {usd_text(f'{abs(amount):.2f}')}"
