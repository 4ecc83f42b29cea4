"""The tests' p-values and the Benjamini-Hochberg step, over numpy arrays of many tests.

Every p-value here is exact or conservative (never smaller than the truth under the
null), because the night's alert threshold is a very small p-value (of the order of
q / m for m tests) and an approximation that is fine at p = 0.05 can be off by orders of
magnitude out there:

- a rate (Banker wins, Naturals, a patron's Dragon Bonus wins) is an exact binomial test.
  Where the rounds mix chances (shoes of different decks at one table) the count is a
  sum of unlike Bernoullis; the binomial at their mean chance is more spread in both
  tails (Hoeffding 1956), so its p-value is conservative;
- where the rules leave a choice (Chemin de Fer's Player on 5) the expected chance is an
  interval between the two strategies, any mix being fair play: a count inside it is no
  evidence at all (p = 1), outside it is tested against the nearer end;
- the chi-square over Banker / Player / Tie is exact (the multinomial distribution of
  Pearson's statistic, enumerated) up to `EXACT_CHI2_ROUNDS` rounds, where the asymptotic
  tail is too optimistic (a shoe with 20 ties in 65 rounds has an asymptotic p of 2e-7
  but an exact one near 1e-5); above it the chi-square with 2 degrees of freedom, at the
  mix of strategies that fits best;
- money won is bounded per wager but heavy-tailed (a 30-to-1 Dragon Bonus): a normal
  p-value would alarm on every lucky patron, so its p-value is Bernstein's bound, valid
  whatever the tail, and the z-score is reported beside it.

The tails come from `scipy.special` (the regularized incomplete beta function gives the
binomial's exactly as `scipy.stats.binom` computes them; the chi-square with 2 degrees of
freedom has the closed form exp(-x/2); the hypergeometric's is the compiled function
`scipy.stats.hypergeom.sf` itself calls), imported by the functions that call it:
`scipy.stats` alone takes about half a second to import, which every audit would pay.
"""

from __future__ import annotations

import functools

import numpy as np

EXACT_CHI2_ROUNDS = 300
MIX_GRID = np.linspace(0.0, 1.0, 41)  # mixes of the two strategies a chi-square tries


