"""Naive Bayes with conjugate priors: multinomial, Bernoulli, categorical and Gaussian variants.

Model (Murphy 2012, sec. 3.5; Mitchell 1997, sec. 6.9-6.10)::

    pi ~ Dirichlet(class_concentration 1_C)                  class probabilities
    y_i | pi ~ Categorical(pi)
    multinomial:  theta_c ~ Dirichlet(alpha 1_V);   x_i | y_i = c ~ Multinomial(n_i, theta_c)
    bernoulli:    theta_cj ~ Beta(alpha, alpha);    x_ij | y_i = c ~ Bernoulli(theta_cj)
    categorical:  theta_cj ~ Dirichlet(alpha 1_Kj); x_ij | y_i = c ~ Categorical(theta_cj)
    gaussian:     sigma2_cj ~ InvGamma(alpha0, beta0)  (shape, *scale*)
                  mu_cj | sigma2_cj ~ Normal(mu0, sigma2_cj / kappa0)
                  x_ij | y_i = c ~ Normal(mu_cj, sigma2_cj)

Every block is conjugate and the blocks are independent a posteriori, so the
posterior is a product of Dirichlets and Betas:
``pi | D ~ Dirichlet(class_concentration + n_c)`` and, per class,
``Dirichlet(alpha + N_c)`` (word counts N_ck, multinomial),
``Beta(alpha + N_cj, alpha + n_c - N_cj)`` (rows of class c with feature j,
Bernoulli), ``Dirichlet(alpha + N_cjk)`` (rows of class c with value k of
feature j, categorical) or, Gaussian, a Normal-Inverse-Gamma block per class
and feature, ``NIG(mu_n, kappa_n, alpha_n, beta_n)`` from the class's count,
mean and centred sum of squares of that feature (the update of
``analytic/normal_inverse_gamma.py``, reused; Murphy 2007, sec. 6).

**The m-estimate is the posterior mean.**  Mitchell's (1997, eq. 6.22)
smoothed estimate ``(n_c + m p) / (n + m)`` equals the mean of
``Dirichlet(m p_1, ..., m p_K)`` updated by the counts: ``m`` is the prior's
total concentration and ``p`` its mean.  Laplace smoothing (alpha = 1) is
``m = K``, ``p = 1/K``; scikit-learn's ``alpha`` is this ``alpha``.

**Prediction** is in log space and normalised with ``logsumexp``.  The
exact posterior predictive of a new row is
``P(y = c | x, D) prop. to E[pi_c | D] p(x | c, D)`` (the posterior factorises
over pi and the theta_c), where ``p(x | c, D)`` is

* multinomial: Dirichlet-multinomial, ``Gamma(A) / Gamma(A + n_x)
  prod_k Gamma(a_k + x_k) / Gamma(a_k)`` with a = alpha + N_c, A = sum a
  (the multinomial coefficient cancels between classes);
* Bernoulli and categorical: the plug-in of the posterior means (each theta
  enters once, so E[prod] = prod E);
* Gaussian: a product over features of Student-t densities,
  ``t_{2 alpha_n}(x_j; mu_n, beta_n (kappa_n + 1) / (alpha_n kappa_n))``
  (Murphy 2007, eq. 100), the NIG blocks being independent.

So the multinomial variant's predictive differs from the plug-in estimate
(the "smoothed" classifier of scikit-learn) only for rows that repeat a
word: a repeated word is less surprising once it has been seen.  For the
Gaussian variant the plug-in is scikit-learn's ``GaussianNB`` (with
``var_smoothing=0``): the MLE class shares ``n_c / n``, class means and class
variances ``m2 / n_c``; the Student-t predictive has heavier tails than it.

Sufficient statistics (class counts, per-class feature counts; Gaussian:
per class and feature the count, mean and centred sum of squares, merged
with Chan et al.'s formula) are mergeable, so a fit over chunks equals the
fit over all rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from analytic import normal_inverse_gamma as nig
from analytic._base import ExactAnswer
from analytic.beta_binomial import BetaPosterior
from analytic.dirichlet_categorical import DirichletPosterior
from analytic.normal_known_variance import Stats as NormalStats

VARIANTS = ("multinomial", "bernoulli", "categorical", "gaussian")

#: The Gaussian variant's prior defaults: mu0 = 0 (data-free, for standardised
#: features), kappa0 = 1 (the mean's prior is worth one row), alpha0 = 2 and
#: beta0 = 1 (prior mean of each class variance beta0 / (alpha0 - 1) = 1, the
#: variance of a standardised feature).
GAUSSIAN_PRIOR = {"mu0": 0.0, "kappa0": 1.0, "alpha0": 2.0, "beta0": 1.0}


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(
            f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}; "
            "e.g. --set variant=bernoulli"
        )
    return variant


# --- sufficient statistics ------------------------------------------------------
@dataclass(frozen=True)
class Stats:
    """Sufficient statistics of a labelled data set.

    Attributes
    ----------
    class_counts : array of shape (C,)
        Rows per class.
    feature_counts : array of shape (C, P)
        Multinomial: total count of word k in class c; Bernoulli: rows of
        class c with feature k present; categorical: rows of class c with
        the value of column k (columns grouped by feature, see ``groups``).
    """

    class_counts: np.ndarray
    feature_counts: np.ndarray

    @property
    def n(self) -> int:
        return int(self.class_counts.sum())

    def __add__(self, other: Stats) -> Stats:
        return Stats(
            self.class_counts + other.class_counts, self.feature_counts + other.feature_counts
        )


@dataclass(frozen=True)
class GaussianStats:
    """Sufficient statistics of the Gaussian variant.

    Attributes
    ----------
    class_counts : array of shape (C,)
        Rows per class.
    mean : array of shape (C, P)
        Mean of feature j over the rows of class c (0 for an empty class).
    m2 : array of shape (C, P)
        Centred sum of squares ``sum_i (x_ij - mean_cj)^2`` over those rows.

    Equivalent to (n, sum, sum of squares) per class and feature, but the
    centred form does not lose digits to cancellation; chunks merge with
    Chan et al.'s parallel formula (as :class:`NormalStats` does).
    """

    class_counts: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    @property
    def n(self) -> int:
        return int(self.class_counts.sum())

    def block(self, c: int, j: int) -> NormalStats:
        """The one-feature statistics of class c, feature j."""
        return NormalStats(int(self.class_counts[c]), float(self.mean[c, j]), float(self.m2[c, j]))

    def __add__(self, other: GaussianStats) -> GaussianStats:
        na, nb_ = self.class_counts[:, None], other.class_counts[:, None]
        n = na + nb_
        safe = np.where(n > 0, n, 1.0)
        delta = other.mean - self.mean
        return GaussianStats(
            self.class_counts + other.class_counts,
            self.mean + delta * nb_ / safe,
            self.m2 + other.m2 + delta * delta * na * nb_ / safe,
        )


def gaussian_stats(*, x: np.ndarray, y: np.ndarray, n_classes: int) -> GaussianStats:
    """Per class and feature: count, mean and centred sum of squares (two passes).

    Parameters
    ----------
    x : array of shape (n, P)
        Real features, all finite.
    y : int array of shape (n,)
        Class codes in 0..n_classes-1.
    """
    y = _codes("y", np.asarray(y), n_classes)
    xf = np.asarray(x, dtype=float)
    if xf.ndim != 2 or xf.shape[0] != y.size:
        raise ValueError(
            f"x must have shape (n, features) with n = len(y) = {y.size}, got {xf.shape}"
        )
    _check_features(xf, "gaussian")
    counts = np.bincount(y, minlength=n_classes).astype(float)
    # Two passes over blocks of rows (in cache): class sums by a one-hot BLAS product,
    # then the centred squares around the class means.
    sums = np.zeros((n_classes, xf.shape[1]))
    blocks = range(0, y.size, _CHECK_ROWS)
    onehots = []
    for start in blocks:
        yb = y[start : start + _CHECK_ROWS]
        onehot = np.zeros((n_classes, yb.size))
        onehot[yb, np.arange(yb.size)] = 1.0
        onehots.append(onehot)
        sums += onehot @ xf[start : start + _CHECK_ROWS]
    mean = sums / np.where(counts > 0, counts, 1.0)[:, None]
    m2 = np.zeros_like(mean)
    for start, onehot in zip(blocks, onehots):
        dev = xf[start : start + _CHECK_ROWS] - mean[y[start : start + _CHECK_ROWS]]
        dev *= dev
        m2 += onehot @ dev
    return GaussianStats(counts, mean, m2)


def groups_of(n_categories: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """(start, stop) column ranges of each categorical feature in ``feature_counts``."""
    stops = np.cumsum(n_categories)
    return tuple((int(b - k), int(b)) for b, k in zip(stops, n_categories))


def _codes(name: str, values: np.ndarray, size: int) -> np.ndarray:
    """Integer codes in 0..size-1, or ValueError naming the first bad entry."""
    values = np.asarray(values)
    with np.errstate(invalid="ignore"):
        codes = values.astype(np.int64)
    bad = (codes != values) | (codes < 0) | (codes >= size)
    if bad.any():
        i = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), values.shape)
        raise ValueError(f"{name}{list(i)} = {values[i]} is not a code in 0..{size - 1}")
    return codes


def sufficient_stats(
    *,
    variant: str,
    x: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    n_categories: Sequence[int] | None = None,
) -> Stats | GaussianStats:
    """Class counts and per-class feature counts (Gaussian: :func:`gaussian_stats`).

    Parameters
    ----------
    variant : {"multinomial", "bernoulli", "categorical", "gaussian"}
    x : array of shape (n, P) or (n, F)
        Word counts (whole numbers >= 0), 0/1 indicators, category codes
        (column j in 0..n_categories[j]-1) or real numbers (Gaussian).
    y : int array of shape (n,)
        Class codes in 0..n_classes-1.
    n_categories : sequence of int, length F
        Categorical variant only.
    """
    check_variant(variant)
    if variant == "gaussian":
        return gaussian_stats(x=x, y=y, n_classes=n_classes)
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] != np.shape(y)[0]:
        raise ValueError(
            f"x must have shape (n, features) with n = len(y) = {np.shape(y)[0]}, got {x.shape}"
        )
    y = _codes("y", np.asarray(y), n_classes)
    class_counts = np.bincount(y, minlength=n_classes).astype(float)
    if variant == "categorical":
        if n_categories is None or len(n_categories) != x.shape[1]:
            raise ValueError("the categorical variant needs n_categories, one per column of x")
        parts = []
        for j, k in enumerate(n_categories):
            col = _codes(f"x[:, {j}]", x[:, j], int(k))
            parts.append(np.bincount(y * k + col, minlength=n_classes * k).reshape(n_classes, k))
        return Stats(class_counts, np.hstack(parts).astype(float))
    xf = np.asarray(x, dtype=float)
    _check_features(xf, variant)
    # One-hot labels times x: one BLAS product instead of C masked copies of x.
    onehot = np.zeros((n_classes, y.size))
    onehot[y, np.arange(y.size)] = 1.0
    return Stats(class_counts, onehot @ xf)


#: Rows checked at a time: the temporaries of a block stay in cache (1e6 x 50
#: rows: 0.07 s instead of 0.2 s for whole-array checks, measured).
_CHECK_ROWS = 8192


def _check_features(xf: np.ndarray, variant: str) -> None:
    """Finite everywhere; 0/1 (Bernoulli) or whole numbers >= 0 (multinomial)."""
    for start in range(0, xf.shape[0], _CHECK_ROWS):
        block = xf[start : start + _CHECK_ROWS]
        if not np.isfinite(block).all():
            raise ValueError("x has non-finite values; every feature must be a finite number")
        if variant == "bernoulli" and not ((block == 0) | (block == 1)).all():
            raise ValueError("the Bernoulli variant needs 0/1 features (presence/absence)")
        if variant == "multinomial" and not ((block >= 0) & (block == np.floor(block))).all():
            raise ValueError("the multinomial variant needs word counts: whole numbers >= 0")


# --- the m-estimate ---------------------------------------------------------------
def m_estimate(*, n_c: np.ndarray, n: np.ndarray, m: float, p: np.ndarray) -> np.ndarray:
    """Mitchell's (1997, eq. 6.22) m-estimate ``(n_c + m p) / (n + m)``.

    Equals the posterior mean of ``Dirichlet(m p)`` after counts ``n_c``
    summing to ``n`` (:func:`posterior_mean_of`).
    """
    return (np.asarray(n_c, dtype=float) + m * np.asarray(p, dtype=float)) / (
        np.asarray(n, dtype=float) + m
    )


def posterior_mean_of(*, counts: np.ndarray, concentration: np.ndarray) -> np.ndarray:
    """Mean of ``Dirichlet(concentration + counts)``: ``(a_k + n_k) / (A + n)``."""
    a = np.asarray(concentration, dtype=float) + np.asarray(counts, dtype=float)
    return a / a.sum()


# --- the posterior: a product of independent Dirichlet and Beta blocks -----------
@dataclass(frozen=True, eq=False)
class ProductPosterior:
    """Independent blocks (Dirichlets, Betas, Normal-Inverse-Gammas) side by side.

    ``mean``, ``free`` and ``mode`` concatenate the blocks'; ``cov`` is
    block diagonal; ``marginal(i)`` is the marginal of coordinate i in its
    block; ``moments_below`` is the blocks' smallest.  Blocks must have the
    ExactPosterior attributes.
    """

    blocks: tuple[Any, ...]
    parameters: tuple[str, ...]
    is_gaussian: bool = False

    @property
    def moments_below(self) -> float:
        return float(min(b.moments_below for b in self.blocks))

    def __post_init__(self) -> None:
        width = sum(len(b.mean) for b in self.blocks)
        if width != len(self.parameters):
            raise ValueError(f"{len(self.parameters)} names for {width} coordinates")

    @property
    def _offsets(self) -> np.ndarray:
        return np.cumsum([0] + [len(b.mean) for b in self.blocks])

    @property
    def mean(self) -> np.ndarray:
        return np.concatenate([b.mean for b in self.blocks])

    @property
    def cov(self) -> np.ndarray:
        from scipy.linalg import block_diag

        return block_diag(*[b.cov for b in self.blocks])

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(int(o + i) for o, b in zip(self._offsets, self.blocks) for i in b.free)

    @property
    def mode(self) -> np.ndarray | None:
        modes = [b.mode for b in self.blocks]
        return None if any(m is None for m in modes) else np.concatenate(modes)

    @property
    def mode_interior(self) -> bool:
        return all(b.mode_interior for b in self.blocks)

    def marginal(self, index: int) -> Any:
        b = int(np.searchsorted(self._offsets, index, side="right") - 1)
        return self.blocks[b].marginal(int(index - self._offsets[b]))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        o = self._offsets
        return sum(b.logpdf(x[..., o[i] : o[i + 1]]) for i, b in enumerate(self.blocks))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.concatenate([b.sample(rng, size) for b in self.blocks], axis=1)


@dataclass(frozen=True, eq=False)
class NaiveBayesPosterior:
    """The exact posterior with what prediction needs.

    Attributes
    ----------
    variant : str
    classes : tuple of str, length C
    feature_names : tuple of str, length P
        Words (multinomial, Bernoulli) or ``feature=value`` (categorical).
    class_alpha : array of shape (C,)
        Dirichlet parameters of pi.
    feature_alpha : array of shape (C, P)
        Dirichlet parameters (multinomial, categorical: one Dirichlet per
        class and feature group) or the first Beta shape (Bernoulli).
    feature_beta : array of shape (C, P) or None
        The second Beta shape (Bernoulli only).
    groups : tuple of (start, stop)
        Column ranges of each Dirichlet within a class (one range covering
        every word for the multinomial variant; Bernoulli: empty).
    product : ProductPosterior
        The same posterior as the compare layer sees it: parameters
        ``pi[c]``, then ``theta[c,feature]`` class by class (Gaussian:
        ``mu[c,feature]``, ``sigma2[c,feature]`` feature by feature, class by
        class).
    gaussian : GaussianBlocks or None
        The Gaussian variant's NIG parameters and statistics; there
        ``feature_alpha`` and ``feature_beta`` are the InvGamma shapes and
        scales alpha_n, beta_n.
    """

    variant: str
    classes: tuple[str, ...]
    feature_names: tuple[str, ...]
    class_alpha: np.ndarray
    feature_alpha: np.ndarray
    feature_beta: np.ndarray | None
    groups: tuple[tuple[int, int], ...]
    product: ProductPosterior
    gaussian: GaussianBlocks | None = None

    # ExactPosterior, by delegation to the product of blocks.
    parameters = property(lambda self: self.product.parameters)
    mean = property(lambda self: self.product.mean)
    cov = property(lambda self: self.product.cov)
    free = property(lambda self: self.product.free)
    mode = property(lambda self: self.product.mode)
    mode_interior = property(lambda self: self.product.mode_interior)
    is_gaussian = property(lambda self: False)
    moments_below = property(lambda self: self.product.moments_below)

    def marginal(self, index: int) -> Any:
        return self.product.marginal(index)

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        return self.product.logpdf(x)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.product.sample(rng, size)

    @property
    def class_mean(self) -> np.ndarray:
        """E[pi | D], shape (C,)."""
        return self.class_alpha / self.class_alpha.sum()

    @property
    def feature_mean(self) -> np.ndarray:
        """E[theta | D], shape (C, P): the smoothed estimates (the m-estimates).

        Gaussian: shape (C, P, 2), ``E[mu_cj | D]`` and ``E[sigma2_cj | D]``
        (inf where alpha_n <= 1).
        """
        if self.gaussian is not None:
            g = self.gaussian
            with np.errstate(divide="ignore"):
                var = np.where(g.alpha > 1, g.beta / np.maximum(g.alpha - 1.0, 0.0), np.inf)
            return np.stack([g.mu, var], axis=-1)
        if self.variant == "bernoulli":
            return self.feature_alpha / (self.feature_alpha + self.feature_beta)
        out = np.empty_like(self.feature_alpha)
        for s, e in self.groups:
            block = self.feature_alpha[:, s:e]
            out[:, s:e] = block / block.sum(axis=1, keepdims=True)
        return out


@dataclass(frozen=True, eq=False)
class GaussianBlocks:
    """The Gaussian variant's posterior NIG parameters, arrays of shape (C, P).

    ``sigma2_cj ~ InvGamma(alpha, beta)`` (shape, scale) and
    ``mu_cj | sigma2_cj ~ Normal(mu, sigma2_cj / kappa)``; ``stats`` are the
    training statistics (for the MLE plug-in).
    """

    mu: np.ndarray
    kappa: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    stats: GaussianStats

    def predictive(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Student-t (df, loc, scale) of a new x_j given class c (Murphy 2007, eq. 100)."""
        scale = np.sqrt(self.beta * (self.kappa + 1.0) / (self.alpha * self.kappa))
        return 2.0 * self.alpha, self.mu, scale


