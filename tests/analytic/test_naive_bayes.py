"""Tests for analytic.naive_bayes: conjugate naive Bayes, three variants.

References independent of the module: scikit-learn's MultinomialNB,
BernoulliNB and CategoricalNB (smoothed estimates and predictions, each
correspondence stated where it is used), scipy.stats.dirichlet / beta /
dirichlet_multinomial, counts by Python loops, the Polya-urn chain rule for
the evidence, and Mitchell's (1997, sec. 6.9.1) PlayTennis numbers.
scikit-learn stores log probabilities computed in a different order, so
those comparisons are at 1e-8 relative (the brief's tolerance; the observed
differences are ~1e-15); the others at 1e-10.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, MultinomialNB

from analytic import ExactPosterior
from analytic import naive_bayes as nb

RTOL = 1e-10
SK_RTOL = 1e-8


def _multinomial_data(rng, n=60, v=7, c=3):
    y = rng.integers(0, c, size=n)
    theta = rng.dirichlet(np.ones(v), size=c)
    x = np.array([rng.multinomial(rng.integers(1, 12), theta[k]) for k in y], dtype=float)
    return x, y


def _solve(variant, x, y, c, alpha=0.7, class_concentration=1.3, n_categories=None):
    names = (
        [f"f{j}" for j in range(x.shape[1])]
        if n_categories is None
        else [f"f{j}={k}" for j, kk in enumerate(n_categories) for k in range(kk)]
    )
    return nb.solve(
        variant=variant,
        x=x,
        y=y,
        classes=[f"c{k}" for k in range(c)],
        feature_names=names,
        alpha=alpha,
        class_concentration=class_concentration,
        n_categories=n_categories,
    )


# ---------------------------------------------------------- 1. against scikit-learn


def test_multinomial_matches_sklearn(rng):
    x, y = _multinomial_data(rng)
    ans = _solve("multinomial", x, y, 3)
    post = ans.posterior
    # MultinomialNB(alpha): feature_log_prob_ = log((N_ck + alpha) / (N_c + alpha V)),
    # the log posterior mean of Dirichlet(alpha + N_c).
    sk = MultinomialNB(alpha=0.7).fit(x, y)
    np.testing.assert_allclose(np.log(post.feature_mean), sk.feature_log_prob_, rtol=SK_RTOL)
    # class_log_prior_ = log(n_c / n), unsmoothed: our MLE of pi.
    np.testing.assert_allclose(np.log(ans.mle[:3]), sk.class_log_prior_, rtol=SK_RTOL)
    # With class_prior = E[pi | D], predict_log_proba is our plug-in predictive.
    sk = MultinomialNB(alpha=0.7, class_prior=post.class_mean).fit(x, y)
    x_new = _multinomial_data(rng, n=15)[0]
    np.testing.assert_allclose(
        nb.predict_log_proba(posterior=post, x=x_new, exact=False),
        sk.predict_log_proba(x_new),
        rtol=SK_RTOL,
    )


def test_bernoulli_matches_sklearn(rng):
    x = (rng.random((80, 6)) < rng.uniform(0.1, 0.9, size=6)).astype(float)
    y = rng.integers(0, 2, size=80)
    ans = _solve("bernoulli", x, y, 2)
    post = ans.posterior
    # BernoulliNB(alpha, binarize=None): feature_log_prob_ = log((N_cj + alpha) / (n_c + 2 alpha)),
    # the log mean of Beta(alpha + N_cj, alpha + n_c - N_cj).
    sk = BernoulliNB(alpha=0.7, binarize=None, class_prior=post.class_mean).fit(x, y)
    np.testing.assert_allclose(np.log(post.feature_mean), sk.feature_log_prob_, rtol=SK_RTOL)
    x_new = (rng.random((20, 6)) < 0.5).astype(float)
    # Each theta enters a row's likelihood once, so the exact predictive is the plug-in.
    for exact in (True, False):
        np.testing.assert_allclose(
            nb.predict_log_proba(posterior=post, x=x_new, exact=exact),
            sk.predict_log_proba(x_new),
            rtol=SK_RTOL,
        )


def test_categorical_matches_sklearn(rng):
    sizes = (3, 2, 4)
    x = np.column_stack([rng.integers(0, k, size=90) for k in sizes])
    x[:4] = [[2, 1, 3]] * 4  # every category present, as CategoricalNB infers the sizes
    y = rng.integers(0, 3, size=90)
    ans = _solve("categorical", x, y, 3, n_categories=sizes)
    post = ans.posterior
    # CategoricalNB(alpha): feature_log_prob_[j] = log((N_cjk + alpha) / (n_c + alpha K_j)),
    # the log mean of Dirichlet(alpha + N_cj).
    sk = CategoricalNB(alpha=0.7, class_prior=post.class_mean).fit(x, y)
    for j, (s, e) in enumerate(post.groups):
        np.testing.assert_allclose(
            np.log(post.feature_mean[:, s:e]), sk.feature_log_prob_[j], rtol=SK_RTOL
        )
    x_new = np.column_stack([rng.integers(0, k, size=25) for k in sizes])
    np.testing.assert_allclose(
        nb.predict_log_proba(posterior=post, x=x_new), sk.predict_log_proba(x_new), rtol=SK_RTOL
    )


# ---------------------------------------------------------- 2. the posterior


def test_blocks_match_scipy(rng):
    x, y = _multinomial_data(rng, c=2, v=4)
    post = _solve("multinomial", x, y, 2).posterior
    assert isinstance(post, ExactPosterior)
    n_c = np.bincount(y, minlength=2)
    counts = np.array([x[y == k].sum(axis=0) for k in range(2)])  # by masking, not BLAS
    blocks = [stats.dirichlet(1.3 + n_c)] + [stats.dirichlet(0.7 + counts[k]) for k in range(2)]
    np.testing.assert_allclose(post.mean, np.concatenate([b.mean() for b in blocks]), rtol=RTOL)
    cov = post.cov
    np.testing.assert_allclose(cov[:2, :2], blocks[0].cov(), rtol=RTOL)
    np.testing.assert_allclose(cov[2:6, 2:6], blocks[1].cov(), rtol=RTOL)
    np.testing.assert_allclose(cov[6:, 6:], blocks[2].cov(), rtol=RTOL)
    assert np.all(cov[:2, 2:] == 0) and np.all(cov[2:6, 6:] == 0)  # independent blocks
    assert post.free == (0, 2, 3, 4, 6, 7, 8)  # K - 1 per Dirichlet
    point = np.concatenate([b.rvs(random_state=1)[0] for b in blocks])
    assert post.logpdf(point) == pytest.approx(
        sum(b.logpdf(p) for b, p in zip(blocks, (point[:2], point[2:6], point[6:]))), rel=RTOL
    )
    assert post.marginal(3).mean() == pytest.approx(post.mean[3], rel=RTOL)


def test_bernoulli_blocks_are_betas(rng):
    x = (rng.random((30, 3)) < 0.4).astype(float)
    y = rng.integers(0, 2, size=30)
    post = _solve("bernoulli", x, y, 2).posterior
    for k in range(2):
        rows = x[y == k]
        for j in range(3):
            s = rows[:, j].sum()
            ref = stats.beta(0.7 + s, 0.7 + len(rows) - s)
            i = 2 + 3 * k + j
            assert post.mean[i] == pytest.approx(ref.mean(), rel=RTOL)
            assert post.cov[i, i] == pytest.approx(ref.var(), rel=RTOL)
    assert post.free == tuple([0] + list(range(2, 8)))


def test_no_data_returns_the_prior():
    post = _solve("multinomial", np.zeros((0, 4)), np.zeros(0, dtype=int), 2).posterior
    np.testing.assert_allclose(post.class_alpha, [1.3, 1.3])
    np.testing.assert_allclose(post.feature_alpha, 0.7)


def test_chunks_merge_to_one_batch(rng):
    x, y = _multinomial_data(rng)
    a = nb.sufficient_stats(variant="multinomial", x=x[:25], y=y[:25], n_classes=3)
    b = nb.sufficient_stats(variant="multinomial", x=x[25:], y=y[25:], n_classes=3)
    whole = nb.sufficient_stats(variant="multinomial", x=x, y=y, n_classes=3)
    merged = a + b
    np.testing.assert_array_equal(merged.class_counts, whole.class_counts)
    np.testing.assert_array_equal(merged.feature_counts, whole.feature_counts)


# ---------------------------------------------------------- 3. the m-estimate


def test_m_estimate_is_the_posterior_mean(rng):
    """Mitchell eq. 6.22: (n_c + m p) / (n + m) = mean of Dirichlet(m p) after the counts."""
    for _ in range(20):
        k = int(rng.integers(2, 6))
        counts = rng.integers(0, 20, size=k).astype(float)
        m, p = float(rng.uniform(0.1, 10)), rng.dirichlet(np.ones(k))
        np.testing.assert_allclose(
            nb.m_estimate(n_c=counts, n=counts.sum(), m=m, p=p),
            nb.posterior_mean_of(counts=counts, concentration=m * p),
            rtol=RTOL,
        )
    # Laplace smoothing: m = K, p = 1/K, i.e. alpha = 1.
    np.testing.assert_allclose(
        nb.m_estimate(n_c=np.array([3.0, 0.0]), n=3.0, m=2.0, p=0.5), [4 / 5, 1 / 5], rtol=RTOL
    )


# ---------------------------------------------------------- 4. prediction


def test_multinomial_predictive_is_dirichlet_multinomial(rng):
    """P(y = c | x, D) prop. to E[pi_c] DirMult(x; alpha + N_c) (scipy's pmf)."""
    x, y = _multinomial_data(rng)
    post = _solve("multinomial", x, y, 3).posterior
    x_new = np.array([[3, 0, 1, 0, 0, 2, 0], [0, 5, 0, 0, 0, 0, 1]], dtype=float)
    got = nb.predict_log_proba(posterior=post, x=x_new)
    for i, row in enumerate(x_new):
        joint = np.array(
            [
                math.log(post.class_mean[k])
                + stats.dirichlet_multinomial.logpmf(row, post.feature_alpha[k], row.sum())
                for k in range(3)
            ]
        )
        np.testing.assert_allclose(got[i], joint - special.logsumexp(joint), rtol=RTOL)
    # Repeated words make it differ from the plug-in estimate.
    plugin = nb.predict_log_proba(posterior=post, x=x_new, exact=False)
    assert np.max(np.abs(np.exp(got) - np.exp(plugin))) > 1e-4


def test_predictions_stay_finite_for_long_documents(rng):
    """10^4 tokens: a product of probabilities underflows, log space does not."""
    x, y = _multinomial_data(rng)
    post = _solve("multinomial", x, y, 3).posterior
    long = rng.multinomial(10_000, np.full(7, 1 / 7))[None, :].astype(float)
    assert np.prod(post.feature_mean[0] ** long[0]) == 0.0
    for exact in (True, False):
        lp = nb.predict_log_proba(posterior=post, x=long, exact=exact)
        # Joint log probabilities are ~ -2e4, so rounding leaves ~ 2e4 x 2.2e-16 = 4e-12.
        assert np.all(np.isfinite(lp)) and special.logsumexp(lp[0]) == pytest.approx(0.0, abs=1e-10)


def test_play_tennis_as_mitchell():
    """Mitchell sec. 6.9.1: v_NB(<sunny, cool, high, strong>) = no, .0053 vs .0206 (MLE)."""
    rows = [
        "Sunny Hot High Weak No",
        "Sunny Hot High Strong No",
        "Overcast Hot High Weak Yes",
        "Rain Mild High Weak Yes",
        "Rain Cool Normal Weak Yes",
        "Rain Cool Normal Strong No",
        "Overcast Cool Normal Strong Yes",
        "Sunny Mild High Weak No",
        "Sunny Cool Normal Weak Yes",
        "Rain Mild Normal Weak Yes",
        "Sunny Mild Normal Strong Yes",
        "Overcast Mild High Strong Yes",
        "Overcast Hot Normal Weak Yes",
        "Rain Mild High Strong No",
    ]
    table = [r.split() for r in rows]
    cats = [sorted({r[j] for r in table}) for j in range(4)]
    x = np.array([[cats[j].index(r[j]) for j in range(4)] for r in table])
    y = np.array([r[4] == "Yes" for r in table], dtype=int)  # classes (No, Yes)
    sizes = tuple(len(c) for c in cats)
    ans = _solve("categorical", x, y, 2, n_categories=sizes)
    mle = ans.mle
    query = [
        cats[0].index("Sunny"),
        cats[1].index("Cool"),
        cats[2].index("High"),
        cats[3].index("Strong"),
    ]
    offsets = np.cumsum((0,) + sizes)[:-1]
    theta = mle[2:].reshape(2, -1)
    score = [
        mle[c] * np.prod([theta[c, offsets[j] + query[j]] for j in range(4)]) for c in range(2)
    ]
    assert score[1] == pytest.approx(9 / 14 * 2 / 9 * 3 / 9 * 3 / 9 * 3 / 9, rel=RTOL)
    assert score[0] == pytest.approx(5 / 14 * 3 / 5 * 1 / 5 * 4 / 5 * 3 / 5, rel=RTOL)
    assert round(score[1], 4) == 0.0053 and round(score[0], 4) == 0.0206
    # The Bayesian predictive (alpha = 1) still says no.
    lp = nb.predict_log_proba(posterior=ans.posterior, x=np.array([query]))
    assert lp[0].argmax() == 0


# ---------------------------------------------------------- 5. evidence


def test_log_evidence_is_the_polya_urn_chain_rule(rng):
    """p(D) = prod_i p(y_i | D_<i) p(x_i | y_i, D_<i), each factor a smoothed frequency."""
    sizes = (3, 2)
    x = np.column_stack([rng.integers(0, k, size=12) for k in sizes])
    y = rng.integers(0, 2, size=12)
    ans = _solve("categorical", x, y, 2, alpha=0.8, class_concentration=1.5, n_categories=sizes)
    n_c = np.zeros(2)
    counts = [np.zeros((2, k)) for k in sizes]
    total = 0.0
    for xi, yi in zip(x, y):
        total += math.log((1.5 + n_c[yi]) / (3.0 + n_c.sum()))
        for j, k in enumerate(sizes):
            total += math.log((0.8 + counts[j][yi, xi[j]]) / (0.8 * k + n_c[yi]))
            counts[j][yi, xi[j]] += 1
        n_c[yi] += 1
    assert ans.log_evidence == pytest.approx(total, rel=RTOL)


def test_bernoulli_evidence_by_the_chain_rule(rng):
    x = (rng.random((10, 2)) < 0.5).astype(float)
    y = rng.integers(0, 2, size=10)
    ans = _solve("bernoulli", x, y, 2, alpha=0.6, class_concentration=2.0)
    n_c, ones, total = np.zeros(2), np.zeros((2, 2)), 0.0
    for xi, yi in zip(x, y):
        total += math.log((2.0 + n_c[yi]) / (4.0 + n_c.sum()))
        for j in range(2):
            p1 = (0.6 + ones[yi, j]) / (1.2 + n_c[yi])
            total += math.log(p1 if xi[j] == 1 else 1 - p1)
            ones[yi, j] += xi[j]
        n_c[yi] += 1
    assert ans.log_evidence == pytest.approx(total, rel=RTOL)


# ---------------------------------------------------------- 6. bad input


def test_bad_features_are_refused():
    y = np.array([0, 1])
    with pytest.raises(ValueError, match="0/1 features"):
        nb.sufficient_stats(variant="bernoulli", x=np.array([[2.0], [0.0]]), y=y, n_classes=2)
    with pytest.raises(ValueError, match="whole numbers >= 0"):
        nb.sufficient_stats(variant="multinomial", x=np.array([[1.5], [0.0]]), y=y, n_classes=2)
    with pytest.raises(ValueError, match="non-finite"):
        nb.sufficient_stats(variant="multinomial", x=np.array([[np.inf], [0.0]]), y=y, n_classes=2)
    with pytest.raises(ValueError, match=r"not a code in 0..1"):
        nb.sufficient_stats(
            variant="categorical", x=np.array([[2], [0]]), y=y, n_classes=2, n_categories=(2,)
        )
    with pytest.raises(ValueError, match="at least 2 classes"):
        _solve("multinomial", np.ones((2, 2)), np.zeros(2, dtype=int), 1)
    with pytest.raises(ValueError, match="variant must be one of"):
        nb.check_variant("poisson")


# ---------------------------------------------------------- 7. the Gaussian variant


def _gaussian_data(rng, n=70, p=3, c=3):
    y = rng.integers(0, c, size=n)
    y[:c] = np.arange(c)  # every class present
    centres = rng.normal(0, 1.5, size=(c, p))
    sds = rng.uniform(0.3, 2.0, size=(c, p))
    return centres[y] + sds[y] * rng.standard_normal((n, p)), y


GAUSS_PRIOR = {"mu0": 0.4, "kappa0": 0.8, "alpha0": 2.5, "beta0": 1.7}


def _solve_gaussian(x, y, c, **prior):
    return nb.solve(
        variant="gaussian",
        x=x,
        y=y,
        classes=[f"c{k}" for k in range(c)],
        feature_names=[f"f{j}" for j in range(x.shape[1])],
        class_concentration=1.3,
        **{**GAUSS_PRIOR, **prior},
    )


def test_gaussian_mle_matches_sklearn(rng):
    """GaussianNB(var_smoothing=0) is the MLE plug-in classifier: theta_ = class means,
    var_ = class variances m2 / n_c (np.var, ddof 0; var_smoothing adds 0 x the largest
    feature variance), class_prior_ = n_c / n; its predict_proba is our plug-in
    (exact=False) predictive.  Stored in a different order of operations: 1e-8."""
    from sklearn.naive_bayes import GaussianNB

    x, y = _gaussian_data(rng)
    ans = _solve_gaussian(x, y, 3)
    sk = GaussianNB(var_smoothing=0.0).fit(x, y)
    mle = ans.mle[3:].reshape(3, 3, 2)  # (class, feature, (mean, variance))
    np.testing.assert_allclose(ans.mle[:3], sk.class_prior_, rtol=SK_RTOL)
    np.testing.assert_allclose(mle[..., 0], sk.theta_, rtol=SK_RTOL)
    np.testing.assert_allclose(mle[..., 1], sk.var_, rtol=SK_RTOL)
    x_new = rng.normal(0, 2, size=(25, 3))
    np.testing.assert_allclose(
        np.exp(ans.predictive.plugin_log_proba(x_new)),
        sk.predict_proba(x_new),
        rtol=SK_RTOL,
        atol=1e-14,
    )


def test_gaussian_blocks_are_the_nig_topic_posteriors(rng):
    """Each (class, feature) block is analytic.normal_inverse_gamma's posterior of that
    class's column, and by hand (Murphy 2007, eqs. 86-89) for one block."""
    from analytic import normal_inverse_gamma as nig

    x, y = _gaussian_data(rng, n=40, p=2, c=2)
    post = _solve_gaussian(x, y, 2).posterior
    assert isinstance(post, ExactPosterior)
    assert post.parameters[:5] == ("pi[c0]", "pi[c1]", "mu[c0,f0]", "sigma2[c0,f0]", "mu[c0,f1]")
    for c in range(2):
        for j in range(2):
            ref = nig.posterior(x=x[y == c, j], **GAUSS_PRIOR)
            i = 2 + 2 * (2 * c + j)
            np.testing.assert_allclose(post.mean[i : i + 2], ref.mean, rtol=RTOL)
            np.testing.assert_allclose(post.cov[i : i + 2, i : i + 2], ref.cov, rtol=RTOL)
            np.testing.assert_allclose(post.mode[i : i + 2], ref.mode, rtol=RTOL)
    col = x[y == 1, 0]
    n, xbar = col.size, col.mean()
    kappa = 0.8 + n
    alpha = 2.5 + n / 2
    beta = 1.7 + 0.5 * np.sum((col - xbar) ** 2) + 0.8 * n * (xbar - 0.4) ** 2 / (2 * kappa)
    i = 2 + 2 * 2
    assert post.marginal(i).mean() == pytest.approx((0.8 * 0.4 + n * xbar) / kappa, rel=RTOL)
    assert post.marginal(i + 1).mean() == pytest.approx(beta / (alpha - 1), rel=RTOL)
    assert post.marginal(i + 1).var() == pytest.approx(
        stats.invgamma(alpha, scale=beta).var(), rel=RTOL
    )
    assert post.moments_below == pytest.approx(min(2.5 + np.sum(y == k) / 2 for k in range(2)))
    assert np.all(post.cov[:2, 2:] == 0) and post.cov[2, 4] == 0  # independent blocks
    assert post.free == tuple([0] + list(range(2, 10)))


def test_gaussian_predictive_is_a_product_of_student_t(rng):
    """P(y = c | x, D) prop. to E[pi_c] prod_j t_{2 alpha_n}(x_j; mu_n, beta_n (kappa_n + 1)
    / (alpha_n kappa_n)) (Murphy 2007, eq. 100), with scipy's t; heavier tails than the
    MLE plug-in (with fewer rows per class, the more so)."""
    from analytic import normal_inverse_gamma as nig

    x, y = _gaussian_data(rng)
    ans = _solve_gaussian(x, y, 3)
    x_new = np.vstack([rng.normal(0, 2, size=(10, 3)), [[9.0, -9.0, 9.0]]])
    got = ans.predictive.log_proba(x_new)
    for i, row in enumerate(x_new):
        joint = np.log(ans.posterior.class_mean).copy()
        for c in range(3):
            for j in range(3):
                t = nig.solve(x=x[y == c, j], **GAUSS_PRIOR).predictive
                joint[c] += t.logpdf(row[j])
        np.testing.assert_allclose(got[i], joint - special.logsumexp(joint), rtol=RTOL, atol=1e-12)
    plugin = ans.predictive.plugin_log_proba(x_new)
    assert np.max(np.abs(np.exp(got) - np.exp(plugin))) > 1e-4  # two different classifiers


def test_gaussian_evidence_by_the_chain_rule(rng):
    """log p(D) = sum_i log p(y_i | D_<i) + log p(x_i | y_i, D_<i), each factor a smoothed
    class frequency or a Student-t predictive of the earlier rows of that class."""
    from analytic import normal_inverse_gamma as nig

    x, y = _gaussian_data(rng, n=14, p=2, c=2)
    ans = _solve_gaussian(x, y, 2)
    total, n_c = 0.0, np.zeros(2)
    for i in range(len(y)):
        c = y[i]
        total += math.log((1.3 + n_c[c]) / (2.6 + n_c.sum()))
        earlier = np.flatnonzero(y[:i] == c)
        for j in range(2):
            total += nig.solve(x=x[earlier, j], **GAUSS_PRIOR).predictive.logpdf(x[i, j])
        n_c[c] += 1
    assert ans.log_evidence == pytest.approx(total, rel=RTOL)


def test_gaussian_chunks_merge_to_one_batch(rng):
    x, y = _gaussian_data(rng)
    a = nb.gaussian_stats(x=x[:31], y=y[:31], n_classes=3)
    b = nb.gaussian_stats(x=x[31:], y=y[31:], n_classes=3)
    whole = nb.gaussian_stats(x=x, y=y, n_classes=3)
    merged = a + b
    np.testing.assert_array_equal(merged.class_counts, whole.class_counts)
    np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-12)
    np.testing.assert_allclose(merged.m2, whole.m2, rtol=1e-12)
    post = _solve_gaussian(x, y, 3).posterior
    np.testing.assert_allclose(
        nb.update(
            suff=merged,
            variant="gaussian",
            classes=post.classes,
            feature_names=post.feature_names,
            alpha=1.0,
            class_concentration=1.3,
            **GAUSS_PRIOR,
        ).mean,
        post.mean,
        rtol=1e-12,
    )


