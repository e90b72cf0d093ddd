"""PyMC model of a Gaussian mixture with a conjugate prior.  See analytic/gaussian_mixture.py.

Prior::

    w ~ Dirichlet(alpha 1_K)
    Lambda_k ~ Wishart(nu0, W0)                    # precision of component k
    mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)

One model, ``build_model``, with two kinds of rows, given as data:

* labelled rows (z_i known): z_i ~ Categorical(w), x_i | z_i ~ Normal(mu_{z_i},
  Lambda_{z_i}^-1), written with per-component sufficient statistics (counts,
  sum x, sum x x^T);
* unlabelled rows ``x``: x_i ~ sum_k w_k Normal(mu_k, Lambda_k^-1).

``model_data`` gives every row labelled (the *complete-data* model: its
posterior is conjugate, so the calibrated verdict applies to it);
``mixture_data`` gives none labelled (the *marginalised* mixture, whose
posterior has no closed form; it is compared with EM in
compare/topics/gaussian_mixture.py).  The unused kind adds 0 (empty sums).
One model rather than two because it is also, node for node, the Gaussian
classifier's: one cold compile (about 25 s) serves the three
(pymc_models/gaussian_classifier.py says what it saved).

Both start from ``init_*`` ``pm.Data`` values (the EM solution, set per data
set) and sample ``Lambda`` as PyMC samples a Wishart (its Cholesky factor,
``pymc_models._common.wishart_precisions``), so ``pm.find_MAP`` maximises
the density in (w, mu, Lambda) coordinates: the same objective as MAP-EM.
The prior block is ``pymc_models._common.normal_wishart_prior``, shared with
the Gaussian classifier's model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import (
    gaussian_stats_loglik,
    mixture_loglik,
    normal_wishart_data,
    normal_wishart_prior,
)

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("w", "mu", "Lambda")


def _coords(components: int, n_dims: int) -> dict[str, np.ndarray]:
    return {
        "component": np.arange(components),
        "dim": np.arange(n_dims),
        "dim_": np.arange(n_dims),
        "obs": np.arange(0),
    }


def build_model(*, components: int, n_dims: int) -> pm.Model:
    """The mixture with labelled rows (per-component statistics) and unlabelled rows ``x``."""
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    k, d = components, n_dims
    with pm.Model(coords=_coords(k, d)) as model:
        counts = pm.Data("counts", np.zeros(k), dims="component")
        sum_x = pm.Data("sum_x", np.zeros((k, d)), dims=("component", "dim"))
        sum_xx = pm.Data("sum_xx", np.zeros((k, d, d)), dims=("component", "dim", "dim_"))
        x = pm.Data("x", np.zeros((0, d)), dims=("obs", "dim"))
        w, mu, lam, logdet = normal_wishart_prior(k, d, weights="w", group="component")
        pm.Potential("z_loglik", pt.sum(counts * pt.log(w)))
        pm.Potential("x_loglik", gaussian_stats_loglik(counts, sum_x, sum_xx, mu, lam, logdet))
        pm.Potential("unlabelled_loglik", mixture_loglik(x, w, mu, lam, logdet))
    return model


def model_data(*, x, labels, components, init_w, **prior_and_init) -> dict[str, np.ndarray]:
    """The complete-data model's data: every row of x (n, d) labelled by labels (n,), as
    per-component statistics; no unlabelled rows."""
    x = np.asarray(x, dtype=float)
    labels = np.asarray(labels, dtype=int)
    onehot = np.eye(components)[labels]  # (n, K)
    return {
        "counts": onehot.sum(axis=0),
        "sum_x": onehot.T @ x,
        "sum_xx": np.einsum("nk,ni,nj->kij", onehot, x, x),
        "x": np.zeros((0, x.shape[1])),
        **normal_wishart_data(weights="w", init_weights=init_w, **prior_and_init),
    }


def mixture_data(*, x, init_w, **prior_and_init) -> dict[str, np.ndarray]:
    """The marginalised mixture's data: every row of x (n, d) unlabelled."""
    x = np.asarray(x, dtype=float)
    k, d = np.shape(init_w)[0], x.shape[1]
    return {
        "counts": np.zeros(k),
        "sum_x": np.zeros((k, d)),
        "sum_xx": np.zeros((k, d, d)),
        "x": x,
        **normal_wishart_data(weights="w", init_weights=init_w, **prior_and_init),
    }
