"""Beta prior, Bernoulli likelihood (the "beta-binomial" conjugate pair).

Model (Murphy 2012, sec. 3.3; Bishop 2006, sec. 2.1.1)::

    p ~ Beta(a, b)
    x_i | p ~ Bernoulli(p),  i = 1..n,  x_i in {0, 1}

Posterior ``p | D ~ Beta(a + s, b + n - s)`` with ``s = sum x_i``.  The
evidence is that of the observed *sequence*, ``B(a + s, b + n - s) / B(a, b)``
(multiply by ``C(n, s)`` for the count ``s``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analytic._base import (
    ConjugatePath,
    ExactAnswer,
    as_data,
    central_interval,
    check_power,
    path_columns,
    require_positive,
    scaled_shape,
)
from analytic._frozen import freeze

PARAMETERS = ("p",)


@dataclass(frozen=True)
class Stats:
    """Sufficient statistics: ``n`` trials with ``successes`` ones; mergeable by addition."""

    n: int
    successes: int

    def __add__(self, other: Stats) -> Stats:
        return Stats(self.n + other.n, self.successes + other.successes)


def sufficient_stats(*, x: np.ndarray) -> Stats:
    """Counts of a 0/1 array of shape (n,)."""
    x = as_data("x", x)
    if not np.all((x == 0) | (x == 1)):
        i = int(np.flatnonzero((x != 0) & (x != 1))[0])
        raise ValueError(f"x[{i}] = {x[i]} is not 0 or 1; code outcomes as 0/1")
    return Stats(n=int(x.size), successes=int(x.sum()))


@dataclass(frozen=True)
class BetaPosterior:
    """Beta(a, b) over the single parameter ``p``."""

    a: float
    b: float
    parameters: tuple[str, ...] = PARAMETERS
    free: tuple[int, ...] = (0,)
    is_gaussian: bool = False
    moments_below: float = float("inf")

    def marginal(self, index: int = 0) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(stats.beta, self.a, self.b)

    @property
    def mean(self) -> np.ndarray:
        return np.array([self.a / (self.a + self.b)])

    @property
    def cov(self) -> np.ndarray:
        s = self.a + self.b
        return np.array([[self.a * self.b / (s * s * (s + 1.0))]])

    @property
    def mode(self) -> np.ndarray | None:
        a, b = self.a, self.b
        if a > 1 and b > 1:
            return np.array([(a - 1.0) / (a + b - 2.0)])
        if a <= 1 < b:
            return np.array([0.0])
        if b <= 1 < a:
            return np.array([1.0])
        return None  # a, b <= 1: uniform or U-shaped, no unique mode

    @property
    def mode_interior(self) -> bool:
        return self.a > 1 and self.b > 1

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return stats.beta.logpdf(np.asarray(x)[..., 0], self.a, self.b)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.beta(self.a, self.b, size=(size, 1))


def update(*, suff: Stats, a: float, b: float) -> BetaPosterior:
    """Conjugate update of Beta(a, b) by sufficient statistics.

    Sequential use is exact: ``update(suff=s2, a=post1.a, b=post1.b)`` equals
    ``update(suff=s1 + s2, a=a, b=b)``.
    """
    a = require_positive("a", a)
    b = require_positive("b", b)
    # Failures first: b + n - s would round b away when b << 1 (b = 1e-50, n = s = 1 gave 0).
    return BetaPosterior(a + suff.successes, b + (suff.n - suff.successes))


def solve(*, x: np.ndarray, a: float, b: float) -> ExactAnswer:
    """Posterior, MLE, log evidence and predictive for 0/1 outcomes ``x`` of shape (n,).

    The evidence is ``log B(a + s, b + n - s) - log B(a, b)``; the predictive
    is ``Bernoulli(E[p | D])``.
    """
    from scipy import special, stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = sufficient_stats(x=x)
    post = update(suff=suff, a=a, b=b)
    return ExactAnswer(
        posterior=post,
        mle=None if suff.n == 0 else np.array([suff.successes / suff.n]),
        log_evidence=float(special.betaln(post.a, post.b) - special.betaln(a, b)),
        predictive=freeze(stats.bernoulli, float(post.mean[0])),
    )


def posterior(*, x: np.ndarray, a: float, b: float) -> BetaPosterior:
    """Posterior Beta for 0/1 outcomes ``x`` of shape (n,) under Beta(a, b)."""
    return update(suff=sufficient_stats(x=x), a=a, b=b)


def simulate(
    rng: np.random.Generator, *, n: int, a: float, b: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw p from the prior, then n outcomes; returns (theta of shape (1,), x of shape (n,))."""
    p = rng.beta(a, b)
    return np.array([p]), (rng.random(n) < p).astype(float)


# --- prior sensitivity (compare/studies/sensitivity.py) -------------------------------
def sensitivity_path(
    *, x: np.ndarray, a: npt.ArrayLike, b: npt.ArrayLike, interval: float = 0.95
) -> ConjugatePath:
    """The exact posterior at G values of the Beta(a, b) prior at once.

    ``a`` and ``b`` are numbers or arrays of shape (G,) (broadcast); the same
    formulas as :func:`update` (the mode on the boundary when a or b <= 1),
    the central ``interval`` interval of Beta(a + s, b + n - s).
    """
    from scipy import special, stats  # heavy: SciPy (0.5 s) only when the maths runs

    s = sufficient_stats(x=x)
    a, b = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (a, b))
    a, b = np.broadcast_arrays(a, b)
    an, bn = a + s.successes, b + s.n - s.successes
    tot = an + bn
    with np.errstate(divide="ignore", invalid="ignore"):
        mode = np.where(
            (an > 1) & (bn > 1),
            (an - 1.0) / (tot - 2.0),
            np.where((an <= 1) & (bn > 1), 0.0, np.where((bn <= 1) & (an > 1), 1.0, np.nan)),
        )
    lo, hi = central_interval(stats.beta, interval, an, bn)
    log_ev = special.betaln(an, bn) - special.betaln(a, b)
    mean, sd, lo, hi, mode = path_columns(
        an / tot, np.sqrt(an * bn / (tot * tot * (tot + 1.0))), lo, hi, mode
    )
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def power_scaled(
    *, x: np.ndarray, a: float, b: float, alpha: float, component: str
) -> BetaPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    Beta(a, b)^alpha = Beta(alpha(a-1)+1, alpha(b-1)+1); the likelihood^alpha
    weighs every outcome by alpha: Beta(a + alpha s, b + alpha (n - s)).
    ``component`` is ``"prior"`` or ``"likelihood"``.
    """
    alpha = check_power(alpha, component)
    s = sufficient_stats(x=x)
    if component == "prior":
        a, b = scaled_shape("Beta prior", a, alpha), scaled_shape("Beta prior", b, alpha)
        return BetaPosterior(a + s.successes, b + s.n - s.successes)
    return BetaPosterior(a + alpha * s.successes, b + alpha * (s.n - s.successes))
