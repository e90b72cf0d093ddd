"""Bayesian logistic regression: MLE, MAP, Laplace and a numerical exact posterior.

Model (Bishop 2006, sec. 4.3.2 and 4.5; Murphy 2012, sec. 8.3-8.4)::

    w ~ Normal(0, prior_sd^2 I)                       # d weights, intercept included
    y_i | w ~ Bernoulli(sigmoid(phi_i^T w))           # Phi: design matrix (n, d)

The intercept (a column of ones in Phi) has the same prior as every other
weight, so the MAP is L2-penalised logistic regression with the intercept
penalised too: scikit-learn's ``LogisticRegression(C=prior_sd**2,
fit_intercept=False)`` on Phi (its objective ``|w|^2/2 + C sum loss`` divided
by C is ours).

There is no closed form, so:

* **MLE and MAP** by Newton's method (IRLS; Bishop 2006, eqs. 4.96-4.100),
  with a backtracking line search and Cholesky solves of the Hessian.  The
  MLE does not exist when the classes are (quasi-)separated; that is
  detected *before* iterating by the linear programme of Albert & Anderson
  (1984) / Konis (2007): the data are separated iff some ``w != 0`` has
  ``s_i phi_i^T w >= 0`` for every i (``s_i = 2 y_i - 1``) with at least one
  strict inequality.  The MAP always exists (the prior makes the negative
  log posterior strongly convex).
* **Laplace approximation**: ``Normal(w_MAP, H^-1)``, H the Hessian of the
  negative log posterior at the MAP (Bishop 2006, eq. 4.134), kept as its
  Cholesky factor.
* **The exact reference** (what MCMC is judged against) is numerical:

  - d <= 2: adaptive cubature (``scipy.integrate.cubature``, Gauss-Kronrod
    product rule over the whole plane) of ``p(w, D) [1, w, w w^T]`` in the
    Laplace-whitened coordinates ``u = L^T (w - w_MAP)``, ``L L^T = H``,
    to a relative tolerance of 1e-10;
  - any d: self-normalised importance sampling from a multivariate
    Student-t proposal with the Laplace location and scale, Pareto-smoothed
    (PSIS; Vehtari et al. 2024) with arviz-stats; the Pareto k-hat is
    reported and a reference with ``k-hat > KHAT_MAX`` (0.7) is refused.

  Draws from the reference (``sample``) are resampled from the weighted
  importance pool, so they come exactly from the weighted empirical
  distribution; with importance sampling its mean and covariance are that
  distribution's, with cubature the (more accurate) cubature values.

Everything works in log space: ``log sigmoid(t) = -softplus(-t)``, the
evidence by ``logsumexp``.  No function here draws from global random state:
the importance pool is seeded by the ``seed`` argument.
"""

from __future__ import annotations

import collections
import hashlib
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from analytic._base import ExactAnswer, require_positive
from analytic.linear_regression import design_matrix  # noqa: F401  (same conventions)

#: Importance draws in the reference pool (and cubature's resampling pool).
DEFAULT_REFERENCE_DRAWS = 2**18
#: Degrees of freedom of the Student-t importance proposal.
DEFAULT_PROPOSAL_DF = 10.0
#: Pareto k-hat above which importance sampling is refused (Vehtari et al. 2024, sec. 3).
KHAT_MAX = 0.7
#: Largest dimension integrated by cubature.
QUADRATURE_MAX_D = 2
#: Relative tolerance of the cubature.
QUADRATURE_RTOL = 1e-10
#: Seed of the importance pool when none is given (the reference is then reproducible).
DEFAULT_SEED = 20261129

_WARM_ROWS = 2**15  # rows of the warm start's subsample in _newton
_BLOCK = 2**21  # entries of one (draws x n) block of linear predictors (16 MiB)


# ---------------------------------------------------------------- data


