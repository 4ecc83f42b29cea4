"""The loaded packs in one table form: a few small frames keyed by `ruleset` that every
stage reads, so that no stage flattens the packs a way of its own.

`pack_tables(packs)` builds, once for a set of packs:
- `rulesets`: one row per ruleset (row `_r`, the ruleset's index among the packs);
- `bets`: one row per ruleset x contract bet (row `_r * NB + _b`: every bet of the
  contract, `bet_in_ruleset` false where the pack does not permit it);
- `calls`: one row per ruleset x bet x call slot (the contract's calls, then no call):
  whether the bet takes it, what it stakes against the Bank;
- `sizes`: one row per ruleset x deck or seat count 0-127 (Royal 9's limits);
- `steps`: one row per ruleset x commission percent 0-100 (the rounding step);
- `paytables`: one row per ruleset x Dragon Bonus paytable x odds key (0-9 a winning
  margin, 10 a Natural winner);
- `royal9_paytables`: one row per ruleset x Royal 9 paytable, its lines in priority order;
- `royal9_chairs`: one row per ruleset x default chair x combination posted there;
- `draw_cells`: the Banker's draw cells of every ruleset.

One naming rule: a rule's parameter is `<rule>_<param>`, its citation (`"ruleset ref"`)
`<rule>_citation`, both null where the ruleset has no such rule. Every procedure of
`auditor.packs.procedures.PROCEDURES` is there under its own name and parameters (a
switch's `<rule>_value`), whether it is switched on or not: what a stage does where a
rule is off or missing (skip the check, cite the list of wagers instead) is the stage's
reading, written where it reads.

The frames are dense and ordered, so a stage looks a term up by position (a gather) and
not by a join over millions of rows. `PackTables` owns both sides of that: the keys it
encodes (`ruleset_index`, `bet_key`, `call_slot`, `size_key`, `step_key`,
`paytable_key`, `odds_key`) and their decoding (`ruleset_of`, `decode_bet_key`, ...).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from auditor.contract import BETS, CALLS, DRAGON_BONUS_PAYTABLES
from auditor.packs.model import TABLE_OPTIONS, RulePack
from auditor.packs.procedures import PROCEDURES
from auditor.packs.sections import Royal9Limits

NB = len(BETS)
CALL_SLOTS = len(CALLS) + 1  # the contract's calls, then "no call"
SIZES = 128  # decks and seats are int8
NATURAL_KEY = 10  # Dragon Bonus odds key of a Natural winner; 0-9 are winning margins
ODDS_KEYS = NATURAL_KEY + 1
PAYTABLES = len(DRAGON_BONUS_PAYTABLES)
PERCENTS = 101  # commission percents 0..100


@dataclass(frozen=True, eq=False)
class PackTables:
    """The packs' table form (see the module): frames, and the keys to read them by."""

    rulesets: pl.DataFrame
    bets: pl.DataFrame
    calls: pl.DataFrame
    sizes: pl.DataFrame
    steps: pl.DataFrame
    paytables: pl.DataFrame
    royal9_paytables: pl.DataFrame
    royal9_chairs: pl.DataFrame
    draw_cells: pl.DataFrame

    @property
    def ids(self) -> tuple[str, ...]:
        """The rulesets in index order (`_r`)."""
        return tuple(self.rulesets["ruleset"])

    # ---- encoding: what the stages gather by ----------------------------------------

    def ruleset_index(self, column: str = "ruleset") -> pl.Expr:
        """A ruleset id column as its index `_r` (Int32)."""
        return pl.col(column).cast(pl.Enum(self.ids)).to_physical().cast(pl.Int32)

    @staticmethod
    def bet_key(r: pl.Expr | None = None, b: pl.Expr | None = None) -> pl.Expr:
        """The row of `bets`: `_r * NB + _b` (the bet's index in the contract)."""
        return (pl.col("_r") if r is None else r) * NB + (pl.col("_b") if b is None else b)

    @staticmethod
    def call_slot() -> pl.Expr:
        """The row of `calls` for a wager's `call` (the last slot: none), by its `_rb`."""
        call = pl.col("call").cast(pl.Enum(CALLS)).to_physical().cast(pl.Int32)
        return pl.col("_rb") * CALL_SLOTS + call.fill_null(len(CALLS))

    @staticmethod
    def size_key(column: str) -> pl.Expr:
        """The row of `sizes` for a count column (decks, seats), clipped to 0-127."""
        return pl.col("_r") * SIZES + pl.col(column).cast(pl.Int32).clip(0, SIZES - 1)

    @staticmethod
    def step_key(percent: pl.Expr) -> pl.Expr:
        """The row of `steps` for a commission percent 0-100."""
        return pl.col("_r") * PERCENTS + percent

    @staticmethod
    def paytable_key(paytable: pl.Expr, r: pl.Expr | None = None) -> pl.Expr:
        """A ruleset x Dragon Bonus paytable (its index in the contract) as one number."""
        return (pl.col("_r") if r is None else r) * PAYTABLES + paytable

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
        """A column of `rulesets` for each row's ruleset index `_r`."""
        return pl.lit(self.rulesets[name]).gather(pl.col("_r"))

    def rb(self, name: str) -> pl.Expr:
        """A column of `bets` for each row's `_rb` (`bet_key`)."""
        return pl.lit(self.bets[name]).gather(pl.col("_rb"))

    def call_permitted(self) -> pl.Expr:
        """The wager's `call` (or its absence) is one its bet takes in its ruleset."""
        return pl.lit(self.calls["call_permitted"]).gather(self.call_slot())

    def royal9_table_permitted(self) -> pl.Expr:
        """The table's decks and seats are those a Royal 9 wager requires."""
        decks = pl.lit(self.sizes["royal9_limits_decks"]).gather(self.size_key("decks"))
        seats = pl.lit(self.sizes["royal9_limits_seats"]).gather(self.size_key("seats"))
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
        """`in_force(rule)` for each row's ruleset index `_r`."""
        return pl.lit(self.rulesets.select(self.in_force(rule)).to_series()).gather(pl.col("_r"))

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
def _tables(packs: tuple[tuple[str, RulePack], ...]) -> PackTables:
    return PackTables(
        rulesets=_rulesets(packs),
        bets=_bets(packs),
        calls=_frame(
            [(r, bet, *row) for r, pack in packs for bet in BETS for row in _calls(pack, bet)],
            ruleset=pl.String,
            bet=pl.String,
            call=pl.String,
            call_permitted=pl.Boolean,
            call_amount=pl.String,
            call_citation=pl.String,
        ),
        sizes=_frame(
            [(r, n, *_royal9_fits(pack, n)) for r, pack in packs for n in range(SIZES)],
            ruleset=pl.String,
            size=pl.Int32,
            royal9_limits_decks=pl.Boolean,
            royal9_limits_seats=pl.Boolean,
        ),
        steps=_frame(
            [
                (r, p, pack.commission.rounding_step_cents.value.get(p))
                for r, pack in packs
                for p in range(PERCENTS)
            ],
            ruleset=pl.String,
            percent=pl.Int32,
            commission_rounding_step_cents=pl.Int64,
        ),
        paytables=_paytables(packs),
        royal9_paytables=_royal9_paytables(packs),
        royal9_chairs=_frame(
            [
                (r, chair, combo)
                for r, pack in packs
                for chair, combos in _royal9_chairs(pack).items()
                for combo in combos
            ],
            ruleset=pl.String,
            royal9_chair=pl.Int64,
            royal9_combo=pl.String,
        ),
        draw_cells=pl.concat(
            [pack.banker_draw_frame().with_columns(ruleset=pl.lit(r)) for r, pack in packs]
        ),
    )


