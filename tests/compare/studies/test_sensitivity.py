"""Prior sensitivity (compare/studies/sensitivity.py, analytic/sensitivity.py, each
topic's ``sensitivity_path`` and ``power_scaled``, the CLI command).

What is checked, and against what:

* every builtin topic declares ``Sensitivity`` or ``Unsupported`` (whose
  reason the study gives), and the study names no topic;

* the exact sweep equals single exact runs (``Topic.solve`` at each grid
  value; for linear regression also a per-point Cholesky formulation) to 1e-9;
* the power-scaled conjugate posteriors against self-normalised importance
  weighting of exact iid base draws (weights p(theta)^(alpha-1) or
  p(D|theta)^(alpha-1), computed from the exact densities, not from the
  formulas under test); z-scores from the delta-method standard error;
* PyMC's log prior and log likelihood equal the exact ones up to a constant;
* ``arviz_stats.psense`` against the exact power-scaling sensitivity: on
  exact iid draws (an empirical null over seeds) and on real MCMC fits,
  with the tolerance from that null at the fit's effective sample size;
* MCMC points agree (the calibrated verdict at each), the CLI contract
  (exit codes, JSON keys, files) and bad input (exit 3, nothing written);
* the report's sensitivity section.

Each statistical test states its false-alarm rate and has a planted bug it
catches (the power).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from analytic import linear_regression as lr
from analytic import normal_known_variance as a_nkv
from analytic import sensitivity as asens
from compare.core.registry import InputError, Sensitivity, Unsupported
from compare.interfaces.cli import main
from compare.studies import sensitivity as sens
from compare.topics import all_topics, get_topic
from compare.topics.catalogue import CATALOGUE

#: The builtin topics, by CLI name (a topic's module is named after it).
BUILTIN = tuple(entry.replace("_", "-") for entry in CATALOGUE)
#: The builtin topics the study sweeps, and those with exact power-scaling.
SWEPT = tuple(name for name in BUILTIN if sens.declared(get_topic(name)) is not None)
CONJUGATE = tuple(name for name in SWEPT if sens.power_scaled_of(get_topic(name)) is not None)


def _builtin(name: str, dataset: str | None = None, **override):
    topic = get_topic(name)
    ds = topic.builtin[0] if dataset is None else topic.builtin_data(dataset)
    hyper = {**topic.hyper(dataset=ds), **override}
    return topic, ds.load(), hyper, f"builtin:{ds.name}"


# --- what each topic declares ------------------------------------------------------
@pytest.mark.parametrize("name", BUILTIN)
def test_every_builtin_topic_declares_sensitivity_or_unsupported(name):
    topic = get_topic(name)
    assert isinstance(topic.sensitivity, (Sensitivity, Unsupported)), topic.sensitivity
    if isinstance(topic.sensitivity, Sensitivity):
        s = topic.sensitivity
        swept = sens.sweep_parameters(topic)
        assert s.default_param in swept
        assert set(s.path_params or ()) <= set(swept)
        assert set(s.linear_grids) <= set(swept)
        assert not set(s.not_swept) & set(swept)
        sens.check_topic(topic)  # accepted


def test_the_supported_list_is_asked_of_the_topics():
    supported = [n for n in sens.closed_form_topics() if n in BUILTIN]
    assert supported == [
        t.name for t in all_topics() if t.name in BUILTIN and isinstance(t.sensitivity, Sensitivity)
    ]
    assert set(BUILTIN) - set(supported) == {"gaussian-mixture", "logistic-regression"}
    conjugate = [n for n in sens.power_scaled_topics() if n in BUILTIN]
    assert conjugate == [
        t.name
        for t in all_topics()
        if t.name in BUILTIN
        and isinstance(t.sensitivity, Sensitivity)
        and t.sensitivity.power_scaled is not None
    ]
    # every conjugate topic and both linear regressions (a new conjugate topic joins by
    # declaring its power-scaled posterior, not by an edit here)
    assert {
        "beta-binomial",
        "dirichlet-categorical",
        "linear-regression",
        "linear-regression-nig",
    } <= set(conjugate) and len(conjugate) >= 8


def test_an_unsupported_topic_is_refused_with_its_declared_reason():
    topic = dataclasses.replace(
        get_topic("beta-binomial"),
        name="planted-unsupported",
        sensitivity=Unsupported("a planted reason"),
    )
    with pytest.raises(InputError) as info:
        sens.check_topic(topic)
    message = str(info.value)
    assert message.startswith(
        "planted-unsupported has no closed-form posterior "
        "(a planted reason), so an exact sweep is not possible; "
        "sensitivity works for: "
    )
    assert set(message.rsplit(": ", 1)[1].split(", ")) >= set(SWEPT)
    for name in BUILTIN:  # the builtin refusals say the reason each topic declares
        declared = get_topic(name).sensitivity
        if isinstance(declared, Unsupported):
            with pytest.raises(InputError, match=re.escape(f"({declared.reason})")):
                sens.check_topic(get_topic(name))
    # A topic that declares nothing (a topic file) is swept point by point, with no
    # power-scaling and no report section, unless it says it has no closed form.
    bare = dataclasses.replace(get_topic("beta-binomial"), name="planted-bare", sensitivity=None)
    sens.check_topic(bare)
    assert sens.power_scaled_of(bare) is None and sens.sweep_parameters(bare) == ("a", "b")
    topic, data, hyper, source = _builtin("beta-binomial")
    sweep = sens.exact_sweep(
        bare, data=data, hyper=hyper, param="a", grid=np.array([1.0, 2.0]), source=source
    )
    assert sweep.method == "per-point solve"
    with pytest.raises(InputError, match=r"[(]no closed form here[)]"):
        sens.check_topic(dataclasses.replace(bare, not_closed_form="no closed form here"))


def test_the_study_names_no_topic():
    """The study asks each topic (``Topic.sensitivity``); it holds no topic's name."""
    source = Path(sens.__file__).read_text()
    named = [name for name in BUILTIN if f'"{name}"' in source or f"'{name}'" in source]
    assert named == []
    assert "topic.name ==" not in source and "topic.name in" not in source


