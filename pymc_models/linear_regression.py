"""PyMC model: w ~ Normal(prior_mean, prior_sd^2 I); y = Phi w + Normal(0, noise_sd^2).

See analytic/linear_regression.py.  The likelihood is written with the
sufficient statistics (Phi^T Phi, Phi^T y, y^T y, n)::

    sum_i log N(y_i; phi_i^T w, s^2)
      = -n/2 log(2 pi s^2) - (y^T y - 2 w^T Phi^T y + w^T Phi^T Phi w) / (2 s^2)

so one gradient costs O(d^2) whatever n is.  ``build_plain_model`` is the
same model with the per-observation likelihood, kept as the reference that
``tests/pymc_models/test_linear_regression.py`` checks the sufficient-statistics
form against.  ``f_grid`` = Phi_grid w at the prediction inputs is recorded with
every draw; adding the likelihood's noise gives posterior predictive draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("w",)


def _coords(n_features: int, n_grid: int) -> dict[str, np.ndarray]:
    return {
        "feature": np.arange(n_features),
        "feature_": np.arange(n_features),
        "grid": np.arange(n_grid),
    }


def gaussian_loglik(gram, phi_t_y, y_t_y, n, w, noise_var):
    """Sum of N(y_i; phi_i^T w, noise_var) log densities from sufficient statistics."""
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    rss = y_t_y - 2.0 * pt.dot(w, phi_t_y) + pt.dot(w, pt.dot(gram, w))
    return -0.5 * n * pt.log(2.0 * np.pi * noise_var) - 0.5 * rss / noise_var


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
        prior_sd = pm.Data("hp_prior_sd", 1.0)
        noise_sd = pm.Data("hp_noise_sd", 1.0)
        w = pm.Normal("w", mu=prior_mean, sigma=prior_sd, dims="feature")
        pm.Potential("loglik", gaussian_loglik(gram, phi_t_y, y_t_y, n, w, noise_sd**2))
        pm.Deterministic("f_grid", pt.dot(phi_grid, w), dims="grid")
    return model


def build_plain_model(*, n_features: int, n_obs: int = 1, n_grid: int = 1) -> pm.Model:
    """The same model with y_i ~ Normal(phi_i^T w, noise_sd) for every observation."""
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    coords = {**_coords(n_features, n_grid), "obs": np.arange(n_obs)}
    with pm.Model(coords=coords) as model:
        phi = pm.Data("phi", np.zeros((n_obs, n_features)), dims=("obs", "feature"))
        y = pm.Data("y", np.zeros(n_obs), dims="obs")
        phi_grid = pm.Data("phi_grid", np.zeros((n_grid, n_features)), dims=("grid", "feature"))
        prior_mean = pm.Data("hp_prior_mean", 0.0)
        prior_sd = pm.Data("hp_prior_sd", 1.0)
        noise_sd = pm.Data("hp_noise_sd", 1.0)
        w = pm.Normal("w", mu=prior_mean, sigma=prior_sd, dims="feature")
        pm.Normal("y_obs", mu=pt.dot(phi, w), sigma=noise_sd, observed=y, dims="obs")
        pm.Deterministic("f_grid", pt.dot(phi_grid, w), dims="grid")
    return model


def suff_data(*, gram, phi_t_y, y_t_y, n, phi_grid) -> dict[str, np.ndarray]:
    return {
        "gram": np.asarray(gram, dtype=float),
        "phi_t_y": np.asarray(phi_t_y, dtype=float),
        "y_t_y": np.asarray(y_t_y, dtype=float),
        "n_obs": np.asarray(n, dtype=float),
        "phi_grid": np.asarray(phi_grid, dtype=float),
    }


def model_data(
    *, gram, phi_t_y, y_t_y, n, phi_grid, noise_sd: float, prior_sd: float, prior_mean: float = 0.0
) -> dict[str, np.ndarray]:
    return {
        **suff_data(gram=gram, phi_t_y=phi_t_y, y_t_y=y_t_y, n=n, phi_grid=phi_grid),
        "hp_prior_mean": np.asarray(prior_mean, dtype=float),
        "hp_prior_sd": np.asarray(prior_sd, dtype=float),
        "hp_noise_sd": np.asarray(noise_sd, dtype=float),
    }
