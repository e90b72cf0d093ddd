"""The batched SMC kernel (compare/core/batched_smc.py) against PyMC's own ``IMH``.

For one seed both kernels draw the same random numbers in the same order and
compute each particle's log density with the same arithmetic, so they must
give the same particles, temperatures and log evidence, up to the last bits
a vectorised sum may order differently (1e-12 relative here).
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

pytestmark = pytest.mark.mcmc


def _model():
    import pymc as pm

    rng = np.random.default_rng(4)
    x = rng.standard_normal((40, 3))
    y = x @ np.array([0.5, -1.0, 2.0]) + 0.7 * rng.standard_normal(40)
    with pm.Model() as model:
        w = pm.Normal("w", 0.0, 2.0, shape=3)
        sigma = pm.HalfNormal("sigma", 2.0)
        pm.Normal("y", x @ w, sigma, observed=y)
    return model


def _smc(model, kernel, seed: int):
    import pymc as pm

    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)  # SMC's progress lines
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pm.sample_smc(
            draws=300,
            chains=2,
            cores=1,
            model=model,
            kernel=kernel,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
    logger.setLevel(level)
    # Each chain's estimate after each stage (chains may take different numbers of stages).
    raw = trace.sample_stats["log_marginal_likelihood"].values
    evidence = np.concatenate([np.asarray(list(row), dtype=float).ravel() for row in raw])
    stages = [len(np.asarray(list(row), dtype=float).ravel()) for row in raw]
    return np.append(evidence, stages), np.asarray(trace.posterior["w"].values)


def _same(a, b) -> bool:
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=0.0, equal_nan=True)


def test_the_batched_kernel_gives_pymcs_particles_and_evidence():
    from pymc.smc.kernels import IMH

    from compare.core.batched_smc import BatchedIMH

    model = _model()
    ours_evidence, ours_w = _smc(model, BatchedIMH, seed=8)
    pymc_evidence, pymc_w = _smc(model, IMH, seed=8)
    assert ours_evidence.shape == pymc_evidence.shape
    # NaN until a chain's last stage (the estimate exists at temperature 1 only).
    np.testing.assert_allclose(ours_evidence, pymc_evidence, rtol=1e-12, atol=0.0)
    assert np.isfinite(ours_evidence[:-2]).sum() == 2  # one estimate per chain
    np.testing.assert_allclose(ours_w, pymc_w, rtol=1e-12, atol=1e-12)

    # Power: another seed, or a kernel that drops the prior's log density, is seen.
    other_seed, _ = _smc(model, BatchedIMH, seed=9)
    assert not _same(other_seed, pymc_evidence)

    class PriorDropped(BatchedIMH):
        def _prior(self, particles):
            return np.zeros(len(particles))

    planted, _ = _smc(model, PriorDropped, seed=8)
    assert not _same(planted, pymc_evidence)


def test_a_model_with_a_discrete_variable_runs_as_pymcs_kernel():
    """PyMC rounds discrete values in its per-particle functions; the batched kernel
    leaves such a model to IMH's own way, with IMH's estimate."""
    import pymc as pm
    from pymc.smc.kernels import IMH

    from compare.core.batched_smc import BatchedIMH

    with pm.Model() as model:
        k = pm.Poisson("k", 3.0)
        w = pm.Normal("w", 0.0, 2.0, shape=3)
        pm.Normal("y", w.sum() + k, 1.0, observed=[4.0, 5.5, 3.2])
    ours, _ = _smc(model, BatchedIMH, seed=8)
    pymc, _ = _smc(model, IMH, seed=8)
    assert _same(ours, pymc)