def _gaussian_update(
    suff: GaussianStats, *, mu0: float, kappa0: float, alpha0: float, beta0: float
) -> tuple[list[nig.NIGPosterior], GaussianBlocks]:
    """One NIG block per class and feature, by analytic.normal_inverse_gamma.update."""
    c, p = suff.mean.shape
    blocks = [
        nig.update(suff=suff.block(i, j), mu0=mu0, kappa0=kappa0, alpha0=alpha0, beta0=beta0)
        for i in range(c)
        for j in range(p)
    ]

    def field(name: str) -> np.ndarray:
        return np.array([getattr(b, name) for b in blocks]).reshape(c, p)

    return blocks, GaussianBlocks(
        mu=field("mu"), kappa=field("kappa"), alpha=field("alpha"), beta=field("beta"), stats=suff
    )


def _gaussian_suff(suff: Stats | GaussianStats) -> GaussianStats:
    if not isinstance(suff, GaussianStats):
        raise ValueError(
            f"the gaussian variant takes GaussianStats, got {type(suff).__name__}; "
            "pass gaussian_stats(x=..., y=..., n_classes=...)"
        )
    return suff


def _count_suff(suff: Stats | GaussianStats, variant: str) -> Stats:
    if not isinstance(suff, Stats):
        raise ValueError(
            f"the {variant} variant takes count Stats, got {type(suff).__name__}; "
            "GaussianStats are for the gaussian variant"
        )
    return suff


