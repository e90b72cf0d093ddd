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
from compare.interfaces.cli import main

PYTHON_DEFAULT = (700, 10, 10)


@pytest.fixture
def default_thresholds():
    """Python's own thresholds during the test (the suite runs with ours: conftest.py)."""
    gc.set_threshold(*PYTHON_DEFAULT)
    yield
    gc.set_threshold(*THRESHOLDS)


def test_the_thresholds_differ_from_pythons():
    assert THRESHOLDS != PYTHON_DEFAULT
    assert gc.get_threshold() == THRESHOLDS  # the suite's own processes (conftest.py)


def test_the_command_line_sets_them(default_thresholds):
    assert gc.get_threshold() == PYTHON_DEFAULT
    assert main(["list"]) == 0
    assert gc.get_threshold() == THRESHOLDS


@pytest.mark.parametrize("ours", [True, False])
def test_the_processes_we_spawn_set_them(ours):
    """The workers of `run --all` and of the report (``spawn_context``); a plain spawned
    process keeps Python's defaults, so the test sees the difference."""
    context = spawn_context() if ours else multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        seen = pool.submit(gc.get_threshold).result(timeout=120)
    assert seen == (THRESHOLDS if ours else PYTHON_DEFAULT)
