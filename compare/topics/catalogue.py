"""The catalogue: one line per builtin topic (its module ``compare.topics.<entry>``
defines ``TOPIC = Topic(...)``).  Adding a topic adds its line here."""

from __future__ import annotations

import importlib

from compare.core.registry import REGISTRY, register

#: The builtin topics, in the order ``bayes-compare list`` shows them: the
#: module ``compare.topics.<entry>`` defines ``TOPIC``.
CATALOGUE = (
    "beta_binomial",
    "gamma_poisson",
    "exponential_gamma",
    "normal_known_variance",
    "normal_inverse_gamma",
    "pareto_uniform",
    "dirichlet_categorical",
    "linear_regression",
    "linear_regression_nig",
    "gaussian_mixture",
    "gaussian_process",
    "naive_bayes",
    "bayes_optimal",
    "gaussian_classifier",
    "logistic_regression",
)

#: The entry point group installed packages register topics under
#: (:mod:`compare.topics.user`).
ENTRY_POINT_GROUP = "bayes_compare.topics"

#: Topic files loaded in this process, os.pathsep-joined.  Child processes (Dask
#: workers, spawned figure workers, subprocesses) inherit it and load the same
#: files the first time their registry is asked for a topic.
TOPIC_FILES_ENV = "BAYES_COMPARE_TOPIC_FILES"

_LOADED = False


def load_builtin() -> None:
    """Register the catalogue's topics, once (they are imported on first use)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for entry in CATALOGUE:
            topic = importlib.import_module(f"compare.topics.{entry}").TOPIC
            if topic.name.replace("-", "_") != entry:
                raise ValueError(
                    f"compare/topics/{entry}.py defines topic {topic.name!r}; a "
                    "topic's module is named after it"
                )
            if topic.name not in REGISTRY:
                register(topic)
