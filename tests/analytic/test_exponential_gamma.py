"""Tests for analytic.exponential_gamma: Gamma(shape, rate) prior, exponential likelihood.

References are independent of the module: numerical integration (quad) of
prior x likelihood built from scipy.stats densities (scipy's gamma and expon
take ``scale = 1 / rate``), scipy.stats.lomax for the predictive, and
hand-derived formulas whose source is noted.  Exact quantities are compared
at ~1e-10 relative; quad runs at epsrel=1e-13.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from analytic import ExactPosterior
from analytic import exponential_gamma as eg
from analytic.sensitivity import ConjugatePath
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, integrate_split, sampler_z_scores

SHAPE, RATE = 2.5, 0.8  # rate != 1 so a rate/scale mix-up cannot pass
TRUE_RATE = 0.4  # waiting times of mean 2.5: the data's scale differs from 1 too


@pytest.fixture
def x(rng) -> np.ndarray:
    return rng.exponential(1.0 / TRUE_RATE, size=25)


# ---------------------------------------------------------------- helpers


def _log_prior(lam: float, shape: float, rate: float) -> float:
    return float(stats.gamma.logpdf(lam, shape, scale=1.0 / rate))


def _log_lik(lam: float, x: np.ndarray) -> float:
    return float(stats.expon.logpdf(x, scale=1.0 / lam).sum())


def _log_joint(lam: float, x: np.ndarray, shape: float, rate: float) -> float:
    """log prior + log likelihood from scipy.stats, independent of the module."""
    return _log_prior(lam, shape, rate) + _log_lik(lam, x)


def _moments_by_quad(log_f, split: float) -> tuple[float, float]:
    """Mean and variance of the density proportional to exp(log_f) on (0, inf)."""
    z = integrate_split(log_f, 0.0, np.inf, split)
    mean = integrate_split(log_f, 0.0, np.inf, split, weight=lambda t: t) / z
    var = integrate_split(log_f, 0.0, np.inf, split, weight=lambda t: (t - mean) ** 2) / z
    return mean, var


# ---------------------------------------------------------------- 1. posterior


def test_posterior_matches_numerical_integration(x):
    post = eg.posterior(x=x, shape=SHAPE, rate=RATE)
    log_f = lambda lam: _log_joint(lam, x, SHAPE, RATE)
    split = x.size / float(x.sum())
    mean, var = _moments_by_quad(log_f, split)
    np.testing.assert_allclose(post.mean, [mean], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[var]], rtol=RTOL)
    z = integrate_split(log_f, 0.0, np.inf, split)
    c = log_f(split)
    for q in (0.05, 0.5, 0.95):
        at = float(post.marginal(0).ppf(q))
        cdf = integrate.quad(lambda t: math.exp(log_f(t) - c), 0.0, at, **QUAD)[0] / z
        assert cdf == pytest.approx(q, rel=RTOL)


def test_posterior_matches_scipy_gamma(x):
    n, total = x.size, float(x.sum())
    post = eg.posterior(x=x, shape=SHAPE, rate=RATE)
    # Gamma(shape + n, rate + sum x): BDA3 sec. 2.6, exponential model.
    ref = stats.gamma(SHAPE + n, scale=1.0 / (RATE + total))
    assert post.shape == SHAPE + n
    assert post.rate == pytest.approx(RATE + total, rel=1e-15)
    np.testing.assert_allclose(post.mean, [ref.mean()], rtol=RTOL)
    np.testing.assert_allclose(post.cov, [[ref.var()]], rtol=RTOL)
    q = np.array([0.05, 0.5, 0.95])
    np.testing.assert_allclose(post.marginal(0).ppf(q), ref.ppf(q), rtol=RTOL)
    # Mode of Gamma(k, rate) with k > 1 is (k - 1) / rate.
    np.testing.assert_allclose(post.mode, [(SHAPE + n - 1) / (RATE + total)], rtol=RTOL)


def test_bayes_rule_holds_pointwise(x):
    """log p(lam | D) + log p(D) = log p(lam) + log p(D | lam) at any lam."""
    ans = eg.solve(x=x, shape=SHAPE, rate=RATE)
    for lam in (0.1, 0.3, 0.4, 0.9):
        lhs = float(ans.posterior.logpdf(np.array([lam]))) + ans.log_evidence
        assert lhs == pytest.approx(_log_joint(lam, x, SHAPE, RATE), rel=RTOL)


def test_satisfies_protocol(x):
    post = eg.posterior(x=x, shape=SHAPE, rate=RATE)
    assert isinstance(post, ExactPosterior)
    assert post.parameters == eg.PARAMETERS == ("rate",)
    assert post.free == (0,)
    assert post.is_gaussian is False


# ---------------------------------------------------------------- 2. evidence


def test_log_evidence_matches_quad(x):
    log_f = lambda lam: _log_joint(lam, x, SHAPE, RATE)
    split = x.size / float(x.sum())
    log_z = log_f(split) + math.log(integrate_split(log_f, 0.0, np.inf, split))
    assert eg.solve(x=x, shape=SHAPE, rate=RATE).log_evidence == pytest.approx(log_z, rel=RTOL)


def test_log_evidence_stays_finite_for_long_series(rng):
    """1e5 waiting times: the evidence is around -1e5, computed in log space."""
    big = rng.exponential(1.0 / TRUE_RATE, size=100_000)
    log_ev = eg.solve(x=big, shape=SHAPE, rate=RATE).log_evidence
    # Within O(log n) of the maximised log likelihood n log(n / S) - n.
    mle_ll = big.size * math.log(big.size / math.fsum(big)) - big.size
    assert np.isfinite(log_ev) and mle_ll - 20 < log_ev < mle_ll


# ---------------------------------------------------------------- 3. identities


def test_zero_waiting_times_have_no_mle():
    """All x_i = 0: the likelihood l^n grows without bound, so there is no MLE,
    but the posterior Gamma(shape + n, rate) is proper."""
    ans = eg.solve(x=np.zeros(3), shape=SHAPE, rate=RATE)
    assert ans.mle is None
    assert (ans.posterior.shape, ans.posterior.rate) == (SHAPE + 3, RATE)


# ---------------------------------------------------------------- 4. sampler, logpdf


def test_sampler_check_detects_planted_bug(x, rng):
    """Power: a dropped observation (shape + n - 1) moves the mean by 1/sqrt(shape_n)
    ~ 0.19 sd, about 85 standard errors at N = 200,000; shifts above ~6 SE
    (0.013 sd) are caught with probability > 0.84."""
    post = eg.posterior(x=x, shape=SHAPE, rate=RATE)
    wrong = rng.gamma(post.shape - 1.0, 1.0 / post.rate, size=(N_DRAWS, 1))
    z = sampler_z_scores(wrong, mean=post.mean, cov=post.cov, marginals=[post.marginal(0)])
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_matches_scipy_and_broadcasts(x):
    post = eg.posterior(x=x, shape=SHAPE, rate=RATE)
    pts = np.array([[0.1, 0.2, 0.3], [0.4, 0.6, 1.0]])[..., None]  # shape (2, 3, 1)
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    ref = stats.gamma.logpdf(pts[..., 0], post.shape, scale=1.0 / post.rate)
    np.testing.assert_allclose(out, ref, rtol=RTOL)
    assert post.logpdf(np.array([-1.0])) == -np.inf


# ---------------------------------------------------------------- 5. log_density


def test_log_density_minus_posterior_logpdf_is_the_log_evidence(x):
    """log p(lam) + log p(D | lam) - log p(lam | D) = log p(D) at every lam > 0."""
    ans = eg.solve(x=x, shape=SHAPE, rate=RATE)
    theta = np.array([[0.05], [0.2], [0.4], [0.7], [2.0]])
    got = eg.log_density(theta=theta, x=x, shape=SHAPE, rate=RATE)
    assert got.shape == (5,)
    diff = got - ans.posterior.logpdf(theta)
    np.testing.assert_allclose(diff, ans.log_evidence, rtol=RTOL)
    ref = [_log_joint(float(t), x, SHAPE, RATE) for t in theta[:, 0]]
    np.testing.assert_allclose(got, ref, rtol=RTOL)


def test_log_density_outside_support_and_bad_theta(x):
    out = eg.log_density(theta=np.array([[0.0], [-1.0]]), x=x, shape=SHAPE, rate=RATE)
    np.testing.assert_array_equal(out, [-np.inf, -np.inf])
    with pytest.raises(ValueError, match=r"theta.*\(m, 1\).*\(3,\)"):
        eg.log_density(theta=np.array([0.1, 0.2, 0.3]), x=x, shape=SHAPE, rate=RATE)


# ---------------------------------------------------------------- 6. predictive


def test_predictive_is_lomax(x):
    """Lomax(c = shape_n, scale = rate_n): p(y) = c rate_n^c / (rate_n + y)^(c + 1)."""
    n, total = x.size, float(x.sum())
    a, b = SHAPE + n, RATE + total
    pred = eg.solve(x=x, shape=SHAPE, rate=RATE).predictive
    ref = stats.lomax(c=a, scale=b)
    y = np.array([0.0, 0.3, 2.5, 10.0, 40.0])
    np.testing.assert_allclose(pred.logpdf(y), ref.logpdf(y), rtol=RTOL)
    # the formula by hand, in log space
    np.testing.assert_allclose(
        pred.logpdf(y), np.log(a) + a * np.log(b) - (a + 1) * np.log(b + y), rtol=RTOL
    )
    # mean rate_n / (shape_n - 1) = E[1 / lam] (law of total expectation)
    assert pred.mean() == pytest.approx(b / (a - 1.0), rel=RTOL)


def test_predictive_pdf_matches_exponential_gamma_mixture(x):
    """p(y | D) = int Exp(y; lam) Gamma(lam; shape_n, rate_n) dlam, by quad."""
    n, total = x.size, float(x.sum())
    shape_n, rate_n = SHAPE + n, RATE + total
    pred = eg.solve(x=x, shape=SHAPE, rate=RATE).predictive
    mode = (shape_n - 1) / rate_n
    for y in (0.0, 0.5, 2.5, 8.0, 30.0):

        def log_f(lam, y=y):
            return float(
                stats.expon.logpdf(y, scale=1.0 / lam)
                + stats.gamma.logpdf(lam, shape_n, scale=1.0 / rate_n)
            )

        ref = math.exp(log_f(mode)) * integrate_split(log_f, 0.0, np.inf, mode)
        assert pred.pdf(y) == pytest.approx(ref, rel=RTOL)


# ---------------------------------------------------------------- 7. sensitivity


@pytest.mark.parametrize("component", ["prior", "likelihood"])
def test_power_scaled_with_alpha_one_is_the_posterior(x, component):
    post = eg.posterior(x=x, shape=SHAPE, rate=RATE)
    scaled = eg.power_scaled(x=x, shape=SHAPE, rate=RATE, alpha=1.0, component=component)
    assert scaled.shape == pytest.approx(post.shape, rel=1e-15)
    assert scaled.rate == pytest.approx(post.rate, rel=1e-15)


@pytest.mark.parametrize(
    ("component", "alpha"),
    [("prior", 0.6), ("prior", 1.7), ("likelihood", 0.5), ("likelihood", 1.3)],
)
def test_power_scaled_matches_quad(x, component, alpha):
    """p(lam)^alpha p(D | lam) (or p(lam) p(D | lam)^alpha), normalised by quad."""

    def log_f(lam):
        if component == "prior":
            return alpha * _log_prior(lam, SHAPE, RATE) + _log_lik(lam, x)
        return _log_prior(lam, SHAPE, RATE) + alpha * _log_lik(lam, x)

    scaled = eg.power_scaled(x=x, shape=SHAPE, rate=RATE, alpha=alpha, component=component)
    mean, var = _moments_by_quad(log_f, x.size / float(x.sum()))
    np.testing.assert_allclose(scaled.mean, [mean], rtol=RTOL)
    np.testing.assert_allclose(scaled.cov, [[var]], rtol=RTOL)


def test_power_scaled_rejects_improper_and_bad_arguments(x):
    # Gamma(0.5, .)^3 has shape 3 (0.5 - 1) + 1 = -0.5: not a density.
    with pytest.raises(ValueError, match=r"shape would be -0\.5.*alpha closer to 1"):
        eg.power_scaled(x=x, shape=0.5, rate=RATE, alpha=3.0, component="prior")
    with pytest.raises(ValueError, match=r"alpha must be a finite number > 0, got 0\.0"):
        eg.power_scaled(x=x, shape=SHAPE, rate=RATE, alpha=0.0, component="prior")
    with pytest.raises(ValueError, match=r"component must be.*'posterior'"):
        eg.power_scaled(x=x, shape=SHAPE, rate=RATE, alpha=1.0, component="posterior")


def test_sensitivity_path_equals_solve_at_every_grid_point(x):
    shapes = np.array([0.5, 1.0, 2.5, 10.0])
    rates = np.array([0.1, 0.8, 3.0, 50.0])
    path = eg.sensitivity_path(x=x, shape=shapes, rate=rates, interval=0.9)
    assert isinstance(path, ConjugatePath)
    for field in ("mean", "sd", "lower", "upper", "mode"):
        assert getattr(path, field).shape == (4, 1), field
    assert path.log_evidence.shape == (4,)
    for g, (a, b) in enumerate(zip(shapes, rates)):
        ans = eg.solve(x=x, shape=a, rate=b)
        post = ans.posterior
        np.testing.assert_allclose(path.mean[g], post.mean, rtol=RTOL)
        np.testing.assert_allclose(path.sd[g] ** 2, np.diag(post.cov), rtol=RTOL)
        np.testing.assert_allclose(path.mode[g], post.mode, rtol=RTOL)
        np.testing.assert_allclose(
            [path.lower[g, 0], path.upper[g, 0]], post.marginal(0).ppf([0.05, 0.95]), rtol=RTOL
        )
        assert path.log_evidence[g] == pytest.approx(ans.log_evidence, rel=RTOL)


def test_sensitivity_path_broadcasts_a_scalar(x):
    path = eg.sensitivity_path(x=x, shape=SHAPE, rate=np.array([0.5, 0.8]))
    assert path.mean.shape == (2, 1)
    assert path.mean[1, 0] == pytest.approx(
        eg.posterior(x=x, shape=SHAPE, rate=RATE).mean[0], rel=RTOL
    )
    with pytest.raises(ValueError, match="finite and > 0"):
        eg.sensitivity_path(x=x, shape=np.array([1.0, -1.0]), rate=RATE)


# ---------------------------------------------------------------- 8. bad input


@pytest.mark.parametrize("name", ["shape", "rate"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_hyperparameter_raises(name, value):
    prior = {"shape": SHAPE, "rate": RATE, name: value}
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        eg.solve(x=np.array([0.5, 3.0]), **prior)


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([0.5, -1, 2], r"x\[1\] = -1\.0 is negative"),
        ([1, np.nan], r"x\[1\] is nan;"),
        ([np.inf, 0], r"x\[0\] is inf;"),
        ([[0, 1], [1, 0]], r"x.*shape \(2, 2\)"),
    ],
)
def test_bad_data_raises(data, pattern):
    with pytest.raises(ValueError, match=pattern):
        eg.solve(x=np.asarray(data, dtype=float), shape=SHAPE, rate=RATE)


def test_non_integer_waiting_times_are_fine():
    eg.solve(x=np.array([0.0, 1.5, 2.25]), shape=SHAPE, rate=RATE)


# ---------------------------------------------------------------- 9. modes


@pytest.mark.parametrize(
    ("shape", "data", "mode", "interior"),
    [
        (0.5, [], 0.0, False),  # shape < 1: density decreasing from +inf at 0
        (1.0, [], 0.0, False),  # exponential prior: max at the boundary 0
        (0.5, [2.0], 0.5 / (RATE + 2.0), True),  # one observation lifts the shape to 1.5
    ],
)
def test_modes_on_the_boundary(shape, data, mode, interior):
    post = eg.posterior(x=np.asarray(data, float), shape=shape, rate=RATE)
    np.testing.assert_allclose(post.mode, [mode], rtol=RTOL, atol=0)
    assert post.mode_interior is interior


def test_interior_mode_maximises_logpdf(x):
    post = eg.posterior(x=x, shape=SHAPE, rate=RATE)
    hi = float(post.mean[0] + 20 * np.sqrt(post.cov[0, 0]))
    res = optimize.minimize_scalar(
        lambda t: -float(post.logpdf(np.array([t]))),
        bounds=(1e-9, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert post.mode_interior
    np.testing.assert_allclose(post.mode, [res.x], rtol=1e-6)


# ---------------------------------------------------------------- 10. moments, simulate


def test_moments_below_is_infinite(x):
    assert eg.posterior(x=x, shape=SHAPE, rate=RATE).moments_below == np.inf


def test_simulate_shapes_and_support(rng):
    theta, data = eg.simulate(rng, n=25, shape=SHAPE, rate=RATE)
    assert theta.shape == (1,) and theta[0] > 0
    assert data.shape == (25,) and np.all(data >= 0) and np.all(np.isfinite(data))
    eg.solve(x=data, shape=SHAPE, rate=RATE)


def test_simulate_uses_the_rate_not_the_scale(rng):
    """Given the drawn rate l, the data's mean is 1 / l: with n = 40,000 the
    sample mean's sd is 1 / (l sqrt(n)) = 0.5% of it; 6 sd is a 2e-9 false alarm
    rate, and a rate/scale mix-up (mean l instead of 1 / l) is off by a factor
    l^2 far outside it (the prior Gamma(50, 25) keeps l within 2 +- 0.3)."""
    theta, data = eg.simulate(rng, n=40_000, shape=50.0, rate=25.0)
    lam = theta[0]
    assert abs(data.mean() * lam - 1.0) < 6.0 / math.sqrt(data.size)


def test_simulate_refuses_an_underflowing_prior_draw(rng):
    # Gamma(1e-300, .) puts almost all its mass below the smallest float64.
    with pytest.raises(ValueError, match=r"rate.*(underflowed to 0|overflow)"):
        eg.simulate(rng, n=3, shape=1e-300, rate=1.0)
