"""The Gamma posterior over a rate, shared by the gamma-poisson and
exponential-gamma conjugate updates (``analytic.ExactPosterior``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analytic._frozen import freeze


@dataclass(frozen=True)
class GammaPosterior:
    """Gamma(shape, rate) over a positive rate (a Poisson or an exponential rate).

    Shape/*rate* form; ``scipy.stats.gamma`` takes ``scale = 1 / rate``.
    """

    shape: float
    rate: float
    parameters: tuple[str, ...] = ("rate",)
    free: tuple[int, ...] = (0,)
    is_gaussian: bool = False
    moments_below: float = float("inf")

    def marginal(self, index: int = 0) -> Any:
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(stats.gamma, self.shape, scale=1.0 / self.rate)

    @property
    def mean(self) -> np.ndarray:
        return np.array([self.shape / self.rate])

    @property
    def cov(self) -> np.ndarray:
        return np.array([[self.shape / self.rate**2]])

    @property
    def mode(self) -> np.ndarray:
        return np.array([max(self.shape - 1.0, 0.0) / self.rate])

    @property
    def mode_interior(self) -> bool:
        return self.shape > 1

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        return self.marginal().logpdf(np.asarray(x)[..., 0])

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.gamma(self.shape, 1.0 / self.rate, size=(size, 1))
