"""PyMC model: naive Bayes with Dirichlet/Beta priors, by sufficient statistics.

See analytic/naive_bayes.py.  The likelihood of the labelled rows is written
with their sufficient statistics, which changes it only by a constant:

* labels: ``prod_i pi[y_i] = prod_c pi_c^n_c`` -> ``Multinomial(n, pi)`` of
  the class counts;
* multinomial: ``prod_i prod_k theta[y_i, k]^x_ik = prod_c prod_k
  theta_ck^N_ck`` -> ``Multinomial(N_c, theta_c)`` of each class's word counts;
* Bernoulli: ``Binomial(n_c, theta_cj)`` of the rows of class c with feature j;
* categorical: ``Multinomial(n_c, theta_cj)`` of the value counts of feature j
  in class c, one Dirichlet variable per feature (``theta_<j>``), joined into
  ``theta`` (a Deterministic) in the exact side's order.

So one gradient costs O(C P) whatever the number of rows.  The parameters
line up with the exact side as ``pi`` then ``theta`` (class by class).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

VARIABLES = ("pi", "theta")


def build_model(*, variant: str, n_classes: int, n_features: int,
                n_categories: tuple[int, ...] = ()) -> pm.Model:
    """``n_features`` = P, the columns of ``feature_counts`` (categorical: sum of n_categories)."""
    coords = {"class": np.arange(n_classes), "feature": np.arange(n_features)}
    for j, k in enumerate(n_categories):
        coords[f"value_{j}"] = np.arange(k)
    with pm.Model(coords=coords) as model:
        class_counts = pm.Data("class_counts", np.ones(n_classes, dtype=np.int64), dims="class")
        counts = pm.Data("feature_counts", np.zeros((n_classes, n_features), dtype=np.int64),
                         dims=("class", "feature"))
        class_conc = pm.Data("hp_class_concentration", 1.0)
        alpha = pm.Data("hp_alpha", 1.0)
        pi = pm.Dirichlet("pi", a=class_conc * pt.ones(n_classes), dims="class")
        pm.Multinomial("class_obs", n=class_counts.sum(), p=pi, observed=class_counts,
                       dims="class")
        if variant == "multinomial":
            theta = pm.Dirichlet("theta", a=alpha * pt.ones((n_classes, n_features)),
                                 dims=("class", "feature"))
            pm.Multinomial("word_obs", n=counts.sum(axis=1), p=theta, observed=counts,
                           dims=("class", "feature"))
        elif variant == "bernoulli":
            theta = pm.Beta("theta", alpha=alpha, beta=alpha, dims=("class", "feature"))
            pm.Binomial("presence_obs", n=class_counts[:, None], p=theta, observed=counts,
                        dims=("class", "feature"))
        elif variant == "categorical":
            parts, start = [], 0
            for j, k in enumerate(n_categories):
                t = pm.Dirichlet(f"theta_{j}", a=alpha * pt.ones((n_classes, k)),
                                 dims=("class", f"value_{j}"))
                pm.Multinomial(f"value_obs_{j}", n=class_counts, p=t,
                               observed=counts[:, start:start + k], dims=("class", f"value_{j}"))
                parts.append(t)
                start += k
            pm.Deterministic("theta", pt.concatenate(parts, axis=1), dims=("class", "feature"))
        else:
            raise ValueError(f"unknown variant {variant!r}")
    return model


def model_data(*, class_counts: np.ndarray, feature_counts: np.ndarray, alpha: float,
               class_concentration: float) -> dict[str, np.ndarray]:
    return {"class_counts": np.asarray(class_counts, dtype=np.int64),
            "feature_counts": np.asarray(feature_counts, dtype=np.int64),
            "hp_alpha": np.asarray(alpha, dtype=float),
            "hp_class_concentration": np.asarray(class_concentration, dtype=float)}
