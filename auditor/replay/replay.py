"""Stage 3, replay: re-derive every round from its cards and report what differs.

The whole stage is polars expressions over whole frames. The rule packs are turned
into one small decision table keyed by (ruleset, Player two-card total, Banker
two-card total, Player's third card or -1 when the Player stood); a single join
brings each round its Player action, Banker decision, the citations and the EZ
announcements its ruleset makes. Each check is then an expression that yields a
finding struct or null, and the findings of all checks come out of one pass.

Wagers are settled against the cards as dealt (contract), so this stage judges the
cards, draws, totals, outcome and announcements only.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.contract import EZ_EVENTS, OUTCOMES
from auditor.findings.check import Check, CheckSet, Violation
from auditor.findings.table import NO_ID
from auditor.packs.model import RulePack

STOOD = -1  # the decision table's key for "the Player did not draw"
CARD_SLOTS = (("player_cards", "p"), ("banker_cards", "b"))

DECISION_SCHEMA = {
    "ruleset": pl.String(),
    "player_two": pl.Int8(),
    "banker_two": pl.Int8(),
    "third_key": pl.Int8(),
    "player_must_draw": pl.Boolean(),
    "player_must_stand": pl.Boolean(),
    "player_citation": pl.String(),
    "banker_draws": pl.Boolean(),
    "banker_citation": pl.String(),
    "banker_severity": pl.String(),
    "player_natural": pl.Boolean(),
    "banker_natural": pl.Boolean(),
    "natural_hand": pl.String(),
    "totals_citation": pl.String(),
    "outcome_citation": pl.String(),
    "ez_citation": pl.String(),
    "announces": pl.List(pl.String()),
}


# ---- the packs as one decision table ------------------------------------------------


def decision_table(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """Every (ruleset, two-card totals, third card) the replay can meet, decided by its pack."""
    rows = []
    for pack in packs.values():
        naturals = set(pack.naturals.value)
        announce = pack.announce
        for player_two in range(10):
            for banker_two in range(10):
                natural_hand = _natural_hand(player_two, banker_two, naturals)
                for third in (STOOD, *range(10)):
                    rows.append(
                        (
                            pack.ruleset,
                            player_two,
                            banker_two,
                            third,
                            *_player_decision(pack, player_two, natural_hand),
                            *_banker_decision(pack, banker_two, third, natural_hand),
                            player_two in naturals,
                            banker_two in naturals,
                            natural_hand,
                            pack.cite(announce.totals),
                            pack.cite(announce.outcome),
                            _ez_citation(pack),
                            sorted(pack.ez.announce),
                        )
                    )
    return pl.DataFrame(rows, schema=DECISION_SCHEMA, orient="row")


def _natural_hand(player_two: int, banker_two: int, naturals: set[int]) -> str | None:
    if player_two in naturals and banker_two in naturals:
        return "both"
    if player_two in naturals:
        return "player"
    if banker_two in naturals:
        return "banker"
    return None


def _player_decision(pack: RulePack, player_two: int, natural_hand: str | None) -> tuple:
    """(must draw, must stand, citation); at Chemin de Fer's 5 the Player may do either."""
    if natural_hand:
        return False, True, pack.cite(pack.naturals.cite)
    rule = pack.player_draw[player_two]
    return rule.value == "draw", rule.value == "stand", pack.cite(rule.cite)


def _banker_decision(
    pack: RulePack, banker_two: int, third: int, natural_hand: str | None
) -> tuple:
    if natural_hand:
        return False, pack.cite(pack.naturals.cite), "high"
    cell = pack.banker_decision(banker_two, None if third == STOOD else third)
    return cell.draws, pack.cite(cell.cite), cell.severity


def _ez_citation(pack: RulePack) -> str:
    refs = sorted(set(pack.ez.announce.values()))
    return pack.cite(refs[0]) if refs else pack.cite(pack.announce.outcome)


