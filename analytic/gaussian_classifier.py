"""Gaussian class-conditional classifiers: MLE (LDA / QDA) and the conjugate Bayesian version.

Model (Bishop 2006, sec. 4.2.1-4.2.2; Murphy 2012, secs. 4.2 and 4.6.3)::

    y_i ~ Categorical(pi)                   pi: class priors, shape (K,)
    x_i | y_i = k ~ Normal(mu_k, Sigma_k)   x_i in R^d, Sigma_k = Lambda_k^-1

Maximum likelihood
------------------
From the class counts ``N_k``, class means ``xbar_k`` and scatters
``S_k = sum_{y_i = k} (x_i - xbar_k)(x_i - xbar_k)^T`` (:class:`ClassStats`,
mergeable across chunks): ``pi_k = N_k / N``, ``mu_k = xbar_k``, per-class
covariance ``Sigma_k = S_k / N_k`` (QDA) and shared (pooled) covariance
``Sigma = sum_k S_k / N`` (LDA).  Both divisors are the MLE's, *not* the
unbiased ``N_k - 1`` / ``N - K``.

Posterior class probabilities (Bishop 2006, eqs. 4.57-4.68), in log space:
``P(C_k | x) = exp(a_k) / sum_j exp(a_j)`` (logsumexp) with

* shared covariance (linear boundary): ``a_k = w_k^T x + w_k0``,
  ``w_k = Sigma^-1 mu_k``, ``w_k0 = -1/2 mu_k^T Sigma^-1 mu_k + log pi_k``.
  For two classes ``P(C_1 | x) = sigmoid(w^T x + b)``,
  ``w = Sigma^-1 (mu_1 - mu_2)``,
  ``b = -1/2 mu_1^T Sigma^-1 mu_1 + 1/2 mu_2^T Sigma^-1 mu_2 + log(pi_1 / pi_2)``
  (:meth:`LinearBoundary.two_class`);
* per-class covariances (quadratic boundary):
  ``a_k = x^T W_k x + w_k^T x + w_k0``, ``W_k = -1/2 Lambda_k``,
  ``w_k = Lambda_k mu_k``,
  ``w_k0 = -1/2 mu_k^T Lambda_k mu_k - 1/2 log|Sigma_k| + log pi_k``.

Bayesian version
----------------
Prior: ``pi ~ Dirichlet(alpha 1_K)`` and, independently per class, the
Normal-Wishart (equivalently Normal-Inverse-Wishart on ``Sigma_k``)
``Lambda_k ~ Wishart(nu0, psi0^-1)``, ``mu_k | Lambda_k ~ N(m0, (kappa0 Lambda_k)^-1)``.
With the labels known this is exactly the complete-data model of a Gaussian
mixture, so the posterior and its evidence are those of
:mod:`analytic.gaussian_mixture` (``pi ~ Dirichlet(alpha + N)``;
``kappa_k = kappa0 + N_k``, ``m_k = (kappa0 m0 + N_k xbar_k) / kappa_k``,
``nu_k = nu0 + N_k``, ``psi_k = psi0 + S_k + kappa0 N_k / kappa_k
(xbar_k - m0)(xbar_k - m0)^T``), reused here from sufficient statistics.  A
class with fewer points than dimensions has a singular ``S_k`` (no MLE, no
QDA) but a proper posterior, since ``psi0`` is positive definite.

Posterior predictive class probabilities: pi and the class parameters are
independent a posteriori, so
``P(y = k | x, D) ∝ E[pi_k] St(x | m_k, nu_k - d + 1,
psi_k (kappa_k + 1) / (kappa_k (nu_k - d + 1)))`` (Murphy 2012, eq. 4.215;
Bishop 2006, eq. 10.81): a multivariate Student-t per class, heavier-tailed
than the plug-in Gaussian (:class:`ClassPredictive`).

Numerics: no inverse is formed.  Covariances are factored by Cholesky;
``Sigma^-1 mu`` comes from ``cho_solve``; quadratic forms use the precision
factor ``P_k = L_k^-T`` (``Lambda_k = P_k P_k^T``) through triangular solves;
log-determinants come from factor diagonals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

import analytic.gaussian_mixture as gm
from analytic._base import ExactAnswer
from analytic._multivariate import student_t_logpdf
from analytic._normal_wishart import (
    Groups,
    as_points,
    check_int,
    check_labels,
    check_prior,
    cholesky_spd,
    complete_data_mle,
    frozen,
    log_evidence,
    update,
)

_LOG_2PI = math.log(2.0 * math.pi)
_BLOCK_ROWS = 65_536  # rows per block in the prediction loops (bounded memory)


# ---------------------------------------------------------------- validation


def _points(name: str, x: Any, d: int | None = None) -> np.ndarray:
    return as_points(name, x, d=d)


def _labels(labels: Any, n: int, n_classes: int) -> np.ndarray:
    return check_labels(labels, n, n_classes)


def _class_count(n_classes: Any) -> int:
    return check_int("n_classes", n_classes, low=1)


def _factor(name: str, cov: np.ndarray, remedy: str) -> np.ndarray:
    return cholesky_spd(name, np.asarray(cov, dtype=float), remedy=remedy)


# ---------------------------------------------------------------- sufficient statistics


@dataclass(frozen=True, eq=False)
class ClassStats:
    """Per-class sufficient statistics of labelled points.

    Attributes
    ----------
    counts : array of shape (K,)
        ``N_k``.
    means : array of shape (K, d)
        ``xbar_k`` (zero for a class without points).
    scatter : array of shape (K, d, d)
        ``S_k``, about ``xbar_k``.
    """

    counts: np.ndarray
    means: np.ndarray
    scatter: np.ndarray

    def __post_init__(self) -> None:
        for name in ("counts", "means", "scatter"):
            object.__setattr__(self, name, frozen(getattr(self, name)))

    @property
    def n_classes(self) -> int:
        return int(self.counts.shape[0])

    @property
    def d(self) -> int:
        return int(self.means.shape[1])

    @property
    def n(self) -> float:
        return float(self.counts.sum())

    def merge(self, other: ClassStats) -> ClassStats:
        """Statistics of the union of two disjoint chunks (Chan, Golub & LeVeque 1979).

        ``S = S_a + S_b + N_a N_b / N (xbar_a - xbar_b)(xbar_a - xbar_b)^T``.
        """
        if other.counts.shape != self.counts.shape or other.d != self.d:
            raise ValueError(
                f"other must have {self.n_classes} classes in {self.d} dimensions, "
                f"got {other.n_classes} in {other.d}; merge statistics of the "
                "same classes and columns"
            )
        n = self.counts + other.counts
        safe = np.where(n > 0, n, 1.0)
        delta = other.means - self.means
        means = self.means + (other.counts / safe)[:, None] * delta
        shift = (self.counts * other.counts / safe)[:, None, None] * (
            delta[:, :, None] * delta[:, None, :]
        )
        return ClassStats(counts=n, means=means, scatter=self.scatter + other.scatter + shift)


def class_stats(*, x: np.ndarray, labels: np.ndarray, n_classes: int) -> ClassStats:
    """:class:`ClassStats` of points ``x`` (n, d) with integer labels (n,) in 0..K-1."""
    k_count = _class_count(n_classes)
    x = _points("x", x)
    codes = _labels(labels, x.shape[0], k_count)
    d = x.shape[1]
    counts = np.bincount(codes, minlength=k_count).astype(float)
    means = np.zeros((k_count, d))
    scatter = np.zeros((k_count, d, d))
    # One pass per class over its rows; centring first keeps the scatter accurate.
    order = np.argsort(codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts).astype(np.int64)])
    xs = x[order]
    for k in range(k_count):
        xk = xs[bounds[k] : bounds[k + 1]]
        if xk.shape[0]:
            means[k] = xk.mean(axis=0)
            c = xk - means[k]
            s = c.T @ c
            scatter[k] = 0.5 * (s + s.T)
    return ClassStats(counts=counts, means=means, scatter=scatter)


# ---------------------------------------------------------------- maximum likelihood


@dataclass(frozen=True, eq=False)
class GaussianFit:
    """Maximum-likelihood estimates of a Gaussian class-conditional model.

    Attributes
    ----------
    priors : array of shape (K,)
        ``N_k / N``.
    means : array of shape (K, d)
    covariances : array of shape (K, d, d)
        ``S_k / N_k`` (QDA's MLE; scikit-learn's QDA stores ``S_k / (N_k - 1)``).
    pooled_covariance : array of shape (d, d)
        ``sum_k S_k / N`` (LDA's MLE, scikit-learn's ``LinearDiscriminantAnalysis.covariance_``).
    counts : array of shape (K,)
    """

    priors: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    pooled_covariance: np.ndarray
    counts: np.ndarray

    def __post_init__(self) -> None:
        for name in ("priors", "means", "covariances", "pooled_covariance", "counts"):
            object.__setattr__(self, name, frozen(getattr(self, name)))

    def singular_classes(self) -> tuple[int, ...]:
        """Classes whose MLE covariance is singular (fewer than d + 1 points, or collinear)."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        out = []
        for k in range(self.priors.size):
            try:
                linalg.cholesky(self.covariances[k], lower=True)
            except linalg.LinAlgError:
                out.append(k)
                continue
            if self.counts[k] < self.means.shape[1] + 1:
                out.append(k)
        return tuple(out)


