"""Tests for analytic.gaussian_classifier: MLE (LDA/QDA), boundaries, the conjugate posterior.

References are independent of the module: scikit-learn's
LinearDiscriminantAnalysis and QuadraticDiscriminantAnalysis (version 1.9),
scipy.stats.multivariate_t / multivariate_normal, and the mixture module's
complete-data posterior computed from the raw points.  Exact quantities are
compared at ~1e-10 relative, scikit-learn's at 1e-8 (it solves by lstsq /
eigendecomposition / SVD, so agreement is to a few hundred ulps of the
condition number, not to the last bit).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from sklearn.datasets import load_iris, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA

from analytic import ExactAnswer, ExactPosterior
from analytic import gaussian_classifier as gc
from analytic import gaussian_mixture as gm

SK_RTOL = 1e-8
RTOL = 1e-10
DATASETS = {"iris": load_iris, "wine": load_wine}


@pytest.fixture(scope="module", params=list(DATASETS))
def xy(request):
    return DATASETS[request.param](return_X_y=True)


def _close(a, b, rtol=SK_RTOL):
    """|a - b| <= rtol * max|b| (entries of one matrix share a scale)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    assert np.max(np.abs(a - b)) <= rtol * max(np.max(np.abs(b)), 1e-300), np.max(np.abs(a - b))


# ---------------------------------------------------------------- MLE against scikit-learn


def test_lda_estimates_match_scikit_learn(xy):
    """LDA(solver='lsqr', store_covariance=True): priors_ = N_k/N, means_ = xbar_k and
    covariance_ = sum_k (N_k/N) * (S_k/N_k) = sum_k S_k / N, the pooled MLE with divisor
    N (not N - K).  Checked: the unbiased divisor would differ by N/(N - K) ~ 2%."""
    x, y = xy
    fit = gc.fit(x=x, labels=y, n_classes=3)
    sk = LDA(solver="lsqr", store_covariance=True).fit(x, y)
    _close(fit.priors, sk.priors_)
    _close(fit.means, sk.means_)
    _close(fit.pooled_covariance, sk.covariance_)
    n = len(y)
    assert np.max(np.abs(fit.pooled_covariance * n / (n - 3) - sk.covariance_)) > 1e-4


def test_qda_estimates_match_scikit_learn(xy):
    """QDA(reg_param=0, store_covariance=True), scikit-learn 1.9: covariance_[k] is the
    per-class MLE S_k / N_k (the svd solver's V (S^2/n_k) V^T; the docstring says
    "maximum likelihood (biased)").  The issue's claim of an N_k - 1 divisor held for
    older releases; the N_k - 1 version is checked to differ, so the test would notice
    a change back."""
    x, y = xy
    fit = gc.fit(x=x, labels=y, n_classes=3)
    sk = QDA(reg_param=0.0, store_covariance=True).fit(x, y)
    _close(fit.means, sk.means_)
    _close(fit.priors, sk.priors_)
    for k in range(3):
        _close(fit.covariances[k], sk.covariance_[k])
        nk = fit.counts[k]
        assert np.max(np.abs(fit.covariances[k] * nk / (nk - 1) - sk.covariance_[k])) > 1e-6


def test_lda_predict_proba_matches_scikit_learn(xy):
    """LDA.predict_proba = softmax(X coef_^T + intercept_) with coef_ = Sigma^-1 mu_k and
    intercept_ = -1/2 mu_k^T Sigma^-1 mu_k + log pi_k: our w_k, w_k0."""
    x, y = xy
    fit = gc.fit(x=x, labels=y, n_classes=3)
    lin = gc.linear_discriminant(
        priors=fit.priors, means=fit.means, covariance=fit.pooled_covariance
    )
    sk = LDA(solver="lsqr", store_covariance=True).fit(x, y)
    _close(lin.weights, sk.coef_)
    _close(lin.bias, sk.intercept_)
    np.testing.assert_allclose(np.exp(lin.log_proba(x)), sk.predict_proba(x), rtol=0, atol=SK_RTOL)


def test_qda_predict_proba_matches_scikit_learn(xy):
    """QDA.predict_proba with per-class MLE covariances = softmax of our a_k."""
    x, y = xy
    fit = gc.fit(x=x, labels=y, n_classes=3)
    quad = gc.quadratic_discriminant(
        priors=fit.priors, means=fit.means, covariances=fit.covariances
    )
    sk = QDA(reg_param=0.0, store_covariance=True).fit(x, y)
    np.testing.assert_allclose(np.exp(quad.log_proba(x)), sk.predict_proba(x), rtol=0, atol=SK_RTOL)


