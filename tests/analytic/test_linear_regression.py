"""Tests for analytic.linear_regression: Gaussian prior on the weights, known noise sd.

References are independent of the module: numpy.linalg.lstsq and a QR solve
for least squares, scikit-learn's Ridge for the MAP, the gain (Kalman) form
of the posterior and a linear-kernel Gaussian process for the predictive
(n x n solves with scipy.linalg, a different algorithm from the module's
d x d precision form), the evidence as one n-dimensional
scipy.stats.multivariate_normal density, numpy.vander for polynomial
features, the eigenvalue formula of Bishop (2006, eq. 3.91), and
analytic.normal_known_variance for the one-column special case.  Exact
quantities are compared at ~1e-10 relative; where a reference solves normal
equations the tolerance is ``C cond eps`` with the condition number computed
in the test.

The identities every conjugate topic shares (no data = prior, sequential =
batch, the evidence chain rule, merging statistics, flat prior = MLE, the
sampler's moments) are stated once in tests/analytic/test_conjugate_identities.py.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import linalg, stats
from sklearn.linear_model import Ridge

from analytic import ExactAnswer, ExactPosterior
from analytic import linear_regression as lr
from analytic import normal_known_variance as nkv
from tests.analytic.reference import N_DRAWS, RTOL, Z_MAX, sampler_z_scores

EPS = np.finfo(float).eps
N, DEGREE = 25, 3
NOISE_SD, PRIOR_SD = 0.3, 2.0  # sd != var for both
PRIOR = dict(noise_sd=NOISE_SD, prior_sd=PRIOR_SD)
# A general prior: non-zero mean, correlated covariance (diagonally dominant, so
# positive definite).
M0 = np.array([0.5, -1.0, 0.3, 0.2])
S0 = np.array(
    [[2.0, 0.3, 0.0, -0.2], [0.3, 1.5, 0.4, 0.0], [0.0, 0.4, 3.0, 0.5], [-0.2, 0.0, 0.5, 1.0]]
)
GENERAL = dict(noise_sd=NOISE_SD, prior_mean=M0, prior_cov=S0)


@pytest.fixture
def data(rng) -> tuple[np.ndarray, np.ndarray]:
    x, y = lr.sinusoid(rng, n=N, noise_sd=NOISE_SD)
    return lr.design_matrix(x=x, degree=DEGREE)[0], y


@pytest.fixture
def grid() -> np.ndarray:
    return lr.design_matrix(x=np.linspace(-0.2, 1.2, 7), degree=DEGREE)[0]


# ---------------------------------------------------------------- helpers


def _gain_form(phi, y, m0, s0, noise_sd):
    """Posterior by the gain (Kalman) form, an n x n solve (Bishop 2006, eq. 2.116 with 2.113-2.115):

    C = s^2 I + Phi S0 Phi^T,  m_N = m0 + S0 Phi^T C^-1 (y - Phi m0),
    S_N = S0 - S0 Phi^T C^-1 Phi S0.
    """
    c = noise_sd**2 * np.eye(phi.shape[0]) + phi @ s0 @ phi.T
    k = linalg.solve(c, phi @ s0, assume_a="pos").T  # S0 Phi^T C^-1
    return m0 + k @ (y - phi @ m0), s0 - k @ phi @ s0


def _tol(matrix) -> float:
    """Relative agreement of two stable solves of a system with this matrix: 100 cond eps."""
    return max(RTOL, 100.0 * float(np.linalg.cond(matrix)) * EPS)


# ---------------------------------------------------------------- 1. design matrix


def test_polynomial_design_matches_vander(rng):
    x = rng.uniform(-2.0, 2.0, size=9)
    phi, names = lr.design_matrix(x=x, degree=4)
    # x ** k (pow) against vander's repeated products: a few ulp apart.
    np.testing.assert_allclose(phi, np.vander(x, 5, increasing=True), rtol=8 * EPS)
    assert names == ("1", "x", "x^2", "x^3", "x^4")
    phi, names = lr.design_matrix(x=x, degree=4, intercept=False, names=["t"])
    np.testing.assert_allclose(phi, np.vander(x, 5, increasing=True)[:, 1:], rtol=8 * EPS)
    assert names == ("t", "t^2", "t^3", "t^4")
    phi, names = lr.design_matrix(x=x[:, None], degree=0)
    np.testing.assert_array_equal(phi, np.ones((9, 1)))
    assert names == ("1",)


def test_column_design_prepends_intercept(rng):
    x = rng.normal(size=(6, 2))
    phi, names = lr.design_matrix(x=x)
    np.testing.assert_array_equal(phi, np.column_stack([np.ones(6), x]))
    assert names == ("1", "x0", "x1")
    phi, names = lr.design_matrix(x=x, intercept=False, names=("age", "dose"))
    np.testing.assert_array_equal(phi, x)
    assert names == ("age", "dose")


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (dict(x=np.arange(3.0), degree=-1), r"\bdegree\b.*integer >= 0.*-1"),
        (dict(x=np.arange(3.0), degree=2.5), r"\bdegree\b.*integer >= 0.*2\.5"),
        (dict(x=np.arange(3.0), degree=np.nan), r"\bdegree\b.*nan"),
        (dict(x=np.arange(3.0), degree=True), r"\bdegree\b.*True"),
        (dict(x=np.ones((3, 2)), degree=2), r"\bdegree\b.*one input column.*2 columns"),
        (dict(x=np.arange(3.0), degree=0, intercept=False), r"\bdegree\b.*>= 1.*intercept"),
        (dict(x=np.ones((3, 2)), names=["a"]), r"\bnames\b.*\(2\).*1"),
        (dict(x=np.array([0.0, np.nan])), r"x\[1\] is nan;"),
        (dict(x=np.array([[0.0, 1.0], [np.inf, 2.0]])), r"x\[1, 0\] is inf;"),
        (dict(x=np.ones((2, 2, 2))), r"x must .*shape \(2, 2, 2\)"),
        (dict(x=np.ones((3, 0)), intercept=False), r"at least one feature"),
    ],
)
def test_bad_design_input_raises(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        lr.design_matrix(**kwargs)


# ---------------------------------------------------------------- 2. statistics


def test_chunked_stats_equal_in_memory_stats(data):
    phi, y = data
    parts = [(0, 7), (7, 7), (7, 19), (19, N)]
    merged = lr.sufficient_stats(phi=phi[:0], y=y[:0])
    for a, b in parts:
        merged = merged + lr.sufficient_stats(phi=phi[a:b], y=y[a:b])
    # Reference sums by hand; a different summation order moves each entry by at
    # most ~n eps times the sum of the absolute terms.
    assert merged.n == N
    for got, ref, bound in [
        (merged.gram, phi.T @ phi, np.abs(phi).T @ np.abs(phi)),
        (merged.phi_t_y, phi.T @ y, np.abs(phi).T @ np.abs(y)),
        (merged.y_t_y, float(np.sum(y * y)), float(np.sum(y * y))),
    ]:
        assert np.all(np.abs(got - ref) <= 2 * N * EPS * bound)


def test_solve_stats_equals_solve(data):
    phi, y = data
    suff = lr.sufficient_stats(phi=phi[:10], y=y[:10]) + lr.sufficient_stats(phi=phi[10:], y=y[10:])
    for prior in (PRIOR, GENERAL):
        a, b = lr.solve(phi=phi, y=y, **prior), lr.solve_stats(suff=suff, **prior)
        np.testing.assert_allclose(b.posterior.mean, a.posterior.mean, rtol=RTOL)
        np.testing.assert_allclose(b.posterior.cov, a.posterior.cov, rtol=RTOL)
        assert b.log_evidence == pytest.approx(a.log_evidence, rel=RTOL)
        # Normal equations against least squares: error ~ cond(Phi^T Phi) eps.
        np.testing.assert_allclose(b.mle, a.mle, rtol=_tol(phi.T @ phi))
    f = lr.fit_stats(suff=suff, **PRIOR)
    assert f.mle.rank == 4 and f.mle.unique
    assert f.mle.noise_var == pytest.approx(lr.mle(phi=phi, y=y).noise_var, rel=_tol(phi.T @ phi))


def test_statistics_must_be_stats():
    with pytest.raises(TypeError, match=r"suff must be a linear_regression\.Stats, got tuple"):
        lr.update(suff=(3, np.eye(2)), noise_sd=1.0, prior_mean=0.0, prior_cov=np.eye(2))


def test_stats_of_different_widths_do_not_add(data):
    phi, y = data
    with pytest.raises(ValueError, match="4 and 2 features"):
        lr.sufficient_stats(phi=phi, y=y) + lr.sufficient_stats(phi=phi[:, :2], y=y)


# ---------------------------------------------------------------- 3. MLE


def test_mle_matches_lstsq_and_qr(data):
    phi, y = data
    got = lr.mle(phi=phi, y=y)
    w_lstsq, rss, rank, _ = np.linalg.lstsq(phi, y, rcond=None)
    q, r = linalg.qr(phi, mode="economic")
    w_qr = linalg.solve_triangular(r, q.T @ y)
    tol = max(RTOL, 100 * float(np.linalg.cond(phi)) * EPS)
    np.testing.assert_allclose(got.w, w_lstsq, rtol=tol)
    np.testing.assert_allclose(got.w, w_qr, rtol=tol)
    assert got.rank == rank == 4 and got.unique is True
    resid = y - phi @ w_qr
    assert got.rss == pytest.approx(float(resid @ resid), rel=RTOL)
    assert got.rss == pytest.approx(float(rss[0]), rel=RTOL)
    assert got.noise_var == pytest.approx(float(resid @ resid) / N, rel=RTOL)  # Bishop eq. 3.21
    np.testing.assert_allclose(lr.solve(phi=phi, y=y, **PRIOR).mle, w_qr, rtol=tol)


def test_duplicated_column_is_not_unique_but_the_posterior_works(data):
    phi, y = data
    dup = np.column_stack([phi, phi[:, 1]])
    got = lr.mle(phi=dup, y=y)
    assert (got.w, got.noise_var, got.rank, got.unique) == (None, None, 4, False)
    # The minimum RSS is that of the full-rank design without the copy.
    assert got.rss == pytest.approx(lr.mle(phi=phi, y=y).rss, rel=RTOL)
    assert lr.fit_stats(suff=lr.sufficient_stats(phi=dup, y=y), **PRIOR).mle.unique is False
    fit = lr.fit(phi=dup, y=y, **PRIOR)
    assert fit.answer().mle is None
    lam = NOISE_SD**2 / PRIOR_SD**2
    ref = Ridge(alpha=lam, fit_intercept=False, solver="cholesky").fit(dup, y).coef_
    tol = _tol(dup.T @ dup + lam * np.eye(5))
    np.testing.assert_allclose(fit.map, ref, rtol=tol)
    # The isotropic prior cannot tell the two copies apart: it splits their weight equally.
    assert fit.map[1] == pytest.approx(fit.map[4], rel=tol)
    assert np.all(np.linalg.eigvalsh(fit.posterior.cov) > 0)


def test_more_features_than_rows(rng):
    x = rng.uniform(0.0, 1.0, size=3)
    y = rng.normal(size=3)
    phi = lr.design_matrix(x=x, degree=5)[0]  # 3 x 6
    got = lr.mle(phi=phi, y=y)
    assert (got.w, got.noise_var, got.rank, got.unique) == (None, None, 3, False)
    assert got.rss == pytest.approx(0.0, abs=1e-20)  # interpolation
    lam = NOISE_SD**2 / PRIOR_SD**2
    fit = lr.fit(phi=phi, y=y, **PRIOR)
    np.testing.assert_allclose(
        fit.map, lr.ridge(phi=phi, y=y, lam=lam), rtol=_tol(phi.T @ phi + lam * np.eye(6))
    )
    c = NOISE_SD**2 * np.eye(3) + PRIOR_SD**2 * phi @ phi.T
    ref = stats.multivariate_normal.logpdf(y, np.zeros(3), c)
    assert fit.log_evidence == pytest.approx(ref, rel=RTOL)


# ---------------------------------------------------------------- 4. MAP


def test_map_equals_ridge(data):
    phi, y = data
    fit = lr.fit(phi=phi, y=y, **PRIOR)
    lam = NOISE_SD**2 / PRIOR_SD**2
    assert fit.ridge_lambda == pytest.approx(lam, rel=1e-15)
    # scikit-learn solves (Phi^T Phi + lam I) w = Phi^T y by Cholesky; the
    # module's ridge() is a least-squares solve of the augmented system.
    tol = _tol(phi.T @ phi + lam * np.eye(4))
    sk = Ridge(alpha=lam, fit_intercept=False, solver="cholesky").fit(phi, y).coef_
    np.testing.assert_allclose(fit.map, sk, rtol=tol)
    np.testing.assert_allclose(fit.map, lr.ridge(phi=phi, y=y, lam=lam), rtol=tol)
    np.testing.assert_array_equal(fit.map, fit.posterior.mode)
    assert lr.fit(phi=phi, y=y, **GENERAL).ridge_lambda is None


# ---------------------------------------------------------------- 5. posterior


@pytest.mark.parametrize("prior", [PRIOR, GENERAL], ids=["isotropic", "general"])
def test_posterior_matches_gain_form(data, prior):
    phi, y = data
    m0 = prior.get("prior_mean", np.zeros(4))
    s0 = prior.get("prior_cov", PRIOR_SD**2 * np.eye(4))
    m_ref, s_ref = _gain_form(phi, y, m0, s0, NOISE_SD)
    post = lr.solve(phi=phi, y=y, **prior).posterior
    tol = _tol(s_ref)
    np.testing.assert_allclose(post.mean, m_ref, rtol=tol)
    np.testing.assert_allclose(post.cov, s_ref, rtol=tol, atol=tol * np.abs(s_ref).max())
    q = np.array([0.05, 0.5, 0.95])
    for i in range(4):
        ref = stats.norm(m_ref[i], math.sqrt(s_ref[i, i]))
        np.testing.assert_allclose(post.marginal(i).ppf(q), ref.ppf(q), rtol=tol)


def test_bayes_rule_holds_pointwise(data):
    """log p(w | D) + log p(D) = log p(w) + log p(D | w), with scipy densities on the right."""
    phi, y = data
    ans = lr.solve(phi=phi, y=y, **GENERAL)
    for w in (M0, ans.posterior.mean, ans.posterior.mean + 0.1, np.array([0.0, 5.0, -9.0, 4.0])):
        lhs = float(ans.posterior.logpdf(w)) + ans.log_evidence
        rhs = (
            stats.multivariate_normal.logpdf(w, M0, S0)
            + stats.norm.logpdf(y, phi @ w, NOISE_SD).sum()
        )
        assert lhs == pytest.approx(rhs, rel=RTOL)


def test_satisfies_protocol(data):
    phi, y = data
    ans = lr.solve(phi=phi, y=y, **PRIOR)
    assert isinstance(ans, ExactAnswer)
    post = ans.posterior
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("w[0]", "w[1]", "w[2]", "w[3]")
    assert post.free == (0, 1, 2, 3)
    assert post.is_gaussian is True and post.mode_interior is True
    assert post.moments_below == np.inf
    np.testing.assert_array_equal(post.mode, post.mean)


def test_logpdf_matches_scipy_and_broadcasts(data, rng):
    phi, y = data
    post = lr.solve(phi=phi, y=y, **GENERAL).posterior
    pts = post.mean + rng.normal(size=(2, 3, 4))
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    ref = stats.multivariate_normal(post.mean, post.cov).logpdf(pts)
    np.testing.assert_allclose(out, ref, rtol=RTOL)


# ---------------------------------------------------------------- 6. evidence


@pytest.mark.parametrize("prior", [PRIOR, GENERAL], ids=["isotropic", "general"])
def test_log_evidence_matches_multivariate_normal(data, prior):
    # Marginally y ~ N(Phi m0, s^2 I + Phi S0 Phi^T) (Bishop 2006, eq. 2.115).
    phi, y = data
    m0 = prior.get("prior_mean", np.zeros(4))
    s0 = prior.get("prior_cov", PRIOR_SD**2 * np.eye(4))
    ref = stats.multivariate_normal.logpdf(y, phi @ m0, NOISE_SD**2 * np.eye(N) + phi @ s0 @ phi.T)
    assert lr.solve(phi=phi, y=y, **prior).log_evidence == pytest.approx(ref, rel=RTOL)
    got = lr.log_evidence(
        suff=lr.sufficient_stats(phi=phi, y=y), noise_sd=NOISE_SD, prior_mean=m0, prior_cov=s0
    )
    assert got == pytest.approx(ref, rel=RTOL)


def test_one_constant_feature_is_normal_known_variance(rng):
    # Phi = 1 (n x 1): y_i = w + noise, the model of analytic.normal_known_variance with mu = w.
    x = rng.normal(0.4, NOISE_SD, size=15)
    phi = lr.design_matrix(x=np.zeros(15), degree=0)[0]
    got = lr.solve(phi=phi, y=x, noise_sd=NOISE_SD, prior_sd=PRIOR_SD, prior_mean=1.0)
    ref = nkv.solve(x=x, prior_mean=1.0, prior_sd=PRIOR_SD, noise_sd=NOISE_SD)
    np.testing.assert_allclose(got.posterior.mean, ref.posterior.mean, rtol=RTOL)
    np.testing.assert_allclose(got.posterior.cov, ref.posterior.cov, rtol=RTOL)
    assert got.log_evidence == pytest.approx(ref.log_evidence, rel=RTOL)
    np.testing.assert_allclose(got.mle, ref.mle, rtol=RTOL)
    mean, var = got.predictive.at(np.ones((1, 1)))
    assert mean[0] == pytest.approx(ref.predictive.mean(), rel=RTOL)
    assert var[0] == pytest.approx(ref.predictive.var(), rel=RTOL)


# ---------------------------------------------------------------- 7. identities


def test_no_data_fit_has_no_effective_parameters_and_no_mle():
    # (The posterior is the prior: tests/analytic/test_conjugate_identities.py.)
    ans = lr.fit(phi=np.empty((0, 4)), y=np.empty(0), **GENERAL)
    assert ans.effective_parameters == 0.0
    assert ans.mle.w is None and ans.answer().mle is None and ans.mle.rank == 0


def test_flat_prior_limit_gives_the_least_squares_covariance(data):
    # prior_sd = 1e8 adds precision 1e-16 I against Phi^T Phi / s^2 (eigenvalues
    # >= ~1e-2 here): the posterior is N(w_hat, s^2 (Phi^T Phi)^-1) up to the
    # normal equations' cond(Phi^T Phi) eps (its mode = w_hat:
    # tests/analytic/test_conjugate_identities.py).
    phi, y = data
    fit = lr.fit(phi=phi, y=y, noise_sd=NOISE_SD, prior_sd=1e8, prior_mean=5.0)
    gram = phi.T @ phi
    tol = _tol(gram)
    np.testing.assert_allclose(
        fit.posterior.cov, NOISE_SD**2 * linalg.solve(gram, np.eye(4)), rtol=tol
    )


# ---------------------------------------------------------------- 8. effective parameters


def test_effective_parameters_match_eigenvalue_formula(data):
    # Bishop 2006, eq. 3.91: gamma = sum_i lambda_i / (alpha + lambda_i), lambda_i
    # the eigenvalues of beta Phi^T Phi, alpha = 1 / prior_sd^2, beta = 1 / noise_sd^2.
    phi, y = data
    lam = np.linalg.eigvalsh(phi.T @ phi / NOISE_SD**2)
    ref = float(np.sum(lam / (1.0 / PRIOR_SD**2 + lam)))
    suff = lr.sufficient_stats(phi=phi, y=y)
    got = lr.effective_parameters(suff=suff, noise_sd=NOISE_SD, prior_cov=PRIOR_SD**2 * np.eye(4))
    assert got == pytest.approx(ref, rel=RTOL)
    assert lr.fit(phi=phi, y=y, **PRIOR).effective_parameters == pytest.approx(ref, rel=RTOL)
    assert 0.0 < got < 4.0


def test_effective_parameters_general_prior(data):
    # gamma = d - trace(S_N S0^-1), with S_N from the gain form.
    phi, y = data
    _, s_n = _gain_form(phi, y, M0, S0, NOISE_SD)
    ref = 4.0 - float(np.trace(linalg.solve(S0, s_n.T).T))  # S_N S0^-1 = (S0^-1 S_N^T)^T
    got = lr.effective_parameters(
        suff=lr.sufficient_stats(phi=phi, y=y), noise_sd=NOISE_SD, prior_cov=S0
    )
    assert got == pytest.approx(ref, rel=_tol(s_n))


def test_effective_parameters_limits(data):
    phi, y = data
    suff = lr.sufficient_stats(phi=phi, y=y)
    lam = np.linalg.eigvalsh(phi.T @ phi / NOISE_SD**2)
    # d - gamma = sum alpha / (alpha + lambda_i) <= d alpha / lambda_min, plus the
    # rounding of trace(P^-1 gram) at P ~ gram: ~d cond(gram) eps.
    alpha = 1e-16
    wide = lr.effective_parameters(suff=suff, noise_sd=NOISE_SD, prior_cov=np.eye(4) / alpha)
    assert 4.0 - wide <= 4 * alpha / lam.min() + 4 * (lam.max() / lam.min()) * EPS
    assert wide <= 4.0 + 4 * (lam.max() / lam.min()) * EPS
    # gamma <= sum lambda_i / alpha.
    alpha = 1e16
    narrow = lr.effective_parameters(suff=suff, noise_sd=NOISE_SD, prior_cov=np.eye(4) / alpha)
    assert 0.0 <= narrow <= lam.sum() / alpha * (1 + 1e-12)


# ---------------------------------------------------------------- 9. predictive


def test_predictive_matches_closed_form(data, grid):
    # Bishop 2006, eqs. 3.58-3.59: mean phi^T m_N, var s^2 + phi^T S_N phi.
    phi, y = data
    m_n, s_n = _gain_form(phi, y, M0, S0, NOISE_SD)
    pred = lr.fit(phi=phi, y=y, **GENERAL).predictive
    mean, var = pred.at(grid)
    tol = _tol(s_n)
    np.testing.assert_allclose(mean, grid @ m_n, rtol=tol)
    np.testing.assert_allclose(
        var, NOISE_SD**2 + np.einsum("ij,jk,ik->i", grid, s_n, grid), rtol=tol
    )
    np.testing.assert_allclose(np.diag(pred.cov(grid)), var, rtol=RTOL)
    np.testing.assert_allclose(
        pred.logpdf(np.zeros(7), grid), stats.norm.logpdf(0.0, mean, np.sqrt(var)), rtol=RTOL
    )


def test_linear_kernel_gp_equals_bayesian_linear_regression(data, grid):
    """A GP with mean phi(x)^T m0 and kernel phi(x)^T S0 phi(x') has the same joint
    predictive over a grid (Rasmussen & Williams 2006, eqs. 2.11-2.12, 2.22-2.24)."""
    phi, y = data
    k, k_star, k_ss = phi @ S0 @ phi.T, phi @ S0 @ grid.T, grid @ S0 @ grid.T
    fac = linalg.cho_factor(k + NOISE_SD**2 * np.eye(N))
    mean = grid @ M0 + k_star.T @ linalg.cho_solve(fac, y - phi @ M0)
    cov = k_ss - k_star.T @ linalg.cho_solve(fac, k_star) + NOISE_SD**2 * np.eye(7)
    pred = lr.fit(phi=phi, y=y, **GENERAL).predictive
    tol = _tol(k + NOISE_SD**2 * np.eye(N))
    np.testing.assert_allclose(pred.mean(grid), mean, rtol=tol)
    np.testing.assert_allclose(pred.cov(grid), cov, rtol=tol, atol=tol * np.abs(cov).max())


def test_predictive_needs_new_inputs(data):
    """The compare layer's summary calls predictive.mean() and catches TypeError."""
    phi, y = data
    pred = lr.solve(phi=phi, y=y, **PRIOR).predictive
    with pytest.raises(TypeError):
        pred.mean()
    with pytest.raises(ValueError, match=r"phi_new must have 4 columns.*\(3, 2\)"):
        pred.at(np.ones((3, 2)))


# ---------------------------------------------------------------- 10. sampler


def test_sampler_check_detects_planted_bug(data, rng):
    """Power: using the precision factor L (L L^T = S_N^-1) as if it were the
    covariance's gives covariance S_N^-1, off by orders of magnitude."""
    phi, y = data
    post = lr.solve(phi=phi, y=y, **GENERAL).posterior
    wrong = post.mean + rng.standard_normal((N_DRAWS, 4)) @ post.prec_chol.T
    z = sampler_z_scores(
        wrong, mean=post.mean, cov=post.cov, marginals=[post.marginal(i) for i in range(4)]
    )
    assert max(abs(v) for v in z.values()) > Z_MAX


# ---------------------------------------------------------------- 11. bad input


@pytest.mark.parametrize("name", ["noise_sd", "prior_sd"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_bad_scale_raises(data, name, value):
    phi, y = data
    with pytest.raises(ValueError, match=rf"\b{name}\b.*{re.escape(repr(value))}"):
        lr.solve(phi=phi, y=y, **{**PRIOR, name: value})


@pytest.mark.parametrize(
    ("prior_cov", "pattern"),
    [
        (
            np.array([[1.0, 2.0], [2.0, 1.0]]),
            r"\bprior_cov\b must be positive definite.*\[\[1\.0, 2\.0\]",
        ),
        (np.array([[1.0, 0.5], [0.0, 1.0]]), r"\bprior_cov\b must be symmetric"),
        (np.eye(3), r"\bprior_cov\b must be an array of shape \(2, 2\), got shape \(3, 3\)"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), r"\bprior_cov\b must be finite"),
    ],
)
def test_bad_prior_cov_raises(prior_cov, pattern):
    phi = lr.design_matrix(x=np.linspace(0, 1, 5), degree=1)[0]
    with pytest.raises(ValueError, match=pattern):
        lr.solve(phi=phi, y=np.zeros(5), noise_sd=1.0, prior_cov=prior_cov)
    with pytest.raises(ValueError, match=pattern):
        lr.update(
            suff=lr.sufficient_stats(phi=phi, y=np.zeros(5)),
            noise_sd=1.0,
            prior_mean=0.0,
            prior_cov=prior_cov,
        )


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (
            dict(prior_sd=1.0, prior_cov=np.eye(2)),
            r"exactly one of prior_sd or prior_cov, got both",
        ),
        (dict(), r"exactly one of prior_sd or prior_cov, got neither"),
        (dict(prior_sd=1.0, prior_mean=[0.0, 1.0, 2.0]), r"\bprior_mean\b.*\(2,\).*\(3,\)"),
        (dict(prior_sd=1.0, prior_mean=np.inf), r"\bprior_mean\b must be finite"),
    ],
)
def test_bad_prior_arguments_raise(kwargs, pattern):
    phi = lr.design_matrix(x=np.linspace(0, 1, 5), degree=1)[0]
    with pytest.raises(ValueError, match=pattern):
        lr.solve(phi=phi, y=np.zeros(5), noise_sd=1.0, **kwargs)