def check_data(*, phi: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``phi`` (n, d) finite and ``y`` (n,) of 0/1 with both classes, or ValueError."""
    phi = np.asarray(phi, dtype=float)
    if phi.ndim != 2 or phi.shape[1] == 0 or phi.shape[0] == 0:
        raise ValueError(
            f"phi must be a design matrix of shape (n, d) with n, d >= 1, got "
            f"shape {phi.shape}; build it with design_matrix(x=...)"
        )
    bad = ~np.isfinite(phi)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"phi[{i}, {j}] is {phi[i, j]}; every input must be a finite number; "
            "fix or remove that row"
        )
    y = np.asarray(y, dtype=float)
    if y.shape != (phi.shape[0],):
        raise ValueError(
            f"y must have one label per row of phi ({phi.shape[0]}), got shape "
            f"{y.shape}; pass matching arrays"
        )
    bad = ~((y == 0.0) | (y == 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"y[{i}] is {y[i]}; logistic regression needs 0/1 labels; recode the target as 0 and 1"
        )
    if y.min() == y.max():
        raise ValueError(
            f"every label is {int(y[0])}: logistic regression needs both classes "
            "(0 and 1) in the data; add rows of the other class"
        )
    return phi, y


def log_joint(*, phi: np.ndarray, y: np.ndarray, prior_sd: float, w: np.ndarray) -> np.ndarray:
    """log p(y | w) + log p(w) for ``w`` of shape (..., d); returns shape (...).

    ``log p(y | w) = w^T Phi^T y - sum_i softplus(phi_i^T w)`` (Bishop 2006,
    eq. 4.90 rewritten), computed in blocks of draws so memory stays bounded.
    The softplus sum is ``sum_i max(eta_i, 0) + log1p(exp(-|eta_i|))``, with
    ``sum max(eta, 0) = (sum eta + sum |eta|) / 2``, in place in the block: the
    importance pool's 2^18 draws on breast-cancer (569 rows) took 2.55 s against
    3.1 s through :func:`_softplus`'s four temporaries (2026-12-06).
    """
    w = np.asarray(w, dtype=float)
    d = phi.shape[1]
    flat = w.reshape(-1, d)
    out = np.empty(flat.shape[0])
    step = max(1, _BLOCK // phi.shape[0])
    phi_t_y = phi.T @ y
    for start in range(0, flat.shape[0], step):
        block = flat[start : start + step]
        eta = block @ phi.T
        total = eta.sum(axis=1)
        eta = np.abs(eta, out=eta)
        total += eta.sum(axis=1)
        total *= 0.5
        eta = np.log1p(np.exp(np.negative(eta, out=eta), out=eta), out=eta)
        total += eta.sum(axis=1)
        out[start : start + step] = block @ phi_t_y - total
    out -= 0.5 * np.sum(flat * flat, axis=1) / prior_sd**2
    out -= 0.5 * d * math.log(2.0 * math.pi * prior_sd**2)
    return out.reshape(w.shape[:-1])


def _softplus(t: np.ndarray) -> np.ndarray:
    """log(1 + e^t) without overflow."""
    return np.maximum(t, 0.0) + np.log1p(np.exp(-np.abs(t)))


# ---------------------------------------------------------------- separation


@dataclass(frozen=True)
class Separation:
    """Whether the classes are separated by a hyperplane through the design.

    Attributes
    ----------
    separated : bool
        True when the MLE does not exist (the likelihood keeps increasing
        along ``direction``).
    kind : str
        ``"complete"`` (every point strictly on its side), ``"quasi-complete"``
        (some on the hyperplane) or ``"none"``.
    direction : array of shape (d,) or None
        A w with ``s_i phi_i^T w >= 0`` for every i, scaled to max |w_j| = 1.
    """

    separated: bool
    kind: str
    direction: np.ndarray | None


def detect_separation(*, phi: np.ndarray, y: np.ndarray, tol: float = 1e-7) -> Separation:
    """Linear-programming test for (quasi-)complete separation (Konis 2007, ch. 3).

    Maximise ``sum_i s_i phi_i^T w`` subject to ``s_i phi_i^T w >= 0`` and
    ``-1 <= w_j <= 1``: a positive optimum means separation.  A second LP
    maximises ``t`` subject to ``s_i phi_i^T w >= t`` to tell complete from
    quasi-complete.  ``tol`` is relative to the largest ``|phi_ij|`` (LP
    solutions are feasible to ~1e-9).
    """
    from scipy import optimize  # heavy: SciPy (0.5 s) only when the maths runs

    phi, y = check_data(phi=phi, y=y)
    a = (2.0 * y - 1.0)[:, None] * phi
    scale = float(np.max(np.abs(phi)))
    d = phi.shape[1]
    res = optimize.linprog(
        -a.sum(axis=0), A_ub=-a, b_ub=np.zeros(len(y)), bounds=[(-1.0, 1.0)] * d, method="highs"
    )
    if res.status != 0 or -res.fun <= tol * scale:
        return Separation(False, "none", None)
    # max t s.t. a w >= t, |w_j| <= 1, t <= 1 (variables [w, t]).
    res2 = optimize.linprog(
        np.r_[np.zeros(d), -1.0],
        A_ub=np.c_[-a, np.ones(len(y))],
        b_ub=np.zeros(len(y)),
        bounds=[(-1.0, 1.0)] * d + [(None, 1.0)],
        method="highs",
    )
    complete = res2.status == 0 and -res2.fun > tol * scale
    direction = res2.x[:d] if complete else res.x
    direction = direction / np.max(np.abs(direction))
    return Separation(True, "complete" if complete else "quasi-complete", direction)


# ---------------------------------------------------------------- Newton / IRLS


@dataclass(frozen=True, eq=False)
class NewtonFit:
    """A Newton (IRLS) optimum of the (penalised) log likelihood.

    Attributes
    ----------
    w : array of shape (d,)
    hessian_chol : array of shape (d, d)
        Lower Cholesky factor L of the negative log density's Hessian at ``w``,
        ``H = Phi^T diag(p (1 - p)) Phi + I / prior_sd^2`` (no prior term for the MLE).
    iterations : int
    decrement : float
        Final Newton decrement ``sqrt(g^T H^-1 g)`` (Boyd & Vandenberghe 2004, sec. 9.5.1).
    """

    w: np.ndarray
    hessian_chol: np.ndarray
    iterations: int
    decrement: float

    @property
    def hessian(self) -> np.ndarray:
        return self.hessian_chol @ self.hessian_chol.T

    @property
    def cov(self) -> np.ndarray:
        """``H^-1`` from the factor (cho_solve against I; never an explicit inverse)."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        return linalg.cho_solve((self.hessian_chol, True), np.eye(self.w.size))


def _newton(
    phi: np.ndarray, y: np.ndarray, precision: float, *, max_iter: int = 200, tol: float = 1e-20
) -> NewtonFit:
    """Minimise ``-log p(y|w) + precision |w|^2 / 2`` by damped Newton steps from w = 0.

    Stops when half the squared Newton decrement (the predicted decrease) is
    below ``tol``, or when a line search finds no decrease left in float64.
    """
    from scipy import linalg, special  # heavy: SciPy (0.5 s) only when the maths runs

    n, d = phi.shape
    w = np.zeros(d)
    if n >= 4 * _WARM_ROWS:
        # Warm start from every k-th row (penalty scaled by the share of rows): its
        # optimum is within ~n_sub^-1/2 of the full one, so the full-data Newton
        # needs ~2 fewer passes over Phi (measured in benchmarks/logistic_regression.py).
        stride = n // _WARM_ROWS
        sub_y = y[::stride]
        if 0.0 < sub_y.mean() < 1.0:
            w = _newton(
                phi[::stride], sub_y, precision * sub_y.size / n, max_iter=max_iter, tol=1e-8
            ).w
    eta = phi @ w  # Phi w, carried along so each iteration costs one product with Phi
    phi_t_y = phi.T @ y

    def objective(v: np.ndarray, eta_v: np.ndarray) -> float:
        return float(_softplus(eta_v).sum() - v @ phi_t_y + 0.5 * precision * v @ v)

    f = objective(w, eta)
    decrement = np.inf
    for it in range(1, max_iter + 1):
        p = special.expit(eta)
        grad = phi.T @ p - phi_t_y + precision * w
        hess = phi.T @ (phi * (p * (1.0 - p))[:, None]) + precision * np.eye(d)
        try:
            chol = linalg.cholesky(hess, lower=True)
        except linalg.LinAlgError:
            raise ValueError(
                "the Hessian of the log likelihood is singular: columns of the "
                "design are collinear or constant (the MLE is not unique); drop "
                "redundant columns or use the MAP (prior_sd > 0)"
            ) from None
        step = linalg.cho_solve((chol, True), grad)
        decrement = float(np.sqrt(max(grad @ step, 0.0)))
        if decrement**2 / 2.0 <= tol:
            return NewtonFit(w, chol, it, decrement)
        eta_step = phi @ step
        if decrement < 1e-4:
            # Pure Newton phase: quadratic convergence, and the objective's changes
            # (~decrement^2) are below its float64 resolution, so a line search
            # would only see rounding noise.
            w, eta = w - step, eta - eta_step
            f = np.nan  # not needed again: every later step is a pure one
            continue
        t = 1.0
        while True:  # Armijo backtracking (Boyd & Vandenberghe 2004, alg. 9.2)
            eta_new = eta - t * eta_step
            f_new = objective(w - t * step, eta_new)
            if f_new <= f - 0.25 * t * decrement**2:
                break
            if t < 1e-10:  # no decrease left in float64: as close as it gets
                return NewtonFit(w, chol, it, decrement)
            t *= 0.5
        w, eta, f = w - t * step, eta_new, f_new
    raise ValueError(
        f"Newton's method did not converge in {max_iter} iterations (Newton "
        f"decrement {decrement:.3g}); standardise the inputs or lower prior_sd"
    )


def fit_map(*, phi: np.ndarray, y: np.ndarray, prior_sd: float) -> NewtonFit:
    """The MAP under ``w ~ Normal(0, prior_sd^2 I)``; always exists.

    Equals scikit-learn's ``LogisticRegression(C=prior_sd**2, fit_intercept=False)``
    on ``phi`` (intercept column included, and so penalised).
    """
    phi, y = check_data(phi=phi, y=y)
    prior_sd = require_positive("prior_sd", prior_sd)
    return _newton(phi, y, 1.0 / prior_sd**2)


def fit_mle(*, phi: np.ndarray, y: np.ndarray) -> tuple[NewtonFit | None, Separation]:
    """The MLE, or None with the separation that makes it not exist."""
    phi, y = check_data(phi=phi, y=y)
    sep = detect_separation(phi=phi, y=y)
    if sep.separated:
        return None, sep
    return _newton(phi, y, 0.0), sep


@dataclass(frozen=True, eq=False)
class Laplace:
    """``Normal(w_MAP, H^-1)``; ``prec_chol`` is the lower factor of H."""

    mean: np.ndarray
    prec_chol: np.ndarray

    @property
    def cov(self) -> np.ndarray:
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        return linalg.cho_solve((self.prec_chol, True), np.eye(self.mean.size))

    def to_standard(self, w: np.ndarray) -> np.ndarray:
        """``u = L^T (w - mean)``: N(0, I) under the approximation; (..., d) -> (..., d)."""
        return (np.asarray(w) - self.mean) @ self.prec_chol

    def from_standard(self, u: np.ndarray) -> np.ndarray:
        """``w = mean + L^-T u`` for u of shape (..., d)."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        u = np.asarray(u, dtype=float)
        flat = u.reshape(-1, self.mean.size).T
        return self.mean + linalg.solve_triangular(self.prec_chol.T, flat, lower=False).T.reshape(
            u.shape
        )

    @property
    def log_det_jacobian(self) -> float:
        """``log |dw/du| = -log det L``."""
        return -float(np.sum(np.log(np.diag(self.prec_chol))))


def laplace(*, phi: np.ndarray, y: np.ndarray, prior_sd: float) -> Laplace:
    """The Laplace approximation at the MAP (Bishop 2006, sec. 4.4 and eq. 4.134)."""
    fit = fit_map(phi=phi, y=y, prior_sd=prior_sd)
    return Laplace(mean=fit.w, prec_chol=fit.hessian_chol)


# ---------------------------------------------------------------- the reference


@dataclass(frozen=True)
class Reference:
    """Moments and evidence of the exact posterior, computed numerically.

    Attributes
    ----------
    method : str
        ``"quadrature"`` or ``"importance"``.
    mean : array of shape (d,)
    cov : array of shape (d, d)
    log_evidence : float
    khat : float
        Pareto k-hat of the importance weights (the pool's, also with cubature).
    ess : float
        Effective size of the importance pool, ``1 / sum w_i^2``.
    error : float
        Cubature's error estimate relative to the normaliser (NaN for importance).
    """

    method: str
    mean: np.ndarray
    cov: np.ndarray
    log_evidence: float
    khat: float
    ess: float
    error: float


@dataclass(frozen=True, eq=False)
class ImportancePool:
    """Proposal draws and their normalised (Pareto-smoothed) log weights.

    Attributes
    ----------
    draws : array of shape (N, d)
    log_weights : array of shape (N,)
        Normalised: ``logsumexp(log_weights) == 0``.
    raw_log_weights : array of shape (N,)
        ``log p(w, D) - log q(w)`` before smoothing.
    khat : float
    """

    draws: np.ndarray
    log_weights: np.ndarray
    raw_log_weights: np.ndarray
    khat: float

    @property
    def ess(self) -> float:
        return float(1.0 / np.sum(np.exp(2.0 * self.log_weights)))

    @property
    def log_evidence(self) -> float:
        """``log mean_i exp(raw log weight)``: the unbiased IS estimate of p(D)."""
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        return float(special.logsumexp(self.raw_log_weights) - math.log(self.raw_log_weights.size))

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Weighted mean (d,) and covariance (d, d)."""
        w = np.exp(self.log_weights)
        mean = w @ self.draws
        centred = self.draws - mean
        return mean, (centred * w[:, None]).T @ centred


def importance_pool(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    prior_sd: float,
    approx: Laplace,
    draws: int,
    df: float,
    rng: np.random.Generator,
) -> ImportancePool:
    """PSIS from a Student-t proposal ``t_df(w_MAP, H^-1)``, 2^ceil(log2(draws)) points.

    The proposal's polynomial tails dominate the posterior's (log-concave,
    so at least exponentially decaying), which keeps the weights bounded.
    """
    from arviz_stats.base import array_stats
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs
    from scipy.stats import qmc  # heavy: SciPy (0.5 s) only when the maths runs

    d = approx.mean.size
    # Randomised quasi-Monte Carlo: a scrambled Sobol' sequence (2^m >= draws points)
    # through the normal and chi-square quantile functions.  Each point is still
    # marginally a proposal draw (so PSIS and its k-hat apply), while the moment
    # estimates' error falls much faster than N^-1/2 for these smooth integrands.
    m = int(math.ceil(math.log2(draws)))
    points = qmc.Sobol(d + 1, scramble=True, rng=rng).random_base2(m)
    points = np.clip(points, 1e-16, 1.0 - 1e-16)
    z = special.ndtri(points[:, :d])
    scale = np.sqrt(df / special.chdtri(df, points[:, d]))  # chdtri: upper-tail quantile
    u = z * scale[:, None]
    w = approx.from_standard(u)
    log_q = (
        special.gammaln((df + d) / 2.0)
        - special.gammaln(df / 2.0)
        - 0.5 * d * math.log(df * math.pi)
        - 0.5 * (df + d) * np.log1p(np.sum(u * u, axis=1) / df)
    ) - approx.log_det_jacobian
    raw = log_joint(phi=phi, y=y, prior_sd=prior_sd, w=w) - log_q
    # arviz-stats smooths the weights exp(-ary) (its LOO convention), so pass -raw.
    smoothed, khat = array_stats.psislw(-raw)
    smoothed = np.asarray(smoothed, dtype=float)
    smoothed = smoothed - special.logsumexp(smoothed)
    return ImportancePool(draws=w, log_weights=smoothed, raw_log_weights=raw, khat=float(khat))


def quadrature(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    prior_sd: float,
    approx: Laplace,
    rtol: float = QUADRATURE_RTOL,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Mean (d,), covariance (d, d), log evidence and relative error by cubature (d <= 2).

    Integrates ``g(u) = exp(log p(w(u), D) - log p(w_MAP, D)) [1, u, u u^T]``
    with ``w(u) = w_MAP + L^-T u`` over a box holding all but ~1e-20 of the
    mass (:func:`_box_radius`); the integrand is smooth and peaked at 0 with
    unit scale.
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs
    from scipy.integrate import cubature

    d = approx.mean.size
    if d > QUADRATURE_MAX_D:
        raise ValueError(
            f"quadrature handles d <= {QUADRATURE_MAX_D} weights, got d = {d}; "
            "use the importance-sampling reference"
        )
    top = float(log_joint(phi=phi, y=y, prior_sd=prior_sd, w=approx.mean))
    iu = np.triu_indices(d)

    def integrand(u: np.ndarray) -> np.ndarray:
        dens = np.exp(log_joint(phi=phi, y=y, prior_sd=prior_sd, w=approx.from_standard(u)) - top)
        second = (u[:, :, None] * u[:, None, :])[:, iu[0], iu[1]]
        return dens[:, None] * np.column_stack([np.ones(len(u)), u, second])

    radius = _box_radius(
        lambda u: log_joint(phi=phi, y=y, prior_sd=prior_sd, w=approx.from_standard(u)) - top, d
    )
    # atol: a moment that is ~0 (a symmetric posterior's odd moments) cannot meet a
    # relative tolerance; the normaliser is >= ~1 here (unit peak, unit scale).
    res = cubature(
        integrand,
        np.full(d, -radius),
        np.full(d, radius),
        rtol=rtol,
        atol=rtol * 1e-3,
        max_subdivisions=5_000,
    )
    if res.status != "converged":
        raise ValueError(
            f"cubature did not reach rtol={rtol:g} (estimated error "
            f"{np.max(res.error):.3g}); the posterior is far from its Laplace "
            "approximation: use the importance-sampling reference"
        )
    est = np.asarray(res.estimate)
    z = est[0]
    mean_u = est[1 : 1 + d] / z
    second = np.empty((d, d))
    second[iu] = est[1 + d :] / z
    second[(iu[1], iu[0])] = second[iu]
    cov_u = second - np.outer(mean_u, mean_u)
    back = linalg.solve_triangular(approx.prec_chol.T, np.eye(d), lower=False)  # L^-T
    mean = approx.mean + back @ mean_u
    cov = back @ cov_u @ back.T
    log_evidence = top + math.log(z) + approx.log_det_jacobian
    return mean, 0.5 * (cov + cov.T), float(log_evidence), float(np.max(res.error) / z)


#: The cubature box reaches where the density has fallen by this factor (e^-46 ~ 1e-20).
_BOX_DROP = 46.0


def _box_radius(log_ratio: Callable[[np.ndarray], np.ndarray], d: int) -> float:
    """Half-width R of the box [-R, R]^d in whitened units holding all but ~1e-20 of the mass.

    Doubles R from 8 until the log density on the box's boundary (checked on
    400 points per edge) is at least ``_BOX_DROP`` below the mode's.  The
    density is log-concave, so beyond the boundary it keeps falling at least
    linearly along every ray from the mode: the mass outside is below
    ``e^-46`` times a polynomial in R.
    """
    t = np.linspace(-1.0, 1.0, 401)
    radius = 8.0
    while radius <= 1024.0:
        if d == 1:
            edge = np.array([[-radius], [radius]])
        else:
            side = radius * t
            edge = np.concatenate(
                [np.column_stack([side, np.full_like(side, s)]) for s in (-radius, radius)]
                + [np.column_stack([np.full_like(side, s), side]) for s in (-radius, radius)]
            )
        if np.max(log_ratio(edge)) <= -_BOX_DROP:
            return radius
        radius *= 2.0
    raise ValueError(
        "the posterior does not fall off within 1024 Laplace sds of the MAP; "
        "its Laplace scale is wrong: lower prior_sd or rescale the inputs"
    )


# ---------------------------------------------------------------- posterior


@dataclass(frozen=True, eq=False)
class LogisticPosterior:
    """The numerical exact posterior (satisfies :class:`analytic.ExactPosterior`).

    ``mean``, ``cov`` and ``log_evidence`` come from ``reference``; draws are
    resampled from ``pool`` (see the module docstring).  No closed-form
    marginals: ``marginal`` returns None, so only moments are tested.
    """

    parameters: tuple[str, ...]
    reference: Reference
    map: np.ndarray
    laplace: Laplace
    pool: ImportancePool
    phi: np.ndarray
    y: np.ndarray
    prior_sd: float

    @property
    def mean(self) -> np.ndarray:
        return self.reference.mean

    @property
    def cov(self) -> np.ndarray:
        return self.reference.cov

    @property
    def mode(self) -> np.ndarray:
        return self.map

    mode_interior = True
    is_gaussian = False
    moments_below = math.inf

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(len(self.parameters)))

    def marginal(self, index: int) -> None:
        return None

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Exact log density (normalised by the reference's evidence)."""
        return (
            log_joint(phi=self.phi, y=self.y, prior_sd=self.prior_sd, w=x)
            - self.reference.log_evidence
        )

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Draws resampled (with replacement) from the weighted importance pool."""
        p = np.exp(self.pool.log_weights)
        idx = rng.choice(p.size, size=size, p=p / p.sum())
        return self.pool.draws[idx]


@dataclass(frozen=True, eq=False)
class LogisticPredictive:
    """``P(y_new = 1 | phi_new, D) = E[sigmoid(phi_new^T w) | D]`` under the reference pool.

    ``mean()`` without rows gives it at the column means of the training
    design (an "average" row).
    """

    posterior: LogisticPosterior

    def prob(self, phi_new: np.ndarray, *, draws: int | None = None) -> np.ndarray:
        """Predictive probability of class 1 at each row of ``phi_new`` (m, d); shape (m,).

        ``draws`` (a power of two, at most the pool's size) uses only the pool's
        first ``draws`` points, their weights renormalised: the pool is a scrambled
        Sobol sequence mapped to the proposal, and its first 2^k points are a
        balanced net of their own, so this is the same estimate from fewer points
        (for displays: the report's decision grid is thousands of rows, and each
        costs a sigmoid per pool point, 2^18 of them by default).
        """
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        phi_new = np.atleast_2d(np.asarray(phi_new, dtype=float))
        pool = self.posterior.pool
        n = pool.draws.shape[0] if draws is None else int(draws)
        if n < 1 or n > pool.draws.shape[0] or n & (n - 1):
            raise ValueError(
                f"draws must be a power of two between 1 and the pool's "
                f"{pool.draws.shape[0]} draws, got {draws}"
            )
        draws_ = pool.draws[:n]
        w = np.exp(pool.log_weights[:n])
        if n < pool.draws.shape[0]:
            w /= w.sum()
        # In blocks of rows: all at once, 2^18 draws x 569 rows took 4.2 GB (measured).
        out = np.empty(phi_new.shape[0])
        step = max(1, _BLOCK // draws_.shape[0])
        for start in range(0, phi_new.shape[0], step):
            eta = draws_ @ phi_new[start : start + step].T
            out[start : start + step] = w @ special.expit(eta)
        return out

    def mean(self, phi_new: np.ndarray | None = None) -> np.ndarray:
        rows = self.posterior.phi.mean(axis=0) if phi_new is None else phi_new
        return self.prob(rows)

    def var(self, phi_new: np.ndarray | None = None) -> np.ndarray:
        p = self.mean(phi_new)
        return p * (1.0 - p)


@dataclass(frozen=True, eq=False)
class LogisticAnswer(ExactAnswer):
    """The :class:`ExactAnswer` plus what only logistic regression has.

    Attributes
    ----------
    map_fit : NewtonFit
    separation : Separation
    mle_fit : NewtonFit or None
    """

    posterior: LogisticPosterior
    map_fit: NewtonFit
    separation: Separation
    mle_fit: NewtonFit | None


def reference(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    prior_sd: float,
    approx: Laplace,
    method: str = "auto",
    draws: int = DEFAULT_REFERENCE_DRAWS,
    proposal_df: float = DEFAULT_PROPOSAL_DF,
    seed: int = DEFAULT_SEED,
) -> tuple[Reference, ImportancePool]:
    """The numerical exact posterior's moments and evidence, and the resampling pool.

    ``method="auto"`` uses cubature for d <= 2 and importance sampling above.
    Raises ValueError when k-hat > KHAT_MAX with importance sampling.  The last
    :data:`REFERENCES_KEPT` results are kept, by the bytes of every input, and
    served again (their arrays read-only) for the same inputs.
    """
    key = _reference_key(
        (phi, y, approx.mean, approx.prec_chol),
        (float(prior_sd), method, int(draws), float(proposal_df), seed),
    )
    with _REFERENCES_LOCK:
        if key in _REFERENCES:
            _REFERENCES.move_to_end(key)
            return _REFERENCES[key]
    with threadpool_limits(limits=1):  # BLAS threads only slow these small products
        ref, pool = _reference(phi, y, prior_sd, approx, method, draws, proposal_df, seed)
    for arr in (ref.mean, ref.cov, pool.draws, pool.log_weights, pool.raw_log_weights):
        arr.flags.writeable = False  # shared by later calls: nobody may change it
    with _REFERENCES_LOCK:
        _REFERENCES[key] = (ref, pool)
        while len(_REFERENCES) > REFERENCES_KEPT:
            _REFERENCES.popitem(last=False)
    return ref, pool


#: References kept in a process, the last used first out.  The same data and prior are
#: solved again within one process (a run, then its report page; test modules), and
#: an importance pool of 2^18 draws costs 1-2.5 s (breast cancer, 569 rows); a
#: pool of d = 4 weights holds 10 MB.
REFERENCES_KEPT = 2
_REFERENCES: collections.OrderedDict[str, tuple[Reference, ImportancePool]] = (
    collections.OrderedDict()
)
_REFERENCES_LOCK = threading.Lock()


def _reference_key(arrays: tuple[np.ndarray, ...], settings: tuple[Any, ...]) -> str:
    """SHA-256 of everything :func:`_reference` reads: the arrays' bytes, shapes and
    types (the data, and the Laplace approximation it centres the proposal on), and
    the settings' ``repr``."""
    digest = hashlib.sha256()
    for arr in arrays:
        arr = np.ascontiguousarray(arr)
        digest.update(f"{arr.dtype.str}{arr.shape}".encode())
        digest.update(arr.tobytes())
    digest.update(repr(settings).encode())
    return digest.hexdigest()


def _reference(
    phi: np.ndarray,
    y: np.ndarray,
    prior_sd: float,
    approx: Laplace,
    method: str,
    draws: int,
    proposal_df: float,
    seed: int,
) -> tuple[Reference, ImportancePool]:
    d = approx.mean.size
    if method == "auto":
        method = "quadrature" if d <= QUADRATURE_MAX_D else "importance"
    if method not in ("quadrature", "importance"):
        raise ValueError(f"method must be auto, quadrature or importance, got {method!r}")
    draws = int(draws)
    if draws < 1000:
        raise ValueError(f"reference_draws must be >= 1000, got {draws}; e.g. 400000")
    proposal_df = require_positive("proposal_df", proposal_df)
    pool = importance_pool(
        phi=phi,
        y=y,
        prior_sd=prior_sd,
        approx=approx,
        draws=draws,
        df=proposal_df,
        rng=np.random.default_rng(seed),
    )
    if method == "quadrature":
        mean, cov, log_ev, err = quadrature(phi=phi, y=y, prior_sd=prior_sd, approx=approx)
        return Reference("quadrature", mean, cov, log_ev, pool.khat, pool.ess, err), pool
    if pool.khat > KHAT_MAX:
        raise ValueError(
            f"importance sampling is unreliable here: Pareto k-hat = "
            f"{pool.khat:.2f} > {KHAT_MAX} (the Laplace/Student-t proposal misses "
            "the posterior's shape); lower proposal_df, raise prior_sd's "
            "precision (smaller prior_sd) or use fewer features"
        )
    mean, cov = pool.moments()
    return Reference(
        "importance", mean, cov, pool.log_evidence, pool.khat, pool.ess, float("nan")
    ), pool


def solve(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    prior_sd: float,
    names: tuple[str, ...] | None = None,
    method: str = "auto",
    reference_draws: int = DEFAULT_REFERENCE_DRAWS,
    proposal_df: float = DEFAULT_PROPOSAL_DF,
    seed: int = DEFAULT_SEED,
) -> LogisticAnswer:
    """MAP, MLE (or the separation), Laplace and the numerical exact posterior.

    Parameters
    ----------
    phi : array of shape (n, d)
        Design matrix, intercept column (if any) included.
    y : array of shape (n,)
        0/1 labels, both classes present.
    prior_sd : float
        Prior standard deviation (not variance) of every weight.
    names : tuple of str, length d, optional
        Parameter names; default ``w[0]``, ``w[1]``, ...
    method, reference_draws, proposal_df, seed
        See :func:`reference`.
    """
    phi, y = check_data(phi=phi, y=y)
    prior_sd = require_positive("prior_sd", prior_sd)
    d = phi.shape[1]
    names = tuple(names) if names is not None else tuple(f"w[{j}]" for j in range(d))
    if len(names) != d:
        raise ValueError(f"names must give one name per column of phi ({d}), got {len(names)}")
    with threadpool_limits(limits=1):
        map_fit = _newton(phi, y, 1.0 / prior_sd**2)
        mle_fit, sep = fit_mle(phi=phi, y=y)
    approx = Laplace(mean=map_fit.w, prec_chol=map_fit.hessian_chol)
    ref, pool = reference(
        phi=phi,
        y=y,
        prior_sd=prior_sd,
        approx=approx,
        method=method,
        draws=reference_draws,
        proposal_df=proposal_df,
        seed=seed,
    )
    post = LogisticPosterior(
        parameters=names,
        reference=ref,
        map=map_fit.w,
        laplace=approx,
        pool=pool,
        phi=phi,
        y=y,
        prior_sd=prior_sd,
    )
    return LogisticAnswer(
        posterior=post,
        mle=None if mle_fit is None else mle_fit.w,
        log_evidence=ref.log_evidence,
        predictive=LogisticPredictive(post),
        map_fit=map_fit,
        separation=sep,
        mle_fit=mle_fit,
    )


# ---------------------------------------------------------------- Laplace error


@dataclass(frozen=True)
class LaplaceError:
    """How far the Laplace approximation is from the exact posterior, at one n.

    Attributes
    ----------
    n : int
    mean_shift : array of shape (d,)
        ``(w_MAP - E[w]) / sd[w]``: the Laplace mean's error in posterior sds.
    sd_ratio : array of shape (d,)
        ``sqrt(diag(H^-1) / diag(Cov[w]))``: 1 when the Laplace sds are right.
    max_abs_shift : float
    max_log_sd_ratio : float
        ``max |log sd_ratio|``.
    method : str
    khat : float
    """

    n: int
    mean_shift: np.ndarray
    sd_ratio: np.ndarray
    max_abs_shift: float
    max_log_sd_ratio: float
    method: str
    khat: float


def laplace_error(*, answer: LogisticAnswer) -> LaplaceError:
    """The Laplace approximation's error for one solved data set."""
    post = answer.posterior
    sd = np.sqrt(np.diag(post.cov))
    shift = (post.laplace.mean - post.mean) / sd
    ratio = np.sqrt(np.diag(post.laplace.cov)) / sd
    return LaplaceError(
        n=int(post.y.size),
        mean_shift=shift,
        sd_ratio=ratio,
        max_abs_shift=float(np.max(np.abs(shift))),
        max_log_sd_ratio=float(np.max(np.abs(np.log(ratio)))),
        method=post.reference.method,
        khat=post.reference.khat,
    )


def laplace_error_by_size(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    prior_sd: float,
    sizes: tuple[int, ...],
    seed: int = DEFAULT_SEED,
    reference_draws: int = 100_000,
    proposal_df: float = DEFAULT_PROPOSAL_DF,
) -> tuple[LaplaceError, ...]:
    """Laplace error on the first n rows of a seeded shuffle of the data, for each n in ``sizes``.

    The subsets are nested (one permutation), so the sequence shows the
    error shrinking as n grows (Bernstein-von Mises: shift and log sd ratio
    are O(n^-1/2) in posterior-sd units).  A size whose subset has one class
    only is an error (choose larger sizes).
    """
    phi, y = check_data(phi=phi, y=y)
    order = np.random.default_rng(seed).permutation(y.size)
    out = []
    for n in sizes:
        n = int(n)
        if not 1 <= n <= y.size:
            raise ValueError(f"sizes must lie in 1..{y.size} (the number of rows), got {n}")
        rows = order[:n]
        answer = solve(
            phi=phi[rows],
            y=y[rows],
            prior_sd=prior_sd,
            reference_draws=reference_draws,
            proposal_df=proposal_df,
            seed=seed,
        )
        out.append(laplace_error(answer=answer))
    return tuple(out)


# ---------------------------------------------------------------- simulation


def simulate(
    rng: np.random.Generator, *, phi: np.ndarray, prior_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """Weights from the prior, then 0/1 labels: returns (w of shape (d,), y of shape (n,))."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    prior_sd = require_positive("prior_sd", prior_sd)
    phi = np.asarray(phi, dtype=float)
    w = prior_sd * rng.standard_normal(int(phi.shape[1]))
    y = (rng.uniform(size=phi.shape[0]) < special.expit(phi @ w)).astype(float)
    return w, y