def mle(*, stats: ClassStats) -> GaussianFit:
    """MLE of priors, means, per-class and pooled covariances from :class:`ClassStats`.

    Raises ValueError when a class has no points (its mean is undefined).
    """
    if not isinstance(stats, ClassStats):
        raise TypeError(
            f"stats must be a ClassStats, got {type(stats).__name__}; build it "
            "with class_stats(x=..., labels=..., n_classes=...)"
        )
    empty = np.flatnonzero(stats.counts == 0)
    if empty.size:
        raise ValueError(
            f"class {int(empty[0])} has no points, so its MLE does not exist; "
            "drop the class or use the Bayesian posterior (answer_from_stats)"
        )
    n = stats.n
    return GaussianFit(
        priors=stats.counts / n,
        means=stats.means,
        covariances=stats.scatter / stats.counts[:, None, None],
        pooled_covariance=stats.scatter.sum(axis=0) / n,
        counts=stats.counts,
    )


def fit(*, x: np.ndarray, labels: np.ndarray, n_classes: int) -> GaussianFit:
    """:func:`mle` of labelled points ``x`` (n, d), labels (n,) in 0..K-1."""
    return mle(stats=class_stats(x=x, labels=labels, n_classes=n_classes))


# ---------------------------------------------------------------- boundaries


