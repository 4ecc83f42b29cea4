"""Stage 4, settle: every wager's result, payout and commission, to the cent.

`correct.settle` gives each wager its correct settlement against the cards as
dealt; the checks here (PAY) and in `commission.py` (COM) compare it with the logged
one, and `permit.py` and `rollover.py` (WAG) judge whether the wager was permitted at
all. All checks are expressions over the settled frame's columns; citations and words
are gathered from the packs for the flagged rows only (`payout_words.payout_enrich`,
`commission_enrich`, `permit_enrich`).

How one wager's error is split, so that the impacts of its findings add up to its
total error exactly once (CONTRACT, "What the auditor writes"). The patron's net is
`payout - commission`, less the stake lost on a `lose` (the covered amount for a
Chemin de Fer Bank); `impact` = logged net - correct net, positive when the patron
was paid more than owed.
- Result wrong (PAY001): that one finding takes the whole error; the payout and the
  commission follow from the result and are not reported again.
- Result right: a payout off the odds (PAY002 or PAY003) takes `payout - due payout`;
  a commission off (COM001-COM003) takes `due commission - commission`.
- Tie odds below the minimum (PAY004) take what the table's odds leave short of the
  regulation's minimum on a winning Tie wager (zero on the others): with the payout
  finding, the wager adds up to its error at the minimum odds.
- Royal 9 award lines (PAY005) and the midi Stax reading (PAY006) carry no impact:
  the money is on the payout finding, or cannot be proven (INDEX Ambiguity 25).
- Permissibility findings (WAG) carry none: they are not about money owed.
Where the due amount is unknown (a progressive Royal 9 line) the impact is null.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.codes import names_of
from auditor.contract import DRAGON_BONUS_PAYTABLES
from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import WAGER_FRAME
from auditor.money import dollars, usd
from auditor.packs.model import RulePack
from auditor.packs.tables import pack_tables
from auditor.settlement.commission import COMMISSION_CHECKS, commission_enrich
from auditor.settlement.correct import VOID, WIN, settled_frames
from auditor.settlement.payout_words import payout_enrich
from auditor.settlement.permit import PERMIT_CHECKS, permit_columns, permit_enrich
from auditor.settlement.rollover import ROLLOVER_CHECKS, rollovers
from auditor.settlement.terms import (
    SAME_RESULT,
    is_bet,
    stake_words,
)

WAGER_CHECKS = CheckSet()
wager_check = WAGER_CHECKS.check

ID_EXPRS = {c: pl.col(c) for c in ("table_id", "shoe_id", "round_id", "wager_id")}


def wager_findings(
    wagers: pl.LazyFrame,
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
    royal9_seats: pl.LazyFrame | None = None,
) -> list[pl.LazyFrame]:
    """Findings about wagers (`wager_id` set): results, payouts, commission, permission.

    One frame per settlement frame (`correct.FRAMES`), each checked in one pass, to
    be collected with the other stages in one `collect_all`, which codes the wagers
    they share once. The rollover frame's wagers are settled and checked in the others;
    there only the rollovers are.
    """
    tables = pack_tables(packs)
    settled = settled_frames(wagers, replayed, options, packs, royal9_seats, tables)
    frames = settled.frames

    def words(flagged: pl.LazyFrame) -> pl.LazyFrame:
        return permit_enrich(commission_enrich(payout_enrich(flagged, tables), tables), tables)

    def named(flagged: pl.LazyFrame) -> pl.LazyFrame:
        return words(settled.complete(flagged))

    wager_checks = CheckSet()
    wager_checks.checks = WAGER_CHECKS.checks + COMMISSION_CHECKS.checks + PERMIT_CHECKS.checks
    return [
        wager_checks.emit(permit_columns(frames["main"], tables), ID_EXPRS, named),
        wager_checks.emit(permit_columns(frames["side"], tables), ID_EXPRS, words),
        ROLLOVER_CHECKS.emit(rollovers(frames["rollover"], tables), ID_EXPRS, named),
    ]


def find(
    part: Mapping[str, pl.LazyFrame],
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> list[pl.LazyFrame]:
    """The stage's findings frames over a partition as `pipeline.hold_partition` holds it:
    the wagers' (`wager_findings`), the Royal 9 wagers read with their chairs."""
    return wager_findings(part["wagers"], replayed, options, packs, part["royal9_seats"])


