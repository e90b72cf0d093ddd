"""A user's own test file: a PyMC model checked against its closed form with `bayes_check`.

Installing bayes-compare enables its pytest plugin, so this file needs nothing
else: `pytest examples/test_poisson_gamma.py`. Failure counts y_i over
exposures t_i (machine-years):

    lam ~ Gamma(a, rate=b);   y_i | lam ~ Poisson(lam * t_i)
    lam | y ~ Gamma(a + sum y, rate=b + sum t)            (conjugate)

The second test plants a classic mistake in the closed form (the exposures
left out of the rate) and is marked xfail(strict=True): the plugin must catch
it, so the file passes only if the wrong closed form fails its check.
"""

import numpy as np
import pymc as pm
import pytest
from scipy import stats

import compare

A, B = 2.0, 1.0
Y = np.array([3, 1, 4, 1, 5, 9, 2, 6])
T = np.array([1.0, 0.5, 2.0, 1.0, 1.5, 3.0, 0.5, 2.0])


def model():
    with pm.Model() as m:
        lam = pm.Gamma("lam", alpha=A, beta=B)
        pm.Poisson("y", mu=lam * T, observed=Y)
    return m


def test_posterior_matches_the_closed_form(bayes_check):
    exact = stats.gamma(A + Y.sum(), scale=1 / (B + T.sum()))
    bayes_check(model(), compare.Exact.from_scipy(exact), var_names=["lam"])


@pytest.mark.xfail(strict=True, reason="planted: the exposures are missing from the rate")
def test_a_wrong_closed_form_is_caught(bayes_check):
    wrong = stats.gamma(A + Y.sum(), scale=1 / (B + len(Y)))  # should be B + T.sum()
    bayes_check(model(), compare.Exact.from_scipy(wrong), var_names=["lam"])
