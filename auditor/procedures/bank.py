"""Chemin de Fer Bank checks (PRC004-PRC008): the Banker's stake against his bid and his
preceding wager, the wagers against the Banker singly and together, and Suivi.

A Bank is a run of rounds of one shoe with the same Banker; it begins with each new shoe
(Chemin de Fer's §4(b) auctions every shoe: INDEX Ambiguity 8), where `banker_bid` is
logged, or where the Banker's seat changes. The Bank tables' wagers find their round by its
row number (a lookup, not a join) and are summed up per round; the sequential state (a
Bank's start, its preceding wager, who may call Suivi) reads the rounds in dealing order
and the previous row with `shift`, a sentinel stopping each forward fill at a Bank's (or
shoe's) start. Only the wagers that can break a wager check meet their round's state.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import BANK_ROUND_FRAME, BANK_WAGER_FRAME
from auditor.input.partition import ROUND_ROW, of_round
from auditor.money import cents, usd
from auditor.procedures.frames import (
    HELD_ROW,
    citations,
    ids,
    rulesets_with,
    suivi_keys,
)

# Marks, in a forward fill, "nobody" (no preceding wager, nobody may call Suivi) as
# distinct from null ("nothing new in this round"): neither a seat nor an amount.
SENTINEL = -1

# Over the Banker's and the participants' wagers, each with its round's Bank state.
BANK_WAGER_CHECKS = CheckSet()
# Over the rounds: the wagers against the Banker together.
BANK_ROUND_CHECKS = CheckSet()
IS_BANK = pl.col("wager_id") == pl.col("_bank_wager_id")
AGAINST = pl.col("bet") == "player"


@BANK_WAGER_CHECKS.check(
    Check(
        code="PRC004",
        name="BankStakeBelowBid",
        title="The first wager of a new Bank is below the winning bid",
        severity="medium",
        subject="the Bank's first wager at least the bid",
        rules=("procedures.bank_stake",),
        what="On the first round of a Bank (`banker_bid` logged), the Banker's wager (the "
        "`banker` row at `banker_seat`) must be at least the bid that won the Bank.",
        why="The Bank is awarded to the highest offer (§4(b)); staking less than the offer "
        "takes the Bank on a bid that was never honoured.",
        example="The Bank was won with a bid of $1,000.00 but the Banker wagered $750.00.",
        frame=BANK_WAGER_FRAME,
        reads=column_names(
            "_bank _bank_wager_id _bid bank_stake_citation bank_stake_first_at_least_bid wager_id"
        ),
    )
)
def _bank_stake_below_bid() -> Violation:
    return Violation(
        when=IS_BANK
        & pl.col("bank_stake_first_at_least_bid").fill_null(False)
        & pl.col("_bid").is_not_null()
        & (pl.col("_bank") < pl.col("_bid")),
        citation=pl.col("bank_stake_citation"),
        expected=pl.format("at least {}", usd(pl.col("_bid"))),
        logged=usd(pl.col("_bank")),
        message=pl.format(
            "the Bank's first wager is {}, below its winning bid of {}",
            usd(pl.col("_bank")),
            usd(pl.col("_bid")),
        ),
    )


@BANK_WAGER_CHECKS.check(
    Check(
        code="PRC005",
        name="BankStakeOutOfRange",
        title="A Banker's wager outside once to twice the preceding one",
        severity="medium",
        subject="the Bank's wager at least equal to, but no more than twice, the immediately "
        "preceding wager",
        rules=("procedures.bank_stake",),
        what="After its first round, each wager of the same Bank must lie between once and "
        "twice the Banker's immediately preceding wager: the amount placed in the Bank's "
        "previous round, tied rounds included (INDEX Ambiguity 2). A Bank begins with each "
        "new shoe (§4(b): the shoe is auctioned afresh; INDEX Ambiguity 8), where "
        "`banker_bid` is logged, or where the Banker's seat changes.",
        why="The stake ladder limits how fast a Bank can raise or shrink the money at risk "
        "against the table.",
        example="The Banker wagered $2,000.00 and then $5,000.00: at most $4,000.00 allowed.",
        frame=BANK_WAGER_FRAME,
        reads=column_names(
            "_bank _bank_start _bank_wager_id _prev_bank bank_stake_citation "
            "bank_stake_max_multiple bank_stake_min_multiple wager_id"
        ),
    )
)
def _bank_stake_out_of_range() -> Violation:
    low = pl.col("_prev_bank") * pl.col("bank_stake_min_multiple")
    high = pl.col("_prev_bank") * pl.col("bank_stake_max_multiple")
    return Violation(
        when=IS_BANK
        & ~pl.col("_bank_start")
        & pl.col("_prev_bank").is_not_null()
        & ((pl.col("_bank") < low) | (pl.col("_bank") > high)),
        citation=pl.col("bank_stake_citation"),
        expected=pl.format("{} to {}", usd(low), usd(high)),
        logged=usd(pl.col("_bank")),
        message=pl.format(
            "the Banker wagered {} after {} in the Bank's preceding round; {} to {} allowed",
            usd(pl.col("_bank")),
            usd(pl.col("_prev_bank")),
            usd(low),
            usd(high),
        ),
    )


@BANK_WAGER_CHECKS.check(
    Check(
        code="PRC006",
        name="WagerExceedsBank",
        title="A wager against the Banker is larger than the Banker's wager",
        severity="high",
        subject="no wager against the Banker above his wager",
        rules=("procedures.wagers_against_bank",),
        what="Each `player` wager against the Banker must not exceed the Banker's wager (the "
        "`banker` row at `banker_seat`) of the round.",
        why="The Banker covers the wagers against him from his stake; a larger wager is paid "
        "from money the Banker never put up.",
        example="The Banker wagered $500.00; a banco of $600.00 was accepted.",
        frame=BANK_WAGER_FRAME,
        reads=column_names(
            "_amount _bank bet call seat wagers_against_bank_citation "
            "wagers_against_bank_each_at_most_bank"
        ),
    )
)
def _wager_exceeds_bank() -> Violation:
    return Violation(
        when=AGAINST
        & pl.col("wagers_against_bank_each_at_most_bank").fill_null(False)
        & (pl.col("_amount") > pl.col("_bank")),
        citation=pl.col("wagers_against_bank_citation"),
        expected=pl.format("at most {}", usd(pl.col("_bank"))),
        logged=usd(pl.col("_amount")),
        message=pl.format(
            "{} wager of {} at seat {} against a Banker's wager of {}",
            pl.col("call").fill_null("a"),
            usd(pl.col("_amount")),
            pl.col("seat"),
            usd(pl.col("_bank")),
        ),
    )


@BANK_ROUND_CHECKS.check(
    Check(
        code="PRC007",
        name="BankOvercovered",
        title="Wagers against the Banker together exceed the Banker's wager",
        severity="medium",
        subject="wagers against the Banker not above his wager together, partial wagers until "
        "the Bank is covered",
        rules=("procedures.wagers_against_bank", "permitted.*.calls"),
        what="The `player` wagers of a round together must not exceed the Banker's wager. "
        "Reported on the round, and only where each wager alone is within the Bank (else "
        "PRC006 names the wager).",
        why="The Banker pays the winning wagers against him from his stake; accepting more "
        "than it leaves the excess unfunded.",
        example="Banker's wager $1,000.00; partial wagers of $600.00 and $500.00.",
        frame=BANK_ROUND_FRAME,
        reads=column_names(
            "_against_count _against_max _against_total _bank wagers_against_bank_citation "
            "wagers_against_bank_total_at_most_bank"
        ),
    )
)
def _bank_overcovered() -> Violation:
    return Violation(
        when=pl.col("wagers_against_bank_total_at_most_bank").fill_null(False)
        & (pl.col("_against_total") > pl.col("_bank"))
        & (pl.col("_against_max") <= pl.col("_bank")),
        citation=pl.col("wagers_against_bank_citation"),
        expected=pl.format("at most {}", usd(pl.col("_bank"))),
        logged=usd(pl.col("_against_total")),
        message=pl.format(
            "{} wagers against the Banker total {}; the Banker's wager is {}",
            pl.col("_against_count"),
            usd(pl.col("_against_total")),
            usd(pl.col("_bank")),
        ),
    )


@BANK_WAGER_CHECKS.check(
    Check(
        code="PRC008",
        name="SuiviNotEntitled",
        title="Suivi called by a participant who was not entitled to it",
        severity="medium",
        subject="Suivi by the participant who equalled and lost the Banker's immediately "
        "preceding wager",
        rules=("procedures.suivi",),
        what="A `suivi` call is the first option of the participant whose `banco` or `suivi` "
        "wager, equal to the Banker's whole wager, lost in the last non-tied round of the "
        "same Bank (INDEX Ambiguity 3). A call by any other seat, or when nobody qualifies "
        "(a partial wager, a win, a new Bank, a new shoe), is reported on the wager.",
        why="Suivi takes precedence over every other banco; a wrong Suivi takes the hand "
        "from the participant who was entitled to it.",
        example="Seat 2's banco lost round 12; in round 13 seat 5 called suivi.",
        frame=BANK_WAGER_FRAME,
        reads=column_names("_entitled _suivi_applies bet call seat suivi_citation"),
    )
)
def _suivi_not_entitled() -> Violation:
    entitled = pl.col("_entitled")
    return Violation(
        when=AGAINST
        & pl.col("_suivi_applies").fill_null(False)
        & (pl.col("call") == "suivi")
        & pl.col("seat").ne_missing(entitled),
        citation=pl.col("suivi_citation"),
        expected=pl.when(entitled.is_null())
        .then(pl.lit("no suivi"))
        .otherwise(pl.format("suivi at seat {}", entitled)),
        logged=pl.format("suivi at seat {}", pl.col("seat")),
        message=pl.when(entitled.is_null())
        .then(
            pl.format(
                "suivi called at seat {}; nobody may call it: no banco or suivi equal to the "
                "Bank lost the Bank's preceding decided round",
                pl.col("seat"),
            )
        )
        .otherwise(
            pl.format(
                "suivi called at seat {}; only seat {}, whose wager equalled and lost the "
                "Banker's preceding wager, may call it",
                pl.col("seat"),
                entitled,
            )
        ),
    )


# The packs' terms each Bank round carries, from `rules` (the packs' table form).
BANK_TERMS = {
    **{
        name: pl.col(name)
        for name in (
            "bank_stake_first_at_least_bid",
            "bank_stake_min_multiple",
            "bank_stake_max_multiple",
            "bank_stake_tied_rounds_count",
            "wagers_against_bank_each_at_most_bank",
            "wagers_against_bank_total_at_most_bank",
            "suivi_skip_ties",
            "suivi_new_bank_resets",
        )
    },
    "_suivi_applies": pl.col("suivi_citation").is_not_null(),
}


def bank_wagers(
    rounds: pl.DataFrame, wagers: pl.LazyFrame, rules: pl.DataFrame, bound: int
) -> pl.LazyFrame:
    """The Banker's and the participants' wagers at the Bank tables, each with its round's
    number, Banker seat and ruleset (`rounds`: the partition's rounds, numbered; `bound`:
    `partition.round_bound`)."""
    bank = rounds.filter(pl.col("ruleset").is_in(rulesets_with(rules, "bank_stake_citation")))

    def of_bank_round(column: str) -> pl.Expr:
        return of_round(bound, bank[ROUND_ROW], bank[column]).alias(column)

    return (
        wagers.filter(pl.col("bet").is_in(["banker", "player"]))
        .select(
            "wager_id",
            ROUND_ROW,
            "seat",
            "bet",
            "call",
            cents("amount").alias("_amount"),
            of_bank_round("banker_seat"),
            of_bank_round("ruleset"),
        )
        .filter(pl.col("ruleset").is_not_null())
    )


def bank_rounds(
    held: pl.DataFrame,
    in_rounds: pl.LazyFrame,
    rules: pl.DataFrame,
    bound: int,
) -> pl.LazyFrame:
    """The Bank tables' rounds that have a Banker's wager, in dealing order, each with
    that wager, the wagers against it together and the Bank's state (`held`:
    `frames.holder_rounds`, in dealing order; `in_rounds`: `bank_wagers`;
    `bound`: `partition.round_bound`)."""
    bank = (
        in_rounds.filter((pl.col("bet") == "banker") & (pl.col("seat") == pl.col("banker_seat")))
        .group_by(ROUND_ROW)
        .agg(
            pl.col("wager_id").min().alias("_bank_wager_id"),
            # The first wager by id (ids are unique): an arg_min, not a sort per round.
            pl.col("_amount").get(pl.col("wager_id").arg_min()).alias("_bank"),
        )
    )
    # Plain group-bys: one with aggregations filtered inside costs twice as much.
    against = (
        in_rounds.filter(AGAINST)
        .group_by(ROUND_ROW)
        .agg(
            pl.col("_amount").sum().alias("_against_total"),
            pl.col("_amount").max().alias("_against_max"),
            pl.len().alias("_against_count"),
        )
    )
    qualifying = pl.concat_str("ruleset", "call", separator="|").is_in(suivi_keys(rules))
    full_calls = (
        in_rounds.filter(AGAINST & qualifying)
        .join(bank.select(ROUND_ROW, "_bank"), on=ROUND_ROW, how="inner")
        .filter(pl.col("_amount") == pl.col("_bank"))
        .group_by(ROUND_ROW)
        .agg(pl.col("seat").min().alias("_full_seat"))
    )
    per_round = bank.join(against, on=ROUND_ROW, how="left").join(
        full_calls, on=ROUND_ROW, how="left"
    )
    # A Bank round missing from `held` (no shoe to put it in order) has no row there.
    in_held = of_round(bound, held[ROUND_ROW], held[HELD_ROW]).alias(HELD_ROW)
    return _with_bank_state(held, per_round.with_columns(in_held), rules)


def _with_bank_state(
    held: pl.DataFrame, per_round: pl.LazyFrame, rules: pl.DataFrame
) -> pl.LazyFrame:
    """Whether each round starts a Bank, the Bank's preceding wager, who may call Suivi.
    Sequential, so read in dealing order."""
    # Each round's row of `held` and its pack's terms are looked up, not joined: the rounds
    # stay in the order of their rows, which is the dealing order.
    row = pl.col(HELD_ROW)
    terms = rules.select("ruleset", **BANK_TERMS)
    of_held = (
        "table_id",
        "shoe_id",
        "round_id",
        "round_no",
        "ruleset",
        "banker_seat",
        "_bid",
        "kind",
    )
    ordered = (
        per_round.filter(row.is_not_null())
        .sort(HELD_ROW)
        .with_columns(pl.lit(held[c]).gather(row).alias(c) for c in (*of_held, "outcome"))
        # The ruleset's name is looked up once, for its row among the terms: each term is
        # then a gather, not a lookup of the name of every round.
        .with_columns(
            pl.col("ruleset")
            .replace_strict(
                terms["ruleset"], pl.Series(range(terms.height), dtype=pl.UInt32), default=None
            )
            .alias("_terms_row")
        )
        .with_columns(pl.lit(terms[p]).gather(pl.col("_terms_row")).alias(p) for p in BANK_TERMS)
    )
    # A new shoe auctions a new Bank (Chemin de Fer's §4(b), INDEX Ambiguity 8): neither
    # the stake sequence nor the right to call Suivi carries over from the shoe before.
    same_shoe = (pl.col("shoe_id").shift(1) == pl.col("shoe_id")).fill_null(False)
    bank_start = (
        ~same_shoe
        | pl.col("_bid").is_not_null()
        | pl.col("banker_seat").ne_missing(pl.col("banker_seat").shift(1))
    )
    # The previous wager of the same Bank: a sentinel at each Bank's start stops the
    # forward fill from reaching into the Bank before it.
    counted = pl.when(pl.col("bank_stake_tied_rounds_count") | (pl.col("outcome") != "tie")).then(
        pl.col("_bank")
    )
    prev_bank = (
        pl.when(pl.col("_bank_start"))
        .then(pl.lit(SENTINEL, dtype=pl.Int64))
        .otherwise(counted.shift(1))
        .forward_fill()
    )
    decided = (pl.col("kind") == "regular") & (
        ~pl.col("suivi_skip_ties").fill_null(True) | (pl.col("outcome") != "tie")
    )
    qualified = pl.when(decided).then(
        pl.when(pl.col("outcome") == "banker")
        .then(pl.col("_full_seat").cast(pl.Int64))
        .otherwise(None)
        .fill_null(SENTINEL)
    )
    reset = ~pl.col("_same_shoe") | (pl.col("_bank_start") & pl.col("suivi_new_bank_resets"))
    entitled = (
        pl.when(reset)
        .then(pl.lit(SENTINEL, dtype=pl.Int64))
        .otherwise(qualified.shift(1))
        .forward_fill()
    )
    return (
        ordered.with_columns(same_shoe.alias("_same_shoe"), bank_start.alias("_bank_start"))
        .with_columns(prev_bank.alias("_prev_bank"), entitled.alias("_entitled"))
        .with_columns(
            pl.when(pl.col(c) != SENTINEL).then(pl.col(c)).alias(c)
            for c in ("_prev_bank", "_entitled")
        )
        .select(
            "table_id",
            "shoe_id",
            "round_id",
            ROUND_ROW,
            "round_no",
            "kind",
            "ruleset",
            "banker_seat",
            "_bid",
            "_bank",
            "_bank_wager_id",
            "_bank_start",
            "_prev_bank",
            "_entitled",
            "_against_total",
            "_against_max",
            "_against_count",
            *BANK_TERMS,
        )
    )


# The wager columns the wager checks read; a Banker's wager needs no call.
_WAGER_COLUMNS = {"wager_id": pl.String, "seat": pl.Int8, "bet": pl.String, "call": pl.String}


def _checked_wagers(in_rounds: pl.LazyFrame, per_round: pl.DataFrame) -> pl.LazyFrame:
    """The wagers the wager checks can flag, each with its round's Bank state: every
    round's Banker's wager (PRC004, PRC005), taken from the round itself, and the wagers
    against the Banker in a round whose largest one exceeds the Bank (PRC006) or that
    call Suivi (PRC008). The other wagers against the Banker, most of them, break
    none of these checks and are never joined to their round: a new wager check must
    widen this selection to the wagers it can flag."""
    state = per_round.lazy()
    banker = state.with_columns(
        pl.col("_bank_wager_id").alias("wager_id"),
        pl.col("banker_seat").cast(_WAGER_COLUMNS["seat"]).alias("seat"),
        pl.lit("banker").alias("bet"),
        pl.lit(None, dtype=pl.String).alias("call"),
        pl.col("_bank").alias("_amount"),
    )
    over_bank = per_round.filter(pl.col("_against_max") > pl.col("_bank")).get_column(ROUND_ROW)
    against = (
        in_rounds.filter(AGAINST)
        .filter((pl.col("call") == "suivi") | pl.col(ROUND_ROW).is_in(over_bank.implode()))
        .select(ROUND_ROW, *_WAGER_COLUMNS, "_amount")
        .join(state, on=ROUND_ROW, how="inner")
    )
    return pl.concat([banker, against], how="diagonal_relaxed")


def bank_findings(
    in_rounds: pl.LazyFrame, per_round: pl.DataFrame, rules: pl.DataFrame
) -> list[pl.LazyFrame]:
    """Findings about the Bank's wagers (wager_id set) and overcovered rounds, from
    `bank_wagers` and the collected `bank_rounds`."""
    return [
        BANK_WAGER_CHECKS.emit(
            _checked_wagers(in_rounds, per_round),
            ids(pl.col("round_id"), pl.col("wager_id")),
            citations(
                rules, "bank_stake_citation", "wagers_against_bank_citation", "suivi_citation"
            ),
        ),
        BANK_ROUND_CHECKS.emit(
            per_round.lazy(),
            ids(pl.col("round_id")),
            citations(rules, "wagers_against_bank_citation"),
        ),
    ]
