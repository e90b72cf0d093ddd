"""Leave a process without Python's teardown, after what a normal exit does.

Why
---
A process that ran a model holds ~2,600 modules (PyMC, PyTensor, numba,
SciPy, xarray). After its work, Python's teardown frees them one by one:
0.6-0.9 s of a 5-6 s ``bayes-compare run``, running no code of ours. The
spawned workers of ``run --all`` and of the report pay it too, and a pool
waits for its workers to exit.

What
----
:func:`exit_now` does what a normal exit does first, in its order: it waits
for the threads that are not daemons (if one is alive, it exits normally
instead), runs the ``atexit`` functions (temporary folders,
multiprocessing's children, Dask, logging) and flushes stdout and stderr;
then ``os._exit`` with the exit code. ``bayes-compare`` calls it after
:func:`compare.interfaces.cli.main` (``cli.program`` through :func:`finish`; tests
that call ``main`` in-process are unaffected), and the processes of
:func:`spawn_context` after their work (as ``multiprocessing`` ends a spawned
process: its finalizers, then the exit). Both rely on two private functions of
CPython (``atexit._run_exitfuncs``, ``multiprocessing.util._exit_function``), so
the accelerator is verified per Python release; elsewhere, and with
``BAYES_COMPARE_ACCEL=0``, the processes exit as usual. A process of
:func:`spawn_context` starts with :func:`compare.accel.enable`, as the command
line does. ``tests/compare/interfaces/test_cli.py`` and
``tests/compare/accel/test_quick_exit.py`` show the output, the ``atexit``
functions and a live thread kept, and lost with a bare ``os._exit``.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing.context
import os
import sys
import threading
from typing import NoReturn

from compare.accel import allowed, enable

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "quick-exit"


def exit_now(code: int) -> NoReturn:
    """Exit with ``code``: threads, ``atexit`` and output as a normal exit, no teardown."""
    main_thread = threading.main_thread()
    if any(t is not main_thread and t.is_alive() and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe must not change the exit code
            stream.flush()
    os._exit(code)


class _Process(multiprocessing.context.SpawnProcess):
    """A spawned process that ends with :func:`exit_now` once its target has returned."""

    def run(self) -> None:
        enable()  # a process of ours: the accelerators the command line has
        super().run()
        if not allowed(NAME):
            return  # multiprocessing ends the process as usual
        from multiprocessing import util  # what multiprocessing runs after run() (its finalizers)

        util._exit_function()  # type: ignore[attr-defined]  # private, stable since 2.6
        exit_now(0)


class _SpawnContext(multiprocessing.context.SpawnContext):
    Process = _Process


def finish(code: int) -> NoReturn:
    """End a process of ours with ``code``: :func:`exit_now` where this accelerator is on,
    else ``sys.exit`` (the interpreter's own teardown)."""
    if allowed(NAME):
        exit_now(code)
    sys.exit(code)


def spawn_context() -> multiprocessing.context.SpawnContext:
    """``multiprocessing.get_context("spawn")`` whose processes skip the teardown (for a
    ``ProcessPoolExecutor``'s ``mp_context``)."""
    return _SpawnContext()
