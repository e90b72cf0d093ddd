"""Gaussian mixtures: EM, MAP-EM and the exact complete-data posterior.

Model (Bishop 2006, secs. 9.2 and 10.2; Murphy 2012, sec. 11.4), the same
priors and names as the PyMC model of this topic::

    w ~ Dirichlet(alpha * 1_K)                              # "w", shape (K,)
    Lambda_k ~ Wishart(nu0, W0),  W0 = psi0^-1              # "Lambda", shape (K, d, d)
    mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)      # "mu", shape (K, d)
    x_i ~ sum_k w_k Normal(mu_k, Lambda_k^-1),  x_i in R^d

``Lambda_k`` is a *precision*; ``E[Lambda_k] = nu0 W0``.  The prior is
parameterised by ``psi0 = W0^-1`` (the inverse-Wishart scale of the
covariance) so that no inverse is needed: every density uses the Cholesky
factor of ``psi0``.  The Wishart is proper for real ``nu0 > d - 1``; PyMC's
Wishart also needs an integer ``nu0``, which is the caller's check.

What is here
------------
* :func:`em`: maximum-likelihood EM (``prior=None``; scikit-learn's
  ``GaussianMixture(covariance_type="full")`` iteration, ``reg_covar * I``
  added to every covariance) or MAP-EM (a :class:`NormalWishartPrior`; the
  M-step is the mode of the complete-data posterior with soft counts, in
  (w, mu, Lambda) coordinates, the density ``pm.find_MAP(jacobian=False)``
  maximises), with k-means++ restarts.
* :func:`complete_data_posterior`: the exact conjugate posterior when the
  labels are known, an :class:`analytic.ExactPosterior` over the flattened
  PyMC variables ``w``, ``mu``, ``Lambda`` (see :func:`parameter_names`).
* :func:`relabel`: the canonical order of the components of posterior draws
  (minimum-cost matching of each draw's means to a reference, normally the
  EM solution); mixture labels are not identifiable without it.

MAP-EM M-step (derivation)
--------------------------
With soft counts ``N_k = sum_i r_ik``, ``xbar_k = sum_i r_ik x_i / N_k`` and
``S_k = sum_i r_ik (x_i - xbar_k)(x_i - xbar_k)^T``, the expected complete-data
log posterior is, up to a constant (Bishop 2006, eqs. 10.58-10.63 with the
expectations replaced by the current responsibilities),
``sum_k (N_k + alpha - 1) log w_k + sum_k log NW(mu_k, Lambda_k | m_k, kappa_k, nu_k, W_k)``
with ``kappa_k = kappa0 + N_k``, ``m_k = (kappa0 m0 + N_k xbar_k) / kappa_k``,
``nu_k = nu0 + N_k`` and
``W_k^-1 = psi0 + S_k + kappa0 N_k / kappa_k (xbar_k - m0)(xbar_k - m0)^T``.
Its maximiser is

* ``w_k = (N_k + alpha - 1) / (N + K alpha - K)`` (Lagrange multiplier on
  ``sum w = 1``); interior only for ``alpha >= 1``, so MAP-EM requires it;
* ``mu_k = m_k`` for every ``Lambda_k`` (the normal factor peaks there);
* at ``mu_k = m_k`` the Normal-Wishart density is proportional to
  ``|Lambda|^(1/2) |Lambda|^((nu_k - d - 1)/2) exp(-tr(W_k^-1 Lambda)/2)
  = |Lambda|^((nu_k - d)/2) exp(-tr(W_k^-1 Lambda)/2)``; setting the
  gradient ``(nu_k - d)/2 Lambda^-1 - W_k^-1/2`` to zero gives
  ``Lambda_k = (nu_k - d) W_k``, i.e.
  ``Sigma_k = W_k^-1 / (nu0 + N_k - d)``.  This needs ``nu0 + N_k - d > 0``
  for every soft count, hence ``nu0 > d`` for MAP-EM (a component may lose
  all its points).  The mode is coordinate dependent: in (mu, Sigma)
  coordinates the inverse-Wishart Jacobian would give ``nu_k + d + 2``.

``psi0`` keeps every ``Sigma_k`` positive definite, so MAP-EM needs no
``reg_covar``.  Both EM and MAP-EM increase their objective at every
iteration (Dempster, Laird & Rubin 1977; Bishop 2006, sec. 9.4), with one
exception: ML-EM with ``reg_covar > 0`` is not an exact M-step, so the
log-likelihood may fall by amounts of order ``reg_covar``.

Numerics
--------
* The E-step works on the data centred at their column means (the mixture
  is translation invariant) in row blocks of about 1 MiB of float64: per
  block one matrix product ``x [P_1 ... P_K]`` with the precision Cholesky
  factors (``Lambda_k = P_k P_k^T``, scikit-learn's ``precisions_cholesky_``),
  a log-sum-exp over components, and matrix products ``R^T [x, x x^T]``
  accumulating the weighted sufficient statistics ``(N_k, sum r x,
  sum r x x^T)`` for the M-step.  Nothing of size n x K x d is stored.
* The covariance is ``sum r x x^T / N_k - xbar xbar^T`` about the centre of
  the data; its relative rounding error is about
  ``eps |xbar_k - mean(x)|^2 / lambda_min(Sigma_k)``, negligible unless a
  component is many orders of magnitude narrower than its distance to the
  centre of the data.
* No covariance or precision matrix is inverted: covariances are factored
  by Cholesky; the only inverses are of triangular Cholesky factors, the
  precision factors ``P_k = L_k^-T`` (scikit-learn's ``precisions_cholesky_``)
  and the Bartlett factor ``psi^-T/2``, by LAPACK ``trtri`` (scipy's
  ``solve_triangular`` against I computes the same but measured ~8 ms per
  tiny call with threaded OpenBLAS on a loaded machine).  Log-determinants
  come from factor diagonals and Wishart traces ``tr(psi0 Lambda)`` from
  the factors.  Matrices that are results in their own right (``W_k =
  psi_k^-1``, since ``E[Lambda_k] = nu_k W_k``; the complete-data MLE of
  ``Lambda_k``) come from ``cho_solve`` on a Cholesky factor.
* ML-EM adds ``10 eps`` to every soft count, as scikit-learn does, so a
  component that loses all its points keeps finite parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from analytic._base import ExactAnswer
from analytic._frozen import freeze
from analytic._multivariate import student_t_logpdf
from analytic._normal_wishart import (
    Groups,
    as_points,
    check_int,
    check_labels,
    check_prior,
    check_real,
    cholesky_spd,
    complete_data_mle,
    frozen,
    groups,
    log_evidence,
    require_prior,
    update,
)
from analytic._normal_wishart import (
    NormalWishartPrior as NormalWishartPrior,  # public here (analytic.gaussian_mixture)
)

_LOG_2PI = math.log(2.0 * math.pi)
_EPS = float(np.finfo(float).eps)
_BLOCK_ELEMENTS = 2**17  # ~1 MiB of float64 per (rows x K x d) block in the E-step


# ---------------------------------------------------------------- validation


# ---------------------------------------------------------------- prior


def default_prior(
    *,
    x: np.ndarray,
    components: int,
    alpha: float = 1.0,
    kappa0: float = 0.01,
    nu0: float | None = None,
    cov_scale: float = 0.1,
) -> NormalWishartPrior:
    """A weakly informative prior built from the data (empirical Bayes).

    As scikit-learn's ``BayesianGaussianMixture`` derives its defaults from
    the data: ``m0`` = the column means of ``x``, ``nu0 = d + 2`` unless
    given, and ``psi0 = nu0 cov_scale diag(var)`` with ``var`` the column
    variances (``ddof=0``).  Then ``E[Lambda_k] = nu0 psi0^-1 =
    (cov_scale diag(var))^-1``: the inverse of the mean precision of a
    component is ``cov_scale`` times the data's variance in each coordinate
    (``E[Sigma_k] = psi0 / (nu0 - d - 1)``, three times that for the default
    ``nu0 = d + 2``).  ``kappa0 = 0.01`` spreads the means over about ten
    data standard deviations per unit of component sd.

    Parameters
    ----------
    x : array of shape (n, d)
        Finite data, n >= 2, no constant column.
    components : int
        K, checked against n (1 <= K <= n); the prior itself does not depend on it.
    alpha, kappa0, nu0, cov_scale : float
        See :class:`NormalWishartPrior`; ``cov_scale > 0``.
    """
    x = as_points("x", x, min_rows=2)
    n, d = x.shape
    check_int("components", components, low=1, high=n, high_what="the number of rows of x")
    cov_scale = check_real("cov_scale", cov_scale, low=0.0, strict=True)
    nu0 = (
        float(d + 2)
        if nu0 is None
        else check_real(
            "nu0", nu0, low=d - 1.0, strict=True, why=f" (d - 1 with d = {d}) for a proper Wishart"
        )
    )
    mean = x.mean(axis=0)
    var = np.mean((x - mean) ** 2, axis=0)
    for j in range(d):
        # "constant" up to rounding: deviations below a few ulps of the values
        if var[j] <= (4.0 * _EPS * float(np.max(np.abs(x[:, j])))) ** 2:
            raise ValueError(
                f"column {j} of x is constant (variance {var[j]:g}); drop it or "
                f"pass a NormalWishartPrior with psi0 chosen by hand"
            )
    return NormalWishartPrior(
        alpha=alpha, m0=mean, kappa0=kappa0, nu0=nu0, psi0=nu0 * cov_scale * np.diag(var)
    )


# ---------------------------------------------------------------- parameters


def _precision_cholesky(covariances: np.ndarray, *, remedy: str) -> np.ndarray:
    """Upper factors P_k with ``P_k P_k^T = Sigma_k^-1`` (scikit-learn's convention):
    ``P_k = L_k^-T`` for ``Sigma_k = L_k L_k^T``.

    ``L_k^-1`` is what scikit-learn gets from ``solve_triangular(L_k, I)``;
    LAPACK's triangular inversion ``trtri`` computes the same factor directly
    (both backward stable).  It is used because scipy's ``solve_triangular``
    measured ~8 ms per 2 x 2 call with two OpenBLAS threads on a loaded
    2-core machine (1 us for ``trtri``), which dominated EM on small data.
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    out = np.empty_like(covariances)
    for k in range(covariances.shape[0]):
        try:
            chol = linalg.cholesky(covariances[k], lower=True)
        except linalg.LinAlgError:
            raise ValueError(f"covariances[{k}] is not positive definite; {remedy}") from None
        out[k] = _inverse_lower(chol, f"covariances[{k}]", remedy).T
    return out


def _inverse_lower(chol: np.ndarray, name: str, remedy: str = "") -> np.ndarray:
    """``L^-1`` of a lower Cholesky factor by LAPACK ``trtri`` (lower triangular result)."""
    from scipy.linalg import lapack  # heavy: SciPy (0.5 s) only when the maths runs

    inv, info = lapack.dtrtri(chol, lower=1)
    if info != 0:
        raise ValueError(f"{name} is numerically singular; {remedy}")
    return np.tril(inv)


_PARAMS_REMEDY = (
    "each covariance must be symmetric with eigenvalues > 0 (a component "
    "collapsed onto fewer than d + 1 points?): increase reg_covar, use fewer "
    "components, or fit with a prior (MAP-EM)"
)


@dataclass(frozen=True, eq=False)
class MixtureParams:
    """Parameters of a K-component Gaussian mixture in R^d.

    Attributes
    ----------
    weights : array of shape (K,)
        Non-negative, summing to one (within 1e-8).
    means : array of shape (K, d)
    covariances : array of shape (K, d, d)
        Symmetric positive definite.
    precision_cholesky : array of shape (K, d, d)
        Computed: upper-triangular ``P_k`` with ``P_k P_k^T = Sigma_k^-1``
        (scikit-learn's ``precisions_cholesky_``); ``log |Sigma_k|^-1/2`` is
        ``sum log diag P_k``.
    """

    weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    precision_cholesky: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, dtype=float)
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"weights must be an array of shape (K,), got shape {w.shape}")
        k_count = w.size
        if not (np.all(np.isfinite(w)) and np.all(w >= 0) and abs(float(w.sum()) - 1.0) <= 1e-8):
            raise ValueError(
                f"weights must be >= 0 and sum to 1, got {w.tolist()} "
                f"(sum {float(np.sum(w))!r}); pass w / w.sum()"
            )
        means = np.asarray(self.means, dtype=float)
        if means.ndim != 2 or means.shape[0] != k_count or means.shape[1] == 0:
            raise ValueError(
                f"means must be an array of shape ({k_count}, d), got shape "
                f"{means.shape}; pass one row per component"
            )
        d = means.shape[1]
        if not np.all(np.isfinite(means)):
            raise ValueError(f"means must be finite, got {means.tolist()}")
        cov = np.asarray(self.covariances, dtype=float)
        if cov.shape != (k_count, d, d):
            raise ValueError(
                f"covariances must be an array of shape ({k_count}, {d}, {d}), "
                f"got shape {cov.shape}"
            )
        if not np.all(np.isfinite(cov)):
            raise ValueError("covariances must be finite; " + _PARAMS_REMEDY)
        scale = np.max(np.abs(cov), axis=(1, 2), keepdims=True)
        if np.any(np.abs(cov - cov.transpose(0, 2, 1)) > 1e-12 * scale):
            raise ValueError("covariances must be symmetric; pass (C + C.T) / 2 for each")
        cov = 0.5 * (cov + cov.transpose(0, 2, 1))
        prec_chol = _precision_cholesky(cov, remedy=_PARAMS_REMEDY)
        object.__setattr__(self, "weights", frozen(w))
        object.__setattr__(self, "means", frozen(means))
        object.__setattr__(self, "covariances", frozen(cov))
        object.__setattr__(self, "precision_cholesky", frozen(prec_chol))

    @classmethod
    def from_precisions(
        cls, *, weights: np.ndarray, means: np.ndarray, precisions: np.ndarray
    ) -> MixtureParams:
        """Build from precision matrices (K, d, d): ``Sigma_k = cho_solve(chol(Lambda_k), I)``."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        lam = np.asarray(precisions, dtype=float)
        if lam.ndim != 3 or lam.shape[1] != lam.shape[2]:
            raise ValueError(
                f"precisions must be an array of shape (K, d, d), got shape {lam.shape}"
            )
        eye = np.eye(lam.shape[1])
        cov = np.empty_like(lam)
        for k in range(lam.shape[0]):
            chol = cholesky_spd(
                f"precisions[{k}]",
                lam[k],
                remedy="pass a precision matrix with all eigenvalues > 0",
            )
            c = linalg.cho_solve((chol, True), eye)
            cov[k] = 0.5 * (c + c.T)
        return cls(weights=weights, means=means, covariances=cov)

    @property
    def components(self) -> int:
        return int(self.weights.shape[0])

    @property
    def d(self) -> int:
        return int(self.means.shape[1])

    @property
    def precisions(self) -> np.ndarray:
        """``Lambda_k = P_k P_k^T``, array of shape (K, d, d)."""
        p = self.precision_cholesky
        return p @ p.transpose(0, 2, 1)

    @property
    def log_det_precision(self) -> np.ndarray:
        """``log |Lambda_k| = 2 sum log diag P_k``, shape (K,)."""
        return 2.0 * np.sum(np.log(np.diagonal(self.precision_cholesky, axis1=1, axis2=2)), axis=1)


def _check_params(params: Any, d: int | None = None) -> MixtureParams:
    if not isinstance(params, MixtureParams):
        raise TypeError(
            f"params must be a gaussian_mixture.MixtureParams, got "
            f"{type(params).__name__}; build one with MixtureParams(weights=..., "
            f"means=..., covariances=...)"
        )
    if d is not None and params.d != d:
        raise ValueError(
            f"params describe a mixture in {params.d} dimensions but the data "
            f"have {d} columns; pass matching data"
        )
    return params


# ---------------------------------------------------------------- densities


def log_prob_components(*, x: np.ndarray, params: MixtureParams) -> np.ndarray:
    """``log w_k + log Normal(x_i | mu_k, Sigma_k)`` for every point and component.

    ``log N = -d/2 log 2 pi + sum log diag P_k - ||(x_i - mu_k) P_k||^2 / 2``
    with the precision factor ``P_k`` (Bishop 2006, eq. 2.43): one (n, d)
    matrix product per component, no inverse.  A zero weight gives ``-inf``.

    Parameters
    ----------
    x : array of shape (n, d)
    params : MixtureParams

    Returns
    -------
    array of shape (n, K)
    """
    params = _check_params(params)
    x = as_points("x", x, d=params.d)
    d = params.d
    with np.errstate(divide="ignore"):
        const = np.log(params.weights) - 0.5 * d * _LOG_2PI + 0.5 * params.log_det_precision
    out = np.empty((x.shape[0], params.components))
    for k in range(params.components):
        y = (x - params.means[k]) @ params.precision_cholesky[k]
        out[:, k] = const[k] - 0.5 * np.einsum("ij,ij->i", y, y)
    return out


def log_likelihood(*, x: np.ndarray, params: MixtureParams) -> float:
    """``sum_i log sum_k w_k N(x_i | mu_k, Sigma_k)`` (Bishop 2006, eq. 9.14), by logsumexp."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    return float(np.sum(special.logsumexp(log_prob_components(x=x, params=params), axis=1)))


