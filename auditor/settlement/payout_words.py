"""Stage 4's citations and words for the result and payout messages (PAY), added by
`payout_enrich` to the flagged rows only: the PAY checks read them as columns of the
wager frame (`findings.frames.WAGER_FRAME`)."""

from __future__ import annotations

import polars as pl

from auditor.codes import names_of
from auditor.contract import BETS, RESULTS, ROUND_KINDS
from auditor.packs.tables import PackTables
from auditor.settlement.correct import VOID, dragon_odds
from auditor.settlement.terms import BET_WORDS, is_bet

DRAGON_BONUS = is_bet("dragon_bonus_banker") | is_bet("dragon_bonus_player")


def payout_enrich(flagged: pl.LazyFrame, tables: PackTables) -> pl.LazyFrame:
    """Citations and words for the PAY messages, gathered for the flagged rows only."""
    paytable = tables.dragon_citation(pl.col("dragon_paytable_row"))
    return flagged.with_columns(
        *(
            names_of(pl.col(index), tuple(values)).alias(name)
            for name, values, index in (
                ("result", RESULTS, "_result"),
                ("_due_words", ("won", "lost", "pushed"), "_due"),
                ("due_result", RESULTS, "_due"),
                ("kind", ROUND_KINDS, "_kind"),
                ("bet", BETS, "bet_index"),
                ("ruleset", tables.ids, "pack_ruleset_index"),
                ("_bet_words", tuple(BET_WORDS[b] for b in BETS), "bet_index"),
            )
        ),
        pl.when(pl.col("_kind") == VOID)
        .then(pl.coalesce(tables.r("void_ends_shoe_citation"), tables.r("bets_citation")))
        .when(is_bet("banker") & pl.col("ez_push"))
        .then(tables.r("ez_push_citation"))
        .when(is_bet("royal9"))
        .then(pl.col("royal9_citation"))
        .otherwise(tables.rb("bet_citation"))
        .alias("_result_cite"),
        pl.when(DRAGON_BONUS)
        .then(paytable)
        .when(is_bet("royal9"))
        .then(pl.col("royal9_citation"))
        .otherwise(tables.rb("payout_citation"))
        .alias("_payout_cite"),
        pl.when(is_bet("tie"))
        .then(pl.col("tie_pays").cast(pl.Int64))
        .when(DRAGON_BONUS)
        .then(dragon_odds(tables, pl.col("dragon_paytable_row")))
        .when(is_bet("house_money"))
        .then(pl.col("due_payout_c") // pl.col("stake_c"))
        .otherwise(tables.rb("payout_odds"))
        .alias("_odds"),
        tables.r("tie_payout_citation").alias("_tie_cite"),
        tables.r("natural_drawn_citation").alias("_drawn_cite"),
    )
