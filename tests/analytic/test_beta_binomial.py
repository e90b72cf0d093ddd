"""Tests for analytic.beta_binomial: Beta(a, b) prior, Bernoulli likelihood.

References are independent of the module: numerical integration (quad) of
prior x likelihood built from scipy.stats densities, scipy.stats.betabinom
for the evidence of the count, and hand-derived formulas whose source is
noted.  Exact quantities are compared at ~1e-10 relative; quad is run at
epsrel=1e-13, so that tolerance is two to three orders above its error.

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
from analytic import beta_binomial as bb
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, integrate_split, sampler_z_scores

A, B = 2.5, 1.5  # non-integer prior so no formula is right by coincidence


@pytest.fixture
def x(rng) -> np.ndarray:
    return (rng.random(40) < 0.35).astype(float)


# ---------------------------------------------------------------- helpers


def _log_joint(p: float, x: np.ndarray, a: float, b: float) -> float:
    """log prior + log likelihood from scipy.stats, independent of the module."""
    return float(stats.beta.logpdf(p, a, b) + stats.bernoulli.logpmf(x, p).sum())


# ---------------------------------------------------------------- 1. posterior


def test_posterior_matches_numerical_integration(x):
    post = bb.posterior(x=x, a=A, b=B)
    log_f = lambda p: _log_joint(p, x, A, B)
    split = float(x.mean())
    z = integrate_split(log_f, 0.0, 1.0, split)
    mean = integrate_split(log_f, 0.0, 1.0, split, weight=lambda p: p) / z
    var = integrate_split(log_f, 0.0, 1.0, split, weight=lambda p: (p - mean) ** 2) / z
    np.testing.assert_allclose(post.mean, [mean], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[var]], rtol=RTOL)
    # The marginal's quantiles: the numerical posterior CDF there is the level.
    c = log_f(split)
    for q in (0.05, 0.5, 0.95):
        at = float(post.marginal(0).ppf(q))
        cdf = integrate.quad(lambda p: math.exp(log_f(p) - c), 0.0, at, **QUAD)[0] / z
        assert cdf == pytest.approx(q, rel=RTOL)


def test_posterior_matches_scipy_beta(x):
    s, n = int(x.sum()), x.size
    post = bb.posterior(x=x, a=A, b=B)
    ref = stats.beta(A + s, B + n - s)  # Beta(a + s, b + n - s): Murphy 2012, eq. 3.16
    assert (post.a, post.b) == (A + s, B + n - s)
    np.testing.assert_allclose(post.mean, [ref.mean()], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[ref.var()]], rtol=RTOL)
    q = np.array([0.05, 0.5, 0.95])
    np.testing.assert_allclose(post.marginal(0).ppf(q), ref.ppf(q), rtol=RTOL)
    # Mode of Beta(a, b) with a, b > 1 is (a - 1) / (a + b - 2) (Murphy 2012, sec. 2.4.5).
    np.testing.assert_allclose(post.mode, [(A + s - 1) / (A + B + n - 2)], rtol=RTOL)


def test_bayes_rule_holds_pointwise(x):
    """log p(p | D) + log p(D) = log p(p) + log p(D | p) at any p (Bayes' rule)."""
    ans = bb.solve(x=x, a=A, b=B)
    for p in (0.05, 0.3, 0.5, 0.9):
        lhs = float(ans.posterior.logpdf(np.array([p]))) + ans.log_evidence
        assert lhs == pytest.approx(_log_joint(p, x, A, B), rel=RTOL)


def test_satisfies_protocol(x):
    post = bb.posterior(x=x, a=A, b=B)
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("p",)
    assert post.free == (0,)
    assert post.is_gaussian is False


# ---------------------------------------------------------------- 2. evidence


def test_log_evidence_matches_quad(x):
    # Z = int_0^1 Beta(p; a, b) prod_i Bernoulli(x_i; p) dp.
    log_f = lambda p: _log_joint(p, x, A, B)
    split = float(x.mean())
    log_z = log_f(split) + math.log(integrate_split(log_f, 0.0, 1.0, split))
    assert bb.solve(x=x, a=A, b=B).log_evidence == pytest.approx(log_z, rel=RTOL)


def test_log_evidence_matches_scipy_betabinom(x):
    # The module gives the evidence of the sequence; betabinom gives that of the
    # count s, which is larger by the C(n, s) orderings.
    s, n = int(x.sum()), x.size
    ref = stats.betabinom.logpmf(s, n, A, B) - math.log(math.comb(n, s))
    assert bb.solve(x=x, a=A, b=B).log_evidence == pytest.approx(ref, rel=RTOL)


# ---------------------------------------------------------------- 3. identities


# ---------------------------------------------------------------- 4. sampler, logpdf


def test_sampler_check_detects_planted_bug(x, rng):
    """Power: an off-by-one success count (a + s + 1) moves the mean by ~0.3 sd,
    i.e. ~140 standard errors at N = 200,000; any shift above ~6 SE (0.013 sd)
    is caught with probability > 0.84."""
    post = bb.posterior(x=x, a=A, b=B)
    wrong = rng.beta(post.a + 1.0, post.b, size=(N_DRAWS, 1))
    z = sampler_z_scores(wrong, mean=post.mean, cov=post.cov, marginals=[post.marginal(0)])
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_matches_scipy_and_broadcasts(x):
    post = bb.posterior(x=x, a=A, b=B)
    pts = np.array([[0.1, 0.25, 0.5], [0.6, 0.75, 0.99]])[..., None]  # shape (2, 3, 1)
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, stats.beta.logpdf(pts[..., 0], post.a, post.b), rtol=RTOL)
    assert post.logpdf(np.array([1.5])) == -np.inf