def _frame(rows: list[tuple[Any, ...]], **schema: pl.DataType) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema, orient="row")


def _royal9_fits(pack: RulePack, n: int) -> tuple[bool, bool]:
    """Whether a Royal 9 wager may be taken with `n` decks, and at `n` seats."""
    limits = pack.limits.royal9
    return bool(limits and n in limits.decks), bool(
        limits and (limits.seats is None or n in limits.seats)
    )


def _royal9_chairs(pack: RulePack) -> dict[int, tuple[str, ...]]:
    royal9 = pack.payouts.royal9
    return dict(royal9.seat_combinations.chairs or {}) if royal9 else {}


def _calls(pack: RulePack, bet: str) -> list[tuple[Any, ...]]:
    """(call, permitted, amount, citation) for each call of the contract, then no call
    (permitted where the bet takes none)."""
    entry = pack.bets.get(bet)
    rows = []
    for name in CALLS:
        call = entry.calls.get(name) if entry else None
        cite = pack.cite(call.cite) if call else None
        rows.append((name, call is not None, call.amount if call else None, cite))
    return [*rows, (None, not (entry and entry.calls), None, None)]


def _bets(packs: tuple[tuple[str, RulePack], ...]) -> pl.DataFrame:
    rows = []
    for ruleset, pack in packs:
        pay, com = pack.payouts, pack.commission
        rollover = pack.procedure("house_money_rollover")
        odds = {"player": pay.player.value, "banker": pay.banker.odds}
        cites = {"player": pay.player.cite, "banker": pay.banker.cite}
        for name in ("dragon7", "panda8"):
            item = getattr(pay, name)
            if item is not None:
                odds[name], cites[name] = item.value, item.cite
        for name in ("tie", "house_money"):
            item = getattr(pay, name)
            if item is not None:
                cites[name] = item.cite
        exempt = com.exempt.value if com.exempt else ()
        for bet in BETS:
            entry = pack.bets.get(bet)
            rows.append(
                {
                    "ruleset": ruleset,
                    "bet": bet,
                    "bet_in_ruleset": entry is not None,
                    "bet_requires": None if entry is None else requires_code(entry.requires),
                    "bet_citation": pack.cite(entry.cite) if entry else None,
                    "bet_calls": sorted(entry.calls) if entry else [],
                    "payout_odds": odds.get(bet),
                    "payout_citation": pack.cite(cites[bet]) if bet in cites else None,
                    "commission_bets_listed": bet in com.bets.value,
                    "commission_exempt_citation": pack.cite(com.exempt.cite)
                    if com.exempt and bet in exempt
                    else None,
                    "house_money_rollover_target": rollover is not None and bet in rollover["onto"],
                    # A wager of this bet is against the Bank, whatever its call (INDEX
                    # Ambiguity 27): the Bank covers its stake.
                    "banker_payout_covered_by": bet in (pay.banker.covered_by or ()),
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "ruleset": pl.String,
            "bet": pl.String,
            "bet_in_ruleset": pl.Boolean,
            "bet_requires": pl.Int8,
            "bet_citation": pl.String,
            "bet_calls": pl.List(pl.String),
            "payout_odds": pl.Int64,
            "payout_citation": pl.String,
            "commission_bets_listed": pl.Boolean,
            "commission_exempt_citation": pl.String,
            "house_money_rollover_target": pl.Boolean,
            "banker_payout_covered_by": pl.Boolean,
        },
    )