@dataclass(frozen=True, eq=False)
class LinearBoundary:
    """``a_k(x) = w_k^T x + w_k0``: the shared-covariance (LDA) discriminants.

    Attributes
    ----------
    weights : array of shape (K, d)
        ``w_k = Sigma^-1 mu_k``.
    bias : array of shape (K,)
        ``w_k0 = -1/2 mu_k^T Sigma^-1 mu_k + log pi_k``.
    """

    weights: np.ndarray
    bias: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", frozen(self.weights))
        object.__setattr__(self, "bias", frozen(self.bias))

    def two_class(self, *, first: int = 0, second: int = 1) -> tuple[np.ndarray, float]:
        """``(w, b)`` with ``P(C_first | x) = sigmoid(w^T x + b)`` among two classes.

        ``w = Sigma^-1 (mu_1 - mu_2)``, ``b = -1/2 mu_1^T Sigma^-1 mu_1 +
        1/2 mu_2^T Sigma^-1 mu_2 + log(pi_1 / pi_2)`` (Bishop 2006, eqs. 4.66-4.67).
        """
        return (
            self.weights[first] - self.weights[second],
            float(self.bias[first] - self.bias[second]),
        )

    def activations(self, x: np.ndarray) -> np.ndarray:
        """``a_k(x)`` for points ``x`` (n, d), shape (n, K)."""
        x = _points("x", x, d=self.weights.shape[1])
        return x @ self.weights.T + self.bias

    def log_proba(self, x: np.ndarray) -> np.ndarray:
        """``log P(C_k | x)``, shape (n, K), normalised by logsumexp."""
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        x = _points("x", x, d=self.weights.shape[1])
        out = np.empty((x.shape[0], self.bias.size))
        for s in range(0, x.shape[0], _BLOCK_ROWS):
            a = x[s : s + _BLOCK_ROWS] @ self.weights.T
            a += self.bias
            out[s : s + _BLOCK_ROWS] = a - special.logsumexp(a, axis=1, keepdims=True)
        return out