# --- the exact sweep equals single runs ---------------------------------------------
@pytest.mark.parametrize("param", ["prior_sd", "noise_sd", "lambda"])
@pytest.mark.parametrize("dataset", ["sinusoid", "diabetes"])
def test_regression_path_equals_single_runs(dataset, param):
    topic, data, hyper, source = _builtin("linear-regression", dataset, prior_mean=0.3)
    grid = np.geomspace(1e-3, 1e3, 7) if param != "lambda" else np.geomspace(1e-6, 10.0, 7)
    sweep = sens.exact_sweep(topic, data=data, hyper=hyper, param=param, grid=grid, source=source)
    assert sweep.method == "eigendecomposition"
    x, hyper0 = topic.prepare(data, dict(hyper))
    for g, value in enumerate(grid):
        single = topic.solve(x=x, **sens.hyper_at(topic, hyper=hyper0, param=param, value=value))
        post = single.posterior
        scale = np.sqrt(np.diag(post.cov))
        np.testing.assert_allclose(sweep.mean[g], post.mean, rtol=1e-9, atol=1e-9 * scale.max())
        np.testing.assert_allclose(sweep.sd[g], scale, rtol=1e-9)
        np.testing.assert_allclose(sweep.map[g], post.mode, rtol=1e-9, atol=1e-9 * scale.max())
        np.testing.assert_allclose(sweep.log_evidence[g], single.log_evidence, rtol=1e-10)
        lo = [post.marginal(i).ppf(0.025) for i in range(len(scale))]
        np.testing.assert_allclose(sweep.lower[g], lo, rtol=1e-9, atol=1e-9 * scale.max())