def requires_code(option: str | None) -> int:
    """A bet's `requires` as a small code: 0 nothing, else 1 + its index in TABLE_OPTIONS."""
    return 0 if option is None else 1 + TABLE_OPTIONS.index(option)


def requires_option(code: int) -> str | None:
    """The decoding of `requires_code`."""
    return None if code == 0 else TABLE_OPTIONS[code - 1]


def _rulesets(packs: tuple[tuple[str, RulePack], ...]) -> pl.DataFrame:
    rows = [{"ruleset": ruleset, **_ruleset_row(pack)} for ruleset, pack in packs]
    # A parameter that is a table of its own (discards by rank) stays in the pack.
    tables = {key for row in rows for key, value in row.items() if isinstance(value, dict)}
    rows = [{key: value for key, value in row.items() if key not in tables} for row in rows]
    frame = pl.DataFrame(rows, infer_schema_length=None)
    # A column no pack gives a value (a rule no ruleset has) is typed as text.
    return frame.with_columns(
        pl.col(pl.Null).cast(pl.String),
        pl.col("royal9_limits_seats").cast(pl.List(pl.Int32)),
    )


def _ruleset_row(pack: RulePack) -> dict[str, Any]:
    pay, com, lim = pack.payouts, pack.commission, pack.limits
    cite = pack.cite
    push, none_at_ez = pack.ez.banker_push_on, com.none_at_ez
    r9, r9_limits, seats = pay.royal9, lim.royal9, lim.seats
    row: dict[str, Any] = {
        "bets_citation": cite(pack.bets_cite),
        "banker_payout_covered": pay.banker.basis == "covered",
        # A Natural given a third card: its round's wagers are settled on each hand's
        # first two cards (INDEX Ambiguity 28).
        "natural_drawn_two": pack.natural_drawn.value == "first_two_cards",
        "natural_drawn_citation": cite(pack.natural_drawn.cite),
        "ez_push_event": push.value if push else None,
        "ez_push_citation": cite(push.cite) if push else None,
        "commission_none_at_ez_value": bool(none_at_ez and none_at_ez.value),
        "commission_none_at_ez_citation": cite(none_at_ez.cite) if none_at_ez else None,
        "commission_percents_min": min(com.percents.value),
        "commission_percents_max": max(com.percents.value),
        "commission_percents_citation": cite(com.percents.cite),
        "commission_rounding_citation": cite(com.rounding_step_cents.cite),
        "commission_bets_citation": cite(com.bets.cite),
        "commission_collection_modes": list(com.collection.value),
        "commission_collection_citation": cite(com.collection.cite),
        "tie_payout_min_odds": pay.tie.min_odds if pay.tie else None,
        "tie_payout_citation": cite(pay.tie.cite) if pay.tie else None,
        "house_money_payout_both": pay.house_money.both if pay.house_money else None,
        "house_money_payout_one": pay.house_money.one if pay.house_money else None,
        "royal9_wager_cents": int(r9.wager.value * 100) if r9 else None,
        "royal9_wager_citation": cite(r9.wager.cite) if r9 else None,
        "royal9_limits_seats": list(r9_limits.seats) if r9_limits and r9_limits.seats else None,
        "royal9_limits_words": royal9_limits_words(r9_limits) if r9_limits else None,
        "royal9_limits_citation": cite(r9_limits.cite) if r9_limits else None,
        "seats_min": seats.min if seats else None,
        "seats_max": seats.max if seats else None,
        "seats_citation": cite(seats.cite) if seats else None,
    }
    for name, params in PROCEDURES.items():
        procedure = pack.procedure(name)
        for param in params:
            value = None if procedure is None else procedure[param]
            row[f"{name}_{param}"] = list(value) if isinstance(value, tuple) else value
        row[f"{name}_citation"] = None if procedure is None else cite(procedure.cite)
    return row


