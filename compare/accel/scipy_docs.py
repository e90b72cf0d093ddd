"""SciPy imported without rewriting its docstrings, in the command line's processes.

Why
---
SciPy 1.15+ decorates its array-API functions with ``xp_capabilities``, which
at import parses each function's docstring with numpydoc's ``FunctionDoc``,
appends a note on the array backends it supports, and renders it back. For
``scipy.stats`` (which PyMC, arviz-stats and our closed forms import) that is
about 0.27 CPU-s of every new process's start, some 8% of a second
``bayes-compare run beta-binomial``; the text is only ever read by ``help()``.
Measured on 2 idle cores (2026-12-05), ``import scipy.stats, arviz_stats`` in
new processes, interleaved: 1.36-1.46 CPU-s as shipped, 1.06-1.21 with this
(``benchmarks/second_run.py`` prints the ratio).

What
----
:func:`skip_capability_notes` arranges for ``FunctionDoc`` in
``scipy._lib._array_api`` to be swapped, as that module is imported (an
import hook, so that ``list`` and ``describe``, which never import SciPy,
pay nothing), for a stand-in that hands the docstring back as it is in the
source (its leading blank line stripped), without the note. The decorator
still records every function's capabilities in SciPy's table, so nothing
SciPy computes changes, only what ``help(scipy.stats.<name>)`` shows.

Where
-----
Our own processes only (:func:`compare.accel.enable`): the command line, the
processes of ``run --all`` and of the report's figures, the local worker, the
test suite. ``import compare`` in a user's own process (the API, the pytest
plugin) leaves SciPy alone. It does nothing once ``scipy.stats`` is imported,
outside the SciPy releases it was verified with (:data:`compare.accel.ACCELERATORS`;
SciPy then imports as it ships), or when ``BAYES_COMPARE_SCIPY_DOCS=1`` asks for
SciPy's docstrings as shipped (``benchmarks/second_run.py`` uses it to
measure the difference).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import os
import sys
from typing import Any

from compare.accel import allowed

__all__ = ["KEEP_ENV", "install", "skip_capability_notes"]

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "scipy-docs"

#: ``BAYES_COMPARE_SCIPY_DOCS=1``: SciPy's docstrings as shipped (its import as slow).
KEEP_ENV = "BAYES_COMPARE_SCIPY_DOCS"


class _SourceDoc:
    """The part of numpydoc's ``FunctionDoc`` that ``xp_capabilities`` uses: the
    ``Notes`` list it appends to, and ``str()``, whose first line (the signature)
    it drops."""

    def __init__(self, func: Any) -> None:
        self._doc = func.__doc__ or ""
        self._sections: dict[str, list[str]] = {"Notes": []}

    def __getitem__(self, key: str) -> list[str]:
        return self._sections.setdefault(key, [])

    def __str__(self) -> str:
        return "\n" + self._doc


def _install(module: Any) -> bool:
    if not hasattr(module, "FunctionDoc") or not hasattr(module, "xp_capabilities"):
        return False  # another SciPy release: leave it as it ships
    module.FunctionDoc = _SourceDoc
    return True


class _OnImport(importlib.abc.MetaPathFinder):
    """Installs the stand-in as ``scipy._lib._array_api`` is imported, so that a
    process that never imports SciPy (``list``, ``describe``) does not pay for it."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != _MODULE:
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)  # once: the next finders find the module itself
        spec = importlib.util.find_spec(name)
        loader = None if spec is None else spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            if allowed(NAME):  # SciPy's version, read now that SciPy loads
                _install(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]  # this file's loader
        return spec


_MODULE = "scipy._lib._array_api"
_HOOK = _OnImport()


def skip_capability_notes() -> bool:
    """Make SciPy's later imports skip the docstring rewriting (see the module's doc).

    Returns
    -------
    bool
        False if SciPy will import as it ships: :data:`KEEP_ENV` is set,
        ``scipy.stats`` is already imported, or SciPy's private names are not
        where this expects them (known at once if SciPy's helpers are loaded;
        otherwise the hook finds out when they are, and leaves SciPy alone).
    """
    if os.environ.get(KEEP_ENV) == "1":
        return False
    if "scipy.stats" in sys.modules:
        module = sys.modules.get(_MODULE)
        return getattr(module, "FunctionDoc", None) is _SourceDoc
    if _MODULE in sys.modules:
        return allowed(NAME) and _install(sys.modules[_MODULE])
    if _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
    return True


def install() -> None:
    """:func:`skip_capability_notes` in a process of ours (:func:`compare.accel.enable`)."""
    skip_capability_notes()