def responsibilities(*, x: np.ndarray, params: MixtureParams) -> np.ndarray:
    """``r_ik = p(z_i = k | x_i)`` (Bishop 2006, eq. 9.23), array of shape (n, K)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    logp = log_prob_components(x=x, params=params)
    return np.exp(logp - special.logsumexp(logp, axis=1, keepdims=True))


def predictive_density(*, grid: np.ndarray, params: MixtureParams) -> np.ndarray:
    """Mixture density ``sum_k w_k N(g | mu_k, Sigma_k)`` at each row of ``grid`` (G, d); shape (G,)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    return np.exp(special.logsumexp(log_prob_components(x=grid, params=params), axis=1))


def _log_wishart(
    log_det_lam: np.ndarray, trace_psi_lam: np.ndarray, *, nu: float, log_det_psi: float, d: int
) -> np.ndarray:
    """``log Wishart(Lambda; nu, W)`` with ``W^-1 = psi`` (Bishop 2006, eq. B.78):

    ``-(nu d / 2) log 2 - log Gamma_d(nu / 2) + (nu / 2) log|psi|
    + ((nu - d - 1) / 2) log|Lambda| - tr(psi Lambda) / 2``.
    """
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    return (
        -0.5 * nu * d * math.log(2.0)
        - special.multigammaln(0.5 * nu, d)
        + 0.5 * nu * log_det_psi
        + 0.5 * (nu - d - 1.0) * log_det_lam
        - 0.5 * trace_psi_lam
    )


