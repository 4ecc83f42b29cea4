"""The correct settlement of every wager, to the cent, as a frame.

Each wager is settled again against the cards as dealt (the replayed totals and EZ
events, not the logged outcome) and the `tables` options in force when its shoe
opened, from the packs' payouts and commission. In a round where a Natural was wrongly
given a third card, every wager is settled on the round as it should have been dealt,
each hand's first two cards, where the pack says so (`naturals.drawn_in_error`, INDEX
Ambiguity 28); the misdeal itself is a draw finding on the round. The result is the
wagers frame with the due result (`_due`, a code like the logged `_result`: `WIN`,
`LOSE`, `PUSH`), `due_payout_c`, `due_commission_c` and the patron's net both ways
(`logged_net_c`, `due_net_c`), money in integer cents.

The due settlement is null where it cannot be decided: a bet the ruleset has no
payout for (Panda 8 where the pack has none), a Dragon Bonus or Royal 9 at a table without a
paytable; `due_payout_c` alone is null for a progressive Royal 9 line (its meter is
not logged). Such wagers get no money finding; their bet type is `permit.py`'s.

Rules applied (CONTRACT, "Meanings that the auditor must apply"; INDEX readings):
- Player 1:1; Banker 1:1 less commission, pushing on a tie and, at an EZ table, on
  the pack's push event (Dragon 7, Ambiguity 12-13); a Player win on a Panda 8 is an
  ordinary 1:1 win; Tie at the table's `tie_pays`; Dragon Bonus by the table's
  paytable (margins 4-9 for non-Naturals, a Natural winner including 9 over 8, equal
  Naturals push); Dragon 7 40:1; Panda 8 25:1; House Money 15:1 or 3:1 on pairs by
  rank in the first two cards; a Royal 9 line's fixed amount (`royal9.py`).
- A rolled-over wager settles on `amount + rollover`.
- A Chemin de Fer Bank wins or loses only the covered amount, min(its amount +
  rollover, the stakes of the round's wagers against it together: the bets its pack
  lists under `covered_by`, with a call or without), and pays commission on that;
  wagers against it win or lose their own stake; a tie voids all (INDEX Ambiguities
  27, 30).
- A void round settles every wager push.
- Commission: the table's percent (clipped to those the ruleset allows) of the amount
  won, rounded up to the pack's step where `commission_rounding`, else half up to the
  cent; never at an EZ table, never on a bet outside the pack's commission bets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from auditor.codes import code
from auditor.contract import DRAGON_BONUS_PAYTABLES, RESULTS, ROUND_KINDS
from auditor.input.partition import ROUND_ROW
from auditor.money import cents
from auditor.packs.model import RulePack
from auditor.packs.tables import PackTables, pack_tables
from auditor.replay.derive import BANKER_WINS, PLAYER_WINS, TIE
from auditor.settlement.round_terms import against_bank, numbered, round_terms, with_round
from auditor.settlement.royal9 import royal9_hands, royal9_lines
from auditor.settlement.terms import is_bet, wager_terms

# Results are Int8 codes in the frame (strings cost more than the settlement itself).
WIN, LOSE, PUSH = (code(r, RESULTS) for r in ("win", "lose", "push"))
VOID, FREE, SIMULATED = (code(k, ROUND_KINDS) for k in ("void", "free", "simulated"))


# The wagers are settled in three frames, each one linear pass over its wagers, which
# read the round terms they share by position. `main` holds every wager but Royal 9;
# `side` the Royal 9 wagers, whose line needs the first cards and the seat's
# combinations; `rollover` the House Money wagers and the wagers carrying a rollover, for
# the seat's share (its wagers are also in `main` or `side`, which settle and check them).
# The frames are chosen on the logged columns, before the wagers are coded: each frame
# codes only its own wagers (`collect_all` does not share the coding between them).
FRAMES = {
    "main": pl.col("bet") != "royal9",
    "side": pl.col("bet") == "royal9",
    "rollover": (pl.col("bet") == "house_money") | (cents("rollover").fill_null(0) > 0),
}
# The round terms that are text. `side` joins them to its wagers (Royal 9 reads the
# table's seats and paytable); `main` and `rollover` read none of them to settle or flag
# a wager, and their flagged wagers alone are given their round's table and shoe, which
# a finding names (`Settled.complete`): joined to every wager, the text cost a third of
# the stage (measured at 2 million rounds).
ROUND_TEXT = ("table_id", "shoe_id", "royal9_paytable")


@dataclass(frozen=True)
class Settled:
    """The settled frames of `FRAMES`, `main` and `rollover` without their round's text
    (`ROUND_TEXT`), which `complete` adds to the rows it is given."""

    frames: dict[str, pl.LazyFrame]
    text: pl.DataFrame

    def complete(self, wagers: pl.LazyFrame) -> pl.LazyFrame:
        """`wagers` of `main` or `rollover` with their round's table and shoe."""
        return wagers.join(self.text.lazy(), on=ROUND_ROW, how="left", maintain_order="left")


