"""The agreement test without MCMC: exact iid draws stand in for the sampler.

Under the null every z-score must be standard normal and the family-wise
false-alarm rate at most alpha; with draws from a wrong posterior the test
must fire.  These tests are seeded numpy only (no PyTensor), so each outcome
is reproducible; the stated false-failure rates say how unlucky a seed would
have to be.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import analytic.beta_binomial as bb
import analytic.dirichlet_categorical as dc
import analytic.gamma_poisson as gp
import analytic.normal_inverse_gamma as nig
import analytic.normal_known_variance as nkv
import analytic.pareto_uniform as pu
from compare.core.agreement import agreement_test, bonferroni_threshold, holm
from compare.studies.calibration import iid_null

REPLICATIONS = 1000
CHAINS, DRAWS = 4, 1000

POSTERIORS = {
    "normal": nkv.NormalPosterior(loc=0.3, sd=0.7),
    "beta": bb.BetaPosterior(3.5, 12.0),
    "gamma": gp.GammaPosterior(4.2, 1.7),
    "nig": nig.NIGPosterior(mu=0.4, kappa=8.0, alpha=9.5, beta=6.0),
    "pareto": pu.ParetoPosterior(scale=2.0, shape=12.0),
    "pareto-heavy": pu.ParetoPosterior(scale=2.0, shape=3.5),  # quantile tests only
    "dirichlet": dc.DirichletPosterior(np.array([3.0, 5.5, 9.0]), ("a", "b", "c")),
}


def test_holm_matches_hand_computation():
    # Holm (1979): sorted p = .01, .02, .04 with m = 3 -> .03, .04, .04.
    np.testing.assert_allclose(holm(np.array([0.04, 0.01, 0.02])), [0.04, 0.03, 0.04])
    np.testing.assert_allclose(holm(np.array([0.5, 0.9])), [1.0, 1.0])


def test_bonferroni_threshold_is_the_two_sided_normal_quantile():
    # alpha / (2m) in each tail: 0.05 over 5 tests -> 0.005 per tail -> 2.5758.
    assert bonferroni_threshold(0.05, 5) == pytest.approx(stats.norm.isf(0.005), rel=1e-12)


@pytest.mark.parametrize("name", list(POSTERIORS))
def test_iid_null_is_calibrated(name, rng):
    """z-scores ~ N(0, 1) per quantity and family-wise rate <= alpha + 3 SE.

    False-failure odds: the KS check is Bonferroni-corrected to 1e-5 per
    posterior; the rate check fails by chance with probability <= 0.13%
    when the realised rate equals alpha (Bonferroni makes it smaller).
    """
    # A reference of its own per replication (20,000 draws: its share of each
    # standard error is 1/20,000, included): calibration over reference sets.
    study = iid_null(
        POSTERIORS[name],
        replications=REPLICATIONS,
        chains=CHAINS,
        draws=DRAWS,
        rng=rng,
        n_reference=20_000,
    )
    m = len(study.names)
    ks = np.array([stats.kstest(study.z[:, j], "norm").pvalue for j in range(m)])
    assert ks.min() * m > 1e-5, dict(zip(study.names, ks.round(6)))
    for alpha in (0.01, 0.05):
        rate = study.false_alarm_rate(alpha)
        se = np.sqrt(alpha * (1 - alpha) / REPLICATIONS)
        assert rate <= alpha + 3 * se, f"{name}: false-alarm rate {rate} at alpha={alpha}"


def test_quantities_of_each_kind_of_posterior():
    """Gaussian: whitened means and the PIT's scale, skew and tail components; any
    other: the four components of each marginal's PIT, heavy tails included (no
    moment is needed); pairs: rank dependence; a Dirichlet's last coordinate is not
    free (the others fix it) and is not tested."""
    rng = np.random.default_rng(0)
    names = {}
    for key in ("normal", "pareto", "pareto-heavy", "nig", "dirichlet"):
        post = POSTERIORS[key]
        draws = post.sample(rng, 800).reshape(2, 400, -1)
        names[key] = [q.name for q in agreement_test(draws, post, alpha=0.01).quantities]
    assert names["normal"] == ["mean:mu", "scale:mu", "skew:mu", "kurt:mu"]
    battery = ["loc:theta", "scale:theta", "skew:theta", "kurt:theta"]
    assert names["pareto"] == names["pareto-heavy"] == battery
    assert names["nig"][:3] == ["loc:mu", "loc:sigma2", "scale:mu"]
    assert names["nig"][-1] == "dep:mu,sigma2" and len(names["nig"]) == 9
    assert names["dirichlet"][-1] == "dep:p[a],p[b]"
    assert not any(n.endswith("p[c]") for n in names["dirichlet"])


def test_legendre_components_are_orthonormal_under_the_uniform():
    """E[L_j L_k] = 1{j = k} and E[L_k] = 0 for w uniform on (0, 1): Gauss-Legendre
    quadrature with 8 nodes is exact for these polynomials (degree <= 8)."""
    from compare.core.agreement import legendre

    nodes, weights = np.polynomial.legendre.leggauss(8)
    w, weight = (nodes + 1) / 2, weights / 2
    values = np.array([legendre(w, k) for k in (1, 2, 3, 4)])
    np.testing.assert_allclose(values @ weight, 0.0, atol=1e-14)
    np.testing.assert_allclose((values * weight) @ values.T, np.eye(4), atol=1e-13)
    with pytest.raises(ValueError, match="degree must be 1, 2, 3 or 4"):
        legendre(w, 5)


def test_t_as_normal_is_the_normal_deviate_of_the_t_tail():
    """Same two-sided tail probability; the identity for infinite df; signs kept."""
    from compare.core.agreement import t_as_normal

    z = np.array([-5.0, 4.26, 2.0, 0.0])
    out = t_as_normal(z, np.array([80.0, 80.0, np.inf, 10.0]))
    assert out[0] == pytest.approx(-stats.norm.isf(stats.t.sf(5.0, 80)), rel=1e-10)
    assert out[1] == pytest.approx(stats.norm.isf(stats.t.sf(4.26, 80)), rel=1e-10)
    assert out[2] == 2.0 and out[3] == 0.0
    assert 3.9 < out[1] < 4.26  # the t tail is heavier: the same z is less extreme
    # Far out the t tail is still a number (1e-160 at 1e4 with 50 df): no underflow.
    assert 20.0 < t_as_normal(np.array([1e4]), np.array([50.0]))[0] < 1e4


def test_gaussian_declared_posterior_catches_a_wrong_shape():
    """Issue 60: uniform draws with the exact mean and variance agreed with N(0, 1)
    10 times in 10 when only means and variances were tested. The PIT's tail
    component sees them: E L_4(Phi(u)) = -0.24 per draw, z ~ -0.24 sqrt(8000) ~ -21.
    Normal draws agree (false-failure odds below alpha = 1e-4 each)."""
    from compare.interfaces.api import Exact

    post = Exact(mean=[0.0], cov=[[1.0]], gaussian=True).as_posterior(["mu"])
    rng = np.random.default_rng(60)
    caught = agreed = 0
    for _ in range(10):
        uniform = rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size=(4, 2000, 1))
        caught += not agreement_test(uniform, post, alpha=1e-4).passed
        normal = rng.standard_normal((4, 2000, 1))
        agreed += agreement_test(normal, post, alpha=1e-4).passed
    assert caught == 10 and agreed == 10


@pytest.mark.parametrize(
    "name, wrong",
    [
        ("normal", nkv.NormalPosterior(loc=0.3, sd=0.7 * 1.1)),  # sd 10% too wide
        ("normal", nkv.NormalPosterior(loc=0.3 + 0.7 * 0.1, sd=0.7)),  # mean off by 0.1 sd
        ("beta", bb.BetaPosterior(3.5 * 1.1, 12.0)),
        ("nig", nig.NIGPosterior(mu=0.4, kappa=8.0, alpha=9.5, beta=6.0 * 1.1)),
        ("dirichlet", dc.DirichletPosterior(np.array([3.0, 5.5, 9.0]) * 1.2, ("a", "b", "c"))),
    ],
)
def test_draws_from_a_wrong_posterior_are_caught(name, wrong, rng):
    """Power with iid draws: 40 replications at the default alpha, all caught.

    Each of these shifts a moment by >= 10% of a posterior sd (or the
    variance by >= 20%), which at 4000 draws puts the expected |z| above 6
    against a threshold near 4.3.
    """
    caught = 0
    for _ in range(40):
        draws = wrong.sample(rng, CHAINS * DRAWS).reshape(CHAINS, DRAWS, -1)
        caught += not agreement_test(draws, POSTERIORS[name], alpha=1e-4).passed
    assert caught >= 38


def test_constant_quantity_uses_nominal_sample_size():
    """A sampler stuck far out in the tail gives a huge z, not a NaN."""
    post = POSTERIORS["beta"]
    stuck = np.full((4, 500, 1), float(post.marginal(0).ppf(0.01)))
    result = agreement_test(stuck, post, alpha=1e-4)
    assert np.all(np.isfinite([q.z for q in result.quantities]))
    assert not result.passed
    assert {q.name for q in result.flagged} >= {"loc:p", "scale:p"}


def test_rejects_draws_of_the_wrong_shape():
    post = POSTERIORS["nig"]
    with pytest.raises(ValueError, match=r"draws must have shape \(chain, draw, 2\)"):
        agreement_test(np.zeros((4, 100, 3)), post, alpha=1e-4)


class _NoMarginal:
    """A one-parameter posterior whose marginal is not given (as a logistic regression
    with one weight): everything else delegates to the Beta posterior."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def marginal(self, index):
        return None


