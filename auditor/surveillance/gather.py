"""The counts the tests need, gathered from the audited rows in two streaming passes.

Rounds: every audited round is replayed from its cards (`replay.rounds.replay`, the
audit's own replay: the outcome, Naturals) and counted per (table, shoe, dealer, ruleset,
decks): a few rows per shoe, whatever the night's size. The outcome is the one the cards
give, not the one announced: an announcement that differs is a TOT finding already, and
the cards are what a stacked shoe changes.

Wagers: every rated patron's wager on a regular round, with the options its price reads,
counted per (patron, bet, options): wagers, wins, stake and money won. Money won is what
the logs say the patron was paid or lost: the payout less commission on a win, the stake
on a loss (a House Money rollover is staked too; a Chemin de Fer Bank loses only what
the wagers against it covered), nothing on a push.

Only these aggregates are held in memory, and for the wagers' pass the ids of one group
of tables' rounds at a time; the rows an alert covers are read again for the alerts only
(`covered_rounds`, `covered_wagers`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from auditor.input.options import shoe_options
from auditor.input.partition import PARTITION_ROUNDS, partitions, restrict
from auditor.packs.model import RulePack
from auditor.replay.rounds import BANKER_WINS, PLAYER_WINS, TIE, replay
from auditor.surveillance.expected import PRICE_OPTIONS

REGULAR = pl.col("kind") == "regular"
ROUND_CELL = ("table_id", "shoe_id", "dealer_id", "ruleset", "decks")
OPTION_COLUMNS = (
    "ez_baccarat",
    "tie_pays",
    "commission_percent",
    "dragon_bonus_paytable",
    "royal9_paytable",
    "seats",
)
WAGER_CELL = ("patron_id", "bet", "ruleset", "decks", *OPTION_COLUMNS, "seat")


def shoe_keys(audited: Mapping[str, pl.LazyFrame]) -> pl.LazyFrame:
    """Per shoe: the table options in force when it opened, and its own decks (the cards
    dealt came from the shoe, whatever the Rules Submission says: a mismatch is SHO001)."""
    options = shoe_options(audited["shoes"], audited["tables"]).drop("decks")
    decks = audited["shoes"].select("shoe_id", pl.col("decks").cast(pl.Int32))
    # One row per shoe: small, and read by both passes.
    return options.join(decks, on="shoe_id", how="left").collect().lazy()


def round_cells(
    audited: Mapping[str, pl.LazyFrame],
    shoes: pl.LazyFrame,
    findings: pl.DataFrame,
    packs: Mapping[str, RulePack],
) -> pl.DataFrame:
    """Per (table, shoe, dealer, ruleset, decks): rounds of any kind, regular rounds, their
    outcomes by the cards, Naturals and pairs, and the rounds that have a finding."""
    flagged = (
        findings.lazy()
        .filter(pl.col("round_id").is_not_null())
        .select("round_id")
        .unique()
        .with_columns(pl.lit(True).alias("_finding"))
    )
    rounds = audited["rounds"].select(
        "round_id", "shoe_id", "table_id", "kind", "dealer_id", "player_cards", "banker_cards"
    )
    replayed = replay(rounds, shoes.select("shoe_id", "ruleset", "ez_baccarat"), packs)
    outcome = pl.col("expected_outcome_code")
    natural = pl.col("player_natural") | pl.col("banker_natural")
    return (
        replayed.join(shoes.select("shoe_id", "decks"), on="shoe_id", how="left")
        .join(flagged, on="round_id", how="left")
        .with_columns(
            (_pair("player_cards") | _pair("banker_cards")).alias("_pair"),
            pl.col("dealer_id").fill_null(""),
        )
        .group_by(ROUND_CELL)
        .agg(
            pl.len().alias("rounds"),
            REGULAR.sum().alias("n"),
            (REGULAR & (outcome == BANKER_WINS)).sum().alias("banker"),
            (REGULAR & (outcome == PLAYER_WINS)).sum().alias("player"),
            (REGULAR & (outcome == TIE)).sum().alias("tie"),
            (REGULAR & natural.fill_null(False)).sum().alias("natural"),
            (REGULAR & pl.col("_pair")).sum().alias("pair"),
            pl.col("_finding").fill_null(False).sum().alias("finding_rounds"),
        )
        .collect(engine="streaming")
        .sort(ROUND_CELL)
    )


def _pair(hand: str) -> pl.Expr:
    """The first two cards of the hand share a rank (House Money's pair)."""
    first = pl.col(hand).list.get(0, null_on_oob=True).str.head(1)
    second = pl.col(hand).list.get(1, null_on_oob=True).str.head(1)
    return (first == second).fill_null(False)


def wager_cells(
    audited: Mapping[str, pl.LazyFrame],
    shoes: pl.LazyFrame,
    packs: Mapping[str, RulePack],
    partition_rounds: int = PARTITION_ROUNDS,
) -> pl.DataFrame:
    """Per (patron, bet, the options its price reads, and the seat for Royal 9): wagers,
    wins, the stake (its sum, sum of squares and largest) and the money won.

    Wagers reach their shoe's options through their round: the join holds the rounds'
    ids, so it runs over groups of whole tables (three audit partitions' worth of
    rounds: it holds two small columns of a round where the audit holds the whole row
    and its wagers), and the groups' cells are summed (a patron may play anywhere).
    """
    covered = [r for r, pack in packs.items() if pack.payouts.banker.basis == "covered"]
    # The shoes' distinct option sets, numbered: the wagers are grouped by that number
    # (an integer) and the options joined back onto the few cells.
    options = (
        shoes.select("ruleset", "decks", *OPTION_COLUMNS)
        .unique()
        .sort(pl.all(), nulls_last=True)
        .with_row_index(OPTIONS)
        .collect()
    )
    numbered = shoes.join(
        options.lazy(), on=["ruleset", "decks", *OPTION_COLUMNS], nulls_equal=True
    ).select("shoe_id", OPTIONS, pl.col("ruleset").is_in(covered).alias("_bank_covered"))
    groups = partitions(audited, 3 * partition_rounds)
    cells = [
        _wager_cells(audited, restrict(audited, group, len(groups) == 1)["rounds"], numbered)
        for group in groups
    ]
    found = [c for c in cells if c is not None]
    if not found:
        return pl.DataFrame(schema=WAGER_CELL_SCHEMA)
    sums = [pl.col(c).sum() for c in SUMMED]
    return (
        pl.concat(found, how="vertical")
        .join(options, on=OPTIONS, how="left")
        .drop(OPTIONS)
        .with_columns(_price_options())
        .group_by(WAGER_CELL)
        .agg(*sums, pl.col("stake_max").max())
        .sort(WAGER_CELL, nulls_last=True)
    )


OPTIONS = "_options"
SUMMED = ("n", "wins", "stake", "stake_squares", "net")
WAGER_CELL_SCHEMA = {
    "patron_id": pl.String(),
    "bet": pl.String(),
    "ruleset": pl.String(),
    "decks": pl.Int32(),
    "ez_baccarat": pl.Boolean(),
    "tie_pays": pl.Int16(),
    "commission_percent": pl.Int8(),
    "dragon_bonus_paytable": pl.String(),
    "royal9_paytable": pl.String(),
    "seats": pl.Int8(),
    "seat": pl.Int8(),
    "n": pl.UInt32(),
    "wins": pl.UInt32(),
    "stake": pl.Float64(),
    "stake_squares": pl.Float64(),
    "net": pl.Float64(),
    "stake_max": pl.Float64(),
}


def _wager_cells(
    audited: Mapping[str, pl.LazyFrame], rounds: pl.LazyFrame, shoes: pl.LazyFrame
) -> pl.DataFrame | None:
    """The cells of the wagers on `rounds`, by patron, bet, option set and seat (None
    when the group has no regular round)."""
    wagers = audited["wagers"].select(
        "round_id", "seat", "patron_id", "bet", "call", "amount", "rollover", "result",
        "payout", "commission",
    )  # fmt: skip
    # What the wagers against a Chemin de Fer Bank cover: all that the Bank can lose.
    against = (
        wagers.filter((pl.col("bet") == "player") & pl.col("call").is_not_null())
        .group_by("round_id")
        .agg(pl.col("amount").cast(pl.Float64).sum().alias("_covered"))
    )
    # Each regular round with its option set and, at a Bank, what it can lose: held in
    # memory (two small columns a round) and joined once onto the wagers.
    keyed = (
        rounds.filter(REGULAR)
        .select("round_id", "shoe_id")
        .join(shoes, on="shoe_id", how="inner")
        .join(against, on="round_id", how="left")
        .select(
            "round_id",
            OPTIONS,
            pl.when("_bank_covered").then(pl.col("_covered").fill_null(0.0)).alias("_cap"),
        )
        .collect(engine="streaming")
    )
    if keyed.height == 0:
        return None
    ids = keyed["round_id"]
    # The range lets the reader skip row groups of other tables' rounds (exports keep a
    # round's wagers together); the join keeps exactly these rounds' wagers.
    low, high = pl.lit(ids.min(), dtype=pl.String), pl.lit(ids.max(), dtype=pl.String)
    money = {c: pl.col(c).cast(pl.Float64).fill_null(0.0) for c in ("amount", "rollover")}
    stake = (
        pl.when((pl.col("bet") == "banker") & pl.col("_cap").is_not_null())
        .then(pl.min_horizontal(money["amount"], pl.col("_cap")))
        .otherwise(money["amount"] + money["rollover"])
    )
    won = pl.col("payout").cast(pl.Float64) - pl.col("commission").cast(pl.Float64)
    net = (
        pl.when(pl.col("result") == "win")
        .then(won)
        .when(pl.col("result") == "lose")
        .then(-pl.col("_stake"))
        .otherwise(0.0)
    )
    royal9_seat = pl.when(pl.col("bet") == "royal9").then(pl.col("seat")).alias("seat")
    return (
        wagers.filter(pl.col("patron_id").is_not_null() & pl.col("round_id").is_between(low, high))
        .join(keyed.lazy(), on="round_id", how="inner")
        .with_columns(stake.alias("_stake"), royal9_seat)
        .group_by("patron_id", "bet", OPTIONS, "seat")
        .agg(
            pl.len().alias("n"),
            (pl.col("result") == "win").sum().alias("wins"),
            pl.col("_stake").sum().alias("stake"),
            (pl.col("_stake") ** 2).sum().alias("stake_squares"),
            pl.col("_stake").max().alias("stake_max"),
            net.sum().alias("net"),
        )
        .collect(engine="streaming")
    )


def _price_options() -> list[pl.Expr]:
    """Null every option a bet's price does not read, so that cells group only by what
    matters (a table's Tie odds do not split its patrons' Dragon Bonus counts)."""
    exprs = []
    for column in (*OPTION_COLUMNS, "seat"):
        bets = [bet for bet, options in PRICE_OPTIONS.items() if column in options]
        exprs.append(
            pl.when(pl.col("bet").is_in(bets)).then(pl.col(column)).otherwise(None).alias(column)
        )
    return exprs


# ---- the rows an alert covers ---------------------------------------------------------


def covered_rounds(
    audited: Mapping[str, pl.LazyFrame],
    column: str,
    keys: Sequence[str],
    findings: pl.DataFrame | None = None,
) -> dict[str, list[str]]:
    """The regular rounds of each shoe or dealer (`column`) in `keys`, in order; given
    `findings`, the rounds (of any kind) that have one instead."""
    if not keys:
        return {}
    rounds = audited["rounds"].filter(pl.col(column).is_in(list(keys)))
    if findings is None:
        rounds = rounds.filter(REGULAR)
    else:
        flagged = findings["round_id"].drop_nulls().unique().implode()
        rounds = rounds.filter(pl.col("round_id").is_in(flagged))
    grouped = (
        rounds.select(column, "round_id")
        .sort(column, "round_id")
        .group_by(column, maintain_order=True)
        .agg("round_id")
        .collect(engine="streaming")
    )
    return dict(zip(grouped[column].to_list(), grouped["round_id"].to_list(), strict=True))


def covered_wagers(
    audited: Mapping[str, pl.LazyFrame], wanted: Sequence[tuple[str, tuple[str, ...]]]
) -> dict[tuple[str, tuple[str, ...]], list[str]]:
    """The wagers of each (patron, bets) in `wanted`, in order."""
    if not wanted:
        return {}
    patrons = sorted({patron for patron, _ in wanted})
    rows = (
        audited["wagers"]
        .filter(pl.col("patron_id").is_in(patrons))
        .select("patron_id", "bet", "wager_id")
        .sort("patron_id", "wager_id")
        .collect(engine="streaming")
    )
    out = {}
    for patron, bets in wanted:
        mine = rows.filter((pl.col("patron_id") == patron) & pl.col("bet").is_in(list(bets)))
        out[(patron, bets)] = mine["wager_id"].to_list()
    return out
