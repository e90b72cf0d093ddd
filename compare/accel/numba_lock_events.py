"""numba stops announcing each call into LLVM: a cold compile does 5-8% less work.

Why
---
``numba.core.base`` registers two callbacks on llvmlite's lock that broadcast
a ``"numba:llvm_lock"`` event when the lock is taken and when it is
released, so that a dispatcher can record how long it held the lock (the
``"llvm_lock"`` entry of ``Dispatcher.get_metadata(sig)["timers"]``).
llvmlite takes that lock on every call into LLVM's C API: 390,000 calls for
naive Bayes' model, most of them a function's name, a declaration flag or the
next item of an iterator, each cheaper than the two events around it (an
``Event`` object each, broadcast to the timer of every compile on the stack).

Measured (cold caches, a new process each, pairs run back to back, 2 cores):
compiling naive Bayes' model took 28.0 CPU-s with the callbacks and 25.8
without (3 pairs, each 1.8-2.5 s less); the classifier's, 43.8 and 41.7
(2 pairs). A ``cProfile`` of the naive Bayes compile had 862,000 event
broadcasts before and none of them at the top after.

What
----
When ``numba.core.base`` is imported, the two callbacks it registered are
unregistered. The lock is still taken on every call, callbacks anyone else
registers stay, and numba's ``timers`` metadata lose their ``llvm_lock``
entry only (nothing in numba, PyTensor, PyMC or nutpie reads it). The
machine code is the same, so no cache key changes.
``BAYES_COMPARE_EAGER_NUMBA=1`` leaves numba as released, as it does for
:mod:`compare.accel.numba_lazy_code`.
"""

from __future__ import annotations

from types import ModuleType

from compare.accel._hooks import patch_on_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "numba-lock-events"

_MODULE = "numba.core.base"


def callbacks(module_name: str = _MODULE) -> list[tuple[object, object]]:
    """The (acquire, release) callbacks on llvmlite's lock that ``module_name`` registered."""
    from llvmlite.binding import ffi  # heavy: llvmlite, loaded with numba

    # llvmlite's private list: if a release renames it, numba keeps its callbacks
    # (this runs inside numba's import, which must not fail for it).
    registered = getattr(getattr(ffi.lib, "_lock", None), "_cblist", [])
    return [
        pair for pair in list(registered) if getattr(pair[0], "__module__", None) == module_name
    ]


def patch(base: ModuleType) -> None:
    """Unregister numba's lock callbacks (those ``base`` registered at its import)."""
    from llvmlite.binding import ffi  # heavy: llvmlite, loaded with numba

    for acquire, release in callbacks(base.__name__):
        ffi.unregister_lock_callback(acquire, release)


def install() -> None:
    """Patch now if ``numba.core.base`` is loaded, else as soon as it is imported."""
    patch_on_import(_MODULE, NAME, patch)
