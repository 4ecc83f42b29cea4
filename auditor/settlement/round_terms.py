"""Per round, what settlement needs, read by each wager through its round's number.

The partition's replayed rounds are numbered (`input.partition.ROUND_ROW`, their row
in the replayed frame) and every wager carries its round's number. Each wager reads its
round's terms by a join on that integer (`with_round`): the join on the string
`round_id` it replaces cost as much as the rest of the settlement together (measured at
2 million rounds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from auditor.codes import enum_code
from auditor.contract import BETS, DRAGON_BONUS_PAYTABLES, EZ_EVENTS, ROUND_KINDS
from auditor.input.partition import ROUND_ROW, wagers_of
from auditor.packs.model import RulePack
from auditor.packs.tables import PackTables
from auditor.replay.decisions import event_exprs
from auditor.replay.derive import BANKER_WINS, PLAYER_WINS, TIE
from auditor.settlement.terms import wager_terms

OPTION_COLUMNS = (
    "seats",
    "decks",
    "tie_pays",
    "commission_percent",
    "commission_rounding",
    "dragon_bonus_paytable",
    "house_money",
    "house_money_rollover_percent",
    "royal9_paytable",
)


# The replay's values of the cards as dealt that the terms read to settle a round as it
# should have been dealt, and do not keep.
DEALT_ONLY = (
    "player_two",
    "banker_two",
    "player_count",
    "banker_count",
    "player_natural",
    "banker_natural",
)


def numbered(wagers: pl.LazyFrame, replayed: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The wagers and the replayed rounds, numbered as `pipeline.hold_partition` numbers
    them; frames that come without the numbers (a stage run on its own) are numbered
    here, the wagers keeping those of the rounds given, as the join on ids did."""
    if all(ROUND_ROW in frame.collect_schema().names() for frame in (wagers, replayed)):
        return wagers, replayed
    rounds = replayed.drop(ROUND_ROW, strict=False).collect().with_row_index(ROUND_ROW)
    return wagers_of(wagers.drop(ROUND_ROW, strict=False), rounds, whole=True), rounds.lazy()


