"""Normal-Inverse-Gamma prior on the mean and variance of a normal likelihood.

Model (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian
distribution", sec. 6; BDA3 sec. 3.3)::

    sigma2 ~ InvGamma(alpha0, beta0)          # shape alpha0, *scale* beta0
    mu | sigma2 ~ Normal(mu0, sigma2 / kappa0)
    x_i | mu, sigma2 ~ Normal(mu, sigma2)

Posterior NIG(mu_n, kappa_n, alpha_n, beta_n) with::

    kappa_n = kappa0 + n
    mu_n    = (kappa0 mu0 + n xbar) / kappa_n
    alpha_n = alpha0 + n / 2
    beta_n  = beta0 + m2 / 2 + kappa0 n (xbar - mu0)^2 / (2 kappa_n)

where ``m2 = sum (x_i - xbar)^2``.  Marginals: ``mu ~ t_{2 alpha_n}(mu_n,
beta_n / (alpha_n kappa_n))`` and ``sigma2 ~ InvGamma(alpha_n, beta_n)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analytic._base import (
    ConjugatePath,
    ExactAnswer,
    central_interval,
    check_power,
    require_drawable,
    require_finite,
    require_positive,
)
from analytic._frozen import freeze
from analytic.normal_known_variance import Stats, sufficient_stats

PARAMETERS = ("mu", "sigma2")


@dataclass(frozen=True)
class NIGPosterior:
    """Joint Normal-Inverse-Gamma over (mu, sigma2)."""

    mu: float
    kappa: float
    alpha: float
    beta: float
    parameters: tuple[str, ...] = PARAMETERS
    free: tuple[int, ...] = (0, 1)
    is_gaussian: bool = False
    mode_interior: bool = True

    @property
    def moments_below(self) -> float:
        """t with 2 alpha dof: moments below 2 alpha; InvGamma(alpha): below alpha."""
        return self.alpha

    def marginal(self, index: int) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        if index == 0:
            return freeze(
                stats.t,
                2 * self.alpha,
                loc=self.mu,
                scale=np.sqrt(self.beta / (self.alpha * self.kappa)),
            )
        return freeze(stats.invgamma, self.alpha, scale=self.beta)

    @property
    def mean(self) -> np.ndarray:
        """(mu_n, beta_n / (alpha_n - 1)); the second is inf when alpha_n <= 1."""
        a = self.alpha
        return np.array([self.mu, self.beta / (a - 1.0) if a > 1 else np.inf])

    @property
    def cov(self) -> np.ndarray:
        """Diagonal: E[mu | sigma2] is constant, so Cov(mu, sigma2) = 0.

        ``Var mu = beta / (kappa (alpha - 1))`` (alpha > 1) and
        ``Var sigma2 = beta^2 / ((alpha - 1)^2 (alpha - 2))`` (alpha > 2);
        inf where the moment does not exist.
        """
        a, b = self.alpha, self.beta
        var_mu = b / (self.kappa * (a - 1.0)) if a > 1 else np.inf
        var_s2 = b * b / ((a - 1.0) ** 2 * (a - 2.0)) if a > 2 else np.inf
        return np.diag([var_mu, var_s2])

    @property
    def mode(self) -> np.ndarray:
        """Joint mode (mu_n, beta_n / (alpha_n + 3/2)).

        At mu = mu_n the joint density is prop. to
        sigma2^-(alpha_n + 3/2) exp(-beta_n / sigma2).
        """
        return np.array([self.mu, self.beta / (self.alpha + 1.5)])

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        x = np.asarray(x, dtype=float)
        mu, s2 = x[..., 0], x[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = stats.invgamma.logpdf(s2, self.alpha, scale=self.beta) + stats.norm.logpdf(
                mu, self.mu, np.sqrt(s2 / self.kappa)
            )
        return np.where(s2 > 0, out, -np.inf)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        s2 = self.beta / rng.gamma(self.alpha, 1.0, size=size)
        mu = self.mu + np.sqrt(s2 / self.kappa) * rng.standard_normal(size)
        return np.column_stack([mu, s2])


def update(*, suff: Stats, mu0: float, kappa0: float, alpha0: float, beta0: float) -> NIGPosterior:
    """Conjugate update; the result is the prior for the next batch."""
    mu0 = require_finite("mu0", mu0)
    kappa0 = require_positive("kappa0", kappa0)
    alpha0 = require_positive("alpha0", alpha0)
    beta0 = require_positive("beta0", beta0)
    n = suff.n
    kappa = kappa0 + n
    d = suff.mean - mu0 if n else 0.0
    return NIGPosterior(
        mu=(kappa0 * mu0 + n * suff.mean) / kappa,
        kappa=kappa,
        alpha=alpha0 + 0.5 * n,
        beta=beta0 + 0.5 * suff.m2 + 0.5 * kappa0 * n * d * d / kappa,
    )


def solve(*, x: np.ndarray, mu0: float, kappa0: float, alpha0: float, beta0: float) -> ExactAnswer:
    """Posterior, MLE, log evidence and predictive for observations ``x`` of shape (n,).

    ``log p(D) = lgamma(alpha_n) - lgamma(alpha0) + alpha0 log beta0
    - alpha_n log beta_n + (log kappa0 - log kappa_n)/2 - (n/2) log(2 pi)``
    (Murphy 2007, eq. 95).  The predictive is
    ``t_{2 alpha_n}(mu_n, beta_n (kappa_n + 1) / (alpha_n kappa_n))``.
    The MLE is ``(xbar, m2 / n)``.
    """
    from scipy import special, stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = sufficient_stats(x=x)
    post = update(suff=suff, mu0=mu0, kappa0=kappa0, alpha0=alpha0, beta0=beta0)
    log_ev = (
        special.gammaln(post.alpha)
        - special.gammaln(alpha0)
        + alpha0 * np.log(beta0)
        - post.alpha * np.log(post.beta)
        + 0.5 * (np.log(kappa0) - np.log(post.kappa))
        - 0.5 * suff.n * np.log(2 * np.pi)
    )
    pred_scale = np.sqrt(post.beta * (post.kappa + 1.0) / (post.alpha * post.kappa))
    return ExactAnswer(
        posterior=post,
        mle=None if suff.n == 0 else np.array([suff.mean, suff.m2 / suff.n]),
        log_evidence=float(log_ev),
        predictive=freeze(stats.t, 2 * post.alpha, loc=post.mu, scale=pred_scale),
    )


def posterior(
    *, x: np.ndarray, mu0: float, kappa0: float, alpha0: float, beta0: float
) -> NIGPosterior:
    """Posterior NIG for observations ``x`` of shape (n,)."""
    return update(suff=sufficient_stats(x=x), mu0=mu0, kappa0=kappa0, alpha0=alpha0, beta0=beta0)


def simulate(
    rng: np.random.Generator, *, n: int, mu0: float, kappa0: float, alpha0: float, beta0: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw (mu, sigma2) from the prior, then n observations; returns (theta (2,), x (n,))."""
    g = rng.gamma(alpha0)  # underflows to 0 for alpha0 << 1
    sigma2 = require_drawable("sigma2", beta0 / g if g > 0 else np.inf, fix="raise alpha0")
    mu = rng.normal(mu0, np.sqrt(sigma2 / kappa0))
    return np.array([mu, sigma2]), rng.normal(mu, np.sqrt(sigma2), size=n)


