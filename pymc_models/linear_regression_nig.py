"""PyMC model: sigma2 ~ InvGamma(alpha0, beta0); w | sigma2 ~ Normal(prior_mean, sigma2 prior_scale^2 I);
y = Phi w + Normal(0, sigma2).

See analytic/linear_regression_nig.py.  Same sufficient-statistics likelihood
as pymc_models/linear_regression.py, with the noise variance sampled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models.linear_regression import _coords, gaussian_loglik, suff_data

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("w", "sigma2")


def build_model(*, n_features: int, n_grid: int = 1) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    with pm.Model(coords=_coords(n_features, n_grid)) as model:
        gram = pm.Data("gram", np.eye(n_features), dims=("feature", "feature_"))
        phi_t_y = pm.Data("phi_t_y", np.zeros(n_features), dims="feature")
        y_t_y = pm.Data("y_t_y", 0.0)
        n = pm.Data("n_obs", 0.0)
        phi_grid = pm.Data("phi_grid", np.zeros((n_grid, n_features)), dims=("grid", "feature"))
        prior_mean = pm.Data("hp_prior_mean", 0.0)
        prior_scale = pm.Data("hp_prior_scale", 1.0)
        alpha0 = pm.Data("hp_alpha0", 1.0)
        beta0 = pm.Data("hp_beta0", 1.0)
        sigma2 = pm.InverseGamma("sigma2", alpha=alpha0, beta=beta0)
        w = pm.Normal("w", mu=prior_mean, sigma=pt.sqrt(sigma2) * prior_scale, dims="feature")
        pm.Potential("loglik", gaussian_loglik(gram, phi_t_y, y_t_y, n, w, sigma2))
        pm.Deterministic("f_grid", pt.dot(phi_grid, w), dims="grid")
    return model


def model_data(
    *,
    gram,
    phi_t_y,
    y_t_y,
    n,
    phi_grid,
    alpha0: float,
    beta0: float,
    prior_scale: float,
    prior_mean: float = 0.0,
) -> dict[str, np.ndarray]:
    return {
        **suff_data(gram=gram, phi_t_y=phi_t_y, y_t_y=y_t_y, n=n, phi_grid=phi_grid),
        "hp_prior_mean": np.asarray(prior_mean, dtype=float),
        "hp_prior_scale": np.asarray(prior_scale, dtype=float),
        "hp_alpha0": np.asarray(alpha0, dtype=float),
        "hp_beta0": np.asarray(beta0, dtype=float),
    }
