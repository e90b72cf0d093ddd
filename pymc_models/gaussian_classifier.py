"""PyMC model: Gaussian class-conditional densities with a conjugate prior.  See
analytic/gaussian_classifier.py.

Prior and likelihood::

    pi ~ Dirichlet(alpha 1_K)                            # class priors
    Lambda_k ~ Wishart(nu0, W0)                          # class precision, W0 = psi0^-1
    mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)
    y_i ~ Categorical(pi)                                # prod_i pi[y_i] = prod_k pi_k^n_k
    x_i | y_i = k ~ Normal(mu_k, Lambda_k^-1)
    u_j ~ sum_k pi_k Normal(mu_k, Lambda_k^-1)           # unlabelled rows (none here)

The labels and points enter through their per-class sufficient statistics
(counts, ``sum x``, ``sum x x^T``), so a gradient costs O(K d^2) whatever n
is; the labels' term is a ``Potential``, the density of the label sequence
itself (a Multinomial of the counts would add log(n! / prod n_k!)).

The model is, node for node, the mixture's model (the same statistics, prior
and terms, in the same order), so the two topics share one compiled model
(``compare/accel/compiled_cache.py``): a cold compile costs 20-25 s on these
machines, and every later use loads it in well under a second.  That is why
it carries the unlabelled rows ``x_unlabelled`` (``mixture_loglik``): the
classifier always has none, which adds 0 to the density and its gradient;
the mixture gives its rows either labelled (its complete-data model) or
unlabelled (its marginalised model), so one compile serves all three, where
two models cost 47.6 + 52.0 CPU-s cold and the joined one 53.2 (2026-12-05,
docs/speed.md).  A classifier given unlabelled rows would be semi-supervised,
whose posterior has no closed form: the topic never gives any.
``tests/pymc_models/test_shared_compile.py`` keeps them the same graph.
``Lambda`` is the Wishart density on a Cholesky factor in PyMC's Wishart's
free coordinates (``pymc_models._common.wishart_precisions``: no batched
matrix product or solve, a cold compile 42 -> 24 s), so ``pm.find_MAP``
maximises the density in (pi, mu, Lambda) coordinates, the exact mode's
coordinates.  The prior block is ``pymc_models._common.normal_wishart_prior``,
shared with the mixture's model.
Chains start from ``init_*`` ``pm.Data`` values (a regularised plug-in
estimate, set per data set).
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


VARIABLES = ("pi", "mu", "Lambda")


def build_model(*, n_classes: int, n_dims: int) -> pm.Model:
    """The model for K = ``n_classes`` classes in d = ``n_dims`` dimensions."""
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    k, d = n_classes, n_dims
    coords = {
        "class": np.arange(k),
        "dim": np.arange(d),
        "dim_": np.arange(d),
        "unlabelled": np.arange(0),
    }
    with pm.Model(coords=coords) as model:
        counts = pm.Data("class_counts", np.ones(k), dims="class")
        sum_x = pm.Data("sum_x", np.zeros((k, d)), dims=("class", "dim"))
        sum_xx = pm.Data("sum_xx", np.zeros((k, d, d)), dims=("class", "dim", "dim_"))
        x_unlabelled = pm.Data("x_unlabelled", np.zeros((0, d)), dims=("unlabelled", "dim"))
        pi, mu, lam, logdet = normal_wishart_prior(k, d, weights="pi", group="class")

        pm.Potential("z_loglik", pt.sum(counts * pt.log(pi)))
        pm.Potential("x_loglik", gaussian_stats_loglik(counts, sum_x, sum_xx, mu, lam, logdet))
        pm.Potential("unlabelled_loglik", mixture_loglik(x_unlabelled, pi, mu, lam, logdet))
    return model


def model_data(
    *, class_counts, sum_x, sum_xx, alpha, m0, kappa0, nu0, w0, init_pi, init_mu, init_lambda
) -> dict[str, np.ndarray]:
    """``pm.Data`` values: per-class statistics (K,), (K, d), (K, d, d), no unlabelled
    rows, prior, start."""
    sum_x = np.asarray(sum_x, dtype=float)
    return {
        "class_counts": np.asarray(class_counts, dtype=float),
        "sum_x": sum_x,
        "sum_xx": np.asarray(sum_xx, dtype=float),
        "x_unlabelled": np.zeros((0, sum_x.shape[-1])),
        **normal_wishart_data(
            weights="pi",
            alpha=alpha,
            m0=m0,
            kappa0=kappa0,
            nu0=nu0,
            w0=w0,
            init_weights=init_pi,
            init_mu=init_mu,
            init_lambda=init_lambda,
        ),
    }
