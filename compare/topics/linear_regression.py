"""The linear-regression topic: Bayesian linear regression with known noise sd (MAP = ridge).

Pairs ``analytic/linear_regression.py`` (the exact answer) with ``pymc_models/linear_regression.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import pytensor.tensor as pt

import analytic.linear_regression as a_lr
import pymc_models.linear_regression as m_lr
from compare.core.registry import (
                              BuiltinData,
                              Calibration,
                              Hyperparameter,
                              Sensitivity,
                              Topic,
                              Unsupported,
)
from compare.topics import _regression as regression
from compare.topics._planted import prior_var, term_bug

TOPIC = Topic(
    name="linear-regression",
    title="Bayesian linear regression with known noise sd (MAP = ridge)",
    model=("w ~ Normal(prior_mean, prior_sd^2 I);  y = Phi(x) w + Normal(0, noise_sd^2)\n"
           "posterior: S_N^-1 = I/prior_sd^2 + Phi^T Phi/noise_sd^2,  "
           "m_N = S_N (prior_mean/prior_sd^2 + Phi^T y/noise_sd^2)\n"
           "MAP = m_N = ridge with lambda = noise_sd^2/prior_sd^2 (when prior_mean = 0)\n"
           "predictive: Normal(phi^T m_N, noise_sd^2 + phi^T S_N phi)\n"
           "evidence: Normal(y; Phi prior_mean, noise_sd^2 I + prior_sd^2 Phi Phi^T)"),
    data_kind="table",
    text_table=Unsupported("a regression reads numbers only: encode a category as 0/1 columns first"),
    hyperparameters=regression.regression_hyper(
        Hyperparameter("noise_sd", 1.0, "known standard deviation (not variance) of the noise"),
        Hyperparameter("prior_sd", 1.0, "prior standard deviation of every coefficient"),
    ),
    solve=regression.solve_known_noise,
    build_model=m_lr.build_model,
    model_data=lambda *, x, noise_sd, prior_sd, prior_mean=0.0, **_: m_lr.model_data(
        **regression.suff_data(x), noise_sd=noise_sd, prior_sd=prior_sd, prior_mean=prior_mean),
    variables=m_lr.VARIABLES,
    simulate=regression.regression_simulate(a_lr, ("noise_sd", "prior_sd")),
    builtin=(
        BuiltinData(**regression.SINUSOID, load=regression.sinusoid_loader(),
                    hyper={"degree": 3, "noise_sd": 0.3, "prior_sd": 10.0}),
        BuiltinData(**regression.DIABETES, load=regression.diabetes_loader(), hyper={"noise_sd": 0.7, "prior_sd": 1.0}),
    ),
    prepare=regression.prepare,
    structure=regression.structure,
    extras=regression.extras,
    # Polynomial coefficients are strongly correlated: a low-rank mass matrix
    # took ESS from ~900 to ~13,000 per 8000 draws on builtin:sinusoid.
    sampler_options={"adaptation": "low_rank"},
    extra_tests=1,  # the predictive test shares the verdict's alpha
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(default_param="lambda", derived=(regression.LAMBDA,),
                            path=regression.known_noise_path,
                            path_params=("prior_sd", "noise_sd", "lambda"),
                            path_method="eigendecomposition",
                            power_scaled=regression.known_noise_power_scaled,
                            log_densities=regression.known_noise_log_densities),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        hyper={"noise_sd": 0.3, "prior_sd": 2.0, "prior_mean": 0.1, "intercept": True,
               "degree": 2}, n_obs=20),
    planted=(
        prior_var("w"),
        term_bug("noise_sd", "the noise sd multiplied by factor in the likelihood",
                 term="loglik", variable="hp_noise_sd", change=lambda sd, f: sd * f),
        term_bug("sd_for_var", "the noise sd used as its variance in the likelihood "
                 "(factor unused)", term="loglik", variable="hp_noise_sd",
                 change=lambda sd, f: pt.sqrt(sd), neutral=None)),
)
