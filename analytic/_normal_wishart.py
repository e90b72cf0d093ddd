"""The Normal-Wishart algebra shared by analytic.gaussian_mixture and
analytic.gaussian_classifier: the prior, per-group statistics, the conjugate
update's ingredients, the complete-data MLE, and the input checks both use.

Private: the public names are re-exported by :mod:`analytic.gaussian_mixture`
(``NormalWishartPrior``).  Pure functions and frozen objects, no I/O.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def as_points(name: str, x: Any, *, d: int | None = None, min_rows: int = 0) -> np.ndarray:
    """``x`` as a finite float array of shape (n, d), or a ValueError naming the fix."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be an array of shape (n, d), got shape {arr.shape}; "
            f"pass one row per observation (x[:, None] for one-dimensional data)"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column, got shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(
            f"{name} must have {d} columns (the dimension of the mixture), "
            f"got shape {arr.shape}; pass data of the same dimension"
        )
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows, got {arr.shape[0]}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}[{i}, {j}] is {arr[i, j]}; every coordinate must be a "
            f"finite number: drop or impute that row"
        )
    return arr


def check_int(
    name: str, value: Any, *, low: int, high: int | None = None, high_what: str = ""
) -> int:
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not ok:
        raise ValueError(
            f"{name} must be an integer >= {low}, got {value!r}; pass e.g. {name}={max(low, 2)}"
        )
    if value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(
            f"{name} must be <= {high_what} ({high}), got {value!r}; use fewer {name} or more data"
        )
    return int(value)


def check_real(name: str, value: Any, *, low: float, strict: bool, why: str = "") -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    bad = (not math.isfinite(v)) or (v <= low if strict else v < low)
    if bad:
        op = ">" if strict else ">="
        raise ValueError(
            f"{name} must be a finite number {op} {low:g}{why}, got {value!r}; "
            f"pass a value {op} {low:g}"
        )
    return v


def check_labels(labels: Any, n: int, k_count: int) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.shape != (n,):
        raise ValueError(f"labels must have shape ({n},) (one per row of x), got shape {arr.shape}")
    with np.errstate(invalid="ignore"):
        codes = arr.astype(np.int64) if arr.size else np.zeros(0, dtype=np.int64)
    bad = (codes != arr) | (codes < 0) | (codes >= k_count)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"labels[{i}] = {arr[i]} is not a component in 0..{k_count - 1}; pass integer labels"
        )
    return codes


def cholesky_spd(name: str, matrix: np.ndarray, *, remedy: str) -> np.ndarray:
    """Lower Cholesky factor of a symmetric positive definite (d, d) matrix."""
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    scale = float(np.max(np.abs(matrix))) if matrix.size else 0.0
    if not np.allclose(matrix, matrix.T, rtol=0.0, atol=1e-12 * scale):
        raise ValueError(f"{name} must be symmetric, got {matrix.tolist()}; pass (A + A.T) / 2")
    try:
        return linalg.cholesky(0.5 * (matrix + matrix.T), lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            f"{name} must be symmetric positive definite, got {matrix.tolist()}; {remedy}"
        ) from None


