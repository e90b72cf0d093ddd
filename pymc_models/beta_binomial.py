"""PyMC model: p ~ Beta(a, b); x_i ~ Bernoulli(p).  See analytic/beta_binomial.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import hyper_data, obs_coords

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("p",)


def build_model(*, n_obs: int = 1) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built

    with pm.Model(coords=obs_coords(n_obs)) as model:
        x = pm.Data("x", np.zeros(n_obs), dims="obs")
        a = pm.Data("hp_a", 1.0)
        b = pm.Data("hp_b", 1.0)
        p = pm.Beta("p", alpha=a, beta=b)
        pm.Bernoulli("x_obs", p=p, observed=x, dims="obs")
    return model


def model_data(*, x: np.ndarray, a: float, b: float) -> dict[str, np.ndarray]:
    return {"x": np.asarray(x, dtype=float), **hyper_data(a=a, b=b)}
