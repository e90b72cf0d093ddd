"""Tests for analytic.gaussian_mixture: EM, MAP-EM and the complete-data posterior.

References are independent of the module: scikit-learn's GaussianMixture
(the same EM map from the same start, so the same fixed point), scipy.stats
densities and moments (multivariate_normal, dirichlet, wishart, invwishart,
multivariate_t, t, chi2), scipy.optimize.minimize over an unconstrained
parameterisation (MAP stationarity), a one-point-at-a-time rank-one
Normal-Wishart recursion (Murphy 2007, "Conjugate Bayesian analysis of the
Gaussian distribution", the Normal-Wishart update with n = 1), a Polya-urn x Student-t chain rule
for the evidence, and hand enumeration for the k-means++ seeding
probabilities.  Exact quantities are compared at ~1e-10 relative; EM fixed
points at the level their convergence tolerance implies (stated at each use);
iid draws by z-tests at Z_MAX = 5 (5.7e-7 two-sided per check).
"""

from __future__ import annotations

import math
import re
from itertools import pairwise, permutations

import numpy as np
import pytest
from scipy import optimize, special, stats
from sklearn.mixture import GaussianMixture

from analytic import ExactAnswer, ExactPosterior
from analytic import gaussian_mixture as gm
from tests.analytic.reference import N_DRAWS, RTOL, Z_MAX, sampler_z_scores

EPS = np.finfo(float).eps
REG = 1e-6
EM_TOL = 1e-12  # per data point; see test_em_matches_scikit_learn


# ---------------------------------------------------------------- data


def _spd(rng, d: int, lo: float = 0.5, hi: float = 1.5) -> np.ndarray:
    """A random covariance with eigenvalues in [lo, hi]."""
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return (q * rng.uniform(lo, hi, size=d)) @ q.T


def _separated_params(rng, k: int, d: int, gap: float = 10.0) -> gm.MixtureParams:
    """Components spaced ``gap`` apart along the first axis; sds <= sqrt(1.5)."""
    means = rng.normal(size=(k, d))
    means[:, 0] += gap * np.arange(k)
    weights = np.arange(1.0, k + 1.0)
    return gm.MixtureParams(
        weights=weights / weights.sum(),
        means=means,
        covariances=np.stack([_spd(rng, d) for _ in range(k)]),
    )


def _old_faithful_like(rng, n: int = 272) -> np.ndarray:
    """Two correlated clusters at the scale of the Old Faithful data (eruption
    minutes, waiting minutes): a mixture fitted to the 272 eruptions
    (Azzalini & Bowman 1990; mclust's two-component VVV fit, rounded)."""
    params = gm.MixtureParams(
        weights=[0.356, 0.644],
        means=[[2.037, 54.48], [4.290, 79.97]],
        covariances=[[[0.0692, 0.4352], [0.4352, 33.70]], [[0.1700, 0.9406], [0.9406, 36.05]]],
    )
    return gm.simulate_from(rng, n=n, params=params)[0]


def _start(rng, x: np.ndarray, k: int) -> gm.MixtureParams:
    """Equal weights, k-means++ centres, the data covariance for every component."""
    d = x.shape[1]
    cov = np.atleast_2d(np.cov(x.T))
    return gm.MixtureParams(
        weights=np.full(k, 1.0 / k),
        means=gm.kmeans_plus_plus(x=x, components=k, rng=rng),
        covariances=np.broadcast_to(cov, (k, d, d)),
    )


def _prior(d: int, **kw) -> gm.NormalWishartPrior:
    base = dict(
        alpha=2.0, m0=np.linspace(-0.5, 0.5, d), kappa0=0.5, nu0=d + 2.5, psi0=0.8 * np.eye(d) + 0.1
    )
    base.update(kw)
    return gm.NormalWishartPrior(**base)


def _inv(a: np.ndarray) -> np.ndarray:
    """Reference inverse by an LU solve (the module never forms one)."""
    return np.linalg.solve(a, np.eye(a.shape[-1]))


# ---------------------------------------------------------------- references


def _log_prior_scipy(w, mu, lam, prior: gm.NormalWishartPrior) -> float:
    """log Dir(w) + sum_k [log Wishart(Lambda_k; nu0, psi0^-1) + log N(mu_k; m0, (kappa0 Lambda_k)^-1)]."""
    k = w.size
    out = stats.dirichlet.logpdf(w, np.full(k, prior.alpha))
    w0 = _inv(prior.psi0)
    for j in range(k):
        out += stats.wishart.logpdf(lam[j], df=prior.nu0, scale=w0)
        out += stats.multivariate_normal.logpdf(mu[j], prior.m0, _inv(prior.kappa0 * lam[j]))
    return float(out)


def _recursive_posterior(x, labels, prior: gm.NormalWishartPrior, k: int):
    """Normal-Wishart parameters after one point at a time (Murphy 2007, n = 1):
    kappa' = kappa + 1, m' = (kappa m + x) / (kappa + 1), nu' = nu + 1,
    psi' = psi + kappa / (kappa + 1) (x - m)(x - m)^T."""
    d = x.shape[1]
    m = np.tile(prior.m0, (k, 1))
    kappa = np.full(k, prior.kappa0)
    nu = np.full(k, prior.nu0)
    psi = np.tile(prior.psi0, (k, 1, 1))
    for xi, z in zip(x, labels):
        dev = xi - m[z]
        psi[z] = psi[z] + kappa[z] / (kappa[z] + 1.0) * np.outer(dev, dev)
        m[z] = (kappa[z] * m[z] + xi) / (kappa[z] + 1.0)
        kappa[z] += 1.0
        nu[z] += 1.0
    counts = np.bincount(labels, minlength=k).astype(float)
    assert m.shape == (k, d)
    return prior.alpha + counts, m, kappa, nu, psi


