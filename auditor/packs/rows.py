"""How each loaded pack becomes rows of the packs' table form (`auditor.packs.tables`):
the frames' builders, their sizes and the codes they store. Read through `PackTables`;
the naming rule (`<rule>_<param>`, `<rule>_citation`) is written here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.contract import BETS, CALLS, DRAGON_BONUS_PAYTABLES
from auditor.packs.model import TABLE_OPTIONS, RulePack
from auditor.packs.procedures import PROCEDURES
from auditor.packs.sections import Royal9Limits

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

NB = len(BETS)
CALL_SLOTS = len(CALLS) + 1  # the contract's calls, then "no call"
SIZES = 128  # decks and seats are int8
NATURAL_KEY = 10  # Dragon Bonus odds key of a Natural winner; 0-9 are winning margins
ODDS_KEYS = NATURAL_KEY + 1
PAYTABLES = len(DRAGON_BONUS_PAYTABLES)
PERCENTS = 101  # commission percents 0..100

Packs = tuple[tuple[str, RulePack], ...]  # (ruleset, pack) in the packs' order


def frame(rows: list[tuple[Any, ...]], **schema: PolarsDataType) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema, orient="row")


def royal9_fits(pack: RulePack, n: int) -> tuple[bool, bool]:
    """Whether a Royal 9 wager may be taken with `n` decks, and at `n` seats."""
    limits = pack.limits.royal9
    return bool(limits and n in limits.decks), bool(
        limits and (limits.seats is None or n in limits.seats)
    )


def royal9_chairs(pack: RulePack) -> dict[int, tuple[str, ...]]:
    royal9 = pack.payouts.royal9
    return dict(royal9.seat_combinations.chairs or {}) if royal9 else {}


def calls(pack: RulePack, bet: str) -> list[tuple[Any, ...]]:
    """(call, permitted, amount, citation) for each call of the contract, then no call
    (permitted where the bet takes none)."""
    entry = pack.permitted.get(bet)
    calls = {call.call: call for call in entry.calls} if entry else {}
    rows = []
    for name in CALLS:
        call = calls.get(name)
        cite = pack.cite(call.cite) if call else None
        rows.append((name, call is not None, call.amount if call else None, cite))
    return [*rows, (None, not (entry and entry.calls), None, None)]


def bets(packs: Packs) -> pl.DataFrame:
    rows = []
    for ruleset, pack in packs:
        pay, com = pack.payouts, pack.commission
        rollover = pack.rules.procedures.house_money_rollover
        odds = {"player": pay.player.odds, "banker": pay.banker.odds}
        cites = {"player": pay.player.cite, "banker": pay.banker.cite}
        for name in ("dragon7", "panda8"):
            item = getattr(pay, name)
            if item is not None:
                odds[name], cites[name] = item.odds, item.cite
        for name in ("tie", "house_money"):
            item = getattr(pay, name)
            if item is not None:
                cites[name] = item.cite
        exempt = com.exempt.bets if com.exempt else ()
        for bet in BETS:
            entry = pack.permitted.get(bet)
            rows.append(
                {
                    "ruleset": ruleset,
                    "bet": bet,
                    "bet_in_ruleset": entry is not None,
                    "bet_requires": None if entry is None else requires_code(entry.requires),
                    "bet_citation": pack.cite(entry.cite) if entry else None,
                    "bet_calls": sorted(call.call for call in entry.calls) if entry else [],
                    "payout_odds": odds.get(bet),
                    "payout_citation": pack.cite(cites[bet]) if bet in cites else None,
                    "commission_bets_listed": bet in com.bets.bets,
                    "commission_exempt_citation": pack.cite(com.exempt.cite)
                    if com.exempt and bet in exempt
                    else None,
                    "house_money_rollover_target": rollover is not None and bet in rollover.onto,
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


def rulesets(packs: Packs) -> pl.DataFrame:
    rows = [{"ruleset": ruleset, **_ruleset_row(pack)} for ruleset, pack in packs]
    # A parameter that is a table of its own (discards by rank) stays in the pack.
    tables = {key for row in rows for key, value in row.items() if isinstance(value, dict)}
    rows = [{key: value for key, value in row.items() if key not in tables} for row in rows]
    frame = pl.DataFrame(rows, infer_schema_length=None)
    lists = ("royal9_limits_decks", "royal9_limits_seats")
    numbers = (
        "decks_min",
        "decks_max",
        "automated_shuffler_total_decks_min",
        "automated_shuffler_total_decks_max",
        "cut_min_from_either_end",
        "cover_card_min_from_back",
    )
    # A column no pack gives a value (a rule no ruleset has) is typed as text, but for
    # the typed ones: packs without Royal 9 limits or a cover card leave those null.
    return frame.with_columns(
        pl.col(pl.Null).exclude(*lists, *numbers).cast(pl.String),
        pl.col(*lists).cast(pl.List(pl.Int32)),
        pl.col(*numbers).cast(pl.Int32),
    )


def _ruleset_row(pack: RulePack) -> dict[str, Any]:
    pay, com, lim = pack.payouts, pack.commission, pack.limits
    cite = pack.cite
    push, none_at_ez = pack.ez.banker_push_on, com.none_at_ez
    drawn = pack.naturals.drawn_in_error
    r9, r9_limits, seats = pay.royal9, lim.royal9, lim.seats
    shuffler = lim.automated_shuffler
    total = shuffler.total_decks
    chairs = r9.seat_combinations if r9 else None
    row: dict[str, Any] = {
        "bets_citation": cite(pack.bets.cite),
        "banker_payout_covered": pay.banker.basis == "covered",
        # A Natural given a third card: its round's wagers are settled on each hand's
        # first two cards (INDEX Ambiguity 28).
        "natural_drawn_two": drawn.settle_on == "first_two_cards",
        "natural_drawn_citation": cite(drawn.cite),
        "ez_push_event": push.event if push else None,
        "ez_push_citation": cite(push.cite) if push else None,
        "commission_none_at_ez_value": bool(none_at_ez and none_at_ez.value),
        "commission_none_at_ez_citation": cite(none_at_ez.cite) if none_at_ez else None,
        "commission_percents_min": min(com.percents.values),
        "commission_percents_max": max(com.percents.values),
        "commission_percents_citation": cite(com.percents.cite),
        "commission_rounding_citation": cite(com.rounding.cite),
        "commission_bets_citation": cite(com.bets.cite),
        "commission_collection_modes": list(com.collection.modes),
        "commission_collection_citation": cite(com.collection.cite),
        "tie_payout_min_odds": pay.tie.min_odds if pay.tie else None,
        "tie_payout_citation": cite(pay.tie.cite) if pay.tie else None,
        "house_money_payout_both": pay.house_money.both if pay.house_money else None,
        "house_money_payout_one": pay.house_money.one if pay.house_money else None,
        "royal9_wager_cents": r9.wager.amount * 100 if r9 else None,
        "royal9_wager_citation": cite(r9.wager.cite) if r9 else None,
        "royal9_seat_combinations_unique": chairs.unique if chairs else None,
        "royal9_seat_combinations_per_seat": chairs.per_seat if chairs else None,
        "royal9_seat_combinations_suited": chairs.suited if chairs else None,
        "royal9_seat_combinations_citation": cite(chairs.cite) if chairs else None,
        "royal9_limits_decks": list(r9_limits.decks) if r9_limits else None,
        "royal9_limits_seats": list(r9_limits.seats) if r9_limits and r9_limits.seats else None,
        "royal9_limits_words": royal9_limits_words(r9_limits) if r9_limits else None,
        "royal9_limits_citation": cite(r9_limits.cite) if r9_limits else None,
        "seats_min": seats.min if seats else None,
        "seats_max": seats.max if seats else None,
        "seats_citation": cite(seats.cite) if seats else None,
        "decks_min": lim.decks.min,
        "decks_max": lim.decks.max,
        "decks_citation": cite(lim.decks.cite),
        "automated_shuffler_two_batches": shuffler.two_batches,
        "automated_shuffler_equal_batches": shuffler.equal_batches,
        "automated_shuffler_total_decks_min": total.min if total else None,
        "automated_shuffler_total_decks_max": total.max if total else None,
        "automated_shuffler_total_decks_citation": cite(total.cite) if total else None,
        "automated_shuffler_citation": cite(shuffler.cite),
        "cut_min_from_either_end": lim.cut.min_from_either_end,
        "cut_citation": cite(lim.cut.cite),
        "cover_card_min_from_back": lim.cover_card.min_from_back,
        "cover_card_citation": cite(lim.cover_card.cite),
    }
    for name, params in PROCEDURES.items():
        procedure = pack.procedure(name)
        for param in params:
            value = None if procedure is None else getattr(procedure, param)
            row[f"{name}_{param}"] = list(value) if isinstance(value, tuple) else value
        row[f"{name}_citation"] = None if procedure is None else cite(procedure.cite)
    return row


def discards_allowed(pack: RulePack, rank: str) -> list[int] | None:
    """The numbers of cards an irregularity may discard where the first is of `rank`: one
    of the pack's counts, or that card and as many more as its rank gives (null where the
    pack has no such procedure)."""
    rule = pack.rules.procedures.irregular_discards
    if rule is None:
        return None
    by_rank = {str(key): counts for key, counts in (rule.plus_card_value or {}).items()}
    extra = by_rank.get(rank, ())
    return sorted({*rule.counts, *(1 + n for n in extra)})


def paytables(packs: Packs) -> pl.DataFrame:
    rows = []
    for ruleset, pack in packs:
        for name in DRAGON_BONUS_PAYTABLES:
            table = (pack.payouts.dragon_bonus or {}).get(name)
            cite = pack.cite(table.cite) if table else None
            for key in range(ODDS_KEYS):
                odds = None if table is None else table.odds_by_margin().get(key)
                if table is not None and key == NATURAL_KEY:
                    odds = table.natural_winner
                rows.append((ruleset, name, key, odds, cite))
    return frame(
        rows,
        ruleset=pl.String,
        paytable=pl.String,
        key=pl.Int32,
        dragon_bonus_odds=pl.Int64,
        dragon_bonus_citation=pl.String,
    )


ROYAL9_LINE = pl.Struct({"name": pl.String, "match": pl.String, "amount_cents": pl.Int64})


def royal9_paytables(packs: Packs) -> pl.DataFrame:
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
                            "amount_cents": None if line.amount is None else line.amount * 100,
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


def banker_cells(packs: Packs) -> pl.DataFrame:
    """One row per ruleset x Banker two-card total 0-7 x Player third card 0-9, null
    when he stood. Join on ``banker_two_card, player_third`` with ``nulls_equal=True``:
    polars does not match null keys by default, and null is how a stood Player is keyed."""
    return frame(
        [
            (r, banker, third, rule.draws, pack.cite(rule.cite), rule.severity)
            for r, pack in packs
            for (banker, third), rule in pack.banker_draw.items()
        ],
        ruleset=pl.String,
        banker_two_card=pl.Int8,
        player_third=pl.Int8,
        banker_draws=pl.Boolean,
        citation=pl.String,
        severity=pl.String,
    )


def player_cells(packs: Packs) -> pl.DataFrame:
    """One row per ruleset x Player two-card total 0-7: draw, stand or either."""
    return frame(
        [
            (r, total, rule.action, pack.cite(rule.cite))
            for r, pack in packs
            for total, rule in sorted(pack.player_draw.items())
        ],
        ruleset=pl.String,
        player_two_card=pl.Int8,
        action=pl.String,
        citation=pl.String,
    )


def royal9_limits_words(limits: Royal9Limits) -> str:
    """ "8 decks" / "6 or 8 decks and 6 or 7 seats" """
    words = f"{_or(limits.decks)} decks"
    return words if limits.seats is None else f"{words} and {_or(limits.seats)} seats"


def _or(values: tuple[int, ...]) -> str:
    return " or ".join(str(v) for v in values)
