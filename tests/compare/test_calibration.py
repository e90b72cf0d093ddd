"""Calibration with real MCMC: 50 PyMC runs per conjugate topic (30 per regression
topic, 20 for the mixture) on fresh data and seeds.

Under the null each test quantity's z-score, across independent runs, must
be standard normal within its sampling error, and the family-wise
false-alarm rate at alpha = 0.05 near 0.05.  The draws depend on the
PyTensor compile cache, so these checks are statistical, with their own
false-failure rates stated.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from compare.calibration import NULL_FIXTURES, mcmc_null
from compare.registry import get_topic

pytestmark = pytest.mark.mcmc

REPLICATIONS = 50

#: Slower runs get fewer replications (the mixture's complete-data model costs
#: ~2.3 s a run, a regression run ~0.7 s); the six conjugate topics keep 50.
FEWER = {"gaussian-mixture": 20, "linear-regression": 30, "linear-regression-nig": 30,
         "gaussian-process": 20,
         # pm.sample's Python-level Metropolis-within-Gibbs: ~4 s a run.
         "naive-bayes": 30, "bayes-optimal": 12,
         "logistic-regression": 20,
         # The classifier's conjugate model (the mixture's complete-data one): ~2 s a run.
         "gaussian-classifier": 20}


@pytest.fixture(scope="module")
def studies():
    return {name: mcmc_null(get_topic(name), replications=FEWER.get(name, REPLICATIONS),
                            n_obs=n, hyper=hyper, seed=20261129 + i)
            for i, (name, (hyper, n)) in enumerate(NULL_FIXTURES.items())}


def test_every_topic_is_covered():
    from compare.registry import all_topics

    assert set(NULL_FIXTURES) == {t.name for t in all_topics()}


@pytest.mark.parametrize("name", list(NULL_FIXTURES))
def test_mcmc_z_scores_are_standard_normal(studies, name):
    """Per quantity, the 50 z's pass a KS test against N(0, 1).

    Bonferroni over the quantities at 1e-4 per topic: a correctly calibrated
    test fails here with probability <= 1e-4.  ESS is estimated, so the z's
    are slightly over- or under-dispersed; 50 runs cannot see that, the
    study in benchmarks/verdict_study.py (500 runs) measures it.
    """
    study = studies[name]
    m = len(study.names)
    ks = np.array([stats.kstest(study.z[:, j], "norm").pvalue for j in range(m)])
    assert ks.min() * m > 1e-4, dict(zip(study.names, ks.round(5)))
    # The deterministic checks never fire on a correct model: every verdict is
    # decided by a statistical test (which may, rarely, say disagree).
    assert set(study.decided_by) <= {"agreement", "predictive"}, study.decided_by


def test_mcmc_false_alarm_rate_is_near_alpha(studies):
    """Pooled over the topics (380 runs): rate at alpha=0.05 <= 0.05 + 4 SE.

    Four binomial SEs above 0.05 is about 0.095; a test calibrated at 0.05
    exceeds it with probability ~1e-5.
    """
    rates = {name: s.false_alarm_rate(0.05) for name, s in studies.items()}
    runs = {name: len(s.verdicts) for name, s in studies.items()}
    n = sum(runs.values())
    pooled = sum(rates[k] * runs[k] for k in rates) / n
    print(f"MCMC false-alarm rate at alpha=0.05: pooled {pooled:.3f}, per topic {rates}")
    assert pooled <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / n), rates
