"""The loaded packs in one table form: a few small frames keyed by `ruleset` that every
stage reads, so that no stage flattens the packs a way of its own.

`pack_tables(packs)` builds, once for a set of packs:
- `rulesets`: one row per ruleset (row `pack_ruleset_index`, the ruleset's index among
  the packs);
- `bets`: one row per ruleset x contract bet (row `pack_ruleset_index * NB + bet_index`:
  every bet of the contract, `bet_in_ruleset` false where the pack does not permit it);
- `calls`: one row per ruleset x bet x call slot (the contract's calls, then no call):
  whether the bet takes it, what it stakes against the Bank;
- `sizes`: one row per ruleset x deck or seat count 0-127 (Royal 9's limits);
- `ranks`: one row per ruleset x card rank (its point value, the cards burned after it,
  the cards an irregularity may discard from it);
- `steps`: one row per ruleset x commission percent 0-100 (the rounding step);
- `paytables`: one row per ruleset x Dragon Bonus paytable x odds key (0-9 a winning
  margin, 10 a Natural winner);
- `royal9_paytables`: one row per ruleset x Royal 9 paytable, its lines in priority order;
- `royal9_chairs`: one row per ruleset x default chair x combination posted there;
- `draw_cells`: the Banker's draw cells of every ruleset (`rows.banker_cells`);
- `player_cells`: the Player's action on each two-card total 0-7 of every ruleset.

One naming rule: a rule's parameter is `<rule>_<param>`, its citation (`"ruleset ref"`)
`<rule>_citation`, both null where the ruleset has no such rule. Every procedure of
`auditor.packs.procedures.PROCEDURES` is there under its own name and parameters (a
switch's `<rule>_value`), whether it is switched on or not; `rulesets_in_force` is the
view in which a rule switched off reads as one the pack does not give. What a stage does
where a rule is off or missing (skip the check, cite the list of wagers instead) is the
stage's reading, written where it reads. How each pack becomes rows: `auditor.packs.rows`.

The frames are dense and ordered, so a stage looks a term up by position (a gather) and
not by a join over millions of rows. `PackTables` owns both sides of that: the keys it
encodes (`ruleset_index`, `bet_key`, `call_slot`, `size_key`, `step_key`,
`paytable_key`, `margin_key`, `odds_key`, `requires_code`) and their decoding
(`ruleset_of`, `decode_bet_key`, `decode_call_slot`, `decode_paytable_key`,
`requires_option`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from auditor.codes import enum_code
from auditor.contract import BETS, CALLS, DRAGON_BONUS_PAYTABLES
from auditor.packs import rows
from auditor.packs.model import RulePack
from auditor.packs.rows import (
    CALL_SLOTS,
    NATURAL_KEY,
    NB,
    ODDS_KEYS,
    PAYTABLES,
    PERCENTS,
    SIZES,
    requires_code,
    requires_option,
)

__all__ = [
    "CALL_SLOTS",
    "NATURAL_KEY",
    "NB",
    "ODDS_KEYS",
    "PAYTABLES",
    "PERCENTS",
    "SIZES",
    "PackTables",
    "pack_tables",
    "requires_code",
    "requires_option",
]


@dataclass(frozen=True, eq=False)
class PackTables:
    """The packs' table form (see the module): frames, and the keys to read them by."""

    rulesets: pl.DataFrame
    bets: pl.DataFrame
    calls: pl.DataFrame
    sizes: pl.DataFrame
    ranks: pl.DataFrame
    steps: pl.DataFrame
    paytables: pl.DataFrame
    royal9_paytables: pl.DataFrame
    royal9_chairs: pl.DataFrame
    draw_cells: pl.DataFrame
    player_cells: pl.DataFrame

    @property
    def ids(self) -> tuple[str, ...]:
        """The rulesets in index order (`pack_ruleset_index`)."""
        return tuple(self.rulesets["ruleset"])

    # ---- encoding: what the stages gather by ----------------------------------------

    def ruleset_index(self, column: str = "ruleset") -> pl.Expr:
        """A ruleset id column as its index `pack_ruleset_index` (Int32)."""
        return enum_code(column, self.ids)

    @staticmethod
    def bet_key(r: pl.Expr | None = None, b: pl.Expr | None = None) -> pl.Expr:
        """The row of `bets`: `pack_ruleset_index * NB + bet_index` (the bet's index in the
        contract)."""
        return (pl.col("pack_ruleset_index") if r is None else r) * NB + (
            pl.col("bet_index") if b is None else b
        )

    @staticmethod
    def call_slot() -> pl.Expr:
        """The row of `calls` for a wager's `call` (the last slot: none), by its `pack_bet_row`."""
        call = enum_code("call", CALLS)
        return pl.col("pack_bet_row") * CALL_SLOTS + call.fill_null(len(CALLS))

    @staticmethod
    def size_key(column: str) -> pl.Expr:
        """The row of `sizes` for a count column (decks, seats), clipped to 0-127."""
        return pl.col("pack_ruleset_index") * SIZES + pl.col(column).cast(pl.Int32).clip(
            0, SIZES - 1
        )

    @staticmethod
    def step_key(percent: pl.Expr) -> pl.Expr:
        """The row of `steps` for a commission percent 0-100."""
        return pl.col("pack_ruleset_index") * PERCENTS + percent

    @staticmethod
    def paytable_key(paytable: pl.Expr, r: pl.Expr | None = None) -> pl.Expr:
        """A ruleset x Dragon Bonus paytable (its index in the contract) as one number."""
        return (pl.col("pack_ruleset_index") if r is None else r) * PAYTABLES + paytable

    @staticmethod
    def margin_key(own_natural: pl.Expr, margin: pl.Expr) -> pl.Expr:
        """A Dragon Bonus odds key: `NATURAL_KEY` for a Natural winner, else the winning
        margin (0-9; a loss is clipped to 0, which no paytable pays)."""
        return pl.when(own_natural).then(NATURAL_KEY).otherwise(margin.clip(0, NATURAL_KEY - 1))

    @staticmethod
    def odds_key(table: pl.Expr, key: pl.Expr) -> pl.Expr:
        """The row of `paytables` for a paytable key and an odds key (margin, Natural)."""
        return table * ODDS_KEYS + key

    # ---- decoding ----------------------------------------------------------------------

    def ruleset_of(self, r: int) -> str:
        return self.ids[r]

    def decode_bet_key(self, rb: int) -> tuple[str, str]:
        """(ruleset, bet) of a row of `bets`."""
        return self.ids[rb // NB], BETS[rb % NB]

    def decode_call_slot(self, slot: int) -> tuple[str, str, str | None]:
        """(ruleset, bet, call or None) of a row of `calls`."""
        ruleset, bet = self.decode_bet_key(slot // CALL_SLOTS)
        call = slot % CALL_SLOTS
        return ruleset, bet, None if call == len(CALLS) else CALLS[call]

    def decode_paytable_key(self, table: int) -> tuple[str, str]:
        """(ruleset, paytable) of a paytable key."""
        return self.ids[table // PAYTABLES], DRAGON_BONUS_PAYTABLES[table % PAYTABLES]

    # ---- lookups: a term for every row -------------------------------------------------

    def r(self, name: str) -> pl.Expr:
        """A column of `rulesets` for each row's ruleset index `pack_ruleset_index`."""
        return pl.lit(self.rulesets[name]).gather(pl.col("pack_ruleset_index"))

    def rb(self, name: str) -> pl.Expr:
        """A column of `bets` for each row's `pack_bet_row` (`bet_key`)."""
        return pl.lit(self.bets[name]).gather(pl.col("pack_bet_row"))

    def call_permitted(self) -> pl.Expr:
        """The wager's `call` (or its absence) is one its bet takes in its ruleset."""
        return pl.lit(self.calls["call_permitted"]).gather(self.call_slot())

    def royal9_table_permitted(self) -> pl.Expr:
        """The table's decks and seats are those a Royal 9 wager requires."""
        decks = pl.lit(self.sizes["royal9_limits_decks_allowed"]).gather(self.size_key("decks"))
        seats = pl.lit(self.sizes["royal9_limits_seats_allowed"]).gather(self.size_key("seats"))
        return decks & seats

    def commission_step(self, percent: pl.Expr) -> pl.Expr:
        """The rounding step (cents) of the row's ruleset at `percent`."""
        return pl.lit(self.steps["commission_rounding_step_cents"]).gather(self.step_key(percent))

    def dragon_odds(self, table: pl.Expr, key: pl.Expr) -> pl.Expr:
        """Dragon Bonus odds at paytable key `table` for odds key `key` (null: no win)."""
        return pl.lit(self.paytables["dragon_bonus_odds"]).gather(self.odds_key(table, key))

    def dragon_citation(self, table: pl.Expr) -> pl.Expr:
        """The citation of the paytable at key `table` (null: the ruleset has none)."""
        return pl.lit(self.paytables["dragon_bonus_citation"]).gather(
            self.odds_key(table, pl.lit(0))
        )

    def in_force(self, rule: str) -> pl.Expr:
        """Over `rulesets`: the rule's citation where the pack gives the rule and, where
        the rule is a switch (`<rule>_value`), switches it on; else null."""
        citation = pl.col(f"{rule}_citation")
        if f"{rule}_value" in self.rulesets.columns:
            return pl.when(pl.col(f"{rule}_value")).then(citation)
        return citation

    def r_in_force(self, rule: str) -> pl.Expr:
        """`in_force(rule)` for each row's ruleset index `pack_ruleset_index`."""
        return pl.lit(self.rulesets.select(self.in_force(rule)).to_series()).gather(
            pl.col("pack_ruleset_index")
        )

    def rulesets_in_force(self) -> pl.DataFrame:
        """`rulesets` as a rule's checks read it: where a rule is a switch that the pack
        switches off (`<rule>_value` false), its citation and parameters are null, as
        where the pack does not give the rule."""
        exprs = []
        for rule in (c.removesuffix("_value") for c in self.rulesets.columns):
            if f"{rule}_value" not in self.rulesets.columns:
                continue
            on = pl.col(f"{rule}_value")
            exprs += [
                pl.when(on).then(pl.col(c)).alias(c)
                for c in self.rulesets.columns
                if c.startswith(f"{rule}_") and c != f"{rule}_value"
            ]
        return self.rulesets.with_columns(exprs)

    def covering_bets(self) -> tuple[str, ...]:
        """The bets some pack counts against a Bank (`banker_payout_covered_by`)."""
        covering = set(self.bets.filter("banker_payout_covered_by")["bet"])
        return tuple(bet for bet in BETS if bet in covering)


def pack_tables(packs: Mapping[str, RulePack]) -> PackTables:
    """The table form of `packs` (in their order), built once per set of packs."""
    return _tables(tuple(packs.items()))


@functools.lru_cache(maxsize=16)
def _tables(packs: rows.Packs) -> PackTables:
    return PackTables(
        rulesets=rows.rulesets(packs),
        bets=rows.bets(packs),
        calls=rows.frame(
            [(r, bet, *row) for r, pack in packs for bet in BETS for row in rows.calls(pack, bet)],
            ruleset=pl.String,
            bet=pl.String,
            call=pl.String,
            call_permitted=pl.Boolean,
            call_amount=pl.String,
            call_citation=pl.String,
        ),
        sizes=rows.frame(
            [(r, n, *rows.royal9_fits(pack, n)) for r, pack in packs for n in range(SIZES)],
            ruleset=pl.String,
            size=pl.Int32,
            royal9_limits_decks_allowed=pl.Boolean,
            royal9_limits_seats_allowed=pl.Boolean,
        ),
        ranks=rows.frame(
            [
                (
                    r,
                    rank,
                    card.value_of(rank),
                    pack.cite(card.cite),
                    burn.value_of(rank),
                    pack.cite(burn.cite),
                    rows.discards_allowed(pack, rank),
                )
                for r, pack in packs
                for rank, card in pack.card_values.items()
                for burn in [pack.burn_values[rank]]
            ],
            ruleset=pl.String,
            rank=pl.String,
            card_value=pl.Int32,
            card_value_citation=pl.String,
            burn_value=pl.Int32,
            burn_value_citation=pl.String,
            irregular_discards_allowed=pl.List(pl.Int64),
        ),
        steps=rows.frame(
            [
                (r, p, pack.commission.rounding.step_cents.get(p))
                for r, pack in packs
                for p in range(PERCENTS)
            ],
            ruleset=pl.String,
            percent=pl.Int32,
            commission_rounding_step_cents=pl.Int64,
        ),
        paytables=rows.paytables(packs),
        royal9_paytables=rows.royal9_paytables(packs),
        royal9_chairs=rows.frame(
            [
                (r, chair, combo)
                for r, pack in packs
                for chair, combos in rows.royal9_chairs(pack).items()
                for combo in combos
            ],
            ruleset=pl.String,
            royal9_chair=pl.Int64,
            royal9_combo=pl.String,
        ),
        draw_cells=rows.banker_cells(packs),
        player_cells=rows.player_cells(packs),
    )
