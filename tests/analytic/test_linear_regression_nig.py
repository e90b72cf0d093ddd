"""Tests for analytic.linear_regression_nig: NIG prior on (w, sigma2) of a linear model.

References are independent of the module: the posterior parameters by the
textbook formulas with scipy.linalg.solve (Murphy 2012, sec. 7.6.3; the
"identity" form of b_n), prior x likelihood built from scipy.stats
densities, the evidence as one n-dimensional scipy.stats.multivariate_t
density, numerical integration (quad) of the joint over sigma2 for the
Student-t marginals and predictive, Monte Carlo from a joint sampler written
here with scipy.stats.invgamma and numpy's Cholesky, numpy.linalg.lstsq for
the MLE, and analytic.normal_inverse_gamma for the one-column special case.
Exact quantities are compared at ~1e-10 relative (quad at epsrel=1e-13);
where a reference solves normal equations the tolerance is ``100 cond eps``
with the condition number computed here; Monte Carlo at 5 standard errors.

The identities every conjugate topic shares (no data = prior, sequential =
batch, the evidence chain rule, merging statistics, flat prior = MLE, the
sampler's moments) are stated once in tests/analytic/test_conjugate_identities.py.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import integrate, linalg, optimize, stats

from analytic import ExactAnswer, ExactPosterior
from analytic import linear_regression as lr
from analytic import linear_regression_nig as lrn
from analytic import normal_inverse_gamma as nig
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, sampler_z_scores

EPS = np.finfo(float).eps
N, DEGREE = 25, 3
ALPHA0, BETA0, PRIOR_SCALE = 3.0, 0.5, 2.0  # InvGamma shape, scale; sd of w per unit sigma
PRIOR = dict(alpha0=ALPHA0, beta0=BETA0, prior_scale=PRIOR_SCALE)
M0 = np.array([0.5, -1.0, 0.3, 0.2])
V0 = np.array(
    [[2.0, 0.3, 0.0, -0.2], [0.3, 1.5, 0.4, 0.0], [0.0, 0.4, 3.0, 0.5], [-0.2, 0.0, 0.5, 1.0]]
)  # diagonally dominant, so positive definite
GENERAL = dict(alpha0=ALPHA0, beta0=BETA0, prior_mean=M0, prior_cov=V0)


@pytest.fixture
def data(rng) -> tuple[np.ndarray, np.ndarray]:
    x, y = lr.sinusoid(rng, n=N, noise_sd=0.3)
    return lr.design_matrix(x=x, degree=DEGREE)[0], y


@pytest.fixture
def grid() -> np.ndarray:
    return lr.design_matrix(x=np.array([-0.1, 0.5, 1.1]), degree=DEGREE)[0]


# ---------------------------------------------------------------- helpers


def _reference(phi, y, *, alpha0, beta0, prior_mean, prior_cov):
    """(m_n, V_n, a_n, b_n) by the textbook formulas with dense solves:

    V_n = (V0^-1 + Phi^T Phi)^-1, m_n = V_n (V0^-1 m0 + Phi^T y), a_n = alpha0 + n/2,
    b_n = beta0 + (y^T y + m0^T V0^-1 m0 - m_n^T V_n^-1 m_n) / 2.
    """
    d = phi.shape[1]
    v0_inv = linalg.solve(prior_cov, np.eye(d), assume_a="pos")
    prec = v0_inv + phi.T @ phi
    v_n = linalg.solve(prec, np.eye(d), assume_a="pos")
    m_n = v_n @ (v0_inv @ prior_mean + phi.T @ y)
    a_n = alpha0 + 0.5 * y.size
    b_n = beta0 + 0.5 * (y @ y + prior_mean @ v0_inv @ prior_mean - m_n @ prec @ m_n)
    return m_n, v_n, a_n, b_n


def _general_reference(phi, y):
    return _reference(phi, y, alpha0=ALPHA0, beta0=BETA0, prior_mean=M0, prior_cov=V0)


def _tol(matrix) -> float:
    """Relative agreement of two stable solves of a system with this matrix: 100 cond eps."""
    return max(RTOL, 100.0 * float(np.linalg.cond(matrix)) * EPS)


def _log_joint(w, s2, phi, y) -> float:
    """log NIG prior + log likelihood, from scipy.stats densities (general prior)."""
    return float(
        stats.invgamma.logpdf(s2, ALPHA0, scale=BETA0)
        + stats.multivariate_normal.logpdf(w, M0, s2 * V0)
        + stats.norm.logpdf(y, phi @ w, math.sqrt(s2)).sum()
    )


def _reference_draws(rng, m_n, v_n, a_n, b_n, size):
    """Exact joint draws, written independently of the module's sampler."""
    s2 = stats.invgamma.rvs(a_n, scale=b_n, size=size, random_state=rng)
    chol = np.linalg.cholesky(v_n)
    w = m_n + np.sqrt(s2)[:, None] * (rng.standard_normal((size, m_n.size)) @ chol.T)
    return np.column_stack([w, s2])