def test_one_free_coordinate_without_a_marginal_uses_exact_draws():
    """Regression (issue 15): f = 1 with marginal None crashed with AttributeError.

    Its PIT is now the randomised rank among 200,000 exact draws: uniform under the
    null (KS p-value above 1e-4 on 8000 iid draws: a false failure 1 time in 10,000),
    the whole battery tested with finite z, and Beta draws 10% off caught."""
    from compare.core.agreement import PIT_STREAM, _null

    beta = POSTERIORS["beta"]
    post = _NoMarginal(beta)
    pit = _null(post, 200_000, 7).plan[0]
    assert pit.kind == "rank" and pit.reference.size == 200_000
    x = beta.sample(np.random.default_rng(9), 8000)[:, 0]
    w = pit(x, np.random.default_rng([7, PIT_STREAM]).random(x.size))
    assert stats.kstest(w, "uniform").pvalue > 1e-4
    draws = beta.sample(np.random.default_rng(9), 2000).reshape(2, 1000, 1)
    result = agreement_test(draws, post, alpha=1e-4)
    assert [q.name for q in result.quantities] == ["loc:p", "scale:p", "skew:p", "kurt:p"]
    assert np.all(np.isfinite([q.z for q in result.quantities])) and result.passed
    wrong = bb.BetaPosterior(3.5 * 1.1, 12.0).sample(np.random.default_rng(10), 8000)
    assert not agreement_test(wrong.reshape(4, 2000, 1), post, alpha=1e-4).passed


