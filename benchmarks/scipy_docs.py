"""`make bench`: a second `bayes-compare run beta-binomial` with SciPy's docstring
rewriting skipped (compare/core/_scipy_docs.py) against SciPy as it ships.

Both are new processes of the real command on a warm compile cache (the model
loaded, not compiled: what a user's second run does), timed side by side in
this run, alternating (as shipped, ours, as shipped, ours, ...); the CPU
seconds (user + system, from ``os.wait4``) and wall times are the medians of
``BENCH_REPEAT`` (5) pairs. The reference is ``BAYES_COMPARE_SCIPY_DOCS=1``,
which keeps SciPy's own import.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare.core._scipy_docs import KEEP_ENV

REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))


def _run(out: Path, *, keep: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one `run beta-binomial --force` process."""
    env = {k: v for k, v in os.environ.items() if k != KEEP_ENV}
    if keep:
        env[KEEP_ENV] = "1"
    exe = Path(sys.executable).with_name("bayes-compare")
    cmd = [str(exe), "run", "beta-binomial", "--force", "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"`{' '.join(cmd)}` exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-scipy-docs-") as folder:
        out = Path(folder) / "run"
        _run(out, keep=False)  # the model compiled (or loaded) once, before timing
        shipped, ours = [], []
        for _ in range(REPEAT):
            shipped.append(_run(out, keep=True))
            ours.append(_run(out, keep=False))
    wall_s, cpu_s = (statistics.median(x) for x in zip(*shipped, strict=True))
    wall_o, cpu_o = (statistics.median(x) for x in zip(*ours, strict=True))
    print(
        "second `run beta-binomial` (new process, model cached), SciPy's doc rewriting "
        f"skipped vs as shipped, median of {REPEAT} pairs:"
    )
    print(
        f"   wall {wall_o:.2f} s vs {wall_s:.2f} s ({wall_o / wall_s:.2f}x)   "
        f"CPU {cpu_o:.2f} s vs {cpu_s:.2f} s ({cpu_o / cpu_s:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
