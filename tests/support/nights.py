"""Simulated nights edited after they were dealt, where a test needs what the simulator
does not deal: the same patron back at the tables night after night."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def bring_a_patron_back(nights: list[Path], patron: str) -> None:
    """The busiest patron of each of these nights is `patron`, a regular of the first."""
    for night in nights:
        wagers = pl.read_parquet(night / "wagers.parquet")
        busiest = wagers.drop_nulls("patron_id")["patron_id"].value_counts(sort=True)[0, 0]
        for name in ("wagers", "commission_collections"):
            frame = pl.read_parquet(night / f"{name}.parquet")
            renamed = pl.when(pl.col("patron_id") == busiest).then(pl.lit(patron))
            frame.with_columns(renamed.otherwise("patron_id").alias("patron_id")).write_parquet(
                night / f"{name}.parquet"
            )
