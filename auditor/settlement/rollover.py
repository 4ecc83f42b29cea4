"""Stage 4, House Money rollovers (WAG008-WAG010): a rollover above or short of the
seat's authorised share of its House Money winnings, or with nothing it may come from.

Evaluated over the rollover frame (`rollovers`), whose citations and words are
`permit.permit_enrich`'s, as the other WAG checks'. Like them, these findings carry no
impact.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import ROLLOVER_FRAME
from auditor.input.partition import ROUND_ROW
from auditor.money import usd
from auditor.packs.tables import PackTables
from auditor.settlement.correct import WIN
from auditor.settlement.permit import wager_words
from auditor.settlement.terms import is_bet

ROLLOVER_CHECKS = CheckSet()
rollover_check = ROLLOVER_CHECKS.check


def rollovers(settled: pl.LazyFrame, tables: PackTables) -> pl.LazyFrame:
    """The rollover frame (`correct.FRAMES`: House Money wagers and the wagers carrying
    a rollover) with each seat's authorised House Money share: per winning
    House Money wager, floor(payout x `house_money_rollover_percent` / 100) to the
    cent, the payout due by the cards, summed over the seat's House Money wagers of the
    round; against it, the rollover the seat's wagers of the pack's rollover bets
    (Banker, Player) carry. A rollover on any other wager is WAG010 on that wager alone
    and stays out of the seat's total (INDEX Ambiguity 29)."""
    # The round's number, not its string id: the same groups, cheaper to hash.
    seat = [ROUND_ROW, "seat"]
    won = is_bet("house_money") & (pl.col("_due") == WIN)
    share = pl.col("due_payout_c") * pl.col("house_money_rollover_percent").cast(pl.Int64) // 100
    # One window yielding a struct: four windows over the same key cost three times as
    # much under the streaming engine (measured).
    per_seat = pl.struct(
        pl.when(won).then(share).otherwise(0).sum().alias("share_c"),
        pl.when(won).then(pl.col("due_payout_c")).sum().alias("house_money_payout_c"),
        won.any().alias("_won"),
        pl.when(pl.col("_rollover_target"))
        .then(pl.col("rollover_c"))
        .otherwise(0)
        .sum()
        .alias("seat_rollover_c"),
    )
    return (
        settled.with_columns(tables.rb("house_money_rollover_target").alias("_rollover_target"))
        .with_columns(per_seat.over(seat).alias("_per_seat"))
        .unnest("_per_seat")
    )


# ---- House Money rollover ------------------------------------------------------------


def _rollover_unauthorised() -> pl.Expr:
    """A rollover with nothing it may come from: not onto a Banker or Player wager, in a
    ruleset without rollover, or with no winning House Money wager at the seat."""
    return (pl.col("rollover_c") > 0) & (
        ~pl.col("_rollover_target") | ~pl.col("_won") | (pl.col("share_c") == 0)
    )


@rollover_check(
    Check(
        code="WAG008",
        name="RolloverExceedsShare",
        title="House Money rollover above the authorised share",
        severity="high",
        subject="the House Money rollover",
        rules=("procedures.house_money_rollover",),
        what="The rollover on the seat's Banker or Player wager is more than the authorised "
        "share of its winning House Money payout: floor(payout x "
        "`house_money_rollover_percent` / 100) to the cent (INDEX Ambiguity 20). The "
        "wager is still settled, and checked, on amount + rollover.",
        why="Only the payout, or the share the Rules Submission authorises, may ride on the "
        "hand; more is house money added to a live wager.",
        example="Player wager of $25.00 at seat 3 carries a $75.00 rollover (the seat's "
        "total $75.00); the House Money wager won $75.00 and the table authorises "
        "50%: $37.50.",
        frame=ROLLOVER_FRAME,
        reads=column_names(
            "_bet_words _rollover_cite _rollover_target _won amount_c house_money_payout_c "
            "house_money_rollover_percent rollover_c seat seat_rollover_c share_c"
        ),
    )
)
def _rollover_exceeds_share() -> Violation:
    return _rollover_violation(pl.col("seat_rollover_c") > pl.col("share_c"))


