"""The rounds' tests, per table, shoe and dealer: the outcomes against the exact chances
for the shoes' decks (a chi-square, and each outcome's rate with its z-score), the rate
of Naturals and of pairs, and per dealer the rounds with a finding against the night's.

Each level sums the cells of `gather.round_cells`: a table's or a dealer's rounds may
come from shoes of different decks (and a dealer's from different rulesets), so the
expected count is the sum of each cell's rounds times its own chance.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from auditor.packs.model import RulePack
from auditor.surveillance.expected import OUTCOME_NAMES, in_range, round_chances
from auditor.surveillance.schema import TEST_SCHEMA, empty_tests
from auditor.surveillance.stats import binomial_two_sided, chi_square, hypergeometric_upper
from auditor.surveillance.text import details, fixed_text, of_text, whole_text

LEVEL_KEYS = {"table": "table_id", "shoe": "shoe_id", "dealer": "dealer_id"}


def chances_frame(cells: pl.DataFrame, packs: Mapping[str, RulePack]) -> pl.DataFrame:
    """The exact chances of every (ruleset, decks) in the cells (decks the enumeration
    cannot take are left out: their rounds are not tested)."""
    rows = []
    for ruleset, decks in cells.select("ruleset", "decks").unique().sort("*").iter_rows():
        if ruleset is None or not in_range(decks):
            continue
        chances = round_chances(packs[ruleset], decks)
        rows.append(
            {
                "ruleset": ruleset,
                "decks": decks,
                **{f"p_{o}_a": chances.first[o] for o in OUTCOME_NAMES},
                **{f"p_{o}_b": chances.last[o] for o in OUTCOME_NAMES},
                "p_natural": chances.natural,
                "p_pair": chances.pair,
            }
        )
    schema = {
        "ruleset": pl.String(),
        "decks": pl.Int32(),
        **{f"p_{o}_{s}": pl.Float64() for s in "ab" for o in OUTCOME_NAMES},
        "p_natural": pl.Float64(),
        "p_pair": pl.Float64(),
    }
    return pl.DataFrame(rows, schema=schema)


def night_totals(cells: pl.LazyFrame) -> tuple[int, int]:
    """The night's rounds and rounds with a finding: what each dealer's share is
    weighed against."""
    totals = cells.select(pl.col("rounds").sum(), pl.col("finding_rounds").sum()).collect()
    rounds, flagged = totals.row(0)
    return int(rounds or 0), int(flagged or 0)


def level_tests(
    level: str, cells: pl.DataFrame, chances: pl.DataFrame, totals: tuple[int, int]
) -> pl.DataFrame:
    """The tests of `level` (table, shoe or dealer) over every cell of the keys it tests
    (`cells` may hold a bucket of keys only: each key's cells must all be there)."""
    column = LEVEL_KEYS[level]
    tested = cells.join(chances, on=["ruleset", "decks"], how="left")
    # Rounds without a chance (decks out of range) count for the findings rate only.
    n = pl.when(pl.col("p_pair").is_not_null()).then(pl.col("n")).otherwise(0)
    expected = [
        (n * pl.col(f"p_{o}_{s}").fill_null(0.0)).alias(f"e_{o}_{s}")
        for s in "ab"
        for o in OUTCOME_NAMES
    ]
    tested = tested.with_columns(
        *expected,
        (n * pl.col("p_natural").fill_null(0.0)).alias("e_natural"),
        (n * pl.col("p_pair").fill_null(0.0)).alias("e_pair"),
        n.alias("n_tested"),
    )
    sums = [c for c in tested.columns if c.startswith("e_")]
    counted = ["n_tested", *OUTCOME_NAMES, "natural", "pair", "rounds", "finding_rounds"]
    grouped = (
        tested.group_by(column)
        .agg(
            pl.col("table_id").first().alias("_table"),
            *(pl.col(c).sum() for c in [*counted, *sums]),
        )
        .sort(column)
    )
    table_id = grouped["_table"] if level != "dealer" else None
    frames = [_level_tests(level, grouped, grouped[column], table_id)]
    if level == "dealer":
        frames.append(findings_rate(grouped, totals))
    frames = [f for f in frames if f.height]
    return pl.concat(frames) if frames else empty_tests()


def _level_tests(
    level: str, g: pl.DataFrame, keys: pl.Series, table_id: pl.Series | None
) -> pl.DataFrame:
    n = g["n_tested"].to_numpy().astype(float)
    has = n > 0
    g, keys, n = g.filter(pl.Series(has)), keys.filter(pl.Series(has)), n[has]
    if table_id is not None:
        table_id = table_id.filter(pl.Series(has))
    if not len(n):
        return empty_tests()
    observed = np.stack([g[o].to_numpy() for o in OUTCOME_NAMES], axis=1).astype(float)
    exp_a = np.stack([g[f"e_{o}_a"].to_numpy() for o in OUTCOME_NAMES], axis=1)
    exp_b = np.stack([g[f"e_{o}_b"].to_numpy() for o in OUTCOME_NAMES], axis=1)
    rows = []
    statistic, p = chi_square(observed, exp_a, exp_b)
    mid = (exp_a + exp_b) / 2
    columns: dict[str, object] = {f"o{j}": observed[:, j] for j in range(len(OUTCOME_NAMES))}
    columns |= {f"e{j}": mid[:, j] for j in range(len(OUTCOME_NAMES))}
    parts = [
        pl.concat_str(
            pl.lit(f"{name} "),
            whole_text(pl.col(f"o{j}")),
            pl.lit(" ("),
            fixed_text(pl.col(f"e{j}"), 1),
            pl.lit(" expected)"),
        )
        for j, name in enumerate(OUTCOME_NAMES)
    ]
    detail = details(columns, pl.concat_str(parts, separator=", "))
    rows.append(_frame(level, keys, table_id, "outcomes_chi2", statistic, 2.0, None, p, n, detail))
    for j, name in enumerate(OUTCOME_NAMES):
        low = np.minimum(exp_a[:, j], exp_b[:, j]) / n
        high = np.maximum(exp_a[:, j], exp_b[:, j]) / n
        rows.append(_rate(level, keys, table_id, f"{name}_rate", observed[:, j], n, low, high))
    for name in ("natural", "pair"):
        chance = g[f"e_{name}"].to_numpy() / n
        k = g[name].to_numpy().astype(float)
        rows.append(_rate(level, keys, table_id, f"{name}_rate", k, n, chance, chance))
    return pl.concat(rows)


def _rate(
    level: str,
    keys: pl.Series,
    table_id: pl.Series | None,
    statistic: str,
    k: np.ndarray,
    n: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
) -> pl.DataFrame:
    expected, z, p = binomial_two_sided(k, n, low, high)
    detail = details({"k": k, "n": n}, of_text(pl.col("k"), pl.col("n"), " rounds"))
    return _frame(level, keys, table_id, statistic, k / n, expected, z, p, n, detail)


def findings_rate(dealers: pl.DataFrame, totals: tuple[int, int]) -> pl.DataFrame:
    """Per dealer, the rounds with a finding (of any kind of round) against the night's
    share: if findings fell on rounds at random, a dealer's count would be
    hypergeometric. Rounds, not findings: one misdealt round can carry a dozen wager
    findings, and counting them would weigh one event a dozen times. `totals`: the
    night's rounds and rounds with a finding (`night_totals`), `dealers` may be some of
    the night's dealers only."""
    population, marked = totals
    if marked == 0 or population == 0 or dealers.height == 0:
        return empty_tests()
    rounds = dealers["rounds"].to_numpy().astype(float)
    k = dealers["finding_rounds"].to_numpy().astype(float)
    z, p = hypergeometric_upper(k, rounds, marked, population)
    night = 1000 * marked / population
    detail = details(
        {"k": k, "n": rounds}, of_text(pl.col("k"), pl.col("n"), " rounds with a finding")
    )
    return _frame(
        "dealer",
        dealers["dealer_id"],
        None,
        "findings_per_1000_rounds",
        1000 * k / rounds,
        night,
        z,
        p,
        rounds,
        detail,
    )


def _frame(
    level: str,
    keys: pl.Series,
    table_id: pl.Series | None,
    statistic: str,
    observed: np.ndarray,
    expected: np.ndarray | float,
    z: np.ndarray | None,
    p: np.ndarray,
    rounds: np.ndarray,
    detail: pl.Series,
) -> pl.DataFrame:
    height = len(keys)
    return pl.DataFrame(
        {
            "level": [level] * height,
            "key": keys.cast(pl.String),
            "table_id": table_id if table_id is not None else [None] * height,
            "statistic": [statistic] * height,
            "observed": np.asarray(observed, dtype=float),
            "expected": np.broadcast_to(np.asarray(expected, dtype=float), (height,)),
            "z": z if z is not None else [None] * height,
            "p_value": np.asarray(p, dtype=float),
            "rounds": np.asarray(rounds).astype(np.int64),
            "wagers": [None] * height,
            "detail": detail,
        },
        schema=TEST_SCHEMA,
    )
