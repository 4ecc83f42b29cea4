"""Pack terms as small lookup series, and money in integer cents.

The settlement stage reads each wager's terms (odds, citations, commission, limits)
from the packs. They are built once into series indexed densely by ruleset (`_r`) and
by ruleset x bet (`_rb`), and gathered by that index for every row: a lookup by
position, with no hash join over millions of wagers. Money is integer cents from the
first step (a Decimal(18,2) column is read through its unscaled value) and becomes
Decimal dollars again only for `impact` (ECOSYSTEM: never floats).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from auditor.codes import code
from auditor.contract import BETS, CALLS, DRAGON_BONUS_PAYTABLES
from auditor.money import usd
from auditor.packs.model import TABLE_OPTIONS, Royal9Limits, RulePack

NB = len(BETS)
CALL_SLOTS = len(CALLS) + 1  # the contract's calls, then "no call"
SIZES = 128  # decks and seats are int8
NATURAL_KEY = 10  # Dragon Bonus odds key of a Natural winner; 0-9 are winning margins
PERCENTS = 101  # commission percents 0..100 in the step lookup
BET_WORDS = {
    "banker": "Banker wager",
    "player": "Player wager",
    "tie": "Tie wager",
    "dragon_bonus_banker": "Dragon Bonus on the Banker",
    "dragon_bonus_player": "Dragon Bonus on the Player",
    "dragon7": "Dragon 7 Insurance",
    "panda8": "Panda 8 Insurance",
    "house_money": "House Money wager",
    "royal9": "Royal 9 wager",
}


def cents(column: str) -> pl.Expr:
    """A Decimal(18,2) column as Int64 cents: its unscaled value, exact."""
    return pl.col(column).to_physical().cast(pl.Int64)


def dollars(cents_expr: pl.Expr) -> pl.Expr:
    """Int64 cents back to exact dollars (Decimal; scale 2 is kept, nothing is rounded)."""
    return cents_expr.cast(pl.Decimal(38, 2)) / 100


# ---- the packs as lookup series ------------------------------------------------------


def is_bet(name: str) -> pl.Expr:
    return pl.col("_b") == code(name, BETS)


# The logged result is the one the cards give (codes `_result`, `_due`: settlement.py).
SAME_RESULT = pl.col("_result") == pl.col("_due")


def stake_words() -> pl.Expr:
    """ "$37.50", "$25.00 + $75.00 rollover", or "$500.00, covered $300.00" """
    own = (
        pl.when(pl.col("rollover_c") > 0)
        .then(pl.format("{} + {} rollover", usd(pl.col("amount_c")), usd(pl.col("rollover_c"))))
        .otherwise(usd(pl.col("amount_c")))
    )
    return (
        pl.when(is_bet("banker") & pl.col("_covered_basis"))
        .then(pl.format("{}, covered {}", own, usd(pl.col("basis_c"))))
        .otherwise(own)
    )


@dataclass(frozen=True)
class Terms:
    """Pack terms as series indexed by ruleset (`_r`), ruleset x bet (`_rb`) and more.

    Built once from the packs; `rb(name)` / `r(name)` gather a term for every row.
    """

    rulesets: tuple[str, ...]
    covering_bets: tuple[str, ...]  # the bets some pack counts against a Bank (`covers_bank`)
    by_bet: pl.DataFrame  # row _r * NB + _b
    by_ruleset: pl.DataFrame  # row _r
    steps: pl.Series  # row _r * PERCENTS + percent: rounding step in cents
    dragon_odds: pl.Series  # row (_r * 3 + paytable) * 11 + margin key: odds
    dragon_cites: pl.Series  # row _r * 3 + paytable
    calls_ok: pl.Series  # row _rb * CALL_SLOTS + call index (no call: last slot)
    royal9_decks_ok: pl.Series  # row _r * SIZES + decks: Royal 9 allowed with these decks
    royal9_seats_ok: pl.Series  # row _r * SIZES + seats

    def rb(self, name: str) -> pl.Expr:
        return pl.lit(self.by_bet[name]).gather(pl.col("_rb"))

    def r(self, name: str) -> pl.Expr:
        return pl.lit(self.by_ruleset[name]).gather(pl.col("_r"))

    def ruleset_index(self) -> pl.Expr:
        return pl.col("ruleset").cast(pl.Enum(self.rulesets)).to_physical().cast(pl.Int32)

    def call_permitted(self) -> pl.Expr:
        """The wager's `call` (or its absence) is one its bet takes in its ruleset."""
        call = pl.col("call").cast(pl.Enum(CALLS)).to_physical().cast(pl.Int32)
        slot = pl.col("_rb") * CALL_SLOTS + call.fill_null(len(CALLS))
        return pl.lit(self.calls_ok).gather(slot)

    def royal9_table_permitted(self) -> pl.Expr:
        """The table's decks and seats are those a Royal 9 wager requires."""
        decks = pl.col("_r") * SIZES + pl.col("decks").cast(pl.Int32).clip(0, SIZES - 1)
        seats = pl.col("_r") * SIZES + pl.col("seats").cast(pl.Int32).clip(0, SIZES - 1)
        return pl.lit(self.royal9_decks_ok).gather(decks) & pl.lit(self.royal9_seats_ok).gather(
            seats
        )


