"""`make bench`: our diagnostics (compare/core/ess.py) against ArviZ's, side by side.

First the ESS for the mean of the agreement test, then a run's diagnosis
(compare/core/checks.py's ``diagnose``: rank R-hat, bulk and tail ESS).

The workloads are what the agreement check asks for: a Gaussian posterior's
quantities (12 series), a Dirichlet's with its quantile indicators (21) and a
classifier's 990 means, variances and covariances, each 4 chains x 1000 draws of
nearly independent draws (NUTS's usual case), and 12 strongly autocorrelated
series (AR(1), phi = 0.95: every lag from the FFT, as ArviZ). Each is timed,
best of ``BENCH_REPEAT`` (3), with ``arviz_stats.base.array_stats.ess(...,
method="mean")`` in the same run, and the answers are checked equal first.
"""

from __future__ import annotations

import os

import _timing  # one BLAS thread: import it before numpy
import numpy as np
from arviz_stats.base import array_stats

from compare.core.ess import ess_bulk, ess_mean, ess_tail, rhat_rank

REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))


def _ar1(rng: np.random.Generator, phi: float, shape: tuple[int, int, int]) -> np.ndarray:
    """AR(1) series x_t = phi x_(t-1) + e_t along the last axis."""
    from scipy.signal import lfilter

    return lfilter([1.0], [1.0, -phi], rng.standard_normal(shape), axis=-1)


def main() -> None:
    rng = np.random.default_rng(1)
    dirichlet = rng.standard_normal((21, 4, 1000))
    dirichlet[12:] = dirichlet[12:] < 0.3  # quantile indicators
    workloads = {
        "gaussian, 12 quantities": (rng.standard_normal((12, 4, 1000)), 200),
        "dirichlet, 21 (9 indicators)": (dirichlet, 100),
        "classifier, 990 quantities": (rng.standard_normal((990, 4, 1000)), 2),
        "autocorrelated, 12 (FFT)": (_ar1(rng, 0.95, (12, 4, 1000)), 50),
    }
    print("ESS for the mean: ours against ArviZ's array_stats.ess(method='mean')")
    for name, (series, calls) in workloads.items():
        theirs = np.asarray(array_stats.ess(series, method="mean"), dtype=float)
        np.testing.assert_allclose(ess_mean(series), theirs, rtol=1e-9)

        def arviz(series: np.ndarray = series, calls: int = calls) -> None:
            for _ in range(calls):
                array_stats.ess(series, method="mean")

        def ours(series: np.ndarray = series, calls: int = calls) -> None:
            for _ in range(calls):
                ess_mean(series)

        t_arviz = _timing.best(arviz, REPEAT) / calls
        t_ours = _timing.best(ours, REPEAT) / calls
        _line(name, t_arviz, t_ours)
    print("A run's diagnosis: rank R-hat, bulk and tail ESS (ArviZ's rhat and ess, 3 calls)")
    for d, calls in ((3, 100), (44, 10)):
        series = rng.standard_normal((d, 4, 1000))

        def arviz_diagnosis(series: np.ndarray = series, calls: int = calls) -> None:
            for _ in range(calls):
                array_stats.rhat(series, method="rank")
                array_stats.ess(series, method="bulk")
                array_stats.ess(series, method="tail", prob=(0.05, 0.95))

        def our_diagnosis(series: np.ndarray = series, calls: int = calls) -> None:
            for _ in range(calls):
                rhat_rank(series)
                ess_bulk(series)
                ess_tail(series)

        t_arviz = _timing.best(arviz_diagnosis, REPEAT) / calls
        t_ours = _timing.best(our_diagnosis, REPEAT) / calls
        _line(f"{d} parameters, 4 x 1000 draws", t_arviz, t_ours)


def _line(name: str, t_arviz: float, t_ours: float) -> None:
    print(
        f"  {name:30s} ArviZ {t_arviz * 1e3:8.2f} ms  ours {t_ours * 1e3:8.2f} ms"
        f"  {t_arviz / t_ours:5.2f}x faster"
    )


if __name__ == "__main__":
    main()
