"""Pareto prior on the upper end of a Uniform(0, theta) likelihood.

Model (the "German tank" problem; DeGroot 1970, sec. 9.7; Murphy 2012, ex. 3.14)::

    theta ~ Pareto(scale, shape)        # density shape scale^shape / theta^(shape+1), theta >= scale
    x_i | theta ~ Uniform(0, theta),  x_i >= 0

Posterior ``Pareto(max(scale, max x), shape + n)``.  Its mode is the lower
end of its support, so the MAP sits on a boundary.
"""

from __future__ import annotations

import math
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
    require_drawable,
    require_positive,
)
from analytic._frozen import freeze

PARAMETERS = ("theta",)


@dataclass(frozen=True)
class Stats:
    """``n`` and the sample maximum (``0`` for no data); merged by (+, max)."""

    n: int
    maximum: float

    def __add__(self, other: Stats) -> Stats:
        return Stats(self.n + other.n, max(self.maximum, other.maximum))


def sufficient_stats(*, x: np.ndarray) -> Stats:
    """Statistics of non-negative observations ``x`` of shape (n,)."""
    x = as_data("x", x)
    if (x < 0).any():
        i = int(np.flatnonzero(x < 0)[0])
        raise ValueError(f"x[{i}] = {x[i]} is negative; Uniform(0, theta) data must be >= 0")
    return Stats(n=int(x.size), maximum=float(x.max()) if x.size else 0.0)


@dataclass(frozen=True)
class ParetoPosterior:
    """Pareto(scale, shape) over ``theta``."""

    scale: float
    shape: float
    parameters: tuple[str, ...] = PARAMETERS
    free: tuple[int, ...] = (0,)
    is_gaussian: bool = False
    mode_interior: bool = False  # the density jumps to 0 below `scale`

    @property
    def moments_below(self) -> float:
        return self.shape

    def marginal(self, index: int = 0) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(stats.pareto, self.shape, scale=self.scale)

    @property
    def mean(self) -> np.ndarray:
        k = self.shape
        return np.array([k * self.scale / (k - 1.0) if k > 1 else np.inf])

    @property
    def cov(self) -> np.ndarray:
        k, m = self.shape, self.scale
        return np.array([[m * m * k / ((k - 1.0) ** 2 * (k - 2.0)) if k > 2 else np.inf]])

    @property
    def mode(self) -> np.ndarray:
        return np.array([self.scale])

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        return self.marginal().logpdf(np.asarray(x)[..., 0])

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        # Inverse CDF: theta = scale * U^(-1/shape), U ~ Uniform(0, 1].
        u = 1.0 - rng.random(size)
        return (self.scale * u ** (-1.0 / self.shape))[:, None]


