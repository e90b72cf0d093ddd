"""The hypergeometric pmf and cdf of the rank plot's multi-chain test, vectorised.

arviz-stats' ``mtc_c`` test (``plot_rank``'s flagged points) evaluates
``scipy.stats.hypergeom.pmf`` and ``.cdf`` at every draw of every chain of
every parameter shown: 2 x 4 x 2000 points per parameter of a default run.
scipy evaluates each point by Boost's term-by-term sum, about 30 us a point
at N = 8000: 0.5 s a parameter, 2-4 s a topic page, the largest part of the
rank figures.  Here the same numbers, for a whole array at once:

* the pmf in log space, ``log C(n, x) + log C(M - n, N - x) - log C(M, N)``,
  each ``log C`` from ``betaln`` (accurate relative to its result, a few
  thousand at M = 8000; three ``gammaln`` of ~6e4 would cancel to it and
  lose two more digits);
* the cdf by summing the pmf's terms away from the mean with the exact ratio
  of successive terms, ``pmf(j - 1) / pmf(j) = j (M - n - N + j) / ((n - j + 1)
  (N - j + 1))``: below the mean the lower tail ``sum_{j <= x} pmf(j)``, above
  it ``1 - sum_{j > x} pmf(j)``, so the summed terms only fall (past the mode,
  at most one step from the mean) and the sum stops when a term no longer
  changes it.  Every point then costs a few times the tail's width (tens of
  terms) in vector operations over all points at once.

Parameters follow scipy's ``hypergeom(M, n, N)``: ``M`` objects, ``n`` of them
marked, ``N`` drawn, ``x`` marked among the drawn.  ``tests/compare/outputs/
test_hypergeom.py`` compares both with scipy on random and extreme cases;
``benchmarks/report.py`` times the two side by side.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from scipy import special

#: A term below this fraction of the running sum no longer changes it (double precision).
_NEGLIGIBLE = np.finfo(float).eps / 4
#: Terms of a tail summed per vector operation: a tail of a default run's test is tens of
#: terms wide (sd ~ 20 at N = 8000), so most points finish in one or two blocks.
_BLOCK = 32


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    # B(n - k + 1, k + 1) = 1 / ((n + 1) C(n, k)); betaln keeps its relative accuracy where
    # three gammaln's of ~6e4 would cancel to a result of a few thousand.
    return -np.log1p(n) - special.betaln(n - k + 1, k + 1)


def _arrays(x: Any, M: Any, n: Any, N: Any) -> tuple[np.ndarray, ...]:
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (x, M, n, N)))
    return tuple(np.array(a, dtype=float) for a in arrays)


def _support(M: np.ndarray, n: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.maximum(0.0, N + n - M), np.minimum(n, N)


def pmf(x: Any, M: Any, n: Any, N: Any) -> np.ndarray:
    """``scipy.stats.hypergeom.pmf(x, M, n, N)`` for integer arguments, any shapes that broadcast.

    Returns
    -------
    ndarray
        The probability of ``x`` marked objects among ``N`` drawn from ``M`` of which
        ``n`` are marked; 0 outside the support.
    """
    x, M, n, N = _arrays(x, M, n, N)
    lo, hi = _support(M, n, N)
    inside = (x >= lo) & (x <= hi)
    xs = np.where(inside, x, lo)
    log_p = _log_choose(n, xs) + _log_choose(M - n, N - xs) - _log_choose(M, N)
    return np.where(inside, np.exp(log_p), 0.0)


def cdf(x: Any, M: Any, n: Any, N: Any) -> np.ndarray:
    """``scipy.stats.hypergeom.cdf(x, M, n, N)`` for integer arguments, any shapes that broadcast.

    Returns
    -------
    ndarray
        ``P(X <= x)``: 0 below the support, 1 at and above its top.
    """
    x, M, n, N = _arrays(x, M, n, N)
    lo, hi = _support(M, n, N)
    out = np.where(x < lo, 0.0, 1.0)
    inside = (x >= lo) & (x < hi)
    if not inside.any():
        return out
    x, M, n, N, lo, hi = (a[inside] for a in (x, M, n, N, lo, hi))
    lower = x * M <= N * n  # x at or below the mean N n / M: sum the lower tail
    sign = np.where(lower, -1.0, 1.0)
    # The first term: pmf(x) for the lower tail, pmf(x + 1) for the upper one.
    j = np.where(lower, x, x + 1)
    term = pmf(j, M, n, N)
    total = term.copy()
    todo = np.flatnonzero(term > 0)
    while todo.size:
        # The next _BLOCK terms of every unfinished tail at once: products of the ratios.
        jj = j[todo, None] + sign[todo, None] * np.arange(_BLOCK)  # from j to the next
        mm, nn, dd = M[todo, None], n[todo, None], N[todo, None]
        with np.errstate(divide="ignore", invalid="ignore"):  # past the support: masked below
            down = jj * (mm - nn - dd + jj) / ((nn - jj + 1) * (dd - jj + 1))
            up = (nn - jj) * (dd - jj) / ((jj + 1) * (mm - nn - dd + jj + 1))
        step = np.where(lower[todo, None], down, up)
        nxt = jj + sign[todo, None]
        valid = (nxt >= lo[todo, None]) & (nxt <= hi[todo, None])
        # Outside the support a ratio is 0 (and the formula's may be negative or inf).
        terms = term[todo, None] * np.cumprod(np.where(valid, step, 0.0), axis=1)
        total[todo] += terms.sum(axis=1)
        term[todo] = terms[:, -1]
        j[todo] = nxt[:, -1]
        todo = todo[terms[:, -1] > _NEGLIGIBLE * total[todo]]
    out[inside] = np.where(lower, total, 1.0 - total)
    return np.clip(out, 0.0, 1.0)


class _Hypergeom:
    """The two methods of ``scipy.stats.hypergeom`` that arviz-stats' ``mtc_c`` calls."""

    pmf = staticmethod(pmf)
    cdf = staticmethod(cdf)


@contextlib.contextmanager
def fast_rank_test() -> Iterator[bool]:
    """Inside, arviz-stats' multi-chain rank test uses :func:`pmf` and :func:`cdf`.

    Yields whether it could: False when the installed arviz-stats no longer
    calls ``hypergeom`` from ``arviz_stats.base.density`` (then its own,
    slower, code runs; ``test_hypergeom.py`` fails so that this is noticed).
    """
    try:
        from arviz_stats.base import density  # heavy: arviz-stats, with the figures only
    except ImportError:
        yield False
        return
    original = getattr(density, "hypergeom", None)
    if original is None:
        yield False
        return
    density.hypergeom = _Hypergeom
    try:
        yield True
    finally:
        density.hypergeom = original
