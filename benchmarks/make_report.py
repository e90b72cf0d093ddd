"""`make bench`: ``make report`` itself against issue 17's target 4.

The Makefile's ``report`` target (``run --all``, ``summary``, ``report
--all``), as the README runs it, with ``REPORTS`` in a temporary folder
(``reports/`` is left as it was) and every compile cache empty (PyTensor's,
numba's and ours in a temporary folder, as ``.ci/run`` sets them): a new
machine with the venv built. Then the same command again, nothing changed.
Printed with ok/MISSED against the target's figures: <= 2 min cold, <= 20 s
unchanged, peak memory <= 1.5 GB (the largest process's resident set). The
reference is the target itself (no peer builds this report); the other jobs
on the machine are not controlled, so run it idle to compare with the note's
figures (this machine's speed drifts by 10-20% over a day). The machine's
yardstick (``_timing.yardstick``: numba compiling fixed functions in a new
process), measured before and after, puts runs of different days side by
side: the cold time in yardsticks.

About 2.5 minutes on 2 cores; ``BENCH_MAKE_REPORT=0`` skips it.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from pathlib import Path

from _timing import run_make, yardstick  # one BLAS thread: import it before numpy

from compare.accel import compiled_cache

COLD_TARGET = 120.0  # seconds
UNCHANGED_TARGET = 20.0  # seconds
MEMORY_TARGET = 1.5 * 2**30  # bytes, the largest process's peak resident set


def _verdict(value: float, target: float) -> str:
    return f"{'ok' if value <= target else 'MISSED'}   (ratio {value / target:.2f})"


def main() -> int:
    if os.environ.get("BENCH_MAKE_REPORT", "1") == "0":
        print("make report (target 4): skipped (BENCH_MAKE_REPORT=0)")
        return 0
    stick_before = yardstick()
    with tempfile.TemporaryDirectory(prefix="bench-make-report-") as tmp:
        env = compiled_cache.environment_with_caches_in(Path(tmp) / "caches")
        reports = Path(tmp) / "reports"
        start = resource.getrusage(resource.RUSAGE_CHILDREN)
        cold, code, last = run_make("report", f"REPORTS={reports}", env=env)
        end = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak = end.ru_maxrss * 1024  # KiB on Linux
        written = sum(1 for _ in (reports / "runs").glob("*/result.json"))
        unchanged, code_again, _ = run_make("report", f"REPORTS={reports}", env=env)
    stick_after = yardstick()
    cpu = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
    stick = (stick_before + stick_after) / 2
    print(f"make report, every compile cache empty (target 4): {last}")
    print(
        f"   cold       {cold:6.1f} s   target <= {COLD_TARGET:.0f} s: {_verdict(cold, COLD_TARGET)}"
    )
    print(
        f"              {cpu:6.1f} CPU-s; machine yardstick {stick_before:.2f} CPU-s before, "
        f"{stick_after:.2f} after: cold = {cold / stick:.1f} yardsticks"
    )
    print(
        f"   unchanged  {unchanged:6.1f} s   target <= {UNCHANGED_TARGET:.0f} s: "
        f"{_verdict(unchanged, UNCHANGED_TARGET)}"
    )
    print(
        f"   peak memory {peak / 2**30:5.2f} GB   target <= {MEMORY_TARGET / 2**30:.1f} GB: "
        f"{_verdict(peak, MEMORY_TARGET)}"
    )
    print(f"   {written} runs written; exit codes {code} and {code_again} (0: every topic agreed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
