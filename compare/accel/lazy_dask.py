"""Keep Dask unloaded in a process that holds no Dask array, though Dask is installed.

Why
---
Dask and ``distributed`` are dependencies (``sbc``, ``audit``, ``--workers``,
the local worker), and xarray asks for them whenever they are installed:

* every ``DataArray`` built asks ``isinstance(data, array_type("dask"))``,
  and the first ask imports ``dask.array`` (0.45 s);
* every index built from an array (each coordinate of a ``Dataset``) asks
  ``is_dask_collection(values)``, which imports ``dask.base`` (0.19 s, with
  Jinja2 and psutil) to ask the array for a Dask graph;
* ``to_netcdf`` asks ``get_dask_scheduler()`` (whether to close the file
  between chunked writes, and which write lock to take), and Dask answers by
  importing ``distributed`` to look for a client (0.3 s more).

A `bayes-compare run` in a new process paid both, 0.75 s of a run that
issue 17 compares with a plain PyMC script (benchmarks/plain_pymc.py).

Neither question needs the import to be answered right:

* an object can only be a ``dask.array.Array`` once ``dask.array`` is
  imported, so until then the answer is "no Dask array type" (``()``), and
  afterwards it is xarray's own (:class:`_LazyDaskModule`);
* Dask calls an object a collection only if it has ``__dask_graph__``, so an
  object without one is answered "no" without the import
  (:func:`_lazy_collection_check`), and anything else as before;
* a Dask client, or a Dask worker's task, exists in a process only once
  ``distributed`` is imported; until then xarray's answer is ``"threaded"``
  (:func:`without_distributed_probe`).

Everything else xarray reads of Dask (its version, whether it is available)
imports it as before.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from compare.accel import active
from compare.accel._hooks import patch_on_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "lazy-dask"
_MODULE = "xarray.namedarray.pycompat"


class _LazyDaskModule:
    """xarray's ``DuckArrayModule("dask")``, built only when something needs Dask.

    ``type`` is ``()`` while ``dask.array`` is not imported (no object can be
    a Dask array then) and xarray's own answer once it is; any other
    attribute builds xarray's module, importing Dask as xarray would.
    """

    def __init__(self, pycompat: ModuleType) -> None:
        self._pycompat = pycompat
        self._real: Any = None

    def _resolve(self) -> Any:
        if self._real is None:
            self._real = self._pycompat.DuckArrayModule("dask")
        return self._real

    @property
    def type(self) -> tuple[type, ...]:
        if "dask.array" not in sys.modules:
            return ()
        return self._resolve().type

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)


def _lazy_collection_check(real: Callable[[object], bool]) -> Callable[[object], bool]:
    """xarray's ``is_dask_collection`` that imports Dask only for an object with a
    ``__dask_graph__`` attribute (Dask's own answer for any other object is False)."""

    def is_dask_collection(x: object) -> bool:
        if "dask" not in sys.modules and not hasattr(x, "__dask_graph__"):
            return False
        return real(x)

    is_dask_collection.lazy = True  # type: ignore[attr-defined]
    return is_dask_collection


def patch(pycompat: ModuleType) -> None:
    """Answer xarray's Dask array checks without importing Dask (see the module)."""
    cache = getattr(pycompat, "_cached_duck_array_modules", None)
    if isinstance(cache, dict) and hasattr(pycompat, "DuckArrayModule"):  # else: another xarray
        cache.setdefault("dask", _LazyDaskModule(pycompat))
    # pycompat imports it: loaded by now.  Its functions look the check up at each call.
    utils = sys.modules.get("xarray.namedarray.utils")
    real = getattr(utils, "is_dask_collection", None)
    if callable(real) and not getattr(real, "lazy", False):
        utils.is_dask_collection = _lazy_collection_check(real)  # type: ignore[union-attr]


def install() -> None:
    """Patch xarray now if it is loaded, else as soon as it is imported."""
    patch_on_import(_MODULE, NAME, patch)


_probe_lock = threading.Lock()


@contextmanager
def without_distributed_probe() -> Iterator[None]:
    """Inside: xarray's ``get_dask_scheduler()`` says ``"threaded"`` without asking Dask,
    when ``distributed`` is not imported (no client or worker can exist then).

    With ``distributed`` imported (inside a Dask worker, next to a user's
    client) nothing changes. The swap is held under a lock, so threads
    writing at once leave xarray's own function in place afterwards.
    """
    from xarray.backends import locks, writers  # heavy: loaded by the caller already

    if (
        "distributed" in sys.modules
        or not active(NAME)  # a user's process, or an xarray release not verified
        or not all(hasattr(m, "get_dask_scheduler") for m in (locks, writers))
    ):  # a client may exist, or another xarray: ask as usual
        yield
        return

    with _probe_lock:
        saved = writers.get_dask_scheduler, locks.get_dask_scheduler
        writers.get_dask_scheduler = locks.get_dask_scheduler = _threaded
        try:
            yield
        finally:
            writers.get_dask_scheduler, locks.get_dask_scheduler = saved


def _threaded(get: Any = None, collection: Any = None) -> str:
    """xarray's ``get_dask_scheduler()`` answer in a process with no Dask client."""
    return "threaded"
