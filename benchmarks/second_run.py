"""`make bench`: a second `bayes-compare run beta-binomial` (a new process, the model
cached), with and without the start-up cuts of 2026-12-05, measured side by side.

Four settings, new processes of the real command on a warm compile cache (the
model loaded, not compiled: what a user's second run does), alternating:

* as before: ``BAYES_COMPARE_SCIPY_DOCS=1`` (SciPy rewrites its docstrings at
  import, compare/accel/scipy_docs.py), ``BAYES_COMPARE_LOAD_REFRESH=1``
  (numba's whole context refreshed to load the model, compiled_cache._load)
  and ``BAYES_COMPARE_BUILD_GRAPHS=1`` (the log density's graphs and the MAP
  finder's objective rewritten again: compiled_cache.StoredGraphs and
  python_functions not read);
* SciPy's docstrings skipped;
* and numba's runtime alone;
* ours: and no graph built.

Prints the medians of ``BENCH_REPEAT`` (5) rounds, CPU seconds (user + system,
from ``os.wait4``) and wall time, and their ratios to "as before"; target 2's
figure is the wall time.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare.accel.compiled_cache import BUILD_GRAPHS_ENV, FULL_REFRESH_ENV
from compare.accel.scipy_docs import KEEP_ENV

REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
SETTINGS = {
    "as before": {KEEP_ENV: "1", FULL_REFRESH_ENV: "1", BUILD_GRAPHS_ENV: "1"},
    "SciPy's docstrings skipped": {FULL_REFRESH_ENV: "1", BUILD_GRAPHS_ENV: "1"},
    "and numba's runtime alone": {BUILD_GRAPHS_ENV: "1"},
    "ours (and no graph built)": {},
}


def _run(out: Path, env_set: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one `run beta-binomial --force` process."""
    ours = (KEEP_ENV, FULL_REFRESH_ENV, BUILD_GRAPHS_ENV)
    env = {k: v for k, v in os.environ.items() if k not in ours}
    env.update(env_set)
    exe = Path(sys.executable).with_name("bayes-compare")
    cmd = [str(exe), "run", "beta-binomial", "--force", "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"`{' '.join(cmd)}` exited {code}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in SETTINGS}
    with tempfile.TemporaryDirectory(prefix="bench-second-run-") as folder:
        out = Path(folder) / "run"
        _run(out, {})  # the model compiled (or loaded) once, before timing
        for _ in range(REPEAT):
            for name, env_set in SETTINGS.items():
                times[name].append(_run(out, env_set))
    print(
        "second `run beta-binomial` (new process, model cached), "
        f"median of {REPEAT} alternating rounds:"
    )
    base_wall, base_cpu = (statistics.median(x) for x in zip(*times["as before"], strict=True))
    for name, rows in times.items():
        wall, cpu = (statistics.median(x) for x in zip(*rows, strict=True))
        print(
            f"   {name:34s} wall {wall:5.2f} s ({wall / base_wall:.2f}x)   "
            f"CPU {cpu:5.2f} s ({cpu / base_cpu:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
