"""The normal-known-variance topic: Normal prior on the mean, Normal likelihood with known noise sd.

Pairs ``analytic/normal_known_variance.py`` (the exact answer) with ``pymc_models/normal_known_variance.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import numpy as np

import analytic.normal_known_variance as a_nkv
import pymc_models.normal_known_variance as m_nkv
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    Sensitivity,
    Topic,
)
from compare.topics._common import SIMULATED_SEED, csv_column, simulated_data, simulator
from compare.topics._planted import noise_sd, prior_var, variance_for_sd

_nkv_hyper = (
    Hyperparameter("prior_mean", 0.0, "mean of the Normal prior on mu", kind="real"),
    Hyperparameter("prior_sd", 10.0, "standard deviation (not variance) of the prior on mu"),
    Hyperparameter("noise_sd", 1.0, "known standard deviation (not variance) of each observation"),
)
_nkv_sim = simulator(a_nkv)


TOPIC = Topic(
    name="normal-known-variance",
    title="Normal prior on the mean, Normal likelihood with known noise sd",
    model=(
        "mu ~ Normal(prior_mean, prior_sd^2);  x_i | mu ~ Normal(mu, noise_sd^2)\n"
        "posterior precision: 1/prior_sd^2 + n/noise_sd^2\n"
        "posterior mean: (prior_mean/prior_sd^2 + n xbar/noise_sd^2) / precision"
    ),
    data_kind="reals",
    hyperparameters=_nkv_hyper,
    solve=a_nkv.solve,
    build_model=m_nkv.build_model,
    model_data=m_nkv.model_data,
    variables=m_nkv.VARIABLES,
    parameter_names=a_nkv.PARAMETERS,
    simulate=_nkv_sim,
    builtin=(
        BuiltinData(
            "morley",
            "Michelson's 1879 speed of light, km/s - 299,000 (100 runs); "
            "prior from Foucault's 1862 value 298,000 +- 500 km/s",
            "R datasets::morley",
            csv_column("morley.csv", "speed", "reals"),
            hyper={"prior_mean": -1000.0, "prior_sd": 500.0, "noise_sd": 79.0},
        ),
        simulated_data(
            _nkv_sim,
            20,
            {"prior_mean": 0.0, "prior_sd": 10.0, "noise_sd": 1.0},
            "real observations",
        ),
        # Prior-data conflict (compare/sensitivity.py): the prior says mu = 0 +- 0.5,
        # ten observations say about 3 +- 0.3; both power-scalings move the posterior.
        BuiltinData(
            "conflict",
            "10 draws of Normal(3, 1) under a prior Normal(0, 0.5^2) "
            "that conflicts with them (for `bayes-compare sensitivity`)",
            f"simulated, seed {SIMULATED_SEED}",
            lambda: np.random.default_rng(SIMULATED_SEED).normal(3.0, 1.0, 10),
            hyper={"prior_mean": 0.0, "prior_sd": 0.5, "noise_sd": 1.0},
        ),
    ),
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="prior_sd", path=a_nkv.sensitivity_path, power_scaled=a_nkv.power_scaled
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        hyper={"prior_mean": 0.7, "prior_sd": 1.3, "noise_sd": 2.1},
        n_obs=4,
        # Power: the prior holds a real share of the posterior precision (0.59 of 1.50).
        power=Calibration(hyper={"prior_mean": 0.7, "prior_sd": 1.3, "noise_sd": 2.1}, n_obs=4),
    ),
    planted=(prior_var("mu"), noise_sd("x_obs"), variance_for_sd("x_obs")),
    cold_seconds=5,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
