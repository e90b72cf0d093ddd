"""PyMC model: p ~ Dirichlet(concentration); x_i ~ Categorical(p), through the counts.

See analytic/dirichlet_categorical.py.  The category counts n_k are
sufficient: prod_i Categorical(x_i | p) = prod_k p_k^n_k, the ``Potential``
``x_loglik`` = sum_k n_k log p_k, the density of the sequence itself (as the
Gaussian classifier's labels; a ``Multinomial`` of the counts would add
log(n! / prod_k n_k!), a constant in p that the exported model's evidence
would then carry). A gradient costs O(K) whatever n is, and a cold compile
5.8-6.2 CPU-s against 11.7-13.0 for ``pm.Categorical`` of every row, whose
indexing p[x_i] and its gradient numba compiles too (7.3-7.6 with a
``Multinomial``; new processes, empty caches, 2026-12-06). The
number of categories fixes the shape of ``p``, so it is part of the model's
structure (one PyMC model per K); its length is a dimension, not a constant,
so the compiled machine code serves every K (compare/accel/compiled_cache.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import simplex_transform

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("p",)


def build_model(*, n_categories: int) -> pm.Model:
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    coords = {"category": np.arange(n_categories)}
    with pm.Model(coords=coords) as model:
        counts = pm.Data("counts", np.zeros(n_categories), dims="category")
        concentration = pm.Data("hp_concentration", np.ones(n_categories), dims="category")
        p = pm.Dirichlet(
            "p", a=concentration, dims="category", default_transform=simplex_transform()
        )
        pm.Potential("x_loglik", pt.sum(counts * pt.log(p)))
    return model


def model_data(*, x: np.ndarray, categories, concentration) -> dict[str, np.ndarray]:
    """``pm.Data`` values: the count of each category among the codes ``x`` (n,), and
    the concentration, one per category."""
    k = len(categories)
    conc = np.broadcast_to(np.asarray(concentration, dtype=float), (k,)).copy()
    counts = np.bincount(np.asarray(x, dtype=np.int64), minlength=k)
    return {"counts": counts.astype(float), "hp_concentration": conc}
