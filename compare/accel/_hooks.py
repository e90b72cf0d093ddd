"""Run a fix on a third-party module right after it is first imported.

The process accelerators (compare/accel/jax_stubs.py, numba_cache.py,
lazy_dask.py, ...) must be in place before the module they fix is used, yet
importing the module to fix it would make light commands pay for it.
:func:`after_import` applies the fix at once if the module is loaded, else from
a ``sys.meta_path`` finder that wraps the module's loader. :func:`around_import`
wraps the module's first execution in a context (compare/accel/lazy_arviz.py:
what the module imports while it runs). Only :func:`compare.accel.enable`, in a
process of ours, installs them: a user's process never sees these finders.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

from compare.accel import allowed


def _nothing(_module: ModuleType) -> None:
    return None


class AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; executes module ``name`` inside ``around()``, then runs
    ``then(module)``."""

    def __init__(
        self,
        name: str,
        then: Callable[[ModuleType], None],
        around: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext,
    ) -> None:
        self.name = name
        self.then = then
        self.around = around

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run = loader.exec_module
        then, around = self.then, self.around

        def exec_module(module: ModuleType) -> None:
            with around():
                run(module)
            then(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_import(name: str, then: Callable[[ModuleType], None]) -> None:
    """``then(module)`` now if module ``name`` is loaded, else right after it is imported."""
    module = sys.modules.get(name)
    if module is not None:
        then(module)
    elif not any(
        isinstance(f, AfterImport) and f.name == name and f.then is then for f in sys.meta_path
    ):
        sys.meta_path.insert(0, AfterImport(name, then))


_GUARDED: dict[tuple[str, Callable[[ModuleType], None]], Callable[[ModuleType], None]] = {}


def patch_on_import(module: str, accelerator: str, patch: Callable[[ModuleType], None]) -> None:
    """``patch(module)`` when ``module`` is first imported (at once if it is loaded), if
    :func:`compare.accel.allowed` lets ``accelerator`` act then: the versions of the
    packages it reaches into are read as they load, so a light command pays nothing."""
    key = (accelerator, patch)
    then = _GUARDED.get(key)
    if then is None:

        def then(loaded: ModuleType) -> None:
            if allowed(accelerator):
                patch(loaded)

        _GUARDED[key] = then
    after_import(module, then)


def around_import(name: str, around: Callable[[], AbstractContextManager[Any]]) -> None:
    """Execute module ``name`` inside ``around()`` when it is first imported (nothing if it
    is loaded already)."""
    if name not in sys.modules and not any(
        isinstance(f, AfterImport) and f.name == name and f.around is around for f in sys.meta_path
    ):
        sys.meta_path.insert(0, AfterImport(name, _nothing, around))
