"""Stage 3's checks: draws (DRW) and totals, outcome and announcements (TOT), each an
expression over the replayed rounds (`derive.replay`), all emitted in one pass."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.codes import code_of, names_of
from auditor.contract import EZ_EVENTS, OUTCOMES
from auditor.findings.check import Check, CheckSet, Violation, column_names
from auditor.findings.frames import ROUND_FRAME
from auditor.findings.table import NO_ID
from auditor.packs.model import RulePack
from auditor.replay.derive import DECISION_TEXTS, ordered_decisions

# ---- checks ------------------------------------------------------------------------

ROUND_CHECKS = CheckSet()
round_check = ROUND_CHECKS.check


def _card(column: str, index: int) -> pl.Expr:
    return pl.col(column).list.get(index, null_on_oob=True)


def _hand_words(column: str) -> pl.Expr:
    return pl.col(column).list.join(" ")


def _natural_words() -> pl.Expr:
    return pl.format(
        "{} had a Natural",
        pl.col("natural_hand").replace_strict(
            {"both": "both hands", "player": "the Player's Hand", "banker": "the Banker's Hand"}
        ),
    )


def _after_player() -> pl.Expr:
    return (
        pl.when(pl.col("player_count") >= 3)
        .then(pl.format("after Player's third card {}", _card("player_cards", 2)))
        .otherwise(pl.lit("after the Player stood"))
    )


# A void round ran out of cards: a missing card there is no misdeal and its hands have no
# total or winner to announce, but a card the rules forbid is still one (the draw checks
# for a card too many apply to it too).
PLAYED = pl.col("kind") != "void"


@round_check(
    Check(
        code="DRW001",
        name="PlayerDrewOnStand",
        title="Player's Hand took a third card the rules do not allow",
        severity="high",
        subject="the Player's drawing rule",
        rules=("naturals", "player_draw"),
        what="The Player's Hand holds three cards although a Natural was dealt or the "
        "Player's two-card count requires standing.",
        why="An extra card changes the outcome of every wager on the round; it is the "
        "commonest sign of a misdeal or a manipulated shoe.",
        example="Player 4 6 (count 0) and Banker 9 K (Natural 9): the Player's third card 5 "
        "was dealt although a Natural stops both hands.",
        frame=ROUND_FRAME,
        reads=column_names(
            "natural_hand player_cards player_citation player_count player_must_stand player_two"
        ),
    )
)
def _player_drew_on_stand() -> Violation:
    when = (pl.col("player_count") >= 3) & pl.col("player_must_stand")
    message = (
        pl.when(pl.col("natural_hand").is_not_null())
        .then(
            pl.format(
                "Player drew {} although {}; no more cards may be dealt",
                _card("player_cards", 2),
                _natural_words(),
            )
        )
        .otherwise(
            pl.format(
                "Player drew {} on {}; the rules say stand",
                _card("player_cards", 2),
                pl.col("player_two"),
            )
        )
    )
    return Violation(
        when=when,
        citation=pl.col("player_citation"),
        expected=pl.lit("Player stands"),
        logged=pl.format("Player drew {}", _card("player_cards", 2)),
        message=message,
    )


@round_check(
    Check(
        code="DRW002",
        name="PlayerStoodOnDraw",
        title="Player's Hand did not take a third card the rules require",
        severity="high",
        subject="the Player's drawing rule",
        rules=("player_draw",),
        what="The Player's Hand holds two cards although its two-card count requires a draw "
        "and neither hand had a Natural.",
        why="A missing third card changes the outcome; a shoe dealing short hands is misdealt.",
        example="Player 2 3 (count 5) stood against Banker 4 2 (6): the Player must draw on 5.",
        frame=ROUND_FRAME,
        reads=column_names("kind player_citation player_count player_must_draw player_two"),
    )
)
def _player_stood_on_draw() -> Violation:
    when = PLAYED & (pl.col("player_count") == 2) & pl.col("player_must_draw")
    return Violation(
        when=when,
        citation=pl.col("player_citation"),
        expected=pl.lit("Player draws"),
        logged=pl.lit("Player stood"),
        message=pl.format("Player stood on {}; the rules say draw", pl.col("player_two")),
    )


@round_check(
    Check(
        code="DRW003",
        name="BankerDrewOnStand",
        title="Banker's Hand took a third card the rules do not allow",
        severity="high",
        subject="the Banker's drawing rule",
        rules=("banker_draw",),
        what="The Banker's Hand holds three cards although a Natural was dealt or the "
        "Banker's count, given the Player's third card (or his standing), requires standing.",
        why="The Banker's draw decides most close rounds; a wrong draw moves money between "
        "the house and every Banker and Player wager.",
        example="Banker 6 after Player's third card 8: Table 1 says stand, but the Banker drew.",
        frame=ROUND_FRAME,
        reads=column_names(
            "banker_cards banker_citation banker_count banker_draws banker_severity banker_two "
            "natural_hand player_cards player_count"
        ),
    )
)
def _banker_drew_on_stand() -> Violation:
    when = (pl.col("banker_count") >= 3) & ~pl.col("banker_draws")
    message = (
        pl.when(pl.col("natural_hand").is_not_null())
        .then(
            pl.format(
                "Banker drew {} although {}; no more cards may be dealt",
                _card("banker_cards", 2),
                _natural_words(),
            )
        )
        .otherwise(
            pl.format(
                "Banker drew on {} {}; the table says stand", pl.col("banker_two"), _after_player()
            )
        )
    )
    return Violation(
        when=when,
        citation=pl.col("banker_citation"),
        severity=pl.col("banker_severity"),
        expected=pl.lit("Banker stands"),
        logged=pl.format("Banker drew {}", _card("banker_cards", 2)),
        message=message,
    )


@round_check(
    Check(
        code="DRW004",
        name="BankerStoodOnDraw",
        title="Banker's Hand did not take a third card the rules require",
        severity="high",
        subject="the Banker's drawing rule",
        rules=("banker_draw",),
        what="The Banker's Hand holds two cards although the Banker's count, given the "
        "Player's third card (or his standing), requires a draw.",
        why="A Banker who stands where he must draw changes the outcome of the round.",
        example="Banker 3 after Player's third card 2: Table 1 says draw, but the Banker stood.",
        frame=ROUND_FRAME,
        reads=column_names(
            "banker_citation banker_count banker_draws banker_severity banker_two kind "
            "player_cards player_count"
        ),
    )
)
def _banker_stood_on_draw() -> Violation:
    when = PLAYED & (pl.col("banker_count") == 2) & pl.col("banker_draws")
    return Violation(
        when=when,
        citation=pl.col("banker_citation"),
        severity=pl.col("banker_severity"),
        expected=pl.lit("Banker draws"),
        logged=pl.lit("Banker stood"),
        message=pl.format(
            "Banker stood on {} {}; the table says draw", pl.col("banker_two"), _after_player()
        ),
    )


def _total_check(hand: str) -> Violation:
    final, logged = pl.col(f"{hand}_final"), pl.col(f"{hand}_total")
    label = hand.capitalize()
    return Violation(
        when=PLAYED & (final != logged),
        citation=pl.col("totals_citation"),
        expected=final.cast(pl.String),
        logged=logged.cast(pl.String),
        message=pl.format(
            "{}'s Hand {} counts {}; {} was announced",
            pl.lit(label),
            _hand_words(f"{hand}_cards"),
            final,
            logged,
        ),
    )


@round_check(
    Check(
        code="TOT001",
        name="WrongPlayerTotal",
        title="Player's point count announced wrongly",
        severity="medium",
        subject="the announcement of the final counts",
        rules=("announce.totals",),
        what="The logged Player total differs from the point count of the Player's cards "
        "(last digit of their sum; tens and faces count zero, ace one).",
        why="Patrons settle on the announced counts; a wrong count is a wrong call or a "
        "tampered log.",
        example="Player 7 8 counts 5, but 6 was announced.",
        frame=ROUND_FRAME,
        reads=column_names("kind player_cards player_final player_total totals_citation"),
    )
)
def _wrong_player_total() -> Violation:
    return _total_check("player")


@round_check(
    Check(
        code="TOT002",
        name="WrongBankerTotal",
        title="Banker's point count announced wrongly",
        severity="medium",
        subject="the announcement of the final counts",
        rules=("announce.totals",),
        what="The logged Banker total differs from the point count of the Banker's cards.",
        why="Patrons settle on the announced counts; a wrong count is a wrong call or a "
        "tampered log.",
        example="Banker K 9 A counts 0, but 9 was announced.",
        frame=ROUND_FRAME,
        reads=column_names("banker_cards banker_final banker_total kind totals_citation"),
    )
)
def _wrong_banker_total() -> Violation:
    return _total_check("banker")


@round_check(
    Check(
        code="TOT003",
        name="WrongOutcome",
        title="Winner announced wrongly",
        severity="high",
        subject="the announcement of the winner",
        rules=("announce.outcome",),
        what="The logged outcome is not the one the cards give (higher count wins, equal "
        "counts tie), or a round that was played out is logged void: its hands hold every "
        "card the rules deal them, where the ruleset voids a round only for want of cards "
        "(not at Chemin de Fer, whose §11(a) and §11(j) voids annul played hands: INDEX "
        "Ambiguity 7). With a card-reading shoe, SHO013 also reports a void round that left "
        "cards in the shoe.",
        why="Every wager on the round is settled on the announced winner.",
        example="Player 9 against Banker 7, but the Banker's Hand was announced the winner.",
        frame=ROUND_FRAME,
        reads=column_names(
            "banker_count banker_draws banker_final expected_outcome expected_outcome_code kind "
            "outcome outcome_citation player_count player_final player_must_draw void_short"
        ),
    )
)
def _wrong_outcome() -> Violation:
    when = PLAYED & (pl.col("expected_outcome_code") != code_of("outcome", OUTCOMES))
    # A void round has no winner: its outcome is logged `void` (contract).
    void_with_winner = ~PLAYED & (pl.col("outcome") != "void")
    played_out = ~PLAYED & pl.col("void_short") & _played_out()
    return Violation(
        when=when | void_with_winner | played_out,
        citation=pl.col("outcome_citation"),
        expected=pl.when(void_with_winner).then(pl.lit("void")).otherwise("expected_outcome"),
        logged=pl.col("outcome"),
        message=pl.when(void_with_winner)
        .then(pl.format("a void round has no winner; {} was announced", pl.col("outcome")))
        .otherwise(
            pl.format(
                "Player {} against Banker {} gives {}; {} was announced",
                pl.col("player_final"),
                pl.col("banker_final"),
                pl.col("expected_outcome"),
                pl.col("outcome"),
            )
        ),
    )


def _played_out() -> pl.Expr:
    """Both hands hold every card the rules deal them: two each, and the third card
    wherever the rules draw one."""
    player, banker = pl.col("player_count"), pl.col("banker_count")
    return (
        (player >= 2)
        & (banker >= 2)
        & ~((player == 2) & pl.col("player_must_draw"))
        & ~((banker == 2) & pl.col("banker_draws"))
    )


@round_check(
    Check(
        code="TOT004",
        name="WrongEzAnnouncement",
        title="EZ event (Dragon 7, Panda 8) missing, wrong or announced where none applies",
        severity="medium",
        subject="the EZ announcements",
        rules=("ez.announce",),
        what="At an EZ table the ruleset's events must be announced exactly when the cards "
        "make them (Mini Baccarat announces Dragon 7 only); elsewhere none is announced.",
        why="The Banker wager pushes on a Dragon 7 and the insurance wagers pay 40:1 and "
        "25:1 on these events: a wrong call moves money.",
        example="Banker 3-card 7 beats Player 5 at an EZ table, but no Dragon 7 was announced.",
        frame=ROUND_FRAME,
        reads=column_names(
            "banker_count banker_final expected_ez_code expected_ez_event ez_baccarat "
            "ez_citation ez_event kind player_count player_final"
        ),
    )
)
def _wrong_ez_announcement() -> Violation:
    # A void round has no EZ event to announce, whatever cards were dealt.
    expected_code = pl.when(PLAYED).then(pl.col("expected_ez_code"))
    when = expected_code.ne_missing(code_of("ez_event", EZ_EVENTS))
    expected = pl.when(PLAYED).then(pl.col("expected_ez_event"))
    logged = pl.col("ez_event")
    none = pl.lit("none")
    return Violation(
        when=when,
        citation=pl.col("ez_citation"),
        expected=expected.fill_null(none),
        logged=logged.fill_null(none),
        message=pl.format(
            "Player {} ({} cards) against Banker {} ({} cards){} calls for {}; {} was announced",
            pl.col("player_final"),
            pl.col("player_count"),
            pl.col("banker_final"),
            pl.col("banker_count"),
            pl.when(pl.col("ez_baccarat"))
            .then(pl.lit(" at an EZ table"))
            .otherwise(pl.lit(" at a table without EZ")),
            expected.fill_null(pl.lit("no EZ announcement")),
            logged.fill_null(none),
        ),
    )


def round_findings(replayed: pl.LazyFrame, packs: Mapping[str, RulePack]) -> pl.LazyFrame:
    """Findings about rounds (`wager_id` null); citations joined to the flagged rounds only."""
    texts = ordered_decisions(packs).select("decision_key", *DECISION_TEXTS).lazy()

    def words(flagged: pl.LazyFrame) -> pl.LazyFrame:
        return flagged.join(texts, on="decision_key", how="left").with_columns(
            names_of(pl.col("expected_outcome_code"), OUTCOMES).alias("expected_outcome"),
            names_of(pl.col("expected_ez_code"), EZ_EVENTS).alias("expected_ez_event"),
        )

    ids = {
        "table_id": pl.col("table_id"),
        "shoe_id": pl.col("shoe_id"),
        "round_id": pl.col("round_id"),
        "wager_id": NO_ID,
    }
    return ROUND_CHECKS.emit(replayed, ids, enrich=words)


def find(
    part: Mapping[str, pl.LazyFrame],
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
) -> list[pl.LazyFrame]:
    """The stage's findings frames over a partition as `pipeline.hold_partition` holds it:
    the rounds' (the replay reads nothing of the partition but its replayed rounds)."""
    return [round_findings(replayed, packs)]


# The stage's checks, for the pipeline's list of every check (`pipeline.all_checks`).
CHECK_SETS = (ROUND_CHECKS,)