def _check_priors(priors: Any, k_count: int | None = None) -> np.ndarray:
    p = np.asarray(priors, dtype=float)
    if p.ndim != 1 or (k_count is not None and p.size != k_count):
        raise ValueError(
            f"priors must be an array of shape ({k_count or 'K'},), got shape "
            f"{p.shape}; pass one class probability per class"
        )
    if not (np.all(np.isfinite(p)) and np.all(p > 0)) or abs(p.sum() - 1.0) > 1e-8:
        raise ValueError(
            f"priors must be > 0 and sum to 1, got {p.tolist()}; pass class frequencies"
        )
    return p


def _check_means(means: Any) -> np.ndarray:
    mu = np.asarray(means, dtype=float)
    if mu.ndim != 2 or not np.all(np.isfinite(mu)):
        raise ValueError(f"means must be a finite array of shape (K, d), got shape {mu.shape}")
    return mu


def linear_discriminant(
    *, priors: np.ndarray, means: np.ndarray, covariance: np.ndarray
) -> LinearBoundary:
    """The linear discriminants of a shared covariance (Bishop 2006, eqs. 4.68-4.70).

    Parameters
    ----------
    priors : array of shape (K,)
    means : array of shape (K, d)
    covariance : array of shape (d, d)
        Symmetric positive definite (e.g. :attr:`GaussianFit.pooled_covariance`).
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    mu = _check_means(means)
    p = _check_priors(priors, mu.shape[0])
    d = mu.shape[1]
    cov = np.asarray(covariance, dtype=float)
    if cov.shape != (d, d):
        raise ValueError(f"covariance must have shape ({d}, {d}), got {cov.shape}")
    chol = _factor(
        "covariance",
        cov,
        remedy="the pooled covariance is singular: drop "
        "collinear or constant columns, or use the Bayesian posterior",
    )
    w = linalg.cho_solve((chol, True), mu.T).T  # (K, d): Sigma^-1 mu_k
    bias = -0.5 * np.einsum("kd,kd->k", mu, w) + np.log(p)
    return LinearBoundary(weights=w, bias=bias)


@dataclass(frozen=True, eq=False)
class QuadraticBoundary:
    """``a_k(x) = x^T W_k x + w_k^T x + w_k0``: per-class covariance (QDA) discriminants.

    Attributes
    ----------
    quadratic : array of shape (K, d, d)
        ``W_k = -1/2 Lambda_k``.
    weights : array of shape (K, d)
        ``w_k = Lambda_k mu_k``.
    bias : array of shape (K,)
        ``w_k0 = -1/2 mu_k^T Lambda_k mu_k - 1/2 log|Sigma_k| + log pi_k``.
    means : array of shape (K, d)
    precision_cholesky : array of shape (K, d, d)
        ``P_k`` with ``Lambda_k = P_k P_k^T`` (upper triangular), used to evaluate
        ``a_k(x) = log pi_k - 1/2 log|Sigma_k| - 1/2 ||(x - mu_k)^T P_k||^2``
        stably (the expanded form cancels badly far from the data).
    """

    quadratic: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    means: np.ndarray
    precision_cholesky: np.ndarray

    def __post_init__(self) -> None:
        for name in ("quadratic", "weights", "bias", "means", "precision_cholesky"):
            object.__setattr__(self, name, frozen(getattr(self, name)))

    def activations(self, x: np.ndarray) -> np.ndarray:
        """``a_k(x)`` (shared ``-d/2 log 2 pi`` dropped), shape (n, K)."""
        x = _points("x", x, d=self.means.shape[1])
        k_count, d = self.means.shape
        # All classes in one product: x [P_1 ... P_K] - [mu_1 P_1 ... mu_K P_K].
        pcat = self.precision_cholesky.transpose(1, 0, 2).reshape(d, k_count * d)
        offset = np.einsum("kd,kde->ke", self.means, self.precision_cholesky).reshape(-1)
        const = self.bias + 0.5 * np.einsum("kd,kd->k", self.means, self.weights)
        out = np.empty((x.shape[0], k_count))
        for s in range(0, x.shape[0], _BLOCK_ROWS):
            y = x[s : s + _BLOCK_ROWS] @ pcat
            y -= offset
            y *= y
            out[s : s + _BLOCK_ROWS] = const - 0.5 * y.reshape(-1, k_count, d).sum(axis=2)
        return out

    def log_proba(self, x: np.ndarray) -> np.ndarray:
        """``log P(C_k | x)``, shape (n, K), normalised by logsumexp."""
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        a = self.activations(x)
        return a - special.logsumexp(a, axis=1, keepdims=True)


def quadratic_discriminant(
    *, priors: np.ndarray, means: np.ndarray, covariances: np.ndarray
) -> QuadraticBoundary:
    """The quadratic discriminants of per-class covariances (Bishop 2006, sec. 4.2.1).

    Parameters
    ----------
    priors : array of shape (K,)
    means : array of shape (K, d)
    covariances : array of shape (K, d, d)
        Each symmetric positive definite; a ValueError names the class otherwise.
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    mu = _check_means(means)
    k_count, d = mu.shape
    p = _check_priors(priors, k_count)
    cov = np.asarray(covariances, dtype=float)
    if cov.shape != (k_count, d, d):
        raise ValueError(f"covariances must have shape ({k_count}, {d}, {d}), got {cov.shape}")
    prec_chol = np.empty((k_count, d, d))
    quad = np.empty((k_count, d, d))
    w = np.empty((k_count, d))
    bias = np.empty(k_count)
    eye = np.eye(d)
    for k in range(k_count):
        chol = _factor(
            f"covariances[{k}]",
            cov[k],
            remedy=f"class {k} has a singular covariance (fewer than d + 1 = {d + 1} "
            "points, or collinear ones): use the shared covariance (LDA) or the "
            "Bayesian posterior",
        )
        # P_k = L_k^-T: upper triangular, Lambda_k = P_k P_k^T.
        prec_chol[k] = linalg.solve_triangular(chol, eye, lower=True).T
        lam = linalg.cho_solve((chol, True), eye)
        lam = 0.5 * (lam + lam.T)
        quad[k] = -0.5 * lam
        w[k] = lam @ mu[k]
        log_det_cov = 2.0 * float(np.sum(np.log(np.diag(chol))))
        bias[k] = -0.5 * float(mu[k] @ w[k]) - 0.5 * log_det_cov + math.log(p[k])
    return QuadraticBoundary(
        quadratic=quad, weights=w, bias=bias, means=mu, precision_cholesky=prec_chol
    )


