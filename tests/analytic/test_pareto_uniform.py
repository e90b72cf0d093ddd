"""Tests for analytic.pareto_uniform: Pareto(scale, shape) prior, Uniform(0, theta) likelihood.

References are independent of the module: numerical integration (quad) of
prior x likelihood built from scipy.stats.pareto and scipy.stats.uniform,
split at max(scale, max x) where the integrand jumps from 0, and
hand-derived formulas whose source is noted.  Exact quantities are compared
at ~1e-10 relative; quad runs at epsrel=1e-13.

The identities every conjugate topic shares (no data = prior, sequential =
batch, the evidence chain rule, merging statistics, flat prior = MLE, the
sampler's moments) are stated once in tests/analytic/test_conjugate_identities.py.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import integrate, stats

from analytic import ExactPosterior
from analytic import pareto_uniform as pu
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, sampler_z_scores

PRIOR = dict(scale=1.0, shape=2.5)


# The prior's scale below the data maximum (the data move the lower end) and above it.
PRIORS = [
    pytest.param(dict(scale=1.0, shape=2.5), id="scale<max"),
    pytest.param(dict(scale=4.0, shape=2.5), id="scale>max"),
]


@pytest.fixture
def x(rng) -> np.ndarray:
    return rng.uniform(0.0, 3.0, size=15)


# ---------------------------------------------------------------- helpers


def _log_joint(theta: float, x: np.ndarray, scale: float, shape: float) -> float:
    """log prior + log likelihood from scipy.stats (-inf where theta < max(scale, max x))."""
    return float(
        stats.pareto.logpdf(theta, shape, scale=scale) + stats.uniform.logpdf(x, 0.0, theta).sum()
    )


def _integrate(log_f, split: float, weight=lambda t: 1.0, hi: float = np.inf) -> float:
    """Integral over (0, hi) of weight(t) exp(log_f(t) - log_f(split)), split at ``split``
    (the integrand is 0 below it and jumps there)."""
    c = log_f(split)

    def g(t):
        return weight(t) * math.exp(log_f(t) - c)

    return integrate.quad(g, 0.0, split, **QUAD)[0] + integrate.quad(g, split, hi, **QUAD)[0]


# ---------------------------------------------------------------- 1. posterior


@pytest.mark.parametrize("prior", PRIORS)
def test_posterior_matches_numerical_integration(x, prior):
    post = pu.posterior(x=x, **prior)
    log_f = lambda t: _log_joint(t, x, **prior)
    lower = max(prior["scale"], x.max())
    z = _integrate(log_f, lower)
    mean = _integrate(log_f, lower, weight=lambda t: t) / z
    var = _integrate(log_f, lower, weight=lambda t: (t - mean) ** 2) / z
    np.testing.assert_allclose(post.mean, [mean], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[var]], rtol=RTOL)
    for q in (0.05, 0.5, 0.95):
        at = float(post.marginal(0).ppf(q))
        assert _integrate(log_f, lower, hi=at) / z == pytest.approx(q, rel=RTOL)


def test_posterior_matches_scipy_pareto(x):
    post = pu.posterior(x=x, **PRIOR)
    # Pareto(max(m, max x), k + n): DeGroot 1970, sec. 9.7.
    m_n, k_n = max(PRIOR["scale"], float(x.max())), PRIOR["shape"] + x.size
    ref = stats.pareto(k_n, scale=m_n)
    assert (post.scale, post.shape) == (m_n, k_n)
    np.testing.assert_allclose(post.mean, [ref.mean()], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[ref.var()]], rtol=RTOL)
    q = np.array([0.05, 0.5, 0.95])
    np.testing.assert_allclose(post.marginal(0).ppf(q), ref.ppf(q), rtol=RTOL)


@pytest.mark.parametrize("prior", PRIORS)
def test_bayes_rule_holds_pointwise(x, prior):
    """log p(theta | D) + log p(D) = log p(theta) + log p(D | theta) for theta in the support."""
    ans = pu.solve(x=x, **prior)
    lower = max(prior["scale"], float(x.max()))
    for theta in (lower, lower * 1.01, lower * 1.5, lower * 10):
        lhs = float(ans.posterior.logpdf(np.array([theta]))) + ans.log_evidence
        assert lhs == pytest.approx(_log_joint(theta, x, **prior), rel=RTOL)


def test_satisfies_protocol(x):
    post = pu.posterior(x=x, **PRIOR)
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("theta",)
    assert post.free == (0,)
    assert post.is_gaussian is False


@pytest.mark.parametrize(
    ("shape", "mean_finite", "var_finite"),
    [(0.7, False, False), (1.0, False, False), (1.5, True, False), (2.0, True, False)],
)
def test_moments_that_do_not_exist_are_inf(shape, mean_finite, var_finite):
    post = pu.posterior(x=np.array([]), scale=1.0, shape=shape)
    pred = pu.solve(x=np.array([]), scale=1.0, shape=shape).predictive
    # E[theta] needs shape > 1, Var shape > 2; the predictive y = theta U inherits both.
    assert bool(np.isfinite(post.mean[0])) is mean_finite
    assert bool(np.isfinite(post.cov[0, 0])) is var_finite
    assert bool(np.isfinite(pred.mean())) is mean_finite
    assert bool(np.isfinite(pred.var())) is var_finite


# ---------------------------------------------------------------- 2. evidence


@pytest.mark.parametrize("prior", PRIORS)
def test_log_evidence_matches_quad(x, prior):
    log_f = lambda t: _log_joint(t, x, **prior)
    lower = max(prior["scale"], float(x.max()))
    log_z = log_f(lower) + math.log(_integrate(log_f, lower))
    assert pu.solve(x=x, **prior).log_evidence == pytest.approx(log_z, rel=RTOL)


# ---------------------------------------------------------------- 3. identities


def test_stats_are_the_count_and_the_maximum(x):
    # (Merging chunks: tests/analytic/test_conjugate_identities.py.)
    assert pu.sufficient_stats(x=x) == pu.Stats(n=x.size, maximum=float(x.max()))


# ---------------------------------------------------------------- 4. sampler, logpdf


def test_sampler_check_detects_planted_bug(x, rng):
    """Power: an off-by-one shape (shape_n - 1) moves the mean by ~0.07 sd, ~30
    standard errors at N = 200,000."""
    post = pu.posterior(x=x, **PRIOR)
    wrong = (post.scale * (1.0 - rng.random(N_DRAWS)) ** (-1.0 / (post.shape - 1.0)))[:, None]
    z = sampler_z_scores(wrong, mean=post.mean, cov=post.cov, marginals=[post.marginal(0)])
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_matches_scipy_and_broadcasts(x):
    post = pu.posterior(x=x, **PRIOR)
    m = post.scale
    pts = np.array([[m, 1.1 * m, 1.5 * m], [2 * m, 5 * m, 50 * m]])[..., None]  # shape (2, 3, 1)
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(
        out, stats.pareto.logpdf(pts[..., 0], post.shape, scale=m), rtol=RTOL
    )
    assert post.logpdf(np.array([0.999 * m])) == -np.inf


# ---------------------------------------------------------------- 5. predictive


@pytest.fixture
def pred(x):
    return pu.solve(x=x, **PRIOR).predictive


def test_predictive_cdf_limits(pred):
    assert float(pred.cdf(np.inf)) == 1.0
    assert float(pred.cdf(1e300)) == pytest.approx(1.0, abs=1e-15)
    assert float(pred.cdf(0.0)) == 0.0
    assert float(pred.cdf(-1.0)) == 0.0
    assert float(pred.logpdf(-0.5)) == -np.inf


def test_predictive_density_integrates_to_one_and_matches_its_cdf(pred):
    m = pred.scale
    f = lambda y: math.exp(float(pred.logpdf(y)))
    total = integrate.quad(f, 0.0, m, **QUAD)[0] + integrate.quad(f, m, np.inf, **QUAD)[0]
    assert total == pytest.approx(1.0, rel=RTOL)
    for y in (0.5 * m, m, 1.3 * m, 4 * m):
        ref = integrate.quad(f, 0.0, min(y, m), **QUAD)[0]
        if y > m:
            ref += integrate.quad(f, m, y, **QUAD)[0]
        assert float(pred.cdf(y)) == pytest.approx(ref, rel=RTOL)


def test_predictive_density_matches_numerical_mixture(x, pred):
    """p(y | D) = int Uniform(y; 0, theta) Pareto(theta; m_n, k_n) dtheta, by quad."""
    m_n, k_n = max(PRIOR["scale"], float(x.max())), PRIOR["shape"] + x.size
    for y in (0.0, 0.4 * m_n, m_n, 1.2 * m_n, 3.0 * m_n):
        lo = max(m_n, y)  # both factors are positive only for theta >= max(m_n, y)
        f = lambda t: stats.uniform.pdf(y, 0.0, t) * stats.pareto.pdf(t, k_n, scale=m_n)
        ref = integrate.quad(f, lo, np.inf, **QUAD)[0]
        assert math.exp(float(pred.logpdf(y))) == pytest.approx(ref, rel=RTOL)


def test_predictive_mean_and_variance_match_quad(pred):
    m = pred.scale
    f = lambda y: math.exp(float(pred.logpdf(y)))

    def integral(g):
        return integrate.quad(g, 0.0, m, **QUAD)[0] + integrate.quad(g, m, np.inf, **QUAD)[0]

    mean = integral(lambda y: y * f(y))
    var = integral(lambda y: (y - mean) ** 2 * f(y))
    assert pred.mean() == pytest.approx(mean, rel=RTOL)
    assert pred.var() == pytest.approx(var, rel=RTOL)


# ---------------------------------------------------------------- 6. bad input


@pytest.mark.parametrize("name", ["scale", "shape"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_hyperparameter_raises(name, value):
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        pu.solve(x=np.array([0.5, 1.0]), **{**PRIOR, name: value})


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([0.3, -0.5], r"x\[1\] = -0\.5"),
        ([1, np.nan], r"x\[1\] is nan;"),
        ([np.inf, 0], r"x\[0\] is inf;"),
        ([[0, 1], [1, 0]], r"x.*shape \(2, 2\)"),
    ],
)
def test_bad_data_raises(data, pattern):
    with pytest.raises(ValueError, match=pattern):
        pu.solve(x=np.asarray(data, dtype=float), **PRIOR)


# ---------------------------------------------------------------- 7. mode


@pytest.mark.parametrize("prior", PRIORS)
def test_mode_is_the_lower_end_on_the_boundary(x, prior):
    post = pu.posterior(x=x, **prior)
    m_n = max(prior["scale"], float(x.max()))
    np.testing.assert_array_equal(post.mode, [m_n])
    assert post.mode_interior is False
    # The density decreases from its maximum at m_n and is 0 below it.
    at = post.logpdf(np.array([[m_n], [m_n * (1 + 1e-9)], [m_n * (1 - 1e-9)]]))
    assert at[0] > at[1] and at[2] == -np.inf


# ---------------------------------------------------------------- 8. moments, simulate


def test_moments_below_is_shape_n(x):
    post = pu.posterior(x=x, **PRIOR)
    # E[theta^r] = int_m^inf k m^k theta^(r - k - 1) dtheta is finite exactly for r < k.
    assert post.moments_below == post.shape == PRIOR["shape"] + x.size


def test_simulate_shapes_and_support(rng):
    theta, data = pu.simulate(rng, n=25, **PRIOR)
    assert theta.shape == (1,) and theta[0] >= PRIOR["scale"]
    assert data.shape == (25,) and np.all((data >= 0) & (data <= theta[0]))
    pu.solve(x=data, **PRIOR)
