"""The identities every conjugate topic's analytic module must satisfy, stated once.

Each identity below is one test, parametrized over the conjugate topics by a
:class:`Spec` (the module, its prior, how to make data, how to read a
posterior's parameters and continue from a posterior).  A new conjugate
topic adds one ``SPECS`` entry; the per-topic test files keep only the
comparisons with independent references (scipy.stats, scikit-learn,
quadrature, hand-derived values).

1. No data returns the prior, with log evidence 0 and no MLE.
2. Sequential updates equal one batch update (the first posterior becoming
   the prior of the second chunk), and the evidence factorises the same way:
   log p(D1, D2) = log p(D1) + log p(D2 | D1).
3. The evidence is the chain rule of the module's own one-step predictive:
   log p(x_1..x_n) = sum_i log p(x_i | x_<i).
4. Sufficient statistics merge: the sum of the chunks' statistics is the
   statistics of the concatenation, and adding empty statistics changes nothing.
5. A flat prior (or its limit) gives the MLE as the posterior mode, and the MLE
   is the hand-derived estimator (sample mean, counts / n, maximum, least squares).
6. The posterior's sampler matches its own mean, covariance and marginal
   quantiles (z-scores below ``Z_MAX``; false-alarm rate per check 5.7e-7,
   133 checks over the specs below: below 8e-5 per run).  Power is shown per
   topic by ``test_sampler_check_detects_planted_bug`` in its own file.

The same identities at hypothesis-drawn hyperparameters, through the topic
boundary (``Topic.hyper``/``prepare``/``solve``), are in
``tests/analytic/test_properties.py`` (section 4); the identities of the
non-conjugate or compound topics (mixture, naive Bayes, Bayes-optimal, Gaussian
classifier) live with their own structure in their files, as listed there.

Tolerances: the scalar updates are a few floating-point operations, exact or
within 1e-12 relative; the regression topics re-factor a posterior covariance
when passing it on, costing ``100 cond eps`` with the condition number
computed here.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from analytic import beta_binomial as bb
from analytic import dirichlet_categorical as dc
from analytic import exponential_gamma as eg
from analytic import gamma_poisson as gp
from analytic import linear_regression as lr
from analytic import linear_regression_nig as lrn
from analytic import normal_inverse_gamma as nig
from analytic import normal_known_variance as nkv
from analytic import pareto_uniform as pu
from tests.analytic.reference import N_DRAWS, RTOL, Z_MAX, sampler_z_scores

EPS = np.finfo(float).eps

Data = dict[str, np.ndarray]


def _cond_tol(matrix: np.ndarray) -> float:
    """Agreement of two stable solves of a system with this matrix: 100 cond eps."""
    return max(RTOL, 100.0 * float(np.linalg.cond(matrix)) * EPS)


@dataclass(frozen=True)
class Spec:
    """How to exercise one conjugate module.

    Attributes
    ----------
    module
        The analytic module: ``solve(**data, **prior)`` and
        ``sufficient_stats(**data)``; a ``fit`` with a predictive taking
        ``(y, phi)`` for the regression topics.
    prior : dict
        Keyword hyperparameters of ``module.solve`` (non-integer, sd != var,
        rate != 1, so that no convention mix-up passes by coincidence).
    make : callable (rng) -> dict
        Data as keyword arrays whose first axis is the observation.
    params : callable (posterior) -> array
        The posterior's parameters, comparable with ``prior_params``.
    prior_params : callable (prior) -> array
        The same parameters read from the prior's hyperparameters.
    continue_from : callable (posterior) -> dict
        Hyperparameters of ``module.solve`` that make the posterior the prior.
    one_step : callable (prior, data, i) -> float
        log p(x_i | x_<i) from the module's own predictive.
    roundtrip_tol : callable (prior or posterior params) -> float
        Tolerance of passing a posterior on as a prior (0: exact).
    flat : dict or None
        A flat prior (or its limit) under which the mode is the MLE.
    flat_tol : callable (data) -> float
    flat_cases : tuple of data dicts
        Edge data sets for the flat-prior identity besides ``make``'s.
    mle : callable (data) -> array, with ``flat``
        The MLE by hand (independent of the module).
    stats_tol : float
        Relative tolerance of merged against whole statistics (sums in another order).
    draws_ok : callable (draws) -> bool
        A constraint on the sampler's draws tighter than ``logpdf``'s support test.
    """

    module: Any
    prior: dict[str, Any]
    make: Callable[[np.random.Generator], Data]
    params: Callable[[Any], np.ndarray]
    prior_params: Callable[[dict[str, Any]], np.ndarray]
    continue_from: Callable[[Any], dict[str, Any]]
    one_step: Callable[[dict[str, Any], Data, int], float]
    roundtrip_tol: Callable[[Any], float] = lambda post: 1e-12
    empty_tol: Callable[[dict[str, Any]], float] = lambda prior: 0.0
    flat: dict[str, Any] | None = None
    flat_tol: Callable[[Data], float] = lambda data: 0.0
    flat_cases: tuple[Data, ...] = field(default_factory=tuple)
    mle: Callable[[Data], np.ndarray] | None = None
    draws_ok: Callable[[np.ndarray], bool] = lambda draws: True
    stats_tol: float = 0.0

    def solve(self, data: Data, prior: dict[str, Any] | None = None):
        return self.module.solve(**data, **(self.prior if prior is None else prior))


def _rows(data: Data, a: int, b: int | None = None) -> Data:
    return {k: v[a:b] for k, v in data.items()}


def _n(data: Data) -> int:
    return len(next(iter(data.values())))


def _scalar(module, **kw) -> dict[str, Any]:
    """Spec fields of a one-column topic: log p(x_i | x_<i) through
    ``solve(x=x[:i]).predictive`` (its pmf or pdf)."""

    def one_step(prior, data, i):
        pred = module.solve(x=data["x"][:i], **prior).predictive
        density = pred.logpmf if hasattr(pred, "logpmf") else pred.logpdf
        return float(density(data["x"][i]))

    return dict(module=module, one_step=one_step, **kw)


def _regression_step(module):
    def step(prior, data, i):
        phi, y = data["phi"], data["y"]
        fit = module.fit(phi=phi[:i], y=y[:i], **prior)
        return float(fit.predictive.logpdf(y[i : i + 1], phi[i : i + 1])[0])

    return step


def _sinusoid(rng) -> Data:
    x, y = lr.sinusoid(rng, n=25, noise_sd=0.3)
    return {"phi": lr.design_matrix(x=x, degree=3)[0], "y": y}


def _least_squares(data: Data) -> np.ndarray:
    return np.linalg.lstsq(data["phi"], data["y"], rcond=None)[0]


# A general regression prior: non-zero mean, correlated, diagonally dominant covariance.
M0 = np.array([0.5, -1.0, 0.3, 0.2])
S0 = np.array(
    [[2.0, 0.3, 0.0, -0.2], [0.3, 1.5, 0.4, 0.0], [0.0, 0.4, 3.0, 0.5], [-0.2, 0.0, 0.5, 1.0]]
)
CATEGORIES = ("a", "b", "c")
CONC = np.array([0.5, 2.0, 1.5])  # one entry below 1, none equal


def _codes(values) -> Data:
    return {"x": np.asarray(values, dtype=int)}


def _bits(values) -> Data:
    return {"x": np.asarray(values, dtype=float)}


SPECS: dict[str, Spec] = {
    "beta-binomial": Spec(
        **_scalar(
            bb,
            prior=dict(a=2.5, b=1.5),
            make=lambda rng: _bits(rng.random(40) < 0.35),
            params=lambda p: np.array([p.a, p.b]),
            prior_params=lambda h: np.array([h["a"], h["b"]]),
            continue_from=lambda p: dict(a=p.a, b=p.b),
            # Beta(1, 1) is flat: the posterior is the likelihood; all-zero and
            # all-one data put the mode on the boundary.
            flat=dict(a=1.0, b=1.0),
            flat_cases=tuple(
                _bits(v) for v in ([1, 0, 0, 1, 1], [0, 0, 0], [1, 1], [0, 1, 0, 0, 0, 0, 0])
            ),
            mle=lambda d: np.array([d["x"].mean()]),
        )
    ),
    "gamma-poisson": Spec(
        **_scalar(
            gp,
            prior=dict(shape=2.5, rate=0.8),
            make=lambda rng: {"x": rng.poisson(3.2, size=25).astype(float)},
            params=lambda p: np.array([p.shape, p.rate]),
            prior_params=lambda h: np.array([h["shape"], h["rate"]]),
            continue_from=lambda p: dict(shape=p.shape, rate=p.rate),
            # Gamma(1, rate -> 0) is flat on (0, inf): the mode (sum x) / (n + 1e-12)
            # is the MLE within 1e-12 / n relative.
            flat=dict(shape=1.0, rate=1e-12),
            flat_tol=lambda d: RTOL,
            mle=lambda d: np.array([d["x"].mean()]),
            stats_tol=1e-12,
        )
    ),
    "exponential-gamma": Spec(
        **_scalar(
            eg,
            prior=dict(shape=2.5, rate=0.8),
            make=lambda rng: {"x": rng.exponential(1 / 1.7, size=25)},
            params=lambda p: np.array([p.shape, p.rate]),
            prior_params=lambda h: np.array([h["shape"], h["rate"]]),
            continue_from=lambda p: dict(shape=p.shape, rate=p.rate),
            # Gamma(1, rate -> 0) is flat on (0, inf): the mode n / (sum x + 1e-12) is
            # the MLE n / sum x within 1e-12 / sum x relative.
            flat=dict(shape=1.0, rate=1e-12),
            flat_tol=lambda d: RTOL,
            mle=lambda d: np.array([1.0 / d["x"].mean()]),
            stats_tol=1e-12,
        )
    ),
    "normal-known-variance": Spec(
        **_scalar(
            nkv,
            prior=dict(prior_mean=1.0, prior_sd=2.0, noise_sd=1.5),
            make=lambda rng: {"x": rng.normal(0.3, 1.5, size=20)},
            params=lambda p: np.array([p.loc, p.sd]),
            prior_params=lambda h: np.array([h["prior_mean"], h["prior_sd"]]),
            continue_from=lambda p: dict(prior_mean=p.loc, prior_sd=p.sd, noise_sd=1.5),
            # prior_sd = 1e8 adds precision 1e-16 against n / s^2 ~ 9.
            flat=dict(prior_mean=5.0, prior_sd=1e8, noise_sd=1.5),
            flat_tol=lambda d: RTOL,
            mle=lambda d: np.array([d["x"].mean()]),
            stats_tol=1e-12,
        )
    ),
    "normal-inverse-gamma": Spec(
        **_scalar(
            nig,
            prior=dict(mu0=0.5, kappa0=2.0, alpha0=3.0, beta0=2.0),
            make=lambda rng: {"x": rng.normal(1.0, 0.8, size=20)},
            params=lambda p: np.array([p.mu, p.kappa, p.alpha, p.beta]),
            prior_params=lambda h: np.array([h["mu0"], h["kappa0"], h["alpha0"], h["beta0"]]),
            continue_from=lambda p: dict(mu0=p.mu, kappa0=p.kappa, alpha0=p.alpha, beta0=p.beta),
            # No flat identity: the joint mode of sigma2 is m2 / (n + 3), not the MLE
            # m2 / n; test_vague_prior_limit in its file checks the limit by hand.
            stats_tol=1e-12,
        )
    ),
    "pareto-uniform": Spec(
        **_scalar(
            pu,
            prior=dict(scale=1.0, shape=2.5),  # scale below max x: the data move the lower end
            make=lambda rng: {"x": rng.uniform(0.0, 3.0, size=15)},
            params=lambda p: np.array([p.scale, p.shape]),
            prior_params=lambda h: np.array([h["scale"], h["shape"]]),
            continue_from=lambda p: dict(scale=p.scale, shape=p.shape),
            # shape -> 0 with the scale below max x: the posterior's lower end (its
            # mode) is the sample maximum, the MLE, exactly.
            flat=dict(scale=0.1, shape=1e-12),
            mle=lambda d: np.array([d["x"].max()]),
        )
    ),
    "pareto-uniform[scale>max]": Spec(
        **_scalar(
            pu,
            prior=dict(scale=4.0, shape=2.5),  # scale above max x: the data leave it
            make=lambda rng: {"x": rng.uniform(0.0, 3.0, size=15)},
            params=lambda p: np.array([p.scale, p.shape]),
            prior_params=lambda h: np.array([h["scale"], h["shape"]]),
            continue_from=lambda p: dict(scale=p.scale, shape=p.shape),
            # log Z = shape log(scale) - shape log(scale), each term rounded: a few eps of it.
            empty_tol=lambda h: 4 * EPS * h["shape"] * abs(np.log(h["scale"])),
        )
    ),
    "dirichlet-categorical": Spec(
        **_scalar(
            dc,
            prior=dict(categories=CATEGORIES, concentration=CONC),
            draws_ok=lambda draws: bool(np.all(np.abs(draws.sum(axis=1) - 1.0) <= 1e-12)),
            make=lambda rng: _codes(rng.choice(3, size=30, p=[0.2, 0.5, 0.3])),
            params=lambda p: np.asarray(p.alpha, dtype=float),
            prior_params=lambda h: np.broadcast_to(np.asarray(h["concentration"], float), (3,)),
            continue_from=lambda p: dict(categories=CATEGORIES, concentration=p.alpha),
            # Dirichlet(1, ..., 1) is flat on the simplex: the MAP is counts / n, also
            # when a category is unseen (its mode 0).
            flat=dict(categories=CATEGORIES, concentration=1.0),
            flat_cases=tuple(_codes(v) for v in ([0, 1, 1, 2, 2, 2], [1, 1, 2], [0, 0, 0, 0, 1])),
            mle=lambda d: np.bincount(d["x"], minlength=3) / d["x"].size,
        )
    ),
    "dirichlet-categorical[scalar]": Spec(
        **_scalar(
            dc,
            prior=dict(categories=CATEGORIES, concentration=0.7),  # one number, broadcast
            draws_ok=lambda draws: bool(np.all(np.abs(draws.sum(axis=1) - 1.0) <= 1e-12)),
            make=lambda rng: _codes(rng.choice(3, size=30, p=[0.2, 0.5, 0.3])),
            params=lambda p: np.asarray(p.alpha, dtype=float),
            prior_params=lambda h: np.broadcast_to(np.asarray(h["concentration"], float), (3,)),
            continue_from=lambda p: dict(categories=CATEGORIES, concentration=p.alpha),
        )
    ),
    "linear-regression": Spec(
        module=lr,
        prior=dict(noise_sd=0.3, prior_mean=M0, prior_cov=S0),
        make=_sinusoid,
        params=lambda p: np.concatenate([p.mean, np.ravel(p.cov)]),
        prior_params=lambda h: np.concatenate([h["prior_mean"], np.ravel(h["prior_cov"])]),
        continue_from=lambda p: dict(noise_sd=0.3, prior_mean=p.mean, prior_cov=p.cov),
        one_step=_regression_step(lr),
        # Passing S_1 on (or S0 through S0^-1 and back) re-factors it: ~cond eps.
        roundtrip_tol=lambda p: _cond_tol(p.cov),
        empty_tol=lambda h: _cond_tol(h["prior_cov"]),
        # prior_sd = 1e8 adds precision 1e-16 I against Phi^T Phi / s^2 (eigenvalues
        # >= ~1e-2): the mode is w_hat up to the normal equations' cond eps.
        flat=dict(noise_sd=0.3, prior_sd=1e8, prior_mean=5.0),
        flat_tol=lambda d: _cond_tol(d["phi"].T @ d["phi"]),
        mle=_least_squares,
        stats_tol=1e-12,
    ),
    "linear-regression-nig": Spec(
        module=lrn,
        prior=dict(alpha0=3.0, beta0=0.5, prior_mean=M0, prior_cov=S0),
        make=_sinusoid,
        params=lambda p: np.concatenate([p.loc, np.ravel(p.scale_cov), [p.alpha, p.beta]]),
        prior_params=lambda h: np.concatenate(
            [h["prior_mean"], np.ravel(h["prior_cov"]), [h["alpha0"], h["beta0"]]]
        ),
        continue_from=lambda p: dict(
            alpha0=p.alpha, beta0=p.beta, prior_mean=p.loc, prior_cov=p.scale_cov
        ),
        one_step=_regression_step(lrn),
        roundtrip_tol=lambda p: _cond_tol(p.scale_cov),
        empty_tol=lambda h: _cond_tol(h["prior_cov"]),
        # No flat identity: the joint mode of sigma2 is RSS / (n + d + 2), not the
        # MLE RSS / n; test_vague_prior_limit in its file checks the limit by hand.
        stats_tol=1e-12,
    ),
}

IDS = list(SPECS)
FLAT = [name for name in IDS if SPECS[name].flat is not None]
CUTS = {"none": 0.0, "one": None, "half": 0.5, "all": 1.0}


def _close(got, want, tol: float) -> None:
    """Equal to ``tol`` relative, entries near zero measured against the largest."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if tol == 0.0:
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.abs(want).max()))


