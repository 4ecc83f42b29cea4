"""The counts the tests need, gathered partition by partition during the audit itself.

The audit holds each partition's rows in memory and replays its rounds (`audit.
find_in_partition`); the counts are taken there, from the same rows and the same
replay, so surveillance reads nothing again and runs wherever the partition runs (a
Dask worker too). A partition's cells are a few rows per shoe and per (patron, table,
bet); the audit keeps them on disk as they come (`store.py`) and the tests sum them.

Rounds: per (table, shoe, dealer, ruleset, decks), the outcomes the cards give (not the
one announced: an announcement that differs is a TOT finding already, and the cards are
what a stacked shoe changes), Naturals, pairs and the rounds with a finding.

Wagers: every wager on a regular round, rated or not, is priced where it is counted
(`expected.wager_price`, for the options of its shoe) and summed per (patron, bet) for
the patrons' tests, per (table, bet) for the tables' holds and per (dealer, bet) for the
dealers' (a dealer moves between tables in a night): wagers, wins and the
wins expected, and over the wagers whose money can be priced the stake, the money won,
its exact mean and variance and the largest swing of one wager. Money won is what the
logs say the patron was paid or lost: the payout less commission on a win, the stake on
a loss (a House Money rollover is staked too; a Chemin de Fer Bank loses only what the
wagers against it covered), nothing on a push. Wagers the packs cannot price are left
out: an impermissible wager is a WAG finding, not a statistic.

The rows an alert covers are read again for the alerts only (`covered_rounds`,
`covered_wagers`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from auditor.input.partition import ROUND_ROW, of_round
from auditor.packs.model import RulePack
from auditor.replay.derive import BANKER_WINS, PLAYER_WINS, TIE
from auditor.surveillance.expected import PRICE_OPTIONS, WagerKey, wager_price

REGULAR = pl.col("kind") == "regular"
ROUND_CELL = ("table_id", "shoe_id", "dealer_id", "ruleset", "decks")
ROUND_COUNTS = ("rounds", "n", "banker", "player", "tie", "natural", "pair", "finding_rounds")
ROUND_CELL_SCHEMA = {
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "dealer_id": pl.String(),
    "ruleset": pl.String(),
    "decks": pl.Int32(),
    **{count: pl.UInt32() for count in ROUND_COUNTS},
}
OPTION_COLUMNS = (
    "ez_baccarat",
    "tie_pays",
    "commission_percent",
    "dragon_bonus_paytable",
    "royal9_paytable",
    "seats",
)
OPTION_SET = "_option_set"
# A wager cell's (table, dealer, option set), numbered (`_wager_cells`).
_PLACE = "_place"
PRICE_KEY = ("bet", "ruleset", "decks", *OPTION_COLUMNS, "seat")
# Per (patron or table, bet), over the priced wagers: `n` wagers, `wins` and the wins
# expected; over those whose money is priced too (`money_n` of them), the stake, the
# money won (`net`), its exact mean (`expected`) and variance, and the largest amount
# one wager can move from its mean (`spread`).
PRICED_SUMS = ("n", "wins", "expected_wins", "money_n", "stake", "net", "expected", "variance")
PRICED_SCHEMA = {
    "bet": pl.String(),
    "n": pl.UInt32(),
    "wins": pl.UInt32(),
    "expected_wins": pl.Float64(),
    "money_n": pl.UInt32(),
    "stake": pl.Float64(),
    "net": pl.Float64(),
    "expected": pl.Float64(),
    "variance": pl.Float64(),
    "spread": pl.Float64(),
}
PATRON_CELL_SCHEMA = {"patron_id": pl.String(), **PRICED_SCHEMA}
TABLE_CELL_SCHEMA = {"table_id": pl.String(), **PRICED_SCHEMA}
DEALER_CELL_SCHEMA = {"dealer_id": pl.String(), **PRICED_SCHEMA}


@dataclass(frozen=True)
class NightCells:
    """The counts of a partition, or of the night: `ROUND_CELL_SCHEMA`,
    `PATRON_CELL_SCHEMA` (rated wagers), `TABLE_CELL_SCHEMA` and `DEALER_CELL_SCHEMA`
    (every wager, per the table it was placed at and the dealer who dealt its round)
    rows."""

    rounds: pl.DataFrame
    patrons: pl.DataFrame
    tables: pl.DataFrame
    dealers: pl.DataFrame


def combine_cells(cells: NightCells) -> NightCells:
    """The partitions' cells, one after another, summed per cell (a patron may play in
    several partitions, a dealer deal in several)."""
    rounds = cells.rounds.group_by(ROUND_CELL).agg(pl.col(c).sum() for c in ROUND_COUNTS)
    patrons = _summed(cells.patrons, "patron_id")
    tables = _summed(cells.tables, "table_id")
    dealers = _summed(cells.dealers, "dealer_id")
    return NightCells(
        _shaped(rounds, ROUND_CELL_SCHEMA),
        _shaped(patrons, PATRON_CELL_SCHEMA),
        _shaped(tables, TABLE_CELL_SCHEMA),
        _shaped(dealers, DEALER_CELL_SCHEMA),
    )


def _summed(cells: pl.DataFrame, key: str) -> pl.DataFrame:
    return cells.group_by(key, "bet").agg(
        *(pl.col(c).sum() for c in PRICED_SUMS), pl.col("spread").max()
    )


def _shaped(cells: pl.DataFrame, schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    return cells.select(list(schema)).cast(pl.Schema(schema))


def partition_cells(
    part: Mapping[str, pl.LazyFrame],
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    flagged_rounds: pl.LazyFrame,
    packs: Mapping[str, RulePack],
    unoffered_wagers: pl.LazyFrame | None = None,
) -> NightCells:
    """The cells of one partition held in memory: its rows (`part`, the wagers carrying
    their round's `ROUND_ROW`), its replayed rounds, the options per shoe, and the ids of
    its rounds that have a finding. `unoffered_wagers` (`wager_id`): wagers of a bet the
    table does not offer, left out as the rounds that are not played are: each is a
    finding, not play, so a table's hold is over the wagers its game takes (docs query
    #1 computes the same)."""
    shoes = _shoe_keys(part["shoes"], options, packs).collect()
    # The wagers are grouped by their shoe's option set, numbered (one integer), and the
    # options joined back onto the few cells: grouping by every option is slower.
    sets = (
        shoes.select("ruleset", "decks", *OPTION_COLUMNS)
        .unique()
        .sort(pl.all(), nulls_last=True)
        .with_row_index(OPTION_SET)
    )
    numbered = shoes.join(sets, on=["ruleset", "decks", *OPTION_COLUMNS], nulls_equal=True)
    rounds, wagers = pl.collect_all(
        [
            _round_cells(replayed, numbered.lazy(), flagged_rounds),
            _wager_cells(_offered(part["wagers"], unoffered_wagers), replayed, numbered.lazy()),
        ]
    )
    wagers = wagers.join(sets, on=OPTION_SET, how="left").with_columns(_price_options())
    priced = _priced(wagers, packs)
    patrons = priced.filter(pl.col("patron_id").is_not_null())
    dealt = priced.filter(pl.col("dealer_id").is_not_null())
    return NightCells(
        _shaped(rounds, ROUND_CELL_SCHEMA),
        _shaped(_summed(patrons, "patron_id"), PATRON_CELL_SCHEMA),
        _shaped(_summed(priced, "table_id"), TABLE_CELL_SCHEMA),
        _shaped(_summed(dealt, "dealer_id"), DEALER_CELL_SCHEMA),
    )


def _priced(cells: pl.DataFrame, packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """The wager cells with their sums in `PRICED_SUMS` terms (cells the packs cannot
    price dropped)."""
    keys = cells.select(PRICE_KEY).unique()
    rows = []
    for row in keys.iter_rows(named=True):
        ruleset = row["ruleset"]
        price = None if ruleset is None else wager_price(packs[ruleset], WagerKey(**row))
        if price is not None:
            rows.append({**row, **price.__dict__})
    price_columns = ("win", "mean", "variance", "spread")
    prices = pl.DataFrame(
        rows, schema={**keys.schema, **{c: pl.Float64() for c in price_columns}}, orient="row"
    ).rename({c: f"_{c}" for c in price_columns})
    priced = cells.join(prices, on=list(PRICE_KEY), how="inner", nulls_equal=True)
    money = pl.col("_mean").is_not_nan()  # a progressive Royal 9 line: its wins only

    def if_money(value: pl.Expr) -> pl.Expr:
        return pl.when(money).then(value).otherwise(0.0)

    return priced.select(
        "patron_id",
        "table_id",
        "dealer_id",
        "bet",
        "n",
        "wins",
        (pl.col("n") * pl.col("_win")).alias("expected_wins"),
        pl.when(money).then(pl.col("n")).otherwise(0).alias("money_n"),
        if_money(pl.col("stake")).alias("stake"),
        if_money(pl.col("net")).alias("net"),
        if_money(pl.col("stake") * pl.col("_mean")).alias("expected"),
        if_money(pl.col("stake_squares") * pl.col("_variance")).alias("variance"),
        pl.when(money).then(pl.col("stake_max") * pl.col("_spread")).alias("spread"),
    )


def _offered(wagers: pl.LazyFrame, unoffered: pl.LazyFrame | None) -> pl.LazyFrame:
    if unoffered is None:
        return wagers
    return wagers.join(unoffered.select("wager_id").unique(), on="wager_id", how="anti")


def _shoe_keys(
    shoes: pl.LazyFrame, options: pl.LazyFrame, packs: Mapping[str, RulePack]
) -> pl.LazyFrame:
    """Per shoe: the table options in force when it opened, its own decks (the cards
    dealt came from the shoe, whatever the Rules Submission says: a mismatch is SHO001),
    and whether its ruleset's Bank loses only what the wagers against it cover."""
    covered = [r for r, pack in packs.items() if pack.payouts.banker.basis == "covered"]
    decks = shoes.select("shoe_id", pl.col("decks").cast(pl.Int32))
    return (
        options.drop("decks")
        .join(decks, on="shoe_id", how="left")
        .select(
            "shoe_id",
            "ruleset",
            "decks",
            *OPTION_COLUMNS,
            pl.col("ruleset").is_in(covered).alias("_bank_covered"),
        )
    )


def _round_cells(
    replayed: pl.LazyFrame, shoes: pl.LazyFrame, flagged_rounds: pl.LazyFrame
) -> pl.LazyFrame:
    flagged = flagged_rounds.unique().with_columns(pl.lit(True).alias("_finding"))
    outcome = pl.col("expected_outcome_code")
    natural = pl.col("player_natural") | pl.col("banker_natural")
    return (
        replayed.select(
            "round_id",
            "table_id",
            "shoe_id",
            "dealer_id",
            "ruleset",
            "kind",
            "expected_outcome_code",
            "player_natural",
            "banker_natural",
            "player_cards",
            "banker_cards",
        )
        .join(flagged, on="round_id", how="left")
        .with_columns(
            (_pair("player_cards") | _pair("banker_cards")).alias("_pair"),
            pl.col("dealer_id").fill_null(""),
        )
        # A shoe's decks are the same on all its rounds: joined onto the few cells, after.
        .group_by(*(c for c in ROUND_CELL if c != "decks"))
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
        .join(shoes.select("shoe_id", "decks"), on="shoe_id", how="left")
    )


def _pair(hand: str) -> pl.Expr:
    """The first two cards of the hand share a rank (House Money's pair)."""
    first = pl.col(hand).list.get(0, null_on_oob=True).str.head(1)
    second = pl.col(hand).list.get(1, null_on_oob=True).str.head(1)
    return (first == second).fill_null(False)


def _wager_cells(wagers: pl.LazyFrame, replayed: pl.LazyFrame, shoes: pl.LazyFrame) -> pl.LazyFrame:
    """The cells of a partition's wagers, by patron, table, dealer, bet, the options its
    price reads and the seat for Royal 9."""
    wagers = wagers.select(
        ROUND_ROW, "seat", "patron_id", "bet", "call", "amount", "rollover", "result",
        "payout", "commission",
    )  # fmt: skip
    # What the wagers against a Chemin de Fer Bank cover: all that the Bank can lose.
    against = (
        wagers.filter((pl.col("bet") == "player") & pl.col("call").is_not_null())
        .group_by(ROUND_ROW)
        .agg(pl.col("amount").cast(pl.Float64).sum().alias("_covered"))
    )
    keyed, bound = pl.collect_all(
        [
            replayed.filter(REGULAR)
            .select(ROUND_ROW, "shoe_id", "table_id", "dealer_id")
            .join(shoes, on="shoe_id", how="inner")
            .join(against, on=ROUND_ROW, how="left")
            .select(
                ROUND_ROW,
                "table_id",
                "dealer_id",
                OPTION_SET,
                pl.when("_bank_covered")
                .then(pl.col("_covered").fill_null(0.0))
                .alias("_bank_cover_cap"),
            ),
            replayed.select((pl.col(ROUND_ROW).max().fill_null(0) + 1).alias("bound")),
        ]
    )
    # The few (table, dealer, option set) a round can fall in, numbered: the wagers find
    # theirs and their round's cap by their round's number (a gather, not a join) and
    # group by that one integer instead of two strings and the set.
    places = (
        keyed.select("table_id", "dealer_id", OPTION_SET)
        .unique(maintain_order=True)
        .with_row_index(_PLACE)
    )
    keyed = keyed.join(
        places, on=["table_id", "dealer_id", OPTION_SET], how="left", nulls_equal=True
    )

    def of_keyed_round(column: str) -> pl.Expr:
        rows, values = keyed.get_column(ROUND_ROW), keyed.get_column(column)
        return of_round(bound.item(), rows, values).alias(column)

    money = {c: pl.col(c).cast(pl.Float64).fill_null(0.0) for c in ("amount", "rollover")}
    stake = (
        pl.when((pl.col("bet") == "banker") & pl.col("_bank_cover_cap").is_not_null())
        .then(pl.min_horizontal(money["amount"], pl.col("_bank_cover_cap")))
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
        wagers.with_columns(of_keyed_round(_PLACE), of_keyed_round("_bank_cover_cap"))
        .filter(pl.col(_PLACE).is_not_null())
        .with_columns(stake.alias("_stake"), royal9_seat)
        .group_by("patron_id", _PLACE, "bet", "seat")
        .agg(
            pl.len().alias("n"),
            (pl.col("result") == "win").sum().alias("wins"),
            pl.col("_stake").sum().alias("stake"),
            (pl.col("_stake") ** 2).sum().alias("stake_squares"),
            pl.col("_stake").max().alias("stake_max"),
            net.sum().alias("net"),
        )
        .join(places.lazy(), on=_PLACE, how="left")
        .drop(_PLACE)
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
    # One grouping for all the alerts, not a filter per alert: a night may raise
    # thousands, over millions of their patrons' wagers.
    by_bets: dict[tuple[str, ...], list[str]] = {}
    for patron, bets in wanted:
        by_bets.setdefault(bets, []).append(patron)
    out: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for bets, chosen in by_bets.items():
        grouped = (
            rows.filter(pl.col("patron_id").is_in(chosen) & pl.col("bet").is_in(list(bets)))
            .group_by("patron_id", maintain_order=True)
            .agg("wager_id")
        )
        mine = dict(zip(grouped["patron_id"].to_list(), grouped["wager_id"].to_list(), strict=True))
        out.update({(patron, bets): mine.get(patron, []) for patron in chosen})
    return out