@rollover_check(
    Check(
        code="WAG009",
        name="RolloverShortOfShare",
        title="House Money rollover below the authorised share",
        severity="low",
        subject="the House Money rollover",
        rules=("procedures.house_money_rollover", "payouts.house_money"),
        what="The rollover is more than nothing but less than the authorised share of the "
        'winning House Money payout. The text lets the dealer place "all or a portion '
        'thereof, as authorized", so this is reported at low severity: a rollover is 0 '
        "or exactly the share (INDEX Ambiguity 20).",
        why="A partial rollover that is not the authorised portion means the payout was "
        "split in a way the Rules Submission does not describe.",
        example="Banker wager of $50.00 at seat 1 carries a $20.00 rollover (the seat's "
        "total $20.00); the House Money wager won $30.00 and the table authorises "
        "100%: $30.00.",
        frame=ROLLOVER_FRAME,
        reads=column_names(
            "_bet_words _rollover_cite _rollover_target _won amount_c house_money_payout_c "
            "house_money_rollover_percent rollover_c seat seat_rollover_c share_c"
        ),
    )
)
def _rollover_short_of_share() -> Violation:
    return _rollover_violation(
        (pl.col("seat_rollover_c") > 0) & (pl.col("seat_rollover_c") < pl.col("share_c"))
    )


def _rollover_violation(when: pl.Expr) -> Violation:
    return Violation(
        when=(pl.col("rollover_c") > 0) & ~_rollover_unauthorised() & when,
        citation=pl.col("_rollover_cite"),
        expected=usd(pl.col("share_c")),
        logged=usd(pl.col("seat_rollover_c")),
        message=pl.format(
            "{} carries a {} rollover (the seat's total {}); the House Money wager won {} and "
            "the table authorises {}%: {}",
            wager_words(),
            usd(pl.col("rollover_c")),
            usd(pl.col("seat_rollover_c")),
            usd(pl.col("house_money_payout_c")),
            pl.col("house_money_rollover_percent"),
            usd(pl.col("share_c")),
        ),
    )


@rollover_check(
    Check(
        code="WAG010",
        name="RolloverWithoutHouseMoneyWin",
        title="Rollover with no winning House Money wager to come from",
        severity="high",
        subject="the House Money rollover; elsewhere the permissible wagers",
        rules=("procedures.house_money_rollover", "bets.cite"),
        what="A wager carries a `rollover` although it is not a Banker or Player wager, "
        "the ruleset has no House Money rollover (Mini Baccarat, Chemin de Fer), or no House "
        "Money wager at the same seat won in the round by the cards. A rollover on a side "
        "wager is this one finding, on that wager: it stays out of the seat's total, so "
        "the seat's Banker or Player wager is not flagged for it (INDEX Ambiguity 29). The "
        "wager is still settled on amount + rollover (a Chemin de Fer Bank too: "
        "Ambiguity 30).",
        why="A rollover is a House Money payout riding on the hand; without a winning "
        "House Money wager it is an unexplained addition to a live wager.",
        example="Banker wager of $50.00 at seat 1 carries a $30.00 rollover; no House Money "
        "wager at seat 1 won in the round.",
        frame=ROLLOVER_FRAME,
        reads=column_names(
            "_bet_words _rollover_cite _rollover_onto _rollover_target _won amount_c rollover_c "
            "ruleset seat share_c"
        ),
    )
)
def _rollover_without_house_money_win() -> Violation:
    reason = (
        pl.when(pl.col("_rollover_onto").is_null())
        .then(pl.format("{} has no House Money rollover", pl.col("ruleset")))
        .when(~pl.col("_rollover_target"))
        .then(pl.format("a rollover rides only on a {} wager", pl.col("_rollover_onto")))
        .otherwise(pl.format("no House Money wager at seat {} won in the round", "seat"))
    )
    return Violation(
        when=_rollover_unauthorised(),
        citation=pl.col("_rollover_cite"),
        expected=pl.lit("no rollover"),
        logged=usd(pl.col("rollover_c")),
        message=pl.format(
            "{} carries a {} rollover; {}", wager_words(), usd(pl.col("rollover_c")), reason
        ),
    )
