"""Every registered topic, end to end: parametrized over the registry, so a
new topic is picked up without editing this file."""

from __future__ import annotations

import numpy as np
import pytest

from compare.core.data import Points, Table
from compare.core.runner import run
from compare.topics import all_topics, get_topic
from tests.evaluation import SHAPE_MODE

TOPICS = [t.name for t in all_topics()]
#: Every builtin data set but each topic's default, which `make report` runs:
#: tests/compare/outputs/test_report.py checks those verdicts on its `run --all`.
OTHER_BUILTIN = [(t.name, d.name) for t in all_topics() for d in t.builtin[1:]]


@pytest.mark.parametrize("name", TOPICS)
def test_topic_is_complete(name):
    """The two sides line up: same parameter count, documented hyperparameters."""
    topic = get_topic(name)
    hyper = topic.hyper(dataset=topic.builtin[0])
    x, hyper = topic.prepare(topic.builtin[0].load(), hyper)
    exact = topic.solve(x=x, **hyper)
    model = topic.build_model(**topic.structure(x, hyper))
    shapes = model.eval_rv_shapes()
    # Recorded Deterministics (e.g. indicators of a discrete index) count too.
    shapes.update({d.name: tuple(d.shape.eval(mode=SHAPE_MODE)) for d in model.deterministics})
    width = sum(int(np.prod(shapes[v])) for v in topic.variables)
    assert width == len(exact.parameters)
    for h in topic.hyperparameters:
        assert h.doc and (h.structural or f"hp_{h.name}" in model.named_vars), h.name
    data = topic.model_data(x=x, **hyper)
    assert set(data) <= set(model.named_vars)


#: Builtin data sets that declare their parameter names (``BuiltinData.parameters``).
DECLARED = [(t.name, d.name) for t in all_topics() for d in t.builtin if d.parameters is not None]


@pytest.mark.parametrize("name, dataset", DECLARED)
def test_declared_parameter_names_are_the_solved_ones(name, dataset):
    """``describe`` shows a data set's declared names without loading or solving it:
    they must be what the exact side names, in its order."""
    topic = get_topic(name)
    ds = topic.builtin_data(dataset)
    x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    assert ds.parameters == tuple(topic.solve(x=x, **hyper).parameters)


@pytest.mark.mcmc
@pytest.mark.verdict
@pytest.mark.parametrize("name, dataset", OTHER_BUILTIN)
def test_builtin_data_agree(name, dataset, test_settings, record_property):
    """Every builtin data set agrees (each topic's default one: test_report.py's
    test_every_topic_agrees_on_its_default_data, on `make report`'s own run).

    At half the default draws (4 x 1000) for the NUTS topics: the verdict's z-scores
    are ESS-based, so calibrated at any run length, and the smallest ESS over every
    builtin measured 1040 to 3038, far above the gate's 400.  The Metropolis sampler
    of bayes-optimal keeps the default.  A run (or the marginalised mixture) short
    of effective draws is extended by the runner, not failed; the seed is
    `BAYES_COMPARE_TEST_SEED` (tests/conftest.py), so any seed can be checked, and
    the extensions are recorded (`--junitxml` shows them).
    """
    import dataclasses

    topic = get_topic(name)
    ds = topic.builtin_data(dataset)
    settings = (
        test_settings if topic.step is not None else dataclasses.replace(test_settings, draws=1000)
    )
    result = run(
        topic,
        data=ds.load(),
        hyper=topic.hyper(dataset=ds),
        settings=settings,
        source=f"builtin:{ds.name}",
    )
    ext = result.extra.sections["extension"]
    record_property("seed", settings.seed)
    record_property("extensions", ext["extensions"])
    record_property(
        "samplings", [(s["model"], s["draws"], s["min_ess"], s["state"]) for s in ext["samplings"]]
    )
    assert result.verdict == "agree", [
        (c.name, c.statistic, c.threshold, c.note) for c in result.checks
    ]
    mode_check = next(c for c in result.checks if c.name == "map")
    assert mode_check.passed in (True, None)


@pytest.mark.parametrize("name", TOPICS)
def test_simulator_is_seeded(name):
    topic = get_topic(name)
    hyper = topic.hyper(dataset=topic.builtin[-1])
    a = topic.simulate(np.random.default_rng(3), 12, dict(hyper))
    b = topic.simulate(np.random.default_rng(3), 12, dict(hyper))
    np.testing.assert_array_equal(a.theta, b.theta)
    if isinstance(a.data, (Table, Points)):
        np.testing.assert_array_equal(a.data.x, b.data.x)
        if isinstance(a.data, Table):
            np.testing.assert_array_equal(a.data.y, b.data.y)
        assert a.data.n == 12
    else:
        np.testing.assert_array_equal(a.data, b.data)
        assert len(a.data) == 12
