"""The tails surveillance's p-values come from, against `scipy.stats`: the same values,
computed without importing `scipy.stats` (about half a second of every audit process)."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from auditor.surveillance.stats import (
    benjamini_hochberg,
    binomial_cdf,
    binomial_sf,
    binomial_two_sided,
    chi_square,
    hypergeometric_sf,
)
from tests.support.datasets import DatasetWriter, base_rows


def binomial_grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts over the whole support and past both ends, chances from 0 to 1."""
    rng = np.random.default_rng(7)
    n = rng.integers(0, 20_000, 50_000).astype(float)
    p = rng.uniform(0, 1, 50_000)
    p[:500], p[500:1000] = 0.0, 1.0
    k = np.floor(rng.uniform(-0.05, 1.05, 50_000) * (n + 1))
    k[1000:1500], k[1500:2000], k[2000:2500] = 0.0, n[1500:2000], -1.0
    return k, n, p


def test_binomial_tails_equal_scipy_stats_value_for_value() -> None:
    k, n, p = binomial_grid()
    np.testing.assert_array_equal(binomial_cdf(k, n, p), stats.binom.cdf(k, n, p))
    np.testing.assert_array_equal(binomial_sf(k - 1, n, p), stats.binom.sf(k - 1, n, p))


def test_the_two_sided_test_doubles_the_smaller_of_scipys_tails() -> None:
    """Computed from the upper tail alone where it is the smaller: value for value the
    definition, both tails from scipy.stats."""
    rng = np.random.default_rng(5)
    n = rng.integers(0, 500, 100_000).astype(float)
    k = np.floor(rng.uniform(0, 1, 100_000) * (n + 1))
    low = rng.uniform(0, 1, 100_000)
    high = np.minimum(1.0, low + rng.choice([0.0, 0.05], 100_000))
    chance, _, p = binomial_two_sided(k, n, low, high)
    tails = np.minimum(stats.binom.cdf(k, n, chance), stats.binom.sf(k - 1, n, chance))
    rate = np.divide(k, n, out=np.zeros_like(k), where=n > 0)
    inside = (rate >= low) & (rate <= high)
    assert 0 < inside.sum() < len(k)
    np.testing.assert_array_equal(p, np.where(inside, 1.0, np.minimum(1.0, 2 * tails)))


def test_binomial_tails_differ_where_the_count_differs() -> None:
    """The comparison above can fail: one success more moves both tails."""
    n, p = np.array([100.0]), np.array([0.5])
    assert binomial_sf(np.array([59.0]), n, p)[0] < binomial_sf(np.array([58.0]), n, p)[0]
    assert binomial_cdf(np.array([41.0]), n, p)[0] > binomial_cdf(np.array([40.0]), n, p)[0]


def test_large_chi_square_p_values_equal_the_chi_square_tail() -> None:
    rng = np.random.default_rng(3)
    expected = np.tile([[4586.0, 4462.0, 952.0]], (2000, 1))
    observed = expected + rng.normal(0, 60, (2000, 3)).round()
    statistic, p = chi_square(observed, expected, expected)
    np.testing.assert_allclose(p, stats.chi2.sf(statistic, df=2), rtol=1e-12, atol=0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1e-9, 0.001, 0.01, 0.04, 0.5, 1.0]) | st.floats(0, 1)))
def test_benjamini_hochberg_equals_scipys_step(values) -> None:
    p = np.array(values, dtype=float)
    np.testing.assert_array_equal(
        benjamini_hochberg(p), stats.false_discovery_control(p, method="bh") if len(p) else p
    )


@pytest.mark.e2e
def test_a_night_with_findings_is_audited_without_importing_scipy_stats(
    write_dataset: DatasetWriter, tmp_path: Path
) -> None:
    """Run as a user runs it, in a process of its own (this one has imported scipy.stats):
    a night with findings runs every surveillance test, the dealers' findings rate
    (the hypergeometric tail) too."""
    rows = base_rows()
    rows["wagers"][1]["payout"] = Decimal("20.20")  # a win paid twice: a finding
    dataset = write_dataset(rows)
    script = (
        "import sys\n"
        "from auditor.cli import main\n"
        "try:\n"
        f"    main(['audit', {str(dataset)!r}, '--out', {str(tmp_path / 'out')!r}, '--quiet'])\n"
        "except SystemExit as ended:\n"
        "    print('exit', ended.code)\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    # Exit 1: the audit ran and found what was planted.
    assert ran.stdout.split()[-3:] == ["exit", "1", "False"], ran.stdout + ran.stderr
    findings = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    assert findings.height > 0
    surveillance = pl.read_parquet(tmp_path / "out" / "surveillance.parquet")
    assert "dealer" in surveillance["level"].to_list()


def test_the_hypergeometric_tail_equals_scipy_stats_value_for_value() -> None:
    """Counts over the whole support, past both ends and not whole; draws from none to
    the whole population and past it; populations from a shoe's to a large night's."""
    rng = np.random.default_rng(11)
    for population in (1, 7, 80, 5_000, 2_000_000):
        for marked in sorted({0, 1, population // 3, population - 1, population}):
            draws = np.floor(rng.uniform(-0.1, 1.1, 2_000) * (population + 1))
            draws[:3] = (0.0, float(population), 2.5)
            k = np.floor(rng.uniform(-0.1, 1.1, 2_000) * (np.maximum(draws, 0) + 2)) - 1
            k[3:6] = (-np.inf, np.inf, np.nan)
            k[6] = 0.5
            np.testing.assert_array_equal(
                hypergeometric_sf(k, population, marked, draws),
                stats.hypergeom.sf(k, population, marked, draws),
                err_msg=f"population {population}, marked {marked}",
            )


def test_the_hypergeometric_tail_moves_with_the_count() -> None:
    """The comparison above can fail: one marked round more is less likely."""
    one_more = hypergeometric_sf(np.array([10.0, 11.0]), 1000, 100, np.array([50.0, 50.0]))
    assert 0 < one_more[1] < one_more[0] < 1
