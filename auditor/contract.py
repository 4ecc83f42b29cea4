"""The hand-history contract, version 1 (shared CONTRACT.md), as data.

Names, types and enumerations live here once; the pandera models, the loader and the
simulator all read them, so a contract change is made in one place.
"""

from __future__ import annotations

import polars as pl

CONTRACT_VERSION = 1

# The rulesets are the rule packs' (`auditor.packs.loaded`): the four the contract names
# ship with the auditor, and a pack given with --rules DIR may name another.

MONEY = pl.Decimal(18, 2)
TIMESTAMP = pl.Datetime("us", "UTC")
# How a finding's text writes a moment (the logs' timestamps, read as UTC), with its zone:
# to the second, or to the microsecond the logs carry where it has a fraction of a second
# (`auditor.findings.words.moment`).
SECOND_TEXT = "%Y-%m-%d %H:%M:%S UTC"
MOMENT_TEXT = "%Y-%m-%d %H:%M:%S%.6f UTC"
MINUTE_TEXT = "%Y-%m-%d %H:%M UTC"
CARDS = pl.List(pl.String)

CARD_PATTERN = r"^[A23456789TJQK][SHDC]$"
RANKS = "A23456789TJQK"
SUITS = "SHDC"

ROUND_KINDS = ("regular", "free", "simulated", "void")
OUTCOMES = ("player", "banker", "tie", "void")
EZ_EVENTS = ("dragon7", "panda8")
BETS = (
    "banker",
    "player",
    "tie",
    "dragon_bonus_banker",
    "dragon_bonus_player",
    "dragon7",
    "panda8",
    "house_money",
    "royal9",
)
CALLS = ("suivi", "banco", "partial")
RESULTS = ("win", "lose", "push")
COMMISSION_COLLECTIONS = ("at_payout", "marker")
DRAGON_BONUS_PAYTABLES = ("A", "B", "C")
ROYAL9_PAYTABLES = ("1", "2", "midi")

# Integer columns: the contract type; files may store any integer width whose values fit.
INT8, INT16, INT32 = pl.Int8, pl.Int16, pl.Int32

# column -> (polars dtype, nullable). Order is the contract's order.
TABLES: dict[str, dict[str, tuple[pl.DataType, bool]]] = {
    "tables": {
        "table_id": (pl.String(), False),
        "property_id": (pl.String(), False),
        "ruleset": (pl.String(), False),
        "effective_from": (TIMESTAMP, False),
        "seats": (INT8(), False),
        "decks": (INT8(), False),
        "automated_shuffler": (pl.Boolean(), False),
        "ez_baccarat": (pl.Boolean(), False),
        "tie_pays": (INT16(), False),
        "commission_percent": (INT8(), False),
        "commission_rounding": (pl.Boolean(), False),
        "commission_collection": (pl.String(), False),
        "dragon_bonus_paytable": (pl.String(), True),
        "house_money": (pl.Boolean(), False),
        "house_money_rollover_percent": (INT8(), False),
        "royal9_paytable": (pl.String(), True),
        "free_hands": (pl.Boolean(), False),
    },
    "shoes": {
        "shoe_id": (pl.String(), False),
        "table_id": (pl.String(), False),
        "opened_at": (TIMESTAMP, False),
        "decks": (INT8(), False),
        "card_sequence": (CARDS, True),
        "cut_index": (INT32(), True),
        "cover_from_back": (INT32(), True),
        "burn_card": (pl.String(), False),
        "burn_count": (INT16(), False),
    },
    "rounds": {
        "round_id": (pl.String(), False),
        "shoe_id": (pl.String(), False),
        "table_id": (pl.String(), False),
        "round_no": (INT32(), False),
        "dealt_at": (TIMESTAMP, False),
        "no_more_bets_at": (TIMESTAMP, True),
        "kind": (pl.String(), False),
        "player_cards": (CARDS, False),
        "banker_cards": (CARDS, False),
        "player_total": (INT8(), False),
        "banker_total": (INT8(), False),
        "outcome": (pl.String(), False),
        "ez_event": (pl.String(), True),
        "cover_card_drawn": (pl.Boolean(), False),
        "discarded_after": (CARDS, True),
        "dealer_id": (pl.String(), False),
        "curator_seat": (INT8(), True),
        "banker_seat": (INT8(), True),
        "banker_bid": (MONEY, True),
    },
    "wagers": {
        "wager_id": (pl.String(), False),
        "round_id": (pl.String(), False),
        "seat": (INT8(), False),
        "patron_id": (pl.String(), True),
        "bet": (pl.String(), False),
        "call": (pl.String(), True),
        "amount": (MONEY, False),
        "rollover": (MONEY, True),
        "placed_at": (TIMESTAMP, True),
        "result": (pl.String(), False),
        "payout": (MONEY, False),
        "commission": (MONEY, False),
        "award": (pl.String(), True),
    },
    "commission_collections": {
        "collection_id": (pl.String(), False),
        "table_id": (pl.String(), False),
        "shoe_id": (pl.String(), False),
        "seat": (INT8(), False),
        "patron_id": (pl.String(), True),
        "collected_at": (TIMESTAMP, False),
        "amount": (MONEY, False),
    },
    "royal9_seats": {
        "table_id": (pl.String(), False),
        "seat": (INT8(), False),
        "combo": (pl.String(), False),
    },
}

REQUIRED_TABLES = ("tables", "shoes", "rounds", "wagers")
OPTIONAL_TABLES = ("commission_collections", "royal9_seats")

# The key that names a row of each table in the quarantine and in findings.
ROW_KEYS = {
    "tables": ("table_id", "effective_from"),
    "shoes": ("shoe_id",),
    "rounds": ("round_id",),
    "wagers": ("wager_id",),
    "commission_collections": ("collection_id",),
    # A chair may post several combinations (the curator game's §13(i) Table 2 lists three a
    # chair); how many it may post is the ruleset's rule (TBL004), not the row's identity.
    "royal9_seats": ("table_id", "seat", "combo"),
}


def empty_frame(table: str) -> pl.DataFrame:
    """A zero-row frame with the contract's columns and types for `table`."""
    return pl.DataFrame(schema={name: dtype for name, (dtype, _) in TABLES[table].items()})
