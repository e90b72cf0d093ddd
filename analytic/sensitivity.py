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
  power-scaled posterior is exact (``power_scaled_<topic>``).  The
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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import linalg, special, stats

from analytic import beta_binomial as bb
from analytic import dirichlet_categorical as dc
from analytic import gamma_poisson as gp
from analytic import normal_inverse_gamma as nig
from analytic import normal_known_variance as nkv
from analytic import pareto_uniform as pu

#: psense's default alphas (lower, upper).
PSENSE_ALPHAS = (0.99, 1.01)
#: psense_summary's threshold for "sensitive" (prior >= it and likelihood >= it:
#: potential prior-data conflict).
PSENSE_THRESHOLD = 0.05
COMPONENTS = ("prior", "likelihood")


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


def gaussian_linear_path(*, gram: np.ndarray, phi_t_y: np.ndarray, y_t_y: float, n: int,
                         noise_var: np.ndarray | float, prior_var: np.ndarray | float,
                         prior_mean: np.ndarray | float = 0.0) -> GaussianPath:
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
    gram = np.asarray(gram, dtype=float)
    b = np.asarray(phi_t_y, dtype=float)
    d = b.shape[0]
    s2, t2 = np.broadcast_arrays(np.atleast_1d(np.asarray(noise_var, dtype=float)),
                                 np.atleast_1d(np.asarray(prior_var, dtype=float)))
    if not (np.all(np.isfinite(s2)) and np.all(s2 > 0) and np.all(np.isfinite(t2))
            and np.all(t2 > 0)):
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
    return GaussianPath(noise_var=s2, prior_var=t2, mean=mean, sd=np.sqrt(var),
                        log_evidence=log_ev)


def gaussian_linear_path_cholesky(*, gram: np.ndarray, phi_t_y: np.ndarray,
                                  noise_var: np.ndarray, prior_var: np.ndarray,
                                  prior_mean: np.ndarray | float = 0.0
                                  ) -> tuple[np.ndarray, np.ndarray]:
    """The same posterior means and sds, one Cholesky factorisation per grid point.

    The naive formulation (a reference for tests and the benchmark): for each
    point, factor ``A = gram/s2 + I/t2`` and solve; the variances are the
    squared column norms of ``L^-1``.  Returns (mean, sd), arrays of shape (G, d).
    """
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


# --- the conjugate topics along a grid, vectorised ----------------------------------
@dataclass(frozen=True, eq=False)
class ConjugatePath:
    """The exact posterior of a conjugate topic at G hyperparameter values.

    Attributes
    ----------
    mean, sd, lower, upper, mode : arrays of shape (G, d)
        Marginal means and sds (inf where they do not exist, as the posterior
        classes say), the central ``interval`` interval of each marginal, the
        joint mode (NaN where there is none).
    log_evidence : array of shape (G,)
    """

    mean: np.ndarray
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    mode: np.ndarray
    log_evidence: np.ndarray


