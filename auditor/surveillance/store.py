"""The partitions' surveillance counts, kept on disk as they come.

Each partition's cells (`gather.partition_cells`) are a few rows per shoe and per
(patron, bet); over tens of millions of rounds the night's patrons alone are hundreds of
megabytes, so they are written to Parquet as each partition finishes instead of riding
in memory through the rest of the audit. The tests then read them back a bucket of keys
at a time (`bucket`): every cell of a patron, shoe or dealer lands in the same bucket,
so each bucket's sums are the night's, and no bucket holds more than a partition's
budget of cells.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from auditor.input.cross_rows import in_bucket
from auditor.surveillance.gather import (
    DEALER_CELL_SCHEMA,
    PATRON_CELL_SCHEMA,
    ROUND_CELL_SCHEMA,
    TABLE_CELL_SCHEMA,
    NightCells,
    combine_cells,
)

KINDS: Mapping[str, Mapping[str, pl.DataType]] = {
    "rounds": ROUND_CELL_SCHEMA,
    "patrons": PATRON_CELL_SCHEMA,
    "tables": TABLE_CELL_SCHEMA,
    "dealers": DEALER_CELL_SCHEMA,
}
# What one cell row costs while its bucket is summed and tested (the cells, their sums,
# the tests built from them with their detail text), measured on the bench's nights.
BYTES_PER_CELL = 1_000
MIN_BUCKET_CELLS = 50_000


class CellStore:
    """A folder of the partitions' cells: `rounds-N.parquet`, `patrons-N.parquet`,
    `tables-N.parquet` and `dealers-N.parquet` for the Nth partition added."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.parts = 0
        self.rows = dict.fromkeys(KINDS, 0)

    def add(self, cells: NightCells) -> None:
        for kind in KINDS:
            frame: pl.DataFrame = getattr(cells, kind)
            if frame.height:
                frame.write_parquet(self.folder / f"{kind}-{self.parts:06d}.parquet")
                self.rows[kind] += frame.height
        self.parts += 1

    def scan(self, kind: str) -> pl.LazyFrame:
        """Every cell of `kind` added so far (not yet summed across partitions)."""
        files = sorted(self.folder.glob(f"{kind}-*.parquet"))
        if not files:
            return pl.LazyFrame(schema=KINDS[kind])
        return pl.scan_parquet(files, glob=False)

    def buckets(self, kind: str, budget_bytes: int | None) -> int:
        """How many buckets `kind`'s cells are tested in to keep within `budget_bytes`
        (one if None)."""
        if budget_bytes is None:
            return 1
        per_bucket = max(MIN_BUCKET_CELLS, budget_bytes // BYTES_PER_CELL)
        return max(1, math.ceil(self.rows[kind] / per_bucket))

    def night(self) -> NightCells:
        """The night's cells, summed, in memory: for small nights and tests."""
        return combine_cells(NightCells(*(self.scan(kind).collect() for kind in KINDS)))


def bucket(key: str, buckets: int, index: int) -> pl.Expr:
    """The rows whose `key` falls in bucket `index` of `buckets`."""
    return in_bucket(pl.col(key).hash(seed=0), buckets, index)