def test_dependence_null_is_the_reference_draws_rank_correlation():
    """The null mean of L1(w_a) L1(w_b) for a Dirichlet (negatively dependent) from the
    reference draws equals its mean over an independent set of exact draws within 5
    Monte Carlo SE (false-failure odds ~6e-7); independence (0) is far outside."""
    from compare.core.agreement import _make_null, legendre

    post = POSTERIORS["dirichlet"]
    null = _make_null(post, 100_000, 3)
    mean, sd = null.dep_mean, null.dep_sd
    x = post.sample(np.random.default_rng(4), 200_000)
    product = legendre(post.marginal(0).cdf(x[:, 0]), 1) * legendre(
        post.marginal(1).cdf(x[:, 1]), 1
    )
    se = product.std() / np.sqrt(x.shape[0]) + sd[0] / np.sqrt(100_000)
    assert abs(mean[0] - product.mean()) < 5 * se
    assert abs(mean[0]) > 20 * se and sd[0] == pytest.approx(product.std(), rel=0.02)
    # Without marginals the coordinates are ranks among the same reference draws
    # (each draw's rank among the others): the same null within the two sets' error.
    ranked = _make_null(_NoMarginal(post), 100_000, 5)
    assert {pit.kind for pit in ranked.plan.values()} == {"rank"}
    assert abs(ranked.dep_mean[0] - product.mean()) < 5 * se + 5 * sd[0] / np.sqrt(100_000)


