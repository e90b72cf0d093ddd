"""Bayesian linear regression with unknown noise variance: Normal-Inverse-Gamma prior.

Model (Murphy 2012, sec. 7.6.3; Bishop 2006, exercises 3.12-3.13)::

    sigma2 ~ InvGamma(alpha0, beta0)                  # shape alpha0, *scale* beta0
    w | sigma2 ~ Normal(prior_mean, sigma2 V0)        # V0: covariance per unit sigma2
    y | w, sigma2 ~ Normal(Phi w, sigma2 I)

The command line uses ``prior_mean = 0`` and ``V0 = prior_scale^2 I``.

Posterior NIG(m_n, V_n, a_n, b_n) (Murphy 2012, sec. 7.6.3)::

    V_n^-1 = V0^-1 + Phi^T Phi
    m_n    = V_n (V0^-1 m0 + Phi^T y)
    a_n    = alpha0 + n / 2
    b_n    = beta0 + (y^T y + m0^T V0^-1 m0 - m_n^T V_n^-1 m_n) / 2
           = beta0 + (||y - Phi m_n||^2 + (m_n - m0)^T V0^-1 (m_n - m0)) / 2

The conditional posterior of w given sigma2 is the known-variance posterior
of :mod:`analytic.linear_regression` with ``noise_sd = 1`` and
``prior_cov = V0``, scaled by sigma2; this module reuses its statistics,
factorisations and MLE.  The second form of ``b_n`` is a sum of non-negative
terms and is used whenever the raw data are available; from statistics only
the first (Woodbury) form is used, which cancels ``y^T y`` against the fitted
part and loses ``log10(y^T y / RSS)`` digits.

Marginals: ``w_i ~ t_{2 a_n}(m_n[i], b_n/a_n V_n[i, i])`` and
``sigma2 ~ InvGamma(a_n, b_n)``; the predictive at a new row phi is
``t_{2 a_n}(phi^T m_n, b_n/a_n (1 + phi^T V_n phi))`` (Murphy 2012, sec. 7.6.3; Bishop 2006, exercise 3.13).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analytic._base import ExactAnswer, check_power, require_drawable, require_positive
from analytic._frozen import freeze
from analytic.linear_regression import (
    MLE,
    Stats,
    _as_design,
    _check_data,
    _check_stats,
    _factor_prior,
    _log_det_ratio,
    _mle_from_stats,
    _posterior_factor,
    _Prior,
    _quad_from_data,
    _quad_from_stats,
    _resolve_prior,
    design_matrix,
    mle,
    sufficient_stats,
)

__all__ = [
    "MLE",
    "NIGPredictive",
    "NIGRegressionFit",
    "NIGRegressionPosterior",
    "Stats",
    "design_matrix",
    "fit",
    "fit_stats",
    "log_densities",
    "log_evidence",
    "mle",
    "power_scaled",
    "predictive",
    "predictive_cov",
    "simulate",
    "solve",
    "solve_stats",
    "sufficient_stats",
    "update",
]

_LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True, eq=False)
class NIGRegressionPosterior:
    """Joint NIG(m_n, V_n, a_n, b_n) over ``(w[0], ..., w[d-1], sigma2)``.

    Attributes
    ----------
    loc : array of shape (d,)
        ``m_n``, the mean of w (given any sigma2).
    scale_cov : array of shape (d, d)
        ``V_n``: ``Cov(w | sigma2) = sigma2 V_n``.
    prec_chol : array of shape (d, d)
        Lower Cholesky factor L with ``L L^T = V_n^-1``; used by ``logpdf``
        and ``sample``.
    alpha : float
        ``a_n``, InvGamma shape.
    beta : float
        ``b_n``, InvGamma *scale*.
    """

    loc: np.ndarray
    scale_cov: np.ndarray
    prec_chol: np.ndarray
    alpha: float
    beta: float
    is_gaussian: bool = False
    mode_interior: bool = True

    @property
    def d(self) -> int:
        """Number of weights (the posterior has d + 1 parameters)."""
        return int(self.loc.shape[0])

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(f"w[{i}]" for i in range(self.d)) + ("sigma2",)

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(self.d + 1))

    @property
    def moments_below(self) -> float:
        """t marginals (2 a_n dof): moments below 2 a_n; InvGamma(a_n): below a_n."""
        return float(self.alpha)

    def marginal(self, index: int) -> Any:
        """``t_{2 a_n}(m_n[i], sqrt(b_n/a_n V_n[i, i]))`` for w_i; ``InvGamma(a_n, scale=b_n)`` last."""
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        if not 0 <= index <= self.d:
            raise ValueError(f"index must be in 0..{self.d}, got {index!r}")
        if index == self.d:
            return freeze(stats.invgamma, self.alpha, scale=self.beta)
        scale = math.sqrt(self.beta / self.alpha * self.scale_cov[index, index])
        return freeze(stats.t, 2.0 * self.alpha, loc=self.loc[index], scale=scale)

    @property
    def mean(self) -> np.ndarray:
        """``(m_n, b_n / (a_n - 1))``, shape (d + 1,); the last is inf when a_n <= 1."""
        a = self.alpha
        return np.append(self.loc, self.beta / (a - 1.0) if a > 1 else np.inf)

    @property
    def cov(self) -> np.ndarray:
        """Block-diagonal, shape (d + 1, d + 1).

        ``Cov(w) = b_n / (a_n - 1) V_n`` (a_n > 1),
        ``Var(sigma2) = b_n^2 / ((a_n - 1)^2 (a_n - 2))`` (a_n > 2), inf where
        the moment does not exist.  ``Cov(w, sigma2) = 0`` because
        ``E[w | sigma2] = m_n`` does not depend on sigma2.
        """
        a, b, d = self.alpha, self.beta, self.d
        out = np.zeros((d + 1, d + 1))
        out[:d, :d] = b / (a - 1.0) * self.scale_cov if a > 1 else np.inf
        out[d, d] = b * b / ((a - 1.0) ** 2 * (a - 2.0)) if a > 2 else np.inf
        return out

    @property
    def mode(self) -> np.ndarray:
        """Joint mode ``(m_n, b_n / (a_n + 1 + d/2))``.

        The joint density is proportional to
        ``sigma2^-(a_n + 1 + d/2) exp(-(b_n + (w - m_n)^T V_n^-1 (w - m_n)/2) / sigma2)``.
        For every sigma2 the exponent is largest at ``w = m_n``; there
        ``d/d sigma2`` of ``-(a_n + 1 + d/2) log sigma2 - b_n / sigma2`` vanishes at
        ``sigma2 = b_n / (a_n + 1 + d/2)``, a maximum, inside (0, inf).
        """
        return np.append(self.loc, self.beta / (self.alpha + 1.0 + 0.5 * self.d))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Joint log density at ``x`` of shape (..., d + 1); -inf where sigma2 <= 0.

        ``log InvGamma(sigma2; a_n, b_n) + log Normal(w; m_n, sigma2 V_n)``.
        """
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        x = np.asarray(x, dtype=float)
        w, s2 = x[..., :-1], x[..., -1]
        pos = s2 > 0
        s2 = np.where(pos, s2, 1.0)
        a, b, d = self.alpha, self.beta, self.d
        z = (w - self.loc) @ self.prec_chol
        log_ig = a * math.log(b) - special.gammaln(a) - (a + 1.0) * np.log(s2) - b / s2
        log_n = (
            -0.5 * d * (_LOG_2PI + np.log(s2))
            + float(np.sum(np.log(np.diag(self.prec_chol))))
            - 0.5 * np.sum(z * z, axis=-1) / s2
        )
        return np.where(pos, log_ig + log_n, -np.inf)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Exact draws, shape (size, d + 1): sigma2 from InvGamma, then
        ``w = m_n + sqrt(sigma2) L^-T z``."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        s2 = self.beta / rng.gamma(self.alpha, 1.0, size=size)
        z = rng.standard_normal((self.d, size))
        w = (
            self.loc
            + np.sqrt(s2)[:, None] * linalg.solve_triangular(self.prec_chol.T, z, lower=False).T
        )
        return np.column_stack([w, s2])


