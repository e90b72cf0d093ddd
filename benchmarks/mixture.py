"""Gaussian-mixture EM against scikit-learn, measured side by side in one run.

Our ``analytic.gaussian_mixture.em`` (maximum likelihood, one run) and
``sklearn.mixture.GaussianMixture(covariance_type="full")`` start from the
same parameters (k-means++ centres, equal weights, the data covariance; given
to scikit-learn as ``weights_init``/``means_init``/``precisions_init``) and
run exactly ``ITERATIONS`` EM iterations (``tol=0``), each followed by the
final E-step both do.  BLAS is limited to one thread for both
(threadpoolctl).  Each side is timed ``REPEAT`` times, interleaved, and the
best time kept, which damps the load of other processes on a shared machine.

Target: ours <= 0.6x scikit-learn's time per iteration.  Before timing, the
two parameter sets after ``ITERATIONS`` iterations are compared (the same
EM map from the same start gives the same iterates up to rounding).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import time
import warnings

import numpy as np

ITERATIONS = 20
REPEAT = 3
TARGET = 0.6
CASES = [(1_000_000, 10, 2), (100_000, 10, 10)]  # (N, K, d)


def _data(rng: np.random.Generator, n: int, k: int, d: int) -> np.ndarray:
    """K clusters with centres ~ N(0, 5^2 I) and random covariances (eigenvalues in [0.5, 1.5])."""
    from analytic import gaussian_mixture as gm

    covs = []
    for _ in range(k):
        q, _ = np.linalg.qr(rng.normal(size=(d, d)))
        covs.append((q * rng.uniform(0.5, 1.5, size=d)) @ q.T)
    params = gm.MixtureParams(
        weights=np.full(k, 1.0 / k), means=5.0 * rng.normal(size=(k, d)), covariances=np.stack(covs)
    )
    return gm.simulate_from(rng, n=n, params=params)[0]


def compare(n: int, k: int, d: int) -> tuple[float, float, float]:
    """Seconds per iteration (ours, scikit-learn) and the largest parameter difference."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture
    from threadpoolctl import threadpool_limits

    from analytic import gaussian_mixture as gm

    rng = np.random.default_rng(0)
    x = _data(rng, n, k, d)
    cov = np.cov(x.T)
    start = gm.MixtureParams(
        weights=np.full(k, 1.0 / k),
        means=gm.kmeans_plus_plus(x=x, components=k, rng=rng),
        covariances=np.broadcast_to(cov, (k, d, d)),
    )

    def ours():
        return gm.em(
            x=x, components=k, init=start, reg_covar=1e-6, tol=0.0, max_iter=ITERATIONS, rng=None
        )

    def theirs():
        return GaussianMixture(
            k,
            covariance_type="full",
            reg_covar=1e-6,
            tol=0.0,
            max_iter=ITERATIONS,
            weights_init=start.weights,
            means_init=start.means,
            precisions_init=start.precisions,
        ).fit(x)

    best_ours = best_theirs = np.inf
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            a = ours()
            t1 = time.perf_counter()
            b = theirs()
            t2 = time.perf_counter()
            best_ours, best_theirs = min(best_ours, t1 - t0), min(best_theirs, t2 - t1)
    sd = np.sqrt(np.diagonal(b.covariances_, axis1=1, axis2=2))
    diff = max(
        float(np.max(np.abs(a.params.means - b.means_) / sd)),
        float(np.max(np.abs(a.params.weights - b.weights_))),
    )
    return best_ours / ITERATIONS, best_theirs / ITERATIONS, diff


def main() -> None:
    print(
        f"Gaussian-mixture EM, {ITERATIONS} iterations from the same start, one BLAS thread, "
        f"best of {REPEAT}, {os.cpu_count()} cores"
    )
    print(
        f"   {'N':>9s} {'K':>3s} {'d':>3s}  {'ours s/iter':>11s}  {'sklearn s/iter':>14s}  "
        f"{'ratio':>6s}  target <= {TARGET}x   max |diff| (sd units)"
    )
    for n, k, d in CASES:
        ours, theirs, diff = compare(n, k, d)
        ratio = ours / theirs
        print(
            f"   {n:9.0e} {k:3d} {d:3d}  {ours:11.4f}  {theirs:14.4f}  {ratio:5.2f}x  "
            f"{'ok' if ratio <= TARGET else 'MISSED':>14s}   {diff:.1e}"
        )


def faithful_time_to_verdict() -> float:
    """A fresh `bayes-compare run gaussian-mixture` process on builtin:faithful, K = 2."""
    import shutil
    import subprocess
    import sys
    import tempfile
    import time
    from pathlib import Path

    exe = Path(sys.executable).with_name("bayes-compare")
    out = tempfile.mkdtemp(prefix="bench-mixture-")
    try:
        start = time.perf_counter()
        proc = subprocess.run(
            [
                str(exe),
                "run",
                "gaussian-mixture",
                "--data",
                "builtin:faithful",
                "--set",
                "components=2",
                "--out",
                out,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - start
    finally:
        shutil.rmtree(out, ignore_errors=True)
    verdict = next(
        (line for line in proc.stdout.splitlines() if line.startswith("verdict")), "no verdict"
    )
    print(
        f"\nPyMC time to a verdict, gaussian-mixture on builtin:faithful, K=2, fresh process: "
        f"{seconds:.1f} s (target <= 60 s cold): {'ok' if seconds <= 60 else 'MISSED'}; "
        f"{verdict}"
    )
    return seconds


if __name__ == "__main__":
    main()
    faithful_time_to_verdict()
