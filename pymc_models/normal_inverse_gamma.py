"""PyMC model: sigma2 ~ InvGamma(alpha0, beta0); mu | sigma2 ~ Normal(mu0, sigma2/kappa0);
x_i ~ Normal(mu, sigma2).  See analytic/normal_inverse_gamma.py.

PyMC's ``InverseGamma(alpha, beta)`` is shape/scale, as in the analytic module;
PyMC's ``Normal`` takes a standard deviation, hence the square roots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import hyper_data, obs_coords

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("mu", "sigma2")


def build_model(*, n_obs: int = 1) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    with pm.Model(coords=obs_coords(n_obs)) as model:
        x = pm.Data("x", np.zeros(n_obs), dims="obs")
        mu0 = pm.Data("hp_mu0", 0.0)
        kappa0 = pm.Data("hp_kappa0", 1.0)
        alpha0 = pm.Data("hp_alpha0", 1.0)
        beta0 = pm.Data("hp_beta0", 1.0)
        sigma2 = pm.InverseGamma("sigma2", alpha=alpha0, beta=beta0)
        mu = pm.Normal("mu", mu=mu0, sigma=pt.sqrt(sigma2 / kappa0))
        pm.Normal("x_obs", mu=mu, sigma=pt.sqrt(sigma2), observed=x, dims="obs")
    return model


def model_data(
    *, x: np.ndarray, mu0: float, kappa0: float, alpha0: float, beta0: float
) -> dict[str, np.ndarray]:
    return {
        "x": np.asarray(x, dtype=float),
        **hyper_data(mu0=mu0, kappa0=kappa0, alpha0=alpha0, beta0=beta0),
    }
