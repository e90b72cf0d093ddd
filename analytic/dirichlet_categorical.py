"""Dirichlet prior, categorical likelihood.

Model (Murphy 2012, sec. 3.4; Bishop 2006, sec. 2.2.1)::

    p ~ Dirichlet(concentration)                  # K categories
    x_i | p ~ Categorical(p),  x_i in {0..K-1}

Posterior ``Dirichlet(concentration + counts)``.  The K probabilities sum to
one, so the covariance is singular; ``free`` names the first K-1 coordinates,
whose covariance is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analytic._base import ConjugatePath, ExactAnswer, central_interval, check_power
from analytic._frozen import freeze


@dataclass(frozen=True)
class Stats:
    """Per-category counts, array of shape (K,); mergeable by addition."""

    counts: np.ndarray

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def __add__(self, other: Stats) -> Stats:
        return Stats(self.counts + other.counts)


def sufficient_stats(*, x: np.ndarray, n_categories: int) -> Stats:
    """Counts of integer codes ``x`` of shape (n,), each in ``0..n_categories-1``."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"x must be a 1-D array of category codes, got shape {x.shape}")
    # NaN, inf and huge values cast to garbage (with a RuntimeWarning); the
    # codes != x test below rejects them with a ValueError instead.
    with np.errstate(invalid="ignore"):
        codes = x.astype(np.int64)
    bad = (codes != x) | (codes < 0) | (codes >= n_categories)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"x[{i}] = {x[i]} is not a category code in 0..{n_categories - 1}")
    return Stats(np.bincount(codes, minlength=n_categories).astype(float))


def concentration_vector(concentration: float | Sequence[float], n_categories: int) -> np.ndarray:
    """Broadcast one number, or check one per category; every entry must be > 0."""
    conc = np.atleast_1d(np.asarray(concentration, dtype=float))
    if conc.ndim != 1 or conc.size not in (1, n_categories):
        raise ValueError(
            f"concentration must be one number or {n_categories} numbers (one per category), "
            f"got {conc.size}"
        )
    if not np.all(np.isfinite(conc) & (conc > 0)):
        raise ValueError(f"concentration must be > 0 everywhere, got {conc.tolist()}")
    return np.broadcast_to(conc, (n_categories,)).copy()


@dataclass(frozen=True, eq=False)
class DirichletPosterior:
    """Dirichlet(alpha) over the category probabilities ``p[<category>]``."""

    alpha: np.ndarray
    categories: tuple[str, ...]
    is_gaussian: bool = False
    moments_below: float = float("inf")

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(f"p[{c}]" for c in self.categories)

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(len(self.alpha) - 1))

    def marginal(self, index: int) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        a0 = self.alpha.sum()
        return freeze(stats.beta, self.alpha[index], a0 - self.alpha[index])

    @property
    def mean(self) -> np.ndarray:
        return self.alpha / self.alpha.sum()

    @property
    def cov(self) -> np.ndarray:
        """``(diag(m) - m m^T) / (alpha_0 + 1)``; rank K-1."""
        m = self.mean
        return (np.diag(m) - np.outer(m, m)) / (self.alpha.sum() + 1.0)

    @property
    def mode(self) -> np.ndarray | None:
        """``(alpha_k - 1) / (alpha_0 - K)`` when every alpha_k > 1.

        Otherwise the density is maximised (or unbounded) with p_k = 0 for
        alpha_k <= 1, and the others share the mass in proportion to
        alpha_k - 1; None when no alpha_k exceeds 1.
        """
        excess = np.clip(self.alpha - 1.0, 0.0, None)
        total = excess.sum()
        return None if total <= 0 else excess / total

    @property
    def mode_interior(self) -> bool:
        return bool(np.all(self.alpha > 1))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        x = np.asarray(x, dtype=float)
        a = self.alpha
        norm = special.gammaln(a.sum()) - special.gammaln(a).sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            # xlogy: 0 * log(0) = 0, so p_k = 0 with alpha_k = 1 has a finite density.
            out = norm + np.sum(special.xlogy(a - 1.0, x), axis=-1)
        on_simplex = np.all(x >= 0, axis=-1) & np.isclose(x.sum(axis=-1), 1.0)
        return np.where(on_simplex, out, -np.inf)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.dirichlet(self.alpha, size=size)


@dataclass(frozen=True, eq=False)
class CategoricalPredictive:
    """P(x_new = k | D) = E[p_k | D]."""

    categories: tuple[str, ...]
    probs: np.ndarray

    def logpmf(self, k: np.ndarray) -> np.ndarray:
        """log P(x_new = k) for integer codes k; -inf outside 0..K-1 (as scipy's pmfs)."""
        k = np.asarray(k)
        inside = (k >= 0) & (k < self.probs.size) & (k == np.round(k))
        safe = np.where(inside, k, 0).astype(int)
        return np.where(inside, np.log(self.probs[safe]), -np.inf)

    def mean(self) -> np.ndarray:
        return self.probs