def _paytables(packs: tuple[tuple[str, RulePack], ...]) -> pl.DataFrame:
    rows = []
    for ruleset, pack in packs:
        for name in DRAGON_BONUS_PAYTABLES:
            table = pack.payouts.dragon_bonus.get(name)
            cite = pack.cite(table.cite) if table else None
            for key in range(ODDS_KEYS):
                odds = None if table is None else table.win_by.get(key)
                if table is not None and key == NATURAL_KEY:
                    odds = table.natural_winner
                rows.append((ruleset, name, key, odds, cite))
    return _frame(
        rows,
        ruleset=pl.String,
        paytable=pl.String,
        key=pl.Int32,
        dragon_bonus_odds=pl.Int64,
        dragon_bonus_citation=pl.String,
    )


ROYAL9_LINE = pl.Struct({"name": pl.String, "match": pl.String, "amount_cents": pl.Int64})


def _royal9_paytables(packs: tuple[tuple[str, RulePack], ...]) -> pl.DataFrame:
    rows = []
    for ruleset, pack in packs:
        royal9 = pack.payouts.royal9
        for name, table in (royal9.paytables if royal9 else {}).items():
            award = table.random_award
            rows.append(
                {
                    "ruleset": ruleset,
                    "paytable": name,
                    "royal9_paytable_citation": pack.cite(table.cite),
                    # A random award the paytable allows with no line (null: none).
                    "royal9_paytable_random_award_citation": pack.cite(award.cite)
                    if award and award.value
                    else None,
                    "royal9_paytable_lines": [
                        {
                            "name": line.name,
                            "match": line.match,
                            "amount_cents": None if line.amount is None else int(line.amount * 100),
                        }
                        for line in table.lines
                    ],
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "ruleset": pl.String,
            "paytable": pl.String,
            "royal9_paytable_citation": pl.String,
            "royal9_paytable_random_award_citation": pl.String,
            "royal9_paytable_lines": pl.List(ROYAL9_LINE),
        },
    )


def royal9_limits_words(limits: Royal9Limits) -> str:
    """ "8 decks" / "6 or 8 decks and 6 or 7 seats" """
    words = f"{_or(limits.decks)} decks"
    return words if limits.seats is None else f"{words} and {_or(limits.seats)} seats"


def _or(values: tuple[int, ...]) -> str:
    return " or ".join(str(v) for v in values)
