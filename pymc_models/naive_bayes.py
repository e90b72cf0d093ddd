"""PyMC model: naive Bayes with Dirichlet/Beta priors, by sufficient statistics.

See analytic/naive_bayes.py.  The likelihood of the labelled rows is written
with their sufficient statistics, as Potentials of the counts where it is
a product of probabilities (the density of the rows themselves, so the
model's evidence is the exact side's; a ``Multinomial`` of the counts would
add the multinomial coefficient, a constant, and cost 3.3-3.5 s more of a
cold compile: 26.4 -> 22.9 s on play-tennis, 22.1 -> 18.6 s on spam, new
processes, 2026-12-06):

* labels: ``prod_i pi[y_i] = prod_c pi_c^n_c``, ``class_loglik`` = ``sum_c
  n_c log pi_c``;
* multinomial: ``prod_i prod_k theta[y_i, k]^x_ik = prod_c prod_k
  theta_ck^N_ck``, ``word_loglik``;
* Bernoulli: ``Binomial(n_c, theta_cj)`` of the rows of class c with feature j
  (its log(1 - theta) is PyMC's careful one where theta rounds to 1; the
  binomial coefficient is a constant);
* categorical: ``value_loglik_<g>`` = ``sum N_cjv log theta_cjv`` of the value
  counts of feature j in class c. The features with the same number of values k are one batched
  Dirichlet variable (``theta_<g>``, shape (classes, features with k values,
  k): the same prior as one Dirichlet per feature), gathered from the counts
  by ``columns_<g>`` and joined into ``theta`` (a Deterministic) in the exact
  side's order by ``theta_order``. So a data set's graph depends only on how
  many distinct k it has, not on its features: play-tennis (3, 3, 2, 2 values)
  and titanic (4, 2, 2) are one compiled model;
* gaussian: ``prod_{i in c} Normal(x_ij; mu_cj, sigma2_cj)`` is, in mu and
  sigma2, ``sigma2^(-n_c/2) exp(-(m2_cj + n_c (xbar_cj - mu_cj)^2) / (2 sigma2))``
  times a constant, from the count, mean and centred sum of squares (a
  ``Potential``); ``sigma2 ~ InverseGamma(alpha0, beta0)`` (PyMC's beta is
  the scale, as in the analytic module) and ``mu ~ Normal(mu0,
  sd=sqrt(sigma2 / kappa0))``, joined as ``theta[c, j] = (mu_cj, sigma2_cj)``
  (a Deterministic) in the exact side's order.

So one gradient costs O(C P) whatever the number of rows.  The parameters
line up with the exact side as ``pi`` then ``theta`` (class by class).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pymc_models._common import simplex_transform

if TYPE_CHECKING:
    import pymc as pm


VARIABLES = ("pi", "theta")


def build_model(
    *, variant: str, n_classes: int, n_features: int, n_categories: tuple[int, ...] = ()
) -> pm.Model:
    """``n_features`` = P, the columns of ``feature_counts`` (categorical: sum of n_categories)."""
    import pymc as pm  # heavy: PyMC only when a model is built
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    coords = {
        "class": np.arange(n_classes),
        "feature": np.arange(n_features),
        "moment": ["mu", "sigma2"],
    }
    groups = category_groups(n_categories)
    for g, (k, features) in enumerate(groups):
        coords[f"features_{g}"] = np.arange(len(features))
        coords[f"value_{g}"] = np.arange(k)
    with pm.Model(coords=coords) as model:
        class_counts = pm.Data("class_counts", np.ones(n_classes, dtype=np.int64), dims="class")
        counts = pm.Data(
            "feature_counts",
            np.zeros((n_classes, n_features), dtype=np.int64),
            dims=("class", "feature"),
        )
        class_conc = pm.Data("hp_class_concentration", 1.0)
        alpha = pm.Data("hp_alpha", 1.0)
        # The Gaussian variant's prior; declared for every variant (unused by the count
        # variants) so each of the topic's hyperparameters is a pm.Data of every model.
        mu0 = pm.Data("hp_mu0", 0.0)
        kappa0 = pm.Data("hp_kappa0", 1.0)
        alpha0 = pm.Data("hp_alpha0", 2.0)
        beta0 = pm.Data("hp_beta0", 1.0)
        # Lengths from the data's shapes (ones_like), not Python integers: one compile
        # serves every number of classes and features (the categorical variant's
        # structure is its number of distinct numbers of values: one variable each).
        pi = pm.Dirichlet(
            "pi",
            a=class_conc * pt.ones_like(class_counts, dtype="float64"),
            dims="class",
            default_transform=simplex_transform(),
        )
        pm.Potential("class_loglik", pt.sum(class_counts * pt.log(pi)))
        if variant == "multinomial":
            theta = pm.Dirichlet(
                "theta",
                a=alpha * pt.ones_like(counts, dtype="float64"),
                dims=("class", "feature"),
                default_transform=simplex_transform(),
            )
            pm.Potential("word_loglik", pt.sum(counts * pt.log(theta)))
        elif variant == "bernoulli":
            theta = pm.Beta("theta", alpha=alpha, beta=alpha, dims=("class", "feature"))
            pm.Binomial(
                "presence_obs",
                n=class_counts[:, None],
                p=theta,
                observed=counts,
                dims=("class", "feature"),
            )
        elif variant == "gaussian":
            xbar = pm.Data(
                "feature_mean", np.zeros((n_classes, n_features)), dims=("class", "feature")
            )
            m2 = pm.Data("feature_m2", np.zeros((n_classes, n_features)), dims=("class", "feature"))
            sigma2 = pm.InverseGamma("sigma2", alpha=alpha0, beta=beta0, dims=("class", "feature"))
            mu = pm.Normal("mu", mu=mu0, sigma=pt.sqrt(sigma2 / kappa0), dims=("class", "feature"))
            n_c = pt.cast(class_counts, "float64")[:, None]
            pm.Potential("feature_loglik", gaussian_loglik(n_c, xbar, m2, mu, sigma2))
            pm.Deterministic(
                "theta", pt.stack([mu, sigma2], axis=-1), dims=("class", "feature", "moment")
            )
        elif variant == "categorical":
            index = category_data(n_categories)
            order = pm.Data("theta_order", index["theta_order"], dims="feature")
            parts = []
            for g in range(len(groups)):
                group_dims = ("class", f"features_{g}", f"value_{g}")
                columns = pm.Data(f"columns_{g}", index[f"columns_{g}"], dims=group_dims[1:])
                observed = counts[:, columns]  # (classes, features, values)
                t = pm.Dirichlet(
                    f"theta_{g}",
                    a=alpha * pt.ones_like(observed, dtype="float64"),
                    dims=group_dims,
                    default_transform=simplex_transform(),
                )
                pm.Potential(f"value_loglik_{g}", pt.sum(observed * pt.log(t)))
                parts.append(t.reshape((t.shape[0], -1)))
            joined = pt.concatenate(parts, axis=1)  # the groups' columns, group by group
            pm.Deterministic("theta", joined[:, order], dims=("class", "feature"))
        else:
            raise ValueError(f"unknown variant {variant!r}")
    return model


def category_groups(n_categories) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The features grouped by their number of values: ``(k, features)`` per group, the
    groups by decreasing k, the features in their order."""
    values = sorted(set(n_categories), reverse=True)
    return tuple((k, tuple(j for j, kj in enumerate(n_categories) if kj == k)) for k in values)


