"""Calibration with real MCMC, conjugate topics: 50 PyMC runs per topic on fresh
data and seeds.

Under the null each test quantity's z-score, across independent runs, must
be standard normal within its sampling error, and the family-wise
false-alarm rate at alpha = 0.05 near 0.05.  The draws depend on the
PyTensor compile cache, so these checks are statistical, with their own
false-failure rates stated (in calibration_checks.py).  The other topics are
in test_calibration_structured.py.
"""

from __future__ import annotations

import pytest

from compare.studies.calibration import NULL_FIXTURES
from tests.compare.studies.calibration_checks import (
    CONJUGATE,
    STRUCTURED,
    LazyStudies,
    assert_pooled_false_alarm_near_alpha,
    assert_z_scores_standard_normal,
)

pytestmark = pytest.mark.mcmc


@pytest.fixture(scope="module")
def studies():
    return LazyStudies(CONJUGATE)


def test_every_topic_is_covered():
    """Every topic declares a null fixture (``Topic.calibration``), so every topic is in
    one of the two studies."""
    from compare.topics import all_topics

    assert set(NULL_FIXTURES) == {t.name for t in all_topics()}
    assert set(CONJUGATE) | set(STRUCTURED) == set(NULL_FIXTURES)


@pytest.mark.parametrize("name", CONJUGATE)
def test_mcmc_z_scores_are_standard_normal(studies, name):
    assert_z_scores_standard_normal(studies[name])


def test_mcmc_false_alarm_rate_is_near_alpha(studies):
    """300 runs: the bound is 0.05 + 4 SE = 0.100."""
    assert_pooled_false_alarm_near_alpha(studies)