# --- prior sensitivity (compare/studies/sensitivity.py) -------------------------------
def sensitivity_path(
    *,
    x: np.ndarray,
    mu0: npt.ArrayLike,
    kappa0: npt.ArrayLike,
    alpha0: npt.ArrayLike,
    beta0: npt.ArrayLike,
    interval: float = 0.95,
) -> ConjugatePath:
    """The exact posterior of (mu, sigma2) at G values of the NIG prior at once.

    Each hyperparameter is a number or an array of shape (G,) (broadcast);
    the same formulas as :func:`update` and :func:`solve`'s evidence.  A mean
    or variance that does not exist (alpha_n <= 1, <= 2) is inf.
    """
    from scipy import special, stats  # heavy: SciPy (0.5 s) only when the maths runs

    s = sufficient_stats(x=x)
    mu0, k0, a0, b0 = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(v, dtype=float)) for v in (mu0, kappa0, alpha0, beta0))
    )
    n = s.n
    kn = k0 + n
    d = s.mean - mu0 if n else np.zeros_like(mu0)
    mun = (k0 * mu0 + n * s.mean) / kn
    an = a0 + 0.5 * n
    bn = b0 + 0.5 * s.m2 + 0.5 * k0 * n * d * d / kn
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_s2 = np.where(an > 1, bn / (an - 1.0), np.inf)
        var_mu = np.where(an > 1, bn / (kn * (an - 1.0)), np.inf)
        var_s2 = np.where(an > 2, bn * bn / ((an - 1.0) ** 2 * (an - 2.0)), np.inf)
    lo_mu, hi_mu = central_interval(
        stats.t, interval, 2 * an, loc=mun, scale=np.sqrt(bn / (an * kn))
    )
    lo_s2, hi_s2 = central_interval(stats.invgamma, interval, an, scale=bn)
    log_ev = (
        special.gammaln(an)
        - special.gammaln(a0)
        + a0 * np.log(b0)
        - an * np.log(bn)
        + 0.5 * (np.log(k0) - np.log(kn))
        - 0.5 * n * np.log(2 * np.pi)
    )
    return ConjugatePath(
        mean=np.column_stack([mun, mean_s2]),
        sd=np.sqrt(np.column_stack([var_mu, var_s2])),
        lower=np.column_stack([lo_mu, lo_s2]),
        upper=np.column_stack([hi_mu, hi_s2]),
        mode=np.column_stack([mun, bn / (an + 1.5)]),
        log_evidence=log_ev,
    )