def settle(
    wagers: pl.LazyFrame,
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
    royal9_seats: pl.LazyFrame | None = None,
    tables: PackTables | None = None,
) -> dict[str, pl.LazyFrame]:
    """The wagers with their round's terms, their table's options and their correct
    settlement, in the frames of `FRAMES`, every column of each."""
    settled = settled_frames(wagers, replayed, options, packs, royal9_seats, tables)
    return {
        name: frame if name == "side" else settled.complete(frame)
        for name, frame in settled.frames.items()
    }


def settled_frames(
    wagers: pl.LazyFrame,
    replayed: pl.LazyFrame,
    options: pl.LazyFrame,
    packs: Mapping[str, RulePack],
    royal9_seats: pl.LazyFrame | None = None,
    tables: PackTables | None = None,
) -> Settled:
    """`settle`'s frames, `main` and `rollover` without their round's text."""
    tables = tables or pack_tables(packs)
    wagers, replayed = numbered(wagers, replayed)
    # The round terms are held once, in round order: the frames read them by each
    # wager's round number, and polars would otherwise replay the rounds once per frame.
    # They are narrow (small codes per round); the wagers stay lazy.
    rounds = round_terms(replayed, options, tables, packs)
    # What each Chemin de Fer Bank can win or lose: the rounds of such rulesets, held now,
    # pick their wagers against the Bank out of the wagers.
    against = against_bank(wagers, rounds, tables)
    rounds = rounds.join(against, on=ROUND_ROW, how="left", maintain_order="left")
    frames = {}
    for name, chosen in FRAMES.items():
        coded = wager_terms(wagers.filter(chosen))
        if name == "side":
            terms = [column for column in rounds.columns if column != ROUND_ROW]
        else:
            terms = [column for column in rounds.columns if column not in (ROUND_ROW, *ROUND_TEXT)]
        frame = with_round(coded, rounds, terms).with_columns(
            tables.bet_key().alias("pack_bet_row"),
            tables.r("banker_payout_covered").alias("_covered_basis"),
            (pl.col("amount_c") + pl.col("rollover_c")).alias("stake_c"),
        )
        if name == "side":
            frame = royal9_lines(_with_royal9_hands(frame, replayed), royal9_seats, tables)
        else:
            # Only Royal 9 needs the cards themselves; the others' messages use totals.
            frame = frame.with_columns(
                pl.lit(None, dtype=dtype).alias(column)
                for column, dtype in (*ROYAL9_COLUMNS, *NO_CARDS)
            )
        frames[name] = _settled(frame, tables)
    text = rounds.select(ROUND_ROW, "table_id", "shoe_id", "royal9_paytable")
    return Settled(frames, text)


def _with_royal9_hands(frame: pl.LazyFrame, replayed: pl.LazyFrame) -> pl.LazyFrame:
    """The first two cards of each hand of each Royal 9 wager's round (`royal9_hands`),
    worked out for those rounds alone (a few tables offer Royal 9, and the cards are
    text) and joined by the round's number."""
    hands = (
        replayed.join(frame.select(ROUND_ROW), on=ROUND_ROW, how="semi")
        .select(ROUND_ROW, *royal9_hands())
        .collect()
    )
    return frame.join(hands.lazy(), on=ROUND_ROW, how="left", maintain_order="left")


NO_CARDS = (("_player_first_two", pl.String), ("_banker_first_two", pl.String))
ROYAL9_COLUMNS = (
    ("royal9_line", pl.String),
    ("royal9_amount_c", pl.Int64),
    ("royal9_known", pl.Boolean),
    ("royal9_random", pl.String),
    ("royal9_citation", pl.String),
)


