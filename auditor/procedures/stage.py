"""Stage 5, procedures: the shoe checks (SHO, in `shoe_checks` and `card_checks`) and the
table procedures (PRC): the last hand after the cover card, void rounds, curator and Bank
passing, marker commission here, the Chemin de Fer Bank in `bank_checks`.

Each check is a query over a whole frame; nothing loops over shoes or rounds. Sequential
rules (a pass after a loss, a stake against the previous one, who may call Suivi) sort
the rounds of each table into dealing order once and read the previous row with `shift`,
guarded by "same table". The pack of each round's ruleset is joined as a small table
(`procedure_frames.procedure_rules`): a ruleset without the procedure has nulls there.

A few intermediate frames are collected as the stage is built, each once, in two waves
of independent frames: the rounds of curator and Bank tables in dealing order with the
Banker's Hand result, and the Bank tables' wagers; then the shoe frame (each shoe with
its card sequence and its rounds folded) and the Bank's rounds. Each feeds several
check sets, and polars does not reliably share a subplan that its consumers read
through different filters and projections: left lazy, each consumer would redo the
work over a million rounds (measured). The rest stays lazy and runs in the final
collect with the other stages.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from auditor.findings.check import Check, CheckSet, Violation
from auditor.findings.table import FINDINGS_SCHEMA, SORT_KEY
from auditor.input.partition import ROUND_ROW
from auditor.packs.model import SEAT_COLUMNS, RulePack
from auditor.procedures.bank import (
    BANK_ROUND_CHECKS,
    BANK_WAGER_CHECKS,
    bank_findings,
    bank_rounds,
    bank_wagers,
)
from auditor.procedures.cards import (
    CARD_COUNT_CHECKS,
    COVER_FLAG_CHECKS,
    SEQUENCE_CHECKS,
    card_findings,
    shoe_rounds,
)
from auditor.procedures.frames import (
    cents,
    citations,
    counted_hand_keys,
    holder_rounds,
    ids,
    in_deal_order,
    materialize,
    money,
    of_round,
    procedure_rules,
    round_bound,
    rulesets_with,
    usd,
)
from auditor.procedures.shoe import SHOE_CHECKS, shoe_findings, shoe_frame, shoe_sequences

# ---- last hand and void rounds ------------------------------------------------------------

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
        when=dealt > pl.col("hands_after"),
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
        when=pl.col("after_void_count") > 0,
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


def _after_cover(
    rounds: pl.LazyFrame, per_shoe: pl.LazyFrame, packs: Mapping[str, RulePack]
) -> pl.LazyFrame:
    """Per shoe, the hands (the kinds the pack counts) dealt after the round in which the
    cover card appeared. The rounds after it are those logged with `cover_card_drawn`
    ("the cover card appeared before or during this round"); a reader shoe whose flag
    contradicts the card sequence is SHO012's finding."""
    rn = pl.col("round_no")
    later = rn > rn.min()
    covered = (
        rounds.filter(pl.col("cover_card_drawn"))
        .select("shoe_id", "round_id", "round_no", "kind")
        .group_by("shoe_id")
        .agg(
            rn.min().alias("first_cover_no"),
            *(
                pl.col(c).filter(later).alias(f"_after_{c}")
                for c in ("round_no", "round_id", "kind")
            ),
        )
    )
    columns = ("_after_round_no", "_after_round_id", "_after_kind")
    counted = pl.concat_str("ruleset", "_after_kind", separator="|").is_in(counted_hand_keys(packs))
    keys = ("table_id", "shoe_id", "ruleset", "first_cover_no", "hands_after")
    return (
        covered.join(
            per_shoe.filter(pl.col("hands_after").is_not_null()).select(
                "shoe_id", "table_id", "ruleset", "hands_after"
            ),
            on="shoe_id",
            how="inner",
        )
        .explode(*columns)
        .filter(counted)
        .group_by(*keys)
        .agg(
            pl.col("_after_round_no").sort().alias("after_cover_nos"),
            pl.col("_after_round_id").sort_by("_after_round_no").alias("after_cover_ids"),
        )
    )