# ---- words ---------------------------------------------------------------------------


def _hands() -> pl.Expr:
    """ "Player KS 9H against Banker 4D 2C": the first two cards (Royal 9 only)."""
    return pl.format(
        "Player {} against Banker {}", pl.col("_player_first_two"), pl.col("_banker_first_two")
    )


def _royal9_line() -> pl.Expr:
    """'give "Any Royal 9"', or "qualify for no line": what the first two cards give."""
    return pl.format('give "{}"', pl.col("royal9_line")).fill_null(pl.lit("qualify for no line"))


def _counts() -> pl.Expr:
    """ "Player 9 (a Natural) against Banker 5" """
    natural = {
        hand: pl.when(pl.col(f"_{hand}_natural")).then(pl.lit(" (a Natural)")).otherwise(pl.lit(""))
        for hand in ("player", "banker")
    }
    counts = pl.format(
        "Player {}{} against Banker {}{}",
        pl.col("player_final"),
        natural["player"],
        pl.col("banker_final"),
        natural["banker"],
    )
    # A Natural given a third card: settled on the round as it should have been dealt.
    return (
        pl.when(pl.col("_drawn"))
        .then(
            pl.format(
                "{} on each hand's first two cards, as the round should have been dealt: no "
                "card is dealt after a Natural ({}; the card dealt is a draw finding)",
                counts,
                pl.col("_drawn_cite"),
            )
        )
        .otherwise(counts)
    )


def _due_words() -> pl.Expr:
    """What the due payout is made of: odds, a Royal 9 line, or nothing."""
    return (
        pl.when(pl.col("_due") != WIN)
        .then(pl.lit("nothing is paid"))
        .when(is_bet("royal9"))
        .then(pl.format('"{}" pays {}', pl.col("royal9_line"), usd(pl.col("due_payout_c"))))
        .otherwise(pl.format("{} to 1 pays {}", pl.col("_odds"), usd(pl.col("due_payout_c"))))
    )


def _stax_reading() -> pl.Expr:
    """A Royal 9 paid with no qualifying hand and no line, where the paytable allows a
    random award (midi §12(j), INDEX Ambiguity 25): reported, not proven wrong. Not in a
    void round: it returns every wager (midi §13(e)), so a win there is a wrong result
    however the paytable's random award is drawn."""
    return (
        is_bet("royal9")
        & pl.col("_kind").ne_missing(pl.lit(VOID))
        & pl.col("royal9_random").is_not_null()
        & pl.col("royal9_line").is_null()
        & (pl.col("_result") == WIN)
        & pl.col("award").is_null()
    )


# ---- results and payouts -------------------------------------------------------------