def _check_shape_scale(alpha0: float, beta0: float) -> tuple[float, float]:
    return require_positive("alpha0", alpha0), require_positive("beta0", beta0)


def _make_posterior(
    suff: Stats,
    alpha0: float,
    beta0: float,
    prior: _Prior,
    data: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[NIGRegressionPosterior, float]:
    """Posterior and log evidence; the residual form of b_n when ``data`` is given."""
    from scipy import linalg, special  # heavy: SciPy (0.5 s) only when the maths runs

    loc, prec_chol = _posterior_factor(suff, prior, 1.0)
    if data is None:
        quad = _quad_from_stats(suff, prior, 1.0, prec_chol)
    else:
        quad = _quad_from_data(*data, prior, 1.0, loc)
    alpha, beta = alpha0 + 0.5 * suff.n, beta0 + 0.5 * quad
    scale_cov = linalg.cho_solve((prec_chol, True), np.eye(suff.d))
    post = NIGRegressionPosterior(
        loc=loc,
        scale_cov=0.5 * (scale_cov + scale_cov.T),
        prec_chol=prec_chol,
        alpha=alpha,
        beta=beta,
    )
    log_ev = (
        -0.5 * suff.n * _LOG_2PI
        - 0.5 * _log_det_ratio(prior, prec_chol)
        + alpha0 * math.log(beta0)
        - alpha * math.log(beta)
        + special.gammaln(alpha)
        - special.gammaln(alpha0)
    )
    return post, float(log_ev)


def update(
    *,
    suff: Stats,
    alpha0: float,
    beta0: float,
    prior_mean: np.ndarray | float,
    prior_cov: np.ndarray,
) -> NIGRegressionPosterior:
    """Conjugate update from statistics (Murphy 2012, sec. 7.6.3); the result is the next prior.

    Parameters
    ----------
    suff : linear_regression.Stats
    alpha0, beta0 : float
        InvGamma shape and *scale* of sigma2 (> 0).
    prior_mean : float or array of shape (d,)
    prior_cov : array of shape (d, d)
        V0, the covariance of w per unit sigma2.

    b_n comes from the Woodbury form (see the module docstring); to pass a
    posterior on as a prior use ``prior_mean=post.loc, prior_cov=post.scale_cov,
    alpha0=post.alpha, beta0=post.beta``.
    """
    suff = _check_stats(suff)
    alpha0, beta0 = _check_shape_scale(alpha0, beta0)
    prior = _factor_prior(prior_mean=prior_mean, prior_cov=prior_cov, d=suff.d)
    return _make_posterior(suff, alpha0, beta0, prior, None)[0]


def log_evidence(
    *,
    suff: Stats,
    alpha0: float,
    beta0: float,
    prior_mean: np.ndarray | float,
    prior_cov: np.ndarray,
) -> float:
    """log p(y), the multivariate t ``t_{2 alpha0}(Phi m0, beta0/alpha0 (I + Phi V0 Phi^T))``::

        log p(y) = -n/2 log(2 pi) + (log|V_n| - log|V0|)/2 + alpha0 log beta0
                   - a_n log b_n + lgamma(a_n) - lgamma(alpha0)

    (Murphy 2012, sec. 7.6.3; Bishop 2006, exercise 3.23), from statistics in O(d^3).
    """
    suff = _check_stats(suff)
    alpha0, beta0 = _check_shape_scale(alpha0, beta0)
    prior = _factor_prior(prior_mean=prior_mean, prior_cov=prior_cov, d=suff.d)
    return _make_posterior(suff, alpha0, beta0, prior, None)[1]


# ---------------------------------------------------------------- predictive


def _predictive_parts(
    posterior: NIGRegressionPosterior, phi_new: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    phi_new = _as_design("phi_new", phi_new, d=posterior.d)
    a = linalg.solve_triangular(posterior.prec_chol, phi_new.T, lower=True)
    return phi_new, a  # a^T a = Phi_new V_n Phi_new^T


def predictive(
    *, posterior: NIGRegressionPosterior, phi_new: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Predictive mean and variance at each row of ``phi_new`` (m, d).

    ``y_new ~ t_{2 a_n}(phi^T m_n, scale^2)`` with
    ``scale^2 = b_n/a_n (1 + phi^T V_n phi)``; variance
    ``scale^2 2 a_n / (2 a_n - 2) = b_n/(a_n - 1) (1 + phi^T V_n phi)`` (inf when a_n <= 1).

    Returns
    -------
    mean, var : arrays of shape (m,)
    """
    phi_new, a = _predictive_parts(posterior, phi_new)
    quad = 1.0 + np.sum(a * a, axis=0)
    al = posterior.alpha
    var = posterior.beta / (al - 1.0) * quad if al > 1 else np.full(quad.shape, np.inf)
    return phi_new @ posterior.loc, var


def predictive_cov(*, posterior: NIGRegressionPosterior, phi_new: np.ndarray) -> np.ndarray:
    """Joint predictive covariance ``b_n/(a_n - 1) (I + Phi_new V_n Phi_new^T)``, shape (m, m).

    The joint predictive is a multivariate t with 2 a_n dof and shape matrix
    ``b_n/a_n (I + Phi_new V_n Phi_new^T)``; the covariance needs a_n > 1
    (inf otherwise).
    """
    phi_new, a = _predictive_parts(posterior, phi_new)
    m, al = phi_new.shape[0], posterior.alpha
    if al <= 1:
        return np.full((m, m), np.inf)
    return posterior.beta / (al - 1.0) * (np.eye(m) + a.T @ a)


@dataclass(frozen=True, eq=False)
class NIGPredictive:
    """Posterior predictive at new design rows ``phi_new`` of shape (m, d).

    Every method takes ``phi_new``; a call without it (as a scalar
    predictive's ``mean()``) raises TypeError.
    """

    posterior: NIGRegressionPosterior

    @property
    def df(self) -> float:
        """Degrees of freedom, 2 a_n."""
        return 2.0 * self.posterior.alpha

    def at(self, phi_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mean, var), each of shape (m,)."""
        return predictive(posterior=self.posterior, phi_new=phi_new)

    def cov(self, phi_new: np.ndarray) -> np.ndarray:
        """Joint covariance of the m new observations, shape (m, m)."""
        return predictive_cov(posterior=self.posterior, phi_new=phi_new)

    def mean(self, phi_new: np.ndarray) -> np.ndarray:
        return self.at(phi_new)[0]

    def var(self, phi_new: np.ndarray) -> np.ndarray:
        return self.at(phi_new)[1]

    def scale(self, phi_new: np.ndarray) -> np.ndarray:
        """t scale ``sqrt(b_n/a_n (1 + phi^T V_n phi))``, shape (m,)."""
        _, a = _predictive_parts(self.posterior, phi_new)
        p = self.posterior
        return np.sqrt(p.beta / p.alpha * (1.0 + np.sum(a * a, axis=0)))

    def logpdf(self, y_new: np.ndarray, phi_new: np.ndarray) -> np.ndarray:
        """Marginal log density of each y_new[k] at row k of phi_new; shape (m,)."""
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        loc = _as_design("phi_new", phi_new, d=self.posterior.d) @ self.posterior.loc
        return stats.t.logpdf(
            np.asarray(y_new, dtype=float), self.df, loc=loc, scale=self.scale(phi_new)
        )


# ---------------------------------------------------------------- one call


@dataclass(frozen=True, eq=False)
class NIGRegressionFit:
    """Everything about one data set under one NIG prior.

    Attributes
    ----------
    posterior : NIGRegressionPosterior
    mle : linear_regression.MLE
        ``w`` and ``noise_var = RSS / n`` (the joint MLE of (w, sigma2)).
    map : array of shape (d + 1,)
        The joint posterior mode ``(m_n, b_n / (a_n + 1 + d/2))``.
    log_evidence : float
    predictive : NIGPredictive
    """

    posterior: NIGRegressionPosterior
    mle: MLE
    map: np.ndarray
    log_evidence: float
    predictive: NIGPredictive

    def answer(self) -> ExactAnswer:
        """The :class:`analytic.ExactAnswer`; its mle is ``(w, RSS/n)`` or None."""
        m = self.mle
        vec = None if m.w is None or m.noise_var is None else np.append(m.w, m.noise_var)
        return ExactAnswer(
            posterior=self.posterior,
            mle=vec,
            log_evidence=self.log_evidence,
            predictive=self.predictive,
        )


def _fit(
    suff: Stats,
    mle_fit: MLE,
    alpha0: float,
    beta0: float,
    prior: _Prior,
    data: tuple[np.ndarray, np.ndarray] | None,
) -> NIGRegressionFit:
    post, log_ev = _make_posterior(suff, alpha0, beta0, prior, data)
    return NIGRegressionFit(
        posterior=post,
        mle=mle_fit,
        map=post.mode,
        log_evidence=log_ev,
        predictive=NIGPredictive(posterior=post),
    )


def fit(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    alpha0: float,
    beta0: float,
    prior_scale: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> NIGRegressionFit:
    """Posterior, MLE, MAP, evidence and predictive for ``phi`` (n, d) and ``y`` (n,).

    Give exactly one of ``prior_scale`` (``V0 = prior_scale^2 I``) or
    ``prior_cov`` (V0, shape (d, d), the covariance of w per unit sigma2);
    ``prior_mean`` defaults to 0.  b_n uses the residual form.
    """
    phi, y = _check_data(phi, y)
    alpha0, beta0 = _check_shape_scale(alpha0, beta0)
    prior = _resolve_prior(
        d=phi.shape[1],
        prior_sd=prior_scale,
        prior_mean=prior_mean,
        prior_cov=prior_cov,
        sd_name="prior_scale",
    )
    return _fit(sufficient_stats(phi=phi, y=y), mle(phi=phi, y=y), alpha0, beta0, prior, (phi, y))


def fit_stats(
    *,
    suff: Stats,
    alpha0: float,
    beta0: float,
    prior_scale: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> NIGRegressionFit:
    """As :func:`fit`, from statistics only: normal-equation MLE and the
    Woodbury form of b_n (see the module docstring for the accuracy cost)."""
    suff = _check_stats(suff)
    alpha0, beta0 = _check_shape_scale(alpha0, beta0)
    prior = _resolve_prior(
        d=suff.d,
        prior_sd=prior_scale,
        prior_mean=prior_mean,
        prior_cov=prior_cov,
        sd_name="prior_scale",
    )
    return _fit(suff, _mle_from_stats(suff), alpha0, beta0, prior, None)


def solve(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    alpha0: float,
    beta0: float,
    prior_scale: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> ExactAnswer:
    """:func:`fit` as an :class:`analytic.ExactAnswer`."""
    return fit(
        phi=phi,
        y=y,
        alpha0=alpha0,
        beta0=beta0,
        prior_scale=prior_scale,
        prior_mean=prior_mean,
        prior_cov=prior_cov,
    ).answer()


def solve_stats(
    *,
    suff: Stats,
    alpha0: float,
    beta0: float,
    prior_scale: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> ExactAnswer:
    """:func:`fit_stats` as an :class:`analytic.ExactAnswer`."""
    return fit_stats(
        suff=suff,
        alpha0=alpha0,
        beta0=beta0,
        prior_scale=prior_scale,
        prior_mean=prior_mean,
        prior_cov=prior_cov,
    ).answer()


def simulate(
    rng: np.random.Generator, *, phi: np.ndarray, alpha0: float, beta0: float, prior_scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw sigma2 ~ InvGamma(alpha0, beta0), w ~ Normal(0, sigma2 prior_scale^2 I),
    then y ~ Normal(Phi w, sigma2 I).

    Returns
    -------
    theta : array of shape (d + 1,)
        ``(w, sigma2)``.
    y : array of shape (n,)
    """
    phi = _as_design("phi", phi)
    alpha0, beta0 = _check_shape_scale(alpha0, beta0)
    prior_scale = require_positive("prior_scale", prior_scale)
    g = rng.gamma(alpha0)  # underflows to 0 for alpha0 << 1
    sigma2 = require_drawable("sigma2", beta0 / g if g > 0 else np.inf, fix="raise alpha0")
    sd = math.sqrt(sigma2)
    w = sd * prior_scale * rng.standard_normal(phi.shape[1])
    return np.append(w, sigma2), phi @ w + sd * rng.standard_normal(phi.shape[0])


# ---------------------------------------------------------------- prior sensitivity
def power_scaled(
    *,
    suff: Stats,
    alpha0: float,
    beta0: float,
    prior_scale: float,
    prior_mean: np.ndarray | float = 0.0,
    alpha: float,
    component: str,
) -> NIGRegressionPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    N(w; m0, sigma2 s^2 I)^alpha InvGamma(sigma2; a0, b0)^alpha = N(w; m0, sigma2 s^2/alpha I)
    (sigma2)^(-d(alpha-1)/2) InvGamma(alpha(a0+1)-1, alpha b0): NIG with scale s/sqrt(alpha),
    shape alpha(a0+1) - 1 + d(alpha-1)/2, scale alpha b0.  The likelihood^alpha is data of
    weight alpha: every sufficient statistic (n, Phi^T Phi, Phi^T y, y^T y) times alpha.
    """
    alpha = check_power(alpha, component)
    suff = _check_stats(suff)
    d = suff.d
    if component == "prior":
        shape = alpha * (alpha0 + 1.0) - 1.0 + 0.5 * d * (alpha - 1.0)
        if not shape > 0:
            raise ValueError(
                f"the NIG prior^alpha with alpha={alpha:g} is improper "
                f"(InvGamma shape {shape:g}); use alpha closer to 1"
            )
        return update(
            suff=suff,
            alpha0=shape,
            beta0=alpha * beta0,
            prior_mean=prior_mean,
            prior_cov=(prior_scale**2 / alpha) * np.eye(d),
        )
    scaled = Stats(
        n=alpha * suff.n,
        gram=alpha * suff.gram,
        phi_t_y=alpha * suff.phi_t_y,
        y_t_y=alpha * suff.y_t_y,
    )
    return update(
        suff=scaled,
        alpha0=alpha0,
        beta0=beta0,
        prior_mean=prior_mean,
        prior_cov=prior_scale**2 * np.eye(d),
    )


def log_densities(
    *,
    suff: Stats,
    theta: np.ndarray,
    alpha0: float,
    beta0: float,
    prior_scale: float,
    prior_mean: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The log prior and log likelihood at ``theta`` = (w, sigma2), array of shape (..., d + 1).

    log N(w; m0, sigma2 prior_scale^2 I) + log InvGamma(sigma2; alpha0, beta0), and the
    log likelihood up to a constant from the statistics:
    -n/2 log sigma2 - (y^T y - 2 w^T Phi^T y + w^T Phi^T Phi w) / (2 sigma2).
    Returns two arrays of shape (...).
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = _check_stats(suff)
    theta = np.asarray(theta, dtype=float)
    w, s2 = theta[..., :-1], theta[..., -1]
    sd = prior_scale * np.sqrt(s2)[..., None]
    log_prior = stats.norm.logpdf(w, prior_mean, sd).sum(-1) + stats.invgamma.logpdf(
        s2, alpha0, scale=beta0
    )
    quad = suff.y_t_y - 2.0 * w @ suff.phi_t_y + np.einsum("...i,ij,...j->...", w, suff.gram, w)
    return log_prior, -0.5 * suff.n * np.log(s2) - 0.5 * quad / s2
