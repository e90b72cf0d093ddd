"""The gamma-poisson topic: Gamma prior, Poisson likelihood.

Pairs ``analytic/gamma_poisson.py`` (the exact answer) with ``pymc_models/gamma_poisson.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import analytic.gamma_poisson as a_gp
import pymc_models.gamma_poisson as m_gp
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    Sensitivity,
    Topic,
    Unsupported,
)
from compare.topics._common import csv_column, simulated_data, simulator

_gp_hyper = (
    Hyperparameter("shape", 2.0, "Gamma prior's shape"),
    Hyperparameter("rate", 1.0, "Gamma prior's rate (inverse scale); prior mean = shape / rate"),
)
_gp_sim = simulator(a_gp)


TOPIC = Topic(
    name="gamma-poisson",
    title="Gamma prior, Poisson likelihood",
    model=(
        "rate ~ Gamma(shape, rate=rate0);  x_i | rate ~ Poisson(rate)\n"
        "posterior: Gamma(shape + sum x_i, rate0 + n)\n"
        "predictive: NegBinomial(shape_n, rate_n / (rate_n + 1))"
    ),
    data_kind="counts",
    hyperparameters=_gp_hyper,
    solve=a_gp.solve,
    build_model=m_gp.build_model,
    model_data=m_gp.model_data,
    variables=m_gp.VARIABLES,
    parameter_names=a_gp.PARAMETERS,
    simulate=_gp_sim,
    builtin=(
        BuiltinData(
            "discoveries",
            "great inventions and discoveries per year, 1860-1959",
            "R datasets::discoveries (World Almanac 1975)",
            csv_column("discoveries.csv", "discoveries", "counts"),
        ),
        simulated_data(_gp_sim, 30, {"shape": 2.0, "rate": 1.0}, "counts"),
    ),
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="rate", path=a_gp.sensitivity_path, power_scaled=a_gp.power_scaled
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(hyper={"shape": 3.0, "rate": 0.7}, n_obs=15),
    planted=Unsupported(
        "a Gamma prior and a Poisson likelihood have no Normal variance or "
        "sd to get wrong; the planted mistakes (a prior variance or a noise sd "
        "scaled, a variance passed as an sd) are measured on the Normal topics"
    ),
    cold_seconds=10,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
