"""pymc_models.linear_regression without sampling: the sufficient-statistics model is
the plain per-observation one.  (Moved from tests/compare/topics/test_regression.py:
it tests the PyMC module, not the topic's glue.)"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

import pymc_models.linear_regression as m_lr
from compare.core.data import table_from_arrays
from compare.topics import _regression as regression
from tests.evaluation import EVAL_MODE


def _design(rng, n=30, degree=3):
    x = np.sort(rng.uniform(0, 1, n))
    y = np.sin(2 * np.pi * x) + rng.normal(0, 0.3, n)
    return table_from_arrays(x, y, features=("x",), target="y"), degree


def test_sufficient_statistics_likelihood_equals_the_plain_one(rng):
    """Same log density at any w, to rounding: the O(d^2) form is the same model."""
    table, degree = _design(rng)
    design, _ = regression.prepare(table, {"degree": degree, "intercept": True})
    hyper = dict(noise_sd=0.3, prior_sd=2.0, prior_mean=0.1)
    suff = m_lr.build_model(n_features=4, n_grid=design.grid_phi.shape[0])
    pm.set_data(m_lr.model_data(**regression.suff_data(design), **hyper), model=suff)
    plain = m_lr.build_plain_model(n_features=4, n_obs=table.n, n_grid=design.grid_phi.shape[0])
    pm.set_data(
        {
            "phi": design.phi,
            "y": design.y,
            "phi_grid": design.grid_phi,
            "hp_prior_mean": 0.1,
            "hp_prior_sd": 2.0,
            "hp_noise_sd": 0.3,
        },
        model=plain,
        coords={"obs": np.arange(table.n)},
    )
    f_suff, f_plain = suff.compile_logp(mode=EVAL_MODE), plain.compile_logp(mode=EVAL_MODE)
    for w in rng.normal(0, 2, size=(5, 4)):
        assert f_suff({"w": w}) == pytest.approx(f_plain({"w": w}), rel=1e-10)