def update(
    *,
    suff: Stats | GaussianStats,
    variant: str,
    classes: Sequence[str],
    feature_names: Sequence[str],
    alpha: float,
    class_concentration: float,
    n_categories: Sequence[int] | None = None,
    mu0: float = GAUSSIAN_PRIOR["mu0"],
    kappa0: float = GAUSSIAN_PRIOR["kappa0"],
    alpha0: float = GAUSSIAN_PRIOR["alpha0"],
    beta0: float = GAUSSIAN_PRIOR["beta0"],
) -> NaiveBayesPosterior:
    """Conjugate update of every block; sequential updates are exact.

    ``mu0, kappa0, alpha0, beta0`` are the Gaussian variant's NIG prior
    (see :data:`GAUSSIAN_PRIOR`); the other variants ignore them, and the
    Gaussian variant ignores ``alpha``.
    """
    check_variant(variant)
    classes = tuple(str(c) for c in classes)
    names = tuple(str(f) for f in feature_names)
    if len(classes) < 2:
        raise ValueError(f"naive Bayes needs at least 2 classes, got {list(classes)}")
    alpha = _positive("alpha", alpha)
    class_concentration = _positive("class_concentration", class_concentration)
    c, p = len(classes), len(names)
    if variant == "gaussian":
        suff = _gaussian_suff(suff)
        if suff.class_counts.shape != (c,) or suff.mean.shape != (c, p):
            raise ValueError(
                f"statistics of shapes {suff.class_counts.shape}, "
                f"{suff.mean.shape} for {c} classes and {p} features"
            )
        class_alpha = class_concentration + suff.class_counts
        if not np.isfinite(float(mu0)):
            raise ValueError(f"mu0 must be a finite number, got {mu0!r}; e.g. --set mu0=0")
        nig_blocks, g = _gaussian_update(
            suff,
            mu0=float(mu0),
            kappa0=_positive("kappa0", kappa0),
            alpha0=_positive("alpha0", alpha0),
            beta0=_positive("beta0", beta0),
        )
        params = [f"pi[{k}]" for k in classes] + [
            f"{v}[{k},{f}]" for k in classes for f in names for v in ("mu", "sigma2")
        ]
        product = (DirichletPosterior(alpha=class_alpha, categories=classes), *nig_blocks)
        return NaiveBayesPosterior(
            variant=variant,
            classes=classes,
            feature_names=names,
            class_alpha=class_alpha,
            feature_alpha=g.alpha,
            feature_beta=g.beta,
            groups=(),
            product=ProductPosterior(blocks=product, parameters=tuple(params)),
            gaussian=g,
        )
    suff = _count_suff(suff, variant)
    if suff.class_counts.shape != (c,) or suff.feature_counts.shape != (c, p):
        raise ValueError(
            f"statistics of shapes {suff.class_counts.shape}, "
            f"{suff.feature_counts.shape} for {c} classes and {p} features"
        )
    class_alpha = class_concentration + suff.class_counts
    blocks: list[Any] = [DirichletPosterior(alpha=class_alpha, categories=classes)]
    params = [f"pi[{k}]" for k in classes]
    feature_beta = None
    if variant == "bernoulli":
        groups: tuple[tuple[int, int], ...] = ()
        feature_alpha = alpha + suff.feature_counts
        # Counts first: alpha + n_c - N_cj rounds alpha away when alpha << 1
        # (alpha = 1e-50, n_c = N_cj gave Beta(., 0) and an infinite evidence).
        feature_beta = alpha + (suff.class_counts[:, None] - suff.feature_counts)
        for i in range(c):
            blocks += [
                BetaPosterior(float(a), float(b)) for a, b in zip(feature_alpha[i], feature_beta[i])
            ]
    else:
        if variant == "multinomial":
            groups = ((0, p),)
        else:
            if n_categories is None or sum(n_categories) != p:
                raise ValueError("n_categories must add up to the number of feature columns")
            groups = groups_of(n_categories)
        feature_alpha = alpha + suff.feature_counts
        for i in range(c):
            blocks += [
                DirichletPosterior(alpha=feature_alpha[i, s:e], categories=names[s:e])
                for s, e in groups
            ]
    params += [f"theta[{k},{f}]" for k in classes for f in names]
    return NaiveBayesPosterior(
        variant=variant,
        classes=classes,
        feature_names=names,
        class_alpha=class_alpha,
        feature_alpha=feature_alpha,
        feature_beta=feature_beta,
        groups=groups,
        product=ProductPosterior(blocks=tuple(blocks), parameters=tuple(params)),
    )


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}; e.g. --set {name}=1")
    return value