def _chain_rule_evidence(x, labels, prior: gm.NormalWishartPrior, k: int) -> float:
    """sum_i log p(z_i | z_<i) + log p(x_i | earlier points of its component):
    a Polya urn, (alpha + n_z) / (K alpha + i), times the multivariate Student-t
    predictive with nu - d + 1 dof and shape psi (kappa + 1) / (kappa (nu - d + 1))
    (Murphy 2012, sec. 4.6.3.5), each from scipy.stats."""
    d = x.shape[1]
    total = 0.0
    seen = np.zeros(k)
    for i, (xi, z) in enumerate(zip(x, labels)):
        total += math.log((prior.alpha + seen[z]) / (k * prior.alpha + i))
        _, m, kappa, nu, psi = _recursive_posterior(
            x[:i][labels[:i] == z], np.zeros(int(seen[z]), dtype=int), prior, 1
        )
        dof = nu[0] - d + 1.0
        shape = psi[0] * (kappa[0] + 1.0) / (kappa[0] * dof)
        if d == 1:
            total += stats.t.logpdf(xi[0], dof, loc=m[0, 0], scale=math.sqrt(shape[0, 0]))
        else:
            total += stats.multivariate_t.logpdf(xi, loc=m[0], shape=shape, df=dof)
        seen[z] += 1
    return total


# ---------------------------------------------------------------- 1. densities


@pytest.mark.parametrize("d", [1, 2, 3])
def test_log_prob_components_matches_scipy(rng, d):
    params = _separated_params(rng, 3, d)
    x = 6.0 * rng.normal(size=(40, d))
    ref = np.column_stack(
        [
            math.log(params.weights[k])
            + stats.multivariate_normal(params.means[k], params.covariances[k])
            .logpdf(x)
            .reshape(-1)
            for k in range(3)
        ]
    )
    got = gm.log_prob_components(x=x, params=params)
    assert got.shape == (40, 3)
    np.testing.assert_allclose(got, ref, rtol=RTOL)
    lse = special.logsumexp(ref, axis=1)
    assert gm.log_likelihood(x=x, params=params) == pytest.approx(lse.sum(), rel=RTOL)
    resp = gm.responsibilities(x=x, params=params)
    np.testing.assert_allclose(resp, np.exp(ref - lse[:, None]), rtol=1e-9, atol=1e-300)
    # exp(l - lse) carries lse's absolute rounding, ~|lse| eps, as a relative error.
    np.testing.assert_allclose(resp.sum(axis=1), 1.0, rtol=4 * EPS * np.abs(lse).max())
    np.testing.assert_allclose(gm.predictive_density(grid=x, params=params), np.exp(lse), rtol=1e-9)


def test_precision_cholesky_is_scikit_learn_convention(rng):
    params = _separated_params(rng, 2, 3)
    p = params.precision_cholesky
    np.testing.assert_array_equal(p, np.triu(p))  # upper triangular, as sklearn
    np.testing.assert_allclose(
        params.precisions @ params.covariances, np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12
    )
    back = gm.MixtureParams.from_precisions(
        weights=params.weights, means=params.means, precisions=params.precisions
    )
    np.testing.assert_allclose(back.covariances, params.covariances, rtol=1e-12, atol=1e-14)


def test_predictive_density_integrates_to_one_in_one_dimension(rng):
    from scipy import integrate

    params = _separated_params(rng, 3, 1)
    f = lambda t: float(gm.predictive_density(grid=np.array([[t]]), params=params)[0])
    edges = [-40.0, -5.0, 5.0, 15.0, 25.0, 60.0]
    total = sum(
        integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0] for a, b in pairwise(edges)
    )
    assert total == pytest.approx(1.0, rel=1e-10)


def test_log_prior_matches_scipy(rng):
    prior = _prior(2)
    params = _separated_params(rng, 3, 2)
    ref = _log_prior_scipy(params.weights, params.means, params.precisions, prior)
    assert gm.log_prior(params=params, prior=prior) == pytest.approx(ref, rel=RTOL)


def test_bic_aic_match_scikit_learn(rng):
    x = gm.simulate_from(rng, n=200, params=_separated_params(rng, 2, 3))[0]
    sk = GaussianMixture(2, covariance_type="full", random_state=0).fit(x)
    params = gm.MixtureParams(weights=sk.weights_, means=sk.means_, covariances=sk.covariances_)
    p = 2 - 1 + 2 * 3 + 2 * 3 * 4 // 2
    assert gm.n_parameters(components=2, dim=3) == p == sk._n_parameters()
    ll = gm.log_likelihood(x=x, params=params)
    assert gm.bic(x=x, params=params) == pytest.approx(-2 * ll + p * math.log(200), rel=RTOL)
    assert gm.aic(x=x, params=params) == pytest.approx(-2 * ll + 2 * p, rel=RTOL)
    assert gm.bic(x=x, params=params) == pytest.approx(sk.bic(x), rel=RTOL)
    assert gm.aic(x=x, params=params) == pytest.approx(sk.aic(x), rel=RTOL)


# ---------------------------------------------------------------- 2. EM


@pytest.mark.parametrize(("d", "k"), [(1, 2), (1, 3), (2, 3), (3, 2), (3, 3), ("faithful", 2)])
def test_em_matches_scikit_learn(rng, d, k):
    """Same start, same map: the iterates agree to rounding (~1e-13 observed).

    Both stop when the mean log-likelihood changes by < 1e-12; should they stop
    one iteration apart, that step moves the parameters by ~sqrt(1e-12) = 1e-6
    in units of the component sds, which bounds the tolerance below.
    """
    x = (
        _old_faithful_like(rng)
        if d == "faithful"
        else gm.simulate_from(rng, n=300, params=_separated_params(rng, k, d))[0]
    )
    n = x.shape[0]
    start = _start(rng, x, k)
    ours = gm.em(x=x, components=k, init=start, reg_covar=REG, tol=EM_TOL, max_iter=5000, rng=None)
    sk = GaussianMixture(
        k,
        covariance_type="full",
        reg_covar=REG,
        tol=EM_TOL,
        max_iter=5000,
        weights_init=start.weights,
        means_init=start.means,
        precisions_init=start.precisions,
    ).fit(x)
    assert ours.converged and sk.converged_
    sd = np.sqrt(np.diagonal(sk.covariances_, axis1=1, axis2=2))  # (K, d)
    np.testing.assert_allclose(ours.params.weights, sk.weights_, rtol=1e-6)
    assert np.all(np.abs(ours.params.means - sk.means_) <= 1e-6 * sd)
    scale = sd[:, :, None] * sd[:, None, :]
    assert np.all(np.abs(ours.params.covariances - sk.covariances_) <= 1e-6 * scale)
    assert abs(ours.log_likelihood - sk.score(x) * n) <= 1e-6 * n


