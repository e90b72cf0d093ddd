"""Planted bugs are the real model plus the mistake (compare/studies/planted.py).

No MCMC: each test compiles a model's log density and evaluates it at a few
points.  The tolerances are rounding: the planted model is the real one plus
a Potential, so where the bug vanishes (``factor = neutral``) the two log
densities agree to the last digits (PyTensor even cancels the two copies of
the term), and elsewhere the difference is one log-density term, compared
with scipy.stats at 1e-10.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from scipy import stats

from compare.core.registry import PlantedBug, Unsupported
from compare.studies.planted import POTENTIAL, bugs_of, find_bug, planted
from compare.topics import all_topics, get_topic
from tests.evaluation import EVAL_MODE

CASES = [(t.name, b.name) for t in all_topics() for b in bugs_of(t)]
SIZED = [
    (topic, bug) for topic, bug in CASES if find_bug(get_topic(topic), bug).neutral is not None
]


def _logp(
    topic, build_model, bug: PlantedBug | None = None, *, points: int = 4, seed: int = 5
) -> tuple[np.ndarray, list[dict[str, np.ndarray]], pm.Model]:
    """The model's log density at ``points`` points near its initial point, on data
    simulated under the topic's calibration fixture (plus what the bug needs)."""
    hyper = topic.hyper({**topic.calibration.hyper, **(bug.needs if bug else {})})
    sim = topic.simulate(np.random.default_rng(seed), topic.calibration.n_obs, dict(hyper))
    x, prepared = topic.prepare(sim.data, dict(hyper))
    model = build_model(**topic.structure(x, prepared))
    data = topic.model_data(x=x, **prepared)
    coords = (
        {"obs": np.arange(np.asarray(data["x"]).shape[0])}
        if "x" in data and "obs" in model.coords
        else None
    )
    pm.set_data(data, model=model, coords=coords)
    # The Python linker: these points need no speed, and numba compiled each model's
    # log density for seconds (the suite's largest cost is numba compiling).
    logp = model.compile_logp(mode=EVAL_MODE)
    rng = np.random.default_rng(seed + 1)
    start = model.initial_point()
    at = [
        {k: v + rng.normal(scale=0.3, size=np.shape(v)) for k, v in start.items()}
        for _ in range(points)
    ]
    return np.array([logp(p) for p in at]), at, model


def test_some_topics_declare_bugs():
    assert len(CASES) >= 12 and len(SIZED) >= 8, CASES


@pytest.mark.parametrize("name, bug", SIZED)
def test_an_unplanted_bug_leaves_the_real_model(name, bug):
    """At the neutral factor the planted model's log density is the real one's."""
    topic = get_topic(name)
    declared = find_bug(topic, bug)
    real, _, _ = _logp(topic, topic.build_model, declared)
    same, _, model = _logp(topic, planted(name, bug, declared.neutral).build_model, declared)
    assert POTENTIAL in model.named_vars
    np.testing.assert_allclose(same, real, rtol=1e-12, atol=1e-12)


def _difference(name: str, bug: str, factor: float) -> tuple[np.ndarray, list, pm.Model]:
    topic = get_topic(name)
    declared = find_bug(topic, bug)
    real, at, _ = _logp(topic, topic.build_model, declared)
    wrong, _, model = _logp(topic, planted(name, bug, factor).build_model, declared)
    return wrong - real, at, model


def _constrained(model: pm.Model, point: dict[str, np.ndarray], name: str) -> float:
    """The value of the model variable ``name`` at a point of value variables."""
    value = model.replace_rvs_by_values([model[name]])[0]  # back-transformed
    return float(
        model.compile_fn(value, inputs=model.value_vars, on_unused_input="ignore", mode=EVAL_MODE)(
            point
        )
    )