def test_gaussian_stats_keep_their_digits_at_large_offsets(rng):
    """Centred sums of squares survive an offset of 1e8: the reference centres each class
    column with its own mean (two passes); sum x^2 - n xbar^2 loses every digit of a
    variance ~1e-2 (x^2 ~ 1e16 has an ulp of 2)."""
    x, y = _gaussian_data(rng)
    x = 1e8 + 0.1 * x
    whole = nb.gaussian_stats(x=x, y=y, n_classes=3)
    ref = np.array(
        [[np.sum((x[y == c, j] - x[y == c, j].mean()) ** 2) for j in range(3)] for c in range(3)]
    )
    # Our class means come from a BLAS sum and may differ from numpy's by an ulp of 1e8
    # (1.5e-8); that moves m2 by n * (1.5e-8)^2 ~ 1e-14, far below 1e-9 relative.
    np.testing.assert_allclose(whole.m2, ref, rtol=1e-9)
    naive = np.array(
        [
            [
                np.sum(x[y == c, j] ** 2) - np.sum(y == c) * x[y == c, j].mean() ** 2
                for j in range(3)
            ]
            for c in range(3)
        ]
    )
    assert np.max(np.abs(naive - ref) / ref) > 1e-3


def test_gaussian_empty_class_keeps_the_prior_and_has_no_mle(rng):
    x, y = _gaussian_data(rng, n=20, p=2, c=2)
    ans = _solve_gaussian(x, y, 3)  # class c2 has no rows
    g = ans.posterior.gaussian
    np.testing.assert_allclose(
        [g.mu[2], g.kappa[2], g.alpha[2], g.beta[2]],
        [[0.4] * 2, [0.8] * 2, [2.5] * 2, [1.7] * 2],
        rtol=RTOL,
    )
    assert ans.mle is None
    with pytest.raises(ValueError, match="class 2 has no training rows"):
        ans.predictive.plugin_log_proba(x[:2])
    assert np.all(np.isfinite(ans.predictive.log_proba(x[:2])))  # the Bayesian one works


def test_gaussian_bad_input_is_refused():
    y = np.array([0, 1])
    with pytest.raises(ValueError, match="non-finite"):
        nb.gaussian_stats(x=np.array([[np.nan], [0.0]]), y=y, n_classes=2)
    with pytest.raises(ValueError, match=r"kappa0 must be a finite number > 0, got -1.0"):
        _solve_gaussian(np.array([[0.0], [1.0]]), y, 2, kappa0=-1.0)
    with pytest.raises(ValueError, match="mu0 must be a finite number"):
        _solve_gaussian(np.array([[0.0], [1.0]]), y, 2, mu0=np.inf)
