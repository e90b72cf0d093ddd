"""PyMC model: Gaussian class-conditional densities with a conjugate prior.  See
analytic/gaussian_classifier.py.

Prior and likelihood::

    pi ~ Dirichlet(alpha 1_K)                            # class priors
    Lambda_k ~ Wishart(nu0, W0)                          # class precision, W0 = psi0^-1
    mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1)
    class counts ~ Multinomial(N, pi)                    # = prod_i pi[y_i] up to a constant
    x_i | y_i = k ~ Normal(mu_k, Lambda_k^-1)

The points enter through their per-class sufficient statistics (counts,
``sum x``, ``sum x x^T``), so a gradient costs O(K d^2) whatever n is.
``Lambda`` is PyMC's Wishart (its Cholesky transform), so ``pm.find_MAP``
maximises the density in (pi, mu, Lambda) coordinates, the exact mode's
coordinates.  ``mu``'s conditional normal prior is a potential on a flat
variable, as in the mixture's model (same density, faster numba compile).
Chains start from ``init_*`` ``pm.Data`` values (a regularised plug-in
estimate, set per data set).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from pymc_models.gaussian_mixture import _log_normal_precision

VARIABLES = ("pi", "mu", "Lambda")


def build_model(*, n_classes: int, n_dims: int) -> pm.Model:
    """The model for K = ``n_classes`` classes in d = ``n_dims`` dimensions."""
    k, d = n_classes, n_dims
    coords = {"class": np.arange(k), "dim": np.arange(d), "dim_": np.arange(d)}
    with pm.Model(coords=coords) as model:
        counts = pm.Data("class_counts", np.ones(k, dtype=np.int64), dims="class")
        sum_x = pm.Data("sum_x", np.zeros((k, d)), dims=("class", "dim"))
        sum_xx = pm.Data("sum_xx", np.zeros((k, d, d)), dims=("class", "dim", "dim_"))
        alpha = pm.Data("hp_alpha", 1.0)
        m0 = pm.Data("hp_m0", np.zeros(d), dims="dim")
        kappa0 = pm.Data("hp_kappa0", 1.0)
        nu0 = pm.Data("hp_nu0", np.int64(d + 2))
        w0 = pm.Data("hp_W0", np.eye(d), dims=("dim", "dim_"))
        init_pi = pm.Data("init_pi", np.full(k, 1.0 / k), dims="class")
        init_mu = pm.Data("init_mu", np.zeros((k, d)), dims=("class", "dim"))
        init_lam = pm.Data("init_Lambda", np.broadcast_to(np.eye(d), (k, d, d)).copy(),
                           dims=("class", "dim", "dim_"))

        pi = pm.Dirichlet("pi", a=alpha * pt.ones(k), dims="class", initval=init_pi)
        lam = pm.Wishart("Lambda", nu=nu0, V=w0, dims=("class", "dim", "dim_"),
                         initval=init_lam)
        mu = pm.Flat("mu", dims=("class", "dim"), initval=init_mu)
        logdet = pt.log(pt.linalg.det(lam))  # (K,); d is small
        pm.Potential("mu_prior", pt.sum(_log_normal_precision(
            mu - m0, kappa0 * lam, logdet + d * pt.log(kappa0), d)))

        pm.Multinomial("class_obs", n=counts.sum(), p=pi, observed=counts, dims="class")
        counts_f = pt.cast(counts, "float64")
        # sum_{y_i = k} (x_i - mu_k)^T L_k (x_i - mu_k) = tr(L_k S2_k) - 2 mu_k^T L_k S1_k
        #                                                 + N_k mu_k^T L_k mu_k
        quad = (pt.sum(lam * sum_xx, axis=(-2, -1))
                - 2.0 * pt.sum(mu * pt.einsum("kij,kj->ki", lam, sum_x), axis=-1)
                + counts_f * pt.einsum("ki,kij,kj->k", mu, lam, mu))
        pm.Potential("x_loglik", pt.sum(0.5 * counts_f * logdet
                                        - 0.5 * counts_f * d * np.log(2.0 * np.pi) - 0.5 * quad))
    return model


def model_data(*, class_counts, sum_x, sum_xx, alpha, m0, kappa0, nu0, w0, init_pi, init_mu,
               init_lambda) -> dict[str, np.ndarray]:
    """``pm.Data`` values: per-class statistics (K,), (K, d), (K, d, d), prior, start."""
    return {"class_counts": np.asarray(class_counts, dtype=np.int64),
            "sum_x": np.asarray(sum_x, dtype=float), "sum_xx": np.asarray(sum_xx, dtype=float),
            "hp_alpha": np.asarray(alpha, dtype=float), "hp_m0": np.asarray(m0, dtype=float),
            "hp_kappa0": np.asarray(kappa0, dtype=float), "hp_nu0": np.int64(nu0),
            "hp_W0": np.asarray(w0, dtype=float), "init_pi": np.asarray(init_pi, dtype=float),
            "init_mu": np.asarray(init_mu, dtype=float),
            "init_Lambda": np.asarray(init_lambda, dtype=float)}
