"""Gamma prior, exponential likelihood (waiting times).

Model (Gelman et al. 2013, BDA3 sec. 2.6, "Other standard single-parameter
models": exponential model with its conjugate gamma prior; Murphy 2012,
sec. 9.2, the exponential family and conjugate priors)::

    rate ~ Gamma(shape, rate=prior_rate)     # density prop. to l^(shape-1) e^(-prior_rate l)
    x_i | rate ~ Exponential(rate),  x_i >= 0   # density rate e^(-rate x), mean 1 / rate

Posterior ``Gamma(shape + n, prior_rate + sum x)``: each waiting time adds one
to the shape and its length to the rate.  The predictive of one new waiting
time is Lomax (Pareto type II)::

    p(x_new | D) = shape_n rate_n^shape_n / (rate_n + x_new)^(shape_n + 1)

(``scipy.stats.lomax(c=shape_n, scale=rate_n)``).  The evidence of the
observed sequence is ``prior_rate^shape Gamma(shape_n) / (Gamma(shape)
rate_n^shape_n)``.  The Gamma is in shape/*rate* form throughout;
``scipy.stats.gamma`` takes ``scale = 1 / rate`` and numpy's
``Generator.exponential`` takes the scale ``1 / rate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analytic._base import ExactAnswer, as_data, require_drawable, require_positive
from analytic._frozen import freeze
from analytic._gamma import GammaPosterior
from analytic.sensitivity import COMPONENTS, ConjugatePath

PARAMETERS = ("rate",)


@dataclass(frozen=True)
class Stats:
    """Sufficient statistics, mergeable by addition: ``n`` waiting times summing to ``total``."""

    n: int
    total: float

    def __add__(self, other: Stats) -> Stats:
        return Stats(self.n + other.n, self.total + other.total)


def sufficient_stats(*, x: np.ndarray) -> Stats:
    """Statistics of non-negative waiting times ``x`` of shape (n,)."""
    x = as_data("x", x)
    bad = x < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"x[{i}] = {x[i]} is negative; exponential waiting times must be "
            ">= 0 (pass durations, not differences that can go below zero)"
        )
    return Stats(n=int(x.size), total=float(np.sum(x)))


def update(*, suff: Stats, shape: float, rate: float) -> GammaPosterior:
    """Conjugate update of Gamma(shape, rate); sequential updates are exact."""
    shape = require_positive("shape", shape)
    rate = require_positive("rate", rate)
    return GammaPosterior(shape + suff.n, rate + suff.total)


def _log_evidence(shape: Any, rate: Any, shape_n: Any, rate_n: Any) -> Any:
    """``shape log rate - lgamma(shape) + lgamma(shape_n) - shape_n log rate_n`` (arrays too)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    return (
        shape * np.log(rate)
        - special.gammaln(shape)
        + special.gammaln(shape_n)
        - shape_n * np.log(rate_n)
    )


def solve(*, x: np.ndarray, shape: float, rate: float) -> ExactAnswer:
    """Posterior, MLE, log evidence and predictive for waiting times ``x`` of shape (n,).

    ``log p(D) = shape log rate - lgamma(shape) + lgamma(shape_n)
    - shape_n log rate_n`` with ``shape_n = shape + n``, ``rate_n = rate + sum x``.
    The MLE ``n / sum x`` is None without data and when every waiting time
    is 0 (the likelihood then increases without bound).
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = sufficient_stats(x=x)
    post = update(suff=suff, shape=shape, rate=rate)
    log_ev = _log_evidence(float(shape), float(rate), post.shape, post.rate)
    return ExactAnswer(
        posterior=post,
        mle=None if suff.n == 0 or suff.total == 0 else np.array([suff.n / suff.total]),
        log_evidence=float(log_ev),
        predictive=freeze(stats.lomax, post.shape, scale=post.rate),
    )


def posterior(*, x: np.ndarray, shape: float, rate: float) -> GammaPosterior:
    """Posterior Gamma for waiting times ``x`` of shape (n,) under Gamma(shape, rate)."""
    return update(suff=sufficient_stats(x=x), shape=shape, rate=rate)


def log_density(*, theta: np.ndarray, x: np.ndarray, shape: float, rate: float) -> np.ndarray:
    """Log prior plus log likelihood at ``theta`` of shape (m, 1); returns shape (m,).

    ``log Gamma(l; shape, rate) + n log l - l sum x``, both densities normalised,
    so ``log_density - posterior logpdf = log p(D)`` at every ``l > 0``;
    ``-inf`` where ``l <= 0`` (outside the support).
    """
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    theta = np.asarray(theta, dtype=float)
    if theta.ndim != 2 or theta.shape[1] != 1:
        raise ValueError(
            f"theta must be an array of shape (m, 1) (one rate per row), got shape {theta.shape}"
        )
    suff = sufficient_stats(x=x)
    shape = require_positive("shape", shape)
    rate = require_positive("rate", rate)
    lam = theta[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = np.where(lam > 0, lam, 1.0)
        log_prior = (
            shape * np.log(rate) - special.gammaln(shape) + (shape - 1.0) * np.log(pos) - rate * pos
        )
        log_lik = suff.n * np.log(pos) - pos * suff.total
    return np.where(lam > 0, log_prior + log_lik, -np.inf)


def simulate(
    rng: np.random.Generator, *, n: int, shape: float, rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the rate from the prior, then n waiting times; returns (theta (1,), x (n,))."""
    shape = require_positive("shape", shape)
    rate = require_positive("rate", rate)
    fix = "lower the prior's spread (a larger shape) so its draws fit in float64"
    lam = require_drawable("the rate", rng.gamma(shape, 1.0 / rate), fix=fix)
    if lam == 0.0:
        raise ValueError(
            f"the prior draw of the rate underflowed to 0 (Gamma shape {shape:g}): "
            f"the waiting times would be infinite; {fix}"
        )
    x = rng.exponential(1.0 / lam, size=n)
    if not np.all(np.isfinite(x)):
        raise ValueError(
            f"the prior draw of the rate is {lam:g}, so small that its waiting "
            f"times overflow float64; {fix}"
        )
    return np.array([lam]), x