# --- prediction in log space -------------------------------------------------------
def _class_loglik(post: NaiveBayesPosterior, x: np.ndarray, *, exact: bool) -> np.ndarray:
    """``log p(x_i | c, D)`` up to a per-row constant, shape (m, C)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    x = np.asarray(x)
    if post.gaussian is not None:
        return _gaussian_loglik(post.gaussian, x, exact=exact)
    if post.variant == "categorical":
        logt = np.log(post.feature_mean)  # (C, P)
        out = np.zeros((x.shape[0], len(post.classes)))
        for j, (s, e) in enumerate(post.groups):
            col = _codes(f"x[:, {j}]", x[:, j], e - s)
            out += logt[:, s + col].T
        return out
    xf = np.asarray(x, dtype=float)
    if post.variant == "bernoulli":
        mean = post.feature_mean
        # x log t + (1 - x) log(1 - t) = x (log t - log(1 - t)) + sum log(1 - t)
        return xf @ (np.log(mean) - np.log1p(-mean)).T + np.log1p(-mean).sum(axis=1)
    if not exact:
        return xf @ np.log(post.feature_mean).T
    # Dirichlet-multinomial: lgamma(A) - lgamma(A + n_x) + sum_k [lgamma(a_k + x_k) - lgamma(a_k)]
    a = post.feature_alpha  # (C, V)
    total = a.sum(axis=1)
    n_x = xf.sum(axis=1, keepdims=True)
    out = special.gammaln(total)[None, :] - special.gammaln(total[None, :] + n_x)
    # lgamma(a + x) - lgamma(a) is 0 where x = 0: only the nonzero counts cost anything.
    rows, cols = np.nonzero(xf)
    vals = xf[rows, cols]
    for c in range(a.shape[0]):
        terms = special.gammaln(a[c, cols] + vals) - special.gammaln(a[c, cols])
        out[:, c] += np.bincount(rows, weights=terms, minlength=xf.shape[0])
    return out


def gaussian_mle(stats: GaussianStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MLE class shares ``n_c / n`` (C,), means (C, P) and variances ``m2 / n_c`` (C, P).

    Raises ValueError when a class has no training rows or a feature is
    constant within a class (MLE variance 0): the plug-in classifier then
    does not exist, while the posterior does.
    """
    n_c = stats.class_counts
    if np.any(n_c == 0):
        raise ValueError(
            f"class {int(np.flatnonzero(n_c == 0)[0])} has no training rows, so it has no MLE"
        )
    var = stats.m2 / n_c[:, None]
    if np.any(var <= 0):
        c, j = np.argwhere(var <= 0)[0]
        raise ValueError(
            f"feature {int(j)} is constant in class {int(c)} (MLE variance 0), so "
            "the MLE plug-in has no density there"
        )
    return n_c / n_c.sum(), stats.mean, var


