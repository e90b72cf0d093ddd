"""bayes-compare: check closed-form Bayesian posteriors against MCMC.

The stable Python API (see :mod:`compare.interfaces.api`)::

    import compare
    compare.check(model, compare.Exact(mean=..., cov=...), var_names=[...])
    compare.check_draws(draws, exact)
    compare.run(topic, data="builtin:NAME", **hyperparameters)

Names are loaded on first use, so importing a submodule (the CLI, the
report's figure workers) does not pay for the API's imports.

Importing the package, or using it as a library, changes nothing in the
process beyond its own modules (``tests/compare/test_guest.py``): the speed-ups
that reach into other packages (:mod:`compare.accel`) are switched on by the
project's own processes only (``bayes-compare``, its workers, its test suite).
"""

from __future__ import annotations

import importlib
from typing import Any

_API = {
    "Exact": "compare.interfaces.api",
    "CheckResult": "compare.interfaces.api",
    "check": "compare.interfaces.api",
    "check_draws": "compare.interfaces.api",
    "run": "compare.interfaces.api",
    "InputError": "compare.core.registry",
    # what a user topic (a topic file) is built from
    "Topic": "compare.core.registry",
    "Hyperparameter": "compare.core.registry",
    "BuiltinData": "compare.core.registry",
    "Simulation": "compare.core.registry",
    "register": "compare.core.registry",
    "load_topic_file": "compare.topics.user",
    "export_posteriordb": "compare.outputs.export",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'compare' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