def test_quadratic_expanded_form_is_the_evaluated_one(xy):
    """a_k = x^T W_k x + w_k^T x + w_k0 (the course's form) equals the factored evaluation."""
    x, y = xy
    fit = gc.fit(x=x, labels=y, n_classes=3)
    quad = gc.quadratic_discriminant(
        priors=fit.priors, means=fit.means, covariances=fit.covariances
    )
    expanded = np.einsum("ni,kij,nj->nk", x, quad.quadratic, x) + x @ quad.weights.T + quad.bias
    # Cancellation in the expanded form: |x^T W x| ~ 1e6 on wine, so ~1e-9 absolute.
    scale = np.max(np.abs(np.einsum("ni,kij,nj->nk", x, quad.quadratic, x)))
    np.testing.assert_allclose(quad.activations(x), expanded, rtol=0, atol=1e-12 * scale)


def test_two_class_boundary_is_the_course_formula(rng):
    """P(C1|x) = sigmoid(w^T x + b), w = Sigma^-1 (mu1 - mu2),
    b = -1/2 mu1^T Sigma^-1 mu1 + 1/2 mu2^T Sigma^-1 mu2 + log(pi1/pi2); scikit-learn's
    binary LDA has coef_ = -w (it models class 1 = the second)."""
    x = rng.normal(size=(80, 3))
    y = (rng.random(80) < 0.3).astype(int)
    x[y == 1] += [1.0, -0.5, 2.0]
    fit = gc.fit(x=x, labels=y, n_classes=2)
    w, b = gc.linear_discriminant(
        priors=fit.priors, means=fit.means, covariance=fit.pooled_covariance
    ).two_class()
    sigma = fit.pooled_covariance
    mu1, mu2 = fit.means
    w_ref = np.linalg.solve(sigma, mu1 - mu2)
    b_ref = (
        -0.5 * mu1 @ np.linalg.solve(sigma, mu1)
        + 0.5 * mu2 @ np.linalg.solve(sigma, mu2)
        + np.log(fit.priors[0] / fit.priors[1])
    )
    np.testing.assert_allclose(w, w_ref, rtol=RTOL)
    assert b == pytest.approx(b_ref, rel=RTOL)
    sk = LDA(solver="lsqr").fit(x, y)
    np.testing.assert_allclose(special.expit(x @ w + b), sk.predict_proba(x)[:, 0], atol=1e-10)
    _close(-w, sk.coef_[0])


def test_statistics_merge_like_one_batch(rng):
    """Chunked sufficient statistics (Chan et al.) equal the batch ones."""
    x = rng.normal(size=(101, 3)) * [1.0, 10.0, 0.1] + 50.0
    y = rng.integers(0, 3, size=101)
    batch = gc.class_stats(x=x, labels=y, n_classes=3)
    a = gc.class_stats(x=x[:40], labels=y[:40], n_classes=3)
    b = gc.class_stats(x=x[40:], labels=y[40:], n_classes=3)
    merged = a.merge(b)
    np.testing.assert_array_equal(merged.counts, batch.counts)
    np.testing.assert_allclose(merged.means, batch.means, rtol=RTOL)
    np.testing.assert_allclose(merged.scatter, batch.scatter, rtol=1e-9)


# ---------------------------------------------------------------- the Bayesian version


def _prior(x):
    return gc.default_prior(x=x, alpha=1.5, kappa0=0.3, nu0=x.shape[1] + 3.0, cov_scale=0.2)


def test_posterior_is_the_mixture_complete_data_posterior(xy):
    """From sufficient statistics: the same posterior, evidence and MLE as the mixture's
    complete-data answer from the raw points; an ExactPosterior with class names."""
    x, y = xy
    p = _prior(x)
    ans = gc.answer(x=x, labels=y, n_classes=3, prior=p, classes=("a", "b", "c"))
    ref = gm.complete_data_answer(x=x, labels=y, prior=p, components=3)
    assert isinstance(ans, ExactAnswer) and isinstance(ans.posterior, ExactPosterior)
    np.testing.assert_allclose(ans.posterior.mean, ref.posterior.mean, rtol=RTOL)
    np.testing.assert_allclose(ans.posterior.cov, ref.posterior.cov, rtol=RTOL, atol=1e-300)
    np.testing.assert_allclose(ans.posterior.mode, ref.posterior.mode, rtol=RTOL)
    assert ans.log_evidence == pytest.approx(ref.log_evidence, rel=RTOL)
    np.testing.assert_allclose(ans.mle, ref.mle, rtol=1e-9)
    d = x.shape[1]
    assert len(ans.parameters) == 3 + 3 * d + 3 * d * d
    assert ans.parameters[0] == "pi[a]" and ans.parameters[3] == "mu[a,x0]"
    assert ans.parameters[3 + 3 * d + 1] == "Lambda[a,x0,x1]"