def rank_code(card: pl.Expr) -> pl.Expr:
    """A card's rank as a base-36 digit (Int8): '2'..'9' themselves, 'A' 10, 'K' 20 ...

    Cards are validated as two characters, rank then suit, so the whole card read as a
    base-36 number, divided by 36, is its rank: plain integer arithmetic, which is also
    what runs fastest inside `list.eval` over every card of a hand.
    """
    return (card.str.to_integer(base=36, strict=False) // 36).cast(pl.Int8, strict=False)


def rank_value(code: pl.Expr, packs: Mapping[str, RulePack]) -> pl.Expr:
    """Point value (Int8) of a `rank_code`, from the packs' card values (null: no card)."""
    table: list[int | None] = [None] * 36
    for rank, value in _shared_card_values(packs).items():
        table[int(rank, 36)] = value
    # A gather from a 36-entry table; anything outside it (a negative code would count
    # from the end) is no card.
    position = pl.when(code.is_between(0, 35)).then(code)
    return pl.lit(pl.Series(table, dtype=pl.Int8)).gather(position)


def _shared_card_values(packs: Mapping[str, RulePack]) -> dict[str, int]:
    tables = {r: {rank: v.value for rank, v in p.card_values.items()} for r, p in packs.items()}
    distinct = {tuple(sorted(t.items())) for t in tables.values()}
    if len(distinct) != 1:
        # One expression for all rulesets keeps the replay a single pass; a pack that
        # counts cards differently would need the value joined per ruleset instead.
        raise ValueError(f"rule packs disagree on card values: {sorted(tables)}")
    return next(iter(tables.values()))


def event_exprs(packs: Mapping[str, RulePack]) -> dict[str, pl.Expr]:
    """Whether each EZ event (Dragon 7, Panda 8) occurred, by the definition in the pack."""
    final = {"player": pl.col("player_final"), "banker": pl.col("banker_final")}
    count = {"player": pl.col("player_count"), "banker": pl.col("banker_count")}
    other = {"player": "banker", "banker": "player"}
    occurred: dict[str, pl.Expr] = {}
    for index, pack in enumerate(packs.values()):
        for name, event in pack.ez.events.items():
            condition = (
                (final[event.hand] == event.total)
                & (count[event.hand] == event.cards)
                & (final[other[event.hand]] < event.other_hand_below)
            )
            occurred[name] = (
                pl.when(pl.col("ruleset_index") == index)
                .then(condition)
                .otherwise(occurred.get(name, pl.lit(False)))
            )
    return occurred


# ---- replay ------------------------------------------------------------------------

# Decision-table columns every round needs, all booleans: a gather of booleans is
# cheap, a gather of strings for every round is not. The words and citations are
# joined to flagged rows only.
DECISION_FLAGS = (
    "player_must_draw",
    "player_must_stand",
    "banker_draws",
    "player_natural",
    "banker_natural",
)
DECISION_TEXTS = (
    "player_citation",
    "banker_citation",
    "banker_severity",
    "natural_hand",
    "totals_citation",
    "outcome_citation",
    "ez_citation",
)
OUTCOME_CODE = {name: index for index, name in enumerate(OUTCOMES)}
PLAYER_WINS, BANKER_WINS, TIE = (OUTCOME_CODE[o] for o in ("player", "banker", "tie"))


def decision_key(ruleset_index: pl.Expr) -> pl.Expr:
    """Dense index into the decision table: ruleset, two-card totals, third card (or stood)."""
    return (
        ruleset_index.cast(pl.Int32) * 1100
        + pl.col("player_two").cast(pl.Int32) * 110
        + pl.col("banker_two").cast(pl.Int32) * 11
        + pl.col("third_key").cast(pl.Int32)
        + 1
    ).alias("decision_key")


def ordered_decisions(packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """The decision table in `decision_key` order, with the key as a column."""
    order = {ruleset: i for i, ruleset in enumerate(packs)}
    table = decision_table(packs).with_columns(
        pl.col("ruleset").replace_strict(order, return_dtype=pl.Int32).alias("_ri")
    )
    keyed = table.with_columns(decision_key(pl.col("_ri"))).sort("decision_key")
    assert keyed["decision_key"].to_list() == list(range(len(packs) * 1100))
    return keyed.drop("_ri")


def replay(
    rounds: pl.LazyFrame, shoe_options: pl.LazyFrame, packs: Mapping[str, RulePack]
) -> pl.LazyFrame:
    """Rounds with their replayed values: card values, counts, totals, decisions, events.

    Every replayed column is a small integer or a boolean (codes into `OUTCOMES` and
    `EZ_EVENTS`); words are for the few flagged rows.
    """
    order = {ruleset: i for i, ruleset in enumerate(packs)}
    options = shoe_options.select(
        "shoe_id",
        "ruleset",
        "ez_baccarat",
        pl.col("ruleset").replace_strict(order, return_dtype=pl.Int8).alias("ruleset_index"),
    )
    # Decoding the card strings is the expensive part: every card's rank is read once,
    # by integer arithmetic over each hand's list; the value table is applied to the
    # three positions afterwards (a gather inside `list.eval` is many times slower).
    ranked = rounds.join(options, on="shoe_id", how="left").with_columns(
        *(
            pl.col(column).list.eval(rank_code(pl.element())).alias(f"_{p}")
            for column, p in CARD_SLOTS
        ),
        pl.col("player_cards").list.len().cast(pl.Int8).alias("player_count"),
        pl.col("banker_cards").list.len().cast(pl.Int8).alias("banker_count"),
    )
    valued = ranked.with_columns(
        rank_value(pl.col(f"_{p}").list.get(i, null_on_oob=True), packs).alias(f"{p}{i + 1}")
        for _, p in CARD_SLOTS
        for i in range(3)
    ).drop("_p", "_b")
    return derive(valued, packs)


def derive(valued: pl.LazyFrame, packs: Mapping[str, RulePack]) -> pl.LazyFrame:
    """From card values p1..p3, b1..b3, counts and `ruleset_index`: totals, decisions, events.

    Split from `replay` so that a test can feed it card values directly.
    """
    zero = pl.lit(0, dtype=pl.Int8)
    totals = valued.with_columns(
        ((pl.col("p1") + pl.col("p2")) % 10).cast(pl.Int8).alias("player_two"),
        ((pl.col("b1") + pl.col("b2")) % 10).cast(pl.Int8).alias("banker_two"),
        ((pl.col("p1") + pl.col("p2") + pl.col("p3").fill_null(zero)) % 10)
        .cast(pl.Int8)
        .alias("player_final"),
        ((pl.col("b1") + pl.col("b2") + pl.col("b3").fill_null(zero)) % 10)
        .cast(pl.Int8)
        .alias("banker_final"),
        pl.when(pl.col("player_count") >= 3)
        .then(pl.col("p3"))
        .otherwise(pl.lit(STOOD, dtype=pl.Int8))
        .alias("third_key"),
    ).with_columns(decision_key(pl.col("ruleset_index")))
    decisions = ordered_decisions(packs)
    events = event_exprs(packs)
    # A gather from the small table is a lookup by position: no hash join over the rounds.
    looked_up = [
        pl.lit(decisions[column]).gather(pl.col("decision_key")).alias(column)
        for column in DECISION_FLAGS
    ]
    expected_event = pl.lit(None, dtype=pl.Int8)
    for name, occurred in events.items():
        announces = decisions["announces"].list.contains(name)
        announced = pl.lit(announces).gather(pl.col("decision_key"))
        expected_event = (
            pl.when(pl.col("ez_baccarat") & occurred & announced)
            .then(pl.lit(EZ_EVENTS.index(name), dtype=pl.Int8))
            .otherwise(expected_event)
        )
    player, banker = pl.col("player_final"), pl.col("banker_final")
    return totals.with_columns(
        *looked_up,
        *(occurred.alias(f"event_{name}") for name, occurred in events.items()),
        pl.when(player > banker)
        .then(pl.lit(PLAYER_WINS, dtype=pl.Int8))
        .when(player < banker)
        .then(pl.lit(BANKER_WINS, dtype=pl.Int8))
        .otherwise(pl.lit(TIE, dtype=pl.Int8))
        .alias("expected_outcome_code"),
        expected_event.alias("expected_ez_code"),
    )


def code_of(column: str, names: tuple[str, ...]) -> pl.Expr:
    """A string column's index in `names` (Int8): null stays null, anything else is -1.

    Comparisons with literals, not a cast or a hash lookup: cheapest on short strings.
    """
    found = pl.when(pl.col(column).is_null()).then(pl.lit(None, dtype=pl.Int8))
    for index, name in enumerate(names):
        found = found.when(pl.col(column) == name).then(pl.lit(index, dtype=pl.Int8))
    return found.otherwise(pl.lit(-1, dtype=pl.Int8))


def names_of(code: pl.Expr, names: tuple[str, ...]) -> pl.Expr:
    """The words for a code of `names` (null stays null)."""
    return pl.lit(pl.Series(names, dtype=pl.String)).gather(code)


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
        pl.when(pl.col("natural_hand") == "both")
        .then(pl.lit("both hands"))
        .otherwise(pl.concat_str(pl.lit("the "), pl.col("natural_hand"), pl.lit("'s Hand"))),
    )


def _after_player() -> pl.Expr:
    return (
        pl.when(pl.col("player_count") >= 3)
        .then(pl.format("after Player's third card {}", _card("player_cards", 2)))
        .otherwise(pl.lit("after the Player stood"))
    )


# Draw checks apply to every round dealt out as a hand; a void round ran out of cards.
PLAYED = pl.col("kind") != "void"


@round_check(
    Check(
        code="DRW001",
        name="PlayerDrewOnStand",
        title="Player's Hand took a third card the rules do not allow",
        severity="high",
        citation="the Player's drawing rule (ma-baccarat §11(a), §11(b)(2) and twins)",
        what="The Player's Hand holds three cards although a Natural was dealt or the "
        "Player's two-card count requires standing.",
        why="An extra card changes the outcome of every wager on the round; it is the "
        "commonest sign of a misdeal or a manipulated shoe.",
        example="Player 4 6 (count 0) and Banker 9 K (Natural 9): the Player's third card 5 "
        "was dealt although a Natural stops both hands.",
    )
)
def _player_drew_on_stand() -> Violation:
    when = PLAYED & (pl.col("player_count") >= 3) & pl.col("player_must_stand")
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
        citation="the Player's drawing rule (ma-baccarat §11(b)(1) and twins)",
        what="The Player's Hand holds two cards although its two-card count requires a draw "
        "and neither hand had a Natural.",
        why="A missing third card changes the outcome; a shoe dealing short hands is misdealt.",
        example="Player 2 3 (count 5) stood against Banker 4 2 (6): the Player must draw on 5.",
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
        citation="the Banker's drawing rule (ma-baccarat §11(c), Table 1; "
        "md-mini-baccarat .10D-.10E; ma-chemin-de-fer §8(c), Table 3)",
        what="The Banker's Hand holds three cards although a Natural was dealt or the "
        "Banker's count, given the Player's third card (or his standing), requires standing.",
        why="The Banker's draw decides most close rounds; a wrong draw moves money between "
        "the house and every Banker and Player wager.",
        example="Banker 6 after Player's third card 8: Table 1 says stand, but the Banker drew.",
    )
)
def _banker_drew_on_stand() -> Violation:
    when = PLAYED & (pl.col("banker_count") >= 3) & ~pl.col("banker_draws")
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
        citation="the Banker's drawing rule (ma-baccarat §11(c), Table 1; "
        "md-mini-baccarat .10D-.10E; ma-chemin-de-fer §8(c), Table 3)",
        what="The Banker's Hand holds two cards although the Banker's count, given the "
        "Player's third card (or his standing), requires a draw.",
        why="A Banker who stands where he must draw changes the outcome of the round.",
        example="Banker 3 after Player's third card 2: Table 1 says draw, but the Banker stood.",
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
        citation="the announcement of the final counts (ma-baccarat §12(a) and twins)",
        what="The logged Player total differs from the point count of the Player's cards "
        "(last digit of their sum; tens and faces count zero, ace one).",
        why="Patrons settle on the announced counts; a wrong count is a wrong call or a "
        "tampered log.",
        example="Player 7 8 counts 5, but 6 was announced.",
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
        citation="the announcement of the final counts (ma-baccarat §12(a) and twins)",
        what="The logged Banker total differs from the point count of the Banker's cards.",
        why="Patrons settle on the announced counts; a wrong count is a wrong call or a "
        "tampered log.",
        example="Banker K 9 A counts 0, but 9 was announced.",
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
        citation="the announcement of the winner (ma-baccarat §12(a) and twins)",
        what="The logged outcome is not the one the cards give (higher count wins, equal "
        "counts tie), or a round that was played out is logged void.",
        why="Every wager on the round is settled on the announced winner.",
        example="Player 9 against Banker 7, but the Banker's Hand was announced the winner.",
    )
)
def _wrong_outcome() -> Violation:
    when = PLAYED & (pl.col("expected_outcome_code") != code_of("outcome", OUTCOMES))
    return Violation(
        when=when,
        citation=pl.col("outcome_citation"),
        expected=pl.col("expected_outcome"),
        logged=pl.col("outcome"),
        message=pl.format(
            "Player {} against Banker {} gives {}; {} was announced",
            pl.col("player_final"),
            pl.col("banker_final"),
            pl.col("expected_outcome"),
            pl.col("outcome"),
        ),
    )


@round_check(
    Check(
        code="TOT004",
        name="WrongEzAnnouncement",
        title="EZ event (Dragon 7, Panda 8) missing, wrong or announced where none applies",
        severity="medium",
        citation="the EZ announcements (ma-baccarat §12(a); md-mini-baccarat .11A(2))",
        what="At an EZ table the ruleset's events must be announced exactly when the cards "
        "make them (Maryland announces Dragon 7 only); elsewhere none is announced.",
        why="The Banker wager pushes on a Dragon 7 and the insurance wagers pay 40:1 and "
        "25:1 on these events: a wrong call moves money.",
        example="Banker 3-card 7 beats Player 5 at an EZ table, but no Dragon 7 was announced.",
    )
)
def _wrong_ez_announcement() -> Violation:
    when = PLAYED & pl.col("expected_ez_code").ne_missing(code_of("ez_event", EZ_EVENTS))
    expected, logged = pl.col("expected_ez_event"), pl.col("ez_event")
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


# The stage's checks, for the pipeline's list of every check (`audit.all_checks`).
CHECK_SETS = (ROUND_CHECKS,)
