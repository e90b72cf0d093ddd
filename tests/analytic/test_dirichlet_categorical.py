"""Tests for analytic.dirichlet_categorical: Dirichlet prior, categorical likelihood.

References are independent of the module: scipy.stats.dirichlet (moments,
density), scipy.stats.dirichlet_multinomial (evidence of the counts),
the Polya-urn chain rule written by hand, counts from collections.Counter,
numerical integration (quad) of the Dirichlet density for the Beta
marginals, and hand-derived formulas whose source is noted.  Exact
quantities are compared at ~1e-10 relative; quad runs at epsrel=1e-13.

The identities every conjugate topic shares (no data = prior, sequential =
batch, the evidence chain rule, merging statistics, flat prior = MLE, the
sampler's moments) are stated once in tests/analytic/test_conjugate_identities.py.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from analytic import ExactPosterior
from analytic import dirichlet_categorical as dc
from tests.analytic.reference import N_DRAWS, QUAD, RTOL, Z_MAX, sampler_z_scores

CATEGORIES = ("a", "b", "c")
CONC = np.array([0.5, 2.0, 1.5])  # one entry below 1, none equal


@pytest.fixture
def x(rng) -> np.ndarray:
    return rng.choice(3, size=30, p=[0.2, 0.5, 0.3])


def _counts(x) -> np.ndarray:
    c = Counter(int(v) for v in x)
    return np.array([c[k] for k in range(len(CATEGORIES))], dtype=float)


def _solve(x, concentration=CONC, categories=CATEGORIES):
    return dc.solve(x=np.asarray(x), categories=categories, concentration=concentration)


# ---------------------------------------------------------------- 1. posterior


def test_posterior_matches_scipy_dirichlet(x):
    post = _solve(x).posterior
    alpha = CONC + _counts(x)  # Dirichlet(alpha + counts): Murphy 2012, eq. 3.51
    np.testing.assert_array_equal(post.alpha, alpha)
    ref = stats.dirichlet(alpha)
    np.testing.assert_allclose(post.mean, ref.mean(), rtol=RTOL)
    np.testing.assert_allclose(post.cov, ref.cov(), rtol=RTOL, atol=1e-15)
    np.testing.assert_allclose(np.diag(post.cov), ref.var(), rtol=RTOL)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_marginal_is_the_dirichlet_integrated(x, index):
    """For K = 3, p_i's density is int Dir(p) over the other free coordinate."""
    post = _solve(x).posterior
    alpha = CONC + _counts(x)
    order = [index] + [k for k in range(3) if k != index]

    def joint(pi, pj):
        p = np.empty(3)
        p[order] = [pi, pj, 1.0 - pi - pj]
        return stats.dirichlet.pdf(p, alpha)

    for pi in (0.1, 0.3, 0.6):
        ref = integrate.quad(lambda pj: joint(pi, pj), 0.0, 1.0 - pi, **QUAD)[0]
        assert post.marginal(index).pdf(pi) == pytest.approx(ref, rel=RTOL)


def test_bayes_rule_holds_pointwise(x):
    """log p(p | D) + log p(D) = log Dir(p; conc) + sum_i log p[x_i] at any p."""
    ans = _solve(x)
    for p in ([0.2, 0.5, 0.3], [0.05, 0.9, 0.05], [0.4, 0.3, 0.3]):
        p = np.asarray(p)
        rhs = stats.dirichlet.logpdf(p, CONC) + math.fsum(math.log(p[v]) for v in x)
        lhs = float(ans.posterior.logpdf(p)) + ans.log_evidence
        assert lhs == pytest.approx(rhs, rel=RTOL)


def test_covariance_is_singular_but_free_block_is_not(x):
    post = _solve(x).posterior
    assert post.free == (0, 1)
    # p sums to one, so the rows of cov sum to zero (rank K - 1).
    np.testing.assert_allclose(post.cov.sum(axis=1), 0.0, atol=1e-15)
    free = np.ix_(post.free, post.free)
    np.linalg.cholesky(post.cov[free])  # raises unless positive definite


def test_satisfies_protocol(x):
    post = _solve(x).posterior
    assert isinstance(post, ExactPosterior)
    assert post.parameters == ("p[a]", "p[b]", "p[c]")
    assert post.is_gaussian is False


# ---------------------------------------------------------------- 2. evidence


