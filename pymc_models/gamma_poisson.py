"""PyMC model: rate ~ Gamma(shape, rate=hp_rate); x_i ~ Poisson(rate).  See analytic/gamma_poisson.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import hyper_data, obs_coords

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("rate",)


def build_model(*, n_obs: int = 1) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built

    with pm.Model(coords=obs_coords(n_obs)) as model:
        x = pm.Data("x", np.zeros(n_obs), dims="obs")
        shape = pm.Data("hp_shape", 1.0)
        rate = pm.Data("hp_rate", 1.0)
        lam = pm.Gamma("rate", alpha=shape, beta=rate)  # PyMC's beta is the rate
        pm.Poisson("x_obs", mu=lam, observed=x, dims="obs")
    return model


def model_data(*, x: np.ndarray, shape: float, rate: float) -> dict[str, np.ndarray]:
    return {"x": np.asarray(x, dtype=float), **hyper_data(shape=shape, rate=rate)}
