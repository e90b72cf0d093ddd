"""Deliberately wrong PyMC models, for measuring the verdict's power.

A topic declares its planted bugs (``Topic.planted``: a tuple of
:class:`~compare.core.registry.PlantedBug`, or ``Unsupported(reason)``).  Each
bug is the log density of the model with one classic mistake minus the real
model's; :func:`planted` builds the topic's real model and adds that
difference as a ``pm.Potential``, so the wrong model is the real one plus the
mistake, never a copy that could drift from it.

``planted(topic_name, bug, factor)`` returns a :class:`Topic` whose exact
side is unchanged and whose PyMC side carries the bug; run it like any topic
and a good verdict says ``disagree``.  Used by ``tests/compare/studies/test_power.py``,
``benchmarks/verdict_study.py`` and the SBC power study.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from compare.core.registry import PlantedBug, Topic, Unsupported
from compare.topics import get_topic

#: Name of the Potential that carries the bug in the planted model.
POTENTIAL = "planted_bug"


def bugs_of(topic: Topic) -> tuple[PlantedBug, ...]:
    """The planted bugs ``topic`` declares (empty when it declares ``Unsupported``)."""
    if isinstance(topic.planted, Unsupported):
        return ()
    return tuple(topic.planted)


def find_bug(topic: Topic, bug: str) -> PlantedBug:
    """The bug named ``bug`` of ``topic``, or a ValueError naming the ones it has."""
    if isinstance(topic.planted, Unsupported):
        raise ValueError(f"no planted bugs for {topic.name!r}: {topic.planted.reason}")
    declared = {b.name: b for b in bugs_of(topic)}
    if bug not in declared:
        have = ", ".join(declared) or "none declared"
        raise ValueError(f"{topic.name!r} has no planted bug {bug!r}; it has: {have}")
    return declared[bug]


def plant(topic: Topic, bug: PlantedBug, factor: float) -> Any:
    """``build_model(**structure)`` of ``topic``'s real model with ``bug`` added.

    The model is the one ``topic.build_model`` builds, plus the Potential
    :data:`POTENTIAL` holding ``bug.plant(model, factor)``.
    """
    import pymc as pm  # heavy: PyMC only when a model is built or sampled

    real = topic.build_model

    def build_model(**structure: Any) -> Any:
        model = real(**structure)
        with model:
            pm.Potential(POTENTIAL, bug.plant(model, factor))
        return model

    return build_model


@cache
def planted(topic_name: str, bug: str, factor: float = 1.0) -> Topic:
    """The topic with ``bug`` planted in its PyMC model (cached: one compile each).

    Parameters
    ----------
    topic_name : str
        A registered topic that declares planted bugs.
    bug : str
        The name of one of its bugs (``prior_var``, ``noise_sd``, ...).
    factor : float
        The bug's size (ignored by a bug without one, e.g. ``sd_for_var``).

    Returns
    -------
    Topic
        ``topic_name``'s topic with its ``build_model`` replaced by the real
        model plus the bug; everything else (the exact side) unchanged.
    """
    topic = get_topic(topic_name)
    return dataclasses.replace(topic, build_model=plant(topic, find_bug(topic, bug), float(factor)))
