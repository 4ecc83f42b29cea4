"""The night's surveillance: every test, one threshold across all of them, the alerts.

A night runs hundreds of thousands of tests (six per shoe, several per patron), so a
fixed p-value threshold would raise alerts on fair play every night. The alerts are the
tests that pass Benjamini-Hochberg at `alert_fdr` across every test of the night: among
the alerts, the expected share raised on fair play is at most that rate, and on a night
of fair play the chance of any alert at all is at most that rate.

Alerts are not findings (CONTRACT): they never enter `findings.parquet` and never change
the exit status. They are written apart (`surveillance.parquet`, `alerts.parquet` and the
catalog's tables of the same names).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from auditor.contract import BETS
from auditor.defaults import ALERT_FDR
from auditor.packs.loaded import builtin_packs
from auditor.packs.model import RulePack
from auditor.surveillance.gather import covered_rounds, covered_wagers
from auditor.surveillance.holds import dealer_holds, table_holds
from auditor.surveillance.patrons import FAMILIES, MONEY, patron_tests
from auditor.surveillance.round_tests import LEVEL_KEYS, chances_frame, level_tests, night_totals
from auditor.surveillance.schema import (
    ALERTS_SCHEMA,
    LEVELS,
    SURVEILLANCE_SCHEMA,
    TEST_SCHEMA,
    empty_surveillance,
)
from auditor.surveillance.stats import benjamini_hochberg
from auditor.surveillance.store import CellStore, bucket

TESTS_FILE = "surveillance.parquet"
# What a test takes in memory, judged and sorted (about 130 bytes a row in a 2-million-round
# night's 437,000 tests, and the sort's copy).
TEST_BYTES = 400


@dataclass(frozen=True)
class Surveillance:
    tests: pl.LazyFrame  # SURVEILLANCE_SCHEMA: every test of the night, in order, on disk
    alerts: pl.DataFrame  # ALERTS_SCHEMA: the tests past the threshold, with their rows
    alert_fdr: float


def survey(
    store: CellStore,
    audited: Mapping[str, pl.LazyFrame],
    findings: pl.DataFrame,
    folder: Path,
    alert_fdr: float = ALERT_FDR,
    budget_bytes: int | None = None,
    packs: Mapping[str, RulePack] | None = None,
) -> Surveillance:
    """Every test over the night's counts (the partitions' cells in `store`), written to
    `folder` in a stable order, and the alerts at `alert_fdr` with the rows they cover
    (read from `audited`, for the alerts' keys only).

    The tests are built a bucket of keys at a time and written as they come, each bucket
    within `budget_bytes` (all at once if None); the threshold needs the p-values alone,
    and the night's order is an external sort: nothing holds every test at once."""
    if not 0 < alert_fdr < 1:
        raise ValueError(f"alert_fdr must lie strictly between 0 and 1, not {alert_fdr}")
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    packs = builtin_packs() if packs is None else packs
    for index, batch in enumerate(night_tests(store, budget_bytes, packs)):
        parts.append(folder / f"tests-{index:06d}.parquet")
        batch.select(list(TEST_SCHEMA)).cast(pl.Schema(TEST_SCHEMA)).with_columns(
            _p_value()
        ).write_parquet(parts[-1])
    target = folder / TESTS_FILE
    judge(parts, alert_fdr, target, folder / "sort", budget_bytes)
    tests = pl.scan_parquet(target, glob=False)
    alerts = tests.filter(pl.col("alert")).drop("alert").collect()
    return Surveillance(tests, alerts_of(alerts, audited, findings), alert_fdr)


def night_tests(
    store: CellStore, budget_bytes: int | None, packs: Mapping[str, RulePack]
) -> Iterator[pl.DataFrame]:
    """The night's tests, a level and a bucket of its keys at a time."""
    rounds = store.scan("rounds")
    chances = chances_frame(rounds.select("ruleset", "decks").unique().collect(), packs)
    totals = night_totals(rounds)
    count = store.buckets("rounds", budget_bytes)
    for level, column in LEVEL_KEYS.items():
        for index in range(count):
            cells = rounds.filter(bucket(column, count, index)).collect()
            yield level_tests(level, cells, chances, totals)
    count = store.buckets("patrons", budget_bytes)
    for index in range(count):
        cells = store.scan("patrons").filter(bucket("patron_id", count, index)).collect()
        yield patron_tests(cells)
    count = store.buckets("tables", budget_bytes)
    for index in range(count):
        cells = store.scan("tables").filter(bucket("table_id", count, index)).collect()
        yield table_holds(cells)
    count = store.buckets("dealers", budget_bytes)
    for index in range(count):
        cells = store.scan("dealers").filter(bucket("dealer_id", count, index)).collect()
        yield dealer_holds(cells)


def _p_value() -> pl.Expr:
    # A test that could not be computed is no evidence at all.
    return pl.col("p_value").fill_nan(1.0).fill_null(1.0).clip(0.0, 1.0)


def judge(
    parts: list[Path],
    alert_fdr: float,
    target: Path,
    spill: Path,
    budget_bytes: int | None = None,
) -> None:
    """The tests of `parts` into `target` in a stable order (level, key, statistic) with
    their q-values and whether each is an alert."""
    if not parts:
        empty_surveillance().write_parquet(target)
        return
    q_of = q_values(
        pl.scan_parquet(parts, glob=False).select("p_value").collect()["p_value"].to_numpy()
    )
    tests = pl.scan_parquet(parts, glob=False).select(pl.len()).collect().item()
    if budget_bytes is None or tests * TEST_BYTES <= budget_bytes // 2:
        # A night's tests are a few hundred bytes each: held at once, they are judged and
        # sorted in memory, without the external sort's files.
        judged = _judged(pl.read_parquet(parts, glob=False), q_of, alert_fdr)
        judged.sort(
            night_order(), "key", "statistic", nulls_last=False, maintain_order=True
        ).write_parquet(target, compression="zstd")
        return
    files = []
    for part in parts:
        files.append(part.with_name(f"judged-{part.name}"))
        _judged(pl.read_parquet(part, glob=False), q_of, alert_fdr).write_parquet(files[-1])
        part.unlink()
    _sort(files, target, spill, budget_bytes)
    for part in files:
        part.unlink()


def _judged(
    tests: pl.DataFrame, q_of: Callable[[np.ndarray], np.ndarray], alert_fdr: float
) -> pl.DataFrame:
    q = q_of(tests["p_value"].to_numpy())
    return tests.with_columns(
        pl.Series("q_value", q, dtype=pl.Float64),
        pl.Series("alert", q <= alert_fdr, dtype=pl.Boolean),
        pl.lit(alert_fdr, dtype=pl.Float64).alias("alert_fdr"),
    ).select(list(SURVEILLANCE_SCHEMA))


def night_order() -> pl.Expr:
    """The levels in `LEVELS` order (the file's first sort key)."""
    order = {level: i for i, level in enumerate(LEVELS)}
    return pl.col("level").replace_strict(order, return_dtype=pl.Int8)


def q_values(p: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The Benjamini-Hochberg q-value of any p-value among `p` (`stats.benjamini_hochberg`
    over them all): a test's q-value depends on its p-value and the night's p-values
    alone, equal p-values sharing one, so it can be looked up test by test."""
    ordered = np.sort(p)
    adjusted = benjamini_hochberg(ordered)

    def lookup(values: np.ndarray) -> np.ndarray:
        at = np.searchsorted(ordered, values, side="right") - 1
        return adjusted[at]

    return lookup


def _sort(parts: list[Path], target: Path, spill: Path, budget_bytes: int | None) -> None:
    """DuckDB's sort, which spills to `spill` beyond its memory limit."""
    config: dict[str, str | bool | int | float | list[str]] = {
        "temp_directory": str(spill),
        "preserve_insertion_order": True,
    }
    if budget_bytes is not None:
        config["memory_limit"] = f"{max(budget_bytes // 2**20, 64)}MB"
    levels = ", ".join(_literal(level) for level in LEVELS)
    files = ", ".join(_literal(part) for part in parts)
    with duckdb.connect(":memory:", config=config) as con:
        con.execute(
            f"COPY (SELECT * FROM read_parquet([{files}]) "
            f"ORDER BY list_position([{levels}], level), key NULLS FIRST, statistic) "
            f"TO {_literal(target)} (FORMAT parquet, COMPRESSION zstd)"
        )


def _literal(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def alerts_of(
    alerts: pl.DataFrame, audited: Mapping[str, pl.LazyFrame], findings: pl.DataFrame
) -> pl.DataFrame:
    """The alerts (the tests past the threshold, without the `alert` column), each with
    the rows it covers (read again, for these keys only)."""
    if alerts.height == 0:
        return pl.DataFrame(schema=ALERTS_SCHEMA)

    def keys(level: str, findings_test: bool = False) -> list[str]:
        chosen = alerts.filter(
            (pl.col("level") == level)
            & ((pl.col("statistic") == "findings_per_1000_rounds") == findings_test)
        )
        return sorted(set(chosen["key"]))

    shoes = covered_rounds(audited, "shoe_id", keys("shoe"))
    dealers = covered_rounds(audited, "dealer_id", keys("dealer"))
    finding_dealers = covered_rounds(audited, "dealer_id", keys("dealer", True), findings)
    wanted = [
        (row["key"], _bets_of(row["statistic"]))
        for row in alerts.filter(pl.col("level") == "patron").iter_rows(named=True)
    ]
    patrons = covered_wagers(audited, wanted)
    round_ids, wager_ids = [], []
    for row in alerts.iter_rows(named=True):
        level, key = row["level"], row["key"]
        rounds = None
        if level == "shoe":
            rounds = shoes.get(key, [])
        elif level == "dealer":
            finding = row["statistic"] == "findings_per_1000_rounds"
            rounds = (finding_dealers if finding else dealers).get(key, [])
        round_ids.append(rounds)
        wagers = patrons.get((key, _bets_of(row["statistic"]))) if level == "patron" else None
        wager_ids.append(wagers)
    return alerts.with_columns(
        pl.Series("round_ids", round_ids, dtype=pl.List(pl.String())),
        pl.Series("wager_ids", wager_ids, dtype=pl.List(pl.String())),
    ).select(list(ALERTS_SCHEMA))


def _bets_of(statistic: str) -> tuple[str, ...]:
    if statistic == MONEY:
        return BETS
    return FAMILIES.get(statistic.removesuffix("_win_rate"), ())
