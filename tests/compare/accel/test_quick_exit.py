"""Processes that exit without the interpreter's teardown (compare/accel/quick_exit.py).

``cli.program`` (the ``bayes-compare`` program) is tested with the command
line, in tests/compare/interfaces/test_cli.py. Here: a worker process of
:func:`spawn_context` in a ``ProcessPoolExecutor`` returns its results, and
runs its ``atexit`` functions and multiprocessing's finalizers on the way
out. Power: the same worker ended by a bare ``os._exit`` runs neither.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from compare.accel import quick_exit


def _leave_marks(folder: str) -> int:
    """In the worker: an atexit function and a multiprocessing finalizer, each writing a
    file when it runs."""
    import atexit
    from multiprocessing import util

    pid = os.getpid()
    atexit.register(Path(folder, f"atexit-{pid}").touch)
    util.Finalize(None, Path(folder, f"finalizer-{pid}").touch, exitpriority=0)
    return pid


class _BareExit(multiprocessing.context.SpawnProcess):
    """The planted bug: the worker leaves with os._exit as soon as its loop returns."""

    def run(self) -> None:
        super().run()
        os._exit(0)


class _BareContext(multiprocessing.context.SpawnContext):
    Process = _BareExit


@pytest.mark.parametrize("planted", [False, True], ids=["as-shipped", "bare-os-exit"])
def test_a_pool_worker_returns_results_and_runs_atexit_and_finalizers(tmp_path, planted):
    context = _BareContext() if planted else quick_exit.spawn_context()
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        pids = set(pool.map(_leave_marks, [str(tmp_path)] * 4))
    marks = {p.name for p in tmp_path.iterdir()}
    expected = {f"{kind}-{pid}" for pid in pids for kind in ("atexit", "finalizer")}
    assert pids and (marks == expected) is not planted, sorted(marks)