@wager_check(
    Check(
        code="PAY001",
        name="WrongResult",
        title="Wager settled win, lose or push against the cards",
        severity="high",
        subject="the wager's winning conditions, and void rounds",
        rules=("permitted", "procedures.void_ends_shoe"),
        what="The logged `result` differs from the one the cards as dealt give (in a round "
        "where a Natural was wrongly given a third card, the round as it should have been "
        "dealt: each hand's first two cards, INDEX Ambiguity 28): the "
        "higher count wins and equal counts push Banker and Player wagers (an EZ Banker "
        "wager pushes on a Dragon 7; a Panda 8 is an ordinary Player win), a void round "
        "returns every wager (a Royal 9 too, at a paytable with a random award), side "
        "wagers by their own conditions (Dragon Bonus margins "
        "and Naturals, Dragon 7, Panda 8, pairs, Royal 9 lines). The finding carries the "
        "wager's whole error: its payout and commission follow from the result and are "
        "not reported again.",
        why="A wrong result moves the whole stake and payout between the house and the "
        "patron; repeated, it is the signature of settling on the wrong hand.",
        example="Banker wager of $37.50 settled win (payout $37.50, commission $2.00); by "
        "the cards it lost: Player 9 (a Natural) against Banker 5. Impact $73.00.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _banker_first_two _banker_natural _bet_words _covered_basis _drawn "
            "_drawn_cite _due _due_words _kind _player_first_two _player_natural _result "
            "_result_cite amount_c award banker_final basis_c commission_c due_net_c due_result "
            "ez_push logged_net_c payout_c player_final royal9_line royal9_random result "
            "rollover_c"
        ),
    )
)
def _wrong_result() -> Violation:
    reason = (
        pl.when(pl.col("_kind") == VOID)
        .then(pl.lit("the round is void, which returns every wager"))
        .when(is_bet("banker") & pl.col("ez_push"))
        .then(pl.format("{}, a Dragon 7 at an EZ table", _counts()))
        .when(is_bet("royal9"))
        .then(pl.format("the first two cards, {}, {}", _hands(), _royal9_line()))
        .otherwise(_counts())
    )
    return Violation(
        when=pl.col("_due").is_not_null() & ~SAME_RESULT & ~_stax_reading(),
        citation=pl.col("_result_cite"),
        expected=pl.col("due_result"),
        logged=pl.col("result"),
        impact=dollars(pl.col("logged_net_c") - pl.col("due_net_c")),
        message=pl.format(
            "{} of {} settled {} (payout {}, commission {}); by the cards it {}: {}",
            pl.col("_bet_words"),
            stake_words(),
            pl.col("result"),
            usd(pl.col("payout_c")),
            usd(pl.col("commission_c")),
            pl.col("_due_words"),
            reason,
        ),
    )


PAYOUT_OFF = (
    SAME_RESULT
    & pl.col("due_payout_c").is_not_null()
    & (pl.col("payout_c") != pl.col("due_payout_c"))
)


def _payout_violation(when: pl.Expr, extra: pl.Expr) -> Violation:
    difference = pl.col("payout_c") - pl.col("due_payout_c")
    return Violation(
        when=when,
        citation=pl.col("_payout_cite"),
        expected=usd(pl.col("due_payout_c")),
        logged=usd(pl.col("payout_c")),
        impact=dollars(difference),
        message=pl.format(
            "{} of {} {}; {}, logged {} ({} {}){}",
            pl.col("_bet_words"),
            stake_words(),
            pl.col("_due_words"),
            _due_words(),
            usd(pl.col("payout_c")),
            pl.when(difference > 0).then(pl.lit("overpaid")).otherwise(pl.lit("underpaid")),
            usd(difference.abs()),
            extra,
        ),
    )


@wager_check(
    Check(
        code="PAY002",
        name="PayoutOffOdds",
        title="Payout differs from the odds or paytable line",
        severity="high",
        subject="the payout odds",
        rules=("payouts",),
        what="A wager settled with the right result was paid other than its odds: Player "
        "1:1; Banker 1:1 (a Chemin de Fer Bank on the covered amount only); Tie at the "
        "table's `tie_pays`; Dragon Bonus by the table's paytable; Dragon 7 40:1; Panda 8 "
        "25:1; House Money 15:1 or 3:1; a fixed Royal 9 line as printed; nothing on a lose "
        "or push. A rolled-over wager is paid on amount + rollover. Progressive Royal 9 "
        "amounts are not checked (the meters are not logged).",
        why="Over- and underpayments are direct money errors; a pattern of them at one "
        "dealer or seat is what a compliance review looks for first.",
        example="Player wager of $10.10 won; 1 to 1 pays $10.10, logged $15.00 (overpaid "
        "$4.90). Impact $4.90.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _bet_words _covered_basis _due _due_words _odds _payout_cite _result "
            "amount_c basis_c due_payout_c other_paytable payout_c royal9_line rollover_c"
        ),
    )
)
def _payout_off_odds() -> Violation:
    return _payout_violation(PAYOUT_OFF & pl.col("other_paytable").is_null(), pl.lit(""))