@pytest.mark.parametrize(
    ("phi", "y", "pattern"),
    [
        (np.ones((3, 2)), [0.0, np.nan, 1.0], r"y\[1\] is nan;"),
        (np.ones((3, 2)), [0.0, 1.0], r"\by\b must have one value per row of phi \(3\), got 2"),
        (np.array([[1.0, 0.0], [1.0, np.inf]]), [0.0, 1.0], r"phi\[1, 1\] is inf;"),
        (np.ones(3), [0.0, 1.0, 2.0], r"\bphi\b must be a 2-D array.*shape \(3,\)"),
        (np.ones((3, 0)), [0.0, 1.0, 2.0], r"\bphi\b must have at least one column"),
    ],
)
def test_bad_data_raises(phi, y, pattern):
    with pytest.raises(ValueError, match=pattern):
        lr.solve(phi=phi, y=np.asarray(y, dtype=float), **PRIOR)


@pytest.mark.parametrize("lam", [0.0, -1.0, np.nan])
def test_bad_ridge_lambda_raises(data, lam):
    phi, y = data
    with pytest.raises(ValueError, match=rf"\blam\b.*{re.escape(repr(lam))}"):
        lr.ridge(phi=phi, y=y, lam=lam)


# ---------------------------------------------------------------- 12. simulation