def test_log_evidence_matches_closed_form_and_scipy(x):
    c, a = _counts(x), CONC
    n = int(c.sum())
    # Evidence of the sequence (Murphy 2012, eq. 5.24): Polya / Dirichlet-multinomial.
    closed = (
        special.gammaln(a.sum())
        - special.gammaln(a.sum() + n)
        + np.sum(special.gammaln(a + c) - special.gammaln(a))
    )
    # scipy gives the evidence of the counts: the sequence's times the multinomial coefficient.
    log_coef = special.gammaln(n + 1) - np.sum(special.gammaln(c + 1))
    via_scipy = stats.dirichlet_multinomial.logpmf(c, a, n) - log_coef
    got = _solve(x).log_evidence
    assert got == pytest.approx(closed, rel=RTOL)
    assert got == pytest.approx(via_scipy, rel=RTOL)


def test_log_evidence_matches_polya_urn(x):
    """p(x_i = k | x_<i) = (alpha_k + #{j < i: x_j = k}) / (sum alpha + i) (Polya urn)."""
    seen = np.zeros(3)
    total = 0.0
    for i, v in enumerate(x):
        total += math.log((CONC[v] + seen[v]) / (CONC.sum() + i))
        seen[v] += 1
    assert _solve(x).log_evidence == pytest.approx(total, rel=RTOL)


# ---------------------------------------------------------------- 3. identities


def test_stats_are_the_counts(x):
    # (Merging chunks: tests/analytic/test_conjugate_identities.py.)
    whole = dc.sufficient_stats(x=x, n_categories=3)
    np.testing.assert_array_equal(whole.counts, _counts(x))
    assert whole.n == x.size


# ---------------------------------------------------------------- 4. sampler, logpdf


def test_sampler_check_detects_planted_bug(x, rng):
    """Power: one extra count in category a (alpha_a + 1) moves E[p_a] by ~0.025,
    ~0.4 sd or ~180 standard errors at N = 200,000."""
    post = _solve(x).posterior
    wrong = rng.dirichlet(post.alpha + np.array([1.0, 0.0, 0.0]), size=N_DRAWS)
    z = sampler_z_scores(
        wrong, mean=post.mean, cov=post.cov, marginals=[post.marginal(i) for i in range(3)]
    )
    assert max(abs(v) for v in z.values()) > Z_MAX


def test_logpdf_matches_scipy_and_broadcasts(x):
    post = _solve(x).posterior
    pts = np.array(
        [
            [[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]],
            [[0.33, 0.33, 0.34], [0.05, 0.9, 0.05], [0.45, 0.45, 0.1]],
        ]
    )  # (2, 3, 3)
    out = post.logpdf(pts)
    assert out.shape == (2, 3)
    for idx in np.ndindex(2, 3):
        assert out[idx] == pytest.approx(stats.dirichlet.logpdf(pts[idx], post.alpha), rel=RTOL)
    # Off the simplex the density is 0.
    off = post.logpdf(np.array([[0.2, 0.2, 0.2], [-0.1, 0.6, 0.5]]))
    np.testing.assert_array_equal(off, [-np.inf, -np.inf])


# ---------------------------------------------------------------- 5. predictive


def test_predictive_is_the_posterior_mean(x):
    c = _counts(x)
    pred = _solve(x).predictive
    probs = (CONC + c) / (CONC.sum() + x.size)  # E[p_k | D]
    np.testing.assert_allclose(np.exp(pred.logpmf(np.arange(3))), probs, rtol=RTOL)
    np.testing.assert_allclose(pred.mean(), probs, rtol=RTOL)
    assert math.fsum(np.exp(pred.logpmf(np.arange(3)))) == pytest.approx(1.0, rel=1e-15)
    assert pred.categories == CATEGORIES


# ---------------------------------------------------------------- 6. bad input


@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
@pytest.mark.parametrize("as_vector", [False, True])
def test_bad_concentration_raises(value, as_vector):
    conc = [1.0, value, 2.0] if as_vector else value
    with pytest.raises(ValueError, match=rf"\bconcentration\b.*{re.escape(repr(value))}"):
        _solve(np.array([0, 1]), concentration=conc)