# ---------------------------------------------------------------- Bayesian version


def default_prior(
    *,
    x: np.ndarray,
    alpha: float = 1.0,
    kappa0: float = 0.01,
    nu0: float | None = None,
    cov_scale: float = 0.1,
) -> gm.NormalWishartPrior:
    """The data-derived Normal-Wishart prior of :func:`analytic.gaussian_mixture.default_prior`.

    ``m0`` = column means of ``x`` (n, d), ``nu0 = d + 2`` unless given,
    ``psi0 = nu0 cov_scale diag(column variances)``; the same prior for every class.
    """
    return gm.default_prior(
        x=x, components=1, alpha=alpha, kappa0=kappa0, nu0=nu0, cov_scale=cov_scale
    )


def parameter_names(*, classes: tuple[str, ...], features: tuple[str, ...]) -> tuple[str, ...]:
    """``pi[c]``, ``mu[c,f]``, ``Lambda[c,f,g]`` in the order of the mixture's ``w, mu, Lambda``."""
    return (
        tuple(f"pi[{c}]" for c in classes)
        + tuple(f"mu[{c},{f}]" for c in classes for f in features)
        + tuple(f"Lambda[{c},{f},{g}]" for c in classes for f in features for g in features)
    )


@dataclass(frozen=True, eq=False)
class ClassifierPosterior:
    """The exact posterior of (pi, mu, Lambda), an :class:`analytic.ExactPosterior`.

    The complete-data posterior of :mod:`analytic.gaussian_mixture` (``inner``)
    with parameters named by class and feature.

    Attributes
    ----------
    inner : analytic.gaussian_mixture.MixturePosterior
    classes : tuple of str, length K
    features : tuple of str, length d
    """

    inner: gm.MixturePosterior
    classes: tuple[str, ...]
    features: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.classes) != self.inner.components or len(self.features) != self.inner.d:
            raise ValueError(
                f"classes ({len(self.classes)}) and features ({len(self.features)}) "
                f"must match the posterior's {self.inner.components} classes and "
                f"{self.inner.d} dimensions"
            )

    @property
    def parameters(self) -> tuple[str, ...]:
        return parameter_names(classes=self.classes, features=self.features)

    mean = property(lambda self: self.inner.mean)
    cov = property(lambda self: self.inner.cov)
    mode = property(lambda self: self.inner.mode)
    mode_interior = property(lambda self: self.inner.mode_interior)
    free = property(lambda self: self.inner.free)
    is_gaussian = property(lambda self: self.inner.is_gaussian)
    moments_below = property(lambda self: self.inner.moments_below)

    def marginal(self, index: int) -> Any:
        return self.inner.marginal(index)

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        return self.inner.logpdf(x)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.inner.sample(rng, size)


