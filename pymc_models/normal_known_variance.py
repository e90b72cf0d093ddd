"""PyMC model: mu ~ Normal(prior_mean, prior_sd); x_i ~ Normal(mu, noise_sd).

See analytic/normal_known_variance.py.  PyMC's ``sigma`` is a standard deviation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import hyper_data, obs_coords

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("mu",)


def build_model(*, n_obs: int = 1) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built

    with pm.Model(coords=obs_coords(n_obs)) as model:
        x = pm.Data("x", np.zeros(n_obs), dims="obs")
        prior_mean = pm.Data("hp_prior_mean", 0.0)
        prior_sd = pm.Data("hp_prior_sd", 1.0)
        noise_sd = pm.Data("hp_noise_sd", 1.0)
        mu = pm.Normal("mu", mu=prior_mean, sigma=prior_sd)
        pm.Normal("x_obs", mu=mu, sigma=noise_sd, observed=x, dims="obs")
    return model


def model_data(
    *, x: np.ndarray, prior_mean: float, prior_sd: float, noise_sd: float
) -> dict[str, np.ndarray]:
    return {
        "x": np.asarray(x, dtype=float),
        **hyper_data(prior_mean=prior_mean, prior_sd=prior_sd, noise_sd=noise_sd),
    }
