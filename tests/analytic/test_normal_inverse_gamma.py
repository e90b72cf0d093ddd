"""Tests for analytic.normal_inverse_gamma: NIG prior on (mu, sigma2) of a normal.

References are independent of the module: a one-observation-at-a-time
recursion for the posterior parameters (a different algorithm from the
module's batch update on centred statistics), prior x likelihood built from
scipy.stats densities, numerical integration (quad, dblquad) of the joint
and of prior x likelihood, a Student-t chain rule built from scipy.stats.t,
and scipy.stats.norm.fit for the MLE.  Exact quantities are compared at
~1e-10 relative (quad at epsrel=1e-13); two-dimensional quadrature at the
looser level its own error estimate supports, stated at each use.

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
from analytic import normal_inverse_gamma as nig
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, sampler_z_scores

PRIOR = dict(mu0=0.5, kappa0=2.0, alpha0=3.0, beta0=2.0)
X_SMALL = np.array([0.3, -0.2, 1.1, 0.7])  # small enough for two-dimensional quadrature


@pytest.fixture
def x(rng) -> np.ndarray:
    return rng.normal(1.0, 0.8, size=20)


# ---------------------------------------------------------------- helpers


def _recursive_update(x, *, mu0, kappa0, alpha0, beta0) -> tuple[float, float, float, float]:
    """NIG parameters after one observation at a time (Murphy 2007, sec. 6 with n = 1):

    kappa' = kappa + 1, mu' = (kappa mu + x) / (kappa + 1), alpha' = alpha + 1/2,
    beta' = beta + kappa (x - mu)^2 / (2 (kappa + 1)).
    """
    mu, kappa, alpha, beta = mu0, kappa0, alpha0, beta0
    for v in x:
        beta += kappa * (v - mu) ** 2 / (2.0 * (kappa + 1.0))
        mu = (kappa * mu + v) / (kappa + 1.0)
        kappa += 1.0
        alpha += 0.5
    return mu, kappa, alpha, beta


def _log_joint_scipy(mu, s2, x, *, mu0, kappa0, alpha0, beta0) -> float:
    """log NIG prior + log likelihood, from scipy.stats densities."""
    return float(
        stats.invgamma.logpdf(s2, alpha0, scale=beta0)
        + stats.norm.logpdf(mu, mu0, math.sqrt(s2 / kappa0))
        + stats.norm.logpdf(x, mu, math.sqrt(s2)).sum()
    )


def _log_joint_math(mu, s2, x, *, mu0, kappa0, alpha0, beta0) -> float:
    """The same, written out with the math module (fast enough for dblquad)."""
    n = len(x)
    log_prior = (
        alpha0 * math.log(beta0)
        - math.lgamma(alpha0)
        - (alpha0 + 1.0) * math.log(s2)
        - beta0 / s2
        - 0.5 * math.log(2.0 * math.pi * s2 / kappa0)
        - kappa0 * (mu - mu0) ** 2 / (2.0 * s2)
    )
    log_lik = -0.5 * n * math.log(2.0 * math.pi * s2) - sum((v - mu) ** 2 for v in x) / (2.0 * s2)
    return log_prior + log_lik


# ---------------------------------------------------------------- 1. posterior


def test_posterior_matches_one_at_a_time_recursion(x):
    post = nig.posterior(x=x, **PRIOR)
    np.testing.assert_allclose(
        [post.mu, post.kappa, post.alpha, post.beta], _recursive_update(x, **PRIOR), rtol=1e-12
    )


def test_bayes_rule_holds_pointwise(x):
    """log p(mu, s2 | D) + log p(D) = log p(mu, s2) + log p(D | mu, s2) at any point."""
    ans = nig.solve(x=x, **PRIOR)
    for mu, s2 in [(0.0, 0.3), (1.0, 0.6), (1.2, 1.5), (-0.5, 4.0)]:
        lhs = float(ans.posterior.logpdf(np.array([mu, s2]))) + ans.log_evidence
        assert lhs == pytest.approx(_log_joint_scipy(mu, s2, x, **PRIOR), rel=RTOL)


def test_marginal_of_mu_is_the_joint_with_sigma2_integrated_out(x):
    post = nig.posterior(x=x, **PRIOR)
    for mu in (post.mu - 1.0, post.mu, post.mu + 0.3):
        # Split at the conditional mode of sigma2 given mu, where the integrand peaks.
        split = (post.beta + 0.5 * post.kappa * (mu - post.mu) ** 2) / (post.alpha + 1.5)
        f = lambda s2: math.exp(float(post.logpdf(np.array([mu, s2]))))
        ref = integrate.quad(f, 0.0, split, **QUAD)[0] + integrate.quad(f, split, np.inf, **QUAD)[0]
        assert post.marginal(0).pdf(mu) == pytest.approx(ref, rel=RTOL)


def test_marginal_of_sigma2_is_the_joint_with_mu_integrated_out(x):
    post = nig.posterior(x=x, **PRIOR)
    for s2 in (0.2, 0.5, 1.0):
        f = lambda mu: math.exp(float(post.logpdf(np.array([mu, s2]))))
        ref = (
            integrate.quad(f, -np.inf, post.mu, **QUAD)[0]
            + integrate.quad(f, post.mu, np.inf, **QUAD)[0]
        )
        assert post.marginal(1).pdf(s2) == pytest.approx(ref, rel=RTOL)


def test_mean_and_cov_match_quad_on_the_marginals(x):
    post = nig.posterior(x=x, **PRIOR)

    def moments(dist, lo, split, hi):
        def integral(g):
            return integrate.quad(g, lo, split, **QUAD)[0] + integrate.quad(g, split, hi, **QUAD)[0]

        m = integral(lambda t: t * dist.pdf(t))
        return m, integral(lambda t: (t - m) ** 2 * dist.pdf(t))

    mean_mu, var_mu = moments(post.marginal(0), -np.inf, post.mu, np.inf)
    mean_s2, var_s2 = moments(post.marginal(1), 0.0, post.beta / (post.alpha + 1.0), np.inf)
    np.testing.assert_allclose(post.mean, [mean_mu, mean_s2], rtol=RTOL)
    np.testing.assert_allclose(np.diag(post.cov), [var_mu, var_s2], rtol=RTOL)
    # E[mu | sigma2] = mu_n for every sigma2, so Cov(mu, sigma2) = 0 exactly.
    assert post.cov[0, 1] == 0.0 and post.cov[1, 0] == 0.0


@pytest.mark.parametrize(
    ("alpha0", "mean_s2_finite", "var_finite"),
    [(0.8, False, False), (1.5, True, False)],
)
def test_moments_that_do_not_exist_are_inf(alpha0, mean_s2_finite, var_finite):
    # E[sigma2] needs alpha > 1, Var[sigma2] alpha > 2, Var[mu] (t with 2 alpha dof) alpha > 1.
    post = nig.posterior(x=np.array([]), **{**PRIOR, "alpha0": alpha0})
    assert bool(np.isfinite(post.mean[1])) is mean_s2_finite
    assert bool(np.isfinite(post.mean[0]))
    assert bool(np.isfinite(post.cov[1, 1])) is var_finite
    assert bool(np.isfinite(post.cov[0, 0])) is (alpha0 > 1)
    assert post.moments_below == alpha0


def test_satisfies_protocol(x):
    post = nig.posterior(x=x, **PRIOR)
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("mu", "sigma2")
    assert post.free == (0, 1)
    assert post.is_gaussian is False


# ---------------------------------------------------------------- 2. evidence


def test_log_evidence_matches_dblquad():
    """p(D) as a double integral of prior x likelihood over (mu, sigma2).

    dblquad at epsrel=1e-10 reports an error estimate well below 1e-8 here; the
    comparison is at 1e-7 relative.
    """
    x = X_SMALL
    # The fast integrand is the scipy one, written out.
    assert _log_joint_math(0.4, 0.7, x, **PRIOR) == pytest.approx(
        _log_joint_scipy(0.4, 0.7, x, **PRIOR), rel=1e-13
    )
    xbar, v = float(x.mean()), float(x.var())
    c = _log_joint_math(xbar, v, x, **PRIOR)  # shift so the integrand is O(1)
    integrand = lambda mu, s2: math.exp(_log_joint_math(mu, s2, x, **PRIOR) - c)
    val, err = integrate.dblquad(integrand, 0.0, np.inf, -np.inf, np.inf, epsabs=0.0, epsrel=1e-10)
    assert err < 1e-8 * val
    log_z = c + math.log(val)
    assert nig.solve(x=x, **PRIOR).log_evidence == pytest.approx(log_z, rel=1e-7)


def test_log_evidence_matches_student_t_chain_rule(x):
    """p(x_i | x_<i) = t_{2 alpha}(mu, beta (kappa + 1) / (alpha kappa)) (Murphy 2007, eq. 100),
    with the parameters from the one-at-a-time recursion and the density from scipy."""
    total = 0.0
    for i in range(x.size):
        mu, kappa, alpha, beta = _recursive_update(x[:i], **PRIOR)
        scale = math.sqrt(beta * (kappa + 1.0) / (alpha * kappa))
        total += stats.t.logpdf(x[i], 2.0 * alpha, loc=mu, scale=scale)
    assert nig.solve(x=x, **PRIOR).log_evidence == pytest.approx(total, rel=RTOL)


# ---------------------------------------------------------------- 3. identities


def test_mle_matches_scipy_norm_fit(x):
    loc, scale = stats.norm.fit(x)  # closed-form normal MLE: (mean, sqrt(mean squared deviation))
    np.testing.assert_allclose(nig.solve(x=x, **PRIOR).mle, [loc, scale**2], rtol=RTOL)


def test_vague_prior_limit(x):
    # kappa0, alpha0, beta0 -> 0: mu_n -> xbar, alpha_n -> n/2, beta_n -> m2/2, so the
    # joint mode is (xbar, m2 / (n + 3)) and E[sigma2] = m2 / (n - 2) (Murphy 2007, sec. 6).
    n, m2 = x.size, float(np.sum((x - x.mean()) ** 2))
    post = nig.posterior(x=x, mu0=3.0, kappa0=1e-12, alpha0=1e-12, beta0=1e-12)
    np.testing.assert_allclose(post.mode, [x.mean(), m2 / (n + 3)], rtol=RTOL)
    np.testing.assert_allclose(post.mean, [x.mean(), m2 / (n - 2)], rtol=RTOL)


# ---------------------------------------------------------------- 4. sampler, logpdf


def test_sampler_check_detects_planted_bug(x, rng):
    """Power: an extra half in the shape (alpha_n + 1/2) moves E[sigma2] by ~4%,
    ~0.13 sd or ~60 standard errors at N = 200,000."""
    post = nig.posterior(x=x, **PRIOR)
    s2 = post.beta / rng.gamma(post.alpha + 0.5, 1.0, size=N_DRAWS)
    mu = post.mu + np.sqrt(s2 / post.kappa) * rng.standard_normal(N_DRAWS)
    z = sampler_z_scores(
        np.column_stack([mu, s2]),
        mean=post.mean,
        cov=post.cov,
        marginals=[post.marginal(0), post.marginal(1)],
    )
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_integrates_to_one():
    """dblquad over sigma2 in (0, inf) and mu within 8 conditional sds of mu_n
    (the Gaussian tail beyond is 1.2e-15): 1 to 1e-6."""
    post = nig.posterior(x=X_SMALL[:3], **PRIOR)
    f = lambda mu, s2: math.exp(float(post.logpdf(np.array([mu, s2]))))
    half = lambda s2: 8.0 * math.sqrt(s2 / post.kappa)
    val, _ = integrate.dblquad(
        f,
        0.0,
        np.inf,
        lambda s2: post.mu - half(s2),
        lambda s2: post.mu + half(s2),
        epsabs=0.0,
        epsrel=1e-7,
    )
    assert val == pytest.approx(1.0, rel=1e-6)


def test_logpdf_matches_scipy_and_broadcasts(x):
    # NIG density = InvGamma(s2; alpha, beta) N(mu; mu_n, s2 / kappa), parameters from the recursion.
    mu, kappa, alpha, beta = _recursive_update(x, **PRIOR)
    post = nig.posterior(x=x, **PRIOR)
    pts = np.array(
        [[[0.0, 0.3], [1.0, 0.6], [2.0, 1.2]], [[0.5, 0.4], [1.5, 2.0], [-1.0, 0.9]]]
    )  # shape (2, 3, 2)
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    ref = stats.invgamma.logpdf(pts[..., 1], alpha, scale=beta) + stats.norm.logpdf(
        pts[..., 0], mu, np.sqrt(pts[..., 1] / kappa)
    )
    np.testing.assert_allclose(out, ref, rtol=RTOL)
    np.testing.assert_array_equal(
        post.logpdf(np.array([[1.0, 0.0], [1.0, -1.0]])), [-np.inf, -np.inf]
    )


# ---------------------------------------------------------------- 5. predictive


def test_predictive_matches_numerical_mixture(x):
    """p(y | D) = int N(y; mu_n, s2 (1 + 1/kappa_n)) InvGamma(s2; alpha_n, beta_n) ds2
    (mu integrated out by hand), with parameters from the one-at-a-time recursion."""
    mu, kappa, alpha, beta = _recursive_update(x, **PRIOR)
    pred = nig.solve(x=x, **PRIOR).predictive
    for y in (-2.0, 0.0, mu, 2.5, 6.0):
        f = lambda s2: (
            stats.norm.pdf(y, mu, math.sqrt(s2 * (1.0 + 1.0 / kappa)))
            * stats.invgamma.pdf(s2, alpha, scale=beta)
        )
        split = beta / (alpha + 1.0)
        ref = integrate.quad(f, 0.0, split, **QUAD)[0] + integrate.quad(f, split, np.inf, **QUAD)[0]
        assert pred.pdf(y) == pytest.approx(ref, rel=RTOL)
    # Law of total variance: Var y = E[s2] + Var mu = beta/(alpha-1) (1 + 1/kappa).
    assert pred.mean() == pytest.approx(mu, rel=RTOL)
    assert pred.var() == pytest.approx(beta / (alpha - 1.0) * (1.0 + 1.0 / kappa), rel=RTOL)


# ---------------------------------------------------------------- 6. bad input


@pytest.mark.parametrize("name", ["kappa0", "alpha0", "beta0"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_hyperparameter_raises(name, value):
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        nig.solve(x=np.array([0.0, 1.0]), **{**PRIOR, name: value})


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_mu0_raises(value):
    with pytest.raises(ValueError, match=rf"\bmu0\b.*{re.escape(repr(value))}"):
        nig.solve(x=np.array([0.0, 1.0]), **{**PRIOR, "mu0": value})


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([1, np.nan], r"x\[1\] is nan;"),
        ([np.inf, 0], r"x\[0\] is inf;"),
        ([[0, 1], [1, 0]], r"x.*shape \(2, 2\)"),
    ],
)
def test_bad_data_raises(data, pattern):
    with pytest.raises(ValueError, match=pattern):
        nig.solve(x=np.asarray(data, dtype=float), **PRIOR)


# ---------------------------------------------------------------- 7. mode


def test_mode_maximises_logpdf(x):
    post = nig.posterior(x=x, **PRIOR)
    np.testing.assert_allclose(post.mode, [post.mu, post.beta / (post.alpha + 1.5)], rtol=RTOL)
    start = post.mode * np.array([1.3, 0.6])
    res = optimize.minimize(
        lambda t: -float(post.logpdf(t)),
        start,
        method="Nelder-Mead",
        options={"xatol": 1e-11, "fatol": 1e-14, "maxiter": 5000},
    )
    assert res.success
    np.testing.assert_allclose(post.mode, res.x, rtol=1e-6)
    assert post.mode_interior is True


# ---------------------------------------------------------------- 8. moments, simulate


def test_moments_below_is_alpha_n(x):
    # The t marginal (2 alpha_n dof) has moments below 2 alpha_n, the InvGamma
    # marginal below alpha_n; the smaller bound is alpha_n.
    post = nig.posterior(x=x, **PRIOR)
    assert post.moments_below == post.alpha == PRIOR["alpha0"] + x.size / 2


def test_simulate_shapes(rng):
    theta, data = nig.simulate(rng, n=25, **PRIOR)
    assert theta.shape == (2,) and theta[1] > 0
    assert data.shape == (25,)
    nig.solve(x=data, **PRIOR)
