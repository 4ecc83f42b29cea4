"""Mutations beyond the simulator's faults, so that the differential test also meets
combinations the simulator never deals: odd table options, wrong kinds and announcements,
misdealt and Royal 9 hands, any bet with any result, payout, commission, rollover, call,
award, seat and placement time. Every row stays within the contract, so nothing is
quarantined and both auditors see the same rows."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

RANKS = "A23456789TJQK"
SUITS = "SHDC"
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
AWARDS = (
    None,
    "Any Royal 9",
    "Any Suited Royal 9",
    "Royal 9 Tie Hand",
    "Royal 9 vs. Royal 9",
    "Personal K9 on Player Hand",
    "Banker Personal King-9",
    "Other Personal King-9 vs. Identical King-9",
)
MONEY = ("0.00", "0.25", "1.00", "4.20", "5.00", "10.10", "25.00", "37.50", "100.00")


def mutate(root: Path, seed: int) -> None:
    """Rewrite the dataset at `root` in place."""
    rng = random.Random(seed)
    _rewrite(root, "tables", lambda row: _table(rng, row))
    _rewrite(root, "tables", _tie_below_minimum)
    _rewrite(root, "rounds", lambda row: _round(rng, row))
    _rewrite(root, "wagers", lambda row: _wager(rng, row))
    seats = pl.read_parquet(root / "royal9_seats.parquet")
    tables = pl.read_parquet(root / "tables.parquet")
    table_id = tables.filter(pl.col("ruleset") == "ma-baccarat")["table_id"][0]
    # Personal combinations posted at an ma-baccarat table replace its §13(i) Table 2.
    extra = []
    for seat in range(1, 12):
        if _maybe(rng, 0.5):
            combo = rng.choice("JQK") + _suit(rng) + "9" + _suit(rng)
            extra.append({"table_id": table_id, "seat": seat, "combo": combo})
    pl.concat([seats, pl.DataFrame(extra, schema=seats.schema)]).write_parquet(
        root / "royal9_seats.parquet"
    )


def _suit(rng: random.Random) -> str:
    return rng.choice(SUITS)


def _card(rng: random.Random) -> str:
    return rng.choice(RANKS) + _suit(rng)


def _rewrite(root: Path, name: str, change: Callable[[dict], None]) -> None:
    frame = pl.read_parquet(root / f"{name}.parquet")
    rows = frame.to_dicts()
    for row in rows:
        change(row)
    pl.DataFrame(rows, schema=frame.schema).write_parquet(root / f"{name}.parquet")


def _maybe(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def _table(rng: random.Random, row: dict) -> None:
    if _maybe(rng, 0.3):
        row["tie_pays"] = rng.choice([7, 8, 9])
    if _maybe(rng, 0.3):
        row["commission_percent"] = rng.choice([3, 4, 5, 6])
    if _maybe(rng, 0.3):
        row["commission_rounding"] = not row["commission_rounding"]
    if _maybe(rng, 0.2):
        row["ez_baccarat"] = not row["ez_baccarat"]
    if _maybe(rng, 0.2):
        row["house_money"] = not row["house_money"]
    if _maybe(rng, 0.2):
        row["house_money_rollover_percent"] = rng.choice([25, 33, 50, 100])
    if _maybe(rng, 0.2):
        row["dragon_bonus_paytable"] = rng.choice([None, "A", "B", "C"])
    if _maybe(rng, 0.2):
        row["decks"] = rng.choice([6, 7, 8])
    if _maybe(rng, 0.2):
        row["seats"] = rng.choice([6, 7, 9, 10, 12, 14])
    if _maybe(rng, 0.2) and row["ruleset"] == "ma-baccarat":
        row["royal9_paytable"] = rng.choice([None, "1", "2"])
    if _maybe(rng, 0.2) and row["ruleset"] == "ma-midi-baccarat":
        row["royal9_paytable"] = rng.choice([None, "midi"])
    if _maybe(rng, 0.2):
        row["free_hands"] = not row["free_hands"]


def _tie_below_minimum(row: dict) -> None:
    """Every table whose id ends in 1 pays Tie 7 to 1, below the 8 to 1 minimum."""
    if row["table_id"].endswith("1") and row["ruleset"] != "ma-chemin-de-fer":
        row["tie_pays"] = 7


def _round(rng: random.Random, row: dict) -> None:
    if _maybe(rng, 0.01):
        row["kind"] = rng.choice(["regular", "free", "simulated", "void"])
    if _maybe(rng, 0.01):
        row["outcome"] = rng.choice(["player", "banker", "tie", "void"])
    if _maybe(rng, 0.01):
        row["ez_event"] = rng.choice([None, "dragon7", "panda8"])
    hand = rng.choice(["player_cards", "banker_cards"])
    cards = list(row[hand])
    if _maybe(rng, 0.03) and cards:
        cards[rng.randrange(len(cards))] = _card(rng)
    if _maybe(rng, 0.01):
        if len(cards) == 3:
            cards.pop()
        elif len(cards) == 2:
            cards.append(_card(rng))
    if _maybe(rng, 0.03) and len(cards) >= 2:
        royal = [rng.choice("JQK") + _suit(rng), "9" + _suit(rng)]
        cards[:2] = royal if _maybe(rng, 0.5) else royal[::-1]
    row[hand] = cards
    if row["kind"] != "void":  # the contract: two or three cards outside a void round
        for name in ("player_cards", "banker_cards"):
            while len(row[name]) < 2:
                row[name] = [*row[name], _card(rng)]
    if _maybe(rng, 0.01):
        row["player_total"] = rng.randrange(10)


def _wager(rng: random.Random, row: dict) -> None:
    if _maybe(rng, 0.01):
        row["bet"] = rng.choice(BETS)
    if _maybe(rng, 0.01):
        row["result"] = rng.choice(["win", "lose", "push"])
    if _maybe(rng, 0.01):
        row["payout"] = row["amount"] * rng.choice([0, 1, 2, 3, 8, 25, 40])
    if _maybe(rng, 0.01):
        row["commission"] = Decimal(rng.choice(MONEY))
    if _maybe(rng, 0.01):
        row["rollover"] = rng.choice([None, Decimal(rng.choice(MONEY))])
    if _maybe(rng, 0.005):
        row["call"] = rng.choice([None, "suivi", "banco", "partial"])
    if _maybe(rng, 0.01):
        row["award"] = rng.choice(AWARDS)
    if _maybe(rng, 0.005):
        row["seat"] = rng.randrange(1, 15)
    if _maybe(rng, 0.005):
        row["amount"] = Decimal(rng.choice(MONEY)) + Decimal("1.00")
    if _maybe(rng, 0.01) and row["placed_at"] is not None:
        row["placed_at"] += timedelta(seconds=rng.randrange(-60, 120))
    if _maybe(rng, 0.002):
        row["placed_at"] = None
