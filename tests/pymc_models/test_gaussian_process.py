"""pymc_models.gaussian_process against analytic.gaussian_process, without sampling:
the GP model's conditional of f and its marginal likelihood, and the hyperparameter
model's log density.  (Moved from tests/compare/topics/test_gaussian_process.py:
they test the PyMC module, not the topic's glue.)"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytest

import analytic.gaussian_process as agp
import pymc_models.gaussian_process as m_gp
from compare.core.data import table_from_arrays
from tests.evaluation import EVAL_MODE

HYPER = dict(lengthscale=0.8, signal_sd=1.3, noise_sd=0.3, jitter=1e-8)


def _table(rng, n=25, p=2):
    x = rng.uniform(0.0, 5.0, size=(n, p))
    y = np.sin(x[:, 0]) + rng.normal(0.0, 0.3, n)
    return table_from_arrays(x, y, features=tuple(f"x{j}" for j in range(p)), target="y")


@pytest.mark.parametrize("kernel", agp.KERNELS)
def test_pymc_gp_is_the_exact_gp(kernel, rng):
    """PyMC's conditional mean and covariance of f and its marginal likelihood equal the
    exact ones at any data (no sampling): the model NUTS samples is the same model.

    PyMC computes distances as sqrt(r^2 + 1e-12) for the Matern kernels, a ~1e-12
    change; both sides round differently in float64 (~1e-12 here), so 1e-8.
    """
    table = _table(rng)
    x_test = rng.uniform(0.0, 5.0, size=(3, 2))
    model = m_gp.build_model(kernel=kernel, input_dim=2, n_test=3)
    pm.set_data(
        m_gp.model_data(x=table.x, y=table.y, x_test=x_test, **HYPER),
        model=model,
        coords={"obs": np.arange(table.n)},
    )
    mu, cov = model["f"].owner.inputs[-2:]
    loglik = model.logp(vars=[model["y_obs"]], jacobian=False)
    got_mu, got_cov, got_loglik = pytensor.function([], [mu, cov, loglik], mode=EVAL_MODE)()
    ans = agp.solve(x=table.x, y=table.y, x_test=x_test, kernel=kernel, **HYPER)
    np.testing.assert_allclose(got_mu, ans.posterior.mean, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(got_cov, ans.posterior.cov, rtol=1e-8, atol=1e-8)
    assert float(got_loglik) == pytest.approx(ans.log_evidence, rel=1e-8)


def test_hyperparameter_model_is_lognormal_priors_times_the_evidence(rng):
    """The non-conjugate model of hyperparameter_posterior, checked without sampling:
    its log density at any point is the log-normal priors (scipy) plus the exact log
    marginal likelihood.  (Sampling it is shown in docs/topics/gaussian-process.md; not run here.)"""
    from scipy import stats

    table = _table(rng, n=15, p=1)
    medians = {"lengthscale": 1.0, "signal_sd": 2.0, "noise_sd": 0.5}
    log_sds = {"lengthscale": 0.5, "signal_sd": 0.7, "noise_sd": 0.3}
    model = m_gp.build_hyper_model(
        kernel="matern32", x=table.x, y=table.y, medians=medians, log_sds=log_sds, jitter=1e-8
    )
    logp = model.compile_logp(jacobian=False, mode=EVAL_MODE)
    point = {"lengthscale": 1.4, "signal_sd": 0.8, "noise_sd": 0.35}
    got = logp({f"{k}_log__": np.log(v) for k, v in point.items()})
    prior = sum(stats.lognorm(log_sds[k], scale=medians[k]).logpdf(v) for k, v in point.items())
    lml = agp.log_marginal_likelihood(x=table.x, y=table.y, kernel="matern32", jitter=1e-8, **point)
    assert float(got) == pytest.approx(prior + lml, rel=1e-8)
