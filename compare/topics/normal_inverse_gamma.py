"""The normal-inverse-gamma topic: Normal-Inverse-Gamma prior, Normal likelihood with unknown mean and variance.

Pairs ``analytic/normal_inverse_gamma.py`` (the exact answer) with ``pymc_models/normal_inverse_gamma.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import analytic.normal_inverse_gamma as a_nig
import pymc_models.normal_inverse_gamma as m_nig
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    Sensitivity,
    Topic,
)
from compare.topics._common import csv_column, simulated_data, simulator
from compare.topics._planted import noise_sd, prior_var, variance_for_sd

_nig_hyper = (
    Hyperparameter("mu0", 0.0, "prior mean of mu", kind="real"),
    Hyperparameter(
        "kappa0", 1.0, "prior pseudo-observations on mu: mu | sigma2 ~ N(mu0, sigma2/kappa0)"
    ),
    Hyperparameter("alpha0", 2.0, "InvGamma shape of sigma2"),
    Hyperparameter("beta0", 2.0, "InvGamma scale of sigma2 (prior mean beta0/(alpha0-1))"),
)
_nig_sim = simulator(a_nig)


TOPIC = Topic(
    name="normal-inverse-gamma",
    title="Normal-Inverse-Gamma prior, Normal likelihood with unknown mean and variance",
    model=(
        "sigma2 ~ InvGamma(alpha0, beta0);  mu | sigma2 ~ Normal(mu0, sigma2/kappa0)\n"
        "x_i | mu, sigma2 ~ Normal(mu, sigma2)\n"
        "posterior: kappa_n = kappa0 + n, mu_n = (kappa0 mu0 + n xbar)/kappa_n,\n"
        "  alpha_n = alpha0 + n/2, beta_n = beta0 + SS/2 + kappa0 n (xbar - mu0)^2 / (2 kappa_n)\n"
        "marginals: mu ~ t_{2 alpha_n}(mu_n, beta_n/(alpha_n kappa_n)), "
        "sigma2 ~ InvGamma(alpha_n, beta_n)"
    ),
    data_kind="reals",
    hyperparameters=_nig_hyper,
    solve=a_nig.solve,
    build_model=m_nig.build_model,
    model_data=m_nig.model_data,
    variables=m_nig.VARIABLES,
    parameter_names=a_nig.PARAMETERS,
    simulate=_nig_sim,
    builtin=(
        BuiltinData(
            "newcomb",
            "Newcomb's 1882 light passage times, ns - 24,800 (66 values)",
            "R MASS::newcomb (Stigler 1977)",
            csv_column("newcomb.csv", "passage_time", "reals"),
            hyper={"mu0": 25.0, "kappa0": 0.5, "alpha0": 2.0, "beta0": 100.0},
        ),
        simulated_data(
            _nig_sim,
            25,
            {"mu0": 0.0, "kappa0": 1.0, "alpha0": 2.0, "beta0": 2.0},
            "real observations",
        ),
    ),
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="kappa0", path=a_nig.sensitivity_path, power_scaled=a_nig.power_scaled
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        hyper={"mu0": 0.7, "kappa0": 1.6, "alpha0": 3.5, "beta0": 5.2},
        n_obs=12,
        # Power: the prior holds a real share of the posterior precision (kappa0 = 3, n = 6).
        power=Calibration(hyper={"mu0": 0.7, "kappa0": 3.0, "alpha0": 3.5, "beta0": 5.2}, n_obs=6),
        samplers=True,  # two parameters, correlated a posteriori
    ),
    planted=(prior_var("mu"), noise_sd("x_obs"), variance_for_sd("mu")),
    cold_seconds=5,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