def test_em_result_is_consistent(rng):
    x = gm.simulate_from(rng, n=250, params=_separated_params(rng, 3, 2))[0]
    for prior in (None, gm.default_prior(x=x, components=3)):
        res = gm.em(x=x, components=3, prior=prior, restarts=3, rng=rng)
        assert res.is_map is (prior is not None)
        assert len(res.history) == res.n_iter + 1 and res.history[-1] == res.objective
        assert res.restart_objectives.shape == (3,)
        assert res.objective == res.restart_objectives.max()
        # The fused E-step against logsumexp on uncentred data: rounding only.
        assert res.log_likelihood == pytest.approx(
            gm.log_likelihood(x=x, params=res.params), rel=RTOL
        )
        np.testing.assert_allclose(
            res.responsibilities, gm.responsibilities(x=x, params=res.params), rtol=1e-9, atol=1e-12
        )
        lp = 0.0 if prior is None else gm.log_prior(params=res.params, prior=prior)
        assert res.objective == pytest.approx(res.log_likelihood + lp, rel=RTOL)


def test_responsibility_init_equals_one_m_step_by_hand(rng):
    """init=(n, K) responsibilities = starting from the ML M-step of those
    responsibilities (Bishop 2006, eqs. 9.24-9.26, plus reg_covar I)."""
    truth = _separated_params(rng, 2, 2)
    x, labels = gm.simulate_from(rng, n=200, params=truth)
    resp = np.eye(2)[labels]
    counts = resp.sum(axis=0)
    means = np.stack([x[labels == k].mean(axis=0) for k in range(2)])
    cov = np.stack([np.cov(x[labels == k].T, bias=True) + REG * np.eye(2) for k in range(2)])
    by_hand = gm.MixtureParams(weights=counts / 200, means=means, covariances=cov)
    a = gm.em(x=x, components=2, init=resp, tol=EM_TOL, rng=None)
    b = gm.em(x=x, components=2, init=by_hand, tol=EM_TOL, rng=None)
    np.testing.assert_allclose(a.params.means, b.params.means, rtol=1e-10)
    np.testing.assert_allclose(a.params.covariances, b.params.covariances, rtol=1e-9)
    assert a.restart_objectives.shape == (1,)


@pytest.mark.parametrize("use_prior", [False, True], ids=["ML", "MAP"])
def test_objective_never_decreases(rng, use_prior):
    """EM's monotonicity (Bishop 2006, sec. 9.4), up to rounding: 1e-10 relative.

    ML-EM runs with reg_covar = 0, where the M-step is exact; with
    reg_covar > 0 the likelihood may fall by O(reg_covar) (module docstring).
    Overlapping components, so the runs take many iterations.
    """
    params = _separated_params(rng, 4, 2, gap=2.0)
    x = gm.simulate_from(rng, n=400, params=params)[0]
    prior = gm.default_prior(x=x, components=4) if use_prior else None
    runs = [
        gm.em(
            x=x,
            components=4,
            prior=prior,
            reg_covar=0.0,
            tol=1e-10,
            max_iter=300,
            restarts=4,
            rng=rng,
        )
    ]
    for _ in range(4):  # single runs from random soft starts
        start = rng.dirichlet(np.ones(4), size=400)
        runs.append(
            gm.em(
                x=x,
                components=4,
                prior=prior,
                reg_covar=0.0,
                tol=1e-10,
                max_iter=300,
                init=start,
                rng=None,
            )
        )
    for res in runs:
        h = res.history
        assert h.size > 5
        assert np.all(np.diff(h) >= -1e-10 * np.abs(h[:-1])), np.diff(h).min()


def _unpack(theta, k, d):
    """Unconstrained -> (w, mu, Lambda): softmax logits (last fixed at 0), means,
    Cholesky factors of Lambda with log diagonals."""
    logits = np.append(theta[: k - 1], 0.0)
    w = np.exp(logits - special.logsumexp(logits))
    mu = theta[k - 1 : k - 1 + k * d].reshape(k, d)
    tri = np.tril_indices(d)
    lam = np.empty((k, d, d))
    rest = theta[k - 1 + k * d :].reshape(k, -1)
    for j in range(k):
        low = np.zeros((d, d))
        low[tri] = rest[j]
        low[np.diag_indices(d)] = np.exp(np.diag(low))
        lam[j] = low @ low.T
    return w, mu, lam


def _pack(params: gm.MixtureParams):
    k, d = params.components, params.d
    tri = np.tril_indices(d)
    parts = [np.log(params.weights[:-1] / params.weights[-1]), params.means.ravel()]
    for j in range(k):
        low = np.linalg.cholesky(params.precisions[j])
        low[np.diag_indices(d)] = np.log(np.diag(low))
        parts.append(low[tri])
    return np.concatenate(parts)


def _neg_log_post(theta, x, prior, k, d):
    w, mu, lam = _unpack(theta, k, d)
    try:
        p = gm.MixtureParams.from_precisions(weights=w, means=mu, precisions=lam)
    except ValueError:
        return np.inf
    return -(gm.log_likelihood(x=x, params=p) + gm.log_prior(params=p, prior=prior)) / len(x)


def _improvement(x, prior, params) -> float:
    k, d = params.components, params.d
    theta0 = _pack(params)
    f0 = _neg_log_post(theta0, x, prior, k, d)
    res = optimize.minimize(
        _neg_log_post,
        theta0,
        args=(x, prior, k, d),
        method="BFGS",
        options=dict(gtol=1e-12, maxiter=400),
    )
    return (f0 - res.fun) / abs(f0)


