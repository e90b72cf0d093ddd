"""Tests for analytic.bayes_optimal: finite hypothesis spaces and their classifiers.

References are independent of the module: Mitchell (1997)'s worked examples
(sec. 6.2.1 medical test, sec. 6.7 three hypotheses, Table 2.1 / Fig. 2.3
EnjoySport version space, Table 2.6 new instances), Bayes' rule written out
with Python loops over hypotheses and observations, brute-force consistency
checks, scipy.stats.multinomial, and the Gibbs bound checked pointwise and
by simulation.  Exact quantities are compared at 1e-12 relative.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from analytic import ExactPosterior
from analytic import bayes_optimal as bo

RTOL = 1e-12

ENJOY_ATTRS = ("sky", "air_temp", "humidity", "wind", "water", "forecast")
ENJOY_DOMAINS = (
    ("Sunny", "Cloudy", "Rainy"),
    ("Warm", "Cold"),
    ("Normal", "High"),
    ("Strong", "Weak"),
    ("Warm", "Cool"),
    ("Same", "Change"),
)
ENJOY_ROWS = [
    ("Sunny", "Warm", "Normal", "Strong", "Warm", "Same", 1),
    ("Sunny", "Warm", "High", "Strong", "Warm", "Same", 1),
    ("Rainy", "Cold", "High", "Strong", "Warm", "Change", 0),
    ("Sunny", "Warm", "High", "Strong", "Cool", "Change", 1),
]


def _codes(rows):
    return np.array([[d.index(v) for v, d in zip(r[:6], ENJOY_DOMAINS)] for r in rows])


@pytest.fixture(scope="module")
def enjoy_space():
    return bo.conjunctions(attributes=ENJOY_ATTRS, domains=ENJOY_DOMAINS)


@pytest.fixture(scope="module")
def enjoy(enjoy_space):
    return bo.concept_problem(
        space=enjoy_space, x=_codes(ENJOY_ROWS), y=np.array([r[-1] for r in ENJOY_ROWS])
    )


def _random_problem(rng, m=6, n=8, deterministic=True):
    prob = (
        rng.integers(0, 2, size=(m, n)).astype(float)
        if deterministic
        else rng.uniform(0.05, 0.95, size=(m, n))
    )
    return bo.explicit(
        hypotheses=[f"h{i}" for i in range(m)],
        prob=prob,
        y=rng.integers(0, 2, size=n),
        new_prob=rng.integers(0, 2, size=(m, 5)),
        new_names=[f"x{j}" for j in range(5)],
    )


# ---------------------------------------------------------- 1. Mitchell's examples


def test_medical_test_posterior_is_0_21():
    """Mitchell sec. 6.2.1: P(cancer | +) = .98 x .008 / (.98 x .008 + .03 x .992) = 0.21."""
    problem = bo.explicit(hypotheses=("cancer", "no-cancer"), prob=[[0.98], [0.03]], y=[1])
    log_post, log_ev = bo.log_posterior(problem=problem, noise=0.0, prior=(0.008, 0.992))
    num = 0.98 * 0.008
    den = num + 0.03 * 0.992
    np.testing.assert_allclose(np.exp(log_post), [num / den, 1 - num / den], rtol=RTOL)
    assert math.exp(log_ev) == pytest.approx(den, rel=RTOL)
    assert round(float(np.exp(log_post[0])), 2) == 0.21


def test_three_hypotheses_map_and_bayes_optimal_disagree():
    """Mitchell sec. 6.7: P(h|D) = .4, .3, .3; on x h1 says +, h2 and h3 say -."""
    post = np.array([0.4, 0.3, 0.3])
    cls = bo.classify(posterior_probs=post, new_prob=np.array([[1.0], [0.0], [0.0]]))
    assert cls.p_positive[0] == pytest.approx(0.4, rel=RTOL)
    assert cls.map_label[0] == 1 and cls.bayes_optimal[0] == 0  # MAP says +, optimal says -
    np.testing.assert_allclose(
        [cls.error_bayes_optimal[0], cls.error_map[0], cls.error_gibbs[0]],
        [0.4, 0.6, 2 * 0.4 * 0.6],
        rtol=RTOL,
    )


def test_enjoy_sport_space_has_973_hypotheses(enjoy_space):
    """Mitchell sec. 2.3: 1 + 4 x 3^5 = 973 semantically distinct hypotheses."""
    assert enjoy_space.size == 973 == 1 + 4 * 3**5
    assert enjoy_space.names[-1] == bo.EMPTY and len(set(enjoy_space.names)) == 973


def test_enjoy_sport_version_space_is_mitchells_six(enjoy):
    """Mitchell Fig. 2.3: S = {<Sunny,Warm,?,Strong,?,?>}, G = {<Sunny,?...>, <?,Warm,...>}."""
    expected = {
        "<Sunny,Warm,?,Strong,?,?>",
        "<Sunny,?,?,Strong,?,?>",
        "<Sunny,Warm,?,?,?,?>",
        "<?,Warm,?,Strong,?,?>",
        "<Sunny,?,?,?,?,?>",
        "<?,Warm,?,?,?,?>",
    }
    vs = bo.version_space(problem=enjoy)
    assert {enjoy.hypotheses[i] for i in vs} == expected
    log_post, log_ev = bo.log_posterior(problem=enjoy, noise=0.0)
    post = np.exp(log_post)
    np.testing.assert_allclose(post[vs], 1 / 6, rtol=RTOL)  # Mitchell eq. 6.4: 1/|VS|
    assert np.count_nonzero(post) == 6
    assert log_ev == pytest.approx(math.log(6 / 973), rel=RTOL)  # P(D) = |VS| / |H|


def test_enjoy_sport_new_instances_vote_as_mitchell_table_2_6(enjoy, enjoy_space):
    """A: all six say +, B: all -, C: 3 vs 3, D: 2 + and 4 - (Mitchell sec. 2.6.3)."""
    new = [
        ("Sunny", "Warm", "Normal", "Strong", "Cool", "Change"),
        ("Rainy", "Cold", "Normal", "Weak", "Warm", "Same"),
        ("Sunny", "Warm", "Normal", "Weak", "Warm", "Same"),
        ("Sunny", "Cold", "Normal", "Strong", "Warm", "Same"),
    ]
    post = np.exp(bo.log_posterior(problem=enjoy, noise=0.0)[0])
    cls = bo.classify(posterior_probs=post, new_prob=enjoy_space.predict(_codes(new)))
    np.testing.assert_allclose(cls.p_positive, [1.0, 0.0, 0.5, 2 / 6], rtol=RTOL, atol=1e-15)
    assert list(cls.tie) == [False, False, True, False]
    assert list(cls.bayes_optimal) == [1, 0, 0, 0]


def test_off_training_set_instances_are_the_other_92(enjoy):
    assert len(enjoy.new_names) == 96 - 4
    assert "(Sunny,Warm,Normal,Strong,Warm,Same)" not in enjoy.new_names


# ---------------------------------------------------------- 2. Bayes' rule


def test_bayes_rule_written_out_with_loops(rng):
    """log P(h|D) + log P(D) = log P(h) + sum_i log P(y_i | h), noisy labels, any prior."""
    problem = _random_problem(rng, deterministic=False)
    prior = rng.uniform(0.5, 2.0, size=6)
    noise = 0.13
    log_post, log_ev = bo.log_posterior(problem=problem, noise=noise, prior=prior)
    for h in range(6):
        ll = 0.0
        for i, y in enumerate(problem.y):
            q = problem.prob[h, i] * (1 - noise) + (1 - problem.prob[h, i]) * noise
            ll += math.log(q if y == 1 else 1 - q)
        assert log_post[h] + log_ev == pytest.approx(
            math.log(prior[h] / prior.sum()) + ll, rel=RTOL
        )


def test_sequential_updates_equal_one_batch(rng):
    problem = _random_problem(rng, deterministic=False)
    first = bo.explicit(hypotheses=problem.hypotheses, prob=problem.prob[:, :3], y=problem.y[:3])
    second = bo.explicit(hypotheses=problem.hypotheses, prob=problem.prob[:, 3:], y=problem.y[3:])
    post1 = np.exp(bo.log_posterior(problem=first, noise=0.1)[0])
    post2 = np.exp(bo.log_posterior(problem=second, noise=0.1, prior=post1)[0])
    batch = np.exp(bo.log_posterior(problem=problem, noise=0.1)[0])
    np.testing.assert_allclose(post2, batch, rtol=1e-12)


def test_no_data_returns_the_prior(rng):
    problem = bo.explicit(hypotheses=("a", "b", "c"), prob=np.zeros((3, 0)), y=[])
    post = np.exp(bo.log_posterior(problem=problem, noise=0.2, prior=(1.0, 2.0, 5.0))[0])
    np.testing.assert_allclose(post, [1 / 8, 2 / 8, 5 / 8], rtol=RTOL)


def test_uniform_prior_noise_free_gives_one_over_version_space(rng):
    """For random deterministic spaces: consistent by brute force, then 1/|VS| (Mitchell 6.4)."""
    for _ in range(20):
        problem = _random_problem(rng, m=12, n=3)
        consistent = [
            h for h in range(12) if all(problem.prob[h, i] == problem.y[i] for i in range(3))
        ]
        if not consistent:
            with pytest.raises(ValueError, match="no hypothesis is consistent"):
                bo.log_posterior(problem=problem, noise=0.0)
            continue
        post = np.exp(bo.log_posterior(problem=problem, noise=0.0)[0])
        expected = np.zeros(12)
        expected[consistent] = 1 / len(consistent)
        np.testing.assert_allclose(post, expected, rtol=RTOL, atol=0.0)


def test_log_space_survives_thousands_of_observations(rng):
    """A product of 5000 likelihoods underflows; the log-space posterior does not."""
    n = 5000
    prob = np.vstack([np.full(n, 0.6), np.full(n, 0.5), np.full(n, 0.4)])
    y = (rng.random(n) < 0.6).astype(int)
    problem = bo.explicit(hypotheses=("a", "b", "c"), prob=prob, y=y)
    assert np.prod(np.where(y == 1, 0.6, 0.4)) == 0.0  # the naive product underflows
    post = np.exp(bo.log_posterior(problem=problem, noise=0.0)[0])
    assert np.all(np.isfinite(post)) and post.sum() == pytest.approx(1.0, rel=1e-12)
    k = int(y.sum())
    ratio = k * math.log(0.6 / 0.5) + (n - k) * math.log(0.4 / 0.5)
    assert math.log(post[0] / post[1]) == pytest.approx(ratio, rel=1e-9)


# ---------------------------------------------------------- 3. classifiers and the Gibbs bound


def test_gibbs_bound_holds_pointwise_and_on_average(rng):
    """2p(1-p) <= 2 min(p, 1-p), so E[error_Gibbs] <= 2 E[error_BayesOptimal]."""
    for _ in range(200):
        post = rng.dirichlet(np.full(7, 0.5))
        cls = bo.classify(posterior_probs=post, new_prob=rng.integers(0, 2, size=(7, 30)))
        assert np.all(cls.error_gibbs <= 2 * cls.error_bayes_optimal + 1e-15)
        assert np.all(cls.error_bayes_optimal <= cls.error_map + 1e-15)
        assert cls.gibbs_bound_holds
        e = cls.mean_errors
        assert e["gibbs"] <= 2 * e["bayes_optimal"] + 1e-15


def test_gibbs_error_by_simulation(rng):
    """The Gibbs algorithm's error rate against labels from the predictive is 2 p (1 - p).

    N = 200,000 (instance, draw) pairs; binomial SE; |z| < 5 fails by chance
    with probability 6e-7.
    """
    post = np.array([0.5, 0.2, 0.2, 0.1])
    new_prob = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 1]], dtype=float)
    cls = bo.classify(posterior_probs=post, new_prob=new_prob)
    reps = 200_000 // 3
    wrong = np.zeros(3)
    answers = np.array(
        [bo.gibbs_predict(rng, posterior_probs=post, new_prob=new_prob) for _ in range(reps)]
    )
    truth = rng.random((reps, 3)) < cls.p_positive  # the label from the posterior predictive
    wrong = (answers != truth).mean(axis=0)
    se = np.sqrt(cls.error_gibbs * (1 - cls.error_gibbs) / reps)
    assert np.all(np.abs((wrong - cls.error_gibbs) / se) < 5.0)


def test_bayes_optimal_is_never_worse_than_any_hypothesis(rng):
    """Mitchell sec. 6.7: no classifier using the same space and prior does better on average."""
    post = rng.dirichlet(np.ones(5))
    new_prob = rng.integers(0, 2, size=(5, 40)).astype(float)
    cls = bo.classify(posterior_probs=post, new_prob=new_prob)
    for h in range(5):
        err_h = np.where(new_prob[h] == 1, 1 - cls.p_positive, cls.p_positive).mean()
        assert cls.mean_errors["bayes_optimal"] <= err_h + 1e-15


# ---------------------------------------------------------- 4. the conjunctive space


def test_conjunctions_predict_like_brute_force(rng):
    domains = (("a", "b", "c"), ("x", "y"), ("p", "q"))
    space = bo.conjunctions(attributes=("u", "v", "w"), domains=domains)
    assert space.size == 4 * 3 * 3 + 1
    instances = np.array(list(itertools.product(range(3), range(2), range(2))))
    says = space.predict(instances)
    for h, name in enumerate(space.names):
        for i, inst in enumerate(instances):
            if name == bo.EMPTY:
                expected = 0.0
            else:
                parts = name.strip("<>").split(",")
                expected = float(
                    all(p == "?" or p == d[v] for p, d, v in zip(parts, domains, inst))
                )
            assert says[h, i] == expected, (name, inst)


def test_digits_index_the_hypotheses_in_c_order(enjoy_space):
    """Hypothesis r has mixed-radix digits (constraint + 1) in C order, as the PyMC model uses."""
    factors = enjoy_space.factors
    strides = np.cumprod((1, *factors[:0:-1]))[::-1]
    digits = enjoy_space.constraints + 1
    np.testing.assert_array_equal(digits @ strides, np.arange(enjoy_space.size - 1))


def test_too_large_spaces_are_refused():
    with pytest.raises(ValueError, match="fewer attributes"):
        bo.conjunctions(attributes=[f"a{j}" for j in range(12)], domains=[("0", "1", "2")] * 12)


# ---------------------------------------------------------- 5. buckets and their posterior


def test_buckets_partition_by_mass():
    post = np.array([0.15, 0.25, 0.5, 0.06, 0.0, 0.03, 0.01])
    names = [f"h{i}" for i in range(7)]
    parts = bo.buckets(posterior_probs=post, hypotheses=names, top=3, min_mass=0.02)
    assert parts.names == ("h0", "h1", "h2", "other")  # the top 3, in the space's order
    np.testing.assert_array_equal(parts.of_hypothesis, [0, 1, 2, 3, -1, 3, 3])
    # The lumped rest below min_mass joins the least probable single bucket.
    parts = bo.buckets(posterior_probs=post, hypotheses=names, top=5, min_mass=0.03)
    assert parts.names == ("h0", "h1", "h2", "h3", "h5 + other")
    np.testing.assert_array_equal(parts.of_hypothesis, [0, 1, 2, 3, -1, 4, 4])
    with pytest.raises(ValueError, match="all its mass"):
        bo.buckets(
            posterior_probs=np.array([1.0, 0.0]), hypotheses=["a", "b"], top=3, min_mass=0.02
        )


def test_bucket_posterior_is_one_multinomial_draw(rng):
    p = np.array([0.5, 0.3, 0.2])
    post = bo.BucketPosterior(probs=p, bucket_names=("a", "b", "c"))
    assert isinstance(post, ExactPosterior)
    ref = stats.multinomial(1, p)
    np.testing.assert_allclose(post.mean, ref.mean(), rtol=RTOL)
    np.testing.assert_allclose(post.cov, ref.cov(), rtol=RTOL)
    draws = post.sample(rng, 5)
    np.testing.assert_allclose(post.logpdf(draws), ref.logpmf(draws), rtol=RTOL)
    assert post.logpdf(np.array([0.5, 0.5, 0.0])) == -np.inf
    np.testing.assert_array_equal(post.mode, [1.0, 0.0, 0.0])
    assert (
        bo.BucketPosterior(probs=np.array([0.4, 0.4, 0.2]), bucket_names=("a", "b", "c")).mode
        is None
    )  # tied


def test_solve_returns_bucket_answer(enjoy):
    ans = bo.solve(x=enjoy, noise=0.0)
    assert len(ans.parameters) == 6
    np.testing.assert_allclose(ans.posterior.mean, 1 / 6, rtol=RTOL)
    assert ans.mle is None  # all six are consistent: the ML hypothesis is not unique
    assert ans.log_evidence == pytest.approx(math.log(6 / 973), rel=RTOL)


# ---------------------------------------------------------- 6. bad input


@pytest.mark.parametrize("noise", [-0.1, 0.5, 0.7, float("nan")])
def test_noise_out_of_range_is_refused(enjoy, noise):
    with pytest.raises(ValueError, match=r"noise must be in \[0, 0.5\)"):
        bo.log_posterior(problem=enjoy, noise=noise)


def test_prior_of_wrong_length_is_refused(enjoy):
    with pytest.raises(ValueError, match="prior has 2 weight"):
        bo.log_posterior(problem=enjoy, noise=0.0, prior=(1.0, 2.0))
