"""The agreement test: do MCMC draws come from the exact posterior?

The rule (docs/verdict.md):

1. Whiten the draws with the exact mean ``m`` and the Cholesky factor ``L``
   of the exact covariance over the free coordinates: ``u = L^-1 (x - m)``.
   Under the null ``E[u] = 0`` and ``Cov[u] = I`` exactly, whatever the shape
   of the posterior.
2. Test quantities, each a function ``g`` of one draw with known null mean:
   ``u_i`` (means), ``u_i^2`` (variances), ``u_i u_j`` (covariances) and,
   where the posterior is not Gaussian, ``1{x_i < q_i(p)}`` for the exact
   marginal quantiles at p = 5%, 50%, 95% (for coordinates whose marginal
   has a closed form and is continuous: ``marginal(i)`` may be None, and a
   discrete marginal, such as the Bernoulli indicator of a hypothesis, has
   P(x < q_p) != p).
3. ``z = (mean of g over draws - E g) / (sd_null(g) / sqrt(ESS(g)))`` with
   the exact null sd (closed form, or from ``n_reference`` exact iid draws)
   and the ESS of the mean of ``g`` (Vehtari et al. 2021).
4. With m quantities, fail when ``max |z| > Phi^-1(1 - alpha / (2 m))``
   (Bonferroni, family-wise false-alarm rate <= alpha); Holm-adjusted
   p-values show which quantities are flagged.

A quantity is only tested when the moments its null variance needs exist:
means need finite 4th moments, squares and products finite 8th moments
(``ExactPosterior.moments_below``), so heavy-tailed posteriors from tiny data
sets fall back on the always-valid quantile indicators.

A quantity whose null sd is zero (``u_i^2`` of a Bernoulli(1/2) indicator is
1 on every draw) is constant under the null, so it has no z-score: it is
checked exactly instead (the estimate must equal its null value up to float
round-off, ``CONSTANT_TOL``), is reported with z = 0 when it does and
z = +-inf when it does not, and does not count in the Bonferroni m.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from analytic import ExactPosterior
from compare.core.ess import ess_mean


def posterior_array(posterior: Any, variables: Sequence[str]) -> np.ndarray:
    """Draws of ``variables`` as one array of shape (chain, draw, d)."""
    parts = []
    for v in variables:
        arr = np.asarray(posterior[v].transpose("chain", "draw", ...).values, dtype=float)
        parts.append(arr.reshape(arr.shape[0], arr.shape[1], -1))
    return np.concatenate(parts, axis=-1)


QUANTILE_LEVELS = (0.05, 0.5, 0.95)

#: A quantity whose null sd (of one draw, in whitened units where the sd of
#: u_i is 1) is at most this is constant under the null up to round-off.
CONSTANT_SD = 1e-8
#: ... and then its average must equal the null value to this (absolute, on
#: the whitened scale; the whitening's own round-off is ~1e-15 per draw).
CONSTANT_TOL = 1e-8


@dataclass(frozen=True)
class Quantity:
    """One test quantity's result.

    Attributes
    ----------
    name : str
        ``mean:<p>``, ``var:<p>``, ``cov:<p>,<q>`` (whitened coordinates) or
        ``q05:<p>``/``q50:<p>``/``q95:<p>`` (quantile indicators).
    estimate, expected : float
        MCMC average of the quantity and its exact null expectation.
    null_sd : float
        Exact sd of the quantity under the null, for a single draw.
    ess : float
        ESS of the quantity's mean over the MCMC draws.
    z, p_value, p_holm : float
        z-score, two-sided p-value and Holm-adjusted p-value.  For a quantity
        constant under the null (``null_sd`` 0): z = 0 and p = 1 when the
        estimate equals ``expected`` up to round-off, else z = +-inf and p = 0.
    """

    name: str
    estimate: float
    expected: float
    null_sd: float
    ess: float
    z: float
    p_value: float
    p_holm: float


@dataclass(frozen=True)
class Agreement:
    """Result of the agreement test over all quantities."""

    quantities: tuple[Quantity, ...]
    alpha: float
    threshold: float
    max_abs_z: float

    @property
    def passed(self) -> bool:
        return self.max_abs_z <= self.threshold

    @property
    def constant(self) -> tuple[Quantity, ...]:
        """Quantities constant under the null: checked exactly, not by a z-score."""
        return tuple(q for q in self.quantities if q.null_sd <= CONSTANT_SD)

    @property
    def flagged(self) -> tuple[Quantity, ...]:
        """Quantities whose Holm-adjusted p-value is below alpha."""
        return tuple(q for q in self.quantities if q.p_holm < self.alpha)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values, same order as the input."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def bonferroni_threshold(alpha: float, n_tests: int) -> float:
    """|z| above which a two-sided test at level alpha / n_tests rejects."""
    from scipy import stats  # heavy: SciPy only when the maths runs

    return float(stats.norm.isf(alpha / (2.0 * n_tests)))


def _whitener(posterior: ExactPosterior) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (free index array, mean, lower Cholesky factor) over the free coordinates."""
    from scipy import linalg  # heavy: SciPy only when the maths runs

    free = np.asarray(posterior.free, dtype=int)
    mean = np.asarray(posterior.mean, dtype=float)[free]
    cov = np.asarray(posterior.cov, dtype=float)[np.ix_(free, free)]
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise ValueError("the exact posterior has no finite covariance; cannot whiten")
    try:
        chol = linalg.cholesky(cov, lower=True)
    except linalg.LinAlgError as err:
        raise ValueError(
            "the exact covariance over the free coordinates is not positive definite; "
            "check the topic's `free` coordinates"
        ) from err
    return free, mean, chol


