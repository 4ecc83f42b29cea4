"""Read a dataset's Parquet files into plain Python rows (dicts), money in integer cents."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from pathlib import Path

import polars as pl

from .tables import MA, Combo, table_2

MONEY = ("amount", "rollover", "payout", "commission", "banker_bid")


def cents(money: Decimal | None) -> int | None:
    """Exact dollars to integer cents (the contract: money is decimal(18,2), no floats)."""
    return None if money is None else int(money.scaleb(2))


def read(root: Path, name: str) -> list[dict]:
    """`NAME.parquet` or a folder `NAME/` of Parquet files (hive partitions allowed)."""
    file = root / f"{name}.parquet"
    if file.is_file():
        frame = pl.read_parquet(file)
    elif (root / name).is_dir():
        frame = pl.read_parquet(root / name / "**" / "*.parquet", hive_partitioning=True)
    else:
        return []
    rows = frame.to_dicts()
    for row in rows:
        for column in MONEY:
            if column in row:
                row[column] = cents(row[column])
    return rows


@dataclass
class Dataset:
    tables: dict[str, list[dict]]  # table_id -> its `tables` rows, by effective_from
    shoes: dict[str, dict]
    rounds: list[dict]
    wagers_by_round: dict[str, list[dict]]
    royal9_seats: dict[str, dict[int, set[Combo]]] = field(default_factory=dict)

    @cached_property
    def round_by_id(self) -> dict[str, dict]:
        return {r["round_id"]: r for r in self.rounds}

    def options(self, shoe_id: str) -> dict | None:
        """The `tables` row in force when the shoe opened: the last one effective at or
        before `opened_at` (the contract's `tables.effective_from`)."""
        shoe = self.shoes.get(shoe_id)
        if shoe is None:
            return None
        in_force = None
        for row in self.tables.get(shoe["table_id"], []):
            if row["effective_from"] <= shoe["opened_at"]:
                in_force = row
        return in_force

    def chairs(self, table_id: str, ruleset: str) -> dict[int, set[Combo]]:
        """Personal Royal 9 combinations per seat: `royal9_seats` where the table has rows,
        else ma-baccarat's §13(i) Table 2; midi has no default list (INDEX, §12(i))."""
        if table_id in self.royal9_seats:
            return self.royal9_seats[table_id]
        return table_2() if ruleset == MA else {}


def load(root: Path) -> Dataset:
    tables: dict[str, list[dict]] = defaultdict(list)
    for row in read(root, "tables"):
        tables[row["table_id"]].append(row)
    for rows in tables.values():
        rows.sort(key=lambda r: r["effective_from"])
    wagers: dict[str, list[dict]] = defaultdict(list)
    for row in read(root, "wagers"):
        wagers[row["round_id"]].append(row)
    seats: dict[str, dict[int, set[Combo]]] = defaultdict(lambda: defaultdict(set))
    for row in read(root, "royal9_seats"):
        combo = row["combo"]  # two cards, face card first: "KS9H"
        seats[row["table_id"]][row["seat"]].add(frozenset({combo[:2], combo[2:]}))
    return Dataset(
        tables=dict(tables),
        shoes={row["shoe_id"]: row for row in read(root, "shoes")},
        rounds=read(root, "rounds"),
        wagers_by_round=dict(wagers),
        royal9_seats={table: dict(by_seat) for table, by_seat in seats.items()},
    )
