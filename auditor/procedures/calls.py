"""Chemin de Fer calls, the Banker's own wager and the Bank's bid (PRC013-PRC015).

A `suivi` or `banco` call wagers the whole Bank (§6(b), §6(c)): a call for less is
reported on the wager (a call for more is already PRC006, a single wager above the
Bank). Every regular round of a Bank has exactly one `banker` row, at `banker_seat`
(§5(a)): the Bank checks read that wager, and a round with none, several, or one at
another seat is reported on the round instead of taking the first by id silently.

Each Bank's first regular round logs the bid that won it (§4(b)): a Bank begins with each
shoe's auction (INDEX Ambiguity 8) and wherever the Banker's seat changes.

Partial calls beside a full call (§6(d)) and a second full call (§6(c)) leave the
wagers against the Banker above the Bank together, which PRC007 reports on the round.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import (
    BANK_ROUND_FRAME,
    BANKER_WAGER_ROUND_FRAME,
    WHOLE_BANK_CALL_FRAME,
)
from auditor.findings.words import counted
from auditor.input.partition import ROUND_ROW
from auditor.money import usd
from auditor.packs.tables import PackTables
from auditor.procedures.frames import ids, rulesets_with

CALL_CHECKS = CheckSet()
BANKER_WAGER_CHECKS = CheckSet()
BID_CHECKS = CheckSet()


def whole_bank_calls(tables: PackTables) -> pl.DataFrame:
    """(ruleset, call) for each call that must wager the whole Bank, with its citation."""
    return tables.calls.filter(pl.col("call_amount") == "equal_to_bank").select(
        "ruleset", "call", "call_citation"
    )


def banker_wager_citations(tables: PackTables) -> pl.DataFrame:
    """The citation of the Banker's own wager, per ruleset whose `banker` bet has one."""
    return tables.bets.filter((pl.col("bet") == "banker") & pl.col("bet_in_ruleset")).select(
        "ruleset", pl.col("bet_citation").alias("banker_citation")
    )


@CALL_CHECKS.check(
    Check(
        code="PRC013",
        name="CallBelowTheBank",
        title="A Suivi or Banco call for less than the Bank",
        severity="medium",
        subject="Suivi and Banco: a wager equal to the Banker's",
        rules=("permitted.*.calls",),
        what="A wager against the Banker with `call` `suivi` or `banco` must equal the "
        "Banker's wager of the round. A call above it is PRC006; one below it is a partial "
        "wager logged as a full call, reported here on the wager.",
        why="A full call takes precedence over every partial wager and gives the caller the "
        "Player's Hand (§7(c)); logged for less, it takes both for less than the Bank.",
        example="Banker's wager $1,000.00; seat 4 called banco with $600.00.",
        frame=WHOLE_BANK_CALL_FRAME,
        reads=column_names("_amount _bank call call_citation seat"),
    )
)
def _call_below_the_bank() -> Violation:
    return Violation(
        when=pl.col("_amount") < pl.col("_bank"),
        citation=pl.col("call_citation"),
        expected=pl.format("{} of {}", pl.col("call"), usd(pl.col("_bank"))),
        logged=pl.format("{} of {}", pl.col("call"), usd(pl.col("_amount"))),
        message=pl.format(
            "{} at seat {} wagered {} against a Banker's wager of {}",
            pl.col("call"),
            pl.col("seat"),
            usd(pl.col("_amount")),
            usd(pl.col("_bank")),
        ),
    )


def call_findings(
    in_rounds: pl.LazyFrame, per_round: pl.DataFrame, tables: PackTables
) -> pl.LazyFrame:
    """Findings about full calls (`wager_id` set), from `bank.bank_wagers` and the
    collected `bank.bank_rounds`."""
    calls = in_rounds.join(whole_bank_calls(tables).lazy(), on=["ruleset", "call"], how="inner")
    bank = per_round.lazy().select(ROUND_ROW, "table_id", "shoe_id", "round_id", "_bank")
    return CALL_CHECKS.emit(
        calls.join(bank, on=ROUND_ROW, how="inner"), ids(pl.col("round_id"), pl.col("wager_id"))
    )


