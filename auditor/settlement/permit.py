"""Stage 4, permissibility: whether each wager could be taken at all (WAG checks).

A bet type the ruleset or the table's options do not permit, a Royal 9 wager off its
fixed stake or at a table without the decks and seats it needs, a wager placed after
"no more bets", on a Free Hand or a simulated round, at a seat the table does not
have, or with a `call` where none belongs; a House Money rollover other than the
authorised share is `rollover.py`'s. These findings carry no impact: they are not
about money owed (the wager's money is settled, and checked, as logged, by `wagers`).

Chemin de Fer Bank stakes, overcovering and Suivi are table procedures
(`procedures.py`), not checked here.
"""

from __future__ import annotations

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import WAGER_FRAME
from auditor.findings.words import moment
from auditor.money import usd
from auditor.packs.tables import PackTables, requires_code
from auditor.settlement.correct import FREE, SIMULATED
from auditor.settlement.terms import is_bet

PERMIT_CHECKS = CheckSet()
permit_check = PERMIT_CHECKS.check

# What each `requires` code of the packs' bets asks of the table (0: nothing).
OPTION_SET = {
    "dragon_bonus_paytable": pl.col("_paytable").is_not_null(),
    "ez_baccarat": pl.col("ez_baccarat"),
    "house_money": pl.col("house_money"),
    "royal9_paytable": pl.col("_royal9_offered"),
}
OPTION_WORDS = {
    "dragon_bonus_paytable": "a table without a Dragon Bonus paytable",
    "ez_baccarat": "a table that is not EZ Baccarat",
    "house_money": "a table that does not offer House Money",
    "royal9_paytable": "a table without a Royal 9 paytable",
}


def permit_columns(settled: pl.LazyFrame, tables: PackTables) -> pl.LazyFrame:
    """The settled wagers with what the WAG checks ask of the packs, for every row."""
    requires = tables.rb("bet_requires")
    option_set = pl.lit(True)
    for option, is_set in OPTION_SET.items():
        option_set = pl.when(requires == requires_code(option)).then(is_set).otherwise(option_set)
    return settled.with_columns(
        (tables.rb("bet_in_ruleset") & option_set.fill_null(False)).alias("_permitted"),
        tables.rb("bet_in_ruleset").alias("_in_ruleset"),
        tables.r("royal9_wager_cents").alias("_royal9_stake_c"),
        tables.royal9_table_permitted().alias("_royal9_table_ok"),
        tables.r_in_force("no_wager_after_no_more_bets").is_not_null().alias("_late_rule"),
        tables.call_permitted().alias("_call_ok"),
    )


def permit_enrich(flagged: pl.LazyFrame, tables: PackTables) -> pl.LazyFrame:
    """Citations and words for the WAG messages, for the flagged rows only."""
    requires = tables.rb("bet_requires")
    missing = pl.lit(None, dtype=pl.String)
    for option, words in OPTION_WORDS.items():
        missing = pl.when(requires == requires_code(option)).then(pl.lit(words)).otherwise(missing)
    bets = tables.r("bets_citation")
    return flagged.with_columns(
        tables.rb("bet_citation").alias("_bet_cite"),
        tables.r("bets_citation").alias("_bets_cite"),
        missing.alias("_missing_option"),
        tables.r("royal9_wager_citation").alias("_royal9_stake_cite"),
        tables.r("royal9_limits_citation").alias("_royal9_limits_cite"),
        tables.r("royal9_limits_words").alias("_royal9_limits_words"),
        tables.r_in_force("no_wager_after_no_more_bets").alias("_late_cite"),
        # Where the pack states no seat limit, no Free Hand rule, no rule on simulated
        # rounds or no rollover, the list of permissible wagers is cited instead.
        pl.coalesce(tables.r("seats_citation"), bets).alias("_seats_cite"),
        pl.when(pl.col("_kind") == FREE)
        .then(pl.coalesce(tables.r("free_hands_citation"), bets))
        .otherwise(pl.coalesce(tables.r("no_wagers_on_simulated_citation"), bets))
        .alias("_no_wager_cite"),
        tables.rb("bet_calls").list.join(", ").alias("_calls_words"),
        pl.coalesce(tables.r("house_money_rollover_citation"), bets).alias("_rollover_cite"),
        tables.r("house_money_rollover_onto").list.join(" or ").alias("_rollover_onto"),
    )


