"""Deliberately wrong PyMC models, for measuring the verdict's power.

Each is the topic's correct model with one classic mistake planted:

* ``prior_var``: the prior variance multiplied by ``factor``;
* ``noise_sd``: the likelihood's sd multiplied by ``factor``;
* ``sd_for_var``: a variance passed where PyMC expects a standard deviation.

``planted(topic_name, bug, factor)`` returns a :class:`Topic` whose exact
side is unchanged and whose PyMC side carries the bug; run it like any topic
and a good verdict says ``disagree``.  Used by ``tests/compare/test_power.py``
and ``benchmarks/verdict_study.py``.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from compare.core.registry import Topic
from compare.topics import get_topic
from pymc_models._common import obs_coords

BUGS = ("prior_var", "noise_sd", "sd_for_var")


def _normal_known_variance(bug: str, factor: float):
    def build_model(*, n_obs: int = 1) -> pm.Model:
        with pm.Model(coords=obs_coords(n_obs)) as model:
            x = pm.Data("x", np.zeros(n_obs), dims="obs")
            prior_mean = pm.Data("hp_prior_mean", 0.0)
            prior_sd = pm.Data("hp_prior_sd", 1.0)
            noise_sd = pm.Data("hp_noise_sd", 1.0)
            if bug == "prior_var":
                prior_sd = prior_sd * np.sqrt(factor)
            if bug == "noise_sd":
                noise_sd = noise_sd * factor
            if bug == "sd_for_var":
                noise_sd = noise_sd**2  # the variance, passed as sigma
            mu = pm.Normal("mu", mu=prior_mean, sigma=prior_sd)
            pm.Normal("x_obs", mu=mu, sigma=noise_sd, observed=x, dims="obs")
        return model
    return build_model


def _normal_inverse_gamma(bug: str, factor: float):
    def build_model(*, n_obs: int = 1) -> pm.Model:
        with pm.Model(coords=obs_coords(n_obs)) as model:
            x = pm.Data("x", np.zeros(n_obs), dims="obs")
            mu0 = pm.Data("hp_mu0", 0.0)
            kappa0 = pm.Data("hp_kappa0", 1.0)
            alpha0 = pm.Data("hp_alpha0", 1.0)
            beta0 = pm.Data("hp_beta0", 1.0)
            sigma2 = pm.InverseGamma("sigma2", alpha=alpha0, beta=beta0)
            prior_sd = pt.sqrt(sigma2 / kappa0)
            noise_sd = pt.sqrt(sigma2)
            if bug == "prior_var":
                prior_sd = prior_sd * np.sqrt(factor)
            if bug == "noise_sd":
                noise_sd = noise_sd * factor
            if bug == "sd_for_var":
                prior_sd = sigma2 / kappa0  # the variance, passed as sigma
            mu = pm.Normal("mu", mu=mu0, sigma=prior_sd)
            pm.Normal("x_obs", mu=mu, sigma=noise_sd, observed=x, dims="obs")
        return model
    return build_model


def _linear_regression(nig: bool):
    from pymc_models.linear_regression import _coords, gaussian_loglik

    def build_model(*, n_features: int, n_grid: int = 1, bug: str, factor: float) -> pm.Model:
        with pm.Model(coords=_coords(n_features, n_grid)) as model:
            gram = pm.Data("gram", np.eye(n_features), dims=("feature", "feature_"))
            phi_t_y = pm.Data("phi_t_y", np.zeros(n_features), dims="feature")
            y_t_y = pm.Data("y_t_y", 0.0)
            n = pm.Data("n_obs", 0.0)
            phi_grid = pm.Data("phi_grid", np.zeros((n_grid, n_features)),
                               dims=("grid", "feature"))
            prior_mean = pm.Data("hp_prior_mean", 0.0)
            if nig:
                prior_scale = pm.Data("hp_prior_scale", 1.0)
                alpha0 = pm.Data("hp_alpha0", 1.0)
                beta0 = pm.Data("hp_beta0", 1.0)
                sigma2 = pm.InverseGamma("sigma2", alpha=alpha0, beta=beta0)
                prior_sd = pt.sqrt(sigma2) * prior_scale
                noise_var = sigma2
            else:
                prior_sd = pm.Data("hp_prior_sd", 1.0)
                noise_var = pm.Data("hp_noise_sd", 1.0) ** 2
            if bug == "prior_var":
                prior_sd = prior_sd * np.sqrt(factor)
            if bug == "noise_sd":
                noise_var = noise_var * factor**2
            if bug == "sd_for_var":
                noise_var = pt.sqrt(noise_var)  # the sd, used as the variance
            w = pm.Normal("w", mu=prior_mean, sigma=prior_sd, dims="feature")
            pm.Potential("loglik", gaussian_loglik(gram, phi_t_y, y_t_y, n, w, noise_var))
            pm.Deterministic("f_grid", pt.dot(phi_grid, w), dims="grid")
        return model

    def factory(bug: str, factor: float):
        return lambda **structure: build_model(**structure, bug=bug, factor=factor)
    return factory


def _naive_bayes(bug: str, factor: float):
    """The Gaussian variant of naive-bayes (pymc_models/naive_bayes.py) with the bug;
    the count variants have no variances to get wrong."""
    from pymc_models import naive_bayes as m_nb

    def build_model(*, variant: str, n_classes: int, n_features: int,
                    n_categories: tuple[int, ...] = ()) -> pm.Model:
        if variant != "gaussian":
            raise ValueError(f"planted naive-bayes bugs need variant=gaussian, got {variant!r}")
        dims = ("class", "feature")
        coords = {"class": np.arange(n_classes), "feature": np.arange(n_features),
                  "moment": ["mu", "sigma2"]}
        with pm.Model(coords=coords) as model:
            class_counts = pm.Data("class_counts", np.ones(n_classes, dtype=np.int64),
                                   dims="class")
            xbar = pm.Data("feature_mean", np.zeros((n_classes, n_features)), dims=dims)
            m2 = pm.Data("feature_m2", np.zeros((n_classes, n_features)), dims=dims)
            class_conc = pm.Data("hp_class_concentration", 1.0)
            mu0 = pm.Data("hp_mu0", 0.0)
            kappa0 = pm.Data("hp_kappa0", 1.0)
            alpha0 = pm.Data("hp_alpha0", 2.0)
            beta0 = pm.Data("hp_beta0", 1.0)
            pi = pm.Dirichlet("pi", a=class_conc * pt.ones(n_classes), dims="class")
            pm.Multinomial("class_obs", n=class_counts.sum(), p=pi, observed=class_counts,
                           dims="class")
            sigma2 = pm.InverseGamma("sigma2", alpha=alpha0, beta=beta0, dims=dims)
            prior_sd = pt.sqrt(sigma2 / kappa0)
            noise_var = sigma2
            if bug == "prior_var":
                prior_sd = prior_sd * np.sqrt(factor)
            if bug == "noise_sd":
                noise_var = noise_var * factor**2
            if bug == "sd_for_var":
                prior_sd = sigma2 / kappa0  # the variance, passed as sigma
            mu = pm.Normal("mu", mu=mu0, sigma=prior_sd, dims=dims)
            n_c = pt.cast(class_counts, "float64")[:, None]
            pm.Potential("feature_loglik", m_nb.gaussian_loglik(n_c, xbar, m2, mu, noise_var))
            pm.Deterministic("theta", pt.stack([mu, sigma2], axis=-1),
                             dims=("class", "feature", "moment"))
        return model
    return build_model


_BUILDERS = {
    "naive-bayes": _naive_bayes,
    "linear-regression": _linear_regression(nig=False),
    "linear-regression-nig": _linear_regression(nig=True),
    "normal-known-variance": _normal_known_variance,
    "normal-inverse-gamma": _normal_inverse_gamma,
}


@cache
def planted(topic_name: str, bug: str, factor: float = 1.0) -> Topic:
    """The topic with ``bug`` planted in its PyMC model (cached: one compile each)."""
    if topic_name not in _BUILDERS:
        raise ValueError(f"no planted bugs for {topic_name!r}; have {sorted(_BUILDERS)}")
    if bug not in BUGS:
        raise ValueError(f"bug must be one of {BUGS}, got {bug!r}")
    topic = get_topic(topic_name)
    return dataclasses.replace(topic, build_model=_BUILDERS[topic_name](bug, float(factor)))
