"""Closed-form expected absolute losses against quadrature."""

from __future__ import annotations

import pytest
from scipy import stats

from analytic.decision import expected_absolute_loss, expected_squared_loss


@pytest.mark.parametrize(
    "dist",
    [
        stats.norm(0.3, 1.7),
        stats.norm(loc=-2.0, scale=0.4),
        stats.t(3.5, loc=0.2, scale=1.3),
        stats.t(12.0, 1.0, 0.5),
        stats.t(1.5),
    ],
)
@pytest.mark.parametrize("a", [-1.0, 0.25, 2.0])
def test_absolute_loss_matches_quadrature(dist, a):
    reference = dist.expect(lambda y: abs(y - a), epsabs=1e-13, epsrel=1e-12, limit=500)
    assert expected_absolute_loss(dist, a) == pytest.approx(reference, rel=1e-8)


def test_squared_loss_is_minimised_by_the_mean():
    dist = stats.t(5.0, loc=1.0, scale=2.0)
    assert expected_squared_loss(dist, 1.0) == pytest.approx(dist.var(), rel=1e-14)
    assert expected_squared_loss(dist, 1.5) > expected_squared_loss(dist, 1.0)


def test_other_distributions_fall_back_to_quadrature():
    dist = stats.gamma(2.0, scale=1.5)
    reference = dist.expect(lambda y: abs(y - 1.0))
    assert expected_absolute_loss(dist, 1.0) == pytest.approx(reference, rel=1e-10)