def test_sinusoid_and_simulate(rng):
    x, y = lr.sinusoid(rng, n=30, noise_sd=0.2)
    assert x.shape == y.shape == (30,)
    assert np.all(np.diff(x) >= 0) and x[0] >= 0.0 and x[-1] <= 1.0
    phi = lr.design_matrix(x=x, degree=DEGREE)[0]
    w, y_sim = lr.simulate(rng, phi=phi, **PRIOR)
    assert w.shape == (4,) and y_sim.shape == (30,)
    lr.solve(phi=phi, y=y_sim, **PRIOR)


def test_simulate_draws_from_the_prior_predictive(rng):
    # y ~ N(0, s^2 I + t^2 Phi Phi^T) marginally.  2 means + 3 covariance
    # entries at 5.7e-7 each: false-alarm rate below 3e-6.
    phi = np.array([[1.0, 0.5], [1.0, -1.0]])
    cov = NOISE_SD**2 * np.eye(2) + PRIOR_SD**2 * phi @ phi.T
    n = 20_000
    ys = np.array([lr.simulate(rng, phi=phi, **PRIOR)[1] for _ in range(n)])
    z = sampler_z_scores(
        ys,
        mean=np.zeros(2),
        cov=cov,
        marginals=[stats.norm(0.0, math.sqrt(cov[i, i])) for i in range(2)],
    )
    assert max(abs(v) for v in z.values()) < Z_MAX, z
