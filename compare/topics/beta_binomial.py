"""The beta-binomial topic: Beta prior, Bernoulli (0/1) likelihood.

Pairs ``analytic/beta_binomial.py`` (the exact answer) with ``pymc_models/beta_binomial.py`` (the same
prior and likelihood in PyMC).
"""

from __future__ import annotations

import analytic.beta_binomial as a_bb
import pymc_models.beta_binomial as m_bb
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    Sensitivity,
    Topic,
    Unsupported,
)
from compare.topics._common import csv_column, simulated_data, simulator

_bb_hyper = (
    Hyperparameter("a", 2.0, "Beta prior's first shape (pseudo-count of ones)"),
    Hyperparameter("b", 2.0, "Beta prior's second shape (pseudo-count of zeros)"),
)
_bb_sim = simulator(a_bb)


TOPIC = Topic(
    name="beta-binomial",
    title="Beta prior, Bernoulli (0/1) likelihood",
    model=(
        "p ~ Beta(a, b);  x_i | p ~ Bernoulli(p)\n"
        "posterior: p | D ~ Beta(a + s, b + n - s), s = sum x_i\n"
        "evidence: B(a + s, b + n - s) / B(a, b) (of the sequence)"
    ),
    data_kind="binary",
    hyperparameters=_bb_hyper,
    solve=a_bb.solve,
    build_model=m_bb.build_model,
    model_data=m_bb.model_data,
    variables=m_bb.VARIABLES,
    parameter_names=a_bb.PARAMETERS,
    simulate=_bb_sim,
    builtin=(
        BuiltinData(
            "birthwt-low",
            "1 if birth weight < 2.5 kg; 189 births, Springfield MA, 1986",
            "R MASS::birthwt$low (Hosmer & Lemeshow 1989)",
            csv_column("birthwt_low.csv", "low", "binary"),
        ),
        simulated_data(_bb_sim, 40, {"a": 2.0, "b": 2.0}, "0/1 outcomes"),
    ),
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="a", path=a_bb.sensitivity_path, power_scaled=a_bb.power_scaled
    ),
    # --- calibration and planted bugs ---
    calibration=Calibration(hyper={"a": 2.0, "b": 3.0}, n_obs=20, samplers=True),
    planted=Unsupported(
        "a Beta prior and a Binomial likelihood have no Normal variance or "
        "sd to get wrong; the planted mistakes (a prior variance or a noise sd "
        "scaled, a variance passed as an sd) are measured on the Normal topics"
    ),
    cold_seconds=10,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
