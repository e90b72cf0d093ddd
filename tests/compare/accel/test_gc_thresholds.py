"""compare/accel/gc_thresholds.py: our processes run with fewer full garbage collections.

The Dask workers of the clusters we start are checked in
tests/compare/outputs/test_audit.py (the preload reaches them).
"""

from __future__ import annotations

import gc
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

from compare.accel.gc_thresholds import THRESHOLDS
from compare.accel.quick_exit import spawn_context
from tests.probe import run_probe

PYTHON_DEFAULT = (700, 10, 10)


def test_the_thresholds_differ_from_pythons():
    assert THRESHOLDS != PYTHON_DEFAULT
    assert gc.get_threshold() == THRESHOLDS  # the suite's own processes (conftest.py)


@pytest.mark.parametrize("command", [True, False], ids=["command", "library"])
def test_the_command_line_sets_them_and_the_library_does_not(command):
    """In a new process: the command line's entry point sets them; ``import compare``
    (a user's session) keeps Python's."""
    script = "import compare, gc, json\n"
    if command:
        script += "from compare.interfaces.cli import main\nmain(['list'])\n"
    script += "print(json.dumps(list(gc.get_threshold())))\n"
    assert tuple(run_probe(script)) == (THRESHOLDS if command else PYTHON_DEFAULT)


@pytest.mark.parametrize("ours", [True, False])
def test_the_processes_we_spawn_set_them(ours):
    """The workers of `run --all` and of the report (``spawn_context``); a plain spawned
    process keeps Python's defaults, so the test sees the difference."""
    context = spawn_context() if ours else multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        seen = pool.submit(gc.get_threshold).result(timeout=120)
    assert seen == (THRESHOLDS if ours else PYTHON_DEFAULT)
