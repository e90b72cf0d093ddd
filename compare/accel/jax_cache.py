"""JAX's persistent compilation cache for the JAX methods, in a process of ours.

Why
---
``pm.sample(nuts_sampler="numpyro" | "blackjax")`` and Pathfinder trace and
compile a new XLA program at every call (PyMC builds a fresh closure over the
data), 4-6 s for a one-parameter model against well under a second of sampling.
XLA's own disk cache, keyed by the program (its constants, so the data,
included), the compile options, the JAX version and the device, turns a repeated
program into a load (docs/speed.md).

What
----
:func:`use_jax_cache` points JAX's persistent compilation cache at
:func:`compare.accel.compiled_cache.jax_cache_dir` before the first JAX compile,
keeping every program however fast it compiled (JAX's defaults keep only those
over 1 s). These are JAX's public configuration options, but process-wide: so only
in a process of ours (:func:`compare.accel.enable`), never in a user's session,
and never over a cache the user set (``JAX_COMPILATION_CACHE_DIR``). The draws
are the same with or without the cache (the loaded executable is the one
compiled; ``tests/compare/core/test_inference.py`` checks it).
"""

from __future__ import annotations

import threading

from compare.accel import active

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "jax-cache"

_lock = threading.Lock()
_set = False


def use_jax_cache() -> None:
    """Point JAX's persistent compilation cache at our cache folder, once per process
    (in a process of ours; elsewhere nothing)."""
    global _set
    if not active(NAME):
        return
    with _lock:
        if _set:
            return
        _set = True
        from compare.accel.compiled_cache import jax_cache_dir  # heavy: NumPy; JAX is worse

        folder = jax_cache_dir()
        import jax  # heavy: JAX only for the JAX methods

        if folder is None or jax.config.jax_compilation_cache_dir:  # off, or the user's own
            return
        jax.config.update("jax_compilation_cache_dir", str(folder))  # type: ignore[no-untyped-call]
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # type: ignore[no-untyped-call]
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)  # type: ignore[no-untyped-call]