def _gaussian_loglik(g: GaussianBlocks, x: np.ndarray, *, exact: bool) -> np.ndarray:
    """Sum over features of Student-t (exact) or Normal (MLE plug-in) log densities, (m, C).

    Rows go in blocks of :data:`_CHECK_ROWS` so the (rows, C, P) temporaries stay in
    cache; ``x - mean`` is formed directly (no expanded square: with large offsets,
    ``x^2 - 2 x m + m^2`` would cancel).
    """
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    xf = np.asarray(x, dtype=float)
    _check_features(xf, "gaussian")
    if exact:
        df, loc, scale = g.predictive()
        # log t_nu(x; m, s) = lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi)/2 - log s
        #                     - (nu+1)/2 log(1 + ((x - m)/s)^2 / nu)
        const = (
            special.gammaln(0.5 * (df + 1))
            - special.gammaln(0.5 * df)
            - 0.5 * np.log(df * np.pi)
            - np.log(scale)
        ).sum(axis=1)
        centre, inv, weight = loc, 1.0 / (scale * scale * df), -0.5 * (df + 1)
    else:
        _, mean, var = gaussian_mle(g.stats)
        const = -0.5 * np.log(2 * np.pi * var).sum(axis=1)
        centre, inv, weight = mean, None, -0.5 / var
    out = np.empty((xf.shape[0], centre.shape[0]))
    for start in range(0, xf.shape[0], _CHECK_ROWS):
        r = xf[start : start + _CHECK_ROWS, None, :] - centre[None]  # (rows, C, P)
        r *= r
        if inv is not None:  # Student-t: -(nu + 1)/2 log1p((x - m)^2 / (nu s^2))
            r *= inv[None]
            np.log1p(r, out=r)
        # Normal: -(x - m)^2 / (2 var); both summed over features with their weights
        out[start : start + _CHECK_ROWS] = const + np.einsum("bcp,cp->bc", r, weight)
    return out