def _settled(frame: pl.LazyFrame, tables: PackTables) -> pl.LazyFrame:
    return (
        frame.with_columns(
            *_dragon_bonus_columns(tables),
            tables.r("tie_payout_min_odds").alias("tie_min"),
            _basis().alias("basis_c"),
        )
        .with_columns(_due_result(tables).alias("_due"))
        .with_columns(_due_payout(tables).alias("due_payout_c"))
        .with_columns(
            _percent_in_force(tables).alias("percent_in_force"),
            _other_paytable(tables).alias("other_paytable"),
        )
        .with_columns(_due_commission(tables).alias("due_commission_c"))
        .with_columns(
            _net("_result", "payout_c", "commission_c").alias("logged_net_c"),
            _net("_due", "due_payout_c", "due_commission_c").alias("due_net_c"),
        )
    )


def _dragon_bonus_columns(tables: PackTables) -> list[pl.Expr]:
    """A Dragon Bonus on the chosen hand (§8(a)(4), §13(e)): whether each hand is a
    Natural, its margin over the other, the odds key (a Natural winner, else the
    margin) and the table's paytable (`dragon_paytable_row`: ruleset x paytable; null: none)."""
    on_banker = is_bet("dragon_bonus_banker")
    player, banker = pl.col("_player_natural"), pl.col("_banker_natural")
    difference = pl.col("player_final").cast(pl.Int32) - pl.col("banker_final").cast(pl.Int32)
    margin = pl.when(on_banker).then(-difference).otherwise(difference)
    own_natural = pl.when(on_banker).then(banker).otherwise(player)
    return [
        own_natural.alias("db_own_natural"),
        pl.when(on_banker).then(player).otherwise(banker).alias("db_other_natural"),
        margin.alias("db_margin"),
        tables.margin_key(own_natural, margin).alias("db_key"),
        tables.paytable_key(pl.col("_paytable")).alias("dragon_paytable_row"),
    ]


def dragon_odds(tables: PackTables, table: pl.Expr) -> pl.Expr:
    """Dragon Bonus odds at paytable key `table` for the row's `db_key` (null: no win)."""
    return tables.dragon_odds(table, pl.col("db_key"))


def _dragon_bonus_result(tables: PackTables) -> pl.Expr:
    """Natural winner (Natural 9 over Natural 8 too) or a non-Natural win by a margin of
    the paytable; equal Naturals push; anything else loses. Null: no paytable."""
    margin = pl.col("db_margin")
    own_nat, other_nat = pl.col("db_own_natural"), pl.col("db_other_natural")
    known = tables.dragon_citation(pl.col("dragon_paytable_row")).is_not_null()
    return pl.when(known.fill_null(False)).then(
        pl.when(own_nat & other_nat & (margin == 0))
        .then(PUSH)
        .when(own_nat & other_nat & (margin < 0))
        .then(LOSE)
        .when(own_nat)
        .then(WIN)
        .when(other_nat | dragon_odds(tables, pl.col("dragon_paytable_row")).is_null())
        .then(LOSE)
        .otherwise(WIN)
    )


def _due_result(tables: PackTables) -> pl.Expr:
    """The result code the cards give; null where the bet cannot be settled here."""

    def win_lose(condition: pl.Expr) -> pl.Expr:
        return pl.when(condition).then(WIN).otherwise(LOSE)

    outcome = pl.col("_outcome")
    tie = outcome == TIE
    event = pl.when(is_bet("dragon7")).then("event_dragon7").otherwise("event_panda8")
    return (
        # A void round returns every wager (§15(e) and twins).
        pl.when(pl.col("_kind") == VOID)
        .then(PUSH)
        .when(is_bet("banker"))
        .then(
            pl.when(tie | pl.col("ez_push")).then(PUSH).otherwise(win_lose(outcome == BANKER_WINS))
        )
        .when(is_bet("player"))
        .then(pl.when(tie).then(PUSH).otherwise(win_lose(outcome == PLAYER_WINS)))
        .when(is_bet("tie"))
        .then(pl.when(pl.col("tie_min").is_not_null()).then(win_lose(tie)))
        .when(is_bet("dragon_bonus_banker") | is_bet("dragon_bonus_player"))
        .then(_dragon_bonus_result(tables))
        .when(is_bet("dragon7") | is_bet("panda8"))
        .then(pl.when(tables.rb("payout_odds").is_not_null()).then(win_lose(event)))
        .when(is_bet("house_money"))
        .then(
            pl.when(tables.r("house_money_payout_one").is_not_null()).then(
                win_lose(pl.col("_pairs") > 0)
            )
        )
        .when(is_bet("royal9"))
        .then(pl.when(pl.col("royal9_known")).then(win_lose(pl.col("royal9_line").is_not_null())))
        .cast(pl.Int8)
    )