def test_map_em_is_a_stationary_point_of_the_log_posterior(rng):
    """BFGS over (softmax weights, means, log-Cholesky of Lambda) started at the
    MAP-EM fixed point improves log p(x | theta) + log p(theta) by < 1e-9
    relative (the fixed point is converged to 1e-12 per point; finite-difference
    gradients are good to ~1e-8).  Power: the covariances of the mode in
    Sigma coordinates' denominator nu0 + N_k - d - 1 instead of nu0 + N_k - d
    (an off-by-one in the M-step) are improved on by > 1e-6."""
    x = gm.simulate_from(rng, n=120, params=_separated_params(rng, 2, 2, gap=4.0))[0]
    prior = gm.default_prior(x=x, components=2, alpha=3.0, kappa0=0.5)
    res = gm.em(x=x, components=2, prior=prior, tol=EM_TOL, max_iter=5000, rng=rng)
    assert res.converged
    assert _improvement(x, prior, res.params) < 1e-9
    n_k = res.responsibilities.sum(axis=0)
    wrong = (prior.nu0 + n_k - 2) / (prior.nu0 + n_k - 3)
    planted = gm.MixtureParams(
        weights=res.params.weights,
        means=res.params.means,
        covariances=res.params.covariances * wrong[:, None, None],
    )
    assert _improvement(x, prior, planted) > 1e-6