# ---------------------------------------------------------------- 1. posterior


@pytest.mark.parametrize("prior", ["isotropic", "general"])
def test_posterior_matches_textbook_formulas(data, prior):
    phi, y = data
    if prior == "isotropic":
        kwargs = PRIOR
        ref = _reference(
            phi,
            y,
            alpha0=ALPHA0,
            beta0=BETA0,
            prior_mean=np.zeros(4),
            prior_cov=PRIOR_SCALE**2 * np.eye(4),
        )
    else:
        kwargs, ref = GENERAL, _general_reference(phi, y)
    m_n, v_n, a_n, b_n = ref
    post = lrn.solve(phi=phi, y=y, **kwargs).posterior
    tol = _tol(v_n)
    np.testing.assert_allclose(post.loc, m_n, rtol=tol)
    np.testing.assert_allclose(post.scale_cov, v_n, rtol=tol, atol=tol * np.abs(v_n).max())
    assert post.alpha == a_n
    # The reference's b_n cancels y^T y (~10) against m_n^T V_n^-1 m_n (b_n ~3): it
    # loses ~1 digit, well inside the tolerance.
    assert post.beta == pytest.approx(b_n, rel=tol)


def test_conditional_on_sigma2_is_the_known_variance_posterior(data):
    """w | sigma2, D ~ N(m_n, sigma2 V_n): analytic.linear_regression with
    noise_sd = sqrt(sigma2) and prior_cov = sigma2 V0, for every sigma2."""
    phi, y = data
    post = lrn.solve(phi=phi, y=y, **GENERAL).posterior
    suff = lr.sufficient_stats(phi=phi, y=y)
    for s2 in (0.05, 0.3, 2.0):
        ref = lr.update(suff=suff, noise_sd=math.sqrt(s2), prior_mean=M0, prior_cov=s2 * V0)
        tol = _tol(ref.cov)
        np.testing.assert_allclose(post.loc, ref.mean, rtol=tol)
        np.testing.assert_allclose(
            s2 * post.scale_cov, ref.cov, rtol=tol, atol=tol * np.abs(ref.cov).max()
        )


def test_bayes_rule_holds_pointwise(data):
    """log p(w, s2 | D) + log p(D) = log p(w, s2) + log p(D | w, s2) at any point."""
    phi, y = data
    ans = lrn.solve(phi=phi, y=y, **GENERAL)
    m = ans.posterior.loc
    for w, s2 in [(M0, 1.0), (m, 0.08), (m + 0.2, 0.3), (np.array([0.0, 4.0, -8.0, 4.0]), 0.5)]:
        lhs = float(ans.posterior.logpdf(np.append(w, s2))) + ans.log_evidence
        assert lhs == pytest.approx(_log_joint(w, s2, phi, y), rel=RTOL)


