"""compare.outputs._hypergeom: the rank plot's hypergeometric pmf and cdf.

References: exact rationals (``math.comb``) and scipy.stats.hypergeom.  The
tolerances are the module's error analysis: each ``log C`` from ``betaln`` of
arguments up to 8000 carries an absolute error of ~1e-11 (measured: 3e-11
relative in the pmf, 1e-11 absolute in the cdf, against 4e-15 and 2e-15 for
scipy's Boost sums), so 1e-10 for both.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from compare.outputs import _hypergeom
from compare.outputs._hypergeom import cdf, fast_rank_test, pmf

TOL = 1e-10


@functools.cache
def _masses(M: int, n: int, N: int) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
    """Support start, the masses comb(n, j) comb(M - n, N - j) over the support and their
    running sums (exact integers), and comb(M, N).  Each mass from the one before,
    times ``(n - j)(N - j) / ((j + 1)(M - n - N + j + 1))``: an integer ratio, so the
    floor division is exact (2,000 big binomials per case took 4 s)."""
    lo, hi = max(0, N + n - M), min(n, N)
    mass = math.comb(n, lo) * math.comb(M - n, N - lo)
    masses, sums, total = [], [], 0
    for j in range(lo, hi + 1):
        masses.append(mass)
        total += mass
        sums.append(total)
        if j < hi:
            mass = mass * (n - j) * (N - j) // ((j + 1) * (M - n - N + j + 1))
    return lo, tuple(masses), tuple(sums), math.comb(M, N)


def exact(x: int, M: int, n: int, N: int) -> tuple[float, float]:
    """pmf and cdf as exact rationals, rounded once."""
    lo, masses, sums, den = _masses(M, n, N)
    hi = lo + len(masses) - 1
    mass = masses[x - lo] if lo <= x <= hi else 0
    below = sums[min(x, hi) - lo] if x >= lo else 0
    return float(Fraction(mass, den)), float(Fraction(below, den))


def test_the_recurrence_gives_the_binomials():
    """The table's masses are the products of binomials they stand for."""
    for M, n, N in ((40, 10, 20), (8000, 300, 6003), (7, 3, 7)):
        lo, masses, _, _ = _masses(M, n, N)
        hi = lo + len(masses) - 1
        for j in sorted({lo, min(lo + 1, hi), lo + len(masses) // 2, hi}):
            assert masses[j - lo] == math.comb(n, j) * math.comb(M - n, N - j)


CASES = [
    # (M, n, N): a default run's test (4 chains x 2000 draws), small and degenerate ones.
    (8000, 2000, 1999),
    (8000, 300, 6003),
    (8000, 1, 4000),
    (8000, 7999, 17),
    (40, 10, 20),
    (10, 10, 3),
    (12, 0, 5),
    (7, 3, 7),
]


@pytest.mark.parametrize("M, n, N", CASES)
def test_pmf_and_cdf_equal_the_exact_rationals(M, n, N):
    lo, hi = max(0, N + n - M), min(n, N)
    mean = N * n / M
    xs = sorted({lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, int(mean), int(mean) + 1, int(mean) - 7})
    for x in xs:
        want_pmf, want_cdf = exact(x, M, n, N)
        got_pmf, got_cdf = float(pmf(x, M, n, N)), float(cdf(x, M, n, N))
        assert got_pmf == pytest.approx(want_pmf, rel=TOL, abs=1e-300), x
        assert got_cdf == pytest.approx(want_cdf, rel=0, abs=TOL), x


def test_arrays_broadcast_as_scipy_does(rng):
    """What arviz-stats calls: x and N arrays, M and n scalars; and every argument an array."""
    M, n = 8000, 2000
    N = np.floor(np.arange(1, 2001) / 2001 * M).astype(int)
    x = np.round(N * n / M + rng.normal(0, 25, N.size)).astype(int)
    np.testing.assert_allclose(pmf(x, M, n, N), stats.hypergeom.pmf(x, M, n, N), rtol=TOL)
    np.testing.assert_allclose(cdf(x, M, n, N), stats.hypergeom.cdf(x, M, n, N), rtol=0, atol=TOL)
    Ms = rng.integers(1, 300, (50, 1))
    ns = rng.integers(0, Ms + 1)
    Ns = rng.integers(0, Ms + 1, (50, 7))
    xs = rng.integers(-1, 40, (1, 7))
    np.testing.assert_allclose(
        cdf(xs, Ms, ns, Ns), stats.hypergeom.cdf(xs, Ms, ns, Ns), rtol=0, atol=TOL
    )
    assert pmf(xs, Ms, ns, Ns).shape == (50, 7)


def ranks(rng, shift: float) -> np.ndarray:
    """Fractional ranks of 4 chains x 1000 draws pooled, chain 0 shifted by ``shift`` sd."""
    draws = rng.normal(size=(4, 1000))
    draws[0] += shift
    order = stats.rankdata(draws, axis=None).reshape(draws.shape)
    return order / (draws.size + 1)


def mtc_c(ary: np.ndarray):
    from arviz_stats.base.array import array_stats

    return array_stats.mchain_uniformity_test(ary)


@pytest.mark.parametrize("shift", [0.0, 0.5])
def test_the_rank_test_gives_arviz_stats_own_answer(rng, shift):
    """Inside fast_rank_test the multi-chain test returns what scipy's functions give,
    on mixing chains and on a chain planted 0.5 sd off (which both flag: p < 1e-6).

    To 1e-9 absolute: the Shapley contributions are differences of Cauchy
    transforms tan((0.5 - p) pi) of the pmf and cdf, which carry the 1e-11 of
    the log-space pmf up to ~2e-10 (measured), on values of order 1."""
    ary = ranks(rng, shift)
    slow = mtc_c(ary)
    with fast_rank_test() as patched:
        fast = mtc_c(ary)
    assert patched, "arviz_stats.base.density no longer calls hypergeom: the rank plot is slow"
    for a, b in zip(slow, fast, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-9)
    if shift:
        assert float(fast[0]) < 1e-6


def test_the_patch_is_undone_on_exit():
    from arviz_stats.base import density

    before = density.hypergeom
    with pytest.raises(RuntimeError), fast_rank_test():
        assert density.hypergeom is _hypergeom._Hypergeom
        raise RuntimeError
    assert density.hypergeom is before is stats.hypergeom