def _interval(family: Any, interval: float, *args: Any, **kwds: Any) -> tuple[np.ndarray, np.ndarray]:
    lo = family.ppf(0.5 - interval / 2.0, *args, **kwds)
    hi = family.ppf(0.5 + interval / 2.0, *args, **kwds)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def _col(*arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast to a common shape (G,) and return column vectors (G, 1)."""
    return [np.asarray(a, dtype=float)[:, None] for a in np.broadcast_arrays(*arrays)]


def beta_binomial_path(*, x: np.ndarray, a: npt.ArrayLike, b: npt.ArrayLike, interval: float = 0.95) -> ConjugatePath:
    """Beta(a, b) prior, 0/1 data; a and b are numbers or arrays of shape (G,).
    The same formulas as ``analytic.beta_binomial`` (mode on the boundary when a or b <= 1)."""
    s = bb.sufficient_stats(x=x)
    a, b = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (a, b))
    a, b = np.broadcast_arrays(a, b)
    an, bn = a + s.successes, b + s.n - s.successes
    tot = an + bn
    with np.errstate(divide="ignore", invalid="ignore"):
        mode = np.where((an > 1) & (bn > 1), (an - 1.0) / (tot - 2.0),
                        np.where((an <= 1) & (bn > 1), 0.0,
                                 np.where((bn <= 1) & (an > 1), 1.0, np.nan)))
    lo, hi = _interval(stats.beta, interval, an, bn)
    log_ev = special.betaln(an, bn) - special.betaln(a, b)
    mean, sd, lo, hi, mode = _col(an / tot, np.sqrt(an * bn / (tot * tot * (tot + 1.0))), lo, hi,
                                  mode)
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def gamma_poisson_path(*, x: np.ndarray, shape: npt.ArrayLike, rate: npt.ArrayLike,
                       interval: float = 0.95) -> ConjugatePath:
    """Gamma(shape, rate) prior, Poisson counts (as ``analytic.gamma_poisson``)."""
    s = gp.sufficient_stats(x=x)
    shape, rate = np.broadcast_arrays(np.atleast_1d(np.asarray(shape, dtype=float)),
                                      np.atleast_1d(np.asarray(rate, dtype=float)))
    sn, rn = shape + s.total, rate + s.n
    lo, hi = _interval(stats.gamma, interval, sn, scale=1.0 / rn)
    log_ev = (shape * np.log(rate) - special.gammaln(shape) + special.gammaln(sn)
              - sn * np.log(rn) - s.log_factorial_sum)
    mean, sd, lo, hi, mode = _col(sn / rn, np.sqrt(sn) / rn, lo, hi,
                                  np.maximum(sn - 1.0, 0.0) / rn)
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def normal_known_variance_path(*, x: np.ndarray, prior_mean: npt.ArrayLike,
                               prior_sd: npt.ArrayLike, noise_sd: npt.ArrayLike,
                               interval: float = 0.95) -> ConjugatePath:
    """Normal prior on the mean, known noise sd (as ``analytic.normal_known_variance``)."""
    s = nkv.sufficient_stats(x=x)
    m0, t, sig = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float))
                                       for v in (prior_mean, prior_sd, noise_sd)))
    t2, s2, n = t * t, sig * sig, s.n
    prec = 1.0 / t2 + n / s2
    loc = (m0 / t2 + n * s.mean / s2) / prec
    sd = np.sqrt(1.0 / prec)
    d = s.mean - m0 if n else np.zeros_like(m0)
    log_ev = (-0.5 * n * np.log(2 * np.pi * s2) - 0.5 * np.log1p(n * t2 / s2)
              - (s.m2 + n * d * d * s2 / (s2 + n * t2)) / (2 * s2))
    lo, hi = _interval(stats.norm, interval, loc, sd)
    mean, sd, lo, hi, mode = _col(loc, sd, lo, hi, loc)
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def normal_inverse_gamma_path(*, x: np.ndarray, mu0: npt.ArrayLike, kappa0: npt.ArrayLike,
                              alpha0: npt.ArrayLike, beta0: npt.ArrayLike,
                              interval: float = 0.95) -> ConjugatePath:
    """NIG prior over (mu, sigma2) (as ``analytic.normal_inverse_gamma``)."""
    s = nkv.sufficient_stats(x=x)
    mu0, k0, a0, b0 = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float))
                                            for v in (mu0, kappa0, alpha0, beta0)))
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
    lo_mu, hi_mu = _interval(stats.t, interval, 2 * an, loc=mun, scale=np.sqrt(bn / (an * kn)))
    lo_s2, hi_s2 = _interval(stats.invgamma, interval, an, scale=bn)
    log_ev = (special.gammaln(an) - special.gammaln(a0) + a0 * np.log(b0) - an * np.log(bn)
              + 0.5 * (np.log(k0) - np.log(kn)) - 0.5 * n * np.log(2 * np.pi))
    return ConjugatePath(mean=np.column_stack([mun, mean_s2]),
                         sd=np.sqrt(np.column_stack([var_mu, var_s2])),
                         lower=np.column_stack([lo_mu, lo_s2]),
                         upper=np.column_stack([hi_mu, hi_s2]),
                         mode=np.column_stack([mun, bn / (an + 1.5)]), log_evidence=log_ev)


def pareto_uniform_path(*, x: np.ndarray, scale: npt.ArrayLike, shape: npt.ArrayLike,
                        interval: float = 0.95) -> ConjugatePath:
    """Pareto(scale, shape) prior on theta, Uniform(0, theta) data (as ``analytic.pareto_uniform``)."""
    s = pu.sufficient_stats(x=x)
    scale, shape = np.broadcast_arrays(np.atleast_1d(np.asarray(scale, dtype=float)),
                                       np.atleast_1d(np.asarray(shape, dtype=float)))
    m, k = np.maximum(scale, s.maximum), shape + s.n
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(k > 1, k * m / (k - 1.0), np.inf)
        var = np.where(k > 2, m * m * k / ((k - 1.0) ** 2 * (k - 2.0)), np.inf)
    lo, hi = _interval(stats.pareto, interval, k, scale=m)
    log_ev = np.log(shape) + shape * np.log(scale) - np.log(k) - k * np.log(m)
    mean, sd, lo, hi, mode = _col(mean, np.sqrt(var), lo, hi, m)
    return ConjugatePath(mean=mean, sd=sd, lower=lo, upper=hi, mode=mode, log_evidence=log_ev)


def dirichlet_categorical_path(*, x: np.ndarray, categories: Sequence[str],
                               concentration: npt.ArrayLike,
                               interval: float = 0.95) -> ConjugatePath:
    """Dirichlet prior over K category probabilities (as ``analytic.dirichlet_categorical``).

    ``concentration``: one number or K numbers (one grid point), or an array of
    shape (G, 1) (one number per grid point, shared by the categories) or (G, K).
    """
    k = len(categories)
    s = dc.sufficient_stats(x=x, n_categories=k)
    conc = np.asarray(concentration, dtype=float)
    if conc.ndim < 2:  # one number, or one per category: a single grid point
        conc = conc.reshape(1, -1)
    conc = np.broadcast_to(conc, (conc.shape[0], k))
    post = conc + s.counts[None, :]
    total = post.sum(axis=1, keepdims=True)
    mean = post / total
    var = mean * (1.0 - mean) / (total + 1.0)
    lo, hi = _interval(stats.beta, interval, post, total - post)
    excess = np.clip(post - 1.0, 0.0, None)
    ex_total = excess.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mode = np.where(ex_total > 0, excess / ex_total, np.nan)
    log_ev = (special.gammaln(conc.sum(axis=1)) - special.gammaln(post.sum(axis=1))
              + np.sum(special.gammaln(post) - special.gammaln(conc), axis=1))
    return ConjugatePath(mean=mean, sd=np.sqrt(var), lower=lo, upper=hi, mode=mode,
                         log_evidence=log_ev)


# --- power-scaled conjugate posteriors ------------------------------------------
def _check_power(alpha: float, component: str) -> float:
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"the power alpha must be a finite number > 0, got {alpha!r}")
    if component not in COMPONENTS:
        raise ValueError(f"component must be 'prior' or 'likelihood', got {component!r}")
    return alpha


def _scaled_shape(name: str, shape: float, alpha: float) -> float:
    """A density with factor x^(shape - 1), raised to alpha, has factor x^(alpha (shape - 1))."""
    out = alpha * (shape - 1.0) + 1.0
    if not out > 0:
        raise ValueError(f"{name}^alpha with alpha={alpha:g} is not a proper density "
                         f"({name} shape would be {out:g}); use alpha closer to 1")
    return out


def power_scaled_beta_binomial(*, x: np.ndarray, a: float, b: float, alpha: float,
                               component: str) -> bb.BetaPosterior:
    """p ~ Beta(a, b): Beta(a,b)^alpha = Beta(alpha(a-1)+1, alpha(b-1)+1); likelihood^alpha
    weighs every outcome by alpha: Beta(a + alpha k, b + alpha (n - k))."""
    alpha = _check_power(alpha, component)
    s = bb.sufficient_stats(x=x)
    if component == "prior":
        a, b = _scaled_shape("Beta prior", a, alpha), _scaled_shape("Beta prior", b, alpha)
        return bb.BetaPosterior(a + s.successes, b + s.n - s.successes)
    return bb.BetaPosterior(a + alpha * s.successes, b + alpha * (s.n - s.successes))


def power_scaled_gamma_poisson(*, x: np.ndarray, shape: float, rate: float, alpha: float,
                               component: str) -> gp.GammaPosterior:
    """Gamma(shape, rate)^alpha = Gamma(alpha(shape-1)+1, alpha rate); likelihood^alpha:
    Gamma(shape + alpha sum x, rate + alpha n)."""
    alpha = _check_power(alpha, component)
    s = gp.sufficient_stats(x=x)
    if component == "prior":
        return gp.GammaPosterior(_scaled_shape("Gamma prior", shape, alpha) + s.total,
                                 alpha * rate + s.n)
    return gp.GammaPosterior(shape + alpha * s.total, rate + alpha * s.n)


def power_scaled_normal_known_variance(*, x: np.ndarray, prior_mean: float, prior_sd: float,
                                       noise_sd: float, alpha: float,
                                       component: str) -> nkv.NormalPosterior:
    """N(m, s^2)^alpha = N(m, s^2/alpha): the prior's (or the noise's) sd divided by sqrt(alpha)."""
    alpha = _check_power(alpha, component)
    s = nkv.sufficient_stats(x=x)
    root = np.sqrt(alpha)
    if component == "prior":
        return nkv.update(suff=s, prior_mean=prior_mean, prior_sd=prior_sd / root,
                          noise_sd=noise_sd)
    return nkv.update(suff=s, prior_mean=prior_mean, prior_sd=prior_sd, noise_sd=noise_sd / root)


def power_scaled_normal_inverse_gamma(*, x: np.ndarray, mu0: float, kappa0: float,
                                      alpha0: float, beta0: float, alpha: float,
                                      component: str) -> nig.NIGPosterior:
    """NIG prior^alpha and likelihood^alpha.

    Prior: N(mu; mu0, sigma2/kappa0)^alpha InvGamma(sigma2; alpha0, beta0)^alpha
    = N(mu; mu0, sigma2/(alpha kappa0)) (sigma2)^(-(alpha-1)/2) x
    (sigma2)^(-alpha(alpha0+1)) exp(-alpha beta0/sigma2), i.e.
    NIG(mu0, alpha kappa0, alpha(alpha0+1) - 1 + (alpha-1)/2, alpha beta0).
    Likelihood: prod N(x_i; mu, sigma2)^alpha = data of weight alpha
    (n -> alpha n, centred sum of squares -> alpha m2, mean unchanged).
    """
    alpha = _check_power(alpha, component)
    s = nkv.sufficient_stats(x=x)
    if component == "prior":
        shape = alpha * (alpha0 + 1.0) - 1.0 + 0.5 * (alpha - 1.0)
        if not shape > 0:
            raise ValueError(f"the NIG prior^alpha with alpha={alpha:g} is improper "
                             f"(InvGamma shape {shape:g}); use alpha closer to 1")
        return nig.update(suff=s, mu0=mu0, kappa0=alpha * kappa0, alpha0=shape,
                          beta0=alpha * beta0)
    n = alpha * s.n
    kappa = kappa0 + n
    dev = s.mean - mu0 if s.n else 0.0
    return nig.NIGPosterior(mu=(kappa0 * mu0 + n * s.mean) / kappa, kappa=kappa,
                            alpha=alpha0 + 0.5 * n,
                            beta=beta0 + 0.5 * alpha * s.m2 + 0.5 * kappa0 * n * dev * dev / kappa)


def power_scaled_pareto_uniform(*, x: np.ndarray, scale: float, shape: float, alpha: float,
                                component: str) -> pu.ParetoPosterior:
    """Pareto(scale, k)^alpha on theta >= scale = Pareto(scale, alpha(k+1) - 1);
    Uniform(0, theta)^(alpha n) likelihood: Pareto(max(scale, max x), k + alpha n)."""
    alpha = _check_power(alpha, component)
    s = pu.sufficient_stats(x=x)
    lower = max(scale, s.maximum)
    if component == "prior":
        scaled = alpha * (shape + 1.0) - 1.0  # theta^-(k+1) raised to alpha
        if not scaled > 0:
            raise ValueError(f"the Pareto prior^alpha with alpha={alpha:g} is improper "
                             f"(shape {scaled:g}); use alpha closer to 1")
        return pu.ParetoPosterior(scale=lower, shape=scaled + s.n)
    return pu.ParetoPosterior(scale=lower, shape=shape + alpha * s.n)


def power_scaled_dirichlet_categorical(*, x: np.ndarray, categories: Sequence[str],
                                       concentration: float | Sequence[float],
                                       alpha: float, component: str) -> dc.DirichletPosterior:
    """Dir(c)^alpha = Dir(alpha(c-1)+1); likelihood^alpha: counts times alpha."""
    alpha = _check_power(alpha, component)
    categories = tuple(str(c) for c in categories)
    s = dc.sufficient_stats(x=x, n_categories=len(categories))
    conc = dc.concentration_vector(concentration, len(categories))
    if component == "prior":
        scaled = alpha * (conc - 1.0) + 1.0
        if not np.all(scaled > 0):
            raise ValueError(f"the Dirichlet prior^alpha with alpha={alpha:g} is improper; "
                             "use alpha closer to 1")
        return dc.DirichletPosterior(alpha=scaled + s.counts, categories=categories)
    return dc.DirichletPosterior(alpha=conc + alpha * s.counts, categories=categories)


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
        pq = np.where(p > 0, p * _u_minus_log1p(diff / (2.0 * np.where(p > 0, p, 1.0))),
                      0.5 * diff)
        qp = np.where(q > 0, q * _u_minus_log1p(-diff / (2.0 * np.where(q > 0, q, 1.0))),
                      -0.5 * diff)
    return pq / np.log(2.0), qp / np.log(2.0)


def _nodes(base: Any, lower: float, upper: float, per_piece: int = 24
           ) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [lower, upper], pieces split at base quantiles."""
    probs = np.concatenate([[1e-6, 1e-4, 1e-3], np.linspace(0.005, 0.995, 100),
                            [1 - 1e-3, 1 - 1e-4, 1 - 1e-6]])
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


def power_scaling_sensitivity(*, base: Any, lower_scaled: Any, upper_scaled: Any, lower: float,
                              upper: float,
                              alphas: tuple[float, float] = PSENSE_ALPHAS) -> float:
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
    return (float(base.ppf(1.0 / (n_draws + 1.0))),
            float(base.ppf(n_draws / (n_draws + 1.0))))


def diagnosis(prior: float, likelihood: float, threshold: float = PSENSE_THRESHOLD) -> str:
    """psense_summary's rule: both sensitive = conflict; prior only = strong prior."""
    if prior >= threshold and likelihood >= threshold:
        return "potential prior-data conflict"
    if prior > threshold > likelihood:
        return "potential strong prior / weak likelihood"
    return "ok"