def wager_words() -> pl.Expr:
    """ "Dragon 7 Insurance of $10.00 at seat 3" """
    return pl.format("{} of {} at seat {}", pl.col("_bet_words"), usd(pl.col("amount_c")), "seat")


# Its findings' wagers are no play of the game: surveillance leaves them out of its counts.
BET_NOT_PERMITTED = "WAG001"


@permit_check(
    Check(
        code=BET_NOT_PERMITTED,
        name="BetNotPermitted",
        title="Bet type the ruleset or the table's options do not permit",
        severity="high",
        subject="the permissible wagers",
        rules=("bets.cite", "permitted.royal9"),
        what="The wager's `bet` is not among the ruleset's permissible wagers (Mini Baccarat has "
        "no Panda 8, House Money or Royal 9; Chemin de Fer only the Banker's wager and the "
        "wagers against it), or needs a table option the table does not have: Dragon Bonus "
        "a `dragon_bonus_paytable`, Dragon 7 and Panda 8 Insurance an EZ Baccarat table, "
        "House Money `house_money`, Royal 9 a `royal9_paytable` (INDEX Ambiguity 26).",
        why="A wager the Rules Submission does not offer has no approved odds; taking it "
        "is an unapproved game.",
        example="Dragon 7 Insurance of $10.00 at seat 1, at a table that is not EZ Baccarat "
        "(the curator game's §8(a)(5)).",
        frame=WAGER_FRAME,
        reads=column_names(
            "_bet_cite _bet_words _bets_cite _in_ruleset _missing_option _permitted amount_c "
            "bet ruleset seat"
        ),
    )
)
def _bet_not_permitted() -> Violation:
    return Violation(
        when=~pl.col("_permitted"),
        citation=pl.when(pl.col("_in_ruleset"))
        .then(pl.col("_bet_cite"))
        .otherwise(pl.col("_bets_cite")),
        expected=pl.format("no {} wager", pl.col("bet")),
        logged=pl.format("{} {}", pl.col("bet"), usd(pl.col("amount_c"))),
        message=pl.when(pl.col("_in_ruleset"))
        .then(pl.format("{}, at {}", wager_words(), "_missing_option"))
        .otherwise(pl.format("{}: {} permits no such wager", wager_words(), pl.col("ruleset"))),
    )


@permit_check(
    Check(
        code="WAG002",
        name="Royal9StakeNotFixed",
        title="Royal 9 wager other than the fixed $5",
        severity="medium",
        subject="the Royal 9 wager",
        rules=("payouts.royal9.wager",),
        what="A Royal 9 wager's `amount` is not the fixed stake of the ruleset ($5.00).",
        why="The Royal 9 paytable and its progressive meters are built on a fixed $5 "
        "wager; any other stake is a wager the paytable does not price.",
        example="Royal 9 wager of $10.00 at seat 10; the wager is fixed at $5.00.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _bet_words _in_ruleset _royal9_stake_c _royal9_stake_cite amount_c seat"
        ),
    )
)
def _royal9_stake_not_fixed() -> Violation:
    return Violation(
        when=is_bet("royal9")
        & pl.col("_in_ruleset")
        & (pl.col("amount_c") != pl.col("_royal9_stake_c")),
        citation=pl.col("_royal9_stake_cite"),
        expected=usd(pl.col("_royal9_stake_c")),
        logged=usd(pl.col("amount_c")),
        message=pl.format(
            "{}; the wager is fixed at {}", wager_words(), usd(pl.col("_royal9_stake_c"))
        ),
    )