def test_marginal_t_is_the_joint_with_sigma2_integrated_out(data):
    """p(w_i | D) = int N(w_i; m_i, s2 V_ii) InvGamma(s2; a_n, b_n) ds2, by quad,
    with the parameters from the textbook reference."""
    phi, y = data
    m_n, v_n, a_n, b_n = _general_reference(phi, y)
    post = lrn.solve(phi=phi, y=y, **GENERAL).posterior
    for i in (0, 2, 3):
        for dw in (-1.5, 0.0, 0.4):
            w = m_n[i] + dw * math.sqrt(b_n / a_n * v_n[i, i])

            def f(s2, w=w, i=i):
                return stats.norm.pdf(w, m_n[i], math.sqrt(s2 * v_n[i, i])) * stats.invgamma.pdf(
                    s2, a_n, scale=b_n
                )

            split = (b_n + 0.5 * (w - m_n[i]) ** 2 / v_n[i, i]) / (a_n + 1.5)  # integrand's peak
            ref = (
                integrate.quad(f, 0.0, split, **QUAD)[0]
                + integrate.quad(f, split, np.inf, **QUAD)[0]
            )
            assert post.marginal(i).pdf(w) == pytest.approx(ref, rel=RTOL)
    s2 = np.array([0.05, 0.1, 0.2])
    np.testing.assert_allclose(
        post.marginal(4).pdf(s2), stats.invgamma.pdf(s2, a_n, scale=b_n), rtol=RTOL
    )


def test_mean_and_cov_match_scipy_marginal_moments(data):
    phi, y = data
    post = lrn.solve(phi=phi, y=y, **GENERAL).posterior
    m_n, v_n, a_n, b_n = _general_reference(phi, y)
    tol = _tol(v_n)
    # scipy's own moments of t_{2a}(m, b/a V_ii) and InvGamma(a, b).
    ts = [stats.t(2 * a_n, loc=m_n[i], scale=math.sqrt(b_n / a_n * v_n[i, i])) for i in range(4)]
    ig = stats.invgamma(a_n, scale=b_n)
    np.testing.assert_allclose(post.mean, [t.mean() for t in ts] + [ig.mean()], rtol=tol)
    np.testing.assert_allclose(np.diag(post.cov), [t.var() for t in ts] + [ig.var()], rtol=tol)
    # Off-diagonal: Cov(w) = E[sigma2] V_n (law of total covariance, E[w | s2] = m_n).
    np.testing.assert_allclose(
        post.cov[:4, :4], ig.mean() * v_n, rtol=tol, atol=tol * np.abs(v_n).max()
    )
    assert np.all(post.cov[4, :4] == 0.0) and np.all(post.cov[:4, 4] == 0.0)


@pytest.mark.parametrize(
    ("alpha0", "mean_s2_finite", "var_s2_finite"),
    [(0.8, False, False), (1.5, True, False), (2.5, True, True)],
)
def test_moments_that_do_not_exist_are_inf(alpha0, mean_s2_finite, var_s2_finite):
    # E[sigma2] and Cov(w) need a_n > 1, Var[sigma2] a_n > 2.
    post = lrn.update(
        suff=lr.sufficient_stats(phi=np.empty((0, 2)), y=np.empty(0)),
        alpha0=alpha0,
        beta0=1.0,
        prior_mean=0.0,
        prior_cov=np.eye(2),
    )
    assert bool(np.isfinite(post.mean[2])) is mean_s2_finite
    assert np.all(np.isfinite(post.mean[:2]))
    assert bool(np.all(np.isfinite(post.cov[:2, :2]))) is mean_s2_finite
    assert bool(np.isfinite(post.cov[2, 2])) is var_s2_finite
    assert post.moments_below == alpha0
    var = lrn.predictive(posterior=post, phi_new=np.ones((2, 2)))[1]
    assert bool(np.all(np.isfinite(var))) is mean_s2_finite


def test_satisfies_protocol(data):
    phi, y = data
    ans = lrn.solve(phi=phi, y=y, **PRIOR)
    assert isinstance(ans, ExactAnswer)
    post = ans.posterior
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("w[0]", "w[1]", "w[2]", "w[3]", "sigma2")
    assert post.free == (0, 1, 2, 3, 4)
    assert post.is_gaussian is False and post.mode_interior is True
    assert post.moments_below == post.alpha == ALPHA0 + N / 2


# ---------------------------------------------------------------- 2. Monte Carlo