@BANKER_WAGER_CHECKS.check(
    Check(
        code="PRC014",
        name="BankerWagerNotOne",
        title="A Chemin de Fer round without exactly one Banker's wager at the Banker's seat",
        severity="high",
        subject="the Banker places a wager on the Banker's Hand",
        rules=("procedures.bank_stake",),
        what="Each regular round of a Bank has exactly one `banker` row, and it stands at the "
        "round's `banker_seat`. A round with none, several, or one at another seat is "
        "reported on the round: its stake, and every check of the Bank, would otherwise "
        "rest on a guess.",
        why="The Banker's wager is the Bank: what the wagers against it may cover, what it "
        "wins and the commission on it. Without exactly one, the round's money cannot be "
        "accounted for.",
        example="Round 8 of shoe S3 logged two Banker wagers, at seats 2 and 5; the Banker "
        "sat at seat 2.",
        frame=BANKER_WAGER_ROUND_FRAME,
        reads=column_names("_at_seat _banker_rows banker_citation banker_seat round_no shoe_id"),
    )
)
def _banker_wager_not_one() -> Violation:
    banker_wagers = counted(pl.col("_banker_rows"), "Banker wager", "Banker wagers")
    return Violation(
        when=(pl.col("_banker_rows") != 1) | (pl.col("_at_seat") != 1),
        citation=pl.col("banker_citation"),
        expected=pl.format("one Banker wager at seat {}", pl.col("banker_seat")),
        logged=pl.format(
            "{}, {} at seat {}",
            banker_wagers,
            pl.col("_at_seat"),
            pl.col("banker_seat"),
        ),
        message=pl.format(
            "round {} of shoe {}: {}, {} at the Banker's seat {}",
            pl.col("round_no"),
            pl.col("shoe_id"),
            banker_wagers,
            pl.col("_at_seat"),
            pl.col("banker_seat"),
        ),
    )


def banker_wager_findings(
    held: pl.DataFrame,
    in_rounds: pl.LazyFrame,
    rules: pl.DataFrame,
    tables: PackTables,
) -> pl.LazyFrame:
    """Findings about the Banker's own wager (`round_id` set), over the Bank tables'
    regular rounds (`held`: `frames.holder_rounds`) and their wagers (`bank.bank_wagers`)."""
    bankers = (
        in_rounds.filter(pl.col("bet") == "banker")
        .group_by(ROUND_ROW)
        .agg(
            pl.len().cast(pl.Int64).alias("_banker_rows"),
            (pl.col("seat") == pl.col("banker_seat")).sum().cast(pl.Int64).alias("_at_seat"),
        )
    )
    rounds = (
        held.lazy()
        .filter(
            (pl.col("kind") == "regular")
            & pl.col("ruleset").is_in(rulesets_with(rules, "bank_stake_citation"))
        )
        .join(bankers, on=ROUND_ROW, how="left")
        .with_columns(pl.col("_banker_rows", "_at_seat").fill_null(0))
        .join(banker_wager_citations(tables).lazy(), on="ruleset", how="left")
    )
    return BANKER_WAGER_CHECKS.emit(rounds, ids(pl.col("round_id")))


@BID_CHECKS.check(
    Check(
        code="PRC015",
        name="NewBankWithoutBid",
        title="A new Bank's first round logs no winning bid",
        severity="medium",
        subject="the highest offer makes the Banker",
        rules=("procedures.bank_bid_logged",),
        what="The first regular round of each Bank carries `banker_bid`: the first round of "
        "every shoe (each shoe is auctioned: INDEX Ambiguity 8) and every round whose "
        "`banker_seat` differs from the previous regular round's in the shoe. Without it the "
        "Banker's first stake (§5(b), PRC004) cannot be judged.",
        why="The bid is what the Bank was won with and what its first stake must reach; a "
        "Bank taken without a recorded bid escapes the stake rules.",
        example="Round 1 of shoe S7: Banker at seat 3, no banker_bid logged.",
        frame=BANK_ROUND_FRAME,
        reads=column_names(
            "_bank_start _bid bank_bid_logged_citation banker_seat kind round_no shoe_id"
        ),
    )
)
def _new_bank_without_bid() -> Violation:
    return Violation(
        when=pl.col("bank_bid_logged_citation").is_not_null()
        & (pl.col("kind") == "regular")
        & pl.col("_bank_start")
        & pl.col("_bid").is_null(),
        citation=pl.col("bank_bid_logged_citation"),
        expected=pl.lit("the winning bid"),
        logged=pl.lit("no banker_bid"),
        message=pl.format(
            "round {} of shoe {} starts a Bank at seat {} without its winning bid",
            pl.col("round_no"),
            pl.col("shoe_id"),
            pl.col("banker_seat"),
        ),
    )


def bid_findings(per_round: pl.DataFrame, rules: pl.DataFrame) -> pl.LazyFrame:
    """Findings about the Banks' bids (`round_id` set), over `bank.bank_rounds`."""
    frame = per_round.lazy().join(
        rules.lazy().select("ruleset", "bank_bid_logged_citation"), on="ruleset", how="left"
    )
    return BID_CHECKS.emit(frame, ids(pl.col("round_id")))
