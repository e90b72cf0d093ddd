"""numba's on-disk cache made safe for processes that share it.

Why
---
numba's ``IndexDataCacheFile.save`` reads a function's index file, picks the
first data-file number the index does not use, writes the index, then the
data, with no lock between processes (numba issue #10128). Two processes
that save *different* signatures of one function at the same moment both
read the same index, both pick ``<name>.1.nbc``, and each writes its own
index and its own data: the index keeps one signature, the file holds the
other's machine code. From then on every process that asks the cache for
that signature loads code compiled for another one, and numba either fails
to type the call or, worse, runs it.

PyTensor makes such siblings common. It keys the cached wrapper of each
scalar Op by the Op alone, whatever its arity (``scalar_op_cache_key(op)``
for ``Add`` and ``Mul`` in ``pytensor/link/numba/dispatch/scalar.py``), so
the 3-input and the 4-input ``add`` of two models share one index. CI on a
cold cache, with two pytest-xdist workers and the README's subprocesses
sharing it, lost 110 tests to this (2026-12-02): "Invalid use of
CPUDispatcher(add) with parameters (float64, float64, float64, float64);
Known signatures: (UniTuple(float64, 3),)", in every process after the race,
including a plain ``bayes-compare run normal-inverse-gamma``.

What
----
- ``save`` holds an exclusive ``flock`` on ``<index>.lock`` while it reads the
  index, writes the data under a number no entry uses, and writes the index:
  savers of one function take turns, and an index never names a data file
  before that file is complete.
- ``Cache._load_overload`` treats a loaded overload whose argument types are
  not the ones asked for as a miss (it is compiled again, and saved under a
  fresh number): a cache damaged before this fix, or by a process without it,
  cannot hand out the wrong code.

Files keep numba's own format, so a process without this module (a user's
plain PyMC script sharing PyTensor's cache folder) still reads them.

The patch is applied when ``numba.core.caching`` is first imported (an
import hook: :mod:`compare.accel._hooks`), so light commands that
never import numba do not pay for it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from compare.accel._hooks import patch_on_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "numba-cache"

_MODULE = "numba.core.caching"
_PATCHED = "_bayes_compare_safe"


@contextlib.contextmanager
def _exclusive(path: str) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (released by the kernel if the process dies).

    Best effort: where the lock file cannot be made (a read-only cache), numba's
    own write goes ahead unguarded, as before, and the load check still applies.
    """
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _safe_save(self: Any, key: Any, data: Any) -> None:
    """``IndexDataCacheFile.save``, serialised between processes; a new number per save."""
    with _exclusive(self._index_path + ".lock"):
        overloads = self._load_index()
        replaced = overloads.get(key)
        used = set(overloads.values())
        number = 1
        while self._data_name(number) in used:
            number += 1
        name = self._data_name(number)
        # The data first: a reader never finds an index entry before its file.
        self._save_data(name, data)
        overloads[key] = name
        self._save_index(overloads)
        if replaced is not None and replaced not in overloads.values():
            with contextlib.suppress(OSError):  # a reader that opened it keeps its copy
                os.unlink(self._data_path(replaced))


def _checked_load_overload(original: Any) -> Any:
    from numba.core import sigutils  # heavy: numba; this module patches numba anyway

    def _load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        loaded = original(self, sig, target_context)
        signature = getattr(loaded, "signature", None)
        if loaded is None or signature is None:
            return loaded
        wanted, _ = sigutils.normalize_signature(sig)  # type: ignore[no-untyped-call]
        if tuple(signature.args) != tuple(wanted):
            return None  # another signature's code: compile again
        return loaded

    return _load_overload


def patch(caching: ModuleType) -> None:
    """Apply both fixes to numba's ``caching`` module (once)."""
    if getattr(caching, _PATCHED, False):
        return
    caching.IndexDataCacheFile.save = _safe_save
    cache = caching.Cache
    cache._load_overload = _checked_load_overload(cache._load_overload)
    setattr(caching, _PATCHED, True)


def install() -> None:
    """Patch numba's cache now if it is loaded, else as soon as it is imported."""
    patch_on_import(_MODULE, NAME, patch)