def predict_log_proba(
    *, posterior: NaiveBayesPosterior, x: np.ndarray, exact: bool = True
) -> np.ndarray:
    """``log P(y = c | x_i, D)``, array of shape (m, C), normalised with logsumexp.

    ``exact=True``: the posterior predictive (Dirichlet-multinomial for the
    multinomial variant, Student-t per feature for the Gaussian one);
    ``exact=False``: the plug-in, i.e. scikit-learn's classifier: the
    posterior means (the smoothed estimates, with ``class_prior = E[pi | D]``)
    for the count variants, the MLE (``GaussianNB``, class shares
    ``n_c / n``) for the Gaussian one.  The two agree for the Bernoulli and
    categorical variants.
    """
    joint = _class_loglik(posterior, x, exact=exact)
    if posterior.gaussian is not None and not exact:
        share = gaussian_mle(posterior.gaussian.stats)[0]
        joint += np.log(share)[None, :]
    else:
        joint += np.log(posterior.class_mean)[None, :]
    return log_normalise(joint)


def log_normalise(joint: np.ndarray) -> np.ndarray:
    """``joint - logsumexp(joint, axis=1)`` for finite rows of shape (m, C), in place.

    The logsumexp trick written out: subtract each row's maximum before
    exponentiating.  For a few classes it is 2x faster than
    ``scipy.special.logsumexp`` (no array-API dispatch, fewer temporaries).
    """
    joint -= joint.max(axis=1, keepdims=True)
    joint -= np.log(np.exp(joint).sum(axis=1, keepdims=True))
    return joint