def _log_prior_parts(
    weights: np.ndarray,
    means: np.ndarray,
    prec_chol: np.ndarray,
    prior: NormalWishartPrior,
    m0: np.ndarray,
) -> float:
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    k_count, d = means.shape
    alpha = prior.alpha
    log_dir = (
        special.gammaln(k_count * alpha)
        - k_count * special.gammaln(alpha)
        + float(np.sum(special.xlogy(alpha - 1.0, weights)))
    )
    log_det_lam = 2.0 * np.sum(np.log(np.diagonal(prec_chol, axis1=1, axis2=2)), axis=1)
    # tr(psi0 P P^T) = ||C0^T P||_F^2 with psi0 = C0 C0^T
    cp = np.einsum("ji,kjl->kil", prior.psi0_chol, prec_chol)
    trace = np.sum(cp * cp, axis=(1, 2))
    log_wish = _log_wishart(log_det_lam, trace, nu=prior.nu0, log_det_psi=prior.log_det_psi0, d=d)
    # Normal(mu; m0, (kappa0 Lambda)^-1): ||P^T (mu - m0)||^2 is the Lambda quadratic form
    u = np.einsum("kij,ki->kj", prec_chol, means - m0)
    log_norm = (
        -0.5 * d * _LOG_2PI
        + 0.5 * d * math.log(prior.kappa0)
        + 0.5 * log_det_lam
        - 0.5 * prior.kappa0 * np.sum(u * u, axis=1)
    )
    return float(log_dir + np.sum(log_wish) + np.sum(log_norm))


def log_prior(*, params: MixtureParams, prior: NormalWishartPrior) -> float:
    """Log prior density in (w, mu, Lambda) coordinates.

    ``log Dirichlet(w; alpha 1_K) + sum_k [log Wishart(Lambda_k; nu0, W0)
    + log Normal(mu_k; m0, (kappa0 Lambda_k)^-1)]`` (Bishop 2006, eqs. B.16,
    B.78, 10.40), with ``Lambda_k = P_k P_k^T`` from the params' factors.  The
    Dirichlet density is over the first K-1 weights and the Wishart over the
    d(d+1)/2 entries of the lower triangle, the coordinates in which
    ``pm.find_MAP(jacobian=False)`` evaluates PyMC's log density.
    """
    params = _check_params(params)
    prior = check_prior(prior, params.d)
    return _log_prior_parts(
        params.weights, params.means, params.precision_cholesky, prior, prior.m0
    )


def n_parameters(*, components: int, dim: int) -> int:
    """Free parameters of a full-covariance mixture: ``K - 1 + K d + K d (d + 1) / 2``."""
    k = check_int("components", components, low=1)
    d = check_int("dim", dim, low=1)
    return k - 1 + k * d + k * d * (d + 1) // 2


def bic(*, x: np.ndarray, params: MixtureParams) -> float:
    """Bayesian information criterion ``-2 log L + p log n`` (Bishop 2006, eq. 4.139; lower is better)."""
    x = as_points("x", x, min_rows=1)
    p = n_parameters(components=_check_params(params).components, dim=params.d)
    return -2.0 * log_likelihood(x=x, params=params) + p * math.log(x.shape[0])


def aic(*, x: np.ndarray, params: MixtureParams) -> float:
    """Akaike information criterion ``-2 log L + 2 p`` (Bishop 2006, eq. 1.73; lower is better)."""
    p = n_parameters(components=_check_params(params).components, dim=params.d)
    return -2.0 * log_likelihood(x=x, params=params) + 2.0 * p


# ---------------------------------------------------------------- k-means++


def _kmeans_pp(x: np.ndarray, k_count: int, rng: np.random.Generator) -> np.ndarray:
    n = x.shape[0]
    chosen = [int(rng.integers(n))]
    d2 = np.einsum("ij,ij->i", x - x[chosen[0]], x - x[chosen[0]])
    for _ in range(1, k_count):
        total = float(d2.sum())
        if total > 0:
            # P(i) = D(x_i)^2 / sum D^2 (Arthur & Vassilvitskii 2007, step 1b)
            i = int(np.searchsorted(np.cumsum(d2), rng.random() * total, side="right"))
            i = min(i, n - 1)
        else:
            # fewer distinct points than K: any row not chosen yet
            rest = np.setdiff1d(np.arange(n), chosen)
            i = int(rng.choice(rest))
        chosen.append(i)
        diff = x - x[i]
        np.minimum(d2, np.einsum("ij,ij->i", diff, diff), out=d2)
    return np.asarray(chosen)


def kmeans_plus_plus(*, x: np.ndarray, components: int, rng: np.random.Generator) -> np.ndarray:
    """Initial centres by k-means++ seeding (Arthur & Vassilvitskii 2007).

    The first centre is a uniformly chosen row; each next one is a row drawn
    with probability proportional to its squared distance to the nearest
    centre chosen so far (the plain rule, without scikit-learn's greedy local
    trials).  The K rows are distinct (if x has fewer than K distinct rows,
    the rest are drawn uniformly among the rows not chosen).

    Returns
    -------
    array of shape (K, d)
        Rows of ``x``.
    """
    x = as_points("x", x, min_rows=1)
    k = check_int(
        "components", components, low=1, high=x.shape[0], high_what="the number of rows of x"
    )
    return x[_kmeans_pp(x, k, rng)].copy()


# ---------------------------------------------------------------- EM machinery


@dataclass(frozen=True, eq=False)
class _Stats:
    """Weighted sufficient statistics: ``N_k``, ``sum r x``, ``sum r x x^T`` (about the data centre)."""

    n_k: np.ndarray
    s_x: np.ndarray
    s_xx: np.ndarray


