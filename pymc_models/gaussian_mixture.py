"""PyMC models of a Gaussian mixture with a conjugate prior.  See analytic/gaussian_mixture.py.

Prior (both models)::

    w ~ Dirichlet(alpha 1_K)
    Lambda_k ~ Wishart(nu0, W0)                    # precision of component k
    mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)

* ``build_model``: the *complete-data* model, labels z_i known:
  z_i ~ Categorical(w), x_i | z_i ~ Normal(mu_{z_i}, Lambda_{z_i}^-1), written
  with per-component sufficient statistics (counts, sum x, sum x x^T).  Its
  posterior is conjugate, so the calibrated verdict applies to it.
* ``build_mixture_model``: the marginalised mixture,
  x_i ~ sum_k w_k Normal(mu_k, Lambda_k^-1), whose posterior has no closed
  form; it is compared with EM (compare/mixture.py).

Both start from ``init_*`` ``pm.Data`` values (the EM solution, set per data
set) and sample ``Lambda`` with PyMC's Wishart, so ``pm.find_MAP`` maximises
the density in (w, mu, Lambda) coordinates: the same objective as MAP-EM.
The prior block is ``pymc_models._common.normal_wishart_prior``, shared with
the Gaussian classifier's model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import (
    gaussian_stats_loglik,
    log_normal_precision,
    normal_wishart_data,
    normal_wishart_prior,
)

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("w", "mu", "Lambda")


def _coords(components: int, n_dims: int) -> dict[str, np.ndarray]:
    return {"component": np.arange(components), "dim": np.arange(n_dims), "dim_": np.arange(n_dims)}


def build_model(*, components: int, n_dims: int) -> pm.Model:
    """Complete-data model: labels known, likelihood from per-component statistics."""
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    k, d = components, n_dims
    with pm.Model(coords=_coords(k, d)) as model:
        counts = pm.Data("counts", np.zeros(k), dims="component")
        sum_x = pm.Data("sum_x", np.zeros((k, d)), dims=("component", "dim"))
        sum_xx = pm.Data("sum_xx", np.zeros((k, d, d)), dims=("component", "dim", "dim_"))
        w, mu, lam, logdet = normal_wishart_prior(k, d, weights="w", group="component")
        pm.Potential("z_loglik", pt.sum(counts * pt.log(w)))
        pm.Potential("x_loglik", gaussian_stats_loglik(counts, sum_x, sum_xx, mu, lam, logdet))
    return model


def build_mixture_model(*, components: int, n_dims: int, n_obs: int = 1) -> pm.Model:
    """Marginalised mixture: log p(x_i) = logsumexp_k [log w_k + log N(x_i; mu_k, Lambda_k^-1)]."""
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    k, d = components, n_dims
    with pm.Model(coords={**_coords(k, d), "obs": np.arange(n_obs)}) as model:
        x = pm.Data("x", np.zeros((n_obs, d)), dims=("obs", "dim"))
        w, mu, lam, logdet = normal_wishart_prior(k, d, weights="w", group="component")
        log_comp = pt.log(w) + log_normal_precision(x[:, None, :] - mu[None, :, :], lam, logdet)
        pm.Potential("x_loglik", pt.sum(pm.math.logsumexp(log_comp, axis=1)))
    return model


def model_data(*, x, labels, components, init_w, **prior_and_init) -> dict[str, np.ndarray]:
    """Data for ``build_model``: per-component statistics of x (n, d) given labels (n,)."""
    x = np.asarray(x, dtype=float)
    labels = np.asarray(labels, dtype=int)
    onehot = np.eye(components)[labels]  # (n, K)
    return {
        "counts": onehot.sum(axis=0),
        "sum_x": onehot.T @ x,
        "sum_xx": np.einsum("nk,ni,nj->kij", onehot, x, x),
        **normal_wishart_data(weights="w", init_weights=init_w, **prior_and_init),
    }


def mixture_data(*, x, init_w, **prior_and_init) -> dict[str, np.ndarray]:
    """Data for ``build_mixture_model``."""
    return {
        "x": np.asarray(x, dtype=float),
        **normal_wishart_data(weights="w", init_weights=init_w, **prior_and_init),
    }
