"""Stage 5, procedures: shoe checks (SHO, in `shoe_checks`) and table procedures (PRC):
the last hand after the cover card, void rounds, curator and Bank passing, the Chemin de
Fer Bank's stakes, wagers against it and Suivi, and marker commission.

Each procedure check is a query over a whole frame; nothing loops over shoes or rounds.
Sequential rules (a pass after a loss, a stake against the previous one, who may call
Suivi) sort the rounds of each table into dealing order once and read the previous row
with `shift`, guarded by "same table" (and "same Bank"). The pack of each round's
ruleset is joined as a small table: a ruleset without the procedure has nulls there,
and the checks apply where the pack gives a citation.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.checks import Check
from auditor.findings import FINDINGS_SCHEMA, NO_ID, SORT_KEY, CheckSet, Violation
from auditor.rulepack import SEAT_COLUMNS, RulePack
from auditor.shoe_checks import shoe_findings, shoe_rounds

# The words a message uses for the holder of the shoe, by the pack's `deals.by`.
HOLDER_WORDS = {"curator": "the curator", "banker": "the Banker", "dealer": "the dealer"}
NONE_SEAT = -1  # "nobody may call Suivi", distinct from null ("not decided in this round")

_RULES_SCHEMA = {
    "ruleset": pl.String(),
    "holder": pl.String(),
    "hands_after": pl.Int32(),
    "last_hand_citation": pl.String(),
    "void_citation": pl.String(),
    "pass_seat_column": pl.String(),
    "pass_citation": pl.String(),
    "stake_at_least_bid": pl.Boolean(),
    "stake_min_multiple": pl.Int64(),
    "stake_max_multiple": pl.Int64(),
    "stake_ties_count": pl.Boolean(),
    "stake_citation": pl.String(),
    "against_each": pl.Boolean(),
    "against_total": pl.Boolean(),
    "against_citation": pl.String(),
    "suivi_calls": pl.List(pl.String()),
    "suivi_skip_ties": pl.Boolean(),
    "suivi_resets": pl.Boolean(),
    "suivi_citation": pl.String(),
    "marker_citation": pl.String(),
}


def procedure_rules(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """One row per ruleset: the procedures of its pack, null where it has none."""
    rows = []
    for pack in packs.values():
        deals = pack.procedure("deals")
        last = pack.procedure("last_hand_after_cover")
        void = pack.procedure("void_ends_shoe")
        passing = pack.procedure("pass_on_banker_loss")
        stake = pack.procedure("bank_stake")
        against = pack.procedure("wagers_against_bank")
        suivi = pack.procedure("suivi")
        marker = pack.procedure("marker_collected_before_next_shoe")
        last_applies = last is not None and last["value"]
        rows.append(
            {
                "ruleset": pack.ruleset,
                "holder": HOLDER_WORDS.get(deals["by"]) if deals else None,
                "hands_after": last["hands_after"] if last_applies else None,
                "last_hand_citation": pack.cite(last.cite) if last_applies else None,
                "void_citation": pack.cite(void.cite) if void and void["value"] else None,
                "pass_seat_column": passing["seat_column"] if passing else None,
                "pass_citation": pack.cite(passing.cite) if passing else None,
                "stake_at_least_bid": stake["first_at_least_bid"] if stake else None,
                "stake_min_multiple": stake["min_multiple"] if stake else None,
                "stake_max_multiple": stake["max_multiple"] if stake else None,
                "stake_ties_count": stake["tied_rounds_count"] if stake else None,
                "stake_citation": pack.cite(stake.cite) if stake else None,
                "against_each": against["each_at_most_bank"] if against else None,
                "against_total": against["total_at_most_bank"] if against else None,
                "against_citation": pack.cite(against.cite) if against else None,
                "suivi_calls": list(suivi["qualifying_calls"]) if suivi else None,
                "suivi_skip_ties": suivi["skip_ties"] if suivi else None,
                "suivi_resets": suivi["new_bank_resets"] if suivi else None,
                "suivi_citation": pack.cite(suivi.cite) if suivi else None,
                "marker_citation": pack.cite(marker.cite) if marker and marker["value"] else None,
            }
        )
    return pl.DataFrame(rows, schema=_RULES_SCHEMA)


def counted_hand_keys(packs: Mapping[str, RulePack]) -> list[str]:
    """ "ruleset|kind" of the rounds that count as hands after the cover card (Ambiguity 10)."""
    keys = []
    for pack in packs.values():
        last = pack.procedure("last_hand_after_cover")
        if last is not None and last["value"]:
            keys += [f"{pack.ruleset}|{kind}" for kind in last["counted_kinds"]]
    return sorted(keys)


def _rulesets_with(rules: pl.DataFrame, column: str) -> list[str]:
    return sorted(rules.filter(pl.col(column).is_not_null())["ruleset"].to_list())


def cents(column: str) -> pl.Expr:
    """Money (Decimal dollars) as exact integer cents."""
    return (pl.col(column) * 100).cast(pl.Int64)


def money(cents_expr: pl.Expr) -> pl.Expr:
    """Integer cents as Decimal(18,2) dollars, exactly."""
    return cents_expr.cast(pl.Decimal(18, 2)) / 100


def usd(cents_expr: pl.Expr) -> pl.Expr:
    """Integer cents as "$1234.50" for messages."""
    whole = (cents_expr // 100).cast(pl.String)
    part = (cents_expr % 100).cast(pl.String).str.zfill(2)
    return pl.format("${}.{}", whole, part)


def _ids(round_id: pl.Expr = NO_ID, wager_id: pl.Expr = NO_ID) -> dict[str, pl.Expr]:
    return {
        "table_id": pl.col("table_id"),
        "shoe_id": pl.col("shoe_id"),
        "round_id": round_id,
        "wager_id": wager_id,
    }


# ---- last hand and void rounds (from the rounds folded per shoe) -------------------------

LAST_HAND_CHECKS = CheckSet()
VOID_CHECKS = CheckSet()


def _ordinal(n: pl.Expr) -> pl.Expr:
    suffix = (
        pl.when(((n % 100) >= 11) & ((n % 100) <= 13))
        .then(pl.lit("th"))
        .when(n % 10 == 1)
        .then(pl.lit("st"))
        .when(n % 10 == 2)
        .then(pl.lit("nd"))
        .when(n % 10 == 3)
        .then(pl.lit("rd"))
        .otherwise(pl.lit("th"))
    )
    return pl.concat_str(n.cast(pl.String), suffix)


@LAST_HAND_CHECKS.check(
    Check(
        code="PRC001",
        name="HandDealtAfterLastHand",
        title="More than one hand dealt after the round in which the cover card appeared",
        severity="medium",
        citation="the last hand (ma-baccarat §10(d), ma-midi-baccarat §9(d), "
        "md-mini-baccarat .09D(3)); not at ma-chemin-de-fer (INDEX Ambiguity 5)",
        what="After the round in which the cover card appeared (the first round with "
        '`cover_card_drawn`), the hand is completed, "last hand" is announced and one more '
        "hand is dealt; then the shoe ends. Hands are the round kinds the pack counts: "
        "`regular`, and `free` at midi; `simulated` rounds only dispose of cards (INDEX "
        "Ambiguity 10). The first hand beyond the one allowed is reported, with the count.",
        why="Dealing on into the cards behind the cover card lets the end of the shoe be "
        "played by someone who has counted it down.",
        example="The cover card came out in round 56; rounds 57 and 58 were both dealt.",
    )
)
def _hand_after_last_hand() -> Violation:
    dealt = pl.col("after_cover_nos").list.len()
    return Violation(
        when=pl.col("last_hand_citation").is_not_null() & (dealt > pl.col("hands_after")),
        citation=pl.col("last_hand_citation"),
        expected=pl.format("{} hand(s) after round {}", pl.col("hands_after"), "first_cover_no"),
        logged=pl.format("{} hands", dealt),
        message=pl.format(
            "the cover card came out in round {}; round {} is the {} hand after it, and only "
            "{} more may be dealt ({} hands dealt after it)",
            pl.col("first_cover_no"),
            pl.col("after_cover_nos").list.get(pl.col("hands_after"), null_on_oob=True),
            _ordinal(pl.col("hands_after") + 1),
            pl.col("hands_after"),
            dealt,
        ),
    )


@VOID_CHECKS.check(
    Check(
        code="PRC002",
        name="RoundDealtAfterVoidRound",
        title="A round was dealt from the shoe after a void round",
        severity="medium",
        citation="void rounds (ma-baccarat §15(e), ma-midi-baccarat §13(e), md-mini-baccarat "
        ".13E(2)); not at ma-chemin-de-fer, whose voids need not end the shoe (Ambiguity 7)",
        what="A `void` round (too few cards to complete it) must be the last round of its shoe: "
        "the next round is dealt only with replaced cards, i.e. from a new shoe. The first "
        "round of the same shoe after the void round is reported.",
        why="A shoe that could not complete a round has no cards left to deal honestly; rounds "
        "after it were dealt from cards that should have been replaced.",
        example="Round 61 was void, yet round 62 was dealt from the same shoe.",
    )
)
def _round_after_void() -> Violation:
    return Violation(
        when=pl.col("void_citation").is_not_null() & (pl.col("after_void_count") > 0),
        citation=pl.col("void_citation"),
        expected=pl.format("no round after round {}", pl.col("first_void_no")),
        logged=pl.format("{} round(s) after it", pl.col("after_void_count")),
        message=pl.format(
            "round {} was dealt after void round {} in the same shoe ({} round(s) after it); "
            "a void round ends the shoe",
            pl.col("after_void_no"),
            pl.col("first_void_no"),
            pl.col("after_void_count"),
        ),
    )


# ---- passing the shoe -------------------------------------------------------------------

PASS_CHECKS = CheckSet()


@PASS_CHECKS.check(
    Check(
        code="PRC003",
        name="ShoeNotPassedAfterBankerLoss",
        title="Curator or Banker kept the shoe after the Banker's Hand lost",
        severity="medium",
        citation="the mandatory pass (ma-baccarat §14(a)(1): the curator; ma-chemin-de-fer "
        "§10(a)(1): the Banker)",
        what="When the Banker's Hand loses a regular round dealt by a player (ma-baccarat: "
        "`curator_seat` not null; ma-chemin-de-fer: the Banker at `banker_seat`), the next "
        "regular round at the table, in the same or the next shoe, must have another seat "
        "holding the shoe (at ma-baccarat the dealer, null, will do). Simulated rounds "
        "neither force nor show a pass, and a tie is not a loss (INDEX Ambiguities 8, 9). "
        "Reported on the round that should have been dealt by someone else.",
        why="Passing the shoe on a loss is how the game spreads the deal; a holder who keeps "
        "it controls the cards round after round.",
        example="The Banker's Hand lost round 12 with the curator at seat 3; round 13 was "
        "again dealt by seat 3.",
    )
)
def _shoe_not_passed() -> Violation:
    return Violation(
        when=pl.col("_same_table")
        & (pl.col("_prev_outcome") == "player")
        & pl.col("_prev_seat").is_not_null()
        & (pl.col("_seat") == pl.col("_prev_seat")),
        citation=pl.col("pass_citation"),
        expected=pl.format("another seat than {}", pl.col("_prev_seat")),
        logged=pl.format("seat {}", pl.col("_seat")),
        message=pl.format(
            "{} at seat {} kept the shoe after the Banker's Hand lost round {} of shoe {} "
            "(Player {} against Banker {})",
            pl.col("holder"),
            pl.col("_seat"),
            pl.col("_prev_round_no"),
            pl.col("_prev_shoe_id"),
            pl.col("_prev_player_final"),
            pl.col("_prev_banker_final"),
        ),
    )


def _in_dealing_order(rounds: pl.LazyFrame, shoes: pl.LazyFrame) -> pl.LazyFrame:
    """Rounds sorted per table into dealing order: shoe by shoe as they opened, by round_no."""
    opened = shoes.select("shoe_id", "opened_at")
    return rounds.join(opened, on="shoe_id", how="inner").sort(
        "table_id", "opened_at", "shoe_id", "round_no"
    )


def _pass_frame(replayed: pl.LazyFrame, shoes: pl.LazyFrame, rules: pl.DataFrame) -> pl.LazyFrame:
    rulesets = _rulesets_with(rules, "pass_citation")
    seat = pl.coalesce(
        pl.when(pl.col("pass_seat_column") == column).then(pl.col(column))
        for column in SEAT_COLUMNS
    )
    regular = (
        replayed.filter((pl.col("kind") == "regular") & pl.col("ruleset").is_in(rulesets))
        .select(
            "table_id",
            "shoe_id",
            "round_id",
            "round_no",
            "ruleset",
            *SEAT_COLUMNS,
            pl.col("expected_outcome").alias("outcome"),
            "player_final",
            "banker_final",
        )
        .join(rules.lazy(), on="ruleset", how="left")
        .with_columns(seat.alias("_seat"))
    )
    ordered = _in_dealing_order(regular, shoes)
    previous = {
        "_prev_table_id": "table_id",
        "_prev_seat": "_seat",
        "_prev_outcome": "outcome",
        "_prev_round_no": "round_no",
        "_prev_shoe_id": "shoe_id",
        "_prev_player_final": "player_final",
        "_prev_banker_final": "banker_final",
    }
    return ordered.with_columns(
        pl.col(column).shift(1).alias(name) for name, column in previous.items()
    ).with_columns(
        (pl.col("_prev_table_id") == pl.col("table_id")).fill_null(False).alias("_same_table")
    )


# ---- the Chemin de Fer Bank ---------------------------------------------------------------

STAKE_CHECKS = CheckSet()
AGAINST_WAGER_CHECKS = CheckSet()
AGAINST_ROUND_CHECKS = CheckSet()
SUIVI_CHECKS = CheckSet()


@STAKE_CHECKS.check(
    Check(
        code="PRC004",
        name="BankStakeBelowBid",
        title="The first wager of a new Bank is below the winning bid",
        severity="medium",
        citation="ma-chemin-de-fer §5(b): the first wager at least the bid",
        what="On the first round of a Bank (`banker_bid` logged), the Banker's wager (the "
        "`banker` row at `banker_seat`) must be at least the bid that won the Bank.",
        why="The Bank is awarded to the highest offer (§4(b)); staking less than the offer "
        "takes the Bank on a bid that was never honoured.",
        example="The Bank was won with a bid of $1,000.00 but the Banker wagered $750.00.",
    )
)
def _bank_stake_below_bid() -> Violation:
    return Violation(
        when=pl.col("stake_at_least_bid").fill_null(False)
        & pl.col("_bid").is_not_null()
        & (pl.col("_bank") < pl.col("_bid")),
        citation=pl.col("stake_citation"),
        expected=pl.format("at least {}", usd(pl.col("_bid"))),
        logged=usd(pl.col("_bank")),
        message=pl.format(
            "the Bank's first wager is {}, below its winning bid of {}",
            usd(pl.col("_bank")),
            usd(pl.col("_bid")),
        ),
    )


@STAKE_CHECKS.check(
    Check(
        code="PRC005",
        name="BankStakeOutOfRange",
        title="A Banker's wager outside once to twice the preceding one",
        severity="medium",
        citation="ma-chemin-de-fer §5(b): at least equal to, but no more than twice, the "
        "immediately preceding wager",
        what="After its first round, each wager of the same Bank must lie between once and "
        "twice the Banker's immediately preceding wager: the amount placed in the Bank's "
        "previous round, tied rounds included (INDEX Ambiguity 2). A Bank begins where "
        "`banker_bid` is logged or the Banker's seat changes.",
        why="The stake ladder limits how fast a Bank can raise or shrink the money at risk "
        "against the table.",
        example="The Banker wagered $2,000.00 and then $5,000.00: at most $4,000.00 allowed.",
    )
)
def _bank_stake_out_of_range() -> Violation:
    low = pl.col("_prev_bank") * pl.col("stake_min_multiple")
    high = pl.col("_prev_bank") * pl.col("stake_max_multiple")
    return Violation(
        when=~pl.col("_bank_start")
        & pl.col("_prev_bank").is_not_null()
        & ((pl.col("_bank") < low) | (pl.col("_bank") > high)),
        citation=pl.col("stake_citation"),
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


@AGAINST_WAGER_CHECKS.check(
    Check(
        code="PRC006",
        name="WagerExceedsBank",
        title="A wager against the Banker is larger than the Banker's wager",
        severity="high",
        citation="ma-chemin-de-fer §6(a): no wager against the Banker above his wager",
        what="Each `player` wager against the Banker must not exceed the Banker's wager (the "
        "`banker` row at `banker_seat`) of the round.",
        why="The Banker covers the wagers against him from his stake; a larger wager is paid "
        "from money the Banker never put up.",
        example="The Banker wagered $500.00; a banco of $600.00 was accepted.",
    )
)
def _wager_exceeds_bank() -> Violation:
    return Violation(
        when=pl.col("against_each").fill_null(False) & (pl.col("_amount") > pl.col("_bank")),
        citation=pl.col("against_citation"),
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


@AGAINST_ROUND_CHECKS.check(
    Check(
        code="PRC007",
        name="BankOvercovered",
        title="Wagers against the Banker together exceed the Banker's wager",
        severity="medium",
        citation="ma-chemin-de-fer §6(a): wagers against the Banker not above his wager "
        "together; §6(d): partial wagers until the Bank is covered",
        what="The `player` wagers of a round together must not exceed the Banker's wager. "
        "Reported on the round, and only where each wager alone is within the Bank (else "
        "PRC006 names the wager).",
        why="The Banker pays the winning wagers against him from his stake; accepting more "
        "than it leaves the excess unfunded.",
        example="Banker's wager $1,000.00; partial wagers of $600.00 and $500.00.",
    )
)
def _bank_overcovered() -> Violation:
    return Violation(
        when=pl.col("against_total").fill_null(False)
        & (pl.col("_against_total") > pl.col("_bank"))
        & (pl.col("_against_max") <= pl.col("_bank")),
        citation=pl.col("against_citation"),
        expected=pl.format("at most {}", usd(pl.col("_bank"))),
        logged=usd(pl.col("_against_total")),
        message=pl.format(
            "{} wagers against the Banker total {}; the Banker's wager is {}",
            pl.col("_against_count"),
            usd(pl.col("_against_total")),
            usd(pl.col("_bank")),
        ),
    )


@SUIVI_CHECKS.check(
    Check(
        code="PRC008",
        name="SuiviNotEntitled",
        title="Suivi called by a participant who was not entitled to it",
        severity="medium",
        citation="ma-chemin-de-fer §6(b): Suivi by the participant who equalled and lost the "
        "Banker's immediately preceding wager",
        what="A `suivi` call is the first option of the participant whose `banco` or `suivi` "
        "wager, equal to the Banker's whole wager, lost in the last non-tied round of the "
        "same Bank (INDEX Ambiguity 3). A call by any other seat, or when nobody qualifies "
        "(a partial wager, a win, a new Bank), is reported on the wager.",
        why="Suivi takes precedence over every other banco; a wrong Suivi takes the hand "
        "from the participant who was entitled to it.",
        example="Seat 2's banco lost round 12; in round 13 seat 5 called suivi.",
    )
)
def _suivi_not_entitled() -> Violation:
    entitled = pl.col("_entitled")
    return Violation(
        when=pl.col("suivi_citation").is_not_null()
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


def _bank_frames(
    replayed: pl.LazyFrame, shoes: pl.LazyFrame, wagers: pl.LazyFrame, rules: pl.DataFrame
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Rounds with a Banker's wager, in dealing order with Bank and Suivi state; and the
    wagers against the Banker with their round's Bank."""
    rulesets = sorted(
        set(_rulesets_with(rules, "stake_citation"))
        | set(_rulesets_with(rules, "against_citation"))
        | set(_rulesets_with(rules, "suivi_citation"))
    )
    rounds = replayed.filter(pl.col("ruleset").is_in(rulesets)).select(
        "table_id",
        "shoe_id",
        "round_id",
        "round_no",
        "kind",
        "ruleset",
        "banker_seat",
        cents("banker_bid").alias("_bid"),
        pl.col("expected_outcome").alias("outcome"),
    )
    bets = wagers.filter(pl.col("bet").is_in(["banker", "player"])).select(
        "wager_id", "round_id", "seat", "bet", "call", cents("amount").alias("_amount")
    )
    in_rounds = bets.join(
        rounds.select("round_id", "banker_seat", "ruleset"), on="round_id", how="inner"
    )
    bank = (
        in_rounds.filter((pl.col("bet") == "banker") & (pl.col("seat") == pl.col("banker_seat")))
        .group_by("round_id")
        .agg(
            pl.col("wager_id").min().alias("_bank_wager_id"),
            pl.col("_amount").sort_by("wager_id").first().alias("_bank"),
        )
    )
    against = in_rounds.filter(pl.col("bet") == "player").join(
        bank.select("round_id", "_bank"), on="round_id", how="inner"
    )
    full_call = (pl.col("_amount") == pl.col("_bank")) & pl.col("suivi_calls").list.contains(
        pl.col("call")
    )
    per_round = (
        against.join(rules.lazy().select("ruleset", "suivi_calls"), on="ruleset", how="left")
        .group_by("round_id")
        .agg(
            pl.col("_amount").sum().alias("_against_total"),
            pl.col("_amount").max().alias("_against_max"),
            pl.len().alias("_against_count"),
            pl.col("seat").filter(full_call).min().alias("_full_seat"),
        )
    )
    with_bank = (
        rounds.join(bank, on="round_id", how="inner")
        .join(per_round, on="round_id", how="left")
        .join(rules.lazy(), on="ruleset", how="left")
    )
    ordered = _in_dealing_order(with_bank, shoes)
    same_table = (pl.col("table_id").shift(1) == pl.col("table_id")).fill_null(False)
    bank_start = (
        ~same_table
        | pl.col("_bid").is_not_null()
        | pl.col("banker_seat").ne_missing(pl.col("banker_seat").shift(1))
    )
    # The previous wager of the same Bank: a sentinel at each Bank's start stops the
    # forward fill from reaching into the Bank before it.
    counted = pl.when(pl.col("stake_ties_count") | (pl.col("outcome") != "tie")).then(
        pl.col("_bank")
    )
    prev_bank = (
        pl.when(pl.col("_bank_start"))
        .then(pl.lit(NONE_SEAT, dtype=pl.Int64))
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
        .fill_null(NONE_SEAT)
    )
    reset = ~pl.col("_same_table") | (pl.col("_bank_start") & pl.col("suivi_resets"))
    entitled = (
        pl.when(reset)
        .then(pl.lit(NONE_SEAT, dtype=pl.Int64))
        .otherwise(qualified.shift(1))
        .forward_fill()
    )
    state = (
        ordered.with_columns(same_table.alias("_same_table"), bank_start.alias("_bank_start"))
        .with_columns(prev_bank.alias("_prev_bank"), entitled.alias("_entitled"))
        .with_columns(
            pl.when(pl.col(c) != NONE_SEAT).then(pl.col(c)).alias(c)
            for c in ("_prev_bank", "_entitled")
        )
    )
    wagers_against = against.join(
        state.select(
            "table_id",
            "shoe_id",
            "round_id",
            "_entitled",
            "against_each",
            "against_citation",
            "suivi_citation",
        ),
        on="round_id",
        how="inner",
    )
    return state, wagers_against