@pytest.fixture(params=IDS)
def spec(request) -> Spec:
    return SPECS[request.param]


@pytest.fixture
def data(spec, rng) -> Data:
    return spec.make(rng)


# ---------------------------------------------------------------- 1. no data


def test_no_data_returns_the_prior(spec, data):
    ans = spec.solve(_rows(data, 0, 0))
    tol = spec.empty_tol(spec.prior)
    _close(spec.params(ans.posterior), spec.prior_params(spec.prior), tol)
    assert abs(ans.log_evidence) <= tol
    assert ans.mle is None


# ---------------------------------------------------------------- 2. sequential = batch


@pytest.mark.parametrize("cut", list(CUTS))
def test_sequential_updates_equal_one_batch_evidence_included(spec, data, cut):
    n = _n(data)
    k = 1 if CUTS[cut] is None else round(CUTS[cut] * n)
    first = spec.solve(_rows(data, 0, k))
    second = spec.solve(_rows(data, k), spec.continue_from(first.posterior))
    batch = spec.solve(data)
    tol = spec.roundtrip_tol(first.posterior)
    _close(spec.params(second.posterior), spec.params(batch.posterior), tol)
    _close(second.posterior.mean, batch.posterior.mean, tol)
    # p(D1, D2) = p(D1) p(D2 | D1)
    ev = first.log_evidence + second.log_evidence
    assert ev == pytest.approx(batch.log_evidence, rel=max(tol, 1e-12))


