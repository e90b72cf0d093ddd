"""Exact prior sensitivity: hyperparameter paths and power-scaled posteriors.

Pure functions, no I/O.  Two kinds of result:

* **Paths.**  The exact posterior along a grid of one hyperparameter.  For the
  Gaussian linear model with prior ``w ~ N(m0, t2 I)`` and noise variance
  ``s2``, one eigendecomposition ``Phi^T Phi = Q diag(e) Q^T`` serves every
  grid point: the posterior precision is ``Q diag(e/s2 + 1/t2) Q^T``, so the
  mean, the marginal variances and the log evidence at G points cost
  O(G d^2) after one O(d^3) factorisation (:func:`gaussian_linear_path`).
  lambda = s2 / t2 is ridge's penalty (Bishop 2006, sec. 3.1.4 and 3.3).
* **Power-scaling** (Kallioinen, Paananen, Buerkner and Vehtari 2023,
  "Detecting and diagnosing prior and likelihood sensitivity with
  power-scaling").  For a conjugate prior, ``p(theta)^alpha`` is in the same
  family, and ``p(D | theta)^alpha`` acts as data of weight alpha; so the
  power-scaled posterior is exact (``power_scaled`` in ``analytic/<topic>.py``,
  beside the topic's vectorised ``sensitivity_path``, a :class:`ConjugatePath`).  The
  sensitivity measure is the one ``arviz_stats.psense`` estimates from draws:
  the cumulative Jensen-Shannon distance (CJS, Nguyen and Vreeken 2015)
  between the base and the power-scaled marginal, in both orientations (x and
  -x, the larger kept), divided by |log2 alpha|, averaged over alpha = 0.99
  and 1.01 (:func:`power_scaling_sensitivity`).  Here the CDFs are exact and
  the integrals are done by Gauss-Legendre quadrature.

Note on the measure: CJS is normalised by ``int (P + Q) dx`` over the range
of integration, which for psense is the range of the draws; the normalised
distance therefore depends on that range (it shrinks slowly as the number
of draws grows, for unbounded support).  The exact value is computed on a
given range ``[lower, upper]``: the draws' range when compared with psense.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analytic._base import COMPONENTS, ConjugatePath

__all__ = [
    "COMPONENTS",
    "PSENSE_ALPHAS",
    "PSENSE_THRESHOLD",
    "ConjugatePath",
    "GaussianPath",
    "cjs_distance",
    "diagnosis",
    "expected_range",
    "gaussian_linear_path",
    "gaussian_linear_path_cholesky",
    "power_scaling_sensitivity",
]

#: psense's default alphas (lower, upper).
PSENSE_ALPHAS = (0.99, 1.01)
#: psense_summary's threshold for "sensitive" (prior >= it and likelihood >= it:
#: potential prior-data conflict).
PSENSE_THRESHOLD = 0.05


# --- the Gaussian linear model along a grid ------------------------------------
@dataclass(frozen=True, eq=False)
class GaussianPath:
    """The exact posterior of ``w`` at each of G grid points.

    Attributes
    ----------
    noise_var, prior_var : array of shape (G,)
    mean : array of shape (G, d)
        Posterior mean (= MAP = ridge solution with lambda = noise_var/prior_var
        when m0 = 0).
    sd : array of shape (G, d)
        Posterior marginal standard deviations.
    log_evidence : array of shape (G,)
        log N(y; Phi m0, noise_var I + prior_var Phi Phi^T).
    """

    noise_var: np.ndarray
    prior_var: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    log_evidence: np.ndarray


def gaussian_linear_path(
    *,
    gram: np.ndarray,
    phi_t_y: np.ndarray,
    y_t_y: float,
    n: float,
    noise_var: np.ndarray | float,
    prior_var: np.ndarray | float,
    prior_mean: np.ndarray | float = 0.0,
) -> GaussianPath:
    """Posterior of Bayesian linear regression at many (noise_var, prior_var) pairs.

    One symmetric eigendecomposition of ``gram`` (no inverse, no per-point
    factorisation): with ``gram = Q diag(e) Q^T`` and ``lam_gj = e_j/s2_g +
    1/t2_g`` the posterior precision's eigenvalues,

    * mean_g = Q diag(1/lam_g) Q^T (Phi^T y / s2_g + m0 / t2_g)
    * var_g = (Q * Q) @ (1/lam_g)
    * log evidence_g = -(n log 2 pi + n log s2_g + sum_j log1p(t2_g e_j / s2_g)
      + (r^T r - sum_j c_j^2 / (e_j + s2_g/t2_g)) / s2_g) / 2, with
      r = y - Phi m0 and c = Q^T Phi^T r (Woodbury on noise_var I + t2 Phi Phi^T).

    Parameters
    ----------
    gram : array of shape (d, d)
        ``Phi^T Phi``.
    phi_t_y : array of shape (d,)
    y_t_y : float
    n : int
    noise_var, prior_var : float or array of shape (G,)
        Broadcast against each other; both > 0.
    prior_mean : float or array of shape (d,)

    Returns
    -------
    GaussianPath
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    gram = np.asarray(gram, dtype=float)
    b = np.asarray(phi_t_y, dtype=float)
    d = b.shape[0]
    s2, t2 = np.broadcast_arrays(
        np.atleast_1d(np.asarray(noise_var, dtype=float)),
        np.atleast_1d(np.asarray(prior_var, dtype=float)),
    )
    if not (
        np.all(np.isfinite(s2)) and np.all(s2 > 0) and np.all(np.isfinite(t2)) and np.all(t2 > 0)
    ):
        raise ValueError("noise_var and prior_var must be finite and > 0 at every grid point")
    m0 = np.broadcast_to(np.asarray(prior_mean, dtype=float), (d,))
    e, q = linalg.eigh(gram)
    e = np.clip(e, 0.0, None)  # round-off can leave tiny negative eigenvalues of a Gram matrix
    qb, qm = q.T @ b, q.T @ m0
    lam = e[None, :] / s2[:, None] + 1.0 / t2[:, None]  # (G, d)
    coef = (qb[None, :] / s2[:, None] + qm[None, :] / t2[:, None]) / lam
    mean = coef @ q.T
    var = (1.0 / lam) @ (q * q).T
    gm0 = gram @ m0
    rtr = float(y_t_y) - 2.0 * float(m0 @ b) + float(m0 @ gm0)
    c = q.T @ (b - gm0)
    ratio = s2 / t2
    quad = (rtr - ((c * c)[None, :] / (e[None, :] + ratio[:, None])).sum(axis=1)) / s2
    log_det = n * np.log(s2) + np.log1p(t2[:, None] * e[None, :] / s2[:, None]).sum(axis=1)
    log_ev = -0.5 * (n * np.log(2.0 * np.pi) + log_det + quad)
    return GaussianPath(noise_var=s2, prior_var=t2, mean=mean, sd=np.sqrt(var), log_evidence=log_ev)