@dataclass(frozen=True, eq=False)
class ClassPredictive:
    """Posterior predictive of a new labelled point: ``E[pi_k] St(x | m_k, df_k, scale_k)``.

    Attributes
    ----------
    class_probs : array of shape (K,)
        ``E[pi_k] = (alpha + N_k) / (K alpha + N)``.
    loc : array of shape (K, d)
    df : array of shape (K,)
        ``nu_k - d + 1``.
    scale : array of shape (K, d, d)
        ``psi_k (kappa_k + 1) / (kappa_k df_k)``.
    """

    class_probs: np.ndarray
    loc: np.ndarray
    df: np.ndarray
    scale: np.ndarray

    def __post_init__(self) -> None:
        for name in ("class_probs", "loc", "df", "scale"):
            object.__setattr__(self, name, frozen(getattr(self, name)))

    def log_joint(self, x: np.ndarray) -> np.ndarray:
        """``log E[pi_k] + log St(x | m_k, df_k, scale_k)``, shape (n, K)."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        k_count, d = self.loc.shape
        x = _points("x", x, d=d)
        out = np.empty((x.shape[0], k_count))
        for k in range(k_count):
            chol = linalg.cholesky(self.scale[k], lower=True)
            out[:, k] = math.log(self.class_probs[k]) + student_t_logpdf(
                x, self.loc[k], chol, self.df[k]
            )
        return out

    def log_proba(self, x: np.ndarray) -> np.ndarray:
        """``log P(y = k | x, D)``, shape (n, K), normalised by logsumexp."""
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        a = self.log_joint(x)
        return a - special.logsumexp(a, axis=1, keepdims=True)

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log predictive density of x alone (summed over classes), shape (n,)."""
        from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

        return special.logsumexp(self.log_joint(x), axis=1)

    def _marginal_x(self) -> gm.MixturePredictive:
        return gm.MixturePredictive(
            weights=self.class_probs, loc=self.loc, df=self.df, scale=self.scale
        )

    def mean(self) -> np.ndarray:
        """Mean of x, shape (d,): ``sum_k E[pi_k] m_k`` (inf where some df <= 1)."""
        return self._marginal_x().mean()

    def var(self) -> np.ndarray:
        """Variance of each coordinate of x, shape (d,) (inf where some df <= 2)."""
        return self._marginal_x().var()


