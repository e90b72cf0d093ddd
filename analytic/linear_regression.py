"""Bayesian linear regression with known noise sd and a Gaussian prior on the weights.

Model (Bishop 2006, sec. 3.1-3.5; Murphy 2012, sec. 7.6.1)::

    w ~ Normal(prior_mean, prior_cov)                 # d weights
    y | w ~ Normal(Phi w, noise_sd^2 I)               # Phi: design matrix (n, d)

The command line uses ``prior_mean = 0`` and ``prior_cov = prior_sd^2 I``.

Posterior (Bishop 2006, eqs. 3.49-3.51)::

    P   = S0^-1 + Phi^T Phi / noise_sd^2              # posterior precision S_N^-1
    m_N = P^-1 (S0^-1 m0 + Phi^T y / noise_sd^2)
        = m0 + P^-1 b,   b = (Phi^T y - Phi^T Phi m0) / noise_sd^2

Everything the posterior needs is in the sufficient statistics
``(n, Phi^T Phi, Phi^T y, y^T y)``, so the cost is O(n d^2) once and O(d^3)
afterwards, and chunks of data merge by addition (:class:`Stats`).

Numerics: the prior covariance and the posterior precision are each factored
once with Cholesky; solves go through ``cho_solve`` / ``solve_triangular`` and
log-determinants come from the factors' diagonals.  ``S0^-1`` is formed as
``cho_solve(L0, I)`` only because the precision ``P`` must exist as a matrix
to be factored.  The maximum-likelihood estimate is computed from ``Phi``
itself by an SVD-based least-squares solve (never the normal equations),
except in :func:`solve_stats`, where only the statistics exist.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from analytic._base import ConjugatePath, ExactAnswer, as_data, check_power, require_positive
from analytic._frozen import freeze
from analytic.sensitivity import gaussian_linear_path

_LOG_2PI = math.log(2.0 * math.pi)


# ---------------------------------------------------------------- data


def design_matrix(
    *,
    x: np.ndarray,
    degree: int | None = None,
    intercept: bool = True,
    names: Sequence[str] | None = None,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Design matrix Phi and feature names from raw inputs (Bishop 2006, eq. 3.3).

    Parameters
    ----------
    x : array of shape (n,) or (n, p)
        Raw inputs, finite.
    degree : int or None
        With ``degree = M`` (only for one input column) the features are the
        powers ``[1, x, x^2, ..., x^M]`` (Bishop 2006, eq. 1.1); the constant
        column is the intercept, so ``intercept=False`` gives ``[x, ..., x^M]``.
        Without ``degree`` the features are the columns of ``x``.
    intercept : bool
        Put a column of ones first (with ``degree``: keep the power 0).
    names : sequence of str, length p, or None
        Input names; default ``"x"`` for a 1-D ``x`` and ``"x0", "x1", ...``
        for a 2-D one.

    Returns
    -------
    phi : array of shape (n, d)
    feature_names : tuple of str, length d
        ``"1"`` for the intercept, the input name for a column or the first
        power, ``"<name>^k"`` for the power k >= 2.
    """
    arr = np.asarray(x, dtype=float)
    if arr.ndim not in (1, 2):
        raise ValueError(
            f"x must be an array of shape (n,) or (n, p), got shape {arr.shape}; "
            f"pass one row per observation"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"x[{', '.join(map(str, idx))}] is {arr[idx]}; every input must be a finite number"
        )
    cols = arr[:, None] if arr.ndim == 1 else arr
    p = cols.shape[1]
    if names is None:
        names = ("x",) if arr.ndim == 1 else tuple(f"x{j}" for j in range(p))
    else:
        names = tuple(str(s) for s in names)
        if len(names) != p:
            raise ValueError(
                f"names must give one name per input column ({p}), "
                f"got {len(names)}: {list(names)}; fix the list"
            )
    if degree is None:
        feats, fnames = cols, names
        if intercept:
            feats = np.column_stack([np.ones(cols.shape[0]), cols])
            fnames = ("1",) + names
    else:
        m = _check_degree(degree)
        if p != 1:
            raise ValueError(
                f"degree needs exactly one input column, got x with {p} columns; "
                f"drop degree or pass one column"
            )
        first = 0 if intercept else 1
        if first > m:
            raise ValueError(
                f"degree must be >= 1 when intercept=False, got {degree!r}; "
                f"raise degree or keep the intercept"
            )
        powers = np.arange(first, m + 1)
        feats = cols**powers  # (n, 1) ** (k,) -> (n, k); 0.0 ** 0 == 1.0
        fnames = tuple("1" if k == 0 else names[0] if k == 1 else f"{names[0]}^{k}" for k in powers)
    if feats.shape[1] == 0:
        raise ValueError(
            "the design matrix must have at least one feature, got none; "
            "pass columns in x or set intercept=True"
        )
    return np.ascontiguousarray(feats, dtype=float), fnames


