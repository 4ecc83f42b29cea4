"""The night's surveillance counts, kept in the output set so that a period can be tested
without reading any dataset again (`period.py`).

Five files: the partitions' cells summed over the night (`cells_rounds.parquet` per
shoe, `cells_patrons.parquet` per (patron, bet), `cells_tables.parquet` per (table,
bet), `cells_dealers.parquet` per (dealer, bet)), the wagers' with the exact
expectations and variances they were priced at, and `cells_chances.parquet`, the exact
chances per (ruleset, decks) the night's rounds were tested against: a period sums the
counts and tests them against the same chances, under whatever packs each night was
audited.

They are summed a bucket of keys at a time (`store.bucket`), as the night's tests read
them, and appended bucket by bucket to one file per kind: no more than a bucket's cells
are held at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from auditor.packs.model import RulePack
from auditor.surveillance.gather import (
    DEALER_CELL_SCHEMA,
    PATRON_CELL_SCHEMA,
    PRICED_SUMS,
    ROUND_CELL,
    ROUND_CELL_SCHEMA,
    ROUND_COUNTS,
    TABLE_CELL_SCHEMA,
)
from auditor.surveillance.round_tests import chances_frame
from auditor.surveillance.store import CellStore, bucket

# The kinds of cells, their files in the output set, keys and columns.
CELL_FILES = {
    "rounds": "cells_rounds.parquet",
    "patrons": "cells_patrons.parquet",
    "tables": "cells_tables.parquet",
    "dealers": "cells_dealers.parquet",
}
CHANCES_FILE = "cells_chances.parquet"
ALL_CELL_FILES = (*CELL_FILES.values(), CHANCES_FILE)
KEYS: Mapping[str, tuple[str, ...]] = {
    "rounds": ROUND_CELL,
    "patrons": ("patron_id", "bet"),
    "tables": ("table_id", "bet"),
    "dealers": ("dealer_id", "bet"),
}
SCHEMAS: Mapping[str, Mapping[str, pl.DataType]] = {
    "rounds": ROUND_CELL_SCHEMA,
    "patrons": PATRON_CELL_SCHEMA,
    "tables": TABLE_CELL_SCHEMA,
    "dealers": DEALER_CELL_SCHEMA,
}
BUCKET_KEY = {
    "rounds": "shoe_id",
    "patrons": "patron_id",
    "tables": "table_id",
    "dealers": "dealer_id",
}


def summed(kind: str, cells: pl.DataFrame) -> pl.DataFrame:
    """Cells of `kind` summed per key, in key order (a bucket's or a night's)."""
    keys = list(KEYS[kind])
    if kind == "rounds":
        aggs = [pl.col(c).sum() for c in ROUND_COUNTS]
    else:
        aggs = [*(pl.col(c).sum() for c in PRICED_SUMS), pl.col("spread").max()]
    schema = SCHEMAS[kind]
    return (
        cells.group_by(keys)
        .agg(aggs)
        .select(list(schema))
        .cast(pl.Schema(schema))
        .sort(keys, nulls_last=False)
    )


def write_night_cells(
    store: CellStore,
    folder: Path,
    packs: Mapping[str, RulePack],
    budget_bytes: int | None = None,
) -> tuple[str, ...]:
    """The night's cells from `store`, summed, into `folder` (`ALL_CELL_FILES`); returns
    the names written."""
    folder.mkdir(parents=True, exist_ok=True)
    for kind, name in CELL_FILES.items():
        count = store.buckets(kind, budget_bytes)
        schema = pl.DataFrame(schema=SCHEMAS[kind]).to_arrow().schema
        with pq.ParquetWriter(folder / name, schema, compression="zstd") as writer:
            for index in range(count):
                cells = store.scan(kind).filter(bucket(BUCKET_KEY[kind], count, index))
                writer.write_table(summed(kind, cells.collect()).to_arrow().cast(schema))
    pairs = store.scan("rounds").select("ruleset", "decks").unique().collect()
    chances_frame(pairs, packs).write_parquet(folder / CHANCES_FILE, compression="zstd")
    return ALL_CELL_FILES