def test_exact_joint_draws_match_the_module_marginals(data, rng):
    """Draws from a joint sampler written here (reference parameters) against the
    module's mean, covariance and marginal CDFs.  5 means + 15 covariance entries
    + 15 CDF points = 35 checks at 5.7e-7: false-alarm rate below 2e-5 per run.
    a_n = 15.5 gives the draws the eighth moments a plug-in SE for the covariance needs."""
    phi, y = data
    post = lrn.solve(phi=phi, y=y, **GENERAL).posterior
    draws = _reference_draws(rng, *_general_reference(phi, y), N_DRAWS)
    z = sampler_z_scores(
        draws, mean=post.mean, cov=post.cov, marginals=[post.marginal(i) for i in range(5)]
    )
    assert max(abs(v) for v in z.values()) < Z_MAX, z


def test_sampler_check_detects_planted_bug(data, rng):
    """Power: drawing w from N(m_n, V_n), forgetting the factor sigma2 (E[sigma2] ~0.2
    here), inflates Var(w) ~6-fold, hundreds of standard errors."""
    phi, y = data
    post = lrn.solve(phi=phi, y=y, **GENERAL).posterior
    s2 = post.beta / rng.gamma(post.alpha, 1.0, size=N_DRAWS)
    w = post.loc + rng.standard_normal((N_DRAWS, 4)) @ np.linalg.cholesky(post.scale_cov).T
    z = sampler_z_scores(
        np.column_stack([w, s2]),
        mean=post.mean,
        cov=post.cov,
        marginals=[post.marginal(i) for i in range(5)],
    )
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_matches_scipy_and_broadcasts(data, rng):
    phi, y = data
    m_n, v_n, a_n, b_n = _general_reference(phi, y)
    post = lrn.solve(phi=phi, y=y, **GENERAL).posterior
    w = m_n + 0.3 * rng.normal(size=(2, 3, 4))
    s2 = rng.uniform(0.02, 0.5, size=(2, 3))
    out = post.logpdf(np.concatenate([w, s2[..., None]], axis=-1))
    assert out.shape == (2, 3)
    ref = np.array(
        [
            [
                stats.invgamma.logpdf(s2[i, j], a_n, scale=b_n)
                + stats.multivariate_normal.logpdf(w[i, j], m_n, s2[i, j] * v_n)
                for j in range(3)
            ]
            for i in range(2)
        ]
    )
    np.testing.assert_allclose(out, ref, rtol=_tol(v_n))
    bad = np.array([np.append(m_n, 0.0), np.append(m_n, -1.0)])
    np.testing.assert_array_equal(post.logpdf(bad), [-np.inf, -np.inf])


# ---------------------------------------------------------------- 3. evidence


@pytest.mark.parametrize("prior", ["isotropic", "general"])
def test_log_evidence_matches_multivariate_t(data, prior):
    # Marginally y ~ t_{2 alpha0}(Phi m0, beta0/alpha0 (I + Phi V0 Phi^T)) (Murphy 2012, sec. 7.6.3).
    phi, y = data
    m0, v0 = (np.zeros(4), PRIOR_SCALE**2 * np.eye(4)) if prior == "isotropic" else (M0, V0)
    kwargs = PRIOR if prior == "isotropic" else GENERAL
    ref = stats.multivariate_t.logpdf(
        y, phi @ m0, BETA0 / ALPHA0 * (np.eye(N) + phi @ v0 @ phi.T), df=2 * ALPHA0
    )
    assert lrn.solve(phi=phi, y=y, **kwargs).log_evidence == pytest.approx(ref, rel=RTOL)
    got = lrn.log_evidence(
        suff=lr.sufficient_stats(phi=phi, y=y),
        alpha0=ALPHA0,
        beta0=BETA0,
        prior_mean=m0,
        prior_cov=v0,
    )
    assert got == pytest.approx(ref, rel=RTOL)