def test_no_data_gives_the_prior(rng):
    p = gc.default_prior(x=rng.normal(size=(10, 2)), alpha=2.0, kappa0=0.5, nu0=5.0)
    ans = gc.answer(x=np.zeros((0, 2)), labels=np.zeros(0, dtype=int), n_classes=2, prior=p)
    post = ans.posterior.inner
    np.testing.assert_array_equal(post.alpha, [2.0, 2.0])
    np.testing.assert_allclose(post.m, [p.m0, p.m0])
    np.testing.assert_allclose(post.psi, [p.psi0, p.psi0])
    assert ans.mle is None and ans.log_evidence == pytest.approx(0.0, abs=1e-12)


def test_predictive_class_probabilities_are_student_t(xy):
    """P(y=k|x,D) ∝ E[pi_k] multivariate_t(m_k, psi_k (kappa_k+1)/(kappa_k dof_k), dof_k)."""
    x, y = xy
    p = _prior(x)
    ans = gc.answer(x=x, labels=y, n_classes=3, prior=p)
    post = ans.posterior.inner
    d = x.shape[1]
    pts = x[::17]
    joint = np.empty((len(pts), 3))
    for k in range(3):
        dof = post.nu[k] - d + 1
        shape = post.psi[k] * (post.kappa[k] + 1) / (post.kappa[k] * dof)
        joint[:, k] = np.log(post.alpha[k] / post.alpha.sum()) + stats.multivariate_t(
            loc=post.m[k], shape=shape, df=dof
        ).logpdf(pts)
    ref = joint - special.logsumexp(joint, axis=1, keepdims=True)
    np.testing.assert_allclose(ans.predictive.log_proba(pts), ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        ans.predictive.logpdf(pts), special.logsumexp(joint, axis=1), rtol=1e-10
    )


def test_predictive_tends_to_the_qda_plug_in(rng):
    """With many points per class the Student-t predictive approaches QDA's plug-in."""
    n = 20_000
    y = rng.integers(0, 2, size=n)
    x = rng.normal(size=(n, 2)) * np.where(y[:, None] == 1, [1.0, 2.0], [0.5, 1.0]) + y[:, None]
    fit = gc.fit(x=x, labels=y, n_classes=2)
    quad = gc.quadratic_discriminant(
        priors=fit.priors, means=fit.means, covariances=fit.covariances
    )
    ans = gc.answer(x=x, labels=y, n_classes=2, prior=_prior(x))
    pts = x[:200]
    # Differences are O(d/n) in the log density: 1e-3 is ~10x that scale here.
    diff = np.abs(np.exp(ans.predictive.log_proba(pts)) - np.exp(quad.log_proba(pts)))
    assert diff.max() < 1e-3


# ---------------------------------------------------------------- bad input


def test_singular_class_covariance_is_named(rng):
    """A class with fewer points than dimensions: no QDA (the error names the class and
    the remedy), no MLE in the answer, but a proper posterior."""
    x = rng.normal(size=(30, 4))
    y = np.r_[np.zeros(27, dtype=int), np.ones(3, dtype=int)]
    fit = gc.fit(x=x, labels=y, n_classes=2)
    assert fit.singular_classes() == (1,)
    with pytest.raises(ValueError, match=r"covariances\[1\].*class 1 has a singular"):
        gc.quadratic_discriminant(priors=fit.priors, means=fit.means, covariances=fit.covariances)
    ans = gc.answer(x=x, labels=y, n_classes=2, prior=_prior(x))
    assert ans.mle is None and np.all(np.isfinite(ans.posterior.mean))


def test_bad_input_messages(rng):
    x = rng.normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"x\[3, 1\] is nan"):
        bad = x.copy()
        bad[3, 1] = np.nan
        gc.class_stats(x=bad, labels=np.zeros(10, dtype=int), n_classes=2)
    with pytest.raises(ValueError, match=r"labels\[0\] = 5 is not a component"):
        gc.class_stats(x=x, labels=np.full(10, 5), n_classes=2)
    with pytest.raises(ValueError, match="class 1 has no points"):
        gc.fit(x=x, labels=np.zeros(10, dtype=int), n_classes=2)
    with pytest.raises(ValueError, match="priors must be > 0 and sum to 1"):
        gc.linear_discriminant(priors=[0.5, 0.6], means=np.zeros((2, 2)), covariance=np.eye(2))