def gaussian_linear_path_cholesky(
    *,
    gram: np.ndarray,
    phi_t_y: np.ndarray,
    noise_var: np.ndarray,
    prior_var: np.ndarray,
    prior_mean: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The same posterior means and sds, one Cholesky factorisation per grid point.

    The naive formulation (a reference for tests and the benchmark): for each
    point, factor ``A = gram/s2 + I/t2`` and solve; the variances are the
    squared column norms of ``L^-1``.  Returns (mean, sd), arrays of shape (G, d).
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    gram = np.asarray(gram, dtype=float)
    b = np.asarray(phi_t_y, dtype=float)
    d = b.shape[0]
    m0 = np.broadcast_to(np.asarray(prior_mean, dtype=float), (d,))
    s2, t2 = np.broadcast_arrays(np.atleast_1d(noise_var), np.atleast_1d(prior_var))
    eye = np.eye(d)
    mean = np.empty((s2.shape[0], d))
    sd = np.empty((s2.shape[0], d))
    for g in range(s2.shape[0]):
        chol = linalg.cholesky(gram / s2[g] + eye / t2[g], lower=True)
        mean[g] = linalg.cho_solve((chol, True), b / s2[g] + m0 / t2[g])
        linv = linalg.solve_triangular(chol, eye, lower=True)
        sd[g] = np.sqrt((linv * linv).sum(axis=0))
    return mean, sd


# --- the cumulative Jensen-Shannon distance, exactly ------------------------------
def _u_minus_log1p(u: np.ndarray) -> np.ndarray:
    """u - log(1 + u) without cancellation for small |u| (>= 0 for u > -1)."""
    u = np.asarray(u, dtype=float)
    small = np.abs(u) < 1e-3
    series = u * u * (0.5 - u * (1.0 / 3.0 - u * (0.25 - u / 5.0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = u - np.log1p(u)
    return np.where(small, series, direct)


def _cjs_integrand(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise terms of psense's cjs_pq and cjs_qp (in bits), written without cancellation.

    p log2(p / m) + (q - p)/(2 ln 2) with m = (p + q)/2 equals p (u - log1p u)/ln 2
    with u = (q - p)/(2p); its limit at p = 0 is q/(2 ln 2).
    """
    diff = q - p
    with np.errstate(divide="ignore", invalid="ignore"):
        pq = np.where(p > 0, p * _u_minus_log1p(diff / (2.0 * np.where(p > 0, p, 1.0))), 0.5 * diff)
        qp = np.where(
            q > 0, q * _u_minus_log1p(-diff / (2.0 * np.where(q > 0, q, 1.0))), -0.5 * diff
        )
    return pq / np.log(2.0), qp / np.log(2.0)


def _nodes(
    base: Any, lower: float, upper: float, per_piece: int = 24
) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [lower, upper], pieces split at base quantiles."""
    probs = np.concatenate(
        [[1e-6, 1e-4, 1e-3], np.linspace(0.005, 0.995, 100), [1 - 1e-3, 1 - 1e-4, 1 - 1e-6]]
    )
    cuts = np.asarray(base.ppf(probs), dtype=float)
    cuts = cuts[np.isfinite(cuts) & (cuts > lower) & (cuts < upper)]
    edges = np.unique(np.concatenate([[lower], cuts, [upper]]))
    t, w = np.polynomial.legendre.leggauss(per_piece)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    nodes = (mid[:, None] + half[:, None] * t[None, :]).ravel()
    weights = (half[:, None] * w[None, :]).ravel()
    return nodes, weights


def cjs_distance(*, base: Any, scaled: Any, lower: float, upper: float) -> float:
    """psense's CJS distance between two continuous distributions on [lower, upper].

    ``sqrt((cjs_pq + cjs_qp) / int (P + Q))`` with exact CDFs P (base) and Q
    (scaled), in the orientation of x and of -x (survival functions), the
    larger kept, as ``arviz_stats`` does for weighted draws.

    Parameters
    ----------
    base, scaled : frozen scipy distributions (``cdf``, ``sf``, ``ppf``)
    lower, upper : float
        The range of integration (psense: the smallest and largest draw).
    """
    if not (np.isfinite(lower) and np.isfinite(upper) and upper > lower):
        raise ValueError(f"need finite lower < upper, got [{lower!r}, {upper!r}]")
    x, w = _nodes(base, lower, upper)
    out = 0.0
    for p, q in ((base.cdf(x), scaled.cdf(x)), (base.sf(x), scaled.sf(x))):
        pq, qp = _cjs_integrand(p, q)
        bound = float(w @ (p + q))
        out = max(out, float(np.sqrt(max(0.0, w @ pq) + max(0.0, w @ qp)) / np.sqrt(bound)))
    return out


def power_scaling_sensitivity(
    *,
    base: Any,
    lower_scaled: Any,
    upper_scaled: Any,
    lower: float,
    upper: float,
    alphas: tuple[float, float] = PSENSE_ALPHAS,
) -> float:
    """psense's finite-difference sensitivity of one marginal, with exact CDFs.

    ``(cjs(alpha_lo) / -log2(alpha_lo) + cjs(alpha_hi) / log2(alpha_hi)) / 2``
    (``arviz_stats`` ``_power_scale_sense``).
    """
    lo = cjs_distance(base=base, scaled=lower_scaled, lower=lower, upper=upper)
    hi = cjs_distance(base=base, scaled=upper_scaled, lower=lower, upper=upper)
    return 0.5 * (lo / -np.log2(alphas[0]) + hi / np.log2(alphas[1]))


def expected_range(base: Any, n_draws: int) -> tuple[float, float]:
    """Where the smallest and largest of ``n_draws`` draws fall on average (quantiles
    1/(N+1) and N/(N+1)): the integration range for an exact value 'at N draws'."""
    return (float(base.ppf(1.0 / (n_draws + 1.0))), float(base.ppf(n_draws / (n_draws + 1.0))))


def diagnosis(prior: float, likelihood: float, threshold: float = PSENSE_THRESHOLD) -> str:
    """psense_summary's rule: both sensitive = conflict; prior only = strong prior."""
    if prior >= threshold and likelihood >= threshold:
        return "potential prior-data conflict"
    if prior > threshold > likelihood:
        return "potential strong prior / weak likelihood"
    return "ok"
