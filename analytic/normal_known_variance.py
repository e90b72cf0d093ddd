"""Normal prior on the mean of a normal likelihood with known noise sd.

Model (Bishop 2006, sec. 2.3.6; Murphy 2012, sec. 4.6.1)::

    mu ~ Normal(prior_mean, prior_sd^2)
    x_i | mu ~ Normal(mu, noise_sd^2)

Posterior precision ``1/prior_sd^2 + n/noise_sd^2`` and mean
``(prior_mean/prior_sd^2 + n xbar/noise_sd^2) / precision``.  The evidence is
``N(x; prior_mean 1, noise_sd^2 I + prior_sd^2 1 1^T)``, evaluated through the
matrix determinant lemma and Sherman-Morrison on centred statistics so it
costs O(1) given the statistics and never forms an n x n matrix.
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
    require_finite,
    require_positive,
)
from analytic._frozen import freeze

PARAMETERS = ("mu",)


@dataclass(frozen=True)
class Stats:
    """Count, mean and centred sum of squares ``m2 = sum (x_i - mean)^2``.

    Merged exactly with Chan et al.'s parallel formula, so chunks computed on
    different machines combine without loss of precision.
    """

    n: int
    mean: float
    m2: float

    def __add__(self, other: Stats) -> Stats:
        n = self.n + other.n
        if n == 0:
            return self
        delta = other.mean - self.mean
        mean = self.mean + delta * other.n / n
        m2 = self.m2 + other.m2 + delta * delta * self.n * other.n / n
        return Stats(n, mean, m2)


def sufficient_stats(*, x: np.ndarray) -> Stats:
    """Two-pass (centred) statistics of real observations ``x`` of shape (n,)."""
    x = as_data("x", x)
    if x.size == 0:
        return Stats(0, 0.0, 0.0)
    mean = float(x.mean())
    return Stats(int(x.size), mean, float(np.sum((x - mean) ** 2)))


@dataclass(frozen=True)
class NormalPosterior:
    """Normal(loc, sd^2) over ``mu``."""

    loc: float
    sd: float
    parameters: tuple[str, ...] = PARAMETERS
    free: tuple[int, ...] = (0,)
    is_gaussian: bool = True
    moments_below: float = float("inf")
    mode_interior: bool = True

    def marginal(self, index: int = 0) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(stats.norm, self.loc, self.sd)

    @property
    def mean(self) -> np.ndarray:
        return np.array([self.loc])

    @property
    def cov(self) -> np.ndarray:
        return np.array([[self.sd**2]])

    @property
    def mode(self) -> np.ndarray:
        return self.mean

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        return self.marginal().logpdf(np.asarray(x)[..., 0])

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.normal(self.loc, self.sd, size=(size, 1))


def update(*, suff: Stats, prior_mean: float, prior_sd: float, noise_sd: float) -> NormalPosterior:
    """Conjugate update in precision form; sequential updates are exact."""
    prior_mean = require_finite("prior_mean", prior_mean)
    prior_sd = require_positive("prior_sd", prior_sd)
    noise_sd = require_positive("noise_sd", noise_sd)
    prior_prec = 1.0 / prior_sd**2
    data_prec = suff.n / noise_sd**2
    prec = prior_prec + data_prec
    loc = (prior_prec * prior_mean + data_prec * suff.mean) / prec
    return NormalPosterior(loc=loc, sd=float(np.sqrt(1.0 / prec)))


def solve(*, x: np.ndarray, prior_mean: float, prior_sd: float, noise_sd: float) -> ExactAnswer:
    """Posterior, MLE, log evidence and predictive for observations ``x`` of shape (n,).

    ``log p(D) = -n/2 log(2 pi s^2) - 1/2 log(1 + n t^2/s^2)
    - [m2 + n (xbar - m0)^2 s^2 / (s^2 + n t^2)] / (2 s^2)`` with
    ``s = noise_sd``, ``t = prior_sd``, ``m0 = prior_mean``.
    The predictive is ``Normal(loc_n, sd_n^2 + noise_sd^2)``.
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = sufficient_stats(x=x)
    post = update(suff=suff, prior_mean=prior_mean, prior_sd=prior_sd, noise_sd=noise_sd)
    s2, t2, n = noise_sd**2, prior_sd**2, suff.n
    d = suff.mean - prior_mean if n else 0.0
    log_ev = (
        -0.5 * n * np.log(2 * np.pi * s2)
        - 0.5 * np.log1p(n * t2 / s2)
        - (suff.m2 + n * d * d * s2 / (s2 + n * t2)) / (2 * s2)
    )
    return ExactAnswer(
        posterior=post,
        mle=None if n == 0 else np.array([suff.mean]),
        log_evidence=float(log_ev),
        predictive=freeze(stats.norm, post.loc, np.sqrt(post.sd**2 + s2)),
    )


def posterior(
    *, x: np.ndarray, prior_mean: float, prior_sd: float, noise_sd: float
) -> NormalPosterior:
    """Posterior of ``mu`` for observations ``x`` of shape (n,)."""
    return update(
        suff=sufficient_stats(x=x), prior_mean=prior_mean, prior_sd=prior_sd, noise_sd=noise_sd
    )


def simulate(
    rng: np.random.Generator, *, n: int, prior_mean: float, prior_sd: float, noise_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw mu from the prior, then n observations; returns (theta (1,), x (n,))."""
    mu = rng.normal(prior_mean, prior_sd)
    return np.array([mu]), rng.normal(mu, noise_sd, size=n)


# --- prior sensitivity (compare/studies/sensitivity.py) -------------------------------
def sensitivity_path(
    *,
    x: np.ndarray,
    prior_mean: npt.ArrayLike,
    prior_sd: npt.ArrayLike,
    noise_sd: npt.ArrayLike,
    interval: float = 0.95,
) -> ConjugatePath:
    """The exact posterior at G values of (prior_mean, prior_sd, noise_sd) at once.

    Each is a number or an array of shape (G,) (broadcast); the same formulas
    as :func:`update`, and the evidence of :func:`solve` written with the
    centred sum of squares.
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    s = sufficient_stats(x=x)
    m0, t, sig = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(v, dtype=float)) for v in (prior_mean, prior_sd, noise_sd))
    )
    t2, s2, n = t * t, sig * sig, s.n
    prec = 1.0 / t2 + n / s2
    loc = (m0 / t2 + n * s.mean / s2) / prec
    sd = np.sqrt(1.0 / prec)
    d = s.mean - m0 if n else np.zeros_like(m0)
    log_ev = (
        -0.5 * n * np.log(2 * np.pi * s2)
        - 0.5 * np.log1p(n * t2 / s2)
        - (s.m2 + n * d * d * s2 / (s2 + n * t2)) / (2 * s2)
    )
    lo, hi = central_interval(stats.norm, interval, loc, sd)
    mean, sd, lo, hi, mode = path_columns(loc, sd, lo, hi, loc)
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def power_scaled(
    *,
    x: np.ndarray,
    prior_mean: float,
    prior_sd: float,
    noise_sd: float,
    alpha: float,
    component: str,
) -> NormalPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    N(m, s^2)^alpha = N(m, s^2/alpha): the prior's (or the noise's) sd divided
    by sqrt(alpha).
    """
    alpha = check_power(alpha, component)
    s = sufficient_stats(x=x)
    root = np.sqrt(alpha)
    if component == "prior":
        return update(suff=s, prior_mean=prior_mean, prior_sd=prior_sd / root, noise_sd=noise_sd)
    return update(suff=s, prior_mean=prior_mean, prior_sd=prior_sd, noise_sd=noise_sd / root)
