"""The nightly report's hold table comes in one order every run: tables of equal play,
whose z differs only in the last bits of a float sum (the partitions decide the order
of its terms), are ordered by their ids."""

from __future__ import annotations

from pathlib import Path

import duckdb

from auditor.output.sandboxed_query import Catalog
from auditor.report.data import holds

COLUMNS = (
    "level VARCHAR, statistic VARCHAR, key VARCHAR, observed DOUBLE, expected DOUBLE, "
    "z DOUBLE, p_value DOUBLE, q_value DOUBLE, alert BOOLEAN, wagers BIGINT, detail VARCHAR"
)


def catalog_of(rows: list[tuple[str, float]]) -> Catalog:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE surveillance ({COLUMNS})")
    for key, z in rows:
        con.execute(
            "INSERT INTO surveillance VALUES "
            "('table', 'hold', ?, 0.011, 0.012, ?, 0.9, 0.9, false, 10, '')",
            [key, z],
        )
    return Catalog(Path("audit.duckdb"), con, None, ())


def test_tables_of_equal_play_come_in_the_order_of_their_ids() -> None:
    z = -0.36
    last_bit_apart = [("c1-T-01", z), ("c0-T-01", z + 2e-16 * abs(z) * 4)]
    assert z != last_bit_apart[1][1]
    table_ids = holds(catalog_of(last_bit_apart))["table_id"].to_list()
    assert table_ids == ["c0-T-01", "c1-T-01"]


def test_the_table_that_kept_least_against_its_theory_still_comes_first() -> None:
    rows = [("a-T-01", -0.5), ("b-T-01", -2.0), ("c-T-01", None)]
    assert holds(catalog_of(rows))["table_id"].to_list() == ["b-T-01", "a-T-01", "c-T-01"]
