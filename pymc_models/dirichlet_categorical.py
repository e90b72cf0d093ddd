"""PyMC model: p ~ Dirichlet(concentration); x_i ~ Categorical(p).

See analytic/dirichlet_categorical.py.  The number of categories fixes the
shape of ``p``, so it is part of the model's structure (one PyMC model per
K); its length is a dimension, not a constant, so the compiled machine code
serves every K (compare/core/compiled_cache.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import obs_coords, simplex_transform

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("p",)


def build_model(*, n_categories: int, n_obs: int = 1) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built

    coords = {**obs_coords(n_obs), "category": np.arange(n_categories)}
    with pm.Model(coords=coords) as model:
        x = pm.Data("x", np.zeros(n_obs, dtype=np.int64), dims="obs")
        concentration = pm.Data("hp_concentration", np.ones(n_categories), dims="category")
        p = pm.Dirichlet(
            "p", a=concentration, dims="category", default_transform=simplex_transform()
        )
        pm.Categorical("x_obs", p=p, observed=x, dims="obs")
    return model


def model_data(*, x: np.ndarray, categories, concentration) -> dict[str, np.ndarray]:
    k = len(categories)
    conc = np.broadcast_to(np.asarray(concentration, dtype=float), (k,)).copy()
    return {"x": np.asarray(x, dtype=np.int64), "hp_concentration": conc}