def binomial_two_sided(
    k: np.ndarray, n: np.ndarray, p_low: np.ndarray, p_high: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(expected chance, z, p) of k successes in n against a chance in [p_low, p_high].

    The p-value doubles the smaller exact tail (capped at 1); a count inside the interval
    has p = 1 and z = 0, its own rate being a fair expectation.
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    rate = np.divide(k, n, out=np.zeros_like(k), where=n > 0)
    p0 = np.clip(rate, p_low, p_high)
    inside = (rate >= p_low) & (rate <= p_high)
    sd = np.sqrt(n * p0 * (1 - p0))
    z = np.divide(k - n * p0, sd, out=np.zeros_like(k), where=sd > 0)
    p = np.ones_like(k)
    tested = ~inside
    kt, nt, pt = k[tested], n[tested], np.broadcast_to(p0, k.shape)[tested]
    upper = binomial_sf(kt - 1, nt, pt)
    # The two tails overlap in P(X = k) and so add up to 1 or more: where the upper one
    # is below a half, the lower one is above it and plays no part in the smaller.
    # (The lower tail is the dearer to compute.)
    lower = np.ones_like(upper)
    needed = upper >= 0.5
    lower[needed] = binomial_cdf(kt[needed], nt[needed], pt[needed])
    p[tested] = np.minimum(1.0, 2 * np.minimum(lower, upper))
    return p0, np.where(inside, 0.0, z), p


def binomial_upper(k: np.ndarray, n: np.ndarray, p0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(z, p) of at least k successes in n at chance p0: the one-sided test of winning
    more often than the game allows."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    sd = np.sqrt(n * p0 * (1 - p0))
    z = np.divide(k - n * p0, sd, out=np.zeros_like(k), where=sd > 0)
    return z, binomial_sf(k - 1, n, p0)


def binomial_cdf(k: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """P(X <= k) for X binomial(n, p): `scipy.stats.binom.cdf`, value for value."""
    from scipy.special import betainc

    k, n, p = np.broadcast_arrays(np.floor(k), np.asarray(n, dtype=float), p)
    inside = (k >= 0) & (k < n)
    with np.errstate(all="ignore"):  # outside the support, replaced below
        tail = betainc(n - k, k + 1, 1 - p)
    return np.where(inside, tail, np.where(k < 0, 0.0, 1.0))


def binomial_sf(k: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """P(X > k) for X binomial(n, p): `scipy.stats.binom.sf`, value for value."""
    from scipy.special import betainc

    k, n, p = np.broadcast_arrays(np.floor(k), np.asarray(n, dtype=float), p)
    inside = (k >= 0) & (k < n)
    with np.errstate(all="ignore"):
        tail = betainc(k + 1, n - k, p)
    return np.where(inside, tail, np.where(k < 0, 1.0, 0.0))


def hypergeometric_upper(
    k: np.ndarray, draws: np.ndarray, marked: int, population: int
) -> tuple[np.ndarray, np.ndarray]:
    """(z, p) of at least k marked items in `draws` taken from `population` holding
    `marked`: a dealer's rounds with findings, when findings fall on rounds at random."""
    k, draws = np.asarray(k, dtype=float), np.asarray(draws, dtype=float)
    mean = draws * marked / population
    var = mean * (1 - marked / population) * (population - draws) / max(population - 1, 1)
    sd = np.sqrt(var)
    z = np.divide(k - mean, sd, out=np.zeros_like(k), where=sd > 0)
    return z, hypergeometric_sf(k - 1, population, marked, draws)


def hypergeometric_sf(k: np.ndarray, population: int, marked: int, draws: np.ndarray) -> np.ndarray:
    """P(X > k) for X hypergeometric: `scipy.stats.hypergeom.sf(k, population, marked,
    draws)`, value for value, from the compiled tail that function calls (a private name
    of `scipy.special`: where a scipy lacks it, `scipy.stats` itself is asked)."""
    try:
        from scipy.special._ufuncs import _hypergeom_sf
    except ImportError:  # pragma: no cover - every scipy this project supports has it
        from scipy import stats

        return np.asarray(stats.hypergeom.sf(k, population, marked, draws), dtype=float)
    k, draws = np.asarray(k, dtype=float), np.asarray(draws, dtype=float)
    # scipy.stats' own bounds around the tail: its support, and NaN for impossible shapes.
    lowest = np.maximum(draws - (population - marked), 0)
    highest = np.minimum(marked, draws)
    shape = population > 0 and 0 <= marked <= population
    possible = shape & (draws >= 0) & (draws <= population) & (draws == np.floor(draws))
    inside = possible & (k >= lowest) & (k < highest) & np.isfinite(k)
    below = possible & ((k < lowest) | np.isneginf(k))
    with np.errstate(all="ignore"):
        tail = np.clip(_hypergeom_sf(k, float(marked), draws, float(population)), 0.0, 1.0)
    sf = np.where(inside, tail, np.where(below, 1.0, 0.0))
    return np.where(possible & ~np.isnan(k), sf, np.nan)


def bernstein_upper(
    excess: np.ndarray, variance: np.ndarray, spread: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(z, p) of a sum of independent wagers' results exceeding its mean by `excess`.

    Bernstein: P(S - E[S] >= t) <= exp(-t^2 / (2 (V + M t / 3))), V the variance of the
    sum and M the largest amount one wager can move away from its mean.
    """
    sd = np.sqrt(variance)
    z = np.divide(excess, sd, out=np.zeros_like(excess), where=sd > 0)
    t = np.maximum(excess, 0.0)
    denominator = 2 * (variance + spread * t / 3)
    exponent = np.divide(t * t, denominator, out=np.zeros_like(t), where=denominator > 0)
    return z, np.minimum(1.0, np.exp(-exponent))


# ---- chi-square over the three outcomes ----------------------------------------------


def pearson(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Pearson's statistic per row (observed and expected counts, one column per cell)."""
    safe = np.where(expected > 0, expected, 1.0)
    terms = np.where(expected > 0, (observed - expected) ** 2 / safe, 0.0)
    return terms.sum(axis=1)


def chi_square(
    observed: np.ndarray, expected_a: np.ndarray, expected_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(statistic, p) per row of observed counts (rows x 3) against expected counts under
    either strategy (equal where the rules leave no choice).

    Up to `EXACT_CHI2_ROUNDS` rounds the p-value is exact, at the midway mix (the two
    strategies differ by a fraction of a standard deviation there); above, the asymptotic
    tail at the mix that fits best (the statistic is convex in the mix: the least
    significant mix is the nearest one).
    """
    observed = np.asarray(observed, dtype=float)
    n = observed.sum(axis=1)
    mid = (expected_a + expected_b) / 2
    statistic = pearson(observed, mid)
    p = np.ones(len(n))
    small = (n > 0) & (n <= EXACT_CHI2_ROUNDS)
    if small.any():
        probabilities = mid[small] / n[small, None]
        p[small] = _exact_tails(observed[small].astype(np.int64), probabilities, statistic[small])
    large = n > EXACT_CHI2_ROUNDS
    if large.any():
        mixes = [
            pearson(observed[large], w * expected_a[large] + (1 - w) * expected_b[large])
            for w in MIX_GRID
        ]
        statistic[large] = np.min(mixes, axis=0)
        # The chi-square survival function at 2 degrees of freedom is exp(-x / 2).
        p[large] = np.exp(-statistic[large] / 2)
    return statistic, p


def _exact_tails(
    observed: np.ndarray, probabilities: np.ndarray, statistic: np.ndarray
) -> np.ndarray:
    """P(X^2 >= the observed X^2) under the multinomial, per row."""
    out = np.ones(len(observed))
    n = observed.sum(axis=1)
    # Rows sharing the rounds and the chances (a shoe's ruleset and decks) share a table.
    keys = np.column_stack([n, np.round(probabilities, 12)])
    distinct, group, sizes = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    members = np.split(np.argsort(group.ravel(), kind="stable"), np.cumsum(sizes)[:-1])
    for (m, *chances), rows in zip(distinct.tolist(), members, strict=True):
        values, tails = _null_distribution(int(m), tuple(chances))
        # The tail at the first value not below the observation, with a little slack
        # for the rounding of equal statistics computed two ways.
        at = np.searchsorted(values, statistic[rows] - 1e-9 * (1 + statistic[rows]))
        out[rows] = np.append(tails, 0.0)[at]
    return np.minimum(out, 1.0)


@functools.lru_cache(maxsize=4096)
def _null_distribution(n: int, chances: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every (banker, player, tie) split of n rounds: Pearson's statistic sorted, and the
    probability of a statistic at least each value."""
    from scipy.special import gammaln

    a, b = np.triu_indices(n + 1)  # a <= b: banker = a, player = b - a, tie = n - b
    counts = np.stack([a, b - a, n - b], axis=1).astype(float)
    chances_arr = np.array(chances)
    with np.errstate(divide="ignore"):
        logs = np.log(chances_arr)
    log_pmf = gammaln(n + 1) - gammaln(counts + 1).sum(axis=1)
    log_pmf += np.where(counts > 0, counts * logs, 0.0).sum(axis=1)
    statistic = pearson(counts, np.broadcast_to(n * chances_arr, counts.shape))
    order = np.argsort(statistic, kind="stable")
    values, pmf = statistic[order], np.exp(log_pmf[order])
    tails = np.cumsum(pmf[::-1])[::-1]
    return values, tails


# ---- the night's threshold -----------------------------------------------------------


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """The BH-adjusted p-values (q-values): a test is an alert at rate q when its q-value
    is at most q, which keeps the expected share of false alerts among all alerts at
    most q (independent or positively dependent tests). `scipy.stats.false_discovery_control`'s
    step, value for value (a test says so): the bucketed night needs nothing else of
    it, as it looks each test's q-value up from the night's sorted p-values alone
    (`night.q_values`)."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    if m <= 1:
        return p
    order = np.argsort(p)
    adjusted = p[order] * (m / np.arange(1, m + 1, dtype=float))
    # A test's q-value is the smallest adjusted p-value at its rank or above; ties share
    # one, so the order among equal p-values does not matter.
    np.minimum.accumulate(adjusted[::-1], out=adjusted[::-1])
    q = np.empty_like(adjusted)
    q[order] = adjusted
    return np.clip(q, 0.0, 1.0)
