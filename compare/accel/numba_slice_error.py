"""numba's slice-assignment error names no shapes: the first compile in a process does 1.5-5 s less.

Why
---
numba lowers every slice assignment ``a[...] = b`` (``fancy_setslice`` in
``numba.np.arrayobj``) with a branch that raises when the shapes differ. On
the CPU target that branch calls ``raise_with_shape_context``, whose
implementation formats both shapes into the message with f-strings,
``str.join`` and ``str(int)``: numba compiles its unicode machinery for it
(string kinds, code points, ``hasattr`` overloads, a literal-propagation
pass), once per pair of tuple lengths, and caches none of it on disk. So
every process that compiles a model pays it again, for an error that
PyTensor's shape checks and nutpie's fixed-size buffers never let happen.

Measured (2026-12-06, 2 cores; each in a new process with empty caches,
``compiled_cache.compile_pymc_model`` on the topic's first builtin data set):
naive Bayes' model compiled in 24.1-26.2 s with the message and 19.7-20.4 s
without (three pairs back to back); with PyTensor's per-node numba cache
already warm, 6.7 and 5.1 s. A second
model in the same process gains nothing (the classifier after naive Bayes:
25.5 and 25.9 s), since numba keeps what it compiled in memory.
``benchmarks/compile.py`` (``make bench``) measures it with
:mod:`compare.accel.numba_lazy_code`, against numba as released.

What
----
When ``numba.np.arrayobj`` is imported, its module global
``raise_with_shape_context`` (which ``fancy_setslice`` looks up each time it
lowers an assignment) becomes a stub whose only implementation is numba's own
for targets other than the CPU: ``ValueError("cannot assign slice from input
of different size")``. The error is raised where it was, with that message.
The machine code differs from numba's in that branch only, so :data:`TAG`
joins numba's cache keys (``magic_tuple``) and ``compiled_cache``'s. ``BAYES_COMPARE_EAGER_NUMBA=1`` leaves numba as
released, as it does for :mod:`compare.accel.numba_lazy_code`.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from compare.accel._hooks import patch_on_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "numba-slice-error"

_MODULE = "numba.np.arrayobj"
_PATCHED = "_bayes_compare_slice_error"
#: Added to numba's ``magic_tuple`` (part of every key of its on-disk cache) and to
#: the key of a compiled model: the machine code differs from numba's in that branch.
TAG = "bayes-compare-slice-error-1"
#: numba's message for targets other than the CPU (``ol_raise_with_shape_context_generic``).
MESSAGE = "cannot assign slice from input of different size"


def raise_with_shape_context(src_shapes: Any, index_shape: Any) -> None:
    """Stub for numba's function of the same name (``numba.np.arrayobj``); jitted code only."""


def _overload_stub() -> None:
    from numba.core.extending import overload  # heavy: numba, already loading

    @overload(raise_with_shape_context, target="generic")
    def _impl(src_shapes: Any, index_shape: Any) -> Any:
        def impl(src_shapes: Any, index_shape: Any) -> None:  # pragma: no cover (jitted)
            raise ValueError(MESSAGE)

        return impl


def patch(arrayobj: ModuleType) -> None:
    """Point ``arrayobj``'s slice-assignment error at the stub; tag numba's cache keys."""
    if getattr(arrayobj, _PATCHED, False):
        return
    from numba.core import codegen  # heavy: numba, already loading

    _overload_stub()
    arrayobj.raise_with_shape_context = raise_with_shape_context  # type: ignore[attr-defined]
    codegen_class = codegen.JITCPUCodegen
    magic_tuple: Any = codegen_class.magic_tuple

    def _magic_tuple(self: Any) -> tuple[Any, ...]:
        return (*magic_tuple(self), TAG)

    codegen_class.magic_tuple = _magic_tuple  # type: ignore[method-assign]
    setattr(arrayobj, _PATCHED, True)


def tag() -> str | None:
    """:data:`TAG` if numba is patched in this process, else None (for cache keys)."""
    arrayobj = sys.modules.get(_MODULE)
    return TAG if arrayobj is not None and getattr(arrayobj, _PATCHED, False) else None


def install() -> None:
    """Patch now if ``numba.np.arrayobj`` is loaded, else as soon as it is imported."""
    patch_on_import(_MODULE, NAME, patch)
