"""Tests for analytic.gamma_poisson: Gamma(shape, rate) prior, Poisson likelihood.

References are independent of the module: numerical integration (quad) of
prior x likelihood built from scipy.stats densities (scipy's gamma takes
``scale = 1 / rate``), and hand-derived formulas whose source is noted.
Exact quantities are compared at ~1e-10 relative; quad runs at epsrel=1e-13.

The identities every conjugate topic shares (no data = prior, sequential =
batch, the evidence chain rule, merging statistics, flat prior = MLE, the
sampler's moments) are stated once in tests/analytic/test_conjugate_identities.py.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from analytic import ExactPosterior
from analytic import gamma_poisson as gp
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, integrate_split, sampler_z_scores

SHAPE, RATE = 2.5, 0.8  # rate != 1 so a rate/scale mix-up cannot pass


@pytest.fixture
def x(rng) -> np.ndarray:
    return rng.poisson(3.2, size=25).astype(float)


# ---------------------------------------------------------------- helpers


def _log_joint(lam: float, x: np.ndarray, shape: float, rate: float) -> float:
    """log prior + log likelihood from scipy.stats, independent of the module."""
    return float(
        stats.gamma.logpdf(lam, shape, scale=1.0 / rate) + stats.poisson.logpmf(x, lam).sum()
    )


# ---------------------------------------------------------------- 1. posterior


def test_posterior_matches_numerical_integration(x):
    post = gp.posterior(x=x, shape=SHAPE, rate=RATE)
    log_f = lambda lam: _log_joint(lam, x, SHAPE, RATE)
    split = float(x.mean())
    z = integrate_split(log_f, 0.0, np.inf, split)
    mean = integrate_split(log_f, 0.0, np.inf, split, weight=lambda t: t) / z
    var = integrate_split(log_f, 0.0, np.inf, split, weight=lambda t: (t - mean) ** 2) / z
    np.testing.assert_allclose(post.mean, [mean], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[var]], rtol=RTOL)
    c = log_f(split)
    for q in (0.05, 0.5, 0.95):
        at = float(post.marginal(0).ppf(q))
        cdf = integrate.quad(lambda t: math.exp(log_f(t) - c), 0.0, at, **QUAD)[0] / z
        assert cdf == pytest.approx(q, rel=RTOL)


def test_posterior_matches_scipy_gamma(x):
    n, total = x.size, int(x.sum())
    post = gp.posterior(x=x, shape=SHAPE, rate=RATE)
    # Gamma(shape + sum x, rate + n): BDA3 sec. 2.6.
    ref = stats.gamma(SHAPE + total, scale=1.0 / (RATE + n))
    assert (post.shape, post.rate) == (SHAPE + total, RATE + n)
    np.testing.assert_allclose(post.mean, [ref.mean()], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[ref.var()]], rtol=RTOL)
    q = np.array([0.05, 0.5, 0.95])
    np.testing.assert_allclose(post.marginal(0).ppf(q), ref.ppf(q), rtol=RTOL)
    # Mode of Gamma(k, rate) with k > 1 is (k - 1) / rate.
    np.testing.assert_allclose(post.mode, [(SHAPE + total - 1) / (RATE + n)], rtol=RTOL)


def test_bayes_rule_holds_pointwise(x):
    """log p(lam | D) + log p(D) = log p(lam) + log p(D | lam) at any lam."""
    ans = gp.solve(x=x, shape=SHAPE, rate=RATE)
    for lam in (0.5, 2.0, 3.2, 6.0):
        lhs = float(ans.posterior.logpdf(np.array([lam]))) + ans.log_evidence
        assert lhs == pytest.approx(_log_joint(lam, x, SHAPE, RATE), rel=RTOL)


def test_satisfies_protocol(x):
    post = gp.posterior(x=x, shape=SHAPE, rate=RATE)
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("rate",)
    assert post.free == (0,)
    assert post.is_gaussian is False


# ---------------------------------------------------------------- 2. evidence


def test_log_evidence_matches_quad(x):
    log_f = lambda lam: _log_joint(lam, x, SHAPE, RATE)
    split = float(x.mean())
    log_z = log_f(split) + math.log(integrate_split(log_f, 0.0, np.inf, split))
    assert gp.solve(x=x, shape=SHAPE, rate=RATE).log_evidence == pytest.approx(log_z, rel=RTOL)


# ---------------------------------------------------------------- 3. identities


def test_stats_match_the_standard_library(x):
    # (Merging chunks: tests/analytic/test_conjugate_identities.py.)
    whole = gp.sufficient_stats(x=x)
    assert (whole.n, whole.total) == (x.size, int(sum(int(v) for v in x)))
    # sum log x_i! from the Python standard library, independent of scipy.
    ref = math.fsum(math.log(math.factorial(int(v))) for v in x)
    assert whole.log_factorial_sum == pytest.approx(ref, rel=1e-12)


# ---------------------------------------------------------------- 4. sampler, logpdf


def test_sampler_check_detects_planted_bug(x, rng):
    """Power: an off-by-one count (rate + n - 1) moves the mean by ~0.35 sd, about
    160 standard errors at N = 200,000; shifts above ~6 SE (0.013 sd) are caught
    with probability > 0.84."""
    post = gp.posterior(x=x, shape=SHAPE, rate=RATE)
    wrong = rng.gamma(post.shape, 1.0 / (post.rate - 1.0), size=(N_DRAWS, 1))
    z = sampler_z_scores(wrong, mean=post.mean, cov=post.cov, marginals=[post.marginal(0)])
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_matches_scipy_and_broadcasts(x):
    post = gp.posterior(x=x, shape=SHAPE, rate=RATE)
    pts = np.array([[0.5, 1.0, 2.0], [3.0, 4.5, 9.0]])[..., None]  # shape (2, 3, 1)
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    ref = stats.gamma.logpdf(pts[..., 0], post.shape, scale=1.0 / post.rate)
    np.testing.assert_allclose(out, ref, rtol=RTOL)
    assert post.logpdf(np.array([-1.0])) == -np.inf


# ---------------------------------------------------------------- 5. predictive


def test_predictive_pmf_matches_poisson_gamma_mixture(x):
    """p(k | D) = int Poisson(k; lam) Gamma(lam; shape_n, rate_n) dlam, by quad."""
    n, total = x.size, x.sum()
    shape_n, rate_n = SHAPE + total, RATE + n
    pred = gp.solve(x=x, shape=SHAPE, rate=RATE).predictive
    mode = (shape_n - 1) / rate_n
    for k in (0, 1, 3, 7, 12):
        log_f = lambda lam: float(
            stats.poisson.logpmf(k, lam) + stats.gamma.logpdf(lam, shape_n, scale=1.0 / rate_n)
        )
        ref = math.exp(log_f(mode)) * integrate_split(log_f, 0.0, np.inf, mode)
        assert pred.pmf(k) == pytest.approx(ref, rel=RTOL)


def test_predictive_mean_and_variance(x):
    n, total = x.size, x.sum()
    a, b = SHAPE + total, RATE + n
    pred = gp.solve(x=x, shape=SHAPE, rate=RATE).predictive
    # Law of total expectation / variance: E = E[lam] = a/b; Var = E[lam] + Var[lam] = a/b + a/b^2.
    assert pred.mean() == pytest.approx(a / b, rel=RTOL)
    assert pred.var() == pytest.approx(a / b + a / b**2, rel=RTOL)
    # and the pmf sums to one (the tail beyond 400 is below 1e-100 here).
    k = np.arange(400)
    assert math.fsum(pred.pmf(k)) == pytest.approx(1.0, rel=1e-12)


# ---------------------------------------------------------------- 6. bad input


@pytest.mark.parametrize("name", ["shape", "rate"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_hyperparameter_raises(name, value):
    prior = {"shape": SHAPE, "rate": RATE, name: value}
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        gp.solve(x=np.array([0.0, 3.0]), **prior)


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([0, -1, 2], r"x\[1\] = -1\.0"),
        ([2, 1.5], r"x\[1\] = 1\.5"),
        ([1, np.nan], r"x\[1\] is nan;"),
        ([np.inf, 0], r"x\[0\] is inf;"),
        ([[0, 1], [1, 0]], r"x.*shape \(2, 2\)"),
    ],
)
def test_bad_data_raises(data, pattern):
    with pytest.raises(ValueError, match=pattern):
        gp.solve(x=np.asarray(data, dtype=float), shape=SHAPE, rate=RATE)


# ---------------------------------------------------------------- 7. modes


@pytest.mark.parametrize(
    ("shape", "data", "mode", "interior"),
    [
        (0.5, [], 0.0, False),  # shape < 1: density decreasing from +inf at 0
        (0.5, [0, 0, 0], 0.0, False),  # zeros leave the shape below 1
        (1.0, [], 0.0, False),  # exponential: max at the boundary 0
        (0.5, [1, 2], 2.5 / (RATE + 2), True),
    ],
)
def test_modes_on_the_boundary(shape, data, mode, interior):
    post = gp.posterior(x=np.asarray(data, float), shape=shape, rate=RATE)
    np.testing.assert_allclose(post.mode, [mode], rtol=RTOL, atol=0)
    assert post.mode_interior is interior


def test_interior_mode_maximises_logpdf(x):
    post = gp.posterior(x=x, shape=SHAPE, rate=RATE)
    hi = float(post.mean[0] + 20 * np.sqrt(post.cov[0, 0]))
    res = optimize.minimize_scalar(
        lambda t: -float(post.logpdf(np.array([t]))),
        bounds=(1e-9, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert post.mode_interior
    np.testing.assert_allclose(post.mode, [res.x], rtol=1e-6)


# ---------------------------------------------------------------- 8. moments, simulate


def test_moments_below_is_infinite(x):
    assert gp.posterior(x=x, shape=SHAPE, rate=RATE).moments_below == np.inf


def test_simulate_shapes_and_support(rng):
    theta, data = gp.simulate(rng, n=25, shape=SHAPE, rate=RATE)
    assert theta.shape == (1,) and theta[0] > 0
    assert data.shape == (25,) and np.all(data >= 0) and np.all(data == np.round(data))
    gp.solve(x=data, shape=SHAPE, rate=RATE)
