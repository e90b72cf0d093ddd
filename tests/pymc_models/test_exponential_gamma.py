"""Tests for pymc_models.exponential_gamma: the PyMC model is the analytic one.

No sampling: the model's joint log density (prior + likelihood, without the
log transform's Jacobian, at the untransformed rate) must equal
``analytic.exponential_gamma.log_density`` up to a constant that does not
depend on the rate.  Both are normalised here, so the constant is 0 up to
rounding; the test asserts only that it is constant (1e-8), which is what
the comparison of posteriors needs.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from analytic import exponential_gamma as eg
from pymc_models import exponential_gamma as m_eg
from tests.evaluation import EVAL_MODE

SHAPE, RATE = 2.5, 0.8


@pytest.fixture
def x(rng) -> np.ndarray:
    return rng.exponential(2.5, size=12)


def _model(x: np.ndarray, shape: float, rate: float) -> pm.Model:
    model = m_eg.build_model(n_obs=x.size)
    pm.set_data(
        m_eg.model_data(x=x, shape=shape, rate=rate), model=model, coords={"obs": np.arange(x.size)}
    )
    return model


def test_variables_line_up_with_the_analytic_parameters():
    assert m_eg.VARIABLES == eg.PARAMETERS
    model = m_eg.build_model(n_obs=3)
    assert [rv.name for rv in model.free_RVs] == list(m_eg.VARIABLES)


@pytest.mark.parametrize(("shape", "rate"), [(SHAPE, RATE), (0.7, 30.0)])
def test_joint_logp_equals_analytic_log_density_up_to_a_constant(x, shape, rate):
    model = _model(x, shape, rate)
    logp = model.compile_logp(jacobian=False, mode=EVAL_MODE)
    value = model.rvs_to_values[model["rate"]].name  # "rate_log__": PyMC samples log(rate)
    thetas = np.array([0.05, 0.2, 0.4, 0.9, 3.0])
    got = np.array([float(logp({value: np.log(t)})) for t in thetas])
    ref = eg.log_density(theta=thetas[:, None], x=x, shape=shape, rate=rate)
    diff = got - ref
    np.testing.assert_allclose(diff, diff[0], rtol=0, atol=1e-8 * np.max(np.abs(ref)))


def test_the_check_detects_a_planted_bug(x):
    """Power: the real model times exp(-rate) (the prior's rate off by one, a
    factor built on the model rather than a copy of it) makes the difference
    move by the spread of the thetas, 2.95, far beyond 1e-8."""
    model = _model(x, SHAPE, RATE)
    with model:
        pm.Potential("planted", -model["rate"])
    logp = model.compile_logp(jacobian=False, mode=EVAL_MODE)
    value = model.rvs_to_values[model["rate"]].name
    thetas = np.array([0.05, 0.2, 0.4, 0.9, 3.0])
    got = np.array([float(logp({value: np.log(t)})) for t in thetas])
    diff = got - eg.log_density(theta=thetas[:, None], x=x, shape=SHAPE, rate=RATE)
    assert np.ptp(diff) == pytest.approx(np.ptp(thetas), rel=1e-8)


def test_model_follows_new_data_and_hyperparameters(x):
    """One compiled logp, new pm.Data values: still the analytic density."""
    model = _model(x, SHAPE, RATE)
    logp = model.compile_logp(jacobian=False, mode=EVAL_MODE)
    value = model.rvs_to_values[model["rate"]].name
    thetas = np.array([0.1, 0.5, 2.0])
    for data, shape, rate in [(x * 3.0, 4.0, 0.1), (np.zeros(x.size), 1.0, 2.0)]:
        pm.set_data(m_eg.model_data(x=data, shape=shape, rate=rate), model=model)
        got = np.array([float(logp({value: np.log(t)})) for t in thetas])
        ref = eg.log_density(theta=thetas[:, None], x=data, shape=shape, rate=rate)
        diff = got - ref
        np.testing.assert_allclose(diff, diff[0], rtol=0, atol=1e-8 * np.max(np.abs(ref)))


def test_model_builds_with_model_data(x):
    data = m_eg.model_data(x=x, shape=SHAPE, rate=RATE)
    assert set(data) == {"x", "hp_shape", "hp_rate"}
    model = _model(x, SHAPE, RATE)
    np.testing.assert_array_equal(model["x"].get_value(), x)
    assert float(model["hp_rate"].get_value()) == RATE
    assert model.named_vars_to_dims["x_obs"] == ("obs",)
    # PyMC starts the Gamma at its mean, shape / rate: the hyperparameters reached it.
    assert model.initial_point()["rate_log__"] == pytest.approx(np.log(SHAPE / RATE), rel=1e-12)
