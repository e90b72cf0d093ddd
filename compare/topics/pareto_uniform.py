"""The pareto-uniform topic: Pareto prior on theta, Uniform(0, theta) likelihood (German tank problem).

Pairs ``analytic/pareto_uniform.py`` (the exact answer) with ``pymc_models/pareto_uniform.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import analytic.pareto_uniform as a_pu
import pymc_models.pareto_uniform as m_pu
from compare.core.registry import (
    Calibration,
    Hyperparameter,
    Sensitivity,
    Topic,
    Unsupported,
)
from compare.topics._common import simulated_data, simulator

_pu_hyper = (
    Hyperparameter("scale", 1.0, "Pareto prior's scale: the smallest theta it allows"),
    Hyperparameter("shape", 2.0, "Pareto prior's shape (tail index)"),
)
_pu_sim = simulator(a_pu)


TOPIC = Topic(
    name="pareto-uniform",
    title="Pareto prior on theta, Uniform(0, theta) likelihood (German tank problem)",
    model=(
        "theta ~ Pareto(scale, shape);  x_i | theta ~ Uniform(0, theta)\n"
        "posterior: Pareto(max(scale, max x), shape + n)"
    ),
    data_kind="nonnegative",
    hyperparameters=_pu_hyper,
    solve=a_pu.solve,
    build_model=m_pu.build_model,
    model_data=m_pu.model_data,
    variables=m_pu.VARIABLES,
    parameter_names=a_pu.PARAMETERS,
    simulate=_pu_sim,
    builtin=(
        simulated_data(
            _pu_sim, 15, {"scale": 100.0, "shape": 2.0}, "serial numbers (German tank problem)"
        ),
    ),
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="shape", path=a_pu.sensitivity_path, power_scaled=a_pu.power_scaled
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(hyper={"scale": 2.0, "shape": 3.0}, n_obs=10),
    planted=Unsupported(
        "a Pareto prior and a Uniform likelihood have no Normal variance or "
        "sd to get wrong; the planted mistakes (a prior variance or a noise sd "
        "scaled, a variance passed as an sd) are measured on the Normal topics"
    ),
    cold_seconds=5,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
