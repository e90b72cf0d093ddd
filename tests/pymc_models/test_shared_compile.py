"""Topics whose PyMC models are one graph share one compiled model.

A cold nutpie compile of a Normal-Wishart model costs 40-50 s on these
2-core machines (docs/speed.md). The Gaussian classifier's model is, node for
node, the mixture's complete-data model (labels known), so whichever runs
second loads the first's machine code (``compare.accel.compiled_cache``): one
cold compile fewer in ``make report`` and in the suite. Naive Bayes's
categorical variant batches the features with the same number of values, so
its builtin data sets (titanic: 4, 2, 2 values; play-tennis: 3, 3, 2, 2) are
one graph too. This keeps them so: a change that makes two graphs fails here,
and the message names its cost.

Power: the classifier's model with one more ``Potential`` (a one-line planted
difference) has another key.
"""

from __future__ import annotations

import functools

import pymc as pm
import pytensor.tensor as pt

from compare.accel import compiled_cache
from compare.topics import get_topic

#: Topics whose models are one graph, each built on its own first builtin data set
#: (different numbers of groups and dimensions: the key leaves the lengths out).
SHARED = ("gaussian-mixture", "gaussian-classifier")
#: naive-bayes's categorical builtin data sets: other features, values per feature, classes.
CATEGORICAL = ("titanic", "play-tennis")


def _model(topic_name: str, data_set: str | None = None):
    """The topic's PyMC model for one of its builtin data sets (default the first), as
    the runner builds it (``prepare``, ``structure``, ``build_model``)."""
    topic = get_topic(topic_name)
    ds = next(d for d in topic.builtin if data_set in (None, d.name))
    x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    return topic.build_model(**topic.structure(x, hyper))


@functools.cache
def _key(topic_name: str, data_set: str | None = None) -> str | None:
    """The compiled model's key of :func:`_model` (each builds the graphs: 2-4 s for the
    Normal-Wishart models), once per module."""
    return compiled_cache.model_key(_model(topic_name, data_set))


def test_the_classifier_and_the_complete_data_mixture_are_one_compiled_model():
    keys = {name: _key(name) for name in SHARED}
    assert None not in keys.values(), keys
    assert len(set(keys.values())) == 1, (
        f"{keys}: these models are no longer one graph, so each costs its own cold compile "
        "(40-50 s); keep pymc_models/gaussian_classifier.py's build_model the mixture's "
        "complete-data model"
    )


def test_naive_bayes_categorical_data_sets_are_one_compiled_model():
    keys = {ds: _key("naive-bayes", ds) for ds in CATEGORICAL}
    assert None not in keys.values(), keys
    assert len(set(keys.values())) == 1, (
        f"{keys}: each data set is its own graph and cold compile (~30 s); the "
        "categorical variant's variables must follow the number of distinct k, not the features"
    )


def test_a_planted_difference_gives_another_key():
    model = _model(SHARED[1])
    real = _key(SHARED[1])
    with model:
        pm.Potential("planted", 0.1 * pt.sum(model["mu"]))
    assert compiled_cache.model_key(model) not in (real, None)
