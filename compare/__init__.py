"""bayes-compare: check closed-form Bayesian posteriors against MCMC.

The stable Python API (see :mod:`compare.interfaces.api`)::

    import compare
    compare.check(model, compare.Exact(mean=..., cov=...), var_names=[...])
    compare.check_draws(draws, exact)
    compare.run(topic, data="builtin:NAME", **hyperparameters)

Names are loaded on first use, so importing a submodule (the CLI, the
report's figure workers) does not pay for the API's imports.
"""

from __future__ import annotations

import importlib
from typing import Any

# Before PyTensor is imported anywhere: no spurious BLAS warning (see module).
from compare.core import (  # noqa: F401
    _jax_stubs,
    _lazy_arviz,
    _lazy_dask,
    _numba_cache,
    _numba_lazy_code,
    _numba_lock_events,
    _numba_slice_error,
    _pytensor_setup,
)

# Before arviz_base is imported anywhere: its lazy JAX stubs would make SciPy load JAX.
_jax_stubs.install()

# Before numba's cache is used: processes sharing it must not mix up signatures (see module).
_numba_cache.install()

# Before numba compiles anything: machine code only for what is called, the same
# cold or loaded from the cache (see module).
_numba_lazy_code.install()

# Before numba compiles anything: no event broadcast around each call into LLVM (see module).
_numba_lock_events.install()

# Before numba compiles anything: no string formatting compiled for an error that
# never happens (see module).
_numba_slice_error.install()

# Before xarray builds an array: no Dask import to learn that nothing is a Dask array.
_lazy_dask.install()

# Before nutpie is imported: its `import arviz` would load arviz-plots and matplotlib.
_lazy_arviz.install()

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