@permit_check(
    Check(
        code="WAG003",
        name="Royal9AtNonconformingTable",
        title="Royal 9 wager at a table without the decks or seats Royal 9 requires",
        severity="medium",
        subject="the Royal 9 table",
        rules=("limits.royal9",),
        what="A Royal 9 wager was taken at a table whose Rules Submission options (`decks`, "
        "`seats`) are not those the ruleset requires of a Royal 9 game. A dealing shoe "
        "holding another number of decks than the table's is a shoe finding (SHO), not "
        "repeated on every wager.",
        why="The Royal 9 paytable is priced for those decks; another deck count changes "
        "the odds of every line.",
        example="Royal 9 wager of $5.00 at seat 10 at a table of 6 decks and 12 seats; "
        "Royal 9 requires 8 decks.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _bet_words _permitted _royal9_limits_cite _royal9_limits_words "
            "_royal9_table_ok amount_c decks seat seats"
        ),
    )
)
def _royal9_at_nonconforming_table() -> Violation:
    return Violation(
        when=is_bet("royal9") & pl.col("_permitted") & ~pl.col("_royal9_table_ok"),
        citation=pl.col("_royal9_limits_cite"),
        expected=pl.col("_royal9_limits_words"),
        logged=pl.format("{} decks and {} seats", pl.col("decks"), pl.col("seats")),
        message=pl.format(
            "{} at a table of {} decks and {} seats; Royal 9 requires {}",
            wager_words(),
            pl.col("decks"),
            pl.col("seats"),
            pl.col("_royal9_limits_words"),
        ),
    )


@permit_check(
    Check(
        code="WAG004",
        name="WagerAfterNoMoreBets",
        title='Wager placed or changed after "no more bets"',
        severity="high",
        subject='the "no more bets" rule',
        rules=("procedures.no_wager_after_no_more_bets",),
        what="The wager's `placed_at` (placed or last changed) is later than the round's "
        "`no_more_bets_at`. A wager without `placed_at`, or a round without the "
        "announcement, cannot be judged here (the missing or late announcement is TOT005, "
        "a round finding).",
        why="A wager made or raised once the cards may be known is past-posting, the "
        "classic table cheat.",
        example="Banker wager of $100.00 at seat 1 placed at 2026-11-24 18:00:57 UTC, "
        '2.0 s after "no more bets" at 2026-11-24 18:00:55 UTC.',
        frame=WAGER_FRAME,
        reads=column_names(
            "_bet_words _late_cite _late_rule amount_c no_more_bets_at placed_at seat"
        ),
    )
)
def _wager_after_no_more_bets() -> Violation:
    late = pl.col("placed_at") - pl.col("no_more_bets_at")
    placed, announced = moment(pl.col("placed_at")), moment(pl.col("no_more_bets_at"))
    return Violation(
        when=pl.col("_late_rule") & (pl.col("placed_at") > pl.col("no_more_bets_at")),
        citation=pl.col("_late_cite"),
        expected=pl.format("by {}", announced),
        logged=placed,
        message=pl.format(
            '{} placed at {}, {} s after "no more bets" at {}',
            wager_words(),
            placed,
            (late.dt.total_microseconds() / 1_000_000).round(3),
            announced,
        ),
    )