# ---------------------------------------------------------------- 3. evidence chain rule


def test_log_evidence_is_the_chain_rule_of_the_predictive(spec, data):
    """log p(x_1..x_n) = sum_i log p(x_i | x_<i), one observation at a time."""
    chain = sum(spec.one_step(spec.prior, data, i) for i in range(_n(data)))
    assert spec.solve(data).log_evidence == pytest.approx(chain, rel=RTOL)


# ---------------------------------------------------------------- 4. statistics merge


def _flat_stats(suff) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in dataclasses.astuple(suff)])


def test_statistics_of_chunks_merge_to_those_of_the_whole(spec, data):
    n = _n(data)
    cuts = [0, n // 5, n // 5, (3 * n) // 4, n]  # one empty chunk among them
    stats = spec.module.sufficient_stats
    kw = {"n_categories": 3} if spec.module is dc else {}
    merged = stats(**_rows(data, 0, 0), **kw)
    for a, b in itertools.pairwise(cuts):
        merged = merged + stats(**_rows(data, a, b), **kw)
    whole = stats(**data, **kw)
    # A float sum in another order: equal to rounding (stats_tol), else exactly.
    _close(_flat_stats(merged), _flat_stats(whole), spec.stats_tol)
    empty = stats(**_rows(data, 0, 0), **kw)
    for got in (empty + whole, whole + empty):  # the empty statistics are the identity
        np.testing.assert_array_equal(_flat_stats(got), _flat_stats(whole))


# ---------------------------------------------------------------- 5. flat prior = MLE


@pytest.mark.parametrize("name", FLAT)
def test_flat_prior_mode_is_the_mle(name, rng):
    spec = SPECS[name]
    for data in (spec.make(rng), *spec.flat_cases):
        ans = spec.solve(data, spec.flat)
        tol = spec.flat_tol(data)
        _close(ans.posterior.mode, ans.mle, tol)
        _close(ans.mle, spec.mle(data), max(tol, 1e-15))


# ---------------------------------------------------------------- 6. sampler


def test_sampler_matches_mean_cov_and_quantiles(spec, data, rng):
    post = spec.solve(data).posterior
    d = len(post.parameters)
    draws = post.sample(rng, N_DRAWS)
    assert draws.shape == (N_DRAWS, d)
    assert np.all(np.isfinite(post.logpdf(draws[:1000]))), "draws outside the support"
    assert spec.draws_ok(draws)
    z = sampler_z_scores(
        draws, mean=post.mean, cov=post.cov, marginals=[post.marginal(i) for i in range(d)]
    )
    assert max(abs(v) for v in z.values()) < Z_MAX, z
