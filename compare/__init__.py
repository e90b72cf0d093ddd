"""bayes-compare: check closed-form Bayesian posteriors against MCMC.

The stable Python API (see :mod:`compare.api`)::

    import compare
    compare.check(model, compare.Exact(mean=..., cov=...), var_names=[...])
    compare.check_draws(draws, exact)
    compare.run("linear-regression", data="builtin:sinusoid", degree=3)

Names are loaded on first use, so importing a submodule (the CLI, the
report's figure workers) does not pay for the API's imports.
"""

from __future__ import annotations

from typing import Any

# Before PyTensor is imported anywhere: no spurious BLAS warning (see module).
from compare import _pytensor_setup  # noqa: F401

_API = {
    "Exact": "compare.api",
    "CheckResult": "compare.api",
    "check": "compare.api",
    "check_draws": "compare.api",
    "run": "compare.api",
    "InputError": "compare.registry",
    "load_topic_file": "compare.topic_file",
    "export_posteriordb": "compare.export",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'compare' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
