"""Prior-sensitivity sweep speed: 10,000 grid points of linear-regression with d = 50.

The sweep (``compare.studies.sensitivity.exact_sweep``, ``--param prior_sd``) uses the
path the topic declares (``Sensitivity.path``: ``analytic.linear_regression.sensitivity_path``),
one eigendecomposition of Phi^T Phi for the whole grid
(``analytic.sensitivity.gaussian_linear_path``).  Measured side by side in
the same run against the naive formulation: one Cholesky factorisation,
solve and triangular inverse per grid point
(``gaussian_linear_path_cholesky``), and the single-run code
(``analytic.linear_regression.solve_stats``) per point on a subset.
Target: the whole 10,000-point sweep under 1 s.
"""

from __future__ import annotations

import numpy as np
from _timing import best  # one BLAS thread: import it before numpy


def main(points: int = 10_000, d: int = 50, n: int = 2_000, subset: int = 200) -> None:
    from threadpoolctl import threadpool_limits

    import analytic.linear_regression as lr
    from analytic import sensitivity as asens
    from compare.core.data import table_from_arrays
    from compare.studies import sensitivity as sens
    from compare.topics import get_topic

    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d - 1))  # plus the intercept: d coefficients
    y = x @ rng.standard_normal(d - 1) + rng.standard_normal(n)
    table = table_from_arrays(x, y, features=tuple(f"x{j}" for j in range(d - 1)), target="y")
    topic = get_topic("linear-regression")
    hyper = topic.hyper({"noise_sd": 1.0, "prior_sd": 1.0})
    grid = np.geomspace(1e-3, 1e3, points)
    design, _ = topic.prepare(table, dict(hyper))
    s = design.stats
    noise_var = np.full(points, 1.0)
    prior_var = grid**2

    with threadpool_limits(limits=1):
        t_sweep = best(
            lambda: sens.exact_sweep(topic, data=table, hyper=hyper, param="prior_sd", grid=grid)
        )
        t_path = best(
            lambda: asens.gaussian_linear_path(
                gram=s.gram,
                phi_t_y=s.phi_t_y,
                y_t_y=s.y_t_y,
                n=s.n,
                noise_var=noise_var,
                prior_var=prior_var,
            )
        )
        t_topic = best(
            lambda: lr.sensitivity_path(suff=s, noise_sd=1.0, prior_sd=grid, prior_mean=np.zeros(d))
        )
        t_chol = best(
            lambda: asens.gaussian_linear_path_cholesky(
                gram=s.gram, phi_t_y=s.phi_t_y, noise_var=noise_var, prior_var=prior_var
            ),
            1,
        )
        few = grid[:: points // subset]
        t_solve = best(
            lambda: [
                lr.solve_stats(suff=s, noise_sd=1.0, prior_sd=v, prior_mean=np.zeros(d))
                for v in few
            ],
            1,
        )
    t_solve_all = t_solve * points / few.size
    path = asens.gaussian_linear_path(
        gram=s.gram,
        phi_t_y=s.phi_t_y,
        y_t_y=s.y_t_y,
        n=s.n,
        noise_var=noise_var,
        prior_var=prior_var,
    )
    mean, sd = asens.gaussian_linear_path_cholesky(
        gram=s.gram, phi_t_y=s.phi_t_y, noise_var=noise_var, prior_var=prior_var
    )
    err = max(
        np.max(np.abs(path.mean - mean) / (np.abs(mean) + sd)), np.max(np.abs(path.sd / sd - 1.0))
    )
    print(
        f"exact sensitivity sweep, linear-regression, d={d}, n={n}, {points} grid points, "
        "one BLAS thread"
    )
    print(
        f"   exact_sweep (eigendecomposition, whole):  {t_sweep:7.3f} s   target < 1 s: "
        f"{'ok' if t_sweep < 1.0 else 'MISSED'}"
    )
    print(f"   the path alone (mean, sd, evidence):      {t_path:7.3f} s")
    print(
        f"   linear_regression.sensitivity_path:       {t_topic:7.3f} s   (the path the "
        "topic declares, with the intervals)"
    )
    print(
        f"   per-point Cholesky (mean, sd):            {t_chol:7.3f} s   "
        f"{t_chol / t_sweep:6.1f}x the whole sweep, {t_chol / t_path:6.1f}x the path"
    )
    print(
        f"   per-point solve_stats (single-run code):  {t_solve_all:7.3f} s   "
        f"{t_solve_all / t_path:6.1f}x the path (timed on {few.size} points, scaled)"
    )
    print(f"   largest difference eigen vs Cholesky:     {err:.1e} (relative, in sds)")


if __name__ == "__main__":
    main()