def _block_rows(k_count: int, d: int) -> int:
    return max(256, _BLOCK_ELEMENTS // (k_count * d + d * d))


def _stats_from_labels(xc: np.ndarray, labels: np.ndarray, k_count: int) -> _Stats:
    d = xc.shape[1]
    n_k = np.zeros(k_count)
    s_x = np.zeros((k_count, d))
    s_xx = np.zeros((k_count, d, d))
    for k in range(k_count):  # a loop over components, not points
        xk = xc[labels == k]
        n_k[k] = xk.shape[0]
        s_x[k] = xk.sum(axis=0)
        s_xx[k] = xk.T @ xk
    return _Stats(n_k, s_x, s_xx)


def _stats_from_resp(xc: np.ndarray, resp: np.ndarray) -> _Stats:
    n, d = xc.shape
    k_count = resp.shape[1]
    rows = _block_rows(k_count, d)
    s_xx = np.zeros((k_count, d * d))
    for start in range(0, n, rows):
        xb, rb = xc[start : start + rows], resp[start : start + rows]
        s_xx += rb.T @ (xb[:, :, None] * xb[:, None, :]).reshape(-1, d * d)
    s_xx = s_xx.reshape(k_count, d, d)
    return _Stats(resp.sum(axis=0), resp.T @ xc, 0.5 * (s_xx + s_xx.transpose(0, 2, 1)))


def _sweep(
    xc: np.ndarray,
    params: MixtureParams,
    *,
    resp_out: np.ndarray | None = None,
    want_stats: bool = True,
) -> tuple[float, _Stats | None]:
    """One pass over the rows: the log-likelihood of ``params`` and the statistics
    of their responsibilities (or the responsibilities themselves in ``resp_out``).

    Per block: ``Y = x [P_1 ... P_K] - [mu_1 P_1 ... mu_K P_K]`` (one matrix
    product for all components), ``log p_ik = c_k - ||Y_ik||^2 / 2``, and the
    log-sum-exp over k with the max shifted out, exponentiating once: it
    yields both ``log sum_k p_ik`` and ``r_ik = exp(log p_ik - max) / sum``
    (the same algorithm as ``scipy.special.logsumexp``, fused so the n x K
    exponentials are computed once).
    """
    n, d = xc.shape
    k_count = params.components
    prec = params.precision_cholesky
    pcat = prec.transpose(1, 0, 2).reshape(d, k_count * d)
    offset = np.einsum("kd,kde->ke", params.means, prec).reshape(k_count * d)
    with np.errstate(divide="ignore"):
        const = np.log(params.weights) - 0.5 * d * _LOG_2PI + 0.5 * params.log_det_precision
    rows = _block_rows(k_count, d)
    zbuf = np.empty((min(rows, n), d, d))
    n_k = np.zeros(k_count)
    s_x = np.zeros((k_count, d))
    s_xx = np.zeros((k_count, d * d))
    total = 0.0
    for start in range(0, n, rows):
        xb = xc[start : start + rows]
        b = xb.shape[0]
        y = xb @ pcat
        y -= offset
        y3 = y.reshape(b, k_count, d)
        logp = np.einsum("bkd,bkd->bk", y3, y3)
        logp *= -0.5
        logp += const
        top = logp.max(axis=1, keepdims=True)
        logp -= top
        np.exp(logp, out=logp)
        norm = logp.sum(axis=1, keepdims=True)
        logp /= norm  # now the responsibilities of the block
        total += float(np.sum(np.log(norm)) + np.sum(top))
        if resp_out is not None:
            resp_out[start : start + b] = logp
        if want_stats:
            n_k += logp.sum(axis=0)
            s_x += logp.T @ xb
            z = zbuf[:b]
            np.multiply(xb[:, :, None], xb[:, None, :], out=z)
            s_xx += logp.T @ z.reshape(b, d * d)
    if not math.isfinite(total):
        raise ValueError(
            "the log-likelihood is not finite: some point is too far from every "
            "component for float64; rescale x (e.g. standardise the columns)"
        )
    if not want_stats:
        return total, None
    s_xx = s_xx.reshape(k_count, d, d)
    return total, _Stats(n_k, s_x, 0.5 * (s_xx + s_xx.transpose(0, 2, 1)))


def _m_step_ml(st: _Stats, reg_covar: float) -> MixtureParams:
    """ML M-step (Bishop 2006, eqs. 9.24-9.26) with ``reg_covar I`` added, as scikit-learn."""
    d = st.s_x.shape[1]
    n_k = st.n_k + 10.0 * _EPS
    means = st.s_x / n_k[:, None]
    cov = st.s_xx / n_k[:, None, None] - means[:, :, None] * means[:, None, :]
    cov += reg_covar * np.eye(d)
    return MixtureParams(weights=n_k / n_k.sum(), means=means, covariances=cov)


def _m_step_map(st: _Stats, prior: NormalWishartPrior, m0: np.ndarray) -> MixtureParams:
    """MAP M-step: the mode of the complete-data posterior with soft counts (module docstring).

    ``W_N^-1 = psi0 + S + kappa0 N / (kappa0 + N) (xbar - m0)(xbar - m0)^T`` is
    computed as ``psi0 + sum r x x^T + kappa0 m0 m0^T - kappa_N m_N m_N^T``
    (Murphy 2012, sec. 4.6.3.3), which never divides by a soft count.
    """
    d = st.s_x.shape[1]
    n_k = st.n_k
    kappa = prior.kappa0 + n_k
    means = (st.s_x + prior.kappa0 * m0) / kappa[:, None]
    psi_n = (
        prior.psi0
        + st.s_xx
        + prior.kappa0 * np.outer(m0, m0)
        - kappa[:, None, None] * means[:, :, None] * means[:, None, :]
    )
    cov = psi_n / (prior.nu0 + n_k - d)[:, None, None]
    w = n_k + (prior.alpha - 1.0)
    return MixtureParams(weights=w / w.sum(), means=means, covariances=cov)


@dataclass(frozen=True, eq=False)
class EMResult:
    """The best of several EM (or MAP-EM) runs.

    Attributes
    ----------
    params : MixtureParams
        The parameters after the last M-step.
    objective : float
        ``log_likelihood`` for ML-EM; ``log_likelihood + log_prior`` for MAP-EM, at ``params``.
    log_likelihood : float
        At ``params``.
    history : array of shape (n_iter + 1,)
        The objective at the starting parameters and after every M-step
        (``history[-1] == objective``); non-decreasing up to rounding (see
        the module docstring for ML-EM with ``reg_covar > 0``).
    n_iter : int
        M-steps performed in the best run.
    converged : bool
        The change of the objective per data point fell below ``tol``.
    responsibilities : array of shape (n, K)
        At ``params``.
    restart_objectives : array of shape (restarts,)
        Final objective of every run, in the order run.
    is_map : bool
        True for MAP-EM.
    """

    params: MixtureParams
    objective: float
    log_likelihood: float
    history: np.ndarray
    n_iter: int
    converged: bool
    responsibilities: np.ndarray
    restart_objectives: np.ndarray
    is_map: bool


def _check_init(init: Any, n: int, k_count: int, d: int) -> np.ndarray | MixtureParams:
    if isinstance(init, MixtureParams):
        if init.components != k_count or init.d != d:
            raise ValueError(
                f"init has {init.components} components in {init.d} dimensions, "
                f"expected {k_count} in {d}; pass matching params"
            )
        return init
    resp = np.asarray(init, dtype=float)
    if resp.shape != (n, k_count):
        raise ValueError(
            f"init must be a MixtureParams or a responsibility matrix of shape "
            f"({n}, {k_count}), got shape {resp.shape}"
        )
    if not (
        np.all(np.isfinite(resp))
        and np.all(resp >= 0)
        and np.allclose(resp.sum(axis=1), 1.0, rtol=0.0, atol=1e-8)
    ):
        raise ValueError(
            "init responsibilities must be >= 0 with every row summing to 1; "
            "pass resp / resp.sum(axis=1, keepdims=True)"
        )
    return resp


def em(
    *,
    x: np.ndarray,
    components: int,
    prior: NormalWishartPrior | None = None,
    reg_covar: float = 1e-6,
    tol: float = 1e-6,
    max_iter: int = 500,
    restarts: int = 5,
    rng: np.random.Generator | None,
    init: np.ndarray | MixtureParams | None = None,
) -> EMResult:
    """Fit a full-covariance Gaussian mixture by EM (``prior=None``) or MAP-EM.

    E-step: responsibilities (Bishop 2006, eq. 9.23).  M-step: ML
    (eqs. 9.24-9.26, plus ``reg_covar I``, as scikit-learn) or the mode of the
    complete-data posterior (module docstring; Murphy 2012, sec. 11.4.2.8).

    Parameters
    ----------
    x : array of shape (n, d)
        Finite data, n >= K.
    components : int
        K >= 1.
    prior : NormalWishartPrior or None
        None: maximum likelihood.  A prior: MAP-EM in (w, mu, Lambda)
        coordinates; needs ``alpha >= 1`` and ``nu0 > d``; ``reg_covar`` is
        then not used (psi0 keeps the covariances positive definite).
    reg_covar : float
        >= 0, added to the diagonal of every ML covariance.
    tol : float
        >= 0; stop when the objective changes by less than ``tol`` per data
        point between two iterations (mean log-likelihood for ML, mean log
        posterior for MAP).  ``tol=0`` runs ``max_iter`` iterations.
    max_iter : int
        >= 1, M-steps per run.
    restarts : int
        >= 1 runs from independent k-means++ seedings; the run with the
        largest final objective is returned.  Ignored (one run) with ``init``.
    rng : numpy.random.Generator
        For k-means++; may be None when ``init`` is given.
    init : None, array of shape (n, K) or MixtureParams
        None: k-means++ centres, each point assigned to its nearest centre,
        then one M-step.  (scikit-learn's ``init_params="k-means++"`` gives
        responsibility 1 only to the K centres themselves; assigning every
        point keeps the first MAP covariances data-driven.)  A responsibility
        matrix: one M-step from it.  Params: the starting parameters.

    Returns
    -------
    EMResult
    """
    x = as_points("x", x, min_rows=1)
    n, d = x.shape
    k_count = check_int(
        "components", components, low=1, high=n, high_what="the number of rows of x"
    )
    is_map = prior is not None
    if is_map:
        prior = check_prior(prior, d)
        if prior.alpha < 1.0:
            raise ValueError(
                f"alpha must be >= 1 for MAP-EM, got {prior.alpha!r}: with "
                f"alpha < 1 the Dirichlet density is unbounded at the simplex's "
                f"edges, so the weights have no interior mode; use alpha >= 1 "
                f"or ML-EM (prior=None)"
            )
        if prior.nu0 <= d:
            raise ValueError(
                f"nu0 must be > d = {d} for MAP-EM, got {prior.nu0!r}: the mode "
                f"of Lambda_k is (nu0 + N_k - d) W_N, which must stay positive "
                f"for a component with no points; raise nu0 or use ML-EM"
            )
    reg_covar = check_real("reg_covar", reg_covar, low=0.0, strict=False)
    tol = check_real("tol", tol, low=0.0, strict=False)
    max_iter = check_int("max_iter", max_iter, low=1)
    restarts = check_int("restarts", restarts, low=1)
    if init is None:
        if not isinstance(rng, np.random.Generator):
            raise ValueError(
                f"rng must be a numpy.random.Generator (for k-means++), got "
                f"{type(rng).__name__}; pass rng=np.random.default_rng(seed)"
            )
    else:
        init = _check_init(init, n, k_count, d)
        restarts = 1

    shift = x.mean(axis=0)
    xc = x - shift  # EM is translation invariant; centring keeps x x^T sums well scaled
    m0 = prior.m0 - shift if prior is not None else None

    def m_step(st: _Stats) -> MixtureParams:
        if prior is None or m0 is None:  # ML-EM
            return _m_step_ml(st, reg_covar)
        return _m_step_map(st, prior, m0)

    def objective(ll: float, p: MixtureParams) -> float:
        if prior is None or m0 is None:  # ML-EM
            return ll
        return ll + _log_prior_parts(p.weights, p.means, p.precision_cholesky, prior, m0)

    best = None
    finals = []
    for _ in range(restarts):
        if init is None:
            centres = xc[_kmeans_pp(xc, k_count, cast(np.random.Generator, rng))]  # checked above
            dist = np.stack([np.einsum("ij,ij->i", xc - c, xc - c) for c in centres], axis=1)
            params = m_step(_stats_from_labels(xc, np.argmin(dist, axis=1), k_count))
        elif isinstance(init, MixtureParams):
            params = MixtureParams(
                weights=init.weights, means=init.means - shift, covariances=init.covariances
            )
        else:
            params = m_step(_stats_from_resp(xc, init))
        history: list[float] = []
        converged = False
        n_iter = 0
        for it in range(max_iter):
            ll, st = _sweep(xc, params)
            history.append(objective(ll, params))
            params = m_step(cast(_Stats, st))  # want_stats=True: the statistics are there
            n_iter = it + 1
            if it > 0 and abs(history[-1] - history[-2]) < tol * n:
                converged = True
                break
        resp = np.empty((n, k_count))
        ll, _ = _sweep(xc, params, resp_out=resp, want_stats=False)
        obj = objective(ll, params)
        history.append(obj)
        finals.append(obj)
        if best is None or obj > best[1]:
            best = (params, obj, ll, np.asarray(history), n_iter, converged, resp)
    assert best is not None  # restarts >= 1
    params, obj, ll, trace, n_iter, converged, resp = best
    return EMResult(
        params=MixtureParams(
            weights=params.weights, means=params.means + shift, covariances=params.covariances
        ),
        objective=float(obj),
        log_likelihood=float(ll),
        history=trace,
        n_iter=n_iter,
        converged=converged,
        responsibilities=resp,
        restart_objectives=np.asarray(finals),
        is_map=is_map,
    )


# ---------------------------------------------------------------- complete-data posterior


def parameter_names(*, components: int, dim: int) -> tuple[str, ...]:
    """Names in the order of the flattened PyMC variables ``w`` (K,), ``mu`` (K, d), ``Lambda`` (K, d, d).

    ``"w[k]"``; then ``"mu[k,j]"`` for k, j in C order; then
    ``"Lambda[k,i,j]"`` for k, i, j in C order (all d * d entries, including
    the symmetric duplicates).  P = K + K d + K d^2 names.
    """
    k_count = check_int("components", components, low=1)
    d = check_int("dim", dim, low=1)
    return (
        tuple(f"w[{k}]" for k in range(k_count))
        + tuple(f"mu[{k},{j}]" for k in range(k_count) for j in range(d))
        + tuple(f"Lambda[{k},{i},{j}]" for k in range(k_count) for i in range(d) for j in range(d))
    )


def split_parameters(
    *, theta: np.ndarray, components: int, dim: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split flattened parameters (..., P) into ``w`` (..., K), ``mu`` (..., K, d), ``Lambda`` (..., K, d, d)."""
    k_count, d = components, dim
    theta = np.asarray(theta, dtype=float)
    p = k_count + k_count * d + k_count * d * d
    if theta.shape[-1:] != (p,):
        raise ValueError(
            f"theta must have {p} entries in its last axis (K = {k_count}, "
            f"d = {d}), got shape {theta.shape}"
        )
    lead = theta.shape[:-1]
    w = theta[..., :k_count]
    mu = theta[..., k_count : k_count + k_count * d].reshape(*lead, k_count, d)
    lam = theta[..., k_count + k_count * d :].reshape(*lead, k_count, d, d)
    return w, mu, lam


@dataclass(frozen=True, eq=False)
class MixturePosterior:
    """Exact posterior of a mixture's parameters given known labels.

    ``w ~ Dirichlet(alpha)`` independent of the K pairs
    ``(mu_k, Lambda_k) ~ NormalWishart(m_k, kappa_k, nu_k, W_k)``, i.e.
    ``Lambda_k ~ Wishart(nu_k, W_k)``, ``mu_k | Lambda_k ~ N(m_k, (kappa_k Lambda_k)^-1)``.
    Satisfies :class:`analytic.ExactPosterior` over :func:`parameter_names`.

    Attributes
    ----------
    alpha : array of shape (K,)
        ``alpha0 + counts``.
    m : array of shape (K, d)
    kappa, nu : arrays of shape (K,)
    psi : array of shape (K, d, d)
        ``W_k^-1``.
    psi_chol : array of shape (K, d, d)
        Lower Cholesky factors of ``psi`` (computed).
    scale : array of shape (K, d, d)
        ``W_k = psi_k^-1`` by ``cho_solve`` (computed): ``E[Lambda_k] = nu_k W_k``.
    """

    alpha: np.ndarray
    m: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    psi: np.ndarray
    psi_chol: np.ndarray = field(init=False, repr=False)
    scale: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        k_count, d = np.shape(self.m)
        chol = np.empty((k_count, d, d))
        scale = np.empty((k_count, d, d))
        for k in range(k_count):
            chol[k] = cholesky_spd(
                f"psi[{k}]", np.asarray(self.psi[k], dtype=float), remedy="check the prior's psi0"
            )
            w = linalg.cho_solve((chol[k], True), np.eye(d))
            scale[k] = 0.5 * (w + w.T)
        for name in ("alpha", "m", "kappa", "nu", "psi"):
            object.__setattr__(self, name, frozen(getattr(self, name)))
        object.__setattr__(self, "psi_chol", frozen(chol))
        object.__setattr__(self, "scale", frozen(scale))

    # --- layout

    @property
    def components(self) -> int:
        return int(self.alpha.shape[0])

    @property
    def d(self) -> int:
        return int(self.m.shape[1])

    @property
    def parameters(self) -> tuple[str, ...]:
        return parameter_names(components=self.components, dim=self.d)

    def _mu_index(self, k: int, j: int) -> int:
        return self.components + k * self.d + j

    def _lam_index(self, k: int, i: int, j: int) -> int:
        d = self.d
        return self.components + self.components * d + k * d * d + i * d + j

    @property
    def free(self) -> tuple[int, ...]:
        """All but ``w[K-1]`` (the weights sum to one) and ``Lambda[k,i,j]`` with i < j
        (copies of ``Lambda[k,j,i]``): the covariance over these is non-singular."""
        k_count, d = self.components, self.d
        out = list(range(k_count - 1))
        out += [self._mu_index(k, j) for k in range(k_count) for j in range(d)]
        out += [
            self._lam_index(k, i, j) for k in range(k_count) for i in range(d) for j in range(i + 1)
        ]
        return tuple(out)

    @property
    def is_gaussian(self) -> bool:
        return False

    @property
    def t_dof(self) -> np.ndarray:
        """Degrees of freedom ``nu_k - d + 1`` of the Student-t marginals of ``mu_k`` (Murphy 2012, sec. 4.6.3.4)."""
        return self.nu - self.d + 1.0

    @property
    def moments_below(self) -> float:
        return float(np.min(self.t_dof))

    # --- moments

    @property
    def mean(self) -> np.ndarray:
        """Dirichlet mean; ``m_k`` (inf where the t has <= 1 dof); ``nu_k W_k``."""
        a0 = self.alpha.sum()
        mu = np.where((self.t_dof > 1.0)[:, None], self.m, np.inf)
        lam = self.nu[:, None, None] * self.scale
        return np.concatenate([self.alpha / a0, mu.ravel(), lam.ravel()])

    @property
    def cov(self) -> np.ndarray:
        """Exact covariance over all P parameters (block diagonal).

        * w: ``(diag(m) - m m^T) / (alpha_0 + 1)``, m the Dirichlet mean.
        * mu_k: ``E[(kappa_k Lambda_k)^-1] = W_k^-1 / (kappa_k (nu_k - d - 1))``
          (inverse-Wishart mean; Murphy 2012, sec. 4.5.1); inf where ``nu_k <= d + 1``.
        * Lambda_k: ``Cov(L_ij, L_kl) = nu_k (W_ik W_jl + W_il W_jk)``
          (Gupta & Nagar 2000, sec. 3.3).
        * Zero between blocks: w is independent of the components, the
          components of each other, and ``Cov(mu_k, Lambda_k) = 0`` because
          ``E[mu_k | Lambda_k] = m_k``.
        """
        k_count, d = self.components, self.d
        size = k_count + k_count * d + k_count * d * d
        out = np.zeros((size, size))
        a0 = self.alpha.sum()
        mw = self.alpha / a0
        out[:k_count, :k_count] = (np.diag(mw) - np.outer(mw, mw)) / (a0 + 1.0)
        for k in range(k_count):
            a = self._mu_index(k, 0)
            denom = self.kappa[k] * (self.nu[k] - d - 1.0)
            block = self.psi[k] / denom if self.nu[k] > d + 1.0 else np.full((d, d), np.inf)
            out[a : a + d, a : a + d] = block
            w = self.scale[k]
            lam = self.nu[k] * (np.einsum("ik,jl->ijkl", w, w) + np.einsum("il,jk->ijkl", w, w))
            b = self._lam_index(k, 0, 0)
            out[b : b + d * d, b : b + d * d] = lam.reshape(d * d, d * d)
        return out

    @property
    def mode(self) -> np.ndarray | None:
        """Joint mode in (w, mu, Lambda) coordinates.

        w: ``(alpha_k - 1) / (alpha_0 - K)`` (boundary rule of the Dirichlet
        topic when some ``alpha_k <= 1``); ``mu_k = m_k``;
        ``Lambda_k = (nu_k - d) W_k`` (module docstring), which is 0 on the
        boundary when ``nu_k = d``.  None when the density is unbounded
        (``nu_k < d`` or no ``alpha_k > 1``).
        """
        excess = np.clip(self.alpha - 1.0, 0.0, None)
        if excess.sum() <= 0 or np.any(self.nu < self.d):
            return None
        lam = (self.nu - self.d)[:, None, None] * self.scale
        return np.concatenate([excess / excess.sum(), self.m.ravel(), lam.ravel()])

    @property
    def mode_interior(self) -> bool:
        """Every ``alpha_k > 1`` and every ``nu_k > d``."""
        return bool(np.all(self.alpha > 1.0) and np.all(self.nu > self.d))

    def marginal(self, index: int) -> Any:
        """Frozen scipy marginal of parameter ``index``, or None.

        ``w[k]``: Beta; ``mu[k,j]``: Student-t with ``nu_k - d + 1`` dof, location
        ``m_kj`` and scale ``sqrt(psi_k[j,j] / (kappa_k (nu_k - d + 1)))``
        (Bishop 2006, eq. 10.81 form); ``Lambda[k,i,i]``: ``W_k[i,i] chi^2_nu``,
        i.e. Gamma(nu_k / 2, scale 2 W_k[i,i]); off-diagonal ``Lambda`` entries:
        None (no scipy distribution; the compare layer skips their quantiles).
        """
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        index = int(index)
        k_count, d = self.components, self.d
        if not 0 <= index < len(self.parameters):
            raise IndexError(f"index must be in 0..{len(self.parameters) - 1}, got {index}")
        if index < k_count:
            return freeze(stats.beta, self.alpha[index], self.alpha.sum() - self.alpha[index])
        index -= k_count
        if index < k_count * d:
            k, j = divmod(index, d)
            dof = self.t_dof[k]
            return freeze(
                stats.t,
                dof,
                loc=self.m[k, j],
                scale=math.sqrt(self.psi[k, j, j] / (self.kappa[k] * dof)),
            )
        index -= k_count * d
        k, rest = divmod(index, d * d)
        i, j = divmod(rest, d)
        if i != j:
            return None
        return freeze(stats.gamma, 0.5 * self.nu[k], scale=2.0 * self.scale[k, i, i])

    # --- density and draws

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log density at ``x`` of shape (..., P); returns shape (...).

        ``log Dirichlet(w) + sum_k [log Wishart(Lambda_k) + log N(mu_k; m_k,
        (kappa_k Lambda_k)^-1)]``, a density over the free coordinates (first
        K-1 weights, lower triangles of the Lambda_k).  ``-inf`` off the simplex
        and where a ``Lambda_k`` is not symmetric positive definite.
        """
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        x = np.asarray(x, dtype=float)
        k_count, d = self.components, self.d
        w, mu, lam = split_parameters(theta=x, components=k_count, dim=d)
        lead = x.shape[:-1]
        a = self.alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            log_dir = (
                special.gammaln(a.sum())
                - special.gammaln(a).sum()
                + np.sum(special.xlogy(a - 1.0, w), axis=-1)
            )
        ok = np.all(w >= 0, axis=-1) & np.isclose(w.sum(axis=-1), 1.0)
        sym = np.all(
            np.abs(lam - np.swapaxes(lam, -1, -2))
            <= 1e-10 * np.max(np.abs(lam), axis=(-2, -1), keepdims=True),
            axis=(-2, -1),
        )
        with np.errstate(invalid="ignore"):
            pd = np.all(np.linalg.eigvalsh(np.where(np.isfinite(lam), lam, 0.0)) > 0, axis=-1)
        good = sym & pd & np.all(np.isfinite(lam), axis=(-2, -1))  # (..., K)
        lam_safe = np.where(good[..., None, None], lam, np.eye(d))
        chol = np.linalg.cholesky(lam_safe)  # Lambda = L L^T
        log_det = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        trace = np.einsum("kij,...kij->...k", self.psi, lam_safe)
        log_det_psi = 2.0 * np.sum(np.log(np.diagonal(self.psi_chol, axis1=1, axis2=2)), axis=1)
        total = log_dir
        for k in range(k_count):
            nu = self.nu[k]
            log_wish = _log_wishart(
                log_det[..., k], trace[..., k], nu=nu, log_det_psi=log_det_psi[k], d=d
            )
            u = np.einsum("...ij,...i->...j", chol[..., k, :, :], mu[..., k, :] - self.m[k])
            log_norm = (
                -0.5 * d * _LOG_2PI
                + 0.5 * d * math.log(self.kappa[k])
                + 0.5 * log_det[..., k]
                - 0.5 * self.kappa[k] * np.sum(u * u, axis=-1)
            )
            total = total + log_wish + log_norm
        good_all = ok & np.all(good, axis=-1)
        return np.where(good_all, total, -np.inf).reshape(lead)

    def sample_components(
        self, rng: np.random.Generator, size: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact iid draws as arrays: ``w`` (size, K), ``mu`` (size, K, d), ``Lambda`` (size, K, d, d).

        ``Lambda_k`` by the Bartlett decomposition (Bartlett 1933; Gupta &
        Nagar 2000, sec. 3.3): ``Lambda = B A A^T B^T`` with ``B B^T = W_k``
        and A lower triangular, ``A_ii^2 ~ chi^2(nu_k - i)`` (i = 0..d-1),
        ``A_ij ~ N(0, 1)`` below the diagonal.  With ``psi_k = C C^T``,
        ``B = C^-T``, the upper-triangular factor of ``W_k`` (LAPACK ``trtri``,
        as for :attr:`MixtureParams.precision_cholesky`).  Then
        ``mu_k = m_k + G^-T z / sqrt(kappa_k)`` with ``G = B A`` (so
        ``Lambda = G G^T`` and the draw has covariance ``(kappa_k Lambda)^-1``);
        ``G^-T = C A^-T``, with ``A^-T z`` by back substitution.
        """
        size = check_int("size", size, low=0)
        k_count, d = self.components, self.d
        w = rng.dirichlet(self.alpha, size=size)
        mu = np.empty((size, k_count, d))
        lam = np.empty((size, k_count, d, d))
        rows, cols = np.tril_indices(d, -1)
        for k in range(k_count):
            a = np.zeros((size, d, d))
            a[:, np.arange(d), np.arange(d)] = np.sqrt(
                rng.chisquare(self.nu[k] - np.arange(d), size=(size, d))
            )
            a[:, rows, cols] = rng.standard_normal((size, rows.size))
            c = self.psi_chol[k]
            g = _inverse_lower(c, f"psi[{k}]").T @ a  # G = C^-T A, shape (size, d, d)
            gg = g @ g.transpose(0, 2, 1)
            lam[:, k] = 0.5 * (gg + gg.transpose(0, 2, 1))  # exactly symmetric
            # u = A^-T z by back substitution (A^T is upper triangular), vectorised over draws
            z = rng.standard_normal((size, d))
            u = np.empty((size, d))
            for i in range(d - 1, -1, -1):
                u[:, i] = (z[:, i] - np.einsum("sj,sj->s", a[:, i + 1 :, i], u[:, i + 1 :])) / a[
                    :, i, i
                ]
            mu[:, k] = self.m[k] + (u @ c.T) / math.sqrt(self.kappa[k])
        return w, mu, lam

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Exact iid draws flattened in the order of :attr:`parameters`, shape (size, P)."""
        w, mu, lam = self.sample_components(rng, size)
        n = w.shape[0]
        return np.concatenate([w, mu.reshape(n, -1), lam.reshape(n, -1)], axis=1)


@dataclass(frozen=True, eq=False)
class MixturePredictive:
    """Posterior predictive of a new point: ``sum_k E[w_k] St(x | m_k, dof_k, scale_k)``.

    ``dof_k = nu_k - d + 1`` and ``scale_k = W_k^-1 (kappa_k + 1) / (kappa_k dof_k)``
    (Bishop 2006, eqs. 10.81-10.82): the posterior factorises over w and the
    components, so the mixture of expectations is exact.

    Attributes
    ----------
    weights : array of shape (K,)
    loc : array of shape (K, d)
    df : array of shape (K,)
    scale : array of shape (K, d, d)
    """

    weights: np.ndarray
    loc: np.ndarray
    df: np.ndarray
    scale: np.ndarray

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log density at points ``x`` (..., d); shape (...)."""
        from scipy import linalg, special  # heavy: SciPy (0.5 s) only when the maths runs

        x = np.asarray(x, dtype=float)
        d = self.loc.shape[1]
        flat = x.reshape(-1, d)
        parts = np.empty((flat.shape[0], self.weights.size))
        for k in range(self.weights.size):
            chol = linalg.cholesky(self.scale[k], lower=True)
            parts[:, k] = math.log(self.weights[k]) + student_t_logpdf(
                flat, self.loc[k], chol, self.df[k]
            )
        return special.logsumexp(parts, axis=1).reshape(x.shape[:-1])

    def mean(self) -> np.ndarray:
        """``sum_k E[w_k] m_k``, shape (d,); inf where some dof <= 1."""
        if np.any(self.df <= 1.0):
            return np.full(self.loc.shape[1], np.inf)
        return self.weights @ self.loc

    def cov(self) -> np.ndarray:
        """Mixture covariance ``sum_k pi_k (C_k + m_k m_k^T) - m m^T``, ``C_k = scale_k dof_k / (dof_k - 2)``."""
        if np.any(self.df <= 2.0):
            return np.full(self.scale.shape[1:], np.inf)
        c = self.scale * (self.df / (self.df - 2.0))[:, None, None]
        second = np.einsum(
            "k,kij->ij", self.weights, c + self.loc[:, :, None] * self.loc[:, None, :]
        )
        m = self.mean()
        return second - np.outer(m, m)

    def var(self) -> np.ndarray:
        """Marginal variances, shape (d,)."""
        return np.diag(self.cov()).copy()


def _posterior_from_groups(g: Groups, prior: NormalWishartPrior) -> MixturePosterior:
    """Normal-Wishart update per component (:func:`analytic._normal_wishart.update`)."""
    return MixturePosterior(**update(g, prior))


def complete_data_posterior(
    *, x: np.ndarray, labels: np.ndarray, prior: NormalWishartPrior, components: int
) -> MixturePosterior:
    """Exact posterior of (w, mu, Lambda) when every point's component is known.

    ``w ~ Dirichlet(alpha + counts)``; per component, with ``N_k`` points,
    mean ``xbar_k`` and scatter ``S_k`` (Bishop 2006, eqs. 10.60-10.63;
    Murphy 2012, sec. 4.6.3.3): ``kappa_k = kappa0 + N_k``,
    ``m_k = (kappa0 m0 + N_k xbar_k) / kappa_k``, ``nu_k = nu0 + N_k``,
    ``W_k^-1 = psi0 + S_k + kappa0 N_k / kappa_k (xbar_k - m0)(xbar_k - m0)^T``.
    A component without points keeps the prior.

    Parameters
    ----------
    x : array of shape (n, d)
        n may be 0 (the posterior is the prior).
    labels : array of shape (n,)
        Integer codes in 0..K-1.
    prior : NormalWishartPrior
    components : int
        K >= 1.
    """
    k_count = check_int("components", components, low=1)
    prior = require_prior(prior)
    x = as_points("x", x, d=prior.d)
    codes = check_labels(labels, x.shape[0], k_count)
    return _posterior_from_groups(groups(x, codes, k_count), prior)


def _log_evidence(g: Groups, post: MixturePosterior, prior: NormalWishartPrior) -> float:
    return log_evidence(g, prior, kappa=post.kappa, nu=post.nu, psi_chol=post.psi_chol)


def complete_data_answer(
    *, x: np.ndarray, labels: np.ndarray, prior: NormalWishartPrior, components: int
) -> ExactAnswer:
    """:func:`complete_data_posterior` with its MLE, log evidence and predictive.

    log evidence = ``log p(z) + sum_k log p(x_{z=k})``: the Dirichlet-multinomial
    probability of the label sequence,
    ``lgamma(K alpha) - lgamma(n + K alpha) + sum_k [lgamma(alpha + N_k) - lgamma(alpha)]``,
    plus per component the Normal-Wishart evidence (Murphy 2012, sec. 4.6.3.6)
    ``-N d/2 log pi + log Gamma_d(nu_N/2) - log Gamma_d(nu0/2) + nu0/2 log|psi0|
    - nu_N/2 log|psi_N| + d/2 log(kappa0 / kappa_N)``.

    mle: the complete-data MLE in the order of the parameters (counts / n,
    ``xbar_k``, ``(S_k / N_k)^-1``); None when a component has fewer than
    d + 1 points or a singular scatter.  predictive: :class:`MixturePredictive`.
    """
    k_count = check_int("components", components, low=1)
    prior = require_prior(prior)
    x = as_points("x", x, d=prior.d)
    codes = check_labels(labels, x.shape[0], k_count)
    g = groups(x, codes, k_count)
    post = _posterior_from_groups(g, prior)
    dof = post.t_dof
    pred = MixturePredictive(
        weights=post.alpha / post.alpha.sum(),
        loc=post.m,
        df=dof,
        scale=post.psi * ((post.kappa + 1.0) / (post.kappa * dof))[:, None, None],
    )
    return ExactAnswer(
        posterior=post,
        mle=complete_data_mle(g),
        log_evidence=_log_evidence(g, post, prior),
        predictive=pred,
    )


# ---------------------------------------------------------------- relabelling


def relabel(
    *, means_draws: np.ndarray, reference_means: np.ndarray, scale: float | np.ndarray | None = None
) -> np.ndarray:
    """Canonical component order of posterior draws: minimum-cost matching to a reference.

    For each draw s the permutation ``perm[s]`` minimises
    ``sum_j ||(means_draws[s, perm[s, j]] - reference_means[j]) / scale||^2``
    (Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``).  The
    reference is normally the EM (or MAP-EM) solution; this is the canonical
    relabelling of the project (Stephens 2000 uses the same idea with a
    different loss).  Relabel every per-component array of the draw with
    :func:`apply_permutation`.

    Parameters
    ----------
    means_draws : array of shape (S, K, d)
    reference_means : array of shape (K, d)
    scale : None, float, array of shape (d,) or (K, d)
        Standardisation of each coordinate (per reference component with
        (K, d)).  None: the standard deviation of each coordinate over all
        draws and components (invariant under relabelling), 1 where it is 0.

    Returns
    -------
    perm : int array of shape (S, K)
        ``apply_permutation(means_draws, perm)[s, j]`` is the draw's component
        matched to reference component j.
    """
    from scipy import optimize  # heavy: SciPy (0.5 s) only when the maths runs

    draws = np.asarray(means_draws, dtype=float)
    ref = np.asarray(reference_means, dtype=float)
    if ref.ndim != 2:
        raise ValueError(f"reference_means must be an array of shape (K, d), got shape {ref.shape}")
    k_count, d = ref.shape
    if draws.ndim != 3 or draws.shape[1:] != (k_count, d):
        raise ValueError(
            f"means_draws must be an array of shape (S, {k_count}, {d}), got shape {draws.shape}"
        )
    if not (np.all(np.isfinite(draws)) and np.all(np.isfinite(ref))):
        raise ValueError("means_draws and reference_means must be finite")
    if scale is None:
        sd = draws.reshape(-1, d).std(axis=0) if draws.size else np.ones(d)
        scale = np.where(sd > 0, sd, 1.0)
    scale = np.broadcast_to(np.asarray(scale, dtype=float), (k_count, d))
    if not np.all(np.isfinite(scale) & (scale > 0)):
        raise ValueError(f"scale must be > 0 and finite, got {np.asarray(scale).tolist()}")
    # cost[s, a, j]: draw component a against reference component j
    diff = (draws[:, :, None, :] - ref[None, None, :, :]) / scale[None, None, :, :]
    cost = np.einsum("sajd,sajd->saj", diff, diff)
    perm = np.empty((draws.shape[0], k_count), dtype=np.int64)
    for s in range(draws.shape[0]):
        rows, cols = optimize.linear_sum_assignment(cost[s])
        perm[s, cols] = rows
    return perm


def apply_permutation(array: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """``out[s, j, ...] = array[s, perms[s, j], ...]`` for arrays of shape (S, K, ...)."""
    arr = np.asarray(array)
    perms = np.asarray(perms)
    if perms.ndim != 2 or arr.shape[:2] != perms.shape:
        raise ValueError(
            f"array must have shape (S, K, ...) matching perms {perms.shape}, got {arr.shape}"
        )
    idx = perms.reshape(perms.shape + (1,) * (arr.ndim - 2))
    return np.take_along_axis(arr, idx, axis=1)


def sort_by_first_coordinate(means: np.ndarray) -> np.ndarray:
    """Permutations (S, K) ordering each draw's components by the first coordinate of their means.

    The canonical order for d = 1 (an ordering constraint ``mu_1 < ... < mu_K``);
    for d > 1 it is only a heuristic, use :func:`relabel`.  ``means`` has shape
    (S, K) or (S, K, d).
    """
    arr = np.asarray(means, dtype=float)
    if arr.ndim == 3:
        arr = arr[..., 0]
    if arr.ndim != 2:
        raise ValueError(f"means must have shape (S, K) or (S, K, d), got {np.shape(means)}")
    return np.argsort(arr, axis=1, kind="stable")


# ---------------------------------------------------------------- simulation


def simulate_from(
    rng: np.random.Generator, *, n: int, params: MixtureParams
) -> tuple[np.ndarray, np.ndarray]:
    """Draw n labels ``z_i ~ Categorical(w)`` and points ``x_i ~ N(mu_z, Sigma_z)``.

    Returns
    -------
    x : array of shape (n, d)
    labels : int array of shape (n,)
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    n = check_int("n", n, low=0)
    params = _check_params(params)
    labels = rng.choice(params.components, size=n, p=params.weights)
    z = rng.standard_normal((n, params.d))
    x = np.empty((n, params.d))
    for k in range(params.components):
        idx = labels == k
        chol = linalg.cholesky(params.covariances[k], lower=True)
        x[idx] = params.means[k] + z[idx] @ chol.T
    return x, labels


def simulate(
    rng: np.random.Generator, *, n: int, components: int, prior: NormalWishartPrior
) -> tuple[MixtureParams, np.ndarray, np.ndarray]:
    """Draw parameters from the prior, then n points from them.

    ``w ~ Dirichlet(alpha 1_K)``, ``Lambda_k ~ Wishart(nu0, W0)``,
    ``mu_k ~ N(m0, (kappa0 Lambda_k)^-1)`` (the exact sampler of
    :class:`MixturePosterior` with no data), then :func:`simulate_from`.
    With a vague prior (small kappa0) the components are far apart.

    Returns
    -------
    params : MixtureParams
    x : array of shape (n, d)
    labels : int array of shape (n,)
    """
    k_count = check_int("components", components, low=1)
    prior = require_prior(prior)
    g = Groups(
        np.zeros(k_count), np.zeros((k_count, prior.d)), np.zeros((k_count, prior.d, prior.d))
    )
    w, mu, lam = _posterior_from_groups(g, prior).sample_components(rng, 1)
    params = MixtureParams.from_precisions(
        weights=w[0] / w[0].sum(), means=mu[0], precisions=lam[0]
    )
    x, labels = simulate_from(rng, n=n, params=params)
    return params, x, labels