def _check_degree(degree: Any) -> int:
    real = isinstance(degree, numbers.Real) and not isinstance(degree, bool)
    ok = real and math.isfinite(degree) and degree == int(degree) and degree >= 0
    if not ok:
        raise ValueError(f"degree must be an integer >= 0, got {degree!r}; pass e.g. degree=3")
    return int(degree)


def _as_design(name: str, phi: npt.ArrayLike, d: int | None = None) -> np.ndarray:
    """``phi`` as a finite float array of shape (n, d), d >= 1."""
    arr = np.asarray(phi, dtype=float)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n, d), got shape {arr.shape}; "
            f"build it with design_matrix(x=...)"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column, got shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(
            f"{name} must have {d} columns (one per weight), got shape {arr.shape}; "
            f"build it with the same features as the fit"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}[{i}, {j}] is {arr[i, j]}; every entry of the design matrix "
            f"must be a finite number"
        )
    return arr


def _as_targets(y: npt.ArrayLike, n: int) -> np.ndarray:
    arr = as_data("y", y)
    if arr.size != n:
        raise ValueError(
            f"y must have one value per row of phi ({n}), got {arr.size}; pass matching arrays"
        )
    return arr


def _check_data(phi: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    phi = _as_design("phi", phi)
    return phi, _as_targets(y, phi.shape[0])


@dataclass(frozen=True, eq=False)
class Stats:
    """Sufficient statistics of (Phi, y); chunks merge exactly by addition.

    Attributes
    ----------
    n : int (a real number for a power-scaled likelihood, alpha * n)
    gram : array of shape (d, d)
        ``Phi^T Phi``.
    phi_t_y : array of shape (d,)
        ``Phi^T y``.
    y_t_y : float
        ``y^T y``.  Uncentred: quantities that subtract a fitted part from it
        (residual sums of squares) lose ``log10(y^T y / RSS)`` digits.
    """

    n: float  # a count, or alpha * n for a power-scaled likelihood
    gram: np.ndarray
    phi_t_y: np.ndarray
    y_t_y: float

    @property
    def d(self) -> int:
        return int(self.phi_t_y.shape[0])

    def __add__(self, other: Stats) -> Stats:
        if other.d != self.d:
            raise ValueError(
                f"cannot add Stats with {self.d} and {other.d} features; "
                f"build every chunk with the same design"
            )
        return Stats(
            self.n + other.n,
            self.gram + other.gram,
            self.phi_t_y + other.phi_t_y,
            self.y_t_y + other.y_t_y,
        )


_BLOCK_BYTES = 2**22  # 4 MiB row blocks for the statistics


def sufficient_stats(*, phi: np.ndarray, y: np.ndarray) -> Stats:
    """Statistics of a design ``phi`` of shape (n, d) and targets ``y`` of shape (n,).

    Finiteness is checked on the (d, d) result rather than on the (n, d)
    input: a NaN or inf anywhere in the data makes the statistics non-finite,
    and only then is the input scanned to name the offending entry.  This
    keeps the cost at that of ``Phi^T Phi`` (measured in ``make bench``).
    """
    phi_arr = np.asarray(phi, dtype=float)
    y_arr = np.asarray(y, dtype=float)
    if phi_arr.ndim != 2 or phi_arr.shape[1] == 0 or y_arr.shape != (phi_arr.shape[0],):
        phi_arr, y_arr = _check_data(phi, y)  # raises the precise shape error
    n, d = phi_arr.shape
    gram, phi_t_y, y_t_y = np.zeros((d, d)), np.zeros(d), 0.0
    # Row blocks that fit in cache: Phi^T y then re-reads the block from cache
    # instead of streaming Phi from memory a second time.
    step = max(1, _BLOCK_BYTES // (8 * d))
    with np.errstate(all="ignore"):
        for start in range(0, n, step):
            block, yb = phi_arr[start : start + step], y_arr[start : start + step]
            gram += block.T @ block
            phi_t_y += block.T @ yb
            y_t_y += float(yb @ yb)
    suff = Stats(int(n), gram, phi_t_y, y_t_y)
    if not (
        np.all(np.isfinite(suff.gram))
        and np.all(np.isfinite(suff.phi_t_y))
        and np.isfinite(suff.y_t_y)
    ):
        _check_data(phi_arr, y_arr)  # names the first non-finite entry
        raise ValueError(
            "Phi^T Phi or Phi^T y overflowed: the inputs are too large to square "
            "in float64; rescale them (e.g. standardise the columns)"
        )
    return suff


def _check_stats(suff: Stats) -> Stats:
    if not isinstance(suff, Stats):
        raise TypeError(
            f"suff must be a linear_regression.Stats, got {type(suff).__name__}; "
            f"build it with sufficient_stats(phi=..., y=...)"
        )
    return suff


# ---------------------------------------------------------------- MLE and ridge


@dataclass(frozen=True, eq=False)
class MLE:
    """Least-squares / maximum-likelihood fit (Bishop 2006, eqs. 3.15 and 3.21).

    Attributes
    ----------
    w : array of shape (d,) or None
        ``argmin ||y - Phi w||^2``; None when it is not unique (rank < d:
        more features than rows, duplicated or collinear columns).
    noise_var : float or None
        ``RSS / n``, the MLE of the noise *variance* (biased; zero when
        n == d); None exactly when ``w`` is None.
    rank : int
        Numerical rank of Phi.
    unique : bool
        ``rank == d``.
    rss : float
        The minimum residual sum of squares (defined even when ``w`` is not).
    """

    w: np.ndarray | None
    noise_var: float | None
    rank: int
    unique: bool
    rss: float


def mle(*, phi: np.ndarray, y: np.ndarray) -> MLE:
    """Least squares on ``phi`` of shape (n, d) itself (LAPACK gelsd, SVD-based).

    The rank uses numpy's default cut-off: singular values below
    ``max(n, d) * eps * s_max`` count as zero.
    """
    phi, y = _check_data(phi, y)
    n, d = phi.shape
    if n == 0:
        return MLE(w=None, noise_var=None, rank=0, unique=False, rss=0.0)
    w, _, rank, _ = np.linalg.lstsq(phi, y, rcond=None)
    resid = y - phi @ w
    rss = float(resid @ resid)
    if rank < d:
        return MLE(w=None, noise_var=None, rank=int(rank), unique=False, rss=rss)
    return MLE(w=w, noise_var=rss / n, rank=int(rank), unique=True, rss=rss)


def _mle_from_stats(suff: Stats) -> MLE:
    """Normal equations ``Phi^T Phi w = Phi^T y`` through one eigendecomposition.

    Less accurate than :func:`mle`: the error grows as ``cond(Phi)^2 eps``
    rather than ``cond(Phi) eps``, and ``RSS = y^T y - w^T Phi^T y`` cancels
    when the fit is good.  Eigenvalues of ``Phi^T Phi`` below
    ``max(n, d) eps lambda_max`` count as zero, i.e. ``cond(Phi)`` beyond about
    ``1 / sqrt(max(n, d) eps)`` (~1e7) is treated as rank deficient; the
    normal equations carry no correct digits there.  RSS is clipped at 0.
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    n, d = suff.n, suff.d
    if n == 0:
        return MLE(w=None, noise_var=None, rank=0, unique=False, rss=0.0)
    lam, vec = linalg.eigh(suff.gram)
    keep = lam > max(n, d) * np.finfo(float).eps * max(lam[-1], 0.0)
    rank = int(keep.sum())
    coef = vec[:, keep].T @ suff.phi_t_y
    w = vec[:, keep] @ (coef / lam[keep])  # minimum-norm solution
    rss = max(suff.y_t_y - float(w @ suff.phi_t_y), 0.0)
    if rank < d:
        return MLE(w=None, noise_var=None, rank=rank, unique=False, rss=rss)
    return MLE(w=w, noise_var=rss / n, rank=rank, unique=True, rss=rss)


def ridge(*, phi: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Ridge solution ``argmin ||y - Phi w||^2 + lam ||w||^2`` (Bishop 2006, eq. 3.28).

    Solved as the least-squares problem ``[Phi; sqrt(lam) I] w ~ [y; 0]``
    (unique for every lam > 0), independently of :func:`update`.  With
    ``lam = noise_sd^2 / prior_sd^2`` it is the MAP under the prior
    ``Normal(0, prior_sd^2 I)``.

    Returns
    -------
    w : array of shape (d,)
    """
    phi, y = _check_data(phi, y)
    lam = require_positive("lam", lam)
    d = phi.shape[1]
    a = np.vstack([phi, math.sqrt(lam) * np.eye(d)])
    b = np.concatenate([y, np.zeros(d)])
    return np.linalg.lstsq(a, b, rcond=None)[0]


# ---------------------------------------------------------------- prior


@dataclass(frozen=True, eq=False)
class _Prior:
    """A Gaussian prior factored once: ``cov = chol chol^T``, ``prec = cov^-1``."""

    mean: np.ndarray
    cov: np.ndarray
    chol: np.ndarray
    prec: np.ndarray

    @property
    def log_det(self) -> float:
        return 2.0 * float(np.sum(np.log(np.diag(self.chol))))


def _factor_prior(
    *,
    prior_mean: npt.ArrayLike | None,
    prior_cov: npt.ArrayLike | None,
    d: int,
    mean_name: str = "prior_mean",
    cov_name: str = "prior_cov",
) -> _Prior:
    """Validate a prior mean (scalar or (d,)) and covariance (d, d) and factor it."""
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    m0 = np.asarray(0.0 if prior_mean is None else prior_mean, dtype=float)
    if m0.ndim == 0:
        m0 = np.full(d, float(m0))
    if m0.shape != (d,):
        raise ValueError(
            f"{mean_name} must be one number or an array of shape ({d},), "
            f"got shape {m0.shape}; pass one value per weight"
        )
    if not np.all(np.isfinite(m0)):
        raise ValueError(f"{mean_name} must be finite, got {m0.tolist()}; pass finite values")
    s0 = np.asarray(prior_cov, dtype=float)
    if s0.shape != (d, d):
        raise ValueError(
            f"{cov_name} must be an array of shape ({d}, {d}), got shape {s0.shape}; "
            f"pass one row and column per weight"
        )
    if not np.all(np.isfinite(s0)):
        raise ValueError(f"{cov_name} must be finite, got {s0.tolist()}; pass finite values")
    scale = float(np.max(np.abs(s0))) if s0.size else 0.0
    if not np.allclose(s0, s0.T, rtol=0.0, atol=1e-12 * scale):
        raise ValueError(f"{cov_name} must be symmetric, got {s0.tolist()}; pass (C + C.T) / 2")
    s0 = 0.5 * (s0 + s0.T)
    try:
        chol = linalg.cholesky(s0, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            f"{cov_name} must be positive definite, got {s0.tolist()}; "
            f"pass a covariance with all eigenvalues > 0"
        ) from None
    prec = linalg.cho_solve((chol, True), np.eye(d))
    return _Prior(mean=m0, cov=s0, chol=chol, prec=0.5 * (prec + prec.T))


def _resolve_prior(
    *,
    d: int,
    prior_sd: float | None,
    prior_mean: npt.ArrayLike | None,
    prior_cov: npt.ArrayLike | None,
    sd_name: str = "prior_sd",
    cov_name: str = "prior_cov",
) -> _Prior:
    """Exactly one of an isotropic sd (cov = sd^2 I) or a full covariance."""
    if (prior_sd is None) == (prior_cov is None):
        got = "both" if prior_sd is not None else "neither"
        raise ValueError(
            f"give exactly one of {sd_name} or {cov_name}, got {got}; e.g. {sd_name}=1.0"
        )
    if prior_sd is not None:
        prior_cov = require_positive(sd_name, prior_sd) ** 2 * np.eye(d)
    return _factor_prior(prior_mean=prior_mean, prior_cov=prior_cov, d=d, cov_name=cov_name)


def _posterior_factor(
    suff: Stats, prior: _Prior, noise_var: float
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and lower Cholesky factor of the posterior precision.

    ``P = S0^-1 + gram / noise_var``; ``m_N = m0 + P^-1 (phi_t_y - gram m0) / noise_var``
    (the second form of Bishop's eq. 3.50, which never adds ``S0^-1 m0``
    to a data term of a different size).  Shared with linear_regression_nig
    (``noise_var = 1`` there).
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    if suff.d != prior.mean.size:
        raise ValueError(
            f"the statistics have {suff.d} features but the prior has "
            f"{prior.mean.size}; build both from the same design"
        )
    prec = prior.prec + suff.gram / noise_var
    try:
        prec_chol = linalg.cholesky(0.5 * (prec + prec.T), lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            "the posterior precision is not numerically positive definite; "
            "the prior covariance is too ill-conditioned: pass a better-"
            "conditioned prior_cov"
        ) from None
    b = (suff.phi_t_y - suff.gram @ prior.mean) / noise_var
    return prior.mean + linalg.cho_solve((prec_chol, True), b), prec_chol


def _quad_from_stats(suff: Stats, prior: _Prior, noise_var: float, prec_chol: np.ndarray) -> float:
    """``r^T (noise_var I + Phi S0 Phi^T)^-1 r`` with ``r = y - Phi m0``, from statistics.

    Woodbury: ``= r^T r / noise_var - b^T P^-1 b``, ``b = Phi^T r / noise_var``,
    ``r^T r = y^T y - 2 m0^T Phi^T y + m0^T gram m0``.  The two terms cancel
    to the residual part; relative error ~ eps r^T r / result.  Clipped at 0
    (it is a quadratic form of a positive definite matrix).
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    m0 = prior.mean
    rtr = suff.y_t_y - 2.0 * float(m0 @ suff.phi_t_y) + float(m0 @ suff.gram @ m0)
    b = (suff.phi_t_y - suff.gram @ m0) / noise_var
    c = linalg.solve_triangular(prec_chol, b, lower=True)
    return max(rtr / noise_var - float(c @ c), 0.0)


def _quad_from_data(
    phi: np.ndarray, y: np.ndarray, prior: _Prior, noise_var: float, mean: np.ndarray
) -> float:
    """The same quadratic form in residual form, a sum of non-negative terms:

    ``||y - Phi m_N||^2 / noise_var + (m_N - m0)^T S0^-1 (m_N - m0)``
    (the minimum over w of the negative log joint; Bishop 2006, eq. 3.82).
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    r = y - phi @ mean
    u = linalg.solve_triangular(prior.chol, mean - prior.mean, lower=True)
    return float(r @ r) / noise_var + float(u @ u)


def _log_det_ratio(prior: _Prior, prec_chol: np.ndarray) -> float:
    """``log |S0| + log |P| = log |I + S0 gram / noise_var|`` (>= 0)."""
    return prior.log_det + 2.0 * float(np.sum(np.log(np.diag(prec_chol))))


# ---------------------------------------------------------------- posterior


@dataclass(frozen=True, eq=False)
class GaussianPosterior:
    """Normal(mean, cov) over the weights ``w[0], ..., w[d-1]``.

    Attributes
    ----------
    mean : array of shape (d,)
        ``m_N``; also the mode (MAP).
    cov : array of shape (d, d)
        ``S_N``.
    prec_chol : array of shape (d, d)
        Lower Cholesky factor L of the precision, ``L L^T = S_N^-1``;
        ``logpdf`` and ``sample`` use it (``w = m_N + L^-T z``).
    """

    mean: np.ndarray
    cov: np.ndarray
    prec_chol: np.ndarray
    is_gaussian: bool = True
    moments_below: float = float("inf")
    mode_interior: bool = True

    @property
    def d(self) -> int:
        return int(self.mean.shape[0])

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(f"w[{i}]" for i in range(self.d))

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(self.d))

    @property
    def mode(self) -> np.ndarray:
        return self.mean

    def marginal(self, index: int) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(stats.norm, self.mean[index], math.sqrt(self.cov[index, index]))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log density at ``x`` of shape (..., d); returns shape (...).

        ``-d/2 log 2 pi + sum log diag L - ||L^T (x - m)||^2 / 2``.
        """
        z = (np.asarray(x, dtype=float) - self.mean) @ self.prec_chol
        half_log_det_prec = float(np.sum(np.log(np.diag(self.prec_chol))))
        return -0.5 * self.d * _LOG_2PI + half_log_det_prec - 0.5 * np.sum(z * z, axis=-1)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Exact draws, array of shape (size, d): ``m + L^-T z`` has covariance ``(L L^T)^-1``."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        z = rng.standard_normal((self.d, size))
        return self.mean + linalg.solve_triangular(self.prec_chol.T, z, lower=False).T


def _make_posterior(mean: np.ndarray, prec_chol: np.ndarray) -> GaussianPosterior:
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    cov = linalg.cho_solve((prec_chol, True), np.eye(mean.size))
    return GaussianPosterior(mean=mean, cov=0.5 * (cov + cov.T), prec_chol=prec_chol)


def update(
    *, suff: Stats, noise_sd: float, prior_mean: np.ndarray | float, prior_cov: np.ndarray
) -> GaussianPosterior:
    """Conjugate update (Bishop 2006, eqs. 3.49-3.51); the result is the next prior.

    Parameters
    ----------
    suff : Stats
        With d features.
    noise_sd : float
        Known noise standard deviation (> 0).
    prior_mean : float or array of shape (d,)
    prior_cov : array of shape (d, d)
        Symmetric positive definite.
    """
    suff = _check_stats(suff)
    noise_var = require_positive("noise_sd", noise_sd) ** 2
    prior = _factor_prior(prior_mean=prior_mean, prior_cov=prior_cov, d=suff.d)
    return _make_posterior(*_posterior_factor(suff, prior, noise_var))


def log_evidence(
    *, suff: Stats, noise_sd: float, prior_mean: np.ndarray | float, prior_cov: np.ndarray
) -> float:
    """log p(y) = log Normal(y; Phi m0, s^2 I + Phi S0 Phi^T) from statistics, in O(d^3).

    With ``s = noise_sd``, ``P = S0^-1 + gram / s^2``, ``r = y - Phi m0`` and
    ``b = Phi^T r / s^2`` (Bishop 2006, eq. 3.86 for a general Gaussian prior)::

        log p(y) = -n/2 log(2 pi s^2) - (log|S0| + log|P|)/2
                   - (r^T r / s^2 - b^T P^-1 b)/2

    The determinant follows from the matrix determinant lemma,
    ``|s^2 I + Phi S0 Phi^T| = s^(2n) |S0| |P|``, and the quadratic form from
    Woodbury, ``(s^2 I + Phi S0 Phi^T)^-1 = I/s^2 - Phi P^-1 Phi^T / s^4``
    (equivalently, completing the square in w: the form equals
    ``||y - Phi m_N||^2 / s^2 + (m_N - m0)^T S0^-1 (m_N - m0)``, which
    :func:`solve` uses when the raw data are at hand).  ``r^T r`` needs the
    uncentred ``y^T y``: with a good fit the two terms of the quadratic form
    cancel and lose ``log10(y^T y / RSS)`` digits.  No n x n matrix is formed.
    """
    suff = _check_stats(suff)
    noise_var = require_positive("noise_sd", noise_sd) ** 2
    prior = _factor_prior(prior_mean=prior_mean, prior_cov=prior_cov, d=suff.d)
    _, prec_chol = _posterior_factor(suff, prior, noise_var)
    quad = _quad_from_stats(suff, prior, noise_var, prec_chol)
    return _gaussian_log_evidence(suff.n, noise_var, _log_det_ratio(prior, prec_chol), quad)


def _gaussian_log_evidence(n: float, noise_var: float, log_det_ratio: float, quad: float) -> float:
    return float(-0.5 * n * (_LOG_2PI + math.log(noise_var)) - 0.5 * log_det_ratio - 0.5 * quad)


def effective_parameters(*, suff: Stats, noise_sd: float, prior_cov: np.ndarray) -> float:
    """Effective number of well-determined parameters (Bishop 2006, eq. 3.91).

    ``gamma = d - trace(S_N S0^-1) = trace(S_N gram) / s^2`` (since
    ``S_N^-1 = S0^-1 + gram / s^2``), computed in the second form, a sum of
    non-negative terms without cancellation.  For ``S0 = I / alpha`` it is
    ``sum_i lambda_i / (alpha + lambda_i)`` over the eigenvalues lambda_i of
    ``gram / s^2``; always in [0, d].
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    suff = _check_stats(suff)
    noise_var = require_positive("noise_sd", noise_sd) ** 2
    prior = _factor_prior(prior_mean=None, prior_cov=prior_cov, d=suff.d)
    _, prec_chol = _posterior_factor(suff, prior, noise_var)
    return float(np.trace(linalg.cho_solve((prec_chol, True), suff.gram)) / noise_var)


# ---------------------------------------------------------------- predictive


def predictive(
    *, posterior: GaussianPosterior, phi_new: np.ndarray, noise_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior predictive mean and variance at each row of ``phi_new`` (m, d).

    ``mean = Phi_new m_N``, ``var = s^2 + diag(Phi_new S_N Phi_new^T)``
    (Bishop 2006, eqs. 3.58-3.59), the diagonal as column norms of
    ``L^-1 Phi_new^T`` with ``L L^T = S_N^-1``; no m x m matrix is formed.

    Returns
    -------
    mean, var : arrays of shape (m,)
    """
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    noise_var = require_positive("noise_sd", noise_sd) ** 2
    phi_new = _as_design("phi_new", phi_new, d=posterior.d)
    a = linalg.solve_triangular(posterior.prec_chol, phi_new.T, lower=True)
    return phi_new @ posterior.mean, noise_var + np.sum(a * a, axis=0)


def predictive_cov(
    *, posterior: GaussianPosterior, phi_new: np.ndarray, noise_sd: float
) -> np.ndarray:
    """Joint predictive covariance ``Phi_new S_N Phi_new^T + s^2 I``, shape (m, m)."""
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    noise_var = require_positive("noise_sd", noise_sd) ** 2
    phi_new = _as_design("phi_new", phi_new, d=posterior.d)
    a = linalg.solve_triangular(posterior.prec_chol, phi_new.T, lower=True)
    return a.T @ a + noise_var * np.eye(phi_new.shape[0])


@dataclass(frozen=True, eq=False)
class LinearPredictive:
    """Posterior predictive ``y_new | D ~ Normal(phi^T m_N, s^2 + phi^T S_N phi)``.

    Every method takes the new design rows ``phi_new`` of shape (m, d); a
    call without them (as a scalar predictive's ``mean()``) raises TypeError.
    """

    posterior: GaussianPosterior
    noise_sd: float

    def at(self, phi_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mean, var), each of shape (m,)."""
        return predictive(posterior=self.posterior, phi_new=phi_new, noise_sd=self.noise_sd)

    def cov(self, phi_new: np.ndarray) -> np.ndarray:
        """Joint covariance of the m new observations, shape (m, m)."""
        return predictive_cov(posterior=self.posterior, phi_new=phi_new, noise_sd=self.noise_sd)

    def mean(self, phi_new: np.ndarray) -> np.ndarray:
        return self.at(phi_new)[0]

    def var(self, phi_new: np.ndarray) -> np.ndarray:
        return self.at(phi_new)[1]

    def logpdf(self, y_new: np.ndarray, phi_new: np.ndarray) -> np.ndarray:
        """Marginal log density of each y_new[k] at row k of phi_new; shape (m,)."""
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        mean, var = self.at(phi_new)
        return stats.norm.logpdf(np.asarray(y_new, dtype=float), mean, np.sqrt(var))


# ---------------------------------------------------------------- one call


@dataclass(frozen=True, eq=False)
class LinearRegressionFit:
    """Everything about one data set under one prior.

    Attributes
    ----------
    posterior : GaussianPosterior
    mle : MLE
        Including ``noise_var = RSS / n`` and the rank.
    map : array of shape (d,)
        Posterior mode = mean; the ridge solution when ``m0 = 0`` and
        ``S0 = prior_sd^2 I``.
    ridge_lambda : float or None
        ``noise_sd^2 / prior_sd^2`` for an isotropic prior; None when a full
        ``prior_cov`` was given.
    log_evidence : float
    effective_parameters : float
        gamma of Bishop 2006, eq. 3.91.
    predictive : LinearPredictive
    """

    posterior: GaussianPosterior
    mle: MLE
    map: np.ndarray
    ridge_lambda: float | None
    log_evidence: float
    effective_parameters: float
    predictive: LinearPredictive

    def answer(self) -> ExactAnswer:
        """The :class:`analytic.ExactAnswer` the compare layer reads."""
        return ExactAnswer(
            posterior=self.posterior,
            mle=self.mle.w,
            log_evidence=self.log_evidence,
            predictive=self.predictive,
        )


def _fit(
    suff: Stats,
    mle_fit: MLE,
    noise_sd: float,
    prior: _Prior,
    prior_sd: float | None,
    data: tuple[np.ndarray, np.ndarray] | None,
) -> LinearRegressionFit:
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    noise_var = noise_sd**2
    mean, prec_chol = _posterior_factor(suff, prior, noise_var)
    post = _make_posterior(mean, prec_chol)
    if data is None:
        quad = _quad_from_stats(suff, prior, noise_var, prec_chol)
    else:
        quad = _quad_from_data(*data, prior, noise_var, mean)
    gamma = float(np.trace(linalg.cho_solve((prec_chol, True), suff.gram)) / noise_var)
    return LinearRegressionFit(
        posterior=post,
        mle=mle_fit,
        map=post.mean,
        ridge_lambda=None if prior_sd is None else noise_var / float(prior_sd) ** 2,
        log_evidence=_gaussian_log_evidence(
            suff.n, noise_var, _log_det_ratio(prior, prec_chol), quad
        ),
        effective_parameters=gamma,
        predictive=LinearPredictive(posterior=post, noise_sd=noise_sd),
    )


def fit(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    noise_sd: float,
    prior_sd: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> LinearRegressionFit:
    """Posterior, MLE, MAP, evidence, gamma and predictive for ``phi`` (n, d) and ``y`` (n,).

    Give exactly one of ``prior_sd`` (prior ``Normal(prior_mean, prior_sd^2 I)``)
    or ``prior_cov`` (d, d); ``prior_mean`` defaults to 0.  The MLE comes
    from least squares on ``phi`` and the evidence's quadratic form from the
    residuals (see :func:`log_evidence`), so nothing cancels.
    """
    phi, y = _check_data(phi, y)
    noise_sd = require_positive("noise_sd", noise_sd)
    prior = _resolve_prior(
        d=phi.shape[1], prior_sd=prior_sd, prior_mean=prior_mean, prior_cov=prior_cov
    )
    return _fit(
        sufficient_stats(phi=phi, y=y), mle(phi=phi, y=y), noise_sd, prior, prior_sd, (phi, y)
    )


def fit_stats(
    *,
    suff: Stats,
    noise_sd: float,
    prior_sd: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> LinearRegressionFit:
    """As :func:`fit`, from sufficient statistics only (data too large for memory).

    Less accurate than :func:`fit`: the MLE solves the normal equations
    (error ~ ``cond(Phi)^2 eps``, rank decided on the eigenvalues of
    ``Phi^T Phi``) and the evidence uses the cancelling Woodbury form.
    """
    suff = _check_stats(suff)
    noise_sd = require_positive("noise_sd", noise_sd)
    prior = _resolve_prior(d=suff.d, prior_sd=prior_sd, prior_mean=prior_mean, prior_cov=prior_cov)
    return _fit(suff, _mle_from_stats(suff), noise_sd, prior, prior_sd, None)


def solve(
    *,
    phi: np.ndarray,
    y: np.ndarray,
    noise_sd: float,
    prior_sd: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> ExactAnswer:
    """:func:`fit` as an :class:`analytic.ExactAnswer` (mle = the weight vector or None)."""
    return fit(
        phi=phi,
        y=y,
        noise_sd=noise_sd,
        prior_sd=prior_sd,
        prior_mean=prior_mean,
        prior_cov=prior_cov,
    ).answer()


def solve_stats(
    *,
    suff: Stats,
    noise_sd: float,
    prior_sd: float | None = None,
    prior_mean: np.ndarray | float | None = None,
    prior_cov: np.ndarray | None = None,
) -> ExactAnswer:
    """:func:`fit_stats` as an :class:`analytic.ExactAnswer`; see its accuracy note."""
    return fit_stats(
        suff=suff, noise_sd=noise_sd, prior_sd=prior_sd, prior_mean=prior_mean, prior_cov=prior_cov
    ).answer()


# ---------------------------------------------------------------- simulation


def simulate(
    rng: np.random.Generator, *, phi: np.ndarray, noise_sd: float, prior_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """Draw w ~ Normal(0, prior_sd^2 I), then y ~ Normal(Phi w, noise_sd^2 I).

    Returns
    -------
    w : array of shape (d,)
    y : array of shape (n,)
    """
    phi = _as_design("phi", phi)
    noise_sd = require_positive("noise_sd", noise_sd)
    prior_sd = require_positive("prior_sd", prior_sd)
    w = prior_sd * rng.standard_normal(int(phi.shape[1]))
    return w, phi @ w + noise_sd * rng.standard_normal(phi.shape[0])


def sinusoid(
    rng: np.random.Generator, *, n: int = 25, noise_sd: float = 0.3
) -> tuple[np.ndarray, np.ndarray]:
    """Bishop's toy data (2006, sec. 1.1 and 3.3): x ~ Uniform(0, 1) sorted,
    ``y = sin(2 pi x) + Normal(0, noise_sd^2)``.

    Returns
    -------
    x, y : arrays of shape (n,)
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}; pass e.g. n=25")
    noise_sd = require_positive("noise_sd", noise_sd)
    x = np.sort(rng.uniform(0.0, 1.0, size=int(n)))
    return x, np.sin(2.0 * np.pi * x) + noise_sd * rng.standard_normal(int(n))


# ---------------------------------------------------------------- prior sensitivity
def sensitivity_path(
    *,
    suff: Stats,
    noise_sd: npt.ArrayLike,
    prior_sd: npt.ArrayLike,
    prior_mean: np.ndarray | float = 0.0,
    interval: float = 0.95,
) -> ConjugatePath:
    """The exact posterior of ``w`` at G values of (noise_sd, prior_sd) at once.

    One eigendecomposition of ``Phi^T Phi`` serves the whole grid
    (:func:`analytic.sensitivity.gaussian_linear_path`); the posterior is
    Gaussian, so its mode is its mean and the central ``interval`` interval
    is mean +- z sd.

    Parameters
    ----------
    suff : Stats
    noise_sd, prior_sd : float or array of shape (G,)
        Standard deviations (not variances), broadcast against each other, > 0.
    prior_mean : float or array of shape (d,)
    interval : float
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = _check_stats(suff)
    noise_var = np.asarray(noise_sd, dtype=float) ** 2
    prior_var = np.asarray(prior_sd, dtype=float) ** 2
    path = gaussian_linear_path(
        gram=suff.gram,
        phi_t_y=suff.phi_t_y,
        y_t_y=suff.y_t_y,
        n=suff.n,
        noise_var=noise_var,
        prior_var=prior_var,
        prior_mean=prior_mean,
    )
    z = float(stats.norm.ppf(0.5 + interval / 2.0))
    return ConjugatePath(
        mean=path.mean,
        sd=path.sd,
        lower=path.mean - z * path.sd,
        upper=path.mean + z * path.sd,
        mode=path.mean.copy(),
        log_evidence=path.log_evidence,
    )


def power_scaled(
    *,
    suff: Stats,
    noise_sd: float,
    prior_sd: float,
    prior_mean: np.ndarray | float = 0.0,
    alpha: float,
    component: str,
) -> GaussianPosterior:
    """The posterior under prior^alpha or likelihood^alpha (Kallioinen et al. 2023).

    N(m0, prior_sd^2 I)^alpha = N(m0, prior_sd^2/alpha I); the Gaussian
    likelihood^alpha has noise variance noise_sd^2/alpha.  ``component`` is
    ``"prior"`` or ``"likelihood"``.
    """
    alpha = check_power(alpha, component)
    suff = _check_stats(suff)
    root = math.sqrt(alpha)
    if component == "prior":
        prior_sd = prior_sd / root
    else:
        noise_sd = noise_sd / root
    return update(
        suff=suff, noise_sd=noise_sd, prior_mean=prior_mean, prior_cov=prior_sd**2 * np.eye(suff.d)
    )


def log_densities(
    *,
    suff: Stats,
    theta: np.ndarray,
    noise_sd: float,
    prior_sd: float,
    prior_mean: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The log prior and log likelihood at ``theta`` = w, array of shape (..., d).

    log N(w; m0, prior_sd^2 I), and the log likelihood up to a constant from
    the statistics: -(y^T y - 2 w^T Phi^T y + w^T Phi^T Phi w) / (2 noise_sd^2).
    Returns two arrays of shape (...).
    """
    from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

    suff = _check_stats(suff)
    theta = np.asarray(theta, dtype=float)
    log_prior = stats.norm.logpdf(theta, prior_mean, prior_sd).sum(-1)
    quad = (
        suff.y_t_y
        - 2.0 * theta @ suff.phi_t_y
        + np.einsum("...i,ij,...j->...", theta, suff.gram, theta)
    )
    return log_prior, -0.5 * quad / noise_sd**2