@dataclass(frozen=True)
class UniformParetoPredictive:
    """Posterior predictive of one new observation: a Uniform(0, theta) mixed over Pareto(m, k).

    Density ``k / ((k+1) m)`` on ``[0, m]`` and ``k m^k / ((k+1) y^(k+1))`` above.
    """

    scale: float
    shape: float

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        k, m = self.shape, self.scale
        with np.errstate(divide="ignore"):
            inner = np.log(k) - np.log1p(k) - np.log(m)
            outer = np.log(k) - np.log1p(k) + k * np.log(m) - (k + 1) * np.log(np.maximum(y, m))
        return np.where(y < 0, -np.inf, np.where(y <= m, inner, outer))

    def cdf(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        k, m = self.shape, self.scale
        inner = k / (k + 1.0) * np.clip(y, 0, None) / m
        outer = 1.0 - (m / np.maximum(y, m)) ** k / (k + 1.0)
        return np.where(y <= m, inner, outer)

    def mean(self) -> float:
        """E[theta] / 2."""
        k = self.shape
        return k * self.scale / (2.0 * (k - 1.0)) if k > 1 else np.inf

    def var(self) -> float:
        """E[theta^2] / 3 - mean^2."""
        k = self.shape
        if k <= 2:
            return np.inf
        return k * self.scale**2 / (3.0 * (k - 2.0)) - self.mean() ** 2


def update(*, suff: Stats, scale: float, shape: float) -> ParetoPosterior:
    """Conjugate update; sequential updates are exact."""
    scale = require_positive("scale", scale)
    shape = require_positive("shape", shape)
    return ParetoPosterior(scale=max(scale, suff.maximum), shape=shape + suff.n)


def solve(*, x: np.ndarray, scale: float, shape: float) -> ExactAnswer:
    """Posterior, MLE, log evidence and predictive for observations ``x`` of shape (n,).

    ``p(D) = k m^k / ((k + n) m_n^(k + n))`` with ``m_n = max(m, max x)``; the
    MLE of theta is ``max x``.
    """
    suff = sufficient_stats(x=x)
    post = update(suff=suff, scale=scale, shape=shape)
    log_ev = (
        np.log(shape) + shape * np.log(scale) - np.log(post.shape) - post.shape * np.log(post.scale)
    )
    return ExactAnswer(
        posterior=post,
        mle=None if suff.n == 0 else np.array([suff.maximum]),
        log_evidence=float(log_ev),
        predictive=UniformParetoPredictive(scale=post.scale, shape=post.shape),
    )


def posterior(*, x: np.ndarray, scale: float, shape: float) -> ParetoPosterior:
    """Posterior Pareto for observations ``x`` of shape (n,)."""
    return update(suff=sufficient_stats(x=x), scale=scale, shape=shape)


def simulate(
    rng: np.random.Generator, *, n: int, scale: float, shape: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw theta from the prior, then n observations; returns (theta (1,), x (n,))."""
    # In log space: u^(-1/shape) overflows (OverflowError) for shape << 1.
    log_theta = math.log(scale) - math.log1p(-rng.random()) / shape
    theta = require_drawable(
        "theta", math.exp(log_theta) if log_theta < 709.0 else math.inf, fix="raise shape"
    )
    return np.array([theta]), rng.uniform(0.0, theta, size=n)


# --- prior sensitivity (compare/studies/sensitivity.py) -------------------------------
def sensitivity_path(
    *, x: np.ndarray, scale: npt.ArrayLike, shape: npt.ArrayLike, interval: float = 0.95
) -> ConjugatePath:
    """The exact posterior of theta at G values of the Pareto(scale, shape) prior at once.

    ``scale`` and ``shape`` are numbers or arrays of shape (G,) (broadcast);
    the same formulas as :func:`update` and :func:`solve`'s evidence.
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    s = sufficient_stats(x=x)
    scale, shape = np.broadcast_arrays(
        np.atleast_1d(np.asarray(scale, dtype=float)), np.atleast_1d(np.asarray(shape, dtype=float))
    )
    m, k = np.maximum(scale, s.maximum), shape + s.n
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(k > 1, k * m / (k - 1.0), np.inf)
        var = np.where(k > 2, m * m * k / ((k - 1.0) ** 2 * (k - 2.0)), np.inf)
    lo, hi = central_interval(stats.pareto, interval, k, scale=m)
    log_ev = np.log(shape) + shape * np.log(scale) - np.log(k) - k * np.log(m)
    mean, sd, lo, hi, mode = path_columns(mean, np.sqrt(var), lo, hi, m)
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def power_scaled(
    *, x: np.ndarray, scale: float, shape: float, alpha: float, component: str
) -> ParetoPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    Pareto(scale, k)^alpha on theta >= scale = Pareto(scale, alpha(k+1) - 1);
    the Uniform(0, theta)^(alpha n) likelihood: Pareto(max(scale, max x), k + alpha n).
    """
    alpha = check_power(alpha, component)
    s = sufficient_stats(x=x)
    lower = max(scale, s.maximum)
    if component == "prior":
        scaled = alpha * (shape + 1.0) - 1.0  # theta^-(k+1) raised to alpha
        if not scaled > 0:
            raise ValueError(
                f"the Pareto prior^alpha with alpha={alpha:g} is improper "
                f"(shape {scaled:g}); use alpha closer to 1"
            )
        return ParetoPosterior(scale=lower, shape=scaled + s.n)
    return ParetoPosterior(scale=lower, shape=shape + alpha * s.n)