def power_scaled(
    *,
    x: np.ndarray,
    mu0: float,
    kappa0: float,
    alpha0: float,
    beta0: float,
    alpha: float,
    component: str,
) -> NIGPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    Prior: N(mu; mu0, sigma2/kappa0)^alpha InvGamma(sigma2; alpha0, beta0)^alpha
    = N(mu; mu0, sigma2/(alpha kappa0)) (sigma2)^(-(alpha-1)/2) x
    (sigma2)^(-alpha(alpha0+1)) exp(-alpha beta0/sigma2), i.e.
    NIG(mu0, alpha kappa0, alpha(alpha0+1) - 1 + (alpha-1)/2, alpha beta0).
    Likelihood: prod N(x_i; mu, sigma2)^alpha = data of weight alpha
    (n -> alpha n, centred sum of squares -> alpha m2, mean unchanged).
    """
    alpha = check_power(alpha, component)
    s = sufficient_stats(x=x)
    if component == "prior":
        shape = alpha * (alpha0 + 1.0) - 1.0 + 0.5 * (alpha - 1.0)
        if not shape > 0:
            raise ValueError(
                f"the NIG prior^alpha with alpha={alpha:g} is improper "
                f"(InvGamma shape {shape:g}); use alpha closer to 1"
            )
        return update(suff=s, mu0=mu0, kappa0=alpha * kappa0, alpha0=shape, beta0=alpha * beta0)
    n = alpha * s.n
    kappa = kappa0 + n
    dev = s.mean - mu0 if s.n else 0.0
    return NIGPosterior(
        mu=(kappa0 * mu0 + n * s.mean) / kappa,
        kappa=kappa,
        alpha=alpha0 + 0.5 * n,
        beta=beta0 + 0.5 * alpha * s.m2 + 0.5 * kappa0 * n * dev * dev / kappa,
    )
