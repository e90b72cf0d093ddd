"""Peak memory of checking a d-dimensional posterior, against the judging in one block.

A user's correlated Gaussian posterior (``Exact.from_scipy(multivariate_normal)``)
checked from 4 x 2000 exact draws with ``compare.check_draws`` (the agreement test's
memory does not depend on where the draws came from), d = 25, 50, 100: the peak
resident memory of a fresh process, with the quantities judged in blocks (as
shipped, ``JUDGE_BLOCK``) and in one block (all series stacked at once, as before
issue 61), side by side, and the peak per dimension x draw. Issue 61 measured
2.3-2.8 GB for a 100-dimensional check; the target is <= 1 GB.

    python benchmarks/memory.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import subprocess
import sys

CHILD = """
import resource, sys
import numpy as np
from scipy import stats
import compare
import compare.core.agreement as agreement

d, block = int(sys.argv[1]), int(sys.argv[2])
agreement.JUDGE_BLOCK = block
rng = np.random.default_rng(0)
a = rng.standard_normal((d, d)) / np.sqrt(d)
dist = stats.multivariate_normal(np.zeros(d), a @ a.T + np.eye(d))
draws = dist.rvs(size=8000, random_state=1).reshape(4, 2000, d)
verdict = compare.check_draws(draws, compare.Exact.from_scipy(dist)).verdict
print(verdict, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_mb(d: int, block: int) -> tuple[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(d), str(block)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return out[0], int(out[1]) / 1024


def main() -> None:
    print("peak memory of compare.check_draws, 4 x 2000 draws (MB; per d x draw in bytes)")
    for d in (25, 50, 100):
        verdict, blocked = peak_mb(d, 256)
        _, whole = peak_mb(d, 10**9)
        print(
            f"   d={d:3d}: blocks {blocked:6.0f} MB ({blocked * 2**20 / (d * 8000):6.0f} B), "
            f"one block {whole:6.0f} MB: {whole / blocked:.1f}x ({verdict})",
            flush=True,
        )


if __name__ == "__main__":
    main()
