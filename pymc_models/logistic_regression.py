"""PyMC model: w ~ Normal(0, prior_sd^2 I);  y_i ~ Bernoulli(sigmoid(phi_i^T w)).

See analytic/logistic_regression.py (the intercept, when present, is the
first column of Phi and has the same prior as every other weight).  The
design is ``pm.Data`` named ``x`` so that the compare layer resizes the
``obs`` dimension with the data; the prior sd is ``hp_prior_sd``.  One
nutpie compile serves every data set, number of features and prior_sd.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("w",)


def build_model(*, n_features: int) -> pm.Model:
    """The model with data placeholders; fill them with :func:`model_data`."""
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    coords = {"obs": np.arange(1), "feature": np.arange(n_features)}
    with pm.Model(coords=coords) as model:
        x = pm.Data("x", np.zeros((1, n_features)), dims=("obs", "feature"))
        y = pm.Data("y", np.zeros(1), dims="obs")
        prior_sd = pm.Data("hp_prior_sd", 1.0)
        w = pm.Normal("w", mu=0.0, sigma=prior_sd, dims="feature")
        pm.Bernoulli("y_obs", logit_p=pt.dot(x, w), observed=y, dims="obs")
    return model


def model_data(*, phi: np.ndarray, y: np.ndarray, prior_sd: float) -> dict[str, np.ndarray]:
    """``pm.Data`` values: design ``phi`` (n, d), labels ``y`` (n,) of 0/1, prior sd."""
    return {
        "x": np.asarray(phi, dtype=float),
        "y": np.asarray(y, dtype=float),
        "hp_prior_sd": np.asarray(prior_sd, dtype=float),
    }
