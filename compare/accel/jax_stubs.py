"""Keep JAX unloaded on the default (nutpie) path, though JAX is installed.

Why
---
``arviz_base`` registers lazy stubs named ``jax`` and ``numpyro`` in
``sys.modules`` at import (``lazy_loader.load``: nothing is loaded until an
attribute is read). SciPy's array-API helpers then ask ``is_jax_array(x)``,
which imports ``jax`` whenever the name ``jax`` is in ``sys.modules``, and
reads ``jax.Array``: the stub loads the whole of JAX (1.07 s measured in a
`run normal-inverse-gamma`, from a Student-t density in the run's saved
exact marginals). Since JAX became a dependency (the JAX methods of
``--method``), every run paid it.

So, right after ``arviz_base`` is imported, the stubs that were never loaded
are taken out of ``sys.modules`` again: ``is_jax_array`` sees no JAX, and a
method that needs JAX imports it normally. ``arviz_base`` keeps its own
references (its NumPyro converter, which this project does not use, still
works through them).
"""

from __future__ import annotations

import sys

from compare.accel._hooks import patch_on_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "jax-stubs"
STUBBED = ("jax", "numpyro")


def forget_stubs() -> None:
    """Remove the never-loaded lazy stubs of :data:`STUBBED` from ``sys.modules``."""
    for name in STUBBED:
        module = sys.modules.get(name)
        if module is not None and type(module).__name__ == "_LazyModule":
            del sys.modules[name]


def _after_arviz(_module: object) -> None:
    forget_stubs()


def install() -> None:
    """Forget the stubs now if ``arviz_base`` is loaded, else as soon as it is."""
    patch_on_import("arviz_base", NAME, _after_arviz)  # one function: a second install adds no hook