def test_map_em_with_a_flat_prior_approaches_ml_em(rng):
    """alpha = 1, nu0 = d + 1e-9, kappa0 = psi0 = 1e-10 (I): the MAP M-step is
    w_k = N_k / N, mu_k = xbar_k + O(kappa0), Sigma_k = (S_k + O(1e-10)) / (N_k + 1e-9),
    i.e. the ML M-step without reg_covar up to ~1e-9 relative; 1e-7 allows for
    the two runs' convergence (tol 1e-12 per point)."""
    d = 2
    x = gm.simulate_from(rng, n=300, params=_separated_params(rng, 3, d))[0]
    flat = gm.NormalWishartPrior(
        alpha=1.0, m0=np.zeros(d), kappa0=1e-10, nu0=d + 1e-9, psi0=1e-10 * np.eye(d)
    )
    start = _start(rng, x, 3)
    ml = gm.em(x=x, components=3, reg_covar=0.0, init=start, tol=EM_TOL, rng=None)
    mp = gm.em(x=x, components=3, prior=flat, init=start, tol=EM_TOL, rng=None)
    np.testing.assert_allclose(mp.params.weights, ml.params.weights, rtol=1e-7)
    np.testing.assert_allclose(mp.params.means, ml.params.means, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(mp.params.covariances, ml.params.covariances, rtol=1e-7, atol=1e-7)
    assert mp.log_likelihood == pytest.approx(ml.log_likelihood, rel=1e-9)


def test_separated_map_em_is_the_complete_data_posterior_mode(rng):
    """With components ~60 sds apart every responsibility is within 1e-200 of 0
    or 1, far below rounding, so MAP-EM's fixed point is the mode of the complete-data
    posterior at the hard labels, and ML-EM (reg_covar = 0) the complete-data
    MLE.  The prior is centred on the data with a small kappa0: a distant m0
    would add kappa0 N / (kappa0 + N) (xbar - m0)(xbar - m0)^T to the MAP
    covariances and make the components overlap."""
    d, k = 2, 3
    truth = _separated_params(rng, k, d, gap=80.0)
    x, labels = gm.simulate_from(rng, n=150, params=truth)
    prior = _prior(d, m0=x.mean(axis=0), kappa0=0.01)
    # Started at the truth: a k-means++ start may put two components in one
    # cluster, a local optimum with soft responsibilities.
    res = gm.em(x=x, components=k, prior=prior, tol=EM_TOL, init=truth, rng=None)
    r = res.responsibilities
    assert np.all(np.minimum(r, 1.0 - r) < 1e-200)
    hard = np.argmax(r, axis=1)
    np.testing.assert_array_equal(hard, labels)
    answer = gm.complete_data_answer(x=x, labels=hard, prior=prior, components=k)
    mode = answer.posterior.mode
    w, mu, lam = gm.split_parameters(theta=mode, components=k, dim=d)
    np.testing.assert_allclose(res.params.weights, w, rtol=1e-12)
    np.testing.assert_allclose(res.params.means, mu, rtol=1e-10)
    np.testing.assert_allclose(res.params.precisions, lam, rtol=1e-9)
    ml = gm.em(x=x, components=k, reg_covar=0.0, tol=EM_TOL, init=truth, rng=None)
    w, mu, lam = gm.split_parameters(theta=answer.mle, components=k, dim=d)
    np.testing.assert_allclose(ml.params.weights, w, rtol=1e-12)
    np.testing.assert_allclose(ml.params.means, mu, rtol=1e-10)
    np.testing.assert_allclose(ml.params.precisions, lam, rtol=1e-9)


# ---------------------------------------------------------------- 3. k-means++


def test_kmeans_plus_plus_returns_distinct_rows(rng):
    x = gm.simulate_from(rng, n=100, params=_separated_params(rng, 3, 2))[0]
    centres = gm.kmeans_plus_plus(x=x, components=5, rng=rng)
    assert centres.shape == (5, 2)
    idx = [int(np.flatnonzero(np.all(x == c, axis=1))[0]) for c in centres]
    assert len(set(idx)) == 5


def test_kmeans_plus_plus_draws_with_squared_distance_probabilities(rng):
    """Points 0, 1, 3, 7 on a line, K = 2: P(first = i) = 1/4 and
    P(second = j | i) = (x_j - x_i)^2 / sum_l (x_l - x_i)^2 (Arthur &
    Vassilvitskii 2007).  12 ordered pairs at 5.7e-7 each: false-alarm rate < 7e-6."""
    x = np.array([[0.0], [1.0], [3.0], [7.0]])
    n = 20_000
    counts = {}
    for _ in range(n):
        c = gm.kmeans_plus_plus(x=x, components=2, rng=rng)[:, 0]
        counts[(c[0], c[1])] = counts.get((c[0], c[1]), 0) + 1
    for a, b in permutations(x[:, 0], 2):
        d2 = (x[:, 0] - a) ** 2
        p = 0.25 * (b - a) ** 2 / d2.sum()
        z = (counts.get((a, b), 0) / n - p) / math.sqrt(p * (1 - p) / n)
        assert abs(z) < Z_MAX, (a, b, z)


# ---------------------------------------------------------------- 4. complete-data posterior


@pytest.fixture
def labelled(rng):
    """K = 2, d = 2, 40 labelled points (>= 12 per component: t dof >= 15)."""
    truth = _separated_params(rng, 2, 2, gap=3.0)
    x = gm.simulate_from(rng, n=40, params=truth)[0]
    labels = np.r_[np.zeros(14, dtype=int), np.ones(26, dtype=int)]
    rng.shuffle(labels)
    return x, labels


def test_posterior_matches_one_point_at_a_time_recursion(labelled):
    x, labels = labelled
    prior = _prior(2)
    post = gm.complete_data_posterior(x=x, labels=labels, prior=prior, components=2)
    alpha, m, kappa, nu, psi = _recursive_posterior(x, labels, prior, 2)
    np.testing.assert_array_equal(post.alpha, alpha)
    np.testing.assert_array_equal(post.kappa, kappa)
    np.testing.assert_array_equal(post.nu, nu)
    np.testing.assert_allclose(post.m, m, rtol=RTOL)
    np.testing.assert_allclose(post.psi, psi, rtol=RTOL)


def test_parameter_layout_and_protocol(labelled):
    x, labels = labelled
    ans = gm.complete_data_answer(x=x, labels=labels, prior=_prior(2), components=2)
    assert isinstance(ans, ExactAnswer)
    post = ans.posterior
    assert isinstance(post, ExactPosterior)
    assert post.parameters == (
        "w[0]",
        "w[1]",
        "mu[0,0]",
        "mu[0,1]",
        "mu[1,0]",
        "mu[1,1]",
        "Lambda[0,0,0]",
        "Lambda[0,0,1]",
        "Lambda[0,1,0]",
        "Lambda[0,1,1]",
        "Lambda[1,0,0]",
        "Lambda[1,0,1]",
        "Lambda[1,1,0]",
        "Lambda[1,1,1]",
    )
    assert post.free == (0, 2, 3, 4, 5, 6, 8, 9, 10, 12, 13)
    assert post.is_gaussian is False
    assert post.moments_below == min(post.nu) - 2 + 1
    assert [post.marginal(i) is None for i in range(14)] == [i in (7, 8, 11, 12) for i in range(14)]
    # The flattening is numpy's C order of w (K,), mu (K, d), Lambda (K, d, d).
    w, mu, lam = gm.split_parameters(theta=post.mean, components=2, dim=2)
    np.testing.assert_array_equal(np.concatenate([w, mu.ravel(), lam.ravel()]), post.mean)


def test_moments_match_scipy(labelled):
    x, labels = labelled
    post = gm.complete_data_posterior(x=x, labels=labels, prior=_prior(2), components=2)
    mean, cov = post.mean, post.cov
    w, mu, lam = gm.split_parameters(theta=mean, components=2, dim=2)
    dr = stats.dirichlet(post.alpha)
    np.testing.assert_allclose(w, dr.mean(), rtol=RTOL)
    np.testing.assert_allclose(cov[:2, :2], dr.cov(), rtol=RTOL)
    for k in range(2):
        scale = _inv(post.psi[k])
        wish = stats.wishart(df=post.nu[k], scale=scale)
        np.testing.assert_allclose(lam[k], wish.mean(), rtol=RTOL)
        b = 2 + 4 + 4 * k
        np.testing.assert_allclose(np.diag(cov)[b : b + 4], wish.var().ravel(), rtol=RTOL)
        # Cov(mu_k) = E[Lambda_k^-1] / kappa_k, the inverse-Wishart mean.
        a = 2 + 2 * k
        ref = stats.invwishart(df=post.nu[k], scale=post.psi[k]).mean() / post.kappa[k]
        np.testing.assert_allclose(cov[a : a + 2, a : a + 2], ref, rtol=RTOL)
        np.testing.assert_allclose(mu[k], post.m[k], rtol=RTOL)
        # Student-t marginals of mu_k: the multivariate t's own marginals.
        dof = post.nu[k] - 2 + 1
        mvt = stats.multivariate_t(loc=post.m[k], shape=post.psi[k] / (post.kappa[k] * dof), df=dof)
        for j in range(2):
            ref_t = mvt.marginal([j])
            pts = post.m[k, j] + np.array([-0.3, 0.0, 0.2])
            np.testing.assert_allclose(
                post.marginal(a + j).logpdf(pts), ref_t.logpdf(pts[:, None]), rtol=RTOL
            )
        # Lambda_ii = W_ii chi^2_nu.
        for i in range(2):
            idx = 2 + 4 + 4 * k + 3 * i
            q = np.array([0.05, 0.5, 0.95])
            np.testing.assert_allclose(
                post.marginal(idx).ppf(q), scale[i, i] * stats.chi2(post.nu[k]).ppf(q), rtol=RTOL
            )
    free = list(post.free)
    assert np.linalg.eigvalsh(cov[np.ix_(free, free)]).min() > 0
    assert np.linalg.matrix_rank(cov) == len(free)


def test_bayes_rule_holds_pointwise(labelled, rng):
    """log p(theta | x, z) + log p(x, z) = log p(theta) + log p(x, z | theta),
    the right side from scipy densities, at posterior draws and the mode."""
    x, labels = labelled
    prior = _prior(2)
    ans = gm.complete_data_answer(x=x, labels=labels, prior=prior, components=2)
    post = ans.posterior
    points = np.vstack([post.sample(rng, 3), post.mode[None, :]])
    for theta in points:
        w, mu, lam = gm.split_parameters(theta=theta, components=2, dim=2)
        lik = sum(
            math.log(w[z]) + stats.multivariate_normal.logpdf(xi, mu[z], _inv(lam[z]))
            for xi, z in zip(x, labels)
        )
        rhs = _log_prior_scipy(w, mu, lam, prior) + lik
        assert float(post.logpdf(theta)) + ans.log_evidence == pytest.approx(rhs, rel=RTOL)
    assert post.logpdf(points.reshape(2, 2, -1)).shape == (2, 2)
    bad = post.mode.copy()
    bad[0] += 0.1  # off the simplex
    assert post.logpdf(bad) == -np.inf


@pytest.mark.parametrize("d", [1, 2])
def test_log_evidence_chain_rule(rng, d):
    """d = 1 is the Normal-Gamma case (t predictive from scipy.stats.t)."""
    prior = _prior(d)
    x = gm.simulate_from(rng, n=25, params=_separated_params(rng, 3, d, gap=3.0))[0]
    labels = rng.integers(0, 3, size=25)
    ans = gm.complete_data_answer(x=x, labels=labels, prior=prior, components=3)
    assert ans.log_evidence == pytest.approx(_chain_rule_evidence(x, labels, prior, 3), rel=RTOL)


def test_predictive_is_the_ratio_of_evidences(labelled):
    """p(x_new | D) = sum_k p(D + (x_new, k)) / p(D)."""
    x, labels = labelled
    prior = _prior(2)
    ans = gm.complete_data_answer(x=x, labels=labels, prior=prior, components=2)
    pts = np.array([[0.0, 0.0], [3.0, -1.0], [10.0, 2.0]])
    for p in pts:
        ref = special.logsumexp(
            [
                gm.complete_data_answer(
                    x=np.vstack([x, p]), labels=np.r_[labels, k], prior=prior, components=2
                ).log_evidence
                - ans.log_evidence
                for k in range(2)
            ]
        )
        assert float(ans.predictive.logpdf(p)) == pytest.approx(ref, rel=RTOL)
    post = ans.posterior
    np.testing.assert_allclose(
        ans.predictive.mean(), post.alpha / post.alpha.sum() @ post.m, rtol=RTOL
    )
    assert ans.predictive.var().shape == (2,)


def test_complete_data_mle(labelled):
    x, labels = labelled
    ans = gm.complete_data_answer(x=x, labels=labels, prior=_prior(2), components=2)
    w, mu, lam = gm.split_parameters(theta=ans.mle, components=2, dim=2)
    np.testing.assert_allclose(w, np.bincount(labels) / 40, rtol=RTOL)
    for k in range(2):
        xk = x[labels == k]
        np.testing.assert_allclose(mu[k], xk.mean(axis=0), rtol=RTOL)
        np.testing.assert_allclose(lam[k], _inv(np.cov(xk.T, bias=True)), rtol=1e-9)
    # A component with <= d points has no MLE covariance.
    few = gm.complete_data_answer(
        x=x[:3], labels=np.array([0, 0, 1]), prior=_prior(2), components=2
    )
    assert few.mle is None


def test_no_data_returns_the_prior():
    prior = _prior(2)
    ans = gm.complete_data_answer(
        x=np.empty((0, 2)), labels=np.empty(0, dtype=int), prior=prior, components=3
    )
    post = ans.posterior
    np.testing.assert_array_equal(post.alpha, np.full(3, prior.alpha))
    np.testing.assert_array_equal(post.m, np.tile(prior.m0, (3, 1)))
    np.testing.assert_array_equal(post.psi, np.tile(prior.psi0, (3, 1, 1)))
    assert ans.log_evidence == 0.0 and ans.mle is None


@pytest.mark.parametrize("cut", [0, 7, 25])
def test_sequential_update_equals_batch(rng, cut):
    """K = 1: the posterior after the first part is the prior of the second."""
    x = rng.normal(size=(25, 2)) @ np.array([[1.0, 0.3], [0.0, 0.7]]) + 2.0
    z = np.zeros(25, dtype=int)
    prior = _prior(2)
    first = gm.complete_data_answer(x=x[:cut], labels=z[:cut], prior=prior, components=1)
    p1 = first.posterior
    prior2 = gm.NormalWishartPrior(
        alpha=prior.alpha, m0=p1.m[0], kappa0=p1.kappa[0], nu0=p1.nu[0], psi0=p1.psi[0]
    )
    second = gm.complete_data_answer(x=x[cut:], labels=z[cut:], prior=prior2, components=1)
    batch = gm.complete_data_answer(x=x, labels=z, prior=prior, components=1)
    np.testing.assert_allclose(second.posterior.m, batch.posterior.m, rtol=RTOL)
    np.testing.assert_allclose(second.posterior.psi, batch.posterior.psi, rtol=RTOL)
    assert first.log_evidence + second.log_evidence == pytest.approx(batch.log_evidence, rel=RTOL)


def test_mode_is_a_local_maximum_of_logpdf(labelled, rng):
    """Perturbing the free coordinates (keeping sum w = 1 and Lambda symmetric) lowers the density."""
    x, labels = labelled
    post = gm.complete_data_posterior(x=x, labels=labels, prior=_prior(2), components=2)
    mode = post.mode
    assert post.mode_interior
    top = float(post.logpdf(mode))
    for _ in range(50):
        step = np.zeros_like(mode)
        step[list(post.free)] = (
            1e-4 * rng.normal(size=len(post.free)) * np.abs(mode[list(post.free)])
        )
        w, mu, lam = gm.split_parameters(theta=mode + step, components=2, dim=2)
        w = w.copy()
        w[-1] = 1.0 - w[:-1].sum()
        lam = np.tril(lam) + np.swapaxes(np.tril(lam, -1), -1, -2)
        assert float(post.logpdf(np.concatenate([w, mu.ravel(), lam.ravel()]))) < top


def test_mode_without_interior(rng):
    """An empty component with nu0 < d: the Lambda density is unbounded at 0, no mode."""
    prior = _prior(2, nu0=1.5, alpha=1.0)
    post = gm.complete_data_posterior(
        x=rng.normal(size=(5, 2)), labels=np.zeros(5, dtype=int), prior=prior, components=2
    )
    assert post.mode is None and post.mode_interior is False


def _free_z_scores(draws, post) -> dict[str, float]:
    """sampler_z_scores over the free coordinates with a marginal; mean and
    covariance z-scores (same formulas) for the off-diagonal Lambda entries."""
    free = list(post.free)
    with_marginal = [i for i in free if post.marginal(i) is not None]
    z = sampler_z_scores(
        draws[:, with_marginal],
        mean=post.mean[with_marginal],
        cov=post.cov[np.ix_(with_marginal, with_marginal)],
        marginals=[post.marginal(i) for i in with_marginal],
    )
    n = draws.shape[0]
    c = draws[:, free] - post.mean[free]
    cov = post.cov[np.ix_(free, free)]
    for a, i in enumerate(free):
        if i in with_marginal:
            continue
        z[f"mean[{i}]"] = c[:, a].mean() / math.sqrt(cov[a, a] / n)
        for b in range(len(free)):
            prod = c[:, a] * c[:, b]
            z[f"cov[{i},{free[b]}]"] = (prod.mean() - cov[a, b]) / (prod.std() / math.sqrt(n))
    return z


def test_sampler_matches_mean_cov_and_quantiles(labelled, rng):
    """200,000 draws over the 11 free coordinates: 9 coordinates with a
    marginal (9 means, 45 covariances, 27 CDF points) and the 2 off-diagonal
    Lambda entries (2 means, 22 covariances) = 105 checks at 5.7e-7 each:
    false-alarm rate < 1e-4 per run.  The t marginals of mu have >= 15 dof, so
    the fourth moments the covariance SEs need exist."""
    x, labels = labelled
    post = gm.complete_data_posterior(x=x, labels=labels, prior=_prior(2), components=2)
    draws = post.sample(rng, N_DRAWS)
    assert draws.shape == (N_DRAWS, 14)
    z = _free_z_scores(draws, post)
    assert max(abs(v) for v in z.values()) < Z_MAX, z
    # Exact structure of every draw: weights on the simplex, symmetric PD Lambda.
    w, _, lam = gm.split_parameters(theta=draws, components=2, dim=2)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(lam, np.swapaxes(lam, -1, -2))
    assert np.all(np.linalg.eigvalsh(lam) > 0)


def test_sampler_check_detects_planted_bug(labelled, rng):
    """Power: an off-by-one in the Wishart degrees of freedom (nu + 1, e.g.
    chi^2(nu - i + 1) in the Bartlett diagonal) shifts E[Lambda] by W."""
    x, labels = labelled
    post = gm.complete_data_posterior(x=x, labels=labels, prior=_prior(2), components=2)
    wrong = gm.MixturePosterior(
        alpha=post.alpha, m=post.m, kappa=post.kappa, nu=post.nu + 1.0, psi=post.psi
    )
    z = _free_z_scores(wrong.sample(rng, N_DRAWS), post)
    assert max(abs(v) for v in z.values()) > Z_MAX


# ---------------------------------------------------------------- 5. relabelling


def test_relabel_inverts_a_known_permutation(rng):
    k, d, s = 4, 2, 60
    reference = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0], [3.0, 3.0]])
    draws = reference + 0.2 * rng.normal(size=(s, k, d))
    covs = np.broadcast_to(np.arange(k, dtype=float)[:, None, None], (s, k, d, d)).copy()
    sigma = np.stack([rng.permutation(k) for _ in range(s)])
    shuffled = gm.apply_permutation(draws, sigma)
    perm = gm.relabel(means_draws=shuffled, reference_means=reference)
    np.testing.assert_array_equal(gm.apply_permutation(shuffled, perm), draws)
    np.testing.assert_array_equal(
        gm.apply_permutation(gm.apply_permutation(covs, sigma), perm), covs
    )
    # perm is the inverse of sigma.
    np.testing.assert_array_equal(
        np.take_along_axis(sigma, perm, axis=1), np.broadcast_to(np.arange(k), (s, k))
    )