# ---- marker commission -------------------------------------------------------------------

MARKER_CHECKS = CheckSet()


@MARKER_CHECKS.check(
    Check(
        code="PRC009",
        name="MarkerCommissionUncollected",
        title="Marker commission not collected before the next shoe",
        severity="high",
        citation="deferred vig (ma-baccarat §13(d)(2)(i), ma-midi-baccarat §12(d)(2)(i), "
        "md-mini-baccarat .12D(2)(b)(i))",
        what="At a `marker` table, all commission a seat and patron owed in a shoe (the sum of "
        "`wagers.commission`) must be collected, in `commission_collections` rows for that "
        "shoe, seat and patron, before the table's next shoe opens. A shortfall no larger "
        "than the difference between rounding each wager and rounding the total is accepted "
        "(INDEX Ambiguity 19). `impact` is the uncollected amount: money the patron kept.",
        why="Marked commission is house money owed on won Banker wagers; left uncollected it "
        "is a loss to the house and a favour to the patron.",
        example="Seat 3 owed $12.50 in a shoe; $5.00 was collected before the next shoe "
        "opened: $7.50 uncollected.",
    )
)
def _marker_uncollected() -> Violation:
    short = pl.col("_owed") - pl.col("_in_time")
    patron = (
        pl.when(pl.col("patron_id").is_null())
        .then(pl.lit("an unrated patron"))
        .otherwise(pl.format("patron {}", pl.col("patron_id")))
    )
    late = pl.when(pl.col("_late") > 0).then(
        pl.format(" ({} collected after the next shoe opened)", usd(pl.col("_late")))
    )
    deadline = pl.when(pl.col("_next_open").is_null()).then(
        pl.lit(" (no later shoe at this table in the data)")
    )
    return Violation(
        when=short > pl.col("_tolerance"),
        citation=pl.col("marker_citation"),
        expected=usd(pl.col("_owed")),
        logged=usd(pl.col("_in_time")),
        impact=money(short),
        message=pl.concat_str(
            pl.format(
                "seat {}, {}: {} marker commission owed in the shoe, {} collected before the "
                "next shoe; {} uncollected",
                pl.col("seat"),
                patron,
                usd(pl.col("_owed")),
                usd(pl.col("_in_time")),
                usd(short),
            ),
            late.otherwise(pl.lit("")),
            deadline.otherwise(pl.lit("")),
        ),
    )


