"""`make bench`: the agreement check with OpenBLAS's default threads against one thread.

What the command line and the test suite now do (compare/accel/blas_threads.py):
one BLAS thread per process unless the user chose a count. The workload is the
check every run ends with, ``agreement_test`` on 4 x 1000 draws of a Dirichlet
posterior (exact iid draws, so no sampler and no compile), repeated; two
processes run it at once, as the two workers of ``run --all``, ``report`` and
``make test`` do on a 2-core machine. Each setting is timed side by side in
this run, alternating (default, one, default, one, ...), and the CPU seconds
of both processes (user + system, from ``os.wait4``) and the wall time are
printed with their ratios. Measured 2026-12-03 on 2 idle cores: 0.72x the
wall time and 0.72x the CPU (3.42 s and 6.68 CPU-s against 4.72 s and 9.27). On a
1-core machine OpenBLAS starts one thread anyway and both ratios are ~1.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from compare.accel.blas_threads import CHOSEN

REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
PROCESSES = 2

_WORKLOAD = """
import numpy as np
import analytic.dirichlet_categorical as dc
from compare.studies.calibration import iid_null
posterior = dc.DirichletPosterior(np.array([3.0, 5.5, 9.0]), ("a", "b", "c"))
iid_null(posterior, replications=150, chains=4, draws=1000, rng=np.random.default_rng(1))
"""


def _pair(threads: str | None) -> tuple[float, float]:
    """Wall seconds and CPU seconds of PROCESSES concurrent workloads."""
    env = {k: v for k, v in os.environ.items() if k not in CHOSEN}
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = threads
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", _WORKLOAD], env=env) for _ in range(PROCESSES)]
    cpu = 0.0
    for proc in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"the workload failed (exit {proc.returncode})")
        cpu += usage.ru_utime + usage.ru_stime
    return time.perf_counter() - start, cpu


def main() -> None:
    runs: dict[str, list[tuple[float, float]]] = {"default": [], "one": []}
    for _ in range(REPEAT):
        runs["default"].append(_pair(None))
        runs["one"].append(_pair("1"))
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
    print(
        f"BLAS threads: {PROCESSES} processes at once, each the agreement check x 150 "
        f"(4 x 1000 draws), {os.cpu_count()} cores, median of {REPEAT}"
    )
    print("   OpenBLAS threads         wall (s)   CPU (s)")
    print(f"   default (one per core)  {wall['default']:8.2f}  {cpu['default']:8.2f}")
    print(f"   one (what we set)       {wall['one']:8.2f}  {cpu['one']:8.2f}")
    print(
        f"   one/default: wall {wall['one'] / wall['default']:.2f}x, "
        f"CPU {cpu['one'] / cpu['default']:.2f}x"
    )


if __name__ == "__main__":
    main()
