"""Fewer full garbage collections in the processes of bayes-compare.

Why
---
A process that compiled a few models holds 1-2 million objects that live
as long as it does: the modules of PyMC, PyTensor, numba and SciPy, and the
compiled models with their graphs and numba's type records. Python's
default thresholds, ``(700, 10, 10)``, start a full collection whenever
objects that survived a young one grew by a quarter; compiling a model
makes and keeps hundreds of thousands of objects, so every compile brings
one or more full collections, each walking all of them (0.5-0.7 s at 1.8
million objects). Measured on 2 idle cores (2026-12-06), the 106 tests of
``tests/compare/topics/test_topics.py`` and ``test_classification.py`` in
one process, on a cold compile cache: with the defaults the collector took
21.4 s of 227 CPU-s (30 full collections, 17.4 s); with :data:`THRESHOLDS`
9.7 s (2 full collections, 2.6 s), and the same peak memory (1.69 against
1.67 GB). Raising only the last threshold, ``(700, 10, 1000)``, took 8.7 s
but 0.38 GB more memory: young cyclic garbage then waits for a full
collection. Raising the first to 50,000 took 12.7 s: each young collection
walks more survivors.

What
----
:func:`fewer_collections` sets :data:`THRESHOLDS` in a process of ours: the
command line (:func:`compare.interfaces.cli.main`), the spawned processes
of ``run --all`` and the report, the local worker, the Dask workers of the
clusters we start (:func:`compare.accel.dask_setup`, a Dask preload:
``compare/core/cluster.py``) and the test suite, through :func:`compare.accel.enable`. A process the user owns
(their Python session calling :func:`compare.check`, their pytest run with
our plugin, their own Dask scheduler) keeps its own settings.
"""

from __future__ import annotations

import gc

__all__ = ["THRESHOLDS", "fewer_collections", "install"]

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "gc-thresholds"

#: ``gc.set_threshold`` for our processes (the measurements above).
THRESHOLDS = (20_000, 20, 20)


def fewer_collections() -> None:
    """Set :data:`THRESHOLDS` as this process's garbage-collection thresholds."""
    gc.set_threshold(*THRESHOLDS)


def install() -> None:
    """:func:`fewer_collections` in a process of ours (:func:`compare.accel.enable`)."""
    fewer_collections()
