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
``mu``'s conditional normal prior is written as a potential on a flat
variable (the same density; a batched ``pm.MvNormal`` with a precision matrix
per component doubled the numba compile time, measured ~46 s against ~21 s).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

VARIABLES = ("w", "mu", "Lambda")


def _coords(components: int, n_dims: int) -> dict[str, np.ndarray]:
    return {"component": np.arange(components), "dim": np.arange(n_dims),
            "dim_": np.arange(n_dims)}


def _log_normal_precision(x_minus_mu, lam, logdet, d):
    """log N(x; mu, Lambda^-1) from (x - mu) of shape (..., K, d) and Lambda (K, d, d)."""
    quad = pt.einsum("...ki,kij,...kj->...k", x_minus_mu, lam, x_minus_mu)
    return 0.5 * logdet - 0.5 * d * np.log(2.0 * np.pi) - 0.5 * quad


def _prior(components: int, n_dims: int):
    """Hyperparameter and initial-value data, and the prior's variables (inside a model)."""
    k, d = components, n_dims
    alpha = pm.Data("hp_alpha", 1.0)
    m0 = pm.Data("hp_m0", np.zeros(d), dims="dim")
    kappa0 = pm.Data("hp_kappa0", 1.0)
    nu0 = pm.Data("hp_nu0", np.int64(d + 2))
    w0 = pm.Data("hp_W0", np.eye(d), dims=("dim", "dim_"))
    init_w = pm.Data("init_w", np.full(k, 1.0 / k), dims="component")
    init_mu = pm.Data("init_mu", np.zeros((k, d)), dims=("component", "dim"))
    init_lam = pm.Data("init_Lambda", np.broadcast_to(np.eye(d), (k, d, d)).copy(),
                       dims=("component", "dim", "dim_"))
    w = pm.Dirichlet("w", a=alpha * pt.ones(k), dims="component", initval=init_w)
    lam = pm.Wishart("Lambda", nu=nu0, V=w0, dims=("component", "dim", "dim_"),
                     initval=init_lam)
    mu = pm.Flat("mu", dims=("component", "dim"), initval=init_mu)
    logdet = pt.log(pt.linalg.det(lam))  # (K,); d is small
    # mu_k | Lambda_k ~ Normal(m0, (kappa0 Lambda_k)^-1): log density of every mu_k.
    pm.Potential("mu_prior", pt.sum(_log_normal_precision(
        mu - m0, kappa0 * lam, logdet + d * pt.log(kappa0), d)))
    return w, mu, lam, logdet


def build_model(*, components: int, n_dims: int) -> pm.Model:
    """Complete-data model: labels known, likelihood from per-component statistics."""
    k, d = components, n_dims
    with pm.Model(coords=_coords(k, d)) as model:
        counts = pm.Data("counts", np.zeros(k), dims="component")
        sum_x = pm.Data("sum_x", np.zeros((k, d)), dims=("component", "dim"))
        sum_xx = pm.Data("sum_xx", np.zeros((k, d, d)), dims=("component", "dim", "dim_"))
        w, mu, lam, logdet = _prior(k, d)
        # sum_{i in k} (x_i - mu)^T L (x_i - mu) = tr(L S2) - 2 mu^T L S1 + n mu^T L mu
        quad = (pt.sum(lam * sum_xx, axis=(-2, -1))
                - 2.0 * pt.sum(mu * pt.einsum("kij,kj->ki", lam, sum_x), axis=-1)
                + counts * pt.einsum("ki,kij,kj->k", mu, lam, mu))
        pm.Potential("z_loglik", pt.sum(counts * pt.log(w)))
        pm.Potential("x_loglik", pt.sum(0.5 * counts * logdet
                                        - 0.5 * counts * d * np.log(2.0 * np.pi) - 0.5 * quad))
    return model


def build_mixture_model(*, components: int, n_dims: int, n_obs: int = 1) -> pm.Model:
    """Marginalised mixture: log p(x_i) = logsumexp_k [log w_k + log N(x_i; mu_k, Lambda_k^-1)]."""
    k, d = components, n_dims
    with pm.Model(coords={**_coords(k, d), "obs": np.arange(n_obs)}) as model:
        x = pm.Data("x", np.zeros((n_obs, d)), dims=("obs", "dim"))
        w, mu, lam, logdet = _prior(k, d)
        log_comp = pt.log(w) + _log_normal_precision(x[:, None, :] - mu[None, :, :], lam,
                                                     logdet, d)
        pm.Potential("x_loglik", pt.sum(pm.math.logsumexp(log_comp, axis=1)))
    return model


def _common(*, alpha, m0, kappa0, nu0, w0, init_w, init_mu, init_lambda) -> dict:
    return {"hp_alpha": np.asarray(alpha, dtype=float), "hp_m0": np.asarray(m0, dtype=float),
            "hp_kappa0": np.asarray(kappa0, dtype=float), "hp_nu0": np.int64(nu0),
            "hp_W0": np.asarray(w0, dtype=float), "init_w": np.asarray(init_w, dtype=float),
            "init_mu": np.asarray(init_mu, dtype=float),
            "init_Lambda": np.asarray(init_lambda, dtype=float)}


def model_data(*, x, labels, components, **prior_and_init) -> dict[str, np.ndarray]:
    """Data for ``build_model``: per-component statistics of x (n, d) given labels (n,)."""
    x = np.asarray(x, dtype=float)
    labels = np.asarray(labels, dtype=int)
    onehot = np.eye(components)[labels]  # (n, K)
    return {"counts": onehot.sum(axis=0), "sum_x": onehot.T @ x,
            "sum_xx": np.einsum("nk,ni,nj->kij", onehot, x, x), **_common(**prior_and_init)}


def mixture_data(*, x, **prior_and_init) -> dict[str, np.ndarray]:
    """Data for ``build_mixture_model``."""
    return {"x": np.asarray(x, dtype=float), **_common(**prior_and_init)}
