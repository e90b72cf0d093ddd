"""What the benchmarks share: one BLAS thread, and the best of a few timed calls.

Import it before numpy (``import _timing``): BLAS reads its thread count when it
loads.  One thread per process keeps ratios comparable with the references,
which are timed the same way in the same run.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

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
    return wall, done.returncode, lines[-1] if lines else ""
