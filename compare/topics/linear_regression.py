"""The linear-regression topic: Bayesian linear regression with known noise sd (MAP = ridge).

Pairs ``analytic/linear_regression.py`` (the exact answer) with ``pymc_models/linear_regression.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import numpy as np

import analytic.linear_regression as a_lr
import analytic.linear_regression as lr
import pymc_models.linear_regression as m_lr
from compare.core.registry import (
    BuiltinData,
    Calibration,
    DerivedParameter,
    Hyperparameter,
    Sensitivity,
    Topic,
    Unsupported,
)
from compare.topics import _regression as regression
from compare.topics._planted import prior_var, term_bug
from compare.topics._regression import Design, prior_mean_vector


# --- prior sensitivity (compare/studies/sensitivity.py): the maths is in analytic/ ---
def known_noise_path(
    *, x: Design, noise_sd, prior_sd, prior_mean: float = 0.0, interval: float = 0.95, **_structure
):
    """The topic's exact path: :func:`analytic.linear_regression.sensitivity_path`
    on the design's statistics (noise_sd and prior_sd numbers or arrays of shape (G,))."""
    return lr.sensitivity_path(
        suff=x.stats,
        noise_sd=noise_sd,
        prior_sd=prior_sd,
        prior_mean=prior_mean_vector(x, {"prior_mean": prior_mean}),
        interval=interval,
    )


def known_noise_power_scaled(
    *,
    x: Design,
    noise_sd: float,
    prior_sd: float,
    prior_mean: float = 0.0,
    alpha: float,
    component: str,
    **_structure,
):
    """The topic's power-scaled posterior (:func:`analytic.linear_regression.power_scaled`)."""
    return lr.power_scaled(
        suff=x.stats,
        noise_sd=noise_sd,
        prior_sd=prior_sd,
        prior_mean=prior_mean_vector(x, {"prior_mean": prior_mean}),
        alpha=alpha,
        component=component,
    )


def known_noise_log_densities(
    *,
    x: Design,
    theta: np.ndarray,
    noise_sd: float,
    prior_sd: float,
    prior_mean: float = 0.0,
    **_structure,
):
    """The topic's exact log prior and log likelihood at ``theta`` of shape (..., d)
    (:func:`analytic.linear_regression.log_densities`): its PyMC model's likelihood is a
    Potential on the statistics, with no per-observation terms for psense."""
    return lr.log_densities(
        suff=x.stats,
        theta=theta,
        noise_sd=noise_sd,
        prior_sd=prior_sd,
        prior_mean=prior_mean_vector(x, {"prior_mean": prior_mean}),
    )


def _lambda_value(hyper) -> float:
    """Ridge's lambda = noise_sd^2 / prior_sd^2 at the hyperparameters."""
    return float(hyper["noise_sd"]) ** 2 / float(hyper["prior_sd"]) ** 2


def _prior_sd_at_lambda(hyper, value):
    """The prior_sd at which lambda = ``value`` (> 0; a number or an array), noise_sd fixed."""
    return float(hyper["noise_sd"]) / np.sqrt(value)


#: Ridge's penalty as a swept quantity: lambda = noise_sd^2/prior_sd^2,
#: moved through prior_sd at fixed noise; by default over the course's range 1e-8 n .. 0.1 n.
LAMBDA = DerivedParameter(
    name="lambda",
    sets="prior_sd",
    value=_lambda_value,
    solve_for=_prior_sd_at_lambda,
    domain="lambda = noise_sd^2/prior_sd^2 must be > 0; e.g. --log-grid 1e-6:10:100",
    range_per_n=(1e-8, 0.1),
    points=200,
)


def _sqrt(sd, factor):
    """The planted change ``sd_for_var``: the square root of ``sd`` (``factor`` unused)."""
    import pytensor.tensor as pt  # heavy: PyTensor only when a planted bug is built

    return pt.sqrt(sd)


TOPIC = Topic(
    name="linear-regression",
    title="Bayesian linear regression with known noise sd (MAP = ridge)",
    model=(
        "w ~ Normal(prior_mean, prior_sd^2 I);  y = Phi(x) w + Normal(0, noise_sd^2)\n"
        "posterior: S_N^-1 = I/prior_sd^2 + Phi^T Phi/noise_sd^2,  "
        "m_N = S_N (prior_mean/prior_sd^2 + Phi^T y/noise_sd^2)\n"
        "MAP = m_N = ridge with lambda = noise_sd^2/prior_sd^2 (when prior_mean = 0)\n"
        "predictive: Normal(phi^T m_N, noise_sd^2 + phi^T S_N phi)\n"
        "evidence: Normal(y; Phi prior_mean, noise_sd^2 I + prior_sd^2 Phi Phi^T)"
    ),
    data_kind="table",
    text_table=Unsupported(
        "a regression reads numbers only: encode a category as 0/1 columns first"
    ),
    hyperparameters=regression.regression_hyper(
        Hyperparameter("noise_sd", 1.0, "known standard deviation (not variance) of the noise"),
        Hyperparameter("prior_sd", 1.0, "prior standard deviation of every coefficient"),
    ),
    solve=regression.solve_known_noise,
    build_model=m_lr.build_model,
    model_data=lambda *, x, noise_sd, prior_sd, prior_mean=0.0, **_: m_lr.model_data(
        **regression.suff_data(x), noise_sd=noise_sd, prior_sd=prior_sd, prior_mean=prior_mean
    ),
    variables=m_lr.VARIABLES,
    simulate=regression.regression_simulate(a_lr, ("noise_sd", "prior_sd")),
    builtin=(
        BuiltinData(
            **regression.SINUSOID,
            load=regression.sinusoid_loader(),
            hyper={"degree": 3, "noise_sd": 0.3, "prior_sd": 10.0},
            parameters=(
                "w[0]",
                "w[1]",
                "w[2]",
                "w[3]",
            ),  # describe's names, without solving (checked against the solved names in the tests)
        ),
        BuiltinData(
            **regression.DIABETES,
            load=regression.diabetes_loader(),
            hyper={"noise_sd": 0.7, "prior_sd": 1.0},
        ),
    ),
    prepare=regression.prepare,
    structure=regression.structure,
    extras=regression.extras,
    # Polynomial coefficients are strongly correlated: a low-rank mass matrix
    # took ESS from ~900 to ~13,000 per 8000 draws on builtin:sinusoid.
    sampler_options={"adaptation": "low_rank"},
    extra_tests=1,  # the predictive test shares the verdict's alpha
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="lambda",
        derived=(LAMBDA,),
        path=known_noise_path,
        path_params=("prior_sd", "noise_sd", "lambda"),
        path_method="eigendecomposition",
        power_scaled=known_noise_power_scaled,
        log_densities=known_noise_log_densities,
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(
        hyper={"noise_sd": 0.3, "prior_sd": 2.0, "prior_mean": 0.1, "intercept": True, "degree": 2},
        n_obs=20,
    ),
    planted=(
        prior_var("w"),
        term_bug(
            "noise_sd",
            "the noise sd multiplied by factor in the likelihood",
            term="loglik",
            variable="hp_noise_sd",
            change=lambda sd, f: sd * f,
        ),
        term_bug(
            "sd_for_var",
            "the noise sd used as its variance in the likelihood (factor unused)",
            term="loglik",
            variable="hp_noise_sd",
            change=_sqrt,
            neutral=None,
        ),
    ),
    cold_seconds=20,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