def test_one_constant_feature_is_normal_inverse_gamma(rng):
    # Phi = 1 (n x 1), V0 = 1/kappa0: the model of analytic.normal_inverse_gamma with mu = w.
    x = rng.normal(1.0, 0.8, size=20)
    kappa0 = 2.0
    phi = np.ones((20, 1))
    got = lrn.fit(
        phi=phi,
        y=x,
        alpha0=ALPHA0,
        beta0=BETA0,
        prior_mean=0.5,
        prior_scale=1.0 / math.sqrt(kappa0),
    )
    ref = nig.solve(x=x, mu0=0.5, kappa0=kappa0, alpha0=ALPHA0, beta0=BETA0)
    p, q = got.posterior, ref.posterior
    np.testing.assert_allclose(
        [p.loc[0], 1.0 / p.scale_cov[0, 0], p.alpha, p.beta],
        [q.mu, q.kappa, q.alpha, q.beta],
        rtol=RTOL,
    )
    np.testing.assert_allclose(p.mean, q.mean, rtol=RTOL)
    np.testing.assert_allclose(p.cov, q.cov, rtol=RTOL)
    np.testing.assert_allclose(p.mode, q.mode, rtol=RTOL)
    assert got.log_evidence == pytest.approx(ref.log_evidence, rel=RTOL)
    np.testing.assert_allclose(got.answer().mle, ref.mle, rtol=RTOL)
    mean, var = got.predictive.at(np.ones((1, 1)))
    assert mean[0] == pytest.approx(ref.predictive.mean(), rel=RTOL)
    assert var[0] == pytest.approx(ref.predictive.var(), rel=RTOL)
    assert float(got.predictive.logpdf([0.7], np.ones((1, 1)))[0]) == pytest.approx(
        ref.predictive.logpdf(0.7), rel=RTOL
    )


# ---------------------------------------------------------------- 4. identities


def test_solve_stats_equals_solve(data):
    phi, y = data
    suff = lr.sufficient_stats(phi=phi[:7], y=y[:7]) + lr.sufficient_stats(phi=phi[7:], y=y[7:])
    a, b = lrn.solve(phi=phi, y=y, **GENERAL), lrn.solve_stats(suff=suff, **GENERAL)
    tol = _tol(a.posterior.scale_cov)
    np.testing.assert_allclose(b.posterior.mean, a.posterior.mean, rtol=tol)
    np.testing.assert_allclose(
        b.posterior.cov, a.posterior.cov, rtol=tol, atol=tol * np.abs(a.posterior.cov).max()
    )
    assert b.log_evidence == pytest.approx(a.log_evidence, rel=tol)
    # Normal-equation MLE against least squares: ~cond(Phi^T Phi) eps.
    np.testing.assert_allclose(b.mle, a.mle, rtol=_tol(phi.T @ phi))


def test_mle_is_least_squares_and_rss_over_n(data):
    phi, y = data
    w, rss, _, _ = np.linalg.lstsq(phi, y, rcond=None)
    got = lrn.solve(phi=phi, y=y, **PRIOR).mle
    np.testing.assert_allclose(got[:4], w, rtol=_tol(phi))
    assert got[4] == pytest.approx(float(rss[0]) / N, rel=RTOL)


def test_rank_deficient_design_has_no_mle_but_a_posterior(data):
    phi, y = data
    dup = np.column_stack([phi, phi[:, 2]])
    fit = lrn.fit(phi=dup, y=y, alpha0=ALPHA0, beta0=BETA0, prior_scale=PRIOR_SCALE)
    assert fit.answer().mle is None and fit.mle.unique is False and fit.mle.rank == 4
    m_n, v_n, a_n, b_n = _reference(
        dup,
        y,
        alpha0=ALPHA0,
        beta0=BETA0,
        prior_mean=np.zeros(5),
        prior_cov=PRIOR_SCALE**2 * np.eye(5),
    )
    tol = _tol(v_n)
    np.testing.assert_allclose(fit.posterior.loc, m_n, rtol=tol)
    assert fit.posterior.alpha == a_n
    assert fit.posterior.beta == pytest.approx(b_n, rel=tol)
    ref = stats.multivariate_t.logpdf(
        y, np.zeros(N), BETA0 / ALPHA0 * (np.eye(N) + PRIOR_SCALE**2 * dup @ dup.T), df=2 * ALPHA0
    )
    assert fit.log_evidence == pytest.approx(ref, rel=RTOL)