# --- the sensitivity study ---------------------------------------------------------
def sensitivity_path(
    *, x: np.ndarray, shape: npt.ArrayLike, rate: npt.ArrayLike, interval: float = 0.95
) -> ConjugatePath:
    """The exact posterior at G prior values (as :func:`solve`, vectorised).

    Parameters
    ----------
    x : array of shape (n,)
        Waiting times, >= 0.
    shape, rate : float or array of shape (G,)
        The Gamma prior's shape and rate, broadcast against each other.
    interval : float
        Mass of the central interval reported as ``lower``/``upper``.

    Returns
    -------
    analytic.sensitivity.ConjugatePath
        mean, sd, lower, upper and mode of shape (G, 1); log_evidence of shape (G,).
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    s = sufficient_stats(x=x)
    shape, rate = np.broadcast_arrays(
        np.atleast_1d(np.asarray(shape, dtype=float)), np.atleast_1d(np.asarray(rate, dtype=float))
    )
    if not (
        np.all(np.isfinite(shape))
        and np.all(shape > 0)
        and np.all(np.isfinite(rate))
        and np.all(rate > 0)
    ):
        raise ValueError("shape and rate must be finite and > 0 at every grid point")
    sn, rn = shape + s.n, rate + s.total
    lo = stats.gamma.ppf(0.5 - interval / 2.0, sn, scale=1.0 / rn)
    hi = stats.gamma.ppf(0.5 + interval / 2.0, sn, scale=1.0 / rn)
    mode = np.maximum(sn - 1.0, 0.0) / rn
    return ConjugatePath(
        mean=(sn / rn)[:, None],
        sd=(np.sqrt(sn) / rn)[:, None],
        lower=np.asarray(lo, dtype=float)[:, None],
        upper=np.asarray(hi, dtype=float)[:, None],
        mode=mode[:, None],
        log_evidence=_log_evidence(shape, rate, sn, rn),
    )


def power_scaled(
    *, x: np.ndarray, shape: float, rate: float, alpha: float, component: str
) -> GammaPosterior:
    """The exact posterior with the prior or the likelihood raised to the power ``alpha``.

    Gamma(shape, rate)^alpha = Gamma(alpha (shape - 1) + 1, alpha rate);
    likelihood^alpha = ``l^(alpha n) e^(-l alpha sum x)``: data of weight alpha,
    Gamma(shape + alpha n, rate + alpha sum x) (Kallioinen et al. 2023; see
    ``analytic.sensitivity``).
    """
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"the power alpha must be a finite number > 0, got {alpha!r}")
    if component not in COMPONENTS:
        raise ValueError(f"component must be 'prior' or 'likelihood', got {component!r}")
    s = sufficient_stats(x=x)
    shape = require_positive("shape", shape)
    rate = require_positive("rate", rate)
    if component == "prior":
        scaled = alpha * (shape - 1.0) + 1.0
        if not scaled > 0:
            raise ValueError(
                f"Gamma prior^alpha with alpha={alpha:g} is not a proper density "
                f"(Gamma prior shape would be {scaled:g}); use alpha closer to 1"
            )
        return GammaPosterior(scaled + s.n, alpha * rate + s.total)
    return GammaPosterior(shape + alpha * s.n, rate + alpha * s.total)