def test_quantity_constant_under_the_null_is_checked_exactly_never_nan():
    """Regression (issue 15): a Bernoulli(1/2) indicator had u^2 = 1 on every draw, so
    its null sd was 0 and z was 0/0 = NaN (verdict DISAGREE). Its PIT is now
    randomised (uniform under the null), and whether every draw lies in the support
    is checked exactly: z = 0 when it does, z = -inf (fail) when one draw is off the
    support; that check does not count in the Bonferroni m."""
    from compare.interfaces.api import Exact

    exact = Exact(mean=[0.5], cov=[[0.25]], marginals=[stats.bernoulli(0.5)])
    post = exact.as_posterior(["h"])
    rng = np.random.default_rng(3)
    draws = rng.integers(0, 2, size=(2, 500, 1)).astype(float)
    result = agreement_test(draws, post, alpha=1e-4)
    by_name = {q.name: q for q in result.quantities}
    assert set(by_name) == {"loc:h", "scale:h", "skew:h", "kurt:h", "support:h"}
    assert by_name["support:h"].null_sd == 0.0 and by_name["support:h"].z == 0.0
    assert result.constant == (by_name["support:h"],)
    assert result.threshold == pytest.approx(bonferroni_threshold(1e-4, 4))
    assert np.isfinite(result.max_abs_z) and result.passed
    off = draws.copy()
    off[1, 7, 0] = 0.3  # not a value a Bernoulli takes
    bad = agreement_test(off, post, alpha=1e-4)
    support = {q.name: q for q in bad.quantities}["support:h"]
    assert support.z == -np.inf and support.p_holm == 0.0 and not bad.passed
    assert not np.isnan([q.z for q in bad.quantities]).any()


def _gaussian_posterior(d: int):
    from compare.interfaces.api import Exact, ExactPosteriorAdapter

    names = tuple(f"x{i}" for i in range(d))
    exact = Exact(mean=np.zeros(d), cov=np.eye(d), gaussian=True)
    return ExactPosteriorAdapter(exact, names)


def test_spread_test_is_calibrated_on_iid_draws():
    """The spread test's p-value on exact draws of a 10-d Gaussian is uniform:
    its rate at 0.05 and 0.01 within 3 binomial SE (a chance failure <= 0.3%).
    Its tail at the thresholds used is measured by compare/studies/tails.py."""
    rng = np.random.default_rng(7)
    post = _gaussian_posterior(10)
    p = []
    for _ in range(300):
        agreement = agreement_test(rng.standard_normal((4, 1000, 10)), post, alpha=1e-4)
        (spread,) = [q for q in agreement.quantities if q.name == "spread:location"]
        assert np.isfinite(spread.estimate) and spread.ess >= 20
        p.append(spread.p_value)
    p = np.array(p)
    for level in (0.05, 0.01):
        se = np.sqrt(level * (1 - level) / p.size)
        assert abs(np.mean(p < level) - level) <= 3 * se, (level, np.mean(p < level))


def test_spread_test_catches_a_small_shift_of_every_mean():
    """Planted: every whitened mean shifted by 0.03 sd (4 x 2000 draws, d = 10).
    A single mean's z is about 0.03 sqrt(8000) = 2.7, short of the threshold (4.9)
    at alpha 1e-4 (max |z| over the means caught 5 of 20 such runs); the spread
    test's noncentrality is 10 x 2.7^2 = 72 (it caught 20 of 20): the agreement
    test fails in at least 8 of 10 runs, decided by the spread quantity (a chance
    failure about 1%). With fewer than 3 location quantities there is no spread
    test."""
    rng = np.random.default_rng(8)
    post = _gaussian_posterior(10)
    caught = 0
    for _ in range(10):
        agreement = agreement_test(rng.standard_normal((4, 2000, 10)) + 0.03, post, alpha=1e-4)
        worst = max(agreement.quantities, key=lambda q: abs(q.z))
        caught += (not agreement.passed) and worst.name == "spread:location"
    assert caught >= 8, caught
    small = agreement_test(rng.standard_normal((4, 1000, 2)), _gaussian_posterior(2), alpha=0.01)
    assert not any(q.name.startswith("spread:") for q in small.quantities)


def test_spread_test_is_not_made_without_enough_batches():
    """Draws so autocorrelated that fewer than f + 10 batches of three ESS windows
    fit: the spread quantity is reported (the Bonferroni family does not change
    with the run) with z 0 and a NaN estimate, never a false alarm."""
    rng = np.random.default_rng(9)
    post = _gaussian_posterior(30)
    noise = rng.standard_normal((4, 1000, 30))
    walk = np.cumsum(noise, axis=1) / np.sqrt(np.arange(1, 1001))[None, :, None]
    agreement = agreement_test(walk, post, alpha=1e-4)
    (spread,) = [q for q in agreement.quantities if q.name == "spread:location"]
    assert spread.z == 0.0 and spread.p_value == 1.0 and np.isnan(spread.estimate)