def category_columns(n_categories, features) -> np.ndarray:
    """The columns of ``feature_counts`` holding ``features``' values: (features, k)."""
    starts = np.concatenate([[0], np.cumsum(n_categories)[:-1]]).astype(np.int64)
    k = n_categories[features[0]]
    return starts[list(features)][:, None] + np.arange(k, dtype=np.int64)


def category_data(n_categories) -> dict[str, np.ndarray]:
    """The categorical variant's index data: each group's columns and ``theta_order``
    (the feature order of the groups' columns, joined group by group)."""
    groups = category_groups(n_categories)
    out = {f"columns_{g}": category_columns(n_categories, f) for g, (_, f) in enumerate(groups)}
    joined = np.concatenate([out[f"columns_{g}"].ravel() for g in range(len(groups))])
    out["theta_order"] = np.argsort(joined, kind="stable").astype(np.int64)
    return out


def gaussian_loglik(n_c, xbar, m2, mu, sigma2):
    """sum_c sum_j [-n_c/2 log(2 pi sigma2) - (m2 + n_c (xbar - mu)^2) / (2 sigma2)]:
    the Normal log likelihood of the rows from their statistics (exact, not up to a constant)."""
    import pytensor.tensor as pt  # heavy: PyMC only when a model is built

    d = xbar - mu
    return pt.sum(-0.5 * n_c * pt.log(2 * np.pi * sigma2) - (m2 + n_c * d * d) / (2 * sigma2))


def model_data(
    *,
    class_counts: np.ndarray,
    feature_counts: np.ndarray,
    alpha: float,
    class_concentration: float,
    n_categories: tuple[int, ...] = (),
) -> dict[str, np.ndarray]:
    """The count variants' data (``n_categories``: the categorical variant's values per
    feature, whose index data it adds)."""
    return {
        "class_counts": np.asarray(class_counts, dtype=np.int64),
        "feature_counts": np.asarray(feature_counts, dtype=np.int64),
        "hp_alpha": np.asarray(alpha, dtype=float),
        "hp_class_concentration": np.asarray(class_concentration, dtype=float),
        **(category_data(n_categories) if n_categories else {}),
    }


def gaussian_model_data(
    *,
    class_counts: np.ndarray,
    feature_mean: np.ndarray,
    feature_m2: np.ndarray,
    class_concentration: float,
    mu0: float,
    kappa0: float,
    alpha0: float,
    beta0: float,
) -> dict[str, np.ndarray]:
    """The Gaussian variant's data: per class count, per class and feature mean and m2."""
    return {
        "class_counts": np.asarray(class_counts, dtype=np.int64),
        "feature_mean": np.asarray(feature_mean, dtype=float),
        "feature_m2": np.asarray(feature_m2, dtype=float),
        "hp_class_concentration": np.asarray(class_concentration, dtype=float),
        "hp_mu0": np.asarray(mu0, dtype=float),
        "hp_kappa0": np.asarray(kappa0, dtype=float),
        "hp_alpha0": np.asarray(alpha0, dtype=float),
        "hp_beta0": np.asarray(beta0, dtype=float),
    }