def test_concentration_of_the_wrong_length_raises():
    with pytest.raises(ValueError, match=r"\bconcentration\b.*3 numbers.*got 2"):
        _solve(np.array([0, 1]), concentration=[1.0, 2.0])


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([0, 3], r"x\[1\] = 3 .*0\.\.2"),
        ([-1, 0], r"x\[0\] = -1 .*0\.\.2"),
        ([0.0, 0.5], r"x\[1\] = 0\.5 "),
        ([1.0, np.nan], r"x\[1\] = nan "),
        ([np.inf, 0.0], r"x\[0\] = inf "),
        ([[0, 1], [1, 0]], r"x.*shape \(2, 2\)"),
    ],
)
def test_bad_codes_raise(data, pattern):
    with pytest.raises(ValueError, match=pattern):
        _solve(np.asarray(data))


@pytest.mark.parametrize(
    ("categories", "pattern"),
    [
        (["a"], r"at least 2 categories, got \['a'\]"),
        ([], r"at least 2 categories, got \[\]"),
        (["a", "b", "a"], r"categories must be distinct, got \['a', 'b', 'a'\]"),
    ],
)
def test_bad_categories_raise(categories, pattern):
    with pytest.raises(ValueError, match=pattern):
        _solve(np.array([], dtype=int), concentration=1.0, categories=categories)


# ---------------------------------------------------------------- 7. modes


@pytest.mark.parametrize(
    ("alpha", "mode", "interior"),
    [
        ([2.0, 3.0, 4.0], [1 / 6, 2 / 6, 3 / 6], True),  # (alpha_k - 1) / (sum alpha - K)
        ([1.0, 2.0, 3.0], [0.0, 1 / 3, 2 / 3], False),  # alpha_a = 1: p_a = 0 on the edge
        ([0.5, 2.0, 3.0], [0.0, 1 / 3, 2 / 3], False),  # alpha_a < 1: unbounded at p_a = 0
        ([1.0, 1.0, 1.0], None, False),  # flat: no unique mode
        ([0.5, 0.9, 1.0], None, False),
    ],
)
def test_modes(alpha, mode, interior):
    post = _solve(np.array([], dtype=int), concentration=alpha).posterior
    if mode is None:
        assert post.mode is None
    else:
        np.testing.assert_allclose(post.mode, mode, rtol=RTOL)
    assert post.mode_interior is interior


def test_logpdf_at_a_boundary_mode_is_finite():
    """With alpha_a = 1 the density is finite on the edge p_a = 0; the mode lies there."""
    post = _solve(np.array([], dtype=int), concentration=[1.0, 2.0, 3.0]).posterior
    # Gamma(6) / (Gamma(1) Gamma(2) Gamma(3)) * (1/3)^1 (2/3)^2 = 60 * 4/27 = 80/9.
    assert stats.dirichlet.logpdf(post.mode, post.alpha) == pytest.approx(
        math.log(80 / 9), rel=RTOL
    )
    assert float(post.logpdf(post.mode)) == pytest.approx(math.log(80 / 9), rel=RTOL)


@pytest.mark.parametrize(
    ("concentration", "with_data"), [([2.0, 3.0, 4.0], True), ([1.0, 2.0, 3.0], False)]
)
def test_mode_maximises_logpdf_over_the_simplex(x, concentration, with_data):
    # An interior mode, and one on the edge p_a = 0 (alpha_a = 1).
    post = _solve(
        x if with_data else np.array([], dtype=int), concentration=concentration
    ).posterior

    def neg(q):  # q = (p_a, p_b) on the closed simplex
        p = np.array([q[0], q[1], 1.0 - q[0] - q[1]])
        return -float(stats.dirichlet.logpdf(np.clip(p, 1e-300, 1), post.alpha))

    res = optimize.minimize(
        neg,
        post.mean[:2],
        method="SLSQP",
        bounds=[(0, 1), (0, 1)],
        constraints=[{"type": "ineq", "fun": lambda q: 1.0 - q[0] - q[1]}],
        options={"ftol": 1e-15, "maxiter": 500},
    )
    # atol for the zero on the edge, where the optimiser lands within ~1e-16.
    np.testing.assert_allclose(post.mode[:2], res.x, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- 8. moments, simulate


def test_moments_below_is_infinite(x):
    assert _solve(x).posterior.moments_below == np.inf


def test_simulate_shapes_and_support(rng):
    theta, codes = dc.simulate(rng, n=25, categories=CATEGORIES, concentration=CONC)
    assert theta.shape == (3,) and theta.sum() == pytest.approx(1.0, rel=1e-15)
    assert codes.shape == (25,) and set(codes.tolist()) <= {0, 1, 2}
    _solve(codes)
