"""Stage 4, commission: the COM checks over the settled wagers (see `wagers`).

The commission due on a winning wager is `commission_percent` of the amount won (a
Chemin de Fer Bank: the covered amount), rounded up to the next multiple of 25 cents
(20 cents at 4%) where `commission_rounding`, else half up to the cent, per wager
(INDEX Ambiguity 19); none at an EZ table, none on a bet outside the pack's commission
bets (`correct._due_commission`). A COM finding's impact is `due commission -
commission`: with the payout finding, the wager's error counted once (`wagers`).
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import WAGER_FRAME
from auditor.money import dollars, usd
from auditor.packs.tables import PackTables
from auditor.settlement.correct import WIN
from auditor.settlement.terms import SAME_RESULT, stake_words

COMMISSION_CHECKS = CheckSet()
commission_check = COMMISSION_CHECKS.check


def commission_enrich(flagged: pl.LazyFrame, tables: PackTables) -> pl.LazyFrame:
    """Citations and reasons for the COM messages, for the flagged rows only."""
    ez_free = (
        pl.col("ez_baccarat")
        & tables.r("commission_none_at_ez_value")
        & tables.rb("commission_bets_listed")
    )
    exempt = tables.rb("commission_exempt_citation")
    won = pl.col("_due") == WIN
    return flagged.with_columns(
        pl.when(pl.col("commission_rounding"))
        .then(tables.r("commission_rounding_citation"))
        .otherwise(tables.r("commission_percents_citation"))
        .alias("_commission_cite"),
        pl.when(won & exempt.is_not_null())
        .then(exempt)
        .when(won & ez_free)
        .then(tables.r("commission_none_at_ez_citation"))
        .otherwise(tables.r("commission_bets_citation"))
        .alias("_no_commission_cite"),
        pl.when(~won)
        .then(pl.lit("a wager that does not win owes no commission"))
        .when(exempt.is_not_null())
        .then(pl.lit("the rules exempt it from commission"))
        .when(ez_free)
        .then(pl.lit("an EZ Baccarat table collects no commission"))
        .otherwise(pl.lit("only a Banker wager pays commission"))
        .alias("_no_commission_reason"),
    )


COMMISSION_DUE = SAME_RESULT & (pl.col("due_commission_c") > 0)


def _commission_words() -> pl.Expr:
    """ "5% of $37.50 rounds up to $2.00" / "5% of $10.10, half up to the cent, is $0.51" """
    percent, won, due = (
        pl.col("percent_in_force"),
        usd(pl.col("due_payout_c")),
        usd(pl.col("due_commission_c")),
    )
    rounded = (
        pl.when(pl.col("commission_rounding"))
        .then(pl.format("{}% of {} rounds up to {}", percent, won, due))
        .otherwise(pl.format("{}% of {}, half up to the cent, is {}", percent, won, due))
    )
    table = pl.col("commission_percent").cast(pl.Int64)
    return pl.concat_str(
        rounded,
        pl.when(table != percent)
        .then(pl.format(" (the table's {}% is not permitted)", table))
        .otherwise(pl.lit("")),
    )


def _commission_violation(when: pl.Expr, logged_words: pl.Expr) -> Violation:
    return Violation(
        when=when,
        citation=pl.col("_commission_cite"),
        expected=usd(pl.col("due_commission_c")),
        logged=usd(pl.col("commission_c")),
        impact=dollars(pl.col("due_commission_c") - pl.col("commission_c")),
        message=pl.format(
            "{} of {} won; commission {}, {}",
            pl.col("_bet_words"),
            stake_words(),
            _commission_words(),
            logged_words,
        ),
    )


@commission_check(
    Check(
        code="COM001",
        name="CommissionNotCharged",
        title="Commission due on a winning wager not charged",
        severity="high",
        subject="the vigorish",
        rules=("commission.percents", "commission.rounding", "commission.bets"),
        what="A winning Banker wager at a table that charges commission (not EZ) was "
        "logged with no commission. A Chemin de Fer Bank owes it on the covered amount won.",
        why="Uncharged vigorish is lost house revenue; at a marker table it also leaves "
        "nothing to collect.",
        example="Banker wager of $37.50 won; commission 5% of $37.50 rounds up to $2.00, "
        "none was charged. Impact $2.00 (the patron kept $2.00 owed).",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _bet_words _commission_cite _covered_basis _due _result amount_c basis_c "
            "commission_c commission_percent commission_rounding due_commission_c due_payout_c "
            "percent_in_force rollover_c"
        ),
    )
)
def _commission_not_charged() -> Violation:
    return _commission_violation(
        COMMISSION_DUE & (pl.col("commission_c") == 0), pl.lit("none was charged")
    )


@commission_check(
    Check(
        code="COM002",
        name="CommissionMiscalculated",
        title="Commission charged at a wrong amount or rounding",
        severity="medium",
        subject="the vigorish and its rounding",
        rules=("commission.rounding",),
        what="The commission on a winning Banker wager is not `commission_percent` of the "
        "amount won rounded up to the next multiple of 25 cents (20 cents at 4%) where "
        "`commission_rounding`, or half up to the cent where not (per wager: INDEX "
        "Ambiguity 19). A Chemin de Fer Bank pays it on the covered amount only; a table "
        "percent the ruleset does not allow is judged at the nearest one it allows.",
        why="Systematic misrounding, even by cents, adds up over thousands of hands and "
        "shows a misconfigured table system.",
        example="Banker wager of $37.50 won; commission 5% of $37.50 rounds up to $2.00, "
        "logged $1.87. Impact $0.13.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _bet_words _commission_cite _covered_basis _due _result amount_c basis_c "
            "commission_c commission_percent commission_rounding due_commission_c due_payout_c "
            "percent_in_force rollover_c"
        ),
    )
)
def _commission_miscalculated() -> Violation:
    return _commission_violation(
        COMMISSION_DUE
        & (pl.col("commission_c") > 0)
        & (pl.col("commission_c") != pl.col("due_commission_c")),
        pl.format("logged {}", usd(pl.col("commission_c"))),
    )


@commission_check(
    Check(
        code="COM003",
        name="CommissionNotDue",
        title="Commission charged where none is due",
        severity="high",
        subject="the vigorish",
        rules=("commission.bets", "commission.exempt"),
        what="A commission was logged on a wager that owes none: any wager at an EZ "
        "table, a Player, Tie or side wager (Dragon Bonus expressly), a wager against the "
        "Chemin de Fer Banker, or a wager that lost or pushed.",
        why="Vigorish taken where the rules charge none is money taken from the patron.",
        example="Player wager of $10.10 won; only a Banker wager pays commission, yet $0.50 "
        "was charged. Impact -$0.50.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _bet_words _covered_basis _due _due_words _no_commission_cite "
            "_no_commission_reason _result amount_c basis_c commission_c due_commission_c "
            "rollover_c"
        ),
    )
)
def _commission_not_due() -> Violation:
    return Violation(
        when=SAME_RESULT & (pl.col("due_commission_c") == 0) & (pl.col("commission_c") > 0),
        citation=pl.col("_no_commission_cite"),
        expected=pl.lit("$0.00"),
        logged=usd(pl.col("commission_c")),
        impact=dollars(-pl.col("commission_c")),
        message=pl.format(
            "{} of {} {}; {}, yet {} was charged",
            pl.col("_bet_words"),
            stake_words(),
            pl.col("_due_words"),
            pl.col("_no_commission_reason"),
            usd(pl.col("commission_c")),
        ),
    )
