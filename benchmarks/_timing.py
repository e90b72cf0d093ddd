"""What the benchmarks share: one BLAS thread, the accelerators, the best of a few timed calls.

Import it before numpy (``import _timing``): BLAS reads its thread count when it
loads.  One thread per process keeps ratios comparable with the references,
which are timed the same way in the same run.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import time
from collections.abc import Callable
from typing import Any


def best_with_result(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Shortest wall time of ``repeat`` calls, and the last call's result."""
    fastest, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest, out


def best(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Shortest wall time of ``repeat`` calls of ``fn``."""
    return best_with_result(fn, repeat)[0]


def run_make(*args: str, env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds, exit code and last output line of ``make ARGS`` in the repository."""
    import subprocess
    from pathlib import Path

    start = time.perf_counter()
    done = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0:  # what failed, for the reader of the benchmark's output
        import tempfile

        with tempfile.NamedTemporaryFile(
            "w", prefix=f"bench-make-{args[0]}-", suffix=".log", delete=False
        ) as log:
            log.write(done.stdout)
        print(f"\n   `make {' '.join(args)}` failed; its output: {log.name}")
    return wall, done.returncode, lines[-1] if lines else ""


#: The yardstick's work: numba compiling 40 fixed small functions (none of this
#: project's code, so a change of ours never moves it), in a new process.
_YARDSTICK = """
import numba
import numpy as np

x = np.linspace(0.1, 1.0, 64)
for i in range(40):
    namespace = {"np": np}
    exec(
        f"def f(a, b):\\n"
        f"    s = 0.0\\n"
        f"    for j in range(a.shape[0]):\\n"
        f"        s += np.log(a[j] + {i}.0) * np.exp(-b * a[j]) + np.sqrt(a[j] * {i + 1}.0)\\n"
        f"    return s\\n",
        namespace,
    )
    numba.njit(namespace["f"])(x, 0.5)
"""


def yardstick() -> float:
    """CPU seconds a new process takes to import numba and compile fixed functions.

    The cold commands spend most of their CPU in numba's compiler, and this
    machine's speed for it drifts by 10-30% over a day: a benchmark prints the
    yardstick before and after its cold run, so that runs of different days
    compare as ``cold / yardstick`` (see docs/speed.md).
    """
    import resource
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-yardstick-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", _YARDSTICK], env=env, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