def _whiten(x: np.ndarray, free: np.ndarray, mean: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """Whitened draws: ``L^-1 (x - m)`` for x of shape (..., d); returns (..., f)."""
    from scipy import linalg  # heavy: SciPy only when the maths runs

    centred = x[..., free] - mean
    flat = centred.reshape(-1, free.size).T
    return linalg.solve_triangular(chol, flat, lower=True).T.reshape(centred.shape)


@dataclass(frozen=True)
class _Spec:
    """What to compute for one test quantity and its null moments."""

    name: str
    expected: float
    null_sd: float


def _is_discrete(marginal: Any) -> bool:
    """True for a frozen scipy distribution over a discrete set (it has a pmf)."""
    from scipy import stats  # heavy: SciPy only when the maths runs

    return isinstance(getattr(marginal, "dist", None), stats.rv_discrete)


def _pairs(f: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(f) for j in range(i + 1, f)]


def _square_null_variances(
    posterior: ExactPosterior, n_reference: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Null variances of ``u_i^2`` and ``u_i u_j`` (pairs in ``_pairs`` order).

    Closed form for Gaussian posteriors (2 and 1), elliptical ones (2 + 3 kappa
    and 1 + kappa, from their ``elliptical_kurtosis`` kappa: a multivariate t)
    and one free coordinate (excess kurtosis + 2); otherwise from
    ``n_reference`` exact iid draws, memoised per posterior because the runner
    and calibration studies ask for the same posterior many times.
    """
    free = np.asarray(posterior.free, dtype=int)
    f = free.size
    if posterior.is_gaussian:
        return np.full(f, 2.0), np.ones(len(_pairs(f)))
    kappa = getattr(posterior, "elliptical_kurtosis", None)
    if kappa is not None and np.isfinite(kappa):
        return np.full(f, 2.0 + 3.0 * kappa), np.full(len(_pairs(f)), 1.0 + kappa)
    if f == 1:
        excess = _excess_kurtosis(posterior.marginal(int(free[0])))
        if excess is not None:
            return np.array([max(excess + 2.0, 0.0)]), np.empty(0)
        # No closed-form marginal (a logistic regression's one weight): exact draws.
    # Posteriors hash by identity (eq=False dataclasses); the protocol does not say so.
    return _reference_variances(posterior, n_reference, seed)  # type: ignore[arg-type]


def _excess_kurtosis(marginal: Any) -> float | None:
    """A marginal's excess kurtosis, or None when it has no marginal or no finite one."""
    if marginal is None:
        return None
    try:
        excess = float(np.asarray(marginal.stats(moments="k")))
    except (ValueError, TypeError, AttributeError, NotImplementedError):
        return None
    return excess if np.isfinite(excess) else None


@lru_cache(maxsize=32)
def _reference_variances(
    posterior: ExactPosterior, n_reference: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    free, mean, chol = _whitener(posterior)
    u = _whiten(posterior.sample(np.random.default_rng(seed), n_reference), free, mean, chol)
    squares = u * u
    var_sq = np.mean((squares - 1.0) ** 2, axis=0)
    # mean((u_i u_j)^2) for every pair at once: one product (u^2)^T (u^2), read
    # above its diagonal in _pairs' order.  A loop over the pairs took 2.9 s for
    # the classifier's 946 pairs of 200,000 draws; this takes 0.1 s.
    upper = np.triu_indices(free.size, 1)
    var_prod = (squares.T @ squares / len(squares))[upper]
    return var_sq, var_prod


def _quantile_cuts(posterior: ExactPosterior) -> tuple[tuple[int, tuple[float, ...]], ...]:
    """``(i, (q05, q50, q95))`` for each coordinate with a continuous closed-form
    marginal (a discrete one has no P(x < q_p) = p; no marginal, moments only).

    Memoised per posterior, as :func:`_reference_variances` is: a calibration
    study checks one posterior a thousand times, and each frozen SciPy
    distribution costs half a millisecond to build (0.2 ms of it formatting its
    docstring anew). A posterior that cannot be hashed is asked every time."""
    try:
        return _memoised_cuts(posterior)  # type: ignore[arg-type]
    except TypeError:  # unhashable: a user's posterior that compares by value
        return _cuts(posterior)


def _cuts(posterior: ExactPosterior) -> tuple[tuple[int, tuple[float, ...]], ...]:
    out = []
    for i in range(len(posterior.parameters)):
        marginal = posterior.marginal(i)
        if marginal is None or _is_discrete(marginal):
            continue
        out.append((i, tuple(float(marginal.ppf(level)) for level in QUANTILE_LEVELS)))
    return tuple(out)


_memoised_cuts = lru_cache(maxsize=32)(_cuts)


def agreement_test(
    draws: np.ndarray,
    posterior: ExactPosterior,
    *,
    alpha: float,
    seed: int = 0,
    n_reference: int = 200_000,
) -> Agreement:
    """Test whether ``draws`` come from ``posterior``.

    Parameters
    ----------
    draws : array of shape (chain, draw, d)
        MCMC draws in the order of ``posterior.parameters``.
    posterior : ExactPosterior
    alpha : float
        Family-wise false-alarm rate.
    seed : int
        Seeds the exact reference draws used when a null variance has no
        closed form.
    n_reference : int
        Number of such reference draws.
    """
    from scipy import stats  # heavy: SciPy only when the maths runs

    draws = np.asarray(draws, dtype=float)
    d = len(posterior.parameters)
    if draws.ndim != 3 or draws.shape[-1] != d:
        raise ValueError(f"draws must have shape (chain, draw, {d}), got {draws.shape}")
    specs: list[_Spec] = []
    series: list[np.ndarray] = []

    with_means = posterior.is_gaussian or posterior.moments_below > 4
    with_squares = posterior.is_gaussian or posterior.moments_below > 8
    if with_means:
        free, mean, chol = _whitener(posterior)
        names = [posterior.parameters[i] for i in free]
        u = _whiten(draws, free, mean, chol)
        specs += [_Spec(f"mean:{n}", 0.0, 1.0) for n in names]
        series += [u[..., i] for i in range(free.size)]
        if with_squares:
            var_sq, var_prod = _square_null_variances(posterior, n_reference, seed)
            pairs = _pairs(free.size)
            specs += [_Spec(f"var:{n}", 1.0, float(np.sqrt(v))) for n, v in zip(names, var_sq)]
            specs += [
                _Spec(f"cov:{names[i]},{names[j]}", 0.0, float(np.sqrt(v)))
                for (i, j), v in zip(pairs, var_prod)
            ]
            series += [u[..., i] ** 2 for i in range(free.size)]
            series += [u[..., i] * u[..., j] for i, j in pairs]

    if not posterior.is_gaussian:
        for i, cuts in _quantile_cuts(posterior):
            for level, cut in zip(QUANTILE_LEVELS, cuts):
                specs.append(
                    _Spec(
                        f"q{round(level * 100):02d}:{posterior.parameters[i]}",
                        level,
                        float(np.sqrt(level * (1.0 - level))),
                    )
                )
                series.append((draws[..., i] < cut).astype(float))

    n_draws = draws.shape[0] * draws.shape[1]
    stacked = np.stack(series)  # (quantity, chain, draw)
    ess = ess_mean(stacked)
    # A quantity constant over all draws has no defined ESS; its deviation is
    # still real, so measure it against the nominal sample size.
    ess = np.where(np.isfinite(ess) & (ess > 0), ess, n_draws)
    estimate = stacked.mean(axis=(1, 2))
    expected = np.array([s.expected for s in specs])
    null_sd = np.array([s.null_sd for s in specs])
    constant = null_sd <= CONSTANT_SD
    deviation = estimate - expected
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(constant, 0.0, deviation / (null_sd / np.sqrt(ess)))
    # Constant under the null: no z-score, an exact check up to round-off.
    off = constant & ~(np.abs(deviation) <= CONSTANT_TOL)
    z = np.where(off, np.copysign(np.inf, deviation), z)
    p = 2.0 * stats.norm.sf(np.abs(z))
    p_holm = np.ones_like(p)
    tested = ~constant
    if tested.any():
        p_holm[tested] = holm(p[tested])
    p_holm[off] = 0.0
    quantities = tuple(
        Quantity(s.name, float(e), s.expected, s.null_sd, float(n), float(zz), float(pp), float(ph))
        for s, e, n, zz, pp, ph in zip(specs, estimate, ess, z, p, p_holm)
    )
    return Agreement(
        quantities=quantities,
        alpha=alpha,
        threshold=bonferroni_threshold(alpha, max(int(tested.sum()), 1)),
        max_abs_z=float(np.max(np.abs(z))),
    )
