"""The settlement stage's shared words and money in integer cents.

The stage reads each wager's terms (odds, citations, commission, limits) from the
packs' table form (`auditor.packs.tables`), gathered by ruleset (`pack_ruleset_index`)
and by ruleset x bet (`pack_bet_row`) for every row: a lookup by position, with no hash
join over millions of wagers. Money is integer cents from the first step
(`money.cents`: a Decimal(18,2) column read through its unscaled value) and becomes
Decimal dollars again only for `impact` (`money.dollars`; ECOSYSTEM: never floats).
"""

from __future__ import annotations

import polars as pl

from auditor.codes import code, enum_code
from auditor.contract import BETS, RESULTS
from auditor.input.partition import ROUND_ROW
from auditor.money import cents, usd

BET_WORDS = {
    "banker": "Banker wager",
    "player": "Player wager",
    "tie": "Tie wager",
    "dragon_bonus_banker": "Dragon Bonus on the Banker",
    "dragon_bonus_player": "Dragon Bonus on the Player",
    "dragon7": "Dragon 7 Insurance",
    "panda8": "Panda 8 Insurance",
    "house_money": "House Money wager",
    "royal9": "Royal 9 wager",
}


WAGER_COLUMNS = ("wager_id", "round_id", ROUND_ROW, "seat", "placed_at", "award")


def wager_terms(wagers: pl.LazyFrame) -> pl.LazyFrame:
    """The wagers with bet and result as codes and money in cents."""
    return wagers.select(
        *WAGER_COLUMNS,
        enum_code("bet", BETS).alias("bet_index"),
        enum_code("result", RESULTS).cast(pl.Int8).alias("_result"),
        pl.col("call"),
        cents("amount").alias("amount_c"),
        cents("rollover").fill_null(0).alias("rollover_c"),
        cents("payout").alias("payout_c"),
        cents("commission").alias("commission_c"),
    )


def is_bet(name: str) -> pl.Expr:
    return pl.col("bet_index") == code(name, BETS)


# The logged result is the one the cards give (codes `_result`, `_due`: settlement.py).
SAME_RESULT = pl.col("_result") == pl.col("_due")


def stake_words() -> pl.Expr:
    """ "$37.50", "$25.00 + $75.00 rollover", or "$500.00, covered $300.00" """
    own = (
        pl.when(pl.col("rollover_c") > 0)
        .then(pl.format("{} + {} rollover", usd(pl.col("amount_c")), usd(pl.col("rollover_c"))))
        .otherwise(usd(pl.col("amount_c")))
    )
    return (
        pl.when(is_bet("banker") & pl.col("_covered_basis"))
        .then(pl.format("{}, covered {}", own, usd(pl.col("basis_c"))))
        .otherwise(own)
    )
