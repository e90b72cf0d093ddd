"""Power: planted bugs in the PyMC model are caught at default settings.

The fixture gives the prior a real share of the posterior precision
(normal-known-variance: prior precision 0.59 against 0.91 from the data) and
no hyperparameter equal to 0 or 1 that could hide a mistake.  Each bug is
run on 40 fresh data sets and seeds at the default alpha; measured power is
100% for all three (benchmarks/verdict_study.py), so requiring >= 38 of 40
(95%) fails by chance with negligible probability.
"""

from __future__ import annotations

import pytest

from compare.studies.calibration import POWER_FIXTURES, detection_rate, mcmc_null
from compare.studies.planted import planted
from compare.topics import get_topic

pytestmark = pytest.mark.mcmc

REPLICATIONS = 40
NKV = POWER_FIXTURES["normal-known-variance"]
NIG = POWER_FIXTURES["normal-inverse-gamma"]


@pytest.mark.parametrize(
    "topic, fixture, bug, factor",
    [
        ("normal-known-variance", NKV, "prior_var", 1.5),
        ("normal-known-variance", NKV, "noise_sd", 1.2),
        ("normal-known-variance", NKV, "sd_for_var", 1.0),
        ("normal-inverse-gamma", NIG, "noise_sd", 1.2),
    ],
)
def test_planted_bug_is_caught(topic, fixture, bug, factor):
    hyper, n_obs = fixture
    study = mcmc_null(
        get_topic(topic),
        replications=REPLICATIONS,
        n_obs=n_obs,
        hyper=hyper,
        seed=7,
        model_topic=planted(topic, bug, factor),
    )
    rate = detection_rate(study)
    print(f"{topic} {bug} x{factor}: caught {rate:.0%}, by {set(study.decided_by)}")
    assert rate >= 0.95, study.verdicts


def test_sd_for_variance_in_the_nig_prior_is_never_called_agree():
    """mu ~ N(mu0, sigma=sigma2/kappa0): caught, or inconclusive from divergences.

    The wrong model has a funnel, so some runs diverge; the verdict must
    never be `agree`.
    """
    hyper, n_obs = NIG
    study = mcmc_null(
        get_topic("normal-inverse-gamma"),
        replications=20,
        n_obs=n_obs,
        hyper=hyper,
        seed=8,
        model_topic=planted("normal-inverse-gamma", "sd_for_var"),
    )
    assert "agree" not in study.verdicts
    assert detection_rate(study, by="agreement") >= 0.95