@dataclass(frozen=True, eq=False)
class ClassPredictive:
    """Posterior predictive of a new row's class: ``mean()`` = E[pi | D] without
    features; ``log_proba(x)`` with them (exact), ``plugin_log_proba(x)`` (plug-in)."""

    posterior: NaiveBayesPosterior

    def mean(self) -> np.ndarray:
        return self.posterior.class_mean

    def log_proba(self, x: np.ndarray) -> np.ndarray:
        return predict_log_proba(posterior=self.posterior, x=x, exact=True)

    def plugin_log_proba(self, x: np.ndarray) -> np.ndarray:
        return predict_log_proba(posterior=self.posterior, x=x, exact=False)


# --- evidence, MLE, solve ---------------------------------------------------------
def _log_dirichlet_evidence(prior: np.ndarray, counts: np.ndarray) -> float:
    """log of the Polya-urn probability of a sequence with ``counts`` (last axis)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    post = prior + counts
    return float(
        np.sum(special.gammaln(prior.sum(axis=-1)) - special.gammaln(post.sum(axis=-1)))
        + np.sum(special.gammaln(post) - special.gammaln(prior))
    )


def _log_nig_evidence(g: GaussianBlocks, *, kappa0: float, alpha0: float, beta0: float) -> float:
    """Sum over the NIG blocks of Murphy's (2007, eq. 95) log evidence
    (the formula of ``analytic.normal_inverse_gamma.solve``, vectorised)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    n = g.stats.class_counts[:, None]
    return float(
        np.sum(
            special.gammaln(g.alpha)
            - special.gammaln(alpha0)
            + alpha0 * np.log(beta0)
            - g.alpha * np.log(g.beta)
            + 0.5 * (np.log(kappa0) - np.log(g.kappa))
            - 0.5 * n * np.log(2 * np.pi)
        )
    )


def log_evidence(
    *,
    suff: Stats | GaussianStats,
    post: NaiveBayesPosterior,
    alpha: float,
    class_concentration: float,
    kappa0: float = GAUSSIAN_PRIOR["kappa0"],
    alpha0: float = GAUSSIAN_PRIOR["alpha0"],
    beta0: float = GAUSSIAN_PRIOR["beta0"],
) -> float:
    """log p(labels, features) of the observed sequence (multinomial: of the tokens).

    Sum over the independent blocks of ``log B(prior + counts) - log B(prior)``
    (Gaussian: plus the NIG blocks' log evidence, a density in x).
    """
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    c = len(post.classes)
    total = _log_dirichlet_evidence(np.full(c, class_concentration), suff.class_counts)
    if post.gaussian is not None:
        return total + _log_nig_evidence(post.gaussian, kappa0=kappa0, alpha0=alpha0, beta0=beta0)
    if post.variant == "bernoulli":
        a, b = post.feature_alpha, post.feature_beta
        return total + float(np.sum(special.betaln(a, b) - special.betaln(alpha, alpha)))
    feature_counts = _count_suff(suff, post.variant).feature_counts
    for s, e in post.groups:
        counts = feature_counts[:, s:e]
        total += _log_dirichlet_evidence(np.full(counts.shape, alpha), counts)
    return total


def _mle(suff: Stats | GaussianStats, post: NaiveBayesPosterior) -> np.ndarray | None:
    """Class frequencies and per-class feature frequencies (Gaussian: means and
    variances); None if a class is empty (or, Gaussian, a feature constant in a class)."""
    n_c = suff.class_counts
    if np.any(n_c == 0):
        return None
    if post.gaussian is not None:
        try:
            share, mean, var = gaussian_mle(_gaussian_suff(suff))
        except ValueError:
            return None
        return np.concatenate([share, np.stack([mean, var], axis=-1).ravel()])
    feature_counts = _count_suff(suff, post.variant).feature_counts
    if post.variant == "bernoulli":
        theta = feature_counts / n_c[:, None]
    else:
        theta = np.empty_like(feature_counts)
        for s, e in post.groups:
            block = feature_counts[:, s:e]
            sums = block.sum(axis=1, keepdims=True)
            if np.any(sums == 0):
                return None
            theta[:, s:e] = block / sums
    return np.concatenate([n_c / n_c.sum(), theta.ravel()])


