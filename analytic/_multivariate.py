"""Multivariate normal and Student-t distributions as exact posteriors.

Used for joint posterior predictive distributions over several inputs
(regression, Gaussian processes), where the compare layer tests PyMC's
predictive draws with the same whitening rule as a posterior.  Both keep a
Cholesky factor: densities and draws never form an inverse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import linalg, special, stats


def cholesky(matrix: np.ndarray, name: str) -> np.ndarray:
    """Lower Cholesky factor, or a ValueError naming the matrix and the remedy."""
    try:
        return linalg.cholesky(np.asarray(matrix, dtype=float), lower=True)
    except linalg.LinAlgError:
        raise ValueError(f"{name} is not positive definite; check it is a covariance "
                         "matrix (symmetric, positive eigenvalues)") from None


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
        return stats.norm(self.mean[index], np.sqrt(self.cov[index, index]))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        d = self.mean.size
        z = linalg.solve_triangular(self.chol, (x - self.mean).reshape(-1, d).T, lower=True)
        half_logdet = np.sum(np.log(np.diag(self.chol)))
        out = -0.5 * np.sum(z * z, axis=0) - half_logdet - 0.5 * d * np.log(2 * np.pi)
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
        return stats.t(self.df, loc=self.loc[index], scale=np.sqrt(self.scale[index, index]))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        d, nu = self.loc.size, self.df
        z = linalg.solve_triangular(self.chol, (x - self.loc).reshape(-1, d).T, lower=True)
        maha = np.sum(z * z, axis=0)
        out = (special.gammaln((nu + d) / 2) - special.gammaln(nu / 2)
               - 0.5 * d * np.log(nu * np.pi) - np.sum(np.log(np.diag(self.chol)))
               - 0.5 * (nu + d) * np.log1p(maha / nu))
        return out.reshape(x.shape[:-1])

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        g = rng.gamma(self.df / 2.0, 2.0 / self.df, size=(size, 1))
        z = rng.standard_normal((size, self.loc.size)) @ self.chol.T
        return self.loc + z / np.sqrt(g)
