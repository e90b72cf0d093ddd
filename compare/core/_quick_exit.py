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
:func:`compare.interfaces.cli.main` (``cli.program``; tests that call ``main``
in-process are unaffected), and the processes of :func:`spawn_context` after
their work (as ``multiprocessing`` ends a spawned process: its finalizers,
then the exit). ``tests/compare/interfaces/test_cli.py`` and
``tests/compare/core/test_quick_exit.py`` show the output, the ``atexit``
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
        from compare.core._gc import fewer_collections  # light
        from compare.core._scipy_docs import skip_capability_notes  # light

        skip_capability_notes()  # a worker of ours: SciPy's start without its doc rewriting
        fewer_collections()  # and fewer full garbage collections (compare/core/_gc.py)
        super().run()
        from multiprocessing import util  # what multiprocessing runs after run() (its finalizers)

        util._exit_function()  # type: ignore[attr-defined]  # private, stable since 2.6
        exit_now(0)


class _SpawnContext(multiprocessing.context.SpawnContext):
    Process = _Process


def spawn_context() -> multiprocessing.context.SpawnContext:
    """``multiprocessing.get_context("spawn")`` whose processes skip the teardown (for a
    ``ProcessPoolExecutor``'s ``mp_context``)."""
    return _SpawnContext()