def test_sort_by_first_coordinate(rng):
    means = rng.normal(size=(20, 3, 1))
    perm = gm.sort_by_first_coordinate(means)
    ordered = gm.apply_permutation(means, perm)[..., 0]
    assert np.all(np.diff(ordered, axis=1) > 0)
    np.testing.assert_array_equal(gm.sort_by_first_coordinate(means[..., 0]), perm)


# ---------------------------------------------------------------- 6. priors and simulation


def test_default_prior_is_data_derived(rng):
    x = rng.normal(size=(50, 3)) * np.array([1.0, 10.0, 0.1]) + 5.0
    prior = gm.default_prior(x=x, components=2, cov_scale=0.2)
    var = x.var(axis=0)
    np.testing.assert_allclose(prior.m0, x.mean(axis=0), rtol=RTOL)
    assert prior.nu0 == 5.0 and prior.alpha == 1.0 and prior.kappa0 == 0.01
    np.testing.assert_allclose(prior.psi0, 5.0 * 0.2 * np.diag(var), rtol=RTOL)
    # E[Lambda] = nu0 W0 = (cov_scale diag(var))^-1.
    np.testing.assert_allclose(prior.nu0 * prior.w0, np.diag(1.0 / (0.2 * var)), rtol=RTOL)


def test_simulate_draws_parameters_from_the_prior(rng):
    """2,000 prior draws: E[w_k] = 1/K and E[Lambda_k] = nu0 W0, z-tests with the
    exact prior sds (Dirichlet, Wishart variances): 2 + 8 checks at 5.7e-7,
    false-alarm rate < 1e-5."""
    prior = _prior(2, alpha=1.5)
    n = 2_000
    ws, lams = [], []
    for _ in range(n):
        params, x, labels = gm.simulate(rng, n=5, components=2, prior=prior)
        assert x.shape == (5, 2) and labels.shape == (5,)
        ws.append(params.weights)
        lams.append(params.precisions)
    ws, lams = np.array(ws), np.array(lams)
    z = list((ws.mean(axis=0) - 0.5) / math.sqrt(0.25 / (2 * 1.5 + 1) / n))
    wish = stats.wishart(df=prior.nu0, scale=prior.w0)
    for k in range(2):
        z += list(((lams[:, k].mean(axis=0) - wish.mean()) / np.sqrt(wish.var() / n)).ravel())
    assert max(abs(v) for v in z) < Z_MAX, z