def _basis() -> pl.Expr:
    """What a lost wager loses and a won Banker wager is paid on: the stake (amount +
    rollover), or for a Chemin de Fer Bank the covered amount, min(its stake, the stakes
    against it together): a rollover on the Bank counts in its stake as on every other
    wager (INDEX Ambiguity 30)."""
    covered = pl.min_horizontal(pl.col("stake_c"), pl.col("against_c").fill_null(0))
    return (
        pl.when(is_bet("banker") & pl.col("_covered_basis"))
        .then(covered)
        .otherwise(pl.col("stake_c"))
    )


def _due_payout(tables: PackTables) -> pl.Expr:
    stake = pl.col("stake_c")
    house_money = (
        pl.when(pl.col("_pairs") >= 2)
        .then(tables.r("house_money_payout_both"))
        .otherwise(tables.r("house_money_payout_one"))
    )
    odds = (
        pl.when(is_bet("tie"))
        .then(pl.col("tie_pays").cast(pl.Int64))
        .when(is_bet("dragon_bonus_banker") | is_bet("dragon_bonus_player"))
        .then(dragon_odds(tables, pl.col("dragon_paytable_row")))
        .when(is_bet("house_money"))
        .then(house_money)
        .otherwise(tables.rb("payout_odds"))
    )
    return (
        pl.when(pl.col("_due").is_null())
        .then(pl.lit(None, dtype=pl.Int64))
        .when(pl.col("_due") != WIN)
        .then(pl.lit(0, dtype=pl.Int64))
        .when(is_bet("royal9"))
        .then(pl.col("royal9_amount_c"))
        .when(is_bet("banker"))
        .then(odds * pl.col("basis_c"))
        .otherwise(odds * stake)
    )


def commission_cents(won: pl.Expr, percent: pl.Expr, rounding: pl.Expr, step: pl.Expr) -> pl.Expr:
    """`percent` of `won` cents: rounded up to a multiple of `step` where `rounding`,
    else half up to the cent (CONTRACT; INDEX Ambiguity 19). Integers only."""
    scaled = won * percent  # hundredths of a cent
    unit = step * 100
    return (
        pl.when(rounding).then((scaled + unit - 1) // unit * step).otherwise((scaled + 50) // 100)
    )


def _percent_in_force(tables: PackTables) -> pl.Expr:
    """The table's percent where the ruleset allows it, else the nearest it allows."""
    return (
        pl.col("commission_percent")
        .cast(pl.Int64)
        .clip(tables.r("commission_percents_min"), tables.r("commission_percents_max"))
    )


def _due_commission(tables: PackTables) -> pl.Expr:
    percent = pl.col("percent_in_force")
    step = tables.commission_step(percent)
    charged = (
        tables.rb("commission_bets_listed")
        & (pl.col("_due") == WIN)
        & ~(pl.col("ez_baccarat") & tables.r("commission_none_at_ez_value"))
    )
    return (
        pl.when(charged)
        .then(
            commission_cents(pl.col("due_payout_c"), percent, pl.col("commission_rounding"), step)
        )
        .when(pl.col("_due").is_not_null())
        .then(pl.lit(0, dtype=pl.Int64))
    )


def _other_paytable(tables: PackTables) -> pl.Expr:
    """For a winning Dragon Bonus paid off its odds: the first other paytable of the
    ruleset whose odds the logged payout matches (PAY003), else null."""
    own = dragon_odds(tables, pl.col("dragon_paytable_row"))
    found = pl.lit(None, dtype=pl.String)
    for index, name in reversed(list(enumerate(DRAGON_BONUS_PAYTABLES))):
        odds = dragon_odds(tables, tables.paytable_key(pl.lit(index)))
        hit = (odds != own) & (odds * pl.col("stake_c") == pl.col("payout_c"))
        found = pl.when(hit.fill_null(False)).then(pl.lit(name)).otherwise(found)
    wrong = (
        (is_bet("dragon_bonus_banker") | is_bet("dragon_bonus_player"))
        & (pl.col("_due") == WIN)
        & (pl.col("_result") == WIN)
        & (pl.col("payout_c") != pl.col("due_payout_c"))
    )
    return pl.when(wrong.fill_null(False)).then(found)


def _net(result: str, payout: str, commission: str) -> pl.Expr:
    """The patron's net: payout less commission, less the stake lost on a `lose`."""
    lost = pl.when(pl.col(result) == LOSE).then(-pl.col("basis_c")).otherwise(0)
    return lost + pl.col(payout) - pl.col(commission)
