"""Calibration with real MCMC for the regression, mixture, GP and classification
topics (12 to 30 runs per topic: their runs cost 0.5 to 4 s each).

Marked ``study``: ``make study`` runs it, next to benchmarks/verdict_study.py's 200
runs per topic; ``make test`` leaves it out (4 of the suite's ~16 minutes, 7 cold
compiles). The suite keeps the real-MCMC calibration of the six conjugate topics
(test_calibration.py, 300 runs in ~40 s), every builtin data set's verdict and
every planted bug's detection.

The same checks as test_calibration.py, with the same stated false-failure
rates (calibration_checks.py); a separate file so that the two halves run on
different pytest-xdist workers.
"""

from __future__ import annotations

import pytest

from tests.compare.studies.calibration_checks import (
    STRUCTURED,
    assert_pooled_false_alarm_near_alpha,
    assert_z_scores_standard_normal,
    null_studies,
)

pytestmark = [pytest.mark.mcmc, pytest.mark.study]


@pytest.fixture(scope="module")
def studies():
    return null_studies(STRUCTURED)


@pytest.mark.parametrize("name", STRUCTURED)
def test_mcmc_z_scores_are_standard_normal(studies, name):
    assert_z_scores_standard_normal(studies[name])


def test_mcmc_false_alarm_rate_is_near_alpha(studies):
    """182 runs: the bound is 0.05 + 4 SE = 0.115."""
    assert_pooled_false_alarm_near_alpha(studies)
