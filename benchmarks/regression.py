"""`make bench`, regression part: the closed form at scale, and what the
sufficient-statistics PyMC model buys.  Ratios are measured side by side.

1. Analytic posterior for n = 1e6, d = 50: sufficient statistics + conjugate
   update, against computing Phi^T Phi alone (the floor; target <= 1.3x) and
   against scikit-learn's Ridge(solver="cholesky") fitting the same MAP.
2. PyMC at n = 1e5, d = 10: ESS per second of the sufficient-statistics model
   against the per-observation likelihood (target >= 100x), and against the
   exact iid sampler (the limit any MCMC can approach).
3. The evidence check's ``pm.sample_smc`` on the Normal-Inverse-Gamma regression's
   builtin data (4 chains x 1,000 particles, as a run does): PyMC's IMH kernel
   against compare/core/batched_smc.py's BatchedIMH (the same estimate), CPU s.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _timing import best  # one BLAS thread: import it before numpy


def analytic_at_scale(n: int = 1_000_000, d: int = 50) -> None:
    from sklearn.linear_model import Ridge
    from threadpoolctl import threadpool_limits

    import analytic.linear_regression as lr

    rng = np.random.default_rng(0)
    phi = rng.standard_normal((n, d))
    y = phi @ rng.standard_normal(d) + rng.standard_normal(n)
    noise_sd, prior_sd = 1.0, 2.0
    prior_cov = prior_sd**2 * np.eye(d)

    def ours():
        suff = lr.sufficient_stats(phi=phi, y=y)
        return lr.update(suff=suff, noise_sd=noise_sd, prior_mean=np.zeros(d), prior_cov=prior_cov)

    def floor():
        return phi.T @ phi

    ridge = Ridge(alpha=noise_sd**2 / prior_sd**2, fit_intercept=False, solver="cholesky")
    with threadpool_limits(limits=1):
        t_ours, t_floor = best(ours), best(floor)
        t_ridge = best(lambda: ridge.fit(phi, y))
    np.testing.assert_allclose(ours().mean, ridge.coef_, rtol=1e-8)
    print(f"1. analytic posterior, n={n:.0e}, d={d}, one BLAS thread")
    print(f"   Phi^T Phi alone (floor):             {t_floor:7.3f} s")
    print(
        f"   posterior (stats + update):          {t_ours:7.3f} s   {t_ours / t_floor:4.2f}x the "
        f"floor (target <= 1.3x): {'ok' if t_ours <= 1.3 * t_floor else 'MISSED'}"
    )
    print(
        f"   sklearn Ridge(solver='cholesky'):    {t_ridge:7.3f} s   {t_ridge / t_ours:4.2f}x ours "
        f"(same MAP to 1e-8)"
    )


def pymc_sufficient_statistics(n: int = 100_000, d: int = 10) -> None:
    import pymc as pm
    from arviz_stats.base import array_stats

    import analytic.linear_regression as lr
    import pymc_models.linear_regression as m_lr
    from compare.core.defaults import DEFAULT
    from compare.core.sampling import compile_model

    rng = np.random.default_rng(1)
    phi = rng.standard_normal((n, d))
    y = phi @ rng.standard_normal(d) + rng.standard_normal(n)
    hyper = dict(noise_sd=1.0, prior_sd=2.0, prior_mean=0.0)
    grid = phi[:5]
    suff = lr.sufficient_stats(phi=phi, y=y)
    settings = DEFAULT

    def ess_per_second(compiled, data) -> tuple[float, float]:
        compiled.sample(data, settings, seed=0)  # warm-up (first call pays one-off costs)
        start = time.perf_counter()
        tree = compiled.sample(data, settings, seed=1)
        seconds = time.perf_counter() - start
        w = np.moveaxis(tree.posterior["w"].values, -1, 0)
        return float(np.min(array_stats.ess(w, method="bulk"))) / seconds, seconds

    fast = compile_model(m_lr.build_model(n_features=d, n_grid=5), m_lr.VARIABLES)
    fast_data = m_lr.model_data(
        gram=suff.gram, phi_t_y=suff.phi_t_y, y_t_y=suff.y_t_y, n=suff.n, phi_grid=grid, **hyper
    )
    plain_model = m_lr.build_plain_model(n_features=d, n_obs=n, n_grid=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = compile_model(plain_model, m_lr.VARIABLES)
    plain_data = {
        "phi": phi,
        "y": y,
        "phi_grid": grid,
        **{f"hp_{k}": np.asarray(v, dtype=float) for k, v in hyper.items()},
    }
    fast_rate, fast_s = ess_per_second(fast, fast_data)
    plain_rate, plain_s = ess_per_second(plain, plain_data)
    post = lr.update(suff=suff, noise_sd=1.0, prior_mean=np.zeros(d), prior_cov=4.0 * np.eye(d))
    draws = settings.chains * settings.draws
    iid_s = best(lambda: post.sample(np.random.default_rng(2), draws))
    iid_rate = draws / iid_s
    del pm
    print(
        f"\n2. PyMC (nutpie, default diagonal mass matrix), n={n:.0e}, d={d}, "
        f"{settings.chains} x {settings.draws} draws"
    )
    print(f"   per-observation likelihood:   {plain_rate:12.0f} min bulk ESS/s ({plain_s:.2f} s)")
    print(
        f"   sufficient statistics:        {fast_rate:12.0f} min bulk ESS/s ({fast_s:.2f} s)   "
        f"{fast_rate / plain_rate:6.0f}x (target >= 100x): "
        f"{'ok' if fast_rate >= 100 * plain_rate else 'MISSED'}"
    )
    print(
        f"   exact iid sampler (the limit):{iid_rate:12.0f} draws/s              "
        f"{iid_rate / fast_rate:6.0f}x the MCMC rate"
    )


def smc_kernels() -> None:
    import logging

    import pymc as pm
    from pymc.smc.kernels import IMH

    from compare.core.batched_smc import BatchedIMH
    from compare.topics import get_topic
    from compare.topics._regression import prior_population

    topic = get_topic("linear-regression-nig")
    ds = topic.builtin[0]
    hyper = topic.hyper(dataset=ds)
    x, hyper = topic.prepare(ds.load(), hyper)  # as compare/core/runner.py does
    model = topic.build_model(**topic.structure(x, hyper))
    pm.set_data(topic.model_data(x=x, **hyper), model=model)
    logging.getLogger("pymc").setLevel(logging.ERROR)

    def evidence(kernel) -> list[float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = pm.sample_smc(
                draws=1000,
                chains=4,
                cores=1,
                model=model,
                kernel=kernel,
                start=prior_population(model, 1000, 4, seed=1),
                random_seed=1,
                progressbar=False,
                compute_convergence_checks=False,
            )
        rows = trace.sample_stats["log_marginal_likelihood"].values
        return [float(np.asarray(list(r), dtype=float).ravel()[-1]) for r in rows]

    timings = {}
    for name, kernel in (("IMH", IMH), ("BatchedIMH", BatchedIMH)) * 2:  # the 2nd round warm
        start = time.process_time()
        estimate = evidence(kernel)
        timings[name] = (time.process_time() - start, estimate)
    (pymc_s, pymc_ev), (ours_s, ours_ev) = timings["IMH"], timings["BatchedIMH"]
    print(f"\n3. pm.sample_smc for the evidence check, {ds.name}, 4 x 1000 particles (CPU s)")
    print(
        f"   PyMC's IMH kernel:   {pymc_s:6.2f} s   log evidence per chain {np.round(pymc_ev, 6)}"
    )
    print(
        f"   BatchedIMH:          {ours_s:6.2f} s   {pymc_s / ours_s:4.1f}x faster; same estimate: "
        f"{'yes' if np.allclose(ours_ev, pymc_ev, rtol=1e-12) else 'NO'}"
    )


def main() -> None:
    analytic_at_scale()
    pymc_sufficient_statistics()
    smc_kernels()


if __name__ == "__main__":
    main()
