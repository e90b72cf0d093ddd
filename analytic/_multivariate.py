"""Multivariate normal and Student-t distributions as exact posteriors, and their
log densities from a Cholesky factor.

Used for joint posterior predictive distributions over several inputs
(regression, Gaussian processes), where the compare layer tests PyMC's
predictive draws with the same whitening rule as a posterior, and for the
Student-t components of the Normal-Wishart predictives (Gaussian mixture and
classifier).  Everything keeps a Cholesky factor: densities and draws never
form an inverse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analytic._frozen import freeze


def cholesky(matrix: np.ndarray, name: str) -> np.ndarray:
    """Lower Cholesky factor, or a ValueError naming the matrix and the remedy."""
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    try:
        return linalg.cholesky(np.asarray(matrix, dtype=float), lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            f"{name} is not positive definite; check it is a covariance "
            "matrix (symmetric, positive eigenvalues)"
        ) from None


def half_log_det(chol: np.ndarray) -> float:
    """``log |A|^(1/2)`` from the lower Cholesky factor ``chol`` (d, d) of ``A``."""
    return float(np.sum(np.log(np.diag(chol))))


def normal_logpdf(x: np.ndarray, loc: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """log N(x; loc, C) at points ``x`` (n, d), ``C = chol chol^T``; shape (n,)."""
    from scipy import linalg  # heavy: SciPy (0.5 s) only when the maths runs

    d = loc.size
    z = linalg.solve_triangular(chol, (x - loc).T, lower=True)
    return -0.5 * np.sum(z * z, axis=0) - half_log_det(chol) - 0.5 * d * np.log(2 * np.pi)


def student_t_logpdf(x: np.ndarray, loc: np.ndarray, chol: np.ndarray, df: float) -> np.ndarray:
    """log St(x; df, loc, S) at points ``x`` (n, d), ``S = chol chol^T``; shape (n,).

    ``Gamma((df + d) / 2) / (Gamma(df / 2) (df pi)^(d/2) |S|^(1/2))
    (1 + (x - loc)^T S^-1 (x - loc) / df)^(-(df + d) / 2)`` (Murphy 2012, eq. 2.71).
    """
    from scipy import linalg, special  # heavy: SciPy (0.5 s) only when the maths runs

    d, nu = loc.size, float(df)
    z = linalg.solve_triangular(chol, (x - loc).T, lower=True)
    return (
        special.gammaln(0.5 * (nu + d))
        - special.gammaln(0.5 * nu)
        - 0.5 * d * np.log(nu * np.pi)
        - half_log_det(chol)
        - 0.5 * (nu + d) * np.log1p(np.sum(z * z, axis=0) / nu)
    )


@dataclass(frozen=True, eq=False)
class MultivariateNormal:
    """N(mean, cov) over named coordinates; satisfies ``ExactPosterior``."""

    mean: np.ndarray
    cov: np.ndarray
    parameters: tuple[str, ...]
    is_gaussian: bool = True
    mode_interior: bool = True
    moments_below: float = float("inf")
    chol: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chol", cholesky(self.cov, "the covariance"))

    @property
    def mode(self) -> np.ndarray:
        return self.mean

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(len(self.parameters)))

    def marginal(self, index: int) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(stats.norm, self.mean[index], np.sqrt(self.cov[index, index]))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        out = normal_logpdf(x.reshape(-1, self.mean.size), self.mean, self.chol)
        return out.reshape(x.shape[:-1])

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.mean + rng.standard_normal((size, self.mean.size)) @ self.chol.T


@dataclass(frozen=True, eq=False)
class MultivariateT:
    """Multivariate Student-t with ``df`` dof, location ``loc`` and scale matrix ``scale``.

    Covariance ``scale df / (df - 2)`` (df > 2); marginals are univariate t
    with scale ``sqrt(scale_ii)``.  Draws: ``loc + L z / sqrt(g)``,
    ``g ~ Gamma(df/2, rate df/2)``.
    """

    loc: np.ndarray
    scale: np.ndarray
    df: float
    parameters: tuple[str, ...]
    is_gaussian: bool = False
    mode_interior: bool = True
    chol: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chol", cholesky(self.scale, "the scale matrix"))

    @property
    def moments_below(self) -> float:
        return float(self.df)

    @property
    def elliptical_kurtosis(self) -> float | None:
        """kappa = 2 / (df - 4) (df > 4): with t = z / sqrt(g), g ~ Gamma(df/2, rate
        df/2), the whitened u = t sqrt((df - 2) / df) has E[u_i^4] = 3 (df - 2) /
        (df - 4) = 3 (1 + kappa) and E[u_i^2 u_j^2] = (df - 2) / (df - 4) = 1 + kappa
        (E[1/g^2] = df^2 / ((df - 2)(df - 4))). None when df <= 4 (no fourth moment)."""
        return 2.0 / (self.df - 4.0) if self.df > 4 else None

    @property
    def mean(self) -> np.ndarray:
        return self.loc if self.df > 1 else np.full(self.loc.size, np.inf)

    @property
    def cov(self) -> np.ndarray:
        if self.df <= 2:
            return np.full(self.scale.shape, np.inf)
        return self.scale * self.df / (self.df - 2.0)

    @property
    def mode(self) -> np.ndarray:
        return self.loc

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(len(self.parameters)))

    def marginal(self, index: int) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(
            stats.t, self.df, loc=self.loc[index], scale=np.sqrt(self.scale[index, index])
        )

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        out = student_t_logpdf(x.reshape(-1, self.loc.size), self.loc, self.chol, self.df)
        return out.reshape(x.shape[:-1])

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        g = rng.gamma(self.df / 2.0, 2.0 / self.df, size=(size, 1))
        z = rng.standard_normal((size, self.loc.size)) @ self.chol.T
        return self.loc + z / np.sqrt(g)
