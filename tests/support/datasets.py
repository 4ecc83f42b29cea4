"""A small hand-built dataset in exact contract types (one Massachusetts Baccarat table,
one shoe, two rounds dealt by the rules, three wagers), to be edited row by row or table
by table and written as a dataset folder."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

from auditor.contract import TABLES

T0 = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)


def contract_frame(table: str, rows: list[dict]) -> pl.DataFrame:
    schema = {c: t for c, (t, _) in TABLES[table].items()}
    return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)


def base_rows() -> dict[str, list[dict]]:
    """One ma-baccarat table, one shoe, two rounds dealt by the rules, three wagers."""
    table = {
        "table_id": "T1",
        "property_id": "P1",
        "ruleset": "ma-baccarat",
        "effective_from": T0 - timedelta(days=30),
        "seats": 12,
        "decks": 8,
        "automated_shuffler": False,
        "ez_baccarat": False,
        "tie_pays": 8,
        "commission_percent": 5,
        "commission_rounding": True,
        "commission_collection": "at_payout",
        "dragon_bonus_paytable": None,
        "house_money": False,
        "house_money_rollover_percent": 100,
        "royal9_paytable": None,
        "free_hands": False,
    }
    shoe = {
        "shoe_id": "S1",
        "table_id": "T1",
        "opened_at": T0,
        "decks": 8,
        "card_sequence": None,
        "cut_index": 100,
        "cover_from_back": 16,
        "burn_card": "5S",
        "burn_count": 5,
    }
    round_common = {
        "shoe_id": "S1",
        "table_id": "T1",
        "kind": "regular",
        "ez_event": None,
        "cover_card_drawn": False,
        "discarded_after": None,
        "dealer_id": "D7",
        "curator_seat": 3,
        "banker_seat": None,
        "banker_bid": None,
    }
    rounds = [
        # Player natural 9 against Banker 5: no more cards (§11(a)).
        {
            **round_common,
            "round_id": "R1",
            "round_no": 1,
            "dealt_at": T0 + timedelta(minutes=1),
            "no_more_bets_at": T0 + timedelta(minutes=1) - timedelta(seconds=5),
            "player_cards": ["9H", "KS"],
            "banker_cards": ["2C", "3D"],
            "player_total": 9,
            "banker_total": 5,
            "outcome": "player",
        },
        # Player 5 draws a 4 (9); Banker 7 stands (§11(c)(2)(ii)).
        {
            **round_common,
            "round_id": "R2",
            "round_no": 2,
            "curator_seat": 4,
            "dealt_at": T0 + timedelta(minutes=2),
            "no_more_bets_at": T0 + timedelta(minutes=2) - timedelta(seconds=5),
            "player_cards": ["2S", "3H", "4D"],
            "banker_cards": ["KD", "7C"],
            "player_total": 9,
            "banker_total": 7,
            "outcome": "player",
        },
    ]
    wager_common = {"patron_id": "PAT1", "call": None, "rollover": None, "award": None}
    wagers = [
        {
            **wager_common,
            "wager_id": "W1",
            "round_id": "R1",
            "seat": 1,
            "bet": "banker",
            "amount": Decimal("37.50"),
            "placed_at": T0 + timedelta(seconds=30),
            "result": "lose",
            "payout": Decimal("0.00"),
            "commission": Decimal("0.00"),
        },
        {
            **wager_common,
            "wager_id": "W2",
            "round_id": "R1",
            "seat": 2,
            "bet": "player",
            "amount": Decimal("10.10"),
            "placed_at": T0 + timedelta(seconds=31),
            "result": "win",
            "payout": Decimal("10.10"),
            "commission": Decimal("0.00"),
        },
        {
            **wager_common,
            "wager_id": "W3",
            "round_id": "R2",
            "seat": 1,
            "bet": "tie",
            "amount": Decimal("25.00"),
            "placed_at": T0 + timedelta(minutes=1, seconds=30),
            "result": "lose",
            "payout": Decimal("0.00"),
            "commission": Decimal("0.00"),
        },
    ]
    return {"tables": [table], "shoes": [shoe], "rounds": rounds, "wagers": wagers}


DatasetWriter = Callable[..., Path]


def dataset_writer(folder: Path) -> DatasetWriter:
    """Writes dataset folders under `folder`, each new: `rows` edits the base rows, `frames`
    replaces whole tables (or adds tables the base has not)."""
    counter = iter(range(1000))

    def write(
        rows: dict[str, list[dict]] | None = None,
        frames: dict[str, pl.DataFrame] | None = None,
    ) -> Path:
        root = folder / f"dataset{next(counter)}"
        root.mkdir()
        rows = rows if rows is not None else base_rows()
        frames = frames or {}
        for table, table_rows in rows.items():
            frame = frames.get(table, contract_frame(table, table_rows))
            frame.write_parquet(root / f"{table}.parquet")
        for table, frame in frames.items():
            if table not in rows:
                frame.write_parquet(root / f"{table}.parquet")
        return root

    return write


def write_rows(root: Path, rows: dict[str, list[dict]]) -> dict[str, int]:
    """Each table of `rows` written as ROOT/TABLE.parquet in contract types; the rows
    written per table."""
    root.mkdir(parents=True, exist_ok=True)
    written = {}
    for table, table_rows in rows.items():
        frame = contract_frame(table, table_rows)
        frame.write_parquet(root / f"{table}.parquet")
        written[table] = frame.height
    return written