def test_simulate_from_matches_the_mixture(rng):
    params = _separated_params(rng, 2, 2)
    x, labels = gm.simulate_from(rng, n=20_000, params=params)
    for k in range(2):
        xk = x[labels == k]
        share = len(xk) / 20_000
        w = params.weights[k]
        assert abs(share - w) < Z_MAX * math.sqrt(w * (1 - w) / 20_000)
        se = np.sqrt(np.diag(params.covariances[k]) / len(xk))
        assert np.all(np.abs(xk.mean(axis=0) - params.means[k]) < Z_MAX * se)


# ---------------------------------------------------------------- 7. bad input


def _x(rng):
    return rng.normal(size=(5, 2))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (dict(components=0), r"\bcomponents\b must be an integer >= 1, got 0"),
        (dict(components=6), r"\bcomponents\b must be <= the number of rows of x \(5\), got 6"),
        (dict(components=2.5), r"\bcomponents\b must be an integer >= 1, got 2\.5"),
        (dict(components=True), r"\bcomponents\b must be an integer >= 1, got True"),
        (dict(x=np.array([[0.0, 1.0], [np.nan, 2.0]])), r"x\[1, 0\] is nan;"),
        (dict(x=np.array([[0.0, np.inf], [1.0, 2.0]])), r"x\[0, 1\] is inf;"),
        (dict(x=np.arange(5.0)), r"\bx\b must be an array of shape \(n, d\), got shape \(5,\)"),
        (dict(tol=-1.0), r"\btol\b must be a finite number >= 0, got -1\.0"),
        (dict(reg_covar=np.nan), r"\breg_covar\b must be a finite number >= 0, got nan"),
        (dict(max_iter=0), r"\bmax_iter\b must be an integer >= 1, got 0"),
        (dict(restarts=0), r"\brestarts\b must be an integer >= 1, got 0"),
        (dict(rng=None), r"\brng\b must be a numpy\.random\.Generator"),
        (dict(init=np.ones((5, 2))), r"\binit\b responsibilities must be >= 0 with every row"),
        (dict(prior=dict(alpha=0.5)), r"\balpha\b must be >= 1 for MAP-EM, got 0\.5"),
        (dict(prior=dict(nu0=1.5)), r"\bnu0\b must be > d = 2 for MAP-EM, got 1\.5"),
    ],
)
def test_bad_em_input_raises(rng, kwargs, pattern):
    args = dict(x=_x(rng), components=2, rng=rng)
    if isinstance(kwargs.get("prior"), dict):
        kwargs = dict(prior=_prior(2, **kwargs["prior"]))
    args.update(kwargs)
    with pytest.raises(ValueError, match=pattern):
        gm.em(**args)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (dict(alpha=0.0), r"\balpha\b must be a finite number > 0, got 0\.0"),
        (dict(kappa0=-1.0), r"\bkappa0\b must be a finite number > 0, got -1\.0"),
        (dict(nu0=1.0), r"\bnu0\b must be a finite number > 1 \(d - 1 with d = 2\).*got 1\.0"),
        (dict(nu0=np.inf), r"\bnu0\b must be a finite number > 1.*got inf"),
        (
            dict(psi0=np.array([[1.0, 2.0], [2.0, 1.0]])),
            r"\bpsi0\b must be symmetric positive definite, got \[\[1\.0, 2\.0\]",
        ),
        (dict(psi0=np.array([[1.0, 0.5], [0.0, 1.0]])), r"\bpsi0\b must be symmetric"),
        (dict(psi0=np.eye(3)), r"\bpsi0\b must be an array of shape \(2, 2\), got shape \(3, 3\)"),
        (dict(m0=np.array([0.0, np.nan])), r"\bm0\b must be finite"),
    ],
)
def test_bad_prior_raises(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        _prior(2, **kwargs)


def test_constant_column_raises(rng):
    x = np.column_stack([rng.normal(size=10), np.full(10, 3.0)])
    with pytest.raises(ValueError, match=r"column 1 of x is constant \(variance 0\); drop it"):
        gm.default_prior(x=x, components=2)
    with pytest.raises(ValueError, match=r"\bcomponents\b must be <= the number of rows"):
        gm.default_prior(x=rng.normal(size=(3, 2)), components=4)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        (dict(weights=[0.5, 0.6]), r"\bweights\b must be >= 0 and sum to 1, got \[0\.5, 0\.6\]"),
        (
            dict(covariances=[np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]),
            r"covariances\[1\] is not positive definite; .*increase reg_covar",
        ),
        (dict(means=np.zeros((3, 2))), r"\bmeans\b must be an array of shape \(2, d\)"),
    ],
)
def test_bad_params_raise(kwargs, pattern):
    args = dict(weights=[0.5, 0.5], means=np.zeros((2, 2)), covariances=[np.eye(2)] * 2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=pattern):
        gm.MixtureParams(**args)


def test_bad_labels_raise(rng):
    with pytest.raises(ValueError, match=re.escape("labels[2] = 3 is not a component in 0..1")):
        gm.complete_data_posterior(
            x=_x(rng), labels=np.array([0, 1, 3, 0, 1]), prior=_prior(2), components=2
        )
    with pytest.raises(ValueError, match=r"\bx\b must have 2 columns"):
        gm.complete_data_posterior(
            x=rng.normal(size=(5, 3)), labels=np.zeros(5, dtype=int), prior=_prior(2), components=2
        )
