"""Gamma prior, Poisson likelihood.

Model (Gelman et al. 2013, BDA3 sec. 2.6; Murphy 2012, sec. 3.4)::

    rate ~ Gamma(shape, rate=prior_rate)      # density prop. to l^(shape-1) e^(-prior_rate l)
    x_i | rate ~ Poisson(rate),  x_i in {0, 1, 2, ...}

Posterior ``Gamma(shape + sum x, prior_rate + n)``.  The predictive is
negative binomial with ``r = shape_n`` and success probability
``rate_n / (rate_n + 1)``.  The Gamma is in shape/*rate* form throughout;
``scipy.stats.gamma`` takes ``scale = 1 / rate``.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from analytic._gamma import GammaPosterior

#: Largest Poisson mean numpy's generator draws from ("lam value too large" beyond).
POISSON_MAX = 1e18

PARAMETERS = ("rate",)


@dataclass(frozen=True)
class Stats:
    """Sufficient statistics, mergeable by addition.

    ``log_factorial_sum`` (sum of log x_i!) only enters the evidence.
    """

    n: int
    total: int
    log_factorial_sum: float

    def __add__(self, other: Stats) -> Stats:
        return Stats(
            self.n + other.n,
            self.total + other.total,
            self.log_factorial_sum + other.log_factorial_sum,
        )


def sufficient_stats(*, x: np.ndarray) -> Stats:
    """Statistics of non-negative integer counts ``x`` of shape (n,)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    x = as_data("x", x)
    bad = (x < 0) | (x != np.round(x))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"x[{i}] = {x[i]} is not a count; Poisson data must be integers >= 0")
    return Stats(
        n=int(x.size), total=int(x.sum()), log_factorial_sum=float(special.gammaln(x + 1.0).sum())
    )


def update(*, suff: Stats, shape: float, rate: float) -> GammaPosterior:
    """Conjugate update of Gamma(shape, rate); sequential updates are exact."""
    shape = require_positive("shape", shape)
    rate = require_positive("rate", rate)
    return GammaPosterior(shape + suff.total, rate + suff.n)


def solve(*, x: np.ndarray, shape: float, rate: float) -> ExactAnswer:
    """Posterior, MLE, log evidence and predictive for counts ``x`` of shape (n,).

    ``log p(D) = shape log rate - lgamma(shape) + lgamma(shape_n)
    - shape_n log rate_n - sum log x_i!``.
    """
    from scipy import special, stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = sufficient_stats(x=x)
    post = update(suff=suff, shape=shape, rate=rate)
    log_ev = (
        shape * np.log(rate)
        - special.gammaln(shape)
        + special.gammaln(post.shape)
        - post.shape * np.log(post.rate)
        - suff.log_factorial_sum
    )
    return ExactAnswer(
        posterior=post,
        mle=None if suff.n == 0 else np.array([suff.total / suff.n]),
        log_evidence=float(log_ev),
        predictive=freeze(stats.nbinom, post.shape, post.rate / (post.rate + 1.0)),
    )


def posterior(*, x: np.ndarray, shape: float, rate: float) -> GammaPosterior:
    """Posterior Gamma for counts ``x`` of shape (n,) under Gamma(shape, rate)."""
    return update(suff=sufficient_stats(x=x), shape=shape, rate=rate)


def simulate(
    rng: np.random.Generator, *, n: int, shape: float, rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the rate from the prior, then n counts; returns (theta (1,), x (n,))."""
    lam = rng.gamma(shape, 1.0 / rate)
    if lam > POISSON_MAX:
        raise ValueError(
            f"the prior draw of the rate is {lam:g}, beyond the {POISSON_MAX:g} "
            "a Poisson simulator can draw; lower shape / rate (the prior mean)"
        )
    return np.array([lam]), rng.poisson(lam, size=n).astype(float)


# --- prior sensitivity (compare/studies/sensitivity.py) -------------------------------
def sensitivity_path(
    *, x: np.ndarray, shape: npt.ArrayLike, rate: npt.ArrayLike, interval: float = 0.95
) -> ConjugatePath:
    """The exact posterior at G values of the Gamma(shape, rate) prior at once.

    ``shape`` and ``rate`` are numbers or arrays of shape (G,) (broadcast);
    the same formulas as :func:`update` and :func:`solve`'s evidence.
    """
    from scipy import special, stats  # heavy: SciPy (0.5 s) only when the maths runs

    s = sufficient_stats(x=x)
    shape, rate = np.broadcast_arrays(
        np.atleast_1d(np.asarray(shape, dtype=float)), np.atleast_1d(np.asarray(rate, dtype=float))
    )
    sn, rn = shape + s.total, rate + s.n
    lo, hi = central_interval(stats.gamma, interval, sn, scale=1.0 / rn)
    log_ev = (
        shape * np.log(rate)
        - special.gammaln(shape)
        + special.gammaln(sn)
        - sn * np.log(rn)
        - s.log_factorial_sum
    )
    mean, sd, lo, hi, mode = path_columns(
        sn / rn, np.sqrt(sn) / rn, lo, hi, np.maximum(sn - 1.0, 0.0) / rn
    )
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def power_scaled(
    *, x: np.ndarray, shape: float, rate: float, alpha: float, component: str
) -> GammaPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    Gamma(shape, rate)^alpha = Gamma(alpha(shape-1)+1, alpha rate); the
    likelihood^alpha: Gamma(shape + alpha sum x, rate + alpha n).
    """
    alpha = check_power(alpha, component)
    s = sufficient_stats(x=x)
    if component == "prior":
        return GammaPosterior(
            scaled_shape("Gamma prior", shape, alpha) + s.total, alpha * rate + s.n
        )
    return GammaPosterior(shape + alpha * s.total, rate + alpha * s.n)
