"""Calibration with real MCMC for the regression, mixture, GP and classification
topics (12 to 30 runs per topic: their runs cost 0.5 to 4 s each).

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

pytestmark = pytest.mark.mcmc


@pytest.fixture(scope="module")
def studies():
    return null_studies(STRUCTURED)


@pytest.mark.parametrize("name", STRUCTURED)
def test_mcmc_z_scores_are_standard_normal(studies, name):
    assert_z_scores_standard_normal(studies[name])


def test_mcmc_false_alarm_rate_is_near_alpha(studies):
    """182 runs: the bound is 0.05 + 4 SE = 0.115."""
    assert_pooled_false_alarm_near_alpha(studies)