def test_vague_prior_limit(data):
    # V0 = 1e16 I, alpha0 = beta0 = 1e-12: m_n -> w_hat, a_n -> n/2, b_n -> RSS/2,
    # so the joint mode of sigma2 is RSS / (n + 2 + d) and E[sigma2] = RSS / (n - 2).
    # The prior terms move b_n by ~1e-12 + 1e-16 |m_n|^2 against RSS/2 ~ 1.
    phi, y = data
    post = lrn.solve(
        phi=phi, y=y, alpha0=1e-12, beta0=1e-12, prior_scale=1e8, prior_mean=3.0
    ).posterior
    ls = lr.mle(phi=phi, y=y)
    np.testing.assert_allclose(post.loc, ls.w, rtol=_tol(phi.T @ phi))
    assert post.mode[4] == pytest.approx(ls.rss / (N + 2 + 4), rel=RTOL)
    assert post.mean[4] == pytest.approx(ls.rss / (N - 2), rel=RTOL)


# ---------------------------------------------------------------- 5. predictive


def test_predictive_matches_monte_carlo_from_the_joint(data, grid, rng):
    """y_new = Phi_new w + sqrt(sigma2) eps with (w, sigma2) from the reference joint
    sampler.  3 means + 6 covariance entries at 5.7e-7: false-alarm rate below 6e-6."""
    phi, y = data
    pred = lrn.fit(phi=phi, y=y, **GENERAL).predictive
    draws = _reference_draws(rng, *_general_reference(phi, y), N_DRAWS)
    w, s2 = draws[:, :4], draws[:, 4]
    ys = w @ grid.T + np.sqrt(s2)[:, None] * rng.standard_normal((N_DRAWS, 3))
    mean, var = pred.at(grid)
    cov = pred.cov(grid)
    np.testing.assert_allclose(np.diag(cov), var, rtol=RTOL)
    c = ys - mean
    z = [c[:, i].mean() / math.sqrt(var[i] / N_DRAWS) for i in range(3)]
    for i in range(3):
        for j in range(i, 3):
            prod = c[:, i] * c[:, j]
            z.append((prod.mean() - cov[i, j]) / (prod.std() / math.sqrt(N_DRAWS)))
    assert max(abs(v) for v in z) < Z_MAX, z


def test_predictive_density_matches_numerical_mixture(data):
    """p(y | D) = int N(y; phi^T m_n, s2 (1 + phi^T V_n phi)) InvGamma(s2; a_n, b_n) ds2
    (w integrated out by hand), with the reference parameters."""
    phi, y = data
    m_n, v_n, a_n, b_n = _general_reference(phi, y)
    pred = lrn.fit(phi=phi, y=y, **GENERAL).predictive
    row = lr.design_matrix(x=np.array([0.3]), degree=DEGREE)[0]
    loc, h = float(row[0] @ m_n), 1.0 + float(row[0] @ v_n @ row[0])
    for y_new in (-1.0, loc, loc + 0.2, 2.0):

        def f(s2, y_new=y_new):
            return stats.norm.pdf(y_new, loc, math.sqrt(s2 * h)) * stats.invgamma.pdf(
                s2, a_n, scale=b_n
            )

        split = b_n / (a_n + 1.0)
        ref = integrate.quad(f, 0.0, split, **QUAD)[0] + integrate.quad(f, split, np.inf, **QUAD)[0]
        got = math.exp(float(pred.logpdf([y_new], row)[0]))
        assert got == pytest.approx(ref, rel=_tol(v_n))
    # Variance of the t: scale^2 2a/(2a - 2) = b/(a - 1) (1 + phi^T V_n phi).
    assert pred.var(row)[0] == pytest.approx(b_n / (a_n - 1) * h, rel=_tol(v_n))
    assert pred.scale(row)[0] ** 2 * pred.df / (pred.df - 2) == pytest.approx(
        pred.var(row)[0], rel=RTOL
    )


def test_predictive_needs_new_inputs(data):
    phi, y = data
    pred = lrn.solve(phi=phi, y=y, **PRIOR).predictive
    with pytest.raises(TypeError):
        pred.mean()


# ---------------------------------------------------------------- 6. mode


