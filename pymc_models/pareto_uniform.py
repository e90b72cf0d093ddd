"""PyMC model: theta ~ Pareto(shape, scale); x_i ~ Uniform(0, theta).

See analytic/pareto_uniform.py.  The likelihood is zero for theta < max x, so
the sampler works in ``log(theta - max(scale, max x))``: an interval transform
whose lower end is the support of the posterior, computed from the data inside
the graph.  The prior and likelihood densities are untouched (only the
sampler's coordinates change, with their Jacobian), so a wrong prior or
likelihood still shows.  Without it NUTS would keep stepping into the
zero-likelihood region and report divergences.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import hyper_data, obs_coords

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("theta",)


def build_model(*, n_obs: int = 1) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built
    from pymc.distributions.transforms import Interval  # heavy: PyMC only when a model is built

    with pm.Model(coords=obs_coords(n_obs)) as model:
        x = pm.Data("x", np.ones(n_obs), dims="obs")
        scale = pm.Data("hp_scale", 1.0)
        shape = pm.Data("hp_shape", 1.0)
        lower = pt.maximum(scale, pt.max(x))
        theta = pm.Pareto(
            "theta",
            alpha=shape,
            m=scale,
            default_transform=None,
            transform=Interval(bounds_fn=lambda *_: (lower, None)),
            initval=2.0 * lower,  # inside the support for every data set
        )
        pm.Uniform("x_obs", lower=0.0, upper=theta, observed=x, dims="obs")
    return model


def model_data(*, x: np.ndarray, scale: float, shape: float) -> dict[str, np.ndarray]:
    return {"x": np.asarray(x, dtype=float), **hyper_data(scale=scale, shape=shape)}