def solve(
    *,
    variant: str,
    x: np.ndarray,
    y: np.ndarray,
    classes: Sequence[str],
    feature_names: Sequence[str],
    alpha: float = 1.0,
    class_concentration: float = 1.0,
    n_categories: Sequence[int] | None = None,
    mu0: float = GAUSSIAN_PRIOR["mu0"],
    kappa0: float = GAUSSIAN_PRIOR["kappa0"],
    alpha0: float = GAUSSIAN_PRIOR["alpha0"],
    beta0: float = GAUSSIAN_PRIOR["beta0"],
) -> ExactAnswer:
    """Posterior, MLE, log evidence and class predictive of a labelled data set.

    Parameters
    ----------
    variant : {"multinomial", "bernoulli", "categorical", "gaussian"}
    x : array of shape (n, P) (multinomial, Bernoulli, Gaussian) or (n, F) codes (categorical)
    y : int array of shape (n,)
    classes : sequence of str, length C
    feature_names : sequence of str, length P
        Categorical: ``feature=value`` for every value, grouped by feature.
    alpha : float
        Concentration of every feature probability (scikit-learn's alpha).
    class_concentration : float
        Concentration of every class probability.
    n_categories : sequence of int, length F
        Categorical only: values per feature.
    mu0, kappa0, alpha0, beta0 : float
        Gaussian only: ``sigma2_cj ~ InvGamma(alpha0, beta0)`` (shape, scale),
        ``mu_cj | sigma2_cj ~ Normal(mu0, sigma2_cj / kappa0)``.

    The MLE (``ExactAnswer.mle``, in parameter order) is None when a class
    has no rows (Gaussian: also when a feature is constant within a class).
    """
    suff = sufficient_stats(
        variant=variant, x=x, y=y, n_classes=len(classes), n_categories=n_categories
    )
    return answer_from_stats(
        suff=suff,
        variant=variant,
        classes=classes,
        feature_names=feature_names,
        alpha=alpha,
        class_concentration=class_concentration,
        n_categories=n_categories,
        mu0=mu0,
        kappa0=kappa0,
        alpha0=alpha0,
        beta0=beta0,
    )


def answer_from_stats(
    *,
    suff: Stats | GaussianStats,
    variant: str,
    classes: Sequence[str],
    feature_names: Sequence[str],
    alpha: float,
    class_concentration: float,
    n_categories: Sequence[int] | None = None,
    mu0: float = GAUSSIAN_PRIOR["mu0"],
    kappa0: float = GAUSSIAN_PRIOR["kappa0"],
    alpha0: float = GAUSSIAN_PRIOR["alpha0"],
    beta0: float = GAUSSIAN_PRIOR["beta0"],
) -> ExactAnswer:
    """:func:`solve` from sufficient statistics (e.g. summed over chunks)."""
    gauss = {"kappa0": kappa0, "alpha0": alpha0, "beta0": beta0}
    post = update(
        suff=suff,
        variant=variant,
        classes=classes,
        feature_names=feature_names,
        alpha=alpha,
        class_concentration=class_concentration,
        n_categories=n_categories,
        mu0=mu0,
        **gauss,
    )
    return ExactAnswer(
        posterior=post,
        mle=_mle(suff, post),
        log_evidence=log_evidence(
            suff=suff, post=post, alpha=alpha, class_concentration=class_concentration, **gauss
        ),
        predictive=ClassPredictive(post),
    )


def simulate(
    rng: np.random.Generator,
    *,
    n: int,
    variant: str,
    alpha: float,
    class_concentration: float,
    n_classes: int = 2,
    n_features: int = 4,
    n_categories: int = 3,
    doc_length: int = 8,
    mu0: float = GAUSSIAN_PRIOR["mu0"],
    kappa0: float = GAUSSIAN_PRIOR["kappa0"],
    alpha0: float = GAUSSIAN_PRIOR["alpha0"],
    beta0: float = GAUSSIAN_PRIOR["beta0"],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parameters from the prior, then n labelled rows.

    Returns (theta, x, y): theta = [pi, theta_c for each class] flattened in
    parameter order (Gaussian: mu_cj, sigma2_cj for each class and feature);
    x of shape (n, n_features) (multinomial: counts of ``doc_length`` words;
    Bernoulli: 0/1; categorical: codes in 0..n_categories-1; Gaussian:
    reals); y of shape (n,).
    """
    check_variant(variant)
    pi = rng.dirichlet(np.full(n_classes, class_concentration))
    y = rng.choice(n_classes, size=n, p=pi)
    if variant == "gaussian":
        g = rng.gamma(alpha0, size=(n_classes, n_features))  # 0 for alpha0 << 1
        if not np.all(g > 0):
            raise ValueError(
                f"a prior draw of sigma2 is beyond float64 (InvGamma shape "
                f"alpha0={alpha0:g} is too heavy-tailed to simulate from); "
                "raise alpha0"
            )
        sigma2 = beta0 / g
        mu = rng.normal(mu0, np.sqrt(sigma2 / kappa0))
        x = rng.normal(mu[y], np.sqrt(sigma2[y])).reshape(n, n_features)
        theta = np.stack([mu, sigma2], axis=-1)
    elif variant == "bernoulli":
        theta = rng.beta(alpha, alpha, size=(n_classes, n_features))
        x = (rng.random((n, n_features)) < theta[y]).astype(float)
    elif variant == "multinomial":
        theta = rng.dirichlet(np.full(n_features, alpha), size=n_classes)
        x = np.array([rng.multinomial(doc_length, theta[c]) for c in y], dtype=float)
        x = x.reshape(n, n_features)
    else:
        theta = np.stack(
            [rng.dirichlet(np.full(n_categories, alpha), size=n_features) for _ in range(n_classes)]
        )  # (C, F, K)
        x = np.empty((n, n_features))
        for j in range(n_features):
            u = rng.random(n)
            x[:, j] = (u[:, None] > np.cumsum(theta[y, j], axis=1)).sum(axis=1)
        x = np.minimum(x, n_categories - 1)
    return np.concatenate([pi, np.ravel(theta)]), x, y