def test_mode_maximises_logpdf(rng):
    # d = 2 (a straight line), so Nelder-Mead searches 3 coordinates.
    x, y = lr.sinusoid(rng, n=12)
    phi = lr.design_matrix(x=x, degree=1)[0]
    post = lrn.solve(phi=phi, y=y, **PRIOR).posterior
    np.testing.assert_array_equal(post.mode, np.append(post.loc, post.beta / (post.alpha + 2.0)))
    start = post.mode * np.array([1.2, 0.8, 0.6])
    res = optimize.minimize(
        lambda t: -float(post.logpdf(t)),
        start,
        method="Nelder-Mead",
        options={"xatol": 1e-11, "fatol": 1e-14, "maxiter": 20000},
    )
    assert res.success
    np.testing.assert_allclose(post.mode, res.x, rtol=1e-6)


# ---------------------------------------------------------------- 7. bad input


@pytest.mark.parametrize("name", ["alpha0", "beta0", "prior_scale"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_hyperparameter_raises(data, name, value):
    phi, y = data
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        lrn.solve(phi=phi, y=y, **{**PRIOR, name: value})


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (
            dict(prior_cov=np.array([[1.0, 2.0], [2.0, 1.0]])),
            r"\bprior_cov\b must be positive definite",
        ),
        (
            dict(prior_scale=1.0, prior_cov=np.eye(2)),
            r"exactly one of prior_scale or prior_cov, got both",
        ),
        (dict(), r"exactly one of prior_scale or prior_cov, got neither"),
    ],
)
def test_bad_prior_raises(kwargs, pattern):
    phi = lr.design_matrix(x=np.linspace(0, 1, 5), degree=1)[0]
    with pytest.raises(ValueError, match=pattern):
        lrn.solve(phi=phi, y=np.zeros(5), alpha0=1.0, beta0=1.0, **kwargs)


@pytest.mark.parametrize(
    ("phi", "y", "pattern"),
    [
        (np.ones((3, 2)), [0.0, np.inf, 1.0], r"y\[1\] is inf;"),
        (
            np.ones((3, 2)),
            [0.0, 1.0, 2.0, 3.0],
            r"\by\b must have one value per row of phi \(3\), got 4",
        ),
        (np.array([[np.nan, 0.0]]), [0.0], r"phi\[0, 0\] is nan;"),
    ],
)
def test_bad_data_raises(phi, y, pattern):
    with pytest.raises(ValueError, match=pattern):
        lrn.solve(phi=phi, y=np.asarray(y, dtype=float), **PRIOR)


# ---------------------------------------------------------------- 8. simulation


def test_simulate_shapes(rng):
    phi = lr.design_matrix(x=np.linspace(0.0, 1.0, 30), degree=2)[0]
    theta, y = lrn.simulate(rng, phi=phi, **PRIOR)
    assert theta.shape == (4,) and theta[3] > 0
    assert y.shape == (30,)
    lrn.solve(phi=phi, y=y, **PRIOR)


def test_simulate_draws_from_the_prior_predictive(rng):
    # y ~ t_{2 alpha0}(0, beta0/alpha0 (I + s^2 Phi Phi^T)): covariance
    # beta0/(alpha0 - 1) (I + s^2 Phi Phi^T).  alpha0 = 6 keeps the eighth moments
    # the covariance SE needs.  2 means + 3 covariance entries + 6 CDF points at
    # 5.7e-7: false-alarm rate below 7e-6.
    phi = np.array([[1.0, 0.5], [1.0, -1.0]])
    alpha0, beta0, scale = 6.0, 2.0, 1.5
    shape = beta0 / alpha0 * (np.eye(2) + scale**2 * phi @ phi.T)
    n = 20_000
    ys = np.array(
        [
            lrn.simulate(rng, phi=phi, alpha0=alpha0, beta0=beta0, prior_scale=scale)[1]
            for _ in range(n)
        ]
    )
    marg = [stats.t(2 * alpha0, scale=math.sqrt(shape[i, i])) for i in range(2)]
    z = sampler_z_scores(ys, mean=np.zeros(2), cov=shape * alpha0 / (alpha0 - 1), marginals=marg)
    assert max(abs(v) for v in z.values()) < Z_MAX, z