# ---------------------------------------------------------------- 5. predictive


def test_predictive_is_bernoulli_with_posterior_mean(x):
    s, n = int(x.sum()), x.size
    ans = bb.solve(x=x, a=A, b=B)
    # P(x_new = 1 | D) = (a + s) / (a + b + n)  (Laplace's rule generalised; BDA3 sec. 2.4).
    p1 = (A + s) / (A + B + n)
    assert ans.predictive.pmf(1) == pytest.approx(p1, rel=RTOL)
    assert ans.predictive.pmf(0) == pytest.approx(1 - p1, rel=RTOL)
    assert ans.predictive.mean() == pytest.approx(p1, rel=RTOL)
    assert ans.predictive.var() == pytest.approx(p1 * (1 - p1), rel=RTOL)


# ---------------------------------------------------------------- 6. bad input


@pytest.mark.parametrize("name", ["a", "b"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_hyperparameter_raises(name, value):
    prior = {"a": A, "b": B, name: value}
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        bb.solve(x=np.array([0.0, 1.0]), **prior)


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([0, 1, 2], r"x\[2\] = 2\.0"),
        ([0, 0.5], r"x\[1\] = 0\.5"),
        ([-1, 0], r"x\[0\] = -1\.0"),
        ([1, np.nan], r"x\[1\] is nan;"),
        ([np.inf, 0], r"x\[0\] is inf;"),
        ([[0, 1], [1, 0]], r"x.*shape \(2, 2\)"),
    ],
)
def test_bad_data_raises(data, pattern):
    with pytest.raises(ValueError, match=pattern):
        bb.solve(x=np.asarray(data, dtype=float), a=A, b=B)


# ---------------------------------------------------------------- 7. modes


@pytest.mark.parametrize(
    ("a", "b", "mode", "interior"),
    [
        (1.0, 3.0, [0.0], False),  # a <= 1 < b: density decreasing, max at 0
        (0.5, 2.0, [0.0], False),
        (3.0, 1.0, [1.0], False),  # b <= 1 < a: max at 1
        (1.0, 1.0, None, False),  # uniform: no unique mode
        (0.5, 0.7, None, False),  # U-shaped
        (3.0, 2.0, [2.0 / 3.0], True),
    ],
)
def test_modes_on_the_boundary(a, b, mode, interior):
    post = bb.posterior(x=np.array([]), a=a, b=b)
    if mode is None:
        assert post.mode is None
    else:
        np.testing.assert_allclose(post.mode, mode, rtol=RTOL)
    assert post.mode_interior is interior


def test_interior_mode_maximises_logpdf(x):
    post = bb.posterior(x=x, a=A, b=B)
    res = optimize.minimize_scalar(
        lambda p: -float(post.logpdf(np.array([p]))),
        bounds=(1e-9, 1 - 1e-9),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert post.mode_interior
    np.testing.assert_allclose(post.mode, [res.x], rtol=1e-6)


# ---------------------------------------------------------------- 8. moments, simulate


def test_moments_below_is_infinite(x):
    assert bb.posterior(x=x, a=A, b=B).moments_below == np.inf


def test_simulate_shapes_and_support(rng):
    theta, data = bb.simulate(rng, n=25, a=A, b=B)
    assert theta.shape == (1,) and 0 < theta[0] < 1
    assert data.shape == (25,) and set(np.unique(data)) <= {0.0, 1.0}
    bb.solve(x=data, a=A, b=B)  # simulated data is valid input