def answer_from_stats(
    *,
    stats: ClassStats,
    prior: gm.NormalWishartPrior,
    classes: tuple[str, ...] | None = None,
    features: tuple[str, ...] | None = None,
) -> ExactAnswer:
    """Exact posterior, MLE, log evidence and predictive from sufficient statistics.

    The posterior and evidence are the complete-data ones of
    :func:`analytic.gaussian_mixture.complete_data_answer` (Bishop 2006,
    eqs. 10.60-10.63; Murphy 2012, sec. 4.6.3), computed from ``stats``.
    ``mle`` is None when a class has fewer than d + 1 points (singular ``S_k``).

    Parameters
    ----------
    stats : ClassStats
    prior : analytic.gaussian_mixture.NormalWishartPrior
        Its ``alpha`` is the Dirichlet concentration of every class prior.
    classes, features : tuple of str, optional
        Names (default ``0..K-1`` and ``x0..x{d-1}``).
    """
    if not isinstance(stats, ClassStats):
        raise TypeError(f"stats must be a ClassStats, got {type(stats).__name__}")
    prior = check_prior(prior, stats.d)
    classes = tuple(str(k) for k in range(stats.n_classes)) if classes is None else tuple(classes)
    features = tuple(f"x{j}" for j in range(stats.d)) if features is None else tuple(features)
    groups = Groups(np.asarray(stats.counts), np.asarray(stats.means), np.asarray(stats.scatter))
    inner = gm.MixturePosterior(**update(groups, prior))
    post = ClassifierPosterior(inner=inner, classes=classes, features=features)
    dof = inner.t_dof
    pred = ClassPredictive(
        class_probs=inner.alpha / inner.alpha.sum(),
        loc=inner.m,
        df=dof,
        scale=inner.psi * ((inner.kappa + 1.0) / (inner.kappa * dof))[:, None, None],
    )
    evidence = log_evidence(groups, prior, kappa=inner.kappa, nu=inner.nu, psi_chol=inner.psi_chol)
    return ExactAnswer(
        posterior=post, mle=complete_data_mle(groups), log_evidence=evidence, predictive=pred
    )


def answer(
    *,
    x: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    prior: gm.NormalWishartPrior,
    classes: tuple[str, ...] | None = None,
    features: tuple[str, ...] | None = None,
) -> ExactAnswer:
    """:func:`answer_from_stats` of labelled points ``x`` (n, d), labels (n,) in 0..K-1."""
    return answer_from_stats(
        stats=class_stats(x=x, labels=labels, n_classes=n_classes),
        prior=prior,
        classes=classes,
        features=features,
    )


def simulate(
    rng: np.random.Generator, *, n: int, n_classes: int, prior: gm.NormalWishartPrior
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parameters from the prior, then n labelled points.

    Returns
    -------
    theta : array of shape (K + K d + K d^2,)
        ``pi, mu, Lambda`` flattened in the order of :func:`parameter_names`.
    x : array of shape (n, d)
    labels : int array of shape (n,)
    """
    params, x, labels = gm.simulate(rng, n=n, components=n_classes, prior=prior)
    theta = np.concatenate([params.weights, params.means.ravel(), params.precisions.ravel()])
    return theta, x, labels