def update(
    *, suff: Stats, concentration: float | Sequence[float], categories: Sequence[str]
) -> DirichletPosterior:
    """Conjugate update; sequential updates are exact."""
    categories = tuple(str(c) for c in categories)
    if len(categories) < 2:
        raise ValueError(
            f"a categorical model needs at least 2 categories, got {list(categories)}; "
            "name the unseen ones (e.g. --set categories=a,b)"
        )
    if len(set(categories)) != len(categories):
        raise ValueError(f"categories must be distinct, got {list(categories)}")
    if suff.counts.shape != (len(categories),):
        raise ValueError(f"{suff.counts.size} counts for {len(categories)} categories")
    conc = concentration_vector(concentration, len(categories))
    return DirichletPosterior(alpha=conc + suff.counts, categories=categories)


def solve(
    *, x: np.ndarray, categories: Sequence[str], concentration: float | Sequence[float]
) -> ExactAnswer:
    """Posterior, MLE, log evidence and predictive for category codes ``x`` of shape (n,).

    ``log p(D) = lgamma(A) - lgamma(A + n) + sum_k [lgamma(a_k + c_k) - lgamma(a_k)]``
    with ``A = sum_k a_k`` (the evidence of the observed sequence).
    """
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    suff = sufficient_stats(x=x, n_categories=len(categories))
    post = update(suff=suff, concentration=concentration, categories=categories)
    prior = concentration_vector(concentration, len(categories))
    log_ev = (
        special.gammaln(prior.sum())
        - special.gammaln(post.alpha.sum())
        + np.sum(special.gammaln(post.alpha) - special.gammaln(prior))
    )
    return ExactAnswer(
        posterior=post,
        mle=None if suff.n == 0 else suff.counts / suff.n,
        log_evidence=float(log_ev),
        predictive=CategoricalPredictive(post.categories, post.mean),
    )


def posterior(
    *, x: np.ndarray, categories: Sequence[str], concentration: float | Sequence[float]
) -> DirichletPosterior:
    """Posterior Dirichlet for category codes ``x`` of shape (n,)."""
    return update(
        suff=sufficient_stats(x=x, n_categories=len(categories)),
        concentration=concentration,
        categories=categories,
    )


def simulate(
    rng: np.random.Generator,
    *,
    n: int,
    categories: Sequence[str],
    concentration: float | Sequence[float],
) -> tuple[np.ndarray, np.ndarray]:
    """Draw p from the prior, then n category codes; returns (theta (K,), codes (n,))."""
    p = rng.dirichlet(concentration_vector(concentration, len(categories)))
    return p, rng.choice(len(categories), size=n, p=p)


# --- prior sensitivity (compare/studies/sensitivity.py) -------------------------------
def sensitivity_path(
    *,
    x: np.ndarray,
    categories: Sequence[str],
    concentration: npt.ArrayLike,
    interval: float = 0.95,
) -> ConjugatePath:
    """The exact posterior over K category probabilities at G concentrations at once.

    ``concentration``: one number or K numbers (one grid point), or an array
    of shape (G, 1) (one number per grid point, shared by the categories) or
    (G, K).  The same formulas as :func:`update` and :func:`solve`'s evidence;
    each marginal is Beta(c_k, sum c - c_k).
    """
    from scipy import special, stats  # heavy: SciPy (0.5 s) only when the maths runs

    k = len(categories)
    s = sufficient_stats(x=x, n_categories=k)
    conc = np.asarray(concentration, dtype=float)
    if conc.ndim < 2:  # one number, or one per category: a single grid point
        conc = conc.reshape(1, -1)
    conc = np.broadcast_to(conc, (conc.shape[0], k))
    post = conc + s.counts[None, :]
    total = post.sum(axis=1, keepdims=True)
    mean = post / total
    var = mean * (1.0 - mean) / (total + 1.0)
    lo, hi = central_interval(stats.beta, interval, post, total - post)
    excess = np.clip(post - 1.0, 0.0, None)
    ex_total = excess.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mode = np.where(ex_total > 0, excess / ex_total, np.nan)
    log_ev = (
        special.gammaln(conc.sum(axis=1))
        - special.gammaln(post.sum(axis=1))
        + np.sum(special.gammaln(post) - special.gammaln(conc), axis=1)
    )
    return ConjugatePath(
        mean=mean, sd=np.sqrt(var), lower=lo, upper=hi, mode=mode, log_evidence=log_ev
    )


def power_scaled(
    *,
    x: np.ndarray,
    categories: Sequence[str],
    concentration: float | Sequence[float],
    alpha: float,
    component: str,
) -> DirichletPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    Dir(c)^alpha = Dir(alpha(c-1)+1); the likelihood^alpha: counts times alpha.
    """
    alpha = check_power(alpha, component)
    categories = tuple(str(c) for c in categories)
    s = sufficient_stats(x=x, n_categories=len(categories))
    conc = concentration_vector(concentration, len(categories))
    if component == "prior":
        scaled = alpha * (conc - 1.0) + 1.0
        if not np.all(scaled > 0):
            raise ValueError(
                f"the Dirichlet prior^alpha with alpha={alpha:g} is improper; use alpha closer to 1"
            )
        return DirichletPosterior(alpha=scaled + s.counts, categories=categories)
    return DirichletPosterior(alpha=conc + alpha * s.counts, categories=categories)