@wager_check(
    Check(
        code="PAY003",
        name="DragonBonusOffPaytable",
        title="Dragon Bonus paid on another paytable than the table's",
        severity="high",
        subject="the Dragon Bonus paytable of the Rules Submission",
        rules=("payouts.dragon_bonus",),
        what="A winning Dragon Bonus was paid at the odds another of the ruleset's "
        f"paytables ({', '.join(DRAGON_BONUS_PAYTABLES)}) gives for its margin, not at "
        "those of the table's `dragon_bonus_paytable`.",
        why="The paytable is fixed by the Rules Submission; paying another one is a "
        "configuration or training error that repeats on every such win.",
        example="Dragon Bonus on the Banker of $25.00 won; 6 to 1 pays $150.00, logged "
        "$175.00 (overpaid $25.00): Paytable B's odds, the table uses Paytable A. "
        "Impact $25.00.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _bet_words _covered_basis _due _due_words _odds _payout_cite _paytable "
            "_result amount_c basis_c due_payout_c other_paytable payout_c royal9_line "
            "rollover_c"
        ),
    )
)
def _dragon_bonus_off_paytable() -> Violation:
    return _payout_violation(
        PAYOUT_OFF & pl.col("other_paytable").is_not_null(),
        pl.format(
            ": Paytable {}'s odds, the table uses Paytable {}",
            pl.col("other_paytable"),
            names_of(pl.col("_paytable"), DRAGON_BONUS_PAYTABLES),
        ),
    )


@wager_check(
    Check(
        code="PAY004",
        name="TieOddsBelowMinimum",
        title="Tie wager taken at odds below the regulation's minimum",
        severity="high",
        subject="the minimum Tie odds",
        rules=("payouts.tie",),
        what="A Tie wager at a table whose `tie_pays` is below the ruleset's minimum (8 to "
        "1). The payout itself is checked at the table's odds (PAY002); this finding "
        "carries what those odds leave short of the minimum on a winning Tie wager (zero "
        "on the others), so that the two add up to the error at the minimum odds.",
        why="A Rules Submission cannot lower the odds the regulation guarantees; every Tie "
        "wager at such a table is taken on terms the patron may not be offered.",
        example="Tie wager of $100.00 won at a table paying 7 to 1; the regulation requires "
        "at least 8 to 1 ($100.00 short). Impact -$100.00.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _covered_basis _due _due_words _tie_cite amount_c basis_c rollover_c "
            "stake_c tie_min tie_pays"
        ),
    )
)
def _tie_odds_below_minimum() -> Violation:
    minimum, odds = pl.col("tie_min"), pl.col("tie_pays").cast(pl.Int64)
    short = pl.col("stake_c") * (odds - minimum)
    won = pl.col("_due") == WIN
    return Violation(
        when=is_bet("tie") & (odds < minimum),
        citation=pl.col("_tie_cite"),
        severity=pl.when(won).then(pl.lit("high")).otherwise(pl.lit("medium")),
        expected=pl.format("at least {} to 1", minimum),
        logged=pl.format("{} to 1", odds),
        impact=dollars(pl.when(won).then(short).otherwise(0)),
        message=pl.format(
            "Tie wager of {} {} at a table paying {} to 1; the regulation requires at "
            "least {} to 1{}",
            stake_words(),
            pl.col("_due_words"),
            odds,
            minimum,
            pl.when(won).then(pl.format(" ({} short)", usd(-short))).otherwise(pl.lit("")),
        ),
    )