def frozen(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float)  # a private copy
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class NormalWishartPrior:
    """Dirichlet x Normal-Wishart prior of a K-component mixture in R^d.

    ``w ~ Dirichlet(alpha 1_K)``; for every component
    ``Lambda_k ~ Wishart(nu0, W0)`` with ``W0 = psi0^-1`` and
    ``mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)``
    (Bishop 2006, eqs. 10.39-10.40; Murphy 2012, sec. 4.6.3).

    Attributes
    ----------
    alpha : float
        Dirichlet concentration of *each* weight, > 0 (MAP-EM needs >= 1).
    m0 : array of shape (d,)
        Prior mean of every component mean.
    kappa0 : float
        Prior pseudo-count of the means, > 0.
    nu0 : float
        Wishart degrees of freedom, > d - 1 (MAP-EM needs > d; PyMC's
        Wishart needs an integer, checked by the caller).
    psi0 : array of shape (d, d)
        ``W0^-1``, symmetric positive definite; ``E[Lambda_k] = nu0 psi0^-1``.
    psi0_chol : array of shape (d, d)
        Lower Cholesky factor of ``psi0`` (computed).
    """

    alpha: float
    m0: np.ndarray
    kappa0: float
    nu0: float
    psi0: np.ndarray
    psi0_chol: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        alpha = check_real("alpha", self.alpha, low=0.0, strict=True)
        m0 = np.asarray(self.m0, dtype=float)
        if m0.ndim != 1 or m0.size == 0:
            raise ValueError(
                f"m0 must be an array of shape (d,), got shape {m0.shape}; "
                f"pass one prior mean per coordinate"
            )
        if not np.all(np.isfinite(m0)):
            raise ValueError(f"m0 must be finite, got {m0.tolist()}; pass finite values")
        d = m0.size
        kappa0 = check_real("kappa0", self.kappa0, low=0.0, strict=True)
        nu0 = check_real(
            "nu0",
            self.nu0,
            low=d - 1.0,
            strict=True,
            why=f" (d - 1 with d = {d}) for a proper Wishart",
        )
        psi0 = np.asarray(self.psi0, dtype=float)
        if psi0.shape != (d, d):
            raise ValueError(
                f"psi0 must be an array of shape ({d}, {d}), got shape "
                f"{psi0.shape}; pass one row and column per coordinate"
            )
        if not np.all(np.isfinite(psi0)):
            raise ValueError(f"psi0 must be finite, got {psi0.tolist()}; pass finite values")
        chol = cholesky_spd(
            "psi0",
            psi0,
            remedy="pass a matrix with all eigenvalues > 0, "
            "e.g. a diagonal one (default_prior builds one from the data)",
        )
        for name, value in (
            ("alpha", alpha),
            ("m0", frozen(m0)),
            ("kappa0", kappa0),
            ("nu0", nu0),
            ("psi0", frozen(0.5 * (psi0 + psi0.T))),
            ("psi0_chol", frozen(chol)),
        ):
            object.__setattr__(self, name, value)

    @property
    def d(self) -> int:
        return int(self.m0.shape[0])

    @property
    def w0(self) -> np.ndarray:
        """The Wishart scale ``W0 = psi0^-1``, shape (d, d), by two triangular solves."""
        from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

        w = linalg.cho_solve((self.psi0_chol, True), np.eye(self.d))
        return 0.5 * (w + w.T)

    @property
    def log_det_psi0(self) -> float:
        return 2.0 * float(np.sum(np.log(np.diag(self.psi0_chol))))


def require_prior(prior: Any) -> NormalWishartPrior:
    if not isinstance(prior, NormalWishartPrior):
        raise TypeError(
            f"prior must be a gaussian_mixture.NormalWishartPrior, got "
            f"{type(prior).__name__}; build one with default_prior(x=..., "
            f"components=...)"
        )
    return prior


def check_prior(prior: Any, d: int) -> NormalWishartPrior:
    prior = require_prior(prior)
    if prior.d != d:
        raise ValueError(
            f"prior is for {prior.d} dimensions but the data have {d} columns; "
            f"build the prior from the same data"
        )
    return prior


@dataclass(frozen=True, eq=False)
class Groups:
    counts: np.ndarray  # (K,)
    xbar: np.ndarray  # (K, d), zero where empty
    scatter: np.ndarray  # (K, d, d) about xbar


def groups(x: np.ndarray, labels: np.ndarray, k_count: int) -> Groups:
    d = x.shape[1]
    counts = np.zeros(k_count)
    xbar = np.zeros((k_count, d))
    scatter = np.zeros((k_count, d, d))
    for k in range(k_count):
        xk = x[labels == k]
        counts[k] = xk.shape[0]
        if xk.shape[0]:
            xbar[k] = xk.mean(axis=0)
            c = xk - xbar[k]
            scatter[k] = c.T @ c
    return Groups(counts, xbar, scatter)