def _rounding_steps(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    rows = [
        (pack.ruleset, percent, step)
        for pack in packs.values()
        for percent, step in pack.commission.rounding_step_cents.value.items()
    ]
    return pl.DataFrame(
        rows,
        schema={"ruleset": pl.String(), "commission_percent": pl.Int64(), "_step": pl.Int64()},
        orient="row",
    )


def _marker_frame(
    audited: Mapping[str, pl.LazyFrame],
    rounds: pl.LazyFrame,
    options: pl.LazyFrame,
    rules: pl.DataFrame,
    packs: Mapping[str, RulePack],
) -> pl.LazyFrame:
    rulesets = _rulesets_with(rules, "marker_citation")
    marker_shoes = (
        options.filter(
            (pl.col("commission_collection") == "marker") & pl.col("ruleset").is_in(rulesets)
        )
        .select(
            "shoe_id",
            "ruleset",
            pl.col("commission_percent").cast(pl.Int64),
            "commission_rounding",
        )
        .join(rules.lazy().select("ruleset", "marker_citation"), on="ruleset", how="left")
        .join(_rounding_steps(packs).lazy(), on=["ruleset", "commission_percent"], how="left")
    )
    shoes = (
        audited["shoes"]
        .select("shoe_id", "table_id", "opened_at")
        .sort("table_id", "opened_at", "shoe_id")
        .with_columns(
            pl.when(pl.col("table_id").shift(-1) == pl.col("table_id"))
            .then(pl.col("opened_at").shift(-1))
            .alias("_next_open")
        )
        .join(marker_shoes, on="shoe_id", how="inner")
    )
    marker_rounds = rounds.select("round_id", "shoe_id").join(
        shoes.select("shoe_id"), on="shoe_id", how="semi"
    )
    keys = ["shoe_id", "seat", "patron_id"]
    owed = (
        audited["wagers"]
        .filter(pl.col("commission") > 0)
        .select("round_id", "seat", "patron_id", cents("commission"), cents("payout"))
        .join(marker_rounds, on="round_id", how="inner")
        .group_by(keys)
        .agg(
            pl.col("commission").sum().alias("_owed"),
            pl.col("payout").sum().alias("_won"),
        )
    )
    deadline = pl.col("_next_open").is_null() | (pl.col("collected_at") < pl.col("_next_open"))
    collected = (
        audited["commission_collections"]
        .select("shoe_id", "seat", "patron_id", "collected_at", cents("amount"))
        .join(shoes.select("shoe_id", "_next_open"), on="shoe_id", how="inner")
        .group_by(keys)
        .agg(
            pl.col("amount").filter(deadline).sum().alias("_in_time"),
            pl.col("amount").filter(~deadline).sum().alias("_late"),
        )
    )
    # Ambiguity 19: the collection may round the shoe's total once instead of each wager.
    exact = pl.col("_won") * pl.col("commission_percent")  # hundredths of a cent
    step = pl.col("_step") * 100
    once = (
        pl.when(pl.col("commission_rounding"))
        .then((exact + step - 1) // step * pl.col("_step"))
        .otherwise((exact + 50) // 100)
    )
    return (
        owed.join(collected, on=keys, how="left", nulls_equal=True)
        .join(shoes, on="shoe_id", how="inner")
        .with_columns(pl.col("_in_time", "_late").fill_null(0))
        .with_columns(pl.max_horizontal(pl.col("_owed") - once, pl.lit(0)).alias("_tolerance"))
    )


# ---- entry -------------------------------------------------------------------------------


def procedure_findings(
    audited: Mapping[str, pl.LazyFrame],
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> pl.LazyFrame:
    """Findings about shoes and table procedures, in a deterministic order."""
    rules = procedure_rules(packs)
    shoes = audited["shoes"]
    folded = shoe_rounds(replayed, counted_hand_keys(packs))
    per_shoe = (
        folded.join(options.select("shoe_id", "ruleset"), on="shoe_id", how="inner")
        .join(shoes.select("shoe_id", "table_id"), on="shoe_id", how="inner")
        .join(rules.lazy(), on="ruleset", how="left")
    )
    bank_rounds, against = _bank_frames(replayed, shoes, audited["wagers"], rules)
    frames = [
        *shoe_findings(shoes, replayed, options, folded, packs),
        LAST_HAND_CHECKS.emit(
            per_shoe,
            _ids(pl.col("after_cover_ids").list.get(pl.col("hands_after"), null_on_oob=True)),
        ),
        VOID_CHECKS.emit(per_shoe, _ids(pl.col("after_void_id"))),
        PASS_CHECKS.emit(_pass_frame(replayed, shoes, rules), _ids(pl.col("round_id"))),
        STAKE_CHECKS.emit(bank_rounds, _ids(pl.col("round_id"), pl.col("_bank_wager_id"))),
        AGAINST_ROUND_CHECKS.emit(bank_rounds, _ids(pl.col("round_id"))),
        AGAINST_WAGER_CHECKS.emit(against, _ids(pl.col("round_id"), pl.col("wager_id"))),
        SUIVI_CHECKS.emit(against, _ids(pl.col("round_id"), pl.col("wager_id"))),
        MARKER_CHECKS.emit(_marker_frame(audited, replayed, options, rules, packs), _ids()),
    ]
    # Several findings of one rule may name the same shoe (one per seat and patron): the
    # message breaks the tie, so a re-run writes the same order.
    return (
        pl.concat(frames, how="vertical")
        .sort([*SORT_KEY, "message"], nulls_last=False, maintain_order=True)
        .select(list(FINDINGS_SCHEMA))
    )
