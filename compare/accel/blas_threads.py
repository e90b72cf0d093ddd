"""One BLAS thread per process for the command line and the test suite.

Why
---
NumPy and SciPy each ship an OpenBLAS built with pthreads, which starts one
thread per core. After a threaded call its threads busy-wait for the next
one. Our BLAS calls are small (whitening a few thousand draws, Cholesky
factors of the exact covariances, a 4x4 Wishart), so the extra threads gain
nothing, and their spinning takes the cores from what does run in parallel
here: nutpie's chains, the processes of ``run --all`` and ``report``, the
Dask workers of the studies, pytest's workers. Measured on 2 idle cores
(2026-12-03), the same tests in one process, interleaved:
``tests/compare/core/test_agreement.py`` 39.2 CPU-s with the default threads
against 23.2 with one (the same wall time, 22.8 and 23.5 s);
``tests/compare/studies/test_power.py`` 50.8 against 31.7 CPU-s (33.9 and 28.7 s wall).

A thread count the user chose (any of :data:`CHOSEN`) is left alone, so
``OPENBLAS_NUM_THREADS=8 bayes-compare ...`` runs a large exact solve
(a Gaussian process on thousands of points) with 8.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["CHOSEN", "install", "one_blas_thread"]

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "blas-threads"

#: The variables by which a user chooses the BLAS thread count (OpenBLAS reads
#: OMP_NUM_THREADS when OPENBLAS_NUM_THREADS is unset).
CHOSEN = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
)
#: What is set: every BLAS's own variable, not OMP_NUM_THREADS (other OpenMP code's).
_SET = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")


def one_blas_thread(*, environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Limit BLAS to one thread in this process and its children, unless the user chose.

    The environment variables reach the BLAS libraries loaded later (SciPy's,
    loaded with ``scipy.linalg``) and child processes (the workers of
    ``run --all``, the report's figure workers, Dask's); threadpoolctl
    limits those already loaded (NumPy's).

    Parameters
    ----------
    environ : mapping, optional
        The environment to read and update; ``os.environ`` by default, when
        the loaded libraries are limited too (a dict in tests: only the dict).

    Returns
    -------
    bool
        True if this call set the limit, False if the user's choice was kept.
    """
    env = os.environ if environ is None else environ
    if any(env.get(name) for name in CHOSEN):
        return False
    for name in _SET:
        env[name] = "1"
    if environ is None:
        from threadpoolctl import threadpool_limits  # 5 ms; only here

        # threadpoolctl warns about some mixes of OpenMP runtimes: not ours to print
        # on every command (the limit is set all the same).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            threadpool_limits(limits=1, user_api="blas")
    return True


def install() -> None:
    """:func:`one_blas_thread` in a process of ours (:func:`compare.accel.enable`)."""
    one_blas_thread()
