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

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from auditor.contract import BETS
from auditor.surveillance.gather import NightCells, covered_rounds, covered_wagers
from auditor.surveillance.holds import table_holds
from auditor.surveillance.patrons import FAMILIES, MONEY, patron_tests
from auditor.surveillance.rounds import round_tests
from auditor.surveillance.schema import (
    ALERT_FDR,
    ALERTS_SCHEMA,
    LEVELS,
    SURVEILLANCE_SCHEMA,
    TEST_SCHEMA,
)
from auditor.surveillance.stats import benjamini_hochberg


@dataclass(frozen=True)
class Surveillance:
    tests: pl.DataFrame  # SURVEILLANCE_SCHEMA: every test of the night
    alerts: pl.DataFrame  # ALERTS_SCHEMA: the tests past the threshold, with their rows
    alert_fdr: float


def survey(
    cells: NightCells,
    audited: Mapping[str, pl.LazyFrame],
    findings: pl.DataFrame,
    alert_fdr: float = ALERT_FDR,
) -> Surveillance:
    """Every test over the night's counts (`gather.combine_cells` of the partitions'),
    and the alerts at `alert_fdr` with the rows they cover (read from `audited`, for the
    alerts' keys only)."""
    if not 0 < alert_fdr < 1:
        raise ValueError(f"alert_fdr must lie strictly between 0 and 1, not {alert_fdr}")
    tests = pl.concat(
        [round_tests(cells.rounds), patron_tests(cells.patrons), table_holds(cells.tables)]
    )
    tests = judge(tests, alert_fdr)
    return Surveillance(tests, alerts_of(tests, audited, findings), alert_fdr)


def judge(tests: pl.DataFrame, alert_fdr: float) -> pl.DataFrame:
    """The tests in a stable order with their q-values and whether each is an alert."""
    order = {level: i for i, level in enumerate(LEVELS)}
    tests = (
        tests.select(list(TEST_SCHEMA))
        .with_columns(pl.col("p_value").fill_nan(1.0).fill_null(1.0).clip(0.0, 1.0))
        .sort(
            pl.col("level").replace_strict(order, return_dtype=pl.Int8),
            "key",
            "statistic",
        )
    )
    q = benjamini_hochberg(tests["p_value"].to_numpy())
    return tests.with_columns(
        pl.Series("q_value", q, dtype=pl.Float64),
        pl.Series("alert", q <= alert_fdr, dtype=pl.Boolean),
        pl.lit(alert_fdr, dtype=pl.Float64).alias("alert_fdr"),
    ).select(list(SURVEILLANCE_SCHEMA))


def alerts_of(
    tests: pl.DataFrame, audited: Mapping[str, pl.LazyFrame], findings: pl.DataFrame
) -> pl.DataFrame:
    """The alerts, each with the rows it covers (read again, for these keys only)."""
    alerts = tests.filter(pl.col("alert")).drop("alert")
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