@wager_check(
    Check(
        code="PAY005",
        name="WrongRoyal9Award",
        title="Royal 9 award line not the one the first four cards give",
        severity="medium",
        subject="the Royal 9 paytable",
        rules=("payouts.royal9.paytables",),
        what="The logged `award` is not the highest line of the table's Royal 9 paytable "
        "that the first two cards of each hand and the seat's Personal King-9 "
        "combinations qualify for (a pack's default chairs, the curator game's §13(i) Table 2, or "
        "`royal9_seats` "
        "overrides; INDEX Ambiguities 21-24), or names a line where none qualifies. The "
        "money, where the line is fixed, is on the payout finding; this one has no impact.",
        why="Progressive lines cannot be checked by amount, only by the line awarded: a "
        "wrong line is how a progressive meter is paid out wrongly.",
        example='Royal 9 wager at seat 1 awarded "Any Royal 9"; the first two cards, Player '
        'KS 9H against Banker 4D 2C, give "Personal K9 on Player Hand".',
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _banker_first_two _due _kind _player_first_two _result award "
            "royal9_citation royal9_known royal9_line seat"
        ),
    )
)
def _wrong_royal9_award() -> Violation:
    # A void round returns every wager: no line is due, whatever cards were dealt.
    due = pl.when(pl.col("_kind") != VOID).then(pl.col("royal9_line"))
    line = due.fill_null(pl.lit("no line"))
    award = pl.col("award").fill_null(pl.lit("no line"))
    return Violation(
        when=is_bet("royal9")
        & pl.col("royal9_known").fill_null(False)
        & SAME_RESULT
        & pl.col("award").ne_missing(due),
        citation=pl.col("royal9_citation"),
        expected=line,
        logged=award,
        message=pl.when(pl.col("_kind") == VOID)
        .then(
            pl.format(
                'Royal 9 wager at seat {} awarded "{}" in a void round, which returns every wager',
                pl.col("seat"),
                award,
            )
        )
        .otherwise(
            pl.format(
                'Royal 9 wager at seat {} awarded "{}"; the first two cards, {}, {}',
                pl.col("seat"),
                award,
                _hands(),
                _royal9_line(),
            )
        ),
    )


@wager_check(
    Check(
        code="PAY006",
        name="Royal9PaidWithoutQualifyingHand",
        title="Royal 9 paid with no qualifying hand where a random award is possible",
        severity="low",
        subject="the Royal 9 paytable and its random award",
        rules=("payouts.royal9.paytables.*.random_award",),
        what="A Royal 9 wager was paid, with no award line, although no hand qualifies for "
        "a line, at a paytable that also allows a random award (midi's Must Hit "
        "Progressive for Stax, §12(j)). The contract has no line name for that award, so "
        "the payment is reported without impact, not as a proven overpayment (INDEX "
        "Ambiguity 25). Not in a void round, which returns every wager (midi §13(e)): a "
        "Royal 9 settled win there is a wrong result (PAY001), as any wager's would be.",
        why="A Stax award is random and rare; a payout explained only by it deserves a "
        "look at the progressive system's own records.",
        example="Royal 9 wager of $5.00 won $1250.00 with no award line; the first two "
        "cards, Player KS 2H against Banker 4C 4D, qualify for no line: possibly a "
        "random Stax award (Midi Baccarat's §12(j)), not provable from the logs.",
        frame=WAGER_FRAME,
        reads=column_names(
            "bet_index _banker_first_two _kind _player_first_two _result amount_c award "
            "payout_c royal9_citation royal9_known royal9_line royal9_random"
        ),
    )
)
def _royal9_paid_without_qualifying_hand() -> Violation:
    return Violation(
        when=_stax_reading() & pl.col("royal9_known").fill_null(False),
        citation=pl.col("royal9_citation"),
        expected=pl.lit("lose (no qualifying hand)"),
        logged=pl.format("win {}", usd(pl.col("payout_c"))),
        message=pl.format(
            "Royal 9 wager of {} won {} with no award line; the first two cards, {}, "
            "qualify for no line: possibly a random Stax award ({}), not provable from "
            "the logs",
            usd(pl.col("amount_c")),
            usd(pl.col("payout_c")),
            _hands(),
            pl.col("royal9_random"),
        ),
    )


# The stage's checks, for the pipeline's list of every check (`pipeline.all_checks`).
CHECK_SETS = (WAGER_CHECKS, COMMISSION_CHECKS, PERMIT_CHECKS, ROLLOVER_CHECKS)