@pytest.mark.parametrize(
    "bug, factor", [("prior_var", 1.7), ("noise_sd", 1.3), ("sd_for_var", 1.0)]
)
def test_the_known_variance_bugs_mean_what_they_say(bug, factor):
    """normal-known-variance: the difference is the prior's or the likelihood's term of
    the wrong model minus the right one's, written with scipy.stats."""
    name = "normal-known-variance"
    topic = get_topic(name)
    hyper = topic.hyper(topic.calibration.hyper)
    m, s, sd = hyper["prior_mean"], hyper["prior_sd"], hyper["noise_sd"]
    x = topic.simulate(np.random.default_rng(5), topic.calibration.n_obs, dict(hyper)).data
    diff, at, model = _difference(name, bug, factor)
    for d, point in zip(diff, at):
        mu = _constrained(model, point, "mu")
        if bug == "prior_var":
            want = stats.norm.logpdf(mu, m, s * np.sqrt(factor)) - stats.norm.logpdf(mu, m, s)
        else:
            wrong_sd = sd * factor if bug == "noise_sd" else sd**2
            want = (stats.norm.logpdf(x, mu, wrong_sd) - stats.norm.logpdf(x, mu, sd)).sum()
        assert d == pytest.approx(want, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize(
    "bug, factor", [("prior_var", 1.7), ("noise_sd", 1.3), ("sd_for_var", 1.0)]
)
def test_the_normal_inverse_gamma_bugs_mean_what_they_say(bug, factor):
    """normal-inverse-gamma: mu's prior sd sqrt(sigma2/kappa0) x sqrt(factor), or squared
    (the variance passed as sigma); the likelihood's sd sqrt(sigma2) x factor."""
    name = "normal-inverse-gamma"
    topic = get_topic(name)
    hyper = topic.hyper(topic.calibration.hyper)
    x = topic.simulate(np.random.default_rng(5), topic.calibration.n_obs, dict(hyper)).data
    diff, at, model = _difference(name, bug, factor)
    for d, point in zip(diff, at):
        mu, sigma2 = _constrained(model, point, "mu"), _constrained(model, point, "sigma2")
        prior_sd = np.sqrt(sigma2 / hyper["kappa0"])
        if bug == "noise_sd":
            want = (
                stats.norm.logpdf(x, mu, np.sqrt(sigma2) * factor)
                - stats.norm.logpdf(x, mu, np.sqrt(sigma2))
            ).sum()
        else:
            wrong_sd = prior_sd * np.sqrt(factor) if bug == "prior_var" else prior_sd**2
            want = stats.norm.logpdf(mu, hyper["mu0"], wrong_sd) - stats.norm.logpdf(
                mu, hyper["mu0"], prior_sd
            )
        assert d == pytest.approx(want, rel=1e-10, abs=1e-10)


def test_unknown_bugs_and_topics_without_bugs_are_refused():
    with pytest.raises(ValueError, match=r"no planted bug 'nope'.*prior_var"):
        planted("normal-known-variance", "nope", 1.0)
    without = next(t for t in all_topics() if isinstance(t.planted, Unsupported))
    with pytest.raises(ValueError, match="no planted bugs for"):
        planted(without.name, "prior_var", 1.0)


def test_a_bug_whose_variable_the_model_lacks_says_so():
    """naive-bayes' bugs are the Gaussian variant's: the Bernoulli model has no mu."""
    topic = get_topic("naive-bayes")
    declared = find_bug(topic, "prior_var")
    assert declared.needs == {"variant": "gaussian"}
    bernoulli = topic.hyper(topic.calibration.hyper)
    assert bernoulli["variant"] != "gaussian"
    with pytest.raises(ValueError, match="no variable 'mu'"):
        _logp(topic, planted("naive-bayes", "prior_var", 1.5).build_model)


@pytest.mark.parametrize("name, bug", CASES)
def test_a_planted_bug_changes_the_model_and_uses_its_variables(name, bug):
    """The bug moves the log density, and its term holds only the model's own random
    variables: one that rebuilt a random variable (w | sigma2 with sigma2 changed)
    would hold a draw from the prior instead of the model's variable."""
    from pytensor.graph.traversal import ancestors
    from pytensor.tensor.random.op import RandomVariable

    topic = get_topic(name)
    declared = find_bug(topic, bug)
    factor = 1.5 if declared.neutral is not None else 1.0
    real, _, _ = _logp(topic, topic.build_model, declared)
    wrong, _, model = _logp(topic, planted(name, bug, factor).build_model, declared)
    assert np.all(np.abs(wrong - real) > 1e-6), (real, wrong)
    rvs = {
        v
        for v in ancestors([model[POTENTIAL]])
        if v.owner is not None and isinstance(v.owner.op, RandomVariable)
    }
    assert rvs <= set(model.basic_RVs), sorted(v.name for v in rvs)