def build_terms(packs: Mapping[str, RulePack]) -> Terms:
    rulesets = tuple(packs)
    bet_rows = []
    calls_ok: list[bool] = []
    decks_ok: list[bool] = []
    seats_ok: list[bool] = []
    for pack in packs.values():
        pay, com = pack.payouts, pack.commission
        rollover = pack.procedure("house_money_rollover")
        limits = pack.limits.royal9
        decks_ok += [bool(limits and n in limits.decks) for n in range(SIZES)]
        seats_ok += [
            bool(limits and (limits.seats is None or n in limits.seats)) for n in range(SIZES)
        ]
        odds = {"player": pay.player.value, "banker": pay.banker.odds}
        payout_cites = {"player": pay.player.cite, "banker": pay.banker.cite}
        for name in ("dragon7", "panda8"):
            item = getattr(pay, name)
            if item is not None:
                odds[name], payout_cites[name] = item.value, item.cite
        if pay.tie is not None:
            payout_cites["tie"] = pay.tie.cite
        if pay.house_money is not None:
            payout_cites["house_money"] = pay.house_money.cite
        exempt = com.exempt.value if com.exempt else ()
        for bet in BETS:
            entry = pack.bets.get(bet)
            bet_rows.append(
                {
                    "in_ruleset": entry is not None,
                    "requires": None
                    if entry is None
                    else 0
                    if entry.requires is None
                    else 1 + TABLE_OPTIONS.index(entry.requires),
                    "bet_cite": pack.cite(entry.cite) if entry else None,
                    "odds": odds.get(bet),
                    "payout_cite": pack.cite(payout_cites[bet]) if bet in payout_cites else None,
                    "commission_bet": bet in com.bets.value,
                    "exempt_cite": pack.cite(com.exempt.cite)
                    if com.exempt and bet in exempt
                    else None,
                    "calls": sorted(entry.calls) if entry else [],
                    "rollover_target": rollover is not None and bet in rollover["onto"],
                    # A wager of this bet is against the Bank, whatever its call (INDEX
                    # Ambiguity 27): the Bank covers its stake.
                    "covers_bank": bet in (pay.banker.covered_by or ()),
                }
            )
            calls_ok += [(call in entry.calls) if entry else False for call in CALLS] + [
                not (entry and entry.calls)
            ]
    ruleset_rows = []
    steps: list[int | None] = []
    dragon_odds: list[int | None] = []
    dragon_cites: list[str | None] = []
    for pack in packs.values():
        pay, com, lim = pack.payouts, pack.commission, pack.limits
        r9 = pay.royal9
        proc = pack.procedure
        rollover = proc("house_money_rollover")
        late = proc("no_wager_after_no_more_bets")
        free = proc("free_hands")
        simulated = proc("no_wagers_on_simulated")
        void = proc("void_ends_shoe")
        ruleset_rows.append(
            {
                "bets_cite": pack.cite(pack.bets_cite),
                "covered": pay.banker.basis == "covered",
                # A Natural given a third card: its round's wagers are settled on each
                # hand's first two cards (INDEX Ambiguity 28).
                "natural_drawn_two": pack.natural_drawn.value == "first_two_cards",
                "natural_drawn_cite": pack.cite(pack.natural_drawn.cite),
                "push_event": pack.ez.banker_push_on.value if pack.ez.banker_push_on else None,
                "push_cite": pack.cite(pack.ez.banker_push_on.cite)
                if pack.ez.banker_push_on
                else None,
                "none_at_ez": bool(com.none_at_ez and com.none_at_ez.value),
                "none_at_ez_cite": pack.cite(com.none_at_ez.cite) if com.none_at_ez else None,
                "pct_min": min(com.percents.value),
                "pct_max": max(com.percents.value),
                "percents_cite": pack.cite(com.percents.cite),
                "rounding_cite": pack.cite(com.rounding_step_cents.cite),
                "commission_bets_cite": pack.cite(com.bets.cite),
                "tie_min": pay.tie.min_odds if pay.tie else None,
                "tie_cite": pack.cite(pay.tie.cite) if pay.tie else None,
                "hm_both": pay.house_money.both if pay.house_money else None,
                "hm_one": pay.house_money.one if pay.house_money else None,
                "r9_wager_c": int(r9.wager.value * 100) if r9 else None,
                "r9_wager_cite": pack.cite(r9.wager.cite) if r9 else None,
                "r9_limits_words": _royal9_limits_words(lim.royal9) if lim.royal9 else None,
                "r9_limits_cite": pack.cite(lim.royal9.cite) if lim.royal9 else None,
                "late_cite": pack.cite(late.cite) if late and late["value"] else None,
                "seats_cite": pack.cite(lim.seats.cite if lim.seats else pack.bets_cite),
                "free_cite": pack.cite(free.cite if free else pack.bets_cite),
                "simulated_cite": pack.cite(simulated.cite if simulated else pack.bets_cite),
                "void_cite": pack.cite(void.cite) if void else pack.cite(pack.bets_cite),
                "rollover_onto": " or ".join(rollover["onto"]) if rollover else None,
                "rollover_cite": pack.cite(rollover.cite if rollover else pack.bets_cite),
            }
        )
        step = com.rounding_step_cents.value
        steps += [step.get(p) for p in range(PERCENTS)]
        for name in DRAGON_BONUS_PAYTABLES:
            table = pay.dragon_bonus.get(name)
            dragon_cites.append(pack.cite(table.cite) if table else None)
            for key in range(NATURAL_KEY + 1):
                if table is None:
                    dragon_odds.append(None)
                elif key == NATURAL_KEY:
                    dragon_odds.append(table.natural_winner)
                else:
                    dragon_odds.append(table.win_by.get(key))
    return Terms(
        rulesets=rulesets,
        covering_bets=tuple(
            bet
            for bet in BETS
            if any(bet in (p.payouts.banker.covered_by or ()) for p in packs.values())
        ),
        by_bet=pl.DataFrame(
            bet_rows,
            schema={
                "in_ruleset": pl.Boolean,
                "requires": pl.Int8,
                "bet_cite": pl.String,
                "odds": pl.Int64,
                "payout_cite": pl.String,
                "commission_bet": pl.Boolean,
                "exempt_cite": pl.String,
                "calls": pl.List(pl.String),
                "rollover_target": pl.Boolean,
                "covers_bank": pl.Boolean,
            },
        ),
        by_ruleset=pl.DataFrame(ruleset_rows, infer_schema_length=None).with_columns(
            pl.col("r9_limits_words", "rollover_onto").cast(pl.String),
            pl.col("pct_min", "pct_max", "tie_min", "hm_both", "hm_one", "r9_wager_c").cast(
                pl.Int64
            ),
        ),
        steps=pl.Series("steps", steps, dtype=pl.Int64),
        dragon_odds=pl.Series("dragon_odds", dragon_odds, dtype=pl.Int64),
        dragon_cites=pl.Series("dragon_cites", dragon_cites, dtype=pl.String),
        calls_ok=pl.Series("calls_ok", calls_ok, dtype=pl.Boolean),
        royal9_decks_ok=pl.Series("royal9_decks_ok", decks_ok, dtype=pl.Boolean),
        royal9_seats_ok=pl.Series("royal9_seats_ok", seats_ok, dtype=pl.Boolean),
    )


def _or(values: tuple[int, ...]) -> str:
    return " or ".join(str(v) for v in values)


def _royal9_limits_words(limits: Royal9Limits) -> str:
    """ "8 decks" / "6 or 8 decks and 6 or 7 seats" """
    words = f"{_or(limits.decks)} decks"
    return words if limits.seats is None else f"{words} and {_or(limits.seats)} seats"