def with_round(frame: pl.LazyFrame, rounds: pl.DataFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """`frame` with the `columns` of each row's round (`rounds` held in `ROUND_ROW` order).

    Numbers and flags are read by position (a gather of the column by the round's
    number); text is joined on the number. polars' streaming engine, which runs the
    stages, panicked now and then on a string function over a gathered text column
    (polars 2.1, partitions of a few hundred rounds); the gathers of the others cost a
    third of the join's time."""
    text = [name for name in columns if rounds.schema[name] == pl.String]
    row = pl.col(ROUND_ROW)
    gathered = frame.with_columns(
        pl.lit(rounds.get_column(name)).gather(row).alias(name)
        for name in columns
        if name not in text
    )
    if not text:
        return gathered
    keyed = rounds.lazy().select(ROUND_ROW, *text)
    return gathered.join(keyed, on=ROUND_ROW, how="left", maintain_order="left")


def round_terms(
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    tables: PackTables,
    packs: Mapping[str, RulePack],
) -> pl.DataFrame:
    """Per round, what settlement needs, as small numbers, row for row the replayed
    rounds (`ROUND_ROW` order: each wager reads its round's by position).

    The counts, Naturals, outcome and EZ events are those of the cards as dealt, except
    in a round where a hand whose first two cards are a Natural holds a third card
    (`_drawn`) and its pack settles such a round on each hand's first two cards, the
    round as it should have been dealt (INDEX Ambiguity 28)."""
    first_rank = [
        pl.col(c).list.get(i, null_on_oob=True).str.head(1)
        for c in ("player_cards", "banker_cards")
        for i in (0, 1)
    ]
    player_natural = pl.col("player_natural").fill_null(False)
    banker_natural = pl.col("banker_natural").fill_null(False)
    drawn = (
        tables.r("natural_drawn_two")
        & (
            (player_natural & (pl.col("player_count") >= 3))
            | (banker_natural & (pl.col("banker_count") >= 3))
        )
    ).fill_null(False)
    # EZ events of two-card hands, by the packs' definitions (none needs fewer than three
    # cards in the packs as written, but the definition decides, not this module).
    two_card_events = event_exprs(
        packs,
        final={"player": pl.col("player_two"), "banker": pl.col("banker_two")},
        count={"player": pl.lit(2, dtype=pl.Int8), "banker": pl.lit(2, dtype=pl.Int8)},
    )
    player = pl.when("_drawn").then(pl.col("player_two")).otherwise(pl.col("player_final"))
    banker = pl.when("_drawn").then(pl.col("banker_two")).otherwise(pl.col("banker_final"))
    outcome = (
        pl.when(player > banker)
        .then(pl.lit(PLAYER_WINS, dtype=pl.Int8))
        .when(player < banker)
        .then(pl.lit(BANKER_WINS, dtype=pl.Int8))
        .otherwise(pl.lit(TIE, dtype=pl.Int8))
    )
    terms = (
        replayed.select(
            ROUND_ROW,
            "table_id",
            "shoe_id",
            "ez_baccarat",
            "no_more_bets_at",
            "ruleset_index",
            enum_code("kind", ROUND_KINDS).cast(pl.Int8).alias("_kind"),
            tables.ruleset_index().alias("pack_ruleset_index"),
            "player_final",
            "banker_final",
            *DEALT_ONLY,
            pl.col("expected_outcome_code").alias("_outcome"),
            *(pl.col(f"event_{name}") for name in EZ_EVENTS),
            # House Money (§8(a)(7)): a pair of the same rank in the first two cards.
            (
                (first_rank[0] == first_rank[1]).cast(pl.Int8)
                + (first_rank[2] == first_rank[3]).cast(pl.Int8)
            )
            .fill_null(0)
            .alias("_pairs"),
        )
        .with_columns(drawn.alias("_drawn"))
        .with_columns(
            player.alias("player_final"),
            banker.alias("banker_final"),
            pl.when("_drawn").then(outcome).otherwise(pl.col("_outcome")).alias("_outcome"),
            *(
                pl.when("_drawn")
                .then(two_card_events[name])
                .otherwise(pl.col(f"event_{name}"))
                .alias(f"event_{name}")
                for name in EZ_EVENTS
                if name in two_card_events
            ),
            player_natural.alias("_player_natural"),
            banker_natural.alias("_banker_natural"),
        )
        .drop("ruleset_index", *DEALT_ONLY)
        .join(
            options.select("shoe_id", *OPTION_COLUMNS),
            on="shoe_id",
            how="left",
            maintain_order="left",
        )
        .with_columns(
            _ez_push(tables).alias("ez_push"),
            enum_code("dragon_bonus_paytable", DRAGON_BONUS_PAYTABLES).alias("_paytable"),
            pl.col("royal9_paytable").is_not_null().alias("_royal9_offered"),
        )
        .drop("dragon_bonus_paytable")
        .collect(engine="in-memory")
    )
    in_order = terms.select(
        (pl.col(ROUND_ROW) == pl.int_range(pl.len(), dtype=pl.UInt32)).all()
    ).item()
    if not in_order:
        raise ValueError(f"the replayed rounds' {ROUND_ROW} is not their row number")
    return terms


def against_bank(wagers: pl.LazyFrame, rounds: pl.DataFrame, tables: PackTables) -> pl.DataFrame:
    """Per round (`ROUND_ROW`) of a ruleset whose Bank wins or loses only what is covered
    (Chemin de Fer; `rounds`: the round terms), the stakes (amount + rollover) of the
    wagers against the Banker together: the bets its pack lists under `covered_by`, with
    a call or without (INDEX Ambiguity 27). The Bank wins or loses min(its own stake,
    this) (§6(e), §9(b)-(c); Ambiguity 30)."""
    bets = pl.Series([BETS.index(bet) for bet in tables.covering_bets()], dtype=pl.Int32)
    # The wagers of such rounds are picked first, and only theirs are coded.
    covered = rounds.select(tables.r("banker_payout_covered").fill_null(False)).to_series()
    return (
        with_round(
            wager_terms(wagers.filter(pl.lit(covered).gather(pl.col(ROUND_ROW)))).filter(
                pl.col("bet_index").is_in(pl.lit(bets).implode())
            ),
            rounds,
            ["pack_ruleset_index"],
        )
        .with_columns(tables.bet_key().alias("pack_bet_row"))
        .filter(tables.rb("banker_payout_covered_by"))
        .group_by(ROUND_ROW)
        .agg((pl.col("amount_c") + pl.col("rollover_c")).sum().alias("against_c"))
        .collect(engine="in-memory")
    )


def _ez_push(tables: PackTables) -> pl.Expr:
    """The pack's event on which a Banker wager pushes at an EZ table (Dragon 7) occurred."""
    push = tables.r("ez_push_event")
    occurred = pl.lit(False)
    for name in EZ_EVENTS:
        occurred = pl.when(push == name).then(pl.col(f"event_{name}")).otherwise(occurred)
    return pl.col("ez_baccarat") & occurred.fill_null(False)
