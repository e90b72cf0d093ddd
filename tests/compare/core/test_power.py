"""The power statement: a planted error of exactly the stated size is caught with
probability about 0.9 (issue 60, item 3).

Exact iid draws stand in for MCMC (numpy only), so each rate is a binomial
proportion over REPLICATIONS runs; the statement takes the best single
quantity, so the whole test's rate may exceed 0.9 (other quantities add
power) but not fall below it by more than Monte Carlo error: each assertion
allows 3.5 binomial SE below (a false failure about 2 times in 10,000).
"""

from __future__ import annotations

import numpy as np
import pytest

import analytic.beta_binomial as bb
import analytic.normal_inverse_gamma as nig
import analytic.normal_known_variance as nkv
from compare.core.agreement import agreement_test
from compare.core.power import PROBABILITY, power_of

REPLICATIONS = 200
ALPHA = 1e-4
SE = np.sqrt(PROBABILITY * (1 - PROBABILITY) / REPLICATIONS)

POSTERIORS = {
    "normal": nkv.NormalPosterior(loc=0.3, sd=0.7),
    "beta": bb.BetaPosterior(3.5, 12.0),
    "nig": nig.NIGPosterior(mu=0.4, kappa=8.0, alpha=9.5, beta=6.0),
}


def _draws(post, rng):
    return post.sample(rng, 8000).reshape(4, 2000, -1)


@pytest.mark.parametrize("name", list(POSTERIORS))
def test_a_shift_of_the_stated_size_is_caught_nine_times_in_ten(name, rng):
    post = POSTERIORS[name]
    power = power_of(agreement_test(_draws(post, rng), post, alpha=ALPHA), post)
    assert power is not None and power.mean_shift_sd is not None
    sd = np.sqrt(np.diag(post.cov))
    first = post.parameters[0]
    delta = power.parameters[first]["mean_shift_sd"]
    assert delta == pytest.approx(power.mean_shift_sd) or delta <= power.mean_shift_sd
    caught = 0
    for _ in range(REPLICATIONS):
        x = _draws(post, rng)
        x[..., 0] += delta * sd[0]
        caught += not agreement_test(x, post, alpha=ALPHA).passed
    rate = caught / REPLICATIONS
    assert rate >= PROBABILITY - 3.5 * SE, (name, delta, rate)
    # Power: half the stated shift is caught far less often (the statement is tight).
    half = sum(
        not agreement_test(
            _draws(post, rng) + np.eye(post.mean.size)[0] * delta * sd[0] / 2, post, alpha=ALPHA
        ).passed
        for _ in range(50)
    )
    assert half / 50 < 0.6, (name, half)


@pytest.mark.parametrize("name", ["normal", "beta"])
def test_an_sd_off_by_the_stated_factor_is_caught_nine_times_in_ten(name, rng):
    post = POSTERIORS[name]
    power = power_of(agreement_test(_draws(post, rng), post, alpha=ALPHA), post)
    assert power is not None and power.sd_relative is not None
    centre = float(post.marginal(0).median())
    caught = 0
    for _ in range(REPLICATIONS):
        x = _draws(post, rng)
        x = centre + (x - centre) * (1.0 + power.sd_relative)
        caught += not agreement_test(x, post, alpha=ALPHA).passed
    assert caught / REPLICATIONS >= PROBABILITY - 3.5 * SE, (name, power.sd_relative)


def test_the_sentence_and_the_document_section():
    post = POSTERIORS["normal"]
    power = power_of(
        agreement_test(_draws(post, np.random.default_rng(1)), post, alpha=ALPHA), post
    )
    sentence = power.sentence()
    assert sentence.startswith("would have caught a shift of any posterior mean by 0.0")
    assert "sd off by" in sentence and "(probability 0.9 at this alpha)" in sentence
    doc = power.to_dict()
    assert set(doc) == {"probability", "mean_shift_sd", "sd_relative", "parameters"}
    assert set(doc["parameters"]) == {"mu"}
    assert power_of(None, post) is None