def _after_void(
    rounds: pl.LazyFrame, per_shoe: pl.LazyFrame, frame: pl.DataFrame
) -> pl.LazyFrame | None:
    """Per shoe with a void round (where the pack ends the shoe there), the rounds after it;
    None when no shoe has one, so that the rounds are not read again for nothing."""
    voided = frame.filter(pl.col("first_void_no").is_not_null())
    if voided.height == 0:
        return None
    after = (
        rounds.select("shoe_id", "round_id", "round_no")
        .join(voided.lazy().select("shoe_id", "first_void_no"), on="shoe_id", how="inner")
        .filter(pl.col("round_no") > pl.col("first_void_no"))
        .group_by("shoe_id", "first_void_no")
        .agg(
            pl.col("round_no").min().alias("after_void_no"),
            pl.len().alias("after_void_count"),
            pl.col("round_id").sort_by("round_no").first().alias("after_void_id"),
        )
    )
    return after.join(
        per_shoe.filter(pl.col("void_ends_shoe")).select("shoe_id", "table_id", "ruleset"),
        on="shoe_id",
        how="inner",
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
        "regular round of the same shoe must have another seat holding the shoe (at "
        "ma-baccarat the dealer, null, will do). A new shoe starts a new selection (ma-baccarat "
        "§7(b) offers it to seat 1 first, ma-chemin-de-fer §4(b) auctions the Bank), so the "
        "seat that lost the last round of a shoe may hold the next shoe. Simulated rounds "
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
        when=pl.col("_same_shoe")
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


def _pass_frame(held: pl.DataFrame, rules: pl.DataFrame) -> pl.LazyFrame:
    """The regular rounds of tables with a mandatory pass, each beside the one before it
    in dealing order and whether that one was of the same shoe (`held`:
    `procedure_frames.holder_rounds`, in dealing order)."""
    seat = pl.coalesce(
        pl.when(pl.col("pass_seat_column") == column).then(pl.col(column))
        for column in SEAT_COLUMNS
    )
    previous = {
        "_prev_seat": "_seat",
        "_prev_outcome": "outcome",
        "_prev_round_no": "round_no",
        "_prev_shoe_id": "shoe_id",
        "_prev_player_final": "player_final",
        "_prev_banker_final": "banker_final",
    }
    # A lookup, not a join: the rounds stay in dealing order.
    seat_column = pl.col("ruleset").replace_strict(
        rules["ruleset"], rules["pass_seat_column"], default=None
    )
    return (
        held.lazy()
        .with_columns(seat_column.alias("pass_seat_column"))
        .filter((pl.col("kind") == "regular") & pl.col("pass_seat_column").is_not_null())
        .with_columns(seat.alias("_seat"))
        .with_columns(pl.col(column).shift(1).alias(name) for name, column in previous.items())
        .with_columns(
            (pl.col("_prev_shoe_id") == pl.col("shoe_id")).fill_null(False).alias("_same_shoe")
        )
    )


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
    numbered: pl.DataFrame,
    bound: int,
    options: pl.LazyFrame,
    rules: pl.DataFrame,
    packs: Mapping[str, RulePack],
) -> pl.LazyFrame:
    """Per marker shoe, seat and patron: the commission owed and what was collected in
    time (`numbered`: the partition's rounds with their numbers; `bound`: `round_bound`)."""
    rulesets = rulesets_with(rules, "marker_citation")
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
    marker_rounds = numbered.join(shoes.select("shoe_id").collect(), on="shoe_id", how="semi")
    shoe_of_round = of_round(bound, marker_rounds[ROUND_ROW], marker_rounds["shoe_id"])
    keys = ["shoe_id", "seat", "patron_id"]
    owed = (
        audited["wagers"]
        .filter(pl.col("commission") > 0)
        .select(
            shoe_of_round.alias("shoe_id"),
            "seat",
            "patron_id",
            cents("commission"),
            cents("payout"),
        )
        .filter(pl.col("shoe_id").is_not_null())
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
    """Findings about shoes and table procedures, in a deterministic order.

    The partition as `audit.hold_partition` holds it: `replayed` gives the Banker's Hand
    result of the curator and Bank tables' rounds (`procedure_frames.holder_rounds`), and
    rounds and wagers are joined on `partition.ROUND_ROW`.
    """
    rules = procedure_rules(packs)
    shoes, rounds, wagers = audited["shoes"], audited["rounds"], audited["wagers"]
    # Wagers find their round by its number among the partition's rounds.
    numbered = replayed.select(ROUND_ROW, "shoe_id", "ruleset", "banker_seat").collect()
    bound = round_bound(numbered)
    # First the rounds of curator and Bank tables and the Bank tables' wagers; then the
    # shoe frame (the shoes' card sequences, the rounds folded per shoe) beside the Bank's
    # rounds.
    held, in_rounds = materialize(
        holder_rounds(replayed, shoes, rules, "pass_citation", "stake_citation"),
        bank_wagers(numbered, wagers, rules, bound),
    )
    held = in_deal_order(held)
    frame, per_round = materialize(
        shoe_frame(shoe_sequences(shoes), options, shoe_rounds(rounds), packs),
        bank_rounds(held, in_rounds.lazy(), rules, packs, bound),
    )
    per_shoe = (
        options.select("shoe_id", "ruleset")
        .join(shoes.select("shoe_id", "table_id"), on="shoe_id", how="inner")
        .join(rules.lazy().select("ruleset", "hands_after", "void_citation"), on="ruleset")
        .with_columns(pl.col("void_citation").is_not_null().alias("void_ends_shoe"))
        .drop("void_citation")
    )
    frames = [
        *shoe_findings(frame),
        *card_findings(frame, shoes, rounds),
        LAST_HAND_CHECKS.emit(
            _after_cover(rounds, per_shoe, packs),
            ids(pl.col("after_cover_ids").list.get(pl.col("hands_after"), null_on_oob=True)),
            citations(rules, "last_hand_citation"),
        ),
        PASS_CHECKS.emit(
            _pass_frame(held, rules),
            ids(pl.col("round_id")),
            citations(rules, "pass_citation", "holder"),
        ),
        *bank_findings(in_rounds.lazy(), per_round, rules),
        MARKER_CHECKS.emit(_marker_frame(audited, numbered, bound, options, rules, packs), ids()),
    ]
    after_void = _after_void(rounds, per_shoe, frame)
    if after_void is not None:
        frames.append(
            VOID_CHECKS.emit(
                after_void, ids(pl.col("after_void_id")), citations(rules, "void_citation")
            )
        )
    # Several findings of one rule may name the same shoe (one per seat and patron): the
    # message breaks the tie, so a re-run writes the same order.
    return (
        pl.concat(frames, how="vertical")
        .sort([*SORT_KEY, "message"], nulls_last=False, maintain_order=True)
        .select(list(FINDINGS_SCHEMA))
    )


# The stage's checks, for the pipeline's list of every check (`audit.all_checks`).
CHECK_SETS = (
    SHOE_CHECKS,
    CARD_COUNT_CHECKS,
    SEQUENCE_CHECKS,
    COVER_FLAG_CHECKS,
    LAST_HAND_CHECKS,
    VOID_CHECKS,
    PASS_CHECKS,
    MARKER_CHECKS,
    BANK_WAGER_CHECKS,
    BANK_ROUND_CHECKS,
)