@permit_check(
    Check(
        code="WAG005",
        name="WagerOnRoundWithoutWagers",
        title="Wager on a Free Hand or a simulated round",
        severity="high",
        subject="Free Hands and simulated rounds",
        rules=("procedures.free_hands", "procedures.no_wagers_on_simulated"),
        what='A wager on a round of kind `free` (a Free Hand is dealt "without any wagers '
        'being placed on the table", side wagers included: INDEX Ambiguity 11) or '
        "`simulated` (an irregularity procedure's \"simulated round of play in which "
        'wagers may not be accepted"). Where the ruleset has no Free Hand, a wager on a '
        "`free` round cites its permissible wagers; the round itself is a round finding.",
        why="These rounds exist only to dispose of cards; a wager on one is a wager on "
        "cards already seen.",
        example="Player wager of $25.00 at seat 1 on a simulated round, where no wager may "
        "be accepted.",
        frame=WAGER_FRAME,
        reads=column_names("_bet_words _kind _no_wager_cite amount_c bet kind seat"),
    )
)
def _wager_on_round_without_wagers() -> Violation:
    return Violation(
        when=pl.col("_kind").is_in([FREE, SIMULATED]),
        citation=pl.col("_no_wager_cite"),
        expected=pl.format("no wager on a {} round", pl.col("kind")),
        logged=pl.format("{} {}", pl.col("bet"), usd(pl.col("amount_c"))),
        message=pl.format(
            "{} on a {} round, where no wager may be accepted", wager_words(), pl.col("kind")
        ),
    )


@permit_check(
    Check(
        code="WAG006",
        name="SeatOutOfRange",
        title="Wager at a seat the table does not have",
        severity="medium",
        subject="the table's numbered seats",
        rules=("limits.seats",),
        what="The wager's `seat` is above the `seats` of the table's Rules Submission options in "
        "force when the shoe opened. Chemin de Fer states no count of seats (its §6(a) admits "
        "any participant), so its tables are judged by their own `seats`.",
        why="A wager at a position the layout does not have cannot be attributed to a "
        "player, and it is how phantom wagers are booked.",
        example="Player wager of $50.00 at seat 13 at a table of 12 seats.",
        frame=WAGER_FRAME,
        reads=column_names("_bet_words _seats_cite amount_c seat seats"),
    )
)
def _seat_out_of_range() -> Violation:
    return Violation(
        when=pl.col("seat").cast(pl.Int32) > pl.col("seats").cast(pl.Int32),
        citation=pl.col("_seats_cite"),
        expected=pl.format("seat 1-{}", pl.col("seats")),
        logged=pl.format("seat {}", pl.col("seat")),
        message=pl.format("{} at a table of {} seats", wager_words(), pl.col("seats")),
    )


@permit_check(
    Check(
        code="WAG007",
        name="CallMisplaced",
        title="Chemin de Fer call missing, or given where no call belongs",
        severity="medium",
        subject="the wagers against the Banker; elsewhere the bet's own clause",
        rules=("procedures.wagers_against_bank", "permitted.*.calls"),
        what="A wager against the Chemin de Fer Banker (a `player` row there) has no `call` "
        "(`suivi`, `banco` or `partial`), or a wager that takes none (any other bet, any "
        "other ruleset) has one. Whether the call was allowed (Suivi, overcovering) is a "
        "procedure check.",
        why="The call decides the order and size of the wagers against the Bank; a wager "
        "without one, or a call outside Chemin de Fer, is a misrecorded wager.",
        example="Banker wager of $25.00 at seat 1 with call banco; in the curator game this "
        "wager takes no call.",
        frame=WAGER_FRAME,
        reads=column_names(
            "_bet_cite _bet_words _bets_cite _call_ok _calls_words _in_ruleset amount_c call "
            "ruleset seat"
        ),
    )
)
def _call_misplaced() -> Violation:
    expected = (
        pl.when(pl.col("_calls_words") == "")
        .then(pl.lit("no call"))
        .otherwise(pl.format("one of {}", pl.col("_calls_words")))
    )
    call = (
        pl.when(pl.col("call").is_null())
        .then(pl.lit("no call"))
        .otherwise(pl.format("call {}", pl.col("call")))
    )
    return Violation(
        when=~pl.col("_call_ok"),
        citation=pl.when(pl.col("_in_ruleset"))
        .then(pl.col("_bet_cite"))
        .otherwise(pl.col("_bets_cite")),
        expected=expected,
        logged=call,
        message=pl.format(
            "{} with {}; in {} this wager takes {}", wager_words(), call, "ruleset", expected
        ),
    )
