"""Tests for analytic.logistic_regression: Newton MAP/MLE, separation, Laplace, reference.

Independent references: scikit-learn's ``LogisticRegression`` (newton-cholesky)
for the MAP and the MLE, central finite differences of ``log_joint`` for the
Hessian, a brute-force trapezoid grid over the weights for the cubature
(spectrally accurate for a smooth integrand that vanishes at the grid's edge),
and cubature for importance sampling where both apply.  Tolerances:

* optimisers: both sides stop at a gradient ~1e-12, so the optima agree to
  ~1e-9 relative (the problems are well conditioned: cond(H) < 1e3);
* finite differences: step h = 1e-4 in the weights, error O(h^2 f'''') ~ 1e-7;
* importance vs cubature: the Monte Carlo bound 5 / sqrt(ESS) in posterior
  sds (scrambled Sobol' points make the real error far smaller; measured
  ~1e-5).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special
from sklearn.linear_model import LogisticRegression

from analytic import ExactAnswer, ExactPosterior
from analytic import logistic_regression as alr

PRIOR_SD = 1.5
SMALL_POOL = 2**14  # reference draws where the pool's size does not matter


def _data(rng, n=80, p=1, w=None):
    x = rng.standard_normal((n, p))
    phi = np.column_stack([np.ones(n), x])
    w = np.linspace(0.5, -1.0, p + 1) if w is None else np.asarray(w)
    y = (rng.uniform(size=n) < special.expit(phi @ w)).astype(float)
    return phi, y


def _neg_log_joint_grad(phi, y, prior_sd, w):
    return phi.T @ (special.expit(phi @ w) - y) + w / prior_sd**2


# ---------------------------------------------------------------- MAP and MLE


@pytest.mark.parametrize("p, prior_sd", [(1, 1.5), (3, 0.7), (4, 3.0)])
def test_map_equals_sklearn_with_matching_c(rng, p, prior_sd):
    """MAP = scikit-learn LogisticRegression(C = prior_sd^2) with the intercept as a column.

    scikit-learn minimises |w|^2 / 2 + C sum_i loss_i; dividing by C gives
    sum_i loss_i + |w|^2 / (2 C), our negative log posterior with C = prior_sd^2.
    scikit-learn never penalises its own intercept, so the intercept is a column
    of ones with fit_intercept=False: penalised like every weight, as in our prior.
    """
    phi, y = _data(rng, n=150, p=p)
    ours = alr.fit_map(phi=phi, y=y, prior_sd=prior_sd)
    sk = LogisticRegression(
        C=prior_sd**2, fit_intercept=False, solver="newton-cholesky", tol=1e-14, max_iter=1000
    ).fit(phi, y)
    np.testing.assert_allclose(ours.w, sk.coef_[0], rtol=1e-8, atol=1e-10)
    assert np.max(np.abs(_neg_log_joint_grad(phi, y, prior_sd, ours.w))) < 1e-9


def test_mle_equals_sklearn_unpenalised(rng):
    phi, y = _data(rng, n=200, p=2)
    fit, sep = alr.fit_mle(phi=phi, y=y)
    assert not sep.separated and sep.kind == "none"
    sk = LogisticRegression(
        C=np.inf, fit_intercept=False, solver="newton-cholesky", tol=1e-14, max_iter=1000
    ).fit(phi, y)
    np.testing.assert_allclose(fit.w, sk.coef_[0], rtol=1e-8, atol=1e-10)


def test_flat_prior_gives_the_mle(rng):
    """Identity: as prior_sd grows the MAP tends to the MLE, at rate O(1 / prior_sd^2)."""
    phi, y = _data(rng, n=200, p=2)
    mle, _ = alr.fit_mle(phi=phi, y=y)
    gaps = [np.max(np.abs(alr.fit_map(phi=phi, y=y, prior_sd=s).w - mle.w)) for s in (10, 100)]
    assert gaps[1] < gaps[0] / 50  # 100x in precision -> ~100x closer


def test_complete_separation_is_detected_and_the_map_still_exists():
    x = np.array([-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0])
    y = (x > 0).astype(float)
    phi = np.column_stack([np.ones(x.size), x])
    fit, sep = alr.fit_mle(phi=phi, y=y)
    assert fit is None and sep.separated and sep.kind == "complete"
    s = 2 * y - 1
    assert np.all(s * (phi @ sep.direction) > 0)  # the direction separates strictly
    answer = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    assert answer.mle is None and answer.separation.kind == "complete"
    assert np.all(np.isfinite(answer.posterior.mode)) and np.all(np.isfinite(answer.posterior.mean))


def test_quasi_complete_separation_is_detected():
    """Separated except for two tied points at x = 0, one of each class."""
    x = np.array([-2.0, -1.0, 0.0, 0.0, 1.0, 2.0])
    y = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    phi = np.column_stack([np.ones(x.size), x])
    fit, sep = alr.fit_mle(phi=phi, y=y)
    assert fit is None and sep.kind == "quasi-complete"


def test_overlapping_classes_are_not_separated(rng):
    phi, y = _data(rng, n=60, p=1, w=[0.0, 0.3])
    assert not alr.detect_separation(phi=phi, y=y).separated


# ---------------------------------------------------------------- Laplace


def test_laplace_covariance_is_the_inverse_hessian_by_finite_differences(rng):
    phi, y = _data(rng, n=120, p=2)
    approx = alr.laplace(phi=phi, y=y, prior_sd=PRIOR_SD)
    h, d = 1e-4, 3

    def f(w):
        return float(alr.log_joint(phi=phi, y=y, prior_sd=PRIOR_SD, w=w))

    hess = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            ei, ej = np.eye(d)[i] * h, np.eye(d)[j] * h
            m = approx.mean
            hess[i, j] = -(f(m + ei + ej) - f(m + ei - ej) - f(m - ei + ej) + f(m - ei - ej)) / (
                4 * h * h
            )
    np.testing.assert_allclose(approx.prec_chol @ approx.prec_chol.T, hess, rtol=1e-6)
    # cov @ H = I: the covariance is the inverse of the finite-difference Hessian.
    np.testing.assert_allclose(approx.cov @ hess, np.eye(d), atol=1e-6)


# ---------------------------------------------------------------- the reference


def _grid_moments(phi, y, prior_sd, center, half_width, points):
    """Trapezoid rule on a regular grid over the box center +- half_width."""
    d = center.size
    axes = [np.linspace(c - r, c + r, points) for c, r in zip(center, half_width)]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
    logp = alr.log_joint(phi=phi, y=y, prior_sd=prior_sd, w=mesh)
    top = logp.max()
    dens = np.exp(logp - top)
    cell = np.prod([a[1] - a[0] for a in axes])
    z = dens.sum() * cell  # edges carry ~e^-50 of the peak: trapezoid = plain sum
    mean = dens @ mesh * cell / z
    centred = mesh - mean
    cov = (centred * dens[:, None]).T @ centred * cell / z
    return mean, cov, top + math.log(z)


@pytest.mark.parametrize("p, intercept", [(1, False), (1, True)])
def test_cubature_equals_a_brute_force_grid(rng, p, intercept):
    """d = 1 and d = 2: mean, covariance and log evidence against a fine grid (~1e-9)."""
    phi, y = _data(rng, n=40, p=p)
    if not intercept:
        phi = phi[:, 1:]
    answer = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    post = answer.posterior
    assert post.reference.method == "quadrature"
    sd = np.sqrt(np.diag(post.laplace.cov))
    mean, cov, log_ev = _grid_moments(
        phi, y, PRIOR_SD, post.mode, 14 * sd, 4001 if phi.shape[1] == 1 else 801
    )
    np.testing.assert_allclose(post.mean, mean, rtol=0, atol=1e-9 * sd.max())
    np.testing.assert_allclose(post.cov, cov, rtol=1e-8, atol=1e-10 * sd.max() ** 2)
    assert abs(answer.log_evidence - log_ev) < 1e-9


def test_importance_sampling_equals_cubature_where_both_apply(rng):
    phi, y = _data(rng, n=50, p=1)
    quad = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    imp = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, method="importance", reference_draws=2**16)
    ref = imp.posterior.reference
    assert ref.method == "importance" and ref.khat < alr.KHAT_MAX
    sd = np.sqrt(np.diag(quad.posterior.cov))
    bound = 5.0 / math.sqrt(ref.ess)  # Monte Carlo, in posterior sds
    assert np.all(np.abs(imp.posterior.mean - quad.posterior.mean) / sd < bound)
    np.testing.assert_allclose(np.diag(imp.posterior.cov), sd**2, rtol=5 * math.sqrt(2) * bound)
    assert abs(imp.log_evidence - quad.log_evidence) < bound


def test_reference_error_is_negligible_against_mcmc(rng):
    """The importance reference's own error, across seeds, in posterior sds.

    The agreement test treats the reference's moments as exact; that is fair
    when their error is far below MCMC's, ~1 / sqrt(ESS) ~ 0.01 sd for 8000
    draws.  Demand 1e-3 (10x below) between two seeds with 2^16 draws (the
    default uses 2^18; measured ~4e-5 on builtin:breast-cancer).
    """
    phi, y = _data(rng, n=300, p=3)
    means = [
        alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=2**16, seed=s).posterior
        for s in (1, 2)
    ]
    sd = np.sqrt(np.diag(means[0].cov))
    assert means[0].reference.method == "importance"
    assert np.max(np.abs(means[0].mean - means[1].mean) / sd) < 1e-3
    assert np.max(np.abs(np.diag(means[0].cov) / np.diag(means[1].cov) - 1)) < 2e-3


def test_importance_is_refused_when_khat_is_too_high(rng):
    """A proposal 30x too narrow (a planted Laplace error) gives k-hat > 0.7: refused."""
    phi, y = _data(rng, n=80, p=2)
    good = alr.laplace(phi=phi, y=y, prior_sd=PRIOR_SD)
    bad = alr.Laplace(mean=good.mean, prec_chol=30.0 * good.prec_chol)
    with pytest.raises(ValueError, match=r"k-hat = .* > 0.7"):
        alr.reference(
            phi=phi, y=y, prior_sd=PRIOR_SD, approx=bad, method="importance", draws=SMALL_POOL
        )


def test_posterior_satisfies_the_contract_and_samples_its_moments(rng):
    phi, y = _data(rng, n=60, p=1)
    answer = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=2**16)
    post = answer.posterior
    assert isinstance(answer, ExactAnswer) and isinstance(post, ExactPosterior)
    draws = post.sample(rng, 40_000)
    sd = np.sqrt(np.diag(post.cov))
    # Resampled pool draws: mean error ~ sd / sqrt(40000) plus the pool's own (smaller).
    assert np.all(np.abs(draws.mean(axis=0) - post.mean) / sd < 5 / math.sqrt(40_000) + 0.01)
    # logpdf is normalised: its integral over the grid is 1.
    axes = [np.linspace(m - 14 * s, m + 14 * s, 601) for m, s in zip(post.mode, sd)]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    total = np.exp(post.logpdf(mesh)).sum() * np.prod([a[1] - a[0] for a in axes])
    assert abs(total - 1) < 1e-8


def test_laplace_error_shrinks_as_n_grows(rng):
    """Bernstein-von Mises: the shift and log sd ratio fall like n^-1/2."""
    phi, y = _data(rng, n=1600, p=1, w=[-1.0, 2.0])
    rows = alr.laplace_error_by_size(
        phi=phi, y=y, prior_sd=PRIOR_SD, sizes=(50, 1600), reference_draws=SMALL_POOL
    )
    assert rows[1].max_abs_shift < rows[0].max_abs_shift / 3  # sqrt(32) = 5.7 expected
    assert rows[1].max_log_sd_ratio < rows[0].max_log_sd_ratio / 3


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "phi, y, words",
    [
        (np.ones((3, 1)), [0, 1, 2], ["y[2] is 2.0", "0/1"]),
        (np.ones((3, 1)), [1, 1, 1], ["every label is 1", "both classes"]),
        (np.array([[1.0], [np.nan], [2.0]]), [0, 1, 0], ["phi[1, 0] is nan", "finite"]),
        (np.ones((3, 1)), [0, 1], ["one label per row"]),
    ],
)
def test_bad_input_names_the_item_and_the_fix(phi, y, words):
    with pytest.raises(ValueError) as err:
        alr.solve(phi=phi, y=y, prior_sd=1.0)
    for word in words:
        assert word in str(err.value)


def test_prior_sd_must_be_positive():
    with pytest.raises(ValueError, match=r"prior_sd must be a finite number > 0, got -1.0"):
        alr.fit_map(phi=np.ones((2, 1)), y=[0, 1], prior_sd=-1.0)


def test_predictive_in_blocks_of_rows_equals_one_product(rng, monkeypatch):
    """The predictive is computed in blocks of rows (bounded memory: 2^18 draws x 569
    rows took 4.2 GB at once); each row's value is the same weighted mean of
    sigmoid(phi^T w) over the pool, so blocks change nothing beyond rounding (1e-12)."""
    phi, y = _data(rng, n=60, p=2)
    answer = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    pool = answer.posterior.pool
    rows = rng.standard_normal((37, 3))
    direct = np.exp(pool.log_weights) @ special.expit(pool.draws @ rows.T)
    monkeypatch.setattr(alr, "_BLOCK", 5 * pool.draws.shape[0])  # 5 rows per block: 8 blocks
    np.testing.assert_allclose(answer.predictive.prob(rows), direct, rtol=1e-12, atol=0)


def test_predictive_from_a_prefix_of_the_pool(rng):
    """``prob(rows, draws=2^k)`` is the weighted mean over the pool's first 2^k points,
    their weights renormalised (a prefix of a scrambled Sobol' sequence is a balanced
    net of its own), so it estimates the same probability: here within 5e-3 of all
    2^14 points' (0.5 / sqrt(ESS of 2^10 points) ~ 0.016 is the iid bound). Any other
    number of draws is refused, naming the pool's size."""
    phi, y = _data(rng, n=60, p=2)
    answer = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    pool = answer.posterior.pool
    rows = rng.standard_normal((37, 3))
    k = 2**10
    w = np.exp(pool.log_weights[:k])
    direct = (w / w.sum()) @ special.expit(pool.draws[:k] @ rows.T)
    prefix = answer.predictive.prob(rows, draws=k)
    np.testing.assert_allclose(prefix, direct, rtol=1e-12, atol=0)
    assert np.abs(prefix - answer.predictive.prob(rows)).max() < 5e-3
    assert not np.array_equal(prefix, answer.predictive.prob(rows))
    np.testing.assert_array_equal(
        answer.predictive.prob(rows, draws=SMALL_POOL), answer.predictive.prob(rows)
    )
    for bad in (0, 3 * 2**8, 2 * SMALL_POOL):
        with pytest.raises(ValueError, match=rf"power of two .* {SMALL_POOL} draws, got {bad}"):
            answer.predictive.prob(rows, draws=bad)


