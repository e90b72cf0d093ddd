"""The catalogue of topics: one line per builtin topic, and the lookups.

A builtin topic is three modules named alike -- ``analytic/<topic>.py`` (the
exact answer), ``pymc_models/<topic>.py`` (the same prior and likelihood in
PyMC) and ``compare/topics/<topic>.py`` (``TOPIC = Topic(...)``: everything the
runner, the studies and the report ask of it) -- plus its line in
``compare/topics/catalogue.py``.  User topics (``--topic-file``, the ``bayes_compare.topics``
entry points) join the same registry through :mod:`compare.topics.user`.

Topic modules are imported the first time a topic is asked for, so a command
that needs no topic imports none; importing this package imports neither a
topic nor NumPy (``list`` and ``describe`` read the topics' cards,
:mod:`compare.topics.cards`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compare.core.registry import REGISTRY, InputError

if TYPE_CHECKING:
    from compare.core.registry import Topic


def _load_builtin() -> None:
    from compare.topics.catalogue import load_builtin  # light
    from compare.topics.user import load_installed  # heavy: NumPy, the user topics' checks

    load_builtin()
    load_installed()


def get_topic(name: str) -> Topic:
    """Look up a registered topic by CLI name."""
    _load_builtin()
    try:
        return REGISTRY[name]
    except KeyError:
        raise InputError(
            f"unknown topic {name!r}; run `bayes-compare list` to see "
            f"the topics: {', '.join(REGISTRY)}"
        ) from None


def all_topics() -> list[Topic]:
    """Every registered topic: the catalogue's, then the users'."""
    _load_builtin()
    return list(REGISTRY.values())
