"""Tests for analytic.normal_known_variance: Normal prior on the mean, known noise sd.

References are independent of the module: numerical integration (quad) of
prior x likelihood built from scipy.stats densities, the evidence as one
n-dimensional scipy.stats.multivariate_normal, exact rational arithmetic
(fractions.Fraction) for the centred statistics, and hand-derived formulas
whose source is noted.  Exact quantities are compared at ~1e-10 relative;
quad runs at epsrel=1e-13.

The identities every conjugate topic shares (no data = prior, sequential =
batch, the evidence chain rule, merging statistics, flat prior = MLE, the
sampler's moments) are stated once in tests/analytic/test_conjugate_identities.py.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from analytic import ExactPosterior
from analytic import normal_known_variance as nkv
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, integrate_split, sampler_z_scores

PRIOR = dict(prior_mean=1.0, prior_sd=2.0, noise_sd=1.5)  # sd != var for every sd


@pytest.fixture
def x(rng) -> np.ndarray:
    return rng.normal(0.3, PRIOR["noise_sd"], size=20)


# ---------------------------------------------------------------- helpers


def _log_joint(
    mu: float, x: np.ndarray, prior_mean: float, prior_sd: float, noise_sd: float
) -> float:
    """log prior + log likelihood from scipy.stats, independent of the module."""
    return float(
        stats.norm.logpdf(mu, prior_mean, prior_sd) + stats.norm.logpdf(x, mu, noise_sd).sum()
    )


# ---------------------------------------------------------------- 1. posterior


def test_posterior_matches_numerical_integration(x):
    post = nkv.posterior(x=x, **PRIOR)
    log_f = lambda mu: _log_joint(mu, x, **PRIOR)
    split = float(x.mean())
    z = integrate_split(log_f, -np.inf, np.inf, split)
    mean = integrate_split(log_f, -np.inf, np.inf, split, weight=lambda t: t) / z
    var = integrate_split(log_f, -np.inf, np.inf, split, weight=lambda t: (t - mean) ** 2) / z
    np.testing.assert_allclose(post.mean, [mean], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[var]], rtol=RTOL)
    c = log_f(split)
    for q in (0.05, 0.5, 0.95):
        at = float(post.marginal(0).ppf(q))
        cdf = integrate.quad(lambda t: math.exp(log_f(t) - c), -np.inf, at, **QUAD)[0] / z
        assert cdf == pytest.approx(q, rel=RTOL)


def test_posterior_matches_precision_form(x):
    # Bishop 2006, eqs. 2.141-2.142: 1/s_n^2 = 1/t^2 + n/s^2,
    # m_n = s_n^2 (m0/t^2 + sum x / s^2).
    m0, t, s = PRIOR["prior_mean"], PRIOR["prior_sd"], PRIOR["noise_sd"]
    var_n = 1.0 / (1.0 / t**2 + x.size / s**2)
    m_n = var_n * (m0 / t**2 + x.sum() / s**2)
    post = nkv.posterior(x=x, **PRIOR)
    np.testing.assert_allclose(post.mean, [m_n], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[var_n]], rtol=RTOL)
    np.testing.assert_allclose(post.mode, [m_n], rtol=RTOL)
    ref = stats.norm(m_n, math.sqrt(var_n))
    q = np.array([0.05, 0.5, 0.95])
    np.testing.assert_allclose(post.marginal(0).ppf(q), ref.ppf(q), rtol=RTOL)


def test_bayes_rule_holds_pointwise(x):
    """log p(mu | D) + log p(D) = log p(mu) + log p(D | mu) at any mu."""
    ans = nkv.solve(x=x, **PRIOR)
    for mu in (-1.0, 0.0, 0.3, 2.5):
        lhs = float(ans.posterior.logpdf(np.array([mu]))) + ans.log_evidence
        assert lhs == pytest.approx(_log_joint(mu, x, **PRIOR), rel=RTOL)


def test_satisfies_protocol(x):
    post = nkv.posterior(x=x, **PRIOR)
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("mu",)
    assert post.free == (0,)
    assert post.is_gaussian is True


# ---------------------------------------------------------------- 2. evidence


def test_log_evidence_matches_multivariate_normal(x):
    # Marginally x ~ N(m0 1, s^2 I + t^2 1 1^T) (Bishop 2006, eq. 2.115 with
    # x = mu 1 + noise); scipy evaluates it as one n-dimensional density.
    m0, t, s = PRIOR["prior_mean"], PRIOR["prior_sd"], PRIOR["noise_sd"]
    n = x.size
    cov = s**2 * np.eye(n) + t**2 * np.ones((n, n))
    ref = stats.multivariate_normal.logpdf(x, mean=np.full(n, m0), cov=cov)
    assert nkv.solve(x=x, **PRIOR).log_evidence == pytest.approx(ref, rel=RTOL)


def test_log_evidence_matches_quad(x):
    log_f = lambda mu: _log_joint(mu, x, **PRIOR)
    split = float(x.mean())
    log_z = log_f(split) + math.log(integrate_split(log_f, -np.inf, np.inf, split))
    assert nkv.solve(x=x, **PRIOR).log_evidence == pytest.approx(log_z, rel=RTOL)


# ---------------------------------------------------------------- 3. identities


def _exact_stats(x: np.ndarray) -> tuple[int, Fraction, Fraction]:
    """n, mean and sum of squared deviations of the float data, in exact rationals."""
    xs = [Fraction(float(v)) for v in x]
    mean = sum(xs, Fraction(0)) / len(xs)
    return len(xs), mean, sum(((v - mean) ** 2 for v in xs), Fraction(0))


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_stats_merge_equals_exact_stats_of_concatenation(rng, offset):
    # Chan's merge is exact up to the rounding of each chunk mean (~eps * offset),
    # which moves m2 by ~|delta| eps offset n_a n_b / n: ~1e-13 relative at
    # offset 1e4.  The one-pass formula sum x^2 - n xbar^2 loses ~1e-8 there
    # (cancellation of ~6e9 against ~60), so 1e-10 separates the two.
    x = offset + rng.normal(0.0, 1.0, size=60)
    parts = [x[:9], x[9:9], x[9:40], x[40:]]
    merged = nkv.sufficient_stats(x=parts[0])
    for part in parts[1:]:
        merged = merged + nkv.sufficient_stats(x=part)
    n, mean, m2 = _exact_stats(x)
    assert merged.n == n
    assert merged.mean == pytest.approx(float(mean), rel=1e-15)
    assert merged.m2 == pytest.approx(float(m2), rel=RTOL)


def test_two_pass_stats_survive_a_large_offset(rng):
    # x - mean is exact for floats this close together; only the rounding of the
    # mean itself (~1e-8 at 1e8) enters m2, as n * 1e-16: ~1e-15 relative.
    x = 1e8 + rng.normal(0.0, 1.0, size=60)
    n, mean, m2 = _exact_stats(x)
    got = nkv.sufficient_stats(x=x)
    assert got.n == n
    assert got.mean == pytest.approx(float(mean), rel=1e-15)
    assert got.m2 == pytest.approx(float(m2), rel=1e-12)


def test_flat_prior_limit_gives_the_sampling_variance(x):
    # prior_sd = 1e8 adds precision 1e-16 against n / s^2 ~ 9: the posterior is
    # N(xbar, s^2 / n) to ~1e-17 relative (its mode = the MLE xbar:
    # tests/analytic/test_conjugate_identities.py).
    ans = nkv.solve(x=x, prior_mean=5.0, prior_sd=1e8, noise_sd=PRIOR["noise_sd"])
    np.testing.assert_allclose(ans.posterior.mean, [x.mean()], rtol=RTOL)
    np.testing.assert_allclose(ans.posterior.cov, [[PRIOR["noise_sd"] ** 2 / x.size]], rtol=RTOL)


# ---------------------------------------------------------------- 4. sampler, logpdf


def test_sampler_check_detects_planted_bug(x, rng):
    """Power: passing the variance where the sd belongs (sd_n ~ 0.33, so ~0.11)
    shrinks the spread threefold, thousands of standard errors."""
    post = nkv.posterior(x=x, **PRIOR)
    wrong = rng.normal(post.loc, post.sd**2, size=(N_DRAWS, 1))
    z = sampler_z_scores(wrong, mean=post.mean, cov=post.cov, marginals=[post.marginal(0)])
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_matches_scipy_and_broadcasts(x):
    post = nkv.posterior(x=x, **PRIOR)
    pts = np.array([[-1.0, 0.0, 0.2], [0.4, 1.0, 3.0]])[..., None]  # shape (2, 3, 1)
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, stats.norm.logpdf(pts[..., 0], post.loc, post.sd), rtol=RTOL)


# ---------------------------------------------------------------- 5. predictive


def test_predictive_matches_numerical_mixture(x):
    """p(y | D) = int N(y; mu, s^2) N(mu; m_n, s_n^2) dmu, by quad."""
    post = nkv.posterior(x=x, **PRIOR)
    pred = nkv.solve(x=x, **PRIOR).predictive
    s = PRIOR["noise_sd"]
    for y in (-3.0, 0.0, 0.3, 1.7, 5.0):
        log_f = lambda mu: float(
            stats.norm.logpdf(y, mu, s) + stats.norm.logpdf(mu, post.loc, post.sd)
        )
        ref = math.exp(log_f(post.loc)) * integrate_split(log_f, -np.inf, np.inf, post.loc)
        assert pred.pdf(y) == pytest.approx(ref, rel=RTOL)
    # Law of total variance: Var y = E[s^2] + Var mu = s^2 + s_n^2.
    assert pred.mean() == pytest.approx(post.loc, rel=RTOL)
    assert pred.var() == pytest.approx(s**2 + post.sd**2, rel=RTOL)


# ---------------------------------------------------------------- 6. bad input


@pytest.mark.parametrize("name", ["prior_sd", "noise_sd"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_scale_raises(name, value):
    prior = {**PRIOR, name: value}
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        nkv.solve(x=np.array([0.0, 1.0]), **prior)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_prior_mean_raises(value):
    with pytest.raises(ValueError, match=rf"\bprior_mean\b.*{re.escape(repr(value))}"):
        nkv.solve(x=np.array([0.0, 1.0]), **{**PRIOR, "prior_mean": value})


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([1, np.nan], r"x\[1\] is nan;"),
        ([np.inf, 0], r"x\[0\] is inf;"),
        ([0, -np.inf], r"x\[1\] is -inf;"),
        ([[0, 1], [1, 0]], r"x.*shape \(2, 2\)"),
    ],
)
def test_bad_data_raises(data, pattern):
    with pytest.raises(ValueError, match=pattern):
        nkv.solve(x=np.asarray(data, dtype=float), **PRIOR)


# ---------------------------------------------------------------- 7-8. mode, moments


def test_mode_is_mean_and_interior(x):
    post = nkv.posterior(x=x, **PRIOR)
    np.testing.assert_array_equal(post.mode, post.mean)
    assert post.mode_interior is True


def test_moments_below_is_infinite(x):
    assert nkv.posterior(x=x, **PRIOR).moments_below == np.inf


def test_simulate_shapes(rng):
    theta, data = nkv.simulate(rng, n=25, **PRIOR)
    assert theta.shape == (1,) and data.shape == (25,)
    nkv.solve(x=data, **PRIOR)