def test_a_reference_is_computed_once_per_input_and_shared_read_only(rng, monkeypatch):
    """``reference`` keeps its last ``REFERENCES_KEPT`` results by their inputs' bytes:
    the same data and prior are served the same objects (read-only, so no caller can
    change another's), and any changed input (one label, the prior, the seed, the
    pool's size) is computed anew.  Power: the counter sees every computation."""
    computed = []
    real = alr._reference

    def counting(*args):
        computed.append(args)
        return real(*args)

    monkeypatch.setattr(alr, "_reference", counting)
    monkeypatch.setattr(alr, "_REFERENCES", type(alr._REFERENCES)())
    phi, y = _data(rng, n=60, p=3)
    first = alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    again = alr.solve(phi=phi.copy(), y=y.copy(), prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    assert len(computed) == 1
    assert again.posterior.reference is first.posterior.reference
    with pytest.raises(ValueError, match="read-only"):
        first.posterior.reference.mean[0] = 0.0
    flipped = y.copy()
    flipped[0] = 1.0 - flipped[0]
    changes = [
        {"phi": phi, "y": flipped, "prior_sd": PRIOR_SD, "reference_draws": SMALL_POOL},
        {"phi": phi, "y": y, "prior_sd": 2 * PRIOR_SD, "reference_draws": SMALL_POOL},
        {"phi": phi, "y": y, "prior_sd": PRIOR_SD, "reference_draws": 2 * SMALL_POOL},
    ]
    for i, kwargs in enumerate(changes, start=2):
        alr.solve(**kwargs)
        assert len(computed) == i, kwargs
    assert len(alr._REFERENCES) == alr.REFERENCES_KEPT
    alr.reference(
        phi=phi, y=y, prior_sd=PRIOR_SD, approx=first.posterior.laplace, draws=SMALL_POOL, seed=1
    )
    assert len(computed) == 5  # another seed; and the first inputs were dropped since
    alr.solve(phi=phi, y=y, prior_sd=PRIOR_SD, reference_draws=SMALL_POOL)
    assert len(computed) == 6