def update(g: Groups, prior: NormalWishartPrior) -> dict[str, np.ndarray]:
    """Conjugate update per group: Dirichlet and Normal-Wishart posterior parameters.

    ``alpha_k = alpha + N_k``, ``kappa_k = kappa0 + N_k``,
    ``m_k = (kappa0 m0 + N_k xbar_k) / kappa_k``, ``nu_k = nu0 + N_k``,
    ``psi_k = psi0 + S_k + kappa0 N_k / kappa_k (xbar_k - m0)(xbar_k - m0)^T``
    (Bishop 2006, eqs. 10.58-10.63; Murphy 2012, sec. 4.6.3.3).  Returns arrays
    of shape (K,), (K, d), (K,), (K,), (K, d, d) keyed ``alpha, m, kappa, nu, psi``.
    """
    n_k = g.counts
    kappa = prior.kappa0 + n_k
    m = (prior.kappa0 * prior.m0 + n_k[:, None] * g.xbar) / kappa[:, None]
    dev = g.xbar - prior.m0
    shrink = prior.kappa0 * n_k / kappa
    psi = prior.psi0 + g.scatter + shrink[:, None, None] * dev[:, :, None] * dev[:, None, :]
    return {"alpha": prior.alpha + n_k, "m": m, "kappa": kappa, "nu": prior.nu0 + n_k, "psi": psi}


def log_evidence(
    g: Groups, prior: NormalWishartPrior, *, kappa: np.ndarray, nu: np.ndarray, psi_chol: np.ndarray
) -> float:
    """log p(labels, x) of the grouped data: a Dirichlet-multinomial for the labels times
    a Normal-Wishart marginal likelihood per group, from the posterior's ``kappa`` (K,),
    ``nu`` (K,) and lower Cholesky factors ``psi_chol`` (K, d, d) of ``psi``."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    k_count, d = g.xbar.shape
    n = float(g.counts.sum())
    alpha = prior.alpha
    # Dirichlet-multinomial probability of the label sequence (Murphy 2012, sec. 5.3.2.2)
    log_z = (
        special.gammaln(k_count * alpha)
        - special.gammaln(n + k_count * alpha)
        + float(np.sum(special.gammaln(alpha + g.counts) - special.gammaln(alpha)))
    )
    # Normal-Wishart marginal likelihood per group (Murphy 2012, sec. 4.6.3.6, S = W^-1)
    log_det_psi = 2.0 * np.sum(np.log(np.diagonal(psi_chol, axis1=1, axis2=2)), axis=1)
    log_x = (
        -0.5 * g.counts * d * math.log(math.pi)
        + special.multigammaln(0.5 * nu[:, None], d)[:, 0]
        - special.multigammaln(0.5 * prior.nu0, d)
        + 0.5 * prior.nu0 * prior.log_det_psi0
        - 0.5 * nu * log_det_psi
        + 0.5 * d * (math.log(prior.kappa0) - np.log(kappa))
    )
    return float(log_z + np.sum(log_x))


def complete_data_mle(g: Groups) -> np.ndarray | None:
    """``counts / n``, ``xbar_k``, ``(S_k / N_k)^-1`` flattened; None unless every S_k is
    positive definite."""
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    n = g.counts.sum()
    k_count, d = g.xbar.shape
    if n == 0 or np.any(g.counts < d + 1):
        return None
    lam = np.empty((k_count, d, d))
    for k in range(k_count):
        try:
            chol = linalg.cholesky(g.scatter[k] / g.counts[k], lower=True)
        except linalg.LinAlgError:
            return None
        p = linalg.cho_solve((chol, True), np.eye(d))
        lam[k] = 0.5 * (p + p.T)
    return np.concatenate([g.counts / n, g.xbar.ravel(), lam.ravel()])
