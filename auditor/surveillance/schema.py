"""The columns of `surveillance.parquet` (every test of the night) and `alerts.parquet`
(the tests past the night's threshold, with the rows they cover)."""

from __future__ import annotations

import polars as pl

LEVELS = ("table", "shoe", "dealer", "patron")

# One row per test, as the tests build them (before the night's threshold).
TEST_SCHEMA = {
    "level": pl.String(),  # table, shoe, dealer, patron
    "key": pl.String(),  # the table_id, shoe_id, dealer_id or patron_id tested
    "table_id": pl.String(),  # the table of a table or shoe; null for dealers and patrons
    "statistic": pl.String(),
    # In the statistic's unit: a share of rounds or wagers (*_rate), rounds per 1,000
    # (findings_per_1000_rounds), dollars (money_won), a share of the money wagered
    # that the house kept (hold, with the theoretical hold as expected); for
    # outcomes_chi2, Pearson's statistic and its degrees of freedom (its mean on fair
    # play).
    "observed": pl.Float64(),
    "expected": pl.Float64(),
    "z": pl.Float64(),  # null for the chi-square
    "p_value": pl.Float64(),
    "rounds": pl.Int64(),  # rounds the test covers (null for a patron's wagers)
    "wagers": pl.Int64(),  # wagers the test covers (null for rounds' tests)
    "detail": pl.String(),  # the counts behind it, for a person
}

SURVEILLANCE_SCHEMA = {
    **TEST_SCHEMA,
    "q_value": pl.Float64(),  # Benjamini-Hochberg adjusted over every test of the night
    "alert": pl.Boolean(),  # q_value <= alert_fdr
    "alert_fdr": pl.Float64(),
}

ALERTS_SCHEMA = {
    **{name: dtype for name, dtype in SURVEILLANCE_SCHEMA.items() if name != "alert"},
    # The rows the alert is about: a shoe's or dealer's regular rounds (for a dealer's
    # findings rate, the rounds with a finding), a patron's wagers of the bets tested.
    # Null for a table: every regular round of the table (`rounds WHERE table_id = key`).
    "round_ids": pl.List(pl.String()),
    "wager_ids": pl.List(pl.String()),
}


def empty_tests() -> pl.DataFrame:
    return pl.DataFrame(schema=TEST_SCHEMA)


def empty_surveillance() -> pl.DataFrame:
    return pl.DataFrame(schema=SURVEILLANCE_SCHEMA)


def empty_alerts() -> pl.DataFrame:
    return pl.DataFrame(schema=ALERTS_SCHEMA)