def test_eigendecomposition_path_equals_per_point_cholesky(rng):
    d, n, g = 12, 40, 25
    phi = rng.normal(size=(n, d))
    y = phi @ rng.normal(size=d) + rng.normal(size=n)
    s = lr.sufficient_stats(phi=phi, y=y)
    noise_var = np.full(g, 0.7)
    prior_var = np.geomspace(1e-4, 1e4, g)
    path = asens.gaussian_linear_path(
        gram=s.gram,
        phi_t_y=s.phi_t_y,
        y_t_y=s.y_t_y,
        n=n,
        noise_var=noise_var,
        prior_var=prior_var,
        prior_mean=0.2,
    )
    mean, sd = asens.gaussian_linear_path_cholesky(
        gram=s.gram, phi_t_y=s.phi_t_y, noise_var=noise_var, prior_var=prior_var, prior_mean=0.2
    )
    np.testing.assert_allclose(path.mean, mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(path.sd, sd, rtol=1e-9)
    # the evidence against a dense Gaussian log density (independent formula)
    k = 7
    cov = noise_var[k] * np.eye(n) + prior_var[k] * phi @ phi.T
    ref = stats.multivariate_normal(phi @ np.full(d, 0.2), cov).logpdf(y)
    np.testing.assert_allclose(path.log_evidence[k], ref, rtol=1e-10)


@pytest.mark.parametrize("name", SWEPT)
def test_sweep_equals_single_exact_runs(name):
    """Every closed-form topic, on its report grid's first, middle and last value."""
    topic, data, hyper, source = _builtin(name)
    param = topic.sensitivity.default_param
    x, hyper0 = sens._prepare(topic, data, hyper, source)
    full = sens.default_grid(topic, param=param, hyper=hyper, n_obs=sens._n_obs(x))
    grid = full[[0, 1, len(full) // 2, -2, -1]]
    sweep = sens.exact_sweep(topic, data=data, hyper=hyper, param=param, grid=grid, source=source)
    for g, value in enumerate(grid):
        single = topic.solve(x=x, **{**hyper0, **_swept(topic, hyper0, param, value)})
        post = single.posterior
        # bayes-optimal's compared hypotheses change with the noise: match by name
        cols = [sweep.parameters.index(n) for n in post.parameters]
        rest = np.setdiff1d(np.arange(len(sweep.parameters)), cols)
        assert np.all(np.isnan(sweep.mean[g, rest]))
        np.testing.assert_allclose(sweep.mean[g, cols], post.mean, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(
            sweep.sd[g, cols], np.sqrt(np.diag(post.cov)), rtol=1e-10, atol=1e-12
        )
        np.testing.assert_allclose(sweep.log_evidence[g], single.log_evidence, rtol=1e-10)
        if post.mode is not None:
            np.testing.assert_allclose(sweep.map[g, cols], post.mode, rtol=1e-10, atol=1e-12)
        if post.marginal(0) is not None:
            i = cols[0]
            np.testing.assert_allclose(
                [sweep.lower[g, i], sweep.upper[g, i]],
                post.marginal(0).ppf([0.025, 0.975]),
                rtol=1e-10,
            )


#: Every parameter of the topics whose vectorised path covers all of them.
_ALL_CONJUGATE_PARAMS = [
    (name, param)
    for name in SWEPT
    if get_topic(name).sensitivity.path is not None
    and get_topic(name).sensitivity.path_params is None
    for param in sens.sweep_parameters(get_topic(name))
]


@pytest.mark.parametrize("name, param", _ALL_CONJUGATE_PARAMS)
def test_vectorised_conjugate_path_equals_single_runs(name, param):
    """Every sweepable hyperparameter of the conjugate topics (the vectorised path)."""
    topic, data, hyper, source = _builtin(name)
    if name == "dirichlet-categorical":  # a per-category base value, swept as one number
        hyper = {**hyper, "concentration": (0.5, 1.0, 2.0, 4.0)}
    x, hyper0 = sens._prepare(topic, data, hyper, source)
    grid = sens.default_grid(
        topic, param=param, hyper={**hyper, "concentration": 1.0}, n_obs=0, points=5
    )
    sweep = sens.exact_sweep(topic, data=data, hyper=hyper, param=param, grid=grid, source=source)
    assert sweep.method == "vectorised closed form"
    for g, value in enumerate(grid):
        single = topic.solve(x=x, **{**hyper0, **_swept(topic, hyper0, param, value)})
        post = single.posterior
        np.testing.assert_allclose(sweep.mean[g], post.mean, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(sweep.sd[g], np.sqrt(np.diag(post.cov)), rtol=1e-10)
        np.testing.assert_allclose(sweep.log_evidence[g], single.log_evidence, rtol=1e-10)
        mode = np.full(len(post.parameters), np.nan) if post.mode is None else post.mode
        np.testing.assert_allclose(sweep.map[g], mode, rtol=1e-10, atol=1e-12)
        for i in range(len(post.parameters)):
            np.testing.assert_allclose(
                [sweep.lower[g, i], sweep.upper[g, i]],
                post.marginal(i).ppf([0.025, 0.975]),
                rtol=1e-10,
            )


def _swept(topic, hyper0, param, value):
    h = sens.hyper_at(topic, hyper=hyper0, param=param, value=value)
    derived = sens.derived_parameter(topic, param)
    key = param if derived is None else derived.sets
    return {key: h[key]}


# --- power-scaled posteriors against importance weights -------------------------------
#: Informative priors, so that prior power-scaling moves the posterior.
_PS_CASES = {
    "beta-binomial": dict(a=8.0, b=3.0),
    "gamma-poisson": dict(shape=30.0, rate=10.0),
    "normal-known-variance": dict(prior_sd=0.5),
    "normal-inverse-gamma": dict(kappa0=20.0, alpha0=6.0, beta0=400.0),
    "pareto-uniform": dict(shape=4.0),
    "dirichlet-categorical": dict(concentration=30.0),
    "linear-regression": dict(prior_sd=2.0),
    "linear-regression-nig": dict(prior_scale=3.0, alpha0=4.0, beta0=0.5),
}
_PS_DATA = {"normal-known-variance": "conflict"}
#: Per-case false-alarm rate of the IS comparison (Bonferroni over its quantities).
_IS_ALPHA = 1e-5
_IS_DRAWS = 200_000


def _is_zscores(topic, data, hyper, source, *, alpha, component, rng, scaled=None):
    """z of SNIS estimates (mean and P(theta_i <= exact scaled median)) vs the exact
    power-scaled posterior; weights from the exact base prior / likelihood densities."""
    x, h = sens._prepare(topic, data, hyper, source)
    base = topic.solve(x=x, **h).posterior
    theta = base.sample(rng, _IS_DRAWS)
    log_prior, log_lik = sens._exact_log_densities(topic, x, h, theta)
    logw = (alpha - 1.0) * (log_prior if component == "prior" else log_lik)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    fn = scaled or sens.power_scaled_of(topic)
    target = fn(x=x, **sens._power_hyper(topic, h), alpha=alpha, component=component)
    z = []
    for i in range(theta.shape[1]):
        marginal = target.marginal(i)
        for f, expected in (
            (theta[:, i], marginal.mean()),
            ((theta[:, i] <= marginal.median()).astype(float), 0.5),
        ):
            est = float(w @ f)
            se = float(np.sqrt(np.sum(w * w * (f - est) ** 2)))  # delta method for SNIS
            z.append((est - expected) / se)
    return np.array(z)


@pytest.mark.parametrize("alpha", [0.8, 1.25])
@pytest.mark.parametrize("component", asens.COMPONENTS)
@pytest.mark.parametrize("name", CONJUGATE)
def test_power_scaled_posterior_against_importance_weights(name, component, alpha, rng):
    """False-alarm rate <= 1e-5 per case (SNIS asymptotically normal; the weights' variance
    is finite: alpha in [0.8, 1.25] keeps the target narrower than twice the proposal)."""
    # A topic not listed here runs with its first data set's suggested prior.
    topic, data, hyper, source = _builtin(name, _PS_DATA.get(name), **_PS_CASES.get(name, {}))
    z = _is_zscores(topic, data, hyper, source, alpha=alpha, component=component, rng=rng)
    threshold = stats.norm.isf(_IS_ALPHA / (2 * z.size))
    assert np.max(np.abs(z)) <= threshold, z


def test_planted_power_scaling_bugs_are_caught(rng):
    """Power: the NIG prior^alpha without its (alpha-1)/2 term on the InvGamma shape (and
    the regression's d(alpha-1)/2), and a Normal prior^alpha that scales the variance by
    alpha instead of 1/alpha."""
    topic, data, hyper, source = _builtin(
        "normal-inverse-gamma", **_PS_CASES["normal-inverse-gamma"]
    )

    def nig_bug(*, x, mu0, kappa0, alpha0, beta0, alpha, component):
        from analytic import normal_inverse_gamma as nig
        from analytic import normal_known_variance as nkv

        return nig.update(
            suff=nkv.sufficient_stats(x=x),
            mu0=mu0,
            kappa0=alpha * kappa0,
            alpha0=alpha * (alpha0 + 1.0) - 1.0,
            beta0=alpha * beta0,
        )

    z = _is_zscores(
        topic, data, hyper, source, alpha=1.25, component="prior", rng=rng, scaled=nig_bug
    )
    assert np.max(np.abs(z)) > stats.norm.isf(_IS_ALPHA / (2 * z.size)), z

    topic, data, hyper, source = _builtin(
        "linear-regression-nig", **_PS_CASES["linear-regression-nig"]
    )

    def nig_regression_bug(*, x, alpha0, beta0, prior_scale, alpha, component, **_):
        from analytic import linear_regression_nig as lrn

        d = x.stats.d  # the (sigma2)^(-d(alpha-1)/2) factor of the scaled Normal forgotten
        return lrn.update(
            suff=x.stats,
            alpha0=alpha * (alpha0 + 1.0) - 1.0,
            beta0=alpha * beta0,
            prior_mean=0.0,
            prior_cov=(prior_scale**2 / alpha) * np.eye(d),
        )

    z = _is_zscores(
        topic,
        data,
        hyper,
        source,
        alpha=1.25,
        component="prior",
        rng=rng,
        scaled=nig_regression_bug,
    )
    assert np.max(np.abs(z)) > stats.norm.isf(_IS_ALPHA / (2 * z.size)), z

    topic, data, hyper, source = _builtin("normal-known-variance", "conflict")

    def nkv_bug(*, x, prior_mean, prior_sd, noise_sd, alpha, component):
        return a_nkv.power_scaled(
            x=x,
            prior_mean=prior_mean,
            prior_sd=prior_sd * alpha**0.5,
            noise_sd=noise_sd,
            alpha=1.0,
            component=component,
        )

    z = _is_zscores(
        topic, data, hyper, source, alpha=1.25, component="prior", rng=rng, scaled=nkv_bug
    )
    assert np.max(np.abs(z)) > stats.norm.isf(_IS_ALPHA / (2 * z.size)), z


def test_cjs_distance_identities():
    base = stats.norm(0.0, 1.0)
    assert asens.cjs_distance(base=base, scaled=base, lower=-4, upper=4) == 0.0
    # a shift is mirror-symmetric: the x and -x orientations give the same distance
    shifted = stats.norm(0.1, 1.0)
    d = asens.cjs_distance(base=base, scaled=shifted, lower=-4, upper=4)
    d_mirror = asens.cjs_distance(
        base=stats.norm(0.0, 1.0), scaled=stats.norm(-0.1, 1.0), lower=-4, upper=4
    )
    assert d > 0 and d == pytest.approx(d_mirror, rel=1e-10)
    # the range matters (psense normalises by int P + Q over the draws' range)
    assert asens.cjs_distance(base=base, scaled=shifted, lower=-6, upper=6) < d
    # Dirichlet(1, ..., 1)^alpha is Dirichlet(1, ..., 1): zero prior sensitivity
    topic, data, hyper, source = _builtin("dirichlet-categorical")
    x, h = sens._prepare(topic, data, {**hyper, "concentration": 1.0}, source)
    prior, lik, *_ = sens.exact_power_scaling(topic, x=x, hyper=h)
    assert np.all(prior == 0.0) and np.all(lik > 0.0)
    # psense cannot weight a constant log prior (PSIS: "All tail values are the same"):
    # NaN and a diagnosis that says so, where the exact value is 0
    tree = sens.iid_tree(topic, x=x, hyper=h, rng=np.random.default_rng(1), chains=2, draws=200)
    ps_prior, ps_lik = sens.psense_values(tree, variables=("theta",))
    assert np.all(np.isnan(ps_prior)) and np.all(np.isfinite(ps_lik))


# --- psense against the exact value ---------------------------------------------------
#: Replications of the empirical null (psense on exact iid draws).
NULL_REPS = 20
#: Family-wise false-alarm rate of the psense-vs-exact comparisons in this file.
PSENSE_ALPHA = 1e-3


def _psense_null(topic, x, hyper, *, chains, draws, rng, reps=NULL_REPS):
    """psense - exact on exact iid draws, (reps, 2d): prior columns, then likelihood."""
    out = []
    for _ in range(reps):
        tree = sens.iid_tree(topic, x=x, hyper=hyper, rng=rng, chains=chains, draws=draws)
        theta = tree.posterior["theta"].values.reshape(chains * draws, -1)
        ps_prior, ps_lik = sens.psense_values(tree, variables=("theta",))
        prior, lik, *_ = sens.exact_power_scaling(
            topic, x=x, hyper=hyper, lower=theta.min(axis=0), upper=theta.max(axis=0)
        )
        out.append(np.concatenate([ps_prior - prior, ps_lik - lik]))
    return np.array(out)


@pytest.mark.parametrize("name", CONJUGATE)
def test_psense_on_iid_draws_is_centred_on_the_exact_value(name, rng):
    """psense's mean over 6 seeds (4 x 500 exact iid draws each, 4 x 250 for the 4-parameter ones) lies within three of
    psense's single-run sds of the exact value.  psense is biased upwards (Monte Carlo
    noise adds to a distance): bias/sd 0.04-0.83 over 40 seeds (docs/studies.md); the
    mean of 6 has sd 0.41 sd, so a false alarm needs a 5.3-sigma excursion.  Power: an exact value 20% off
    (the prior of normal-known-variance on builtin:conflict) is caught."""
    # A topic not listed here runs with its first data set's suggested prior.
    topic, data, hyper, source = _builtin(name, _PS_DATA.get(name), **_PS_CASES.get(name, {}))
    x, h = sens._prepare(topic, data, hyper, source)
    # 4 parameters make psense 4x slower: fewer draws there
    draws = (
        250
        if name in ("dirichlet-categorical", "linear-regression", "linear-regression-nig")
        else 500
    )
    diff = _psense_null(topic, x, h, chains=4, draws=draws, rng=rng, reps=6)
    mean, sd = diff.mean(axis=0), diff.std(axis=0, ddof=1)
    ok = np.abs(mean) <= 3.0 * np.maximum(sd, 1e-12)
    assert np.all(ok), (mean, sd)
    if name == "normal-known-variance":
        prior, *_ = sens.exact_power_scaling(topic, x=x, hyper=h)
        assert abs(mean[0] - 0.2 * prior[0]) > 3.0 * sd[0]


@pytest.fixture(scope="module")
def mcmc_settings(test_settings):
    return dataclasses.replace(test_settings, draws=1000, tune=500, extras=False)


#: psense on real MCMC for one topic (one nutpie compile, shared with the CLI and report
#: tests; the six conjugate topics are covered on exact iid draws above).
_MCMC_CASES = {
    "normal-known-variance": ("conflict", {}),
}


@pytest.fixture(scope="module")
def mcmc_fits(mcmc_settings):
    """One real PyMC fit per topic, with PyMC's log prior and log likelihood."""
    from compare.core.runner import run

    fits = {}
    for name, (dataset, override) in _MCMC_CASES.items():
        topic, data, hyper, source = _builtin(name, dataset, **override)
        result = run(topic, data=data, hyper=hyper, settings=mcmc_settings, source=source)
        x, h = sens._prepare(topic, data, hyper, source)
        tree = sens.with_log_densities(topic, x=x, hyper=h, tree=result.draws)
        fits[name] = (topic, x, h, result, tree)
    return fits


@pytest.mark.mcmc
@pytest.mark.parametrize("name", list(_MCMC_CASES))
def test_pymc_log_densities_equal_exact_up_to_a_constant(name, mcmc_fits):
    from compare.core.sampling import posterior_array

    topic, x, h, _result, tree = mcmc_fits[name]
    theta = posterior_array(tree.posterior, topic.variables)
    log_prior, log_lik = sens._exact_log_densities(topic, x, h, theta)
    pymc_prior = sum(np.asarray(tree.log_prior[v]) for v in tree.log_prior.data_vars)
    pymc_lik = sum(
        np.asarray(tree.log_likelihood[v]).reshape(theta.shape[:2] + (-1,)).sum(-1)
        for v in tree.log_likelihood.data_vars
    )
    for pymc, exact in ((pymc_prior, log_prior), (pymc_lik, log_lik)):
        diff = pymc - exact
        assert np.ptp(diff) <= 1e-8 * (1.0 + np.abs(exact).max()), np.ptp(diff)


@pytest.mark.mcmc
@pytest.mark.verdict
def test_psense_on_mcmc_agrees_with_exact(mcmc_fits, rng):
    """psense on a real PyMC fit against the exact sensitivity on the same draws' range.

    Tolerance from an empirical null: psense - exact on exact iid draws of the
    fit's effective size (the smaller of bulk and tail ESS, per chain), NULL_REPS
    seeds; a new value falls outside mean +- t(R-1) sd sqrt(1 + 1/R) with
    probability alpha (normal errors).  Bonferroni over every comparison here
    keeps the family-wise false-alarm rate at PSENSE_ALPHA.  Power: the exact
    value of a planted bug (Normal prior^alpha with the sd scaled by alpha,
    i.e. the variance by alpha^2) is rejected.
    """
    from compare.core.sampling import posterior_array

    m = sum(2 * len(fit[3].parameters) for fit in mcmc_fits.values())
    t_crit = stats.t.isf(PSENSE_ALPHA / (2 * m), NULL_REPS - 1) * np.sqrt(1 + 1 / NULL_REPS)
    for name, (topic, x, h, result, tree) in mcmc_fits.items():
        assert result.verdict == "agree", (name, result.decided_by)
        draws = posterior_array(tree.posterior, topic.variables)
        flat = draws.reshape(-1, draws.shape[-1])
        ps_prior, ps_lik = sens.psense_values(tree, variables=topic.variables)
        prior, lik, *_ = sens.exact_power_scaling(
            topic, x=x, hyper=h, lower=flat.min(axis=0), upper=flat.max(axis=0)
        )
        diff = np.concatenate([ps_prior - prior, ps_lik - lik])
        ess = float(min(result.mcmc.ess_bulk.min(), result.mcmc.ess_tail.min(), flat.shape[0]))
        chains = draws.shape[0]
        null = _psense_null(topic, x, h, chains=chains, draws=max(int(ess // chains), 50), rng=rng)
        centre, spread = null.mean(axis=0), null.std(axis=0, ddof=1)
        z = (diff - centre) / spread
        assert np.all(np.abs(z) <= t_crit), (name, diff, centre, spread)
        if name == "normal-known-variance":

            def bug(*, x, prior_mean, prior_sd, noise_sd, alpha, component):
                return (
                    a_nkv.power_scaled(
                        x=x,
                        prior_mean=prior_mean,
                        prior_sd=prior_sd / alpha,
                        noise_sd=noise_sd,
                        alpha=1.0,
                        component=component,
                    )
                    if component == "prior"
                    else a_nkv.power_scaled(
                        x=x,
                        prior_mean=prior_mean,
                        prior_sd=prior_sd,
                        noise_sd=noise_sd,
                        alpha=alpha,
                        component=component,
                    )
                )

            wrong, *_ = sens.exact_power_scaling(
                topic, x=x, hyper=h, lower=flat.min(axis=0), upper=flat.max(axis=0), scaled=bug
            )
            assert abs((ps_prior[0] - wrong[0]) - centre[0]) / spread[0] > t_crit


@pytest.mark.mcmc
def test_conflict_scenario_is_flagged_exactly_and_by_psense(mcmc_fits):
    topic, x, h, _result, tree = mcmc_fits["normal-known-variance"]
    ps = sens.PowerScaling(
        parameters=("mu",),
        prior=np.zeros(1),
        likelihood=np.zeros(1),
        psense_prior=None,
        psense_likelihood=None,
        lower=np.zeros(1),
        upper=np.zeros(1),
        n_draws=1,
    )
    assert ps.diagnosis("psense") == []
    prior, lik, *_ = sens.exact_power_scaling(topic, x=x, hyper=h)
    assert asens.diagnosis(prior[0], lik[0]) == "potential prior-data conflict"
    ps_prior, ps_lik = sens.psense_values(tree, variables=topic.variables)
    assert asens.diagnosis(ps_prior[0], ps_lik[0]) == "potential prior-data conflict"
    # the morley prior (Foucault's value) is far from the data but weak: no flag
    topic, data, hyper, source = _builtin("normal-known-variance")
    x, h = sens._prepare(topic, data, hyper, source)
    prior, lik, *_ = sens.exact_power_scaling(topic, x=x, hyper=h)
    assert asens.diagnosis(prior[0], lik[0]) == "ok"


# --- the command line ------------------------------------------------------------------
@pytest.mark.mcmc
@pytest.mark.verdict
def test_cli_sweep_with_mcmc_points(tmp_path, test_alpha):
    out = tmp_path / "out"
    json_path = tmp_path / "s.json"
    code = main(
        [
            "sensitivity",
            "normal-known-variance",
            "--data",
            "builtin:conflict",
            "--param",
            "prior_sd",
            "--log-grid",
            "0.05:50:40",
            "--mcmc-at",
            "2",
            "--draws",
            "1000",
            "--tune",
            "500",
            "--alpha",
            f"{test_alpha:g}",
            "--out",
            str(out),
            "--json",
            str(json_path),
        ]
    )
    doc = json.loads(json_path.read_text())
    assert code == 0 and doc["verdict"] == "agree"
    assert doc == json.loads((out / sens.SENSITIVITY_FILE).read_text())
    assert (out / sens.FIGURE_FILE).stat().st_size > 0
    for key in (
        "topic",
        "param",
        "grid",
        "parameters",
        "exact",
        "mcmc",
        "power_scaling",
        "base_value",
        "data",
        "hyperparameters",
    ):
        assert key in doc
    assert len(doc["grid"]) == 40 and [p["index"] for p in doc["mcmc"]] == [0, 39]
    for p in doc["mcmc"]:
        assert p["verdict"] == "agree"
        row = p["power_scaling"][0]
        assert row["prior_psense"] is not None and row["prior_exact"] is not None
    assert doc["power_scaling"]["rows"][0]["diagnosis_exact"] == "potential prior-data conflict"


def test_exit_codes_follow_the_worst_point():
    def point(verdict):
        return sens.McmcPoint(
            index=0,
            value=1.0,
            verdict=verdict,
            decided_by="agreement",
            max_abs_z=0.0,
            threshold=1.0,
            mean=np.zeros(1),
            sd=np.ones(1),
            seconds=0.0,
        )

    def code(*verdicts):
        return sens.SensitivityResult(
            topic="t",
            sweep=None,
            base_value=1.0,
            hyper={},
            source="",
            n=0,
            points=[point(v) for v in verdicts],
        ).exit_code

    assert code() == 0 and code("agree", "agree") == 0
    assert code("agree", "inconclusive") == 2
    assert code("inconclusive", "disagree", "agree") == 1


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["normal-known-variance", "--param", "nope", "--grid", "1,2"],
            "prior_mean, prior_sd, noise_sd",
        ),
        (["normal-known-variance", "--param", "prior_sd", "--grid", "-1,2"], "prior_sd"),
        (["normal-known-variance", "--param", "prior_sd", "--grid", "2"], "at least 2"),
        (["normal-known-variance", "--param", "prior_sd", "--grid", "2,2"], "at least 2"),
        (["normal-known-variance", "--param", "prior_sd", "--log-grid", "1:10:1"], "N must be"),
        (["normal-known-variance", "--param", "prior_sd", "--log-grid", "0:10:5"], "0 < LO < HI"),
        (["normal-known-variance", "--param", "prior_sd", "--grid", "1,x"], "comma-separated"),
        (
            [
                "normal-known-variance",
                "--param",
                "prior_sd",
                "--grid",
                "1,2",
                "--log-grid",
                "1:2:3",
            ],
            "exactly one",
        ),
        (
            ["normal-known-variance", "--param", "prior_sd", "--grid", "1,2", "--mcmc-at", "3"],
            "at most 2",
        ),
        (["logistic-regression", "--param", "prior_sd", "--grid", "1,2"], "no closed-form"),
        (["gaussian-mixture", "--param", "alpha", "--grid", "1,2"], "no closed-form"),
        (["linear-regression", "--param", "lambda", "--grid", "0,1"], "lambda"),
        (["bayes-optimal", "--param", "noise", "--grid", "0.1,0.6"], "noise"),
    ],
)
def test_bad_input_is_one_line_exit_3_nothing_written(args, expected, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["sensitivity", *args, "--out", str(out), "--json", str(tmp_path / "s.json")])
    err = capsys.readouterr().err
    assert code == 3
    assert expected in " ".join(err.split()), err
    assert "Traceback" not in err
    assert not out.exists() and not (tmp_path / "s.json").exists()


def test_lambda_defaults_to_the_course_range(tmp_path):
    code = main(
        [
            "sensitivity",
            "linear-regression",
            "--param",
            "lambda",
            "--out",
            str(tmp_path),
            "--json",
            str(tmp_path / "s.json"),
        ]
    )
    doc = json.loads((tmp_path / "s.json").read_text())
    assert code == 0 and doc["verdict"] is None and doc["mcmc"] == []
    n = doc["data"]["n"]
    assert doc["grid"][0] == pytest.approx(1e-8 * n) and doc["grid"][-1] == pytest.approx(0.1 * n)
    assert doc["lambda_over_n"][0] == pytest.approx(1e-8)
    # small lambda: the data dominate (the MLE); large lambda shrinks towards the prior mean
    mean = np.array(doc["exact"]["mean"])
    assert np.linalg.norm(mean[-1]) < np.linalg.norm(mean[0])


def test_unknown_param_error_lists_the_valid_ones():
    topic = get_topic("linear-regression")
    with pytest.raises(InputError, match="noise_sd, prior_sd, prior_mean, lambda"):
        sens.check_param(topic, param="degree")


# --- the report ----------------------------------------------------------------------
@pytest.mark.mcmc
def test_report_shows_the_section_and_computes_it_when_missing(
    tmp_path, save_builtin_run, mcmc_settings
):
    from compare.outputs.figures import FIGURE_KINDS
    from compare.outputs.report import build_site

    run_dir = tmp_path / "runs" / "normal-known-variance"
    save_builtin_run("normal-known-variance", run_dir, mcmc_settings)
    other = tmp_path / "runs" / "logistic-regression"
    other.mkdir(parents=True)
    doc = json.loads((run_dir / "result.json").read_text())
    (other / "result.json").write_text(json.dumps({**doc, "topic": "logistic-regression"}))
    (other / "draws.nc").write_bytes((run_dir / "draws.nc").read_bytes())
    site = build_site([run_dir, other], tmp_path, workers=1, kinds=(FIGURE_KINDS["sensitivity"],))
    saved = json.loads((run_dir / sens.SENSITIVITY_FILE).read_text())
    assert saved["generated_by"] == "report" and saved["param"] == "prior_sd"
    assert saved["power_scaling_run"]["rows"][0]["prior_psense"] is not None
    page = Path(site.pages["normal-known-variance"]).read_text()
    assert 'id="sensitivity"' in page and 'id="power-scaling"' in page
    assert (run_dir / "figures" / "sensitivity.png").is_file()
    assert 'id="sensitivity"' not in Path(site.pages["logistic-regression"]).read_text()
    assert not (other / sens.SENSITIVITY_FILE).exists()
    _check_in_browser(Path(site.pages["normal-known-variance"]))


def _check_in_browser(page: Path) -> None:
    """Headless Chromium (Debian's chromium and chromium-driver, as tests/compare/test_report.py):
    no console errors, the section's figure loads, nothing wider than a 390-pixel screen."""
    from tests.browser import load, start_chromium

    driver = start_chromium(390, 844)
    try:
        load(driver, page)
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
        assert driver.execute_script("return document.getElementById('power-scaling') !== null")
        loaded = driver.execute_script(
            "const i = document.querySelector('#fig-sensitivity img');"
            "return i !== null && i.complete && i.naturalWidth > 0"
        )
        assert loaded
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 1, f"{overflow}px wider than a 390px screen"
    finally:
        driver.quit()
