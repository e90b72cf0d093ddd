"""Simulation-based calibration: speed against a naive refit, scaling, the exact side, power.

Prints, in one run on this machine:

1. 1000 simulations of ``normal-known-variance`` (default settings: 4 chains
   x 250 draws, 300 warm-up, n = 20) on a fresh ``LocalCluster`` of 2 worker
   processes, start-up and compiles included (target <= 120 s on 2 cores),
   against a naive refit from scratch (``pm.sample`` on a freshly built
   model for every simulation, as simuk does) timed on a few simulations
   in the same run and extrapolated to 1000;
1b. the peer, measured side by side: ``bayes-compare sbc beta-binomial
   --sims N --workers 2`` in a new process against simuk (installed
   version) on the same problem in a new process (p ~ Beta(2, 2), 20
   Bernoulli observations, 4 chains x 250 draws, 300 warm-up), once with
   ``pm.sample``'s own NUTS (simuk's default) and once with
   ``nuts_sampler="nutpie"``; N = 20 (``SBC_PEER_SIMS``), whole processes
   timed, and the ratio simuk / ours.  When simuk cannot be imported or
   fails, the peer is reported as not measured;
2. simulations per second with 1 and 2 workers after each worker has
   compiled the model (the first block of each worker is excluded), and
   the scaling ratio;
3. exact-side SBC simulations per second (a Gaussian posterior, whitened;
   a normal-inverse-gamma posterior through its marginal CDFs);
4. power of the uniformity test against the planted prior variance x2 of
   ``tests/compare/test_sbc.py``, with exact posteriors in place of MCMC
   (the ranks of a perfect sampler of the wrong model): the ECDF test
   alone and combined with the dispersion test, and the false-alarm rate
   of the combination under the right model.

Numbers depend on what else runs on the machine: the load average is
printed first.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]

TOPIC = "normal-known-variance"
SIMS = 1000
NAIVE_SIMS = 3
SCALING_SIMS = 240


def full_run(out: Path):
    from compare.studies.sbc import SbcSettings, SbcSpec, run_sbc
    from compare.topics import get_topic

    topic = get_topic(TOPIC)
    spec = SbcSpec(topic=TOPIC, hyper=topic.hyper(), settings=SbcSettings())
    start = time.perf_counter()
    result = run_sbc(spec=spec, sims=SIMS, out=out, workers=2, figures=True)
    return result, time.perf_counter() - start


def naive_seconds_per_fit() -> float:
    """``pm.sample`` on a model built afresh for each simulation (compiles every time)."""
    import logging

    import pymc as pm

    from compare.studies import sbc_exact
    from compare.studies.sbc import SbcSettings
    from compare.topics import get_topic

    topic = get_topic(TOPIC)
    hyper = topic.hyper()
    s = SbcSettings()
    logging.getLogger("pymc").setLevel(logging.ERROR)
    times = []
    for index in range(NAIVE_SIMS):
        start = time.perf_counter()
        _, x, prepared = sbc_exact.simulate(
            topic, index=index, seed=s.seed, n_obs=s.n_obs, hyper=hyper
        )
        model = topic.build_model(**topic.structure(x, prepared))
        with model, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pm.set_data(topic.model_data(x=x, **prepared), coords={"obs": np.arange(len(x))})
            pm.sample(
                draws=s.draws,
                tune=s.tune,
                chains=s.chains,
                cores=1,
                random_seed=index,
                progressbar=False,
                compute_convergence_checks=False,
            )
        times.append(time.perf_counter() - start)
    return float(np.mean(times))


PEER_TOPIC = "beta-binomial"
PEER_SIMS = int(os.environ.get("SBC_PEER_SIMS", "20"))


def simuk_child(sampler: str, sims: int) -> None:
    """Run simuk on the beta-binomial SBC problem; print one JSON line (run with ``--simuk``).

    The model is what a simuk user writes: constants for the prior, an
    observed variable that simuk refills from the prior predictive.  The
    fit settings are those of our SBC (compare/sbc.py ``SbcSettings``).
    """
    start = time.perf_counter()
    try:
        import pymc as pm
        import simuk
        from simuk import __version__
    except Exception as error:  # noqa: BLE001 - any failure means "not measured"
        print(json.dumps({"error": f"cannot import simuk: {error!r}"}))
        return
    sys.path.insert(0, str(ROOT))  # this checkout's compare, as the other side runs
    from compare.studies.sbc import SbcSettings

    s = SbcSettings()
    with pm.Model() as model:
        p = pm.Beta("p", alpha=2.0, beta=2.0)  # topic beta-binomial's default a, b
        pm.Bernoulli("x", p=p, observed=np.zeros(s.n_obs))
    kwargs = {"draws": s.draws, "tune": s.tune, "chains": s.chains}
    if sampler == "nutpie":
        kwargs["nuts_sampler"] = "nutpie"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sbc = simuk.SBC(
            model, num_simulations=sims, sample_kwargs=kwargs, seed=s.seed, progress_bar=False
        )
        sbc.run_simulations()
    print(
        json.dumps(
            {
                "version": __version__,
                "completed": int(sbc._simulations_complete),
                "seconds_in_process": time.perf_counter() - start,
            }
        )
    )


def _timed_process(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, proc


def peer_report() -> None:
    """Item 1b: ours and simuk on the same SBC problem, each in a new process."""
    print(
        f"\n1b. the peer, measured here: {PEER_SIMS} simulations of {PEER_TOPIC} "
        "(n = 20, 4 chains x 250 draws, 300 warm-up), each side a new process"
    )
    with tempfile.TemporaryDirectory(prefix="bench-sbc-") as tmp:
        ours, proc = _timed_process(
            [
                sys.executable,
                "-m",
                "compare.interfaces.cli",
                "sbc",
                PEER_TOPIC,
                "--sims",
                str(PEER_SIMS),
                "--workers",
                "2",
                "--out",
                str(Path(tmp) / "sbc"),
            ]
        )
    if proc.returncode not in (0, 1, 2):
        print(f"   bayes-compare sbc failed (exit {proc.returncode}): {proc.stderr[-500:]}")
        return
    name = f"bayes-compare sbc {PEER_TOPIC} --sims {PEER_SIMS} --workers 2"
    print(
        f"   {name:55s} {ours:7.1f} s  ({ours / PEER_SIMS:.2f} s per simulation, start-up included)"
    )
    for sampler, label in (
        ("pymc", "pm.sample NUTS (simuk's default)"),
        ("nutpie", 'nuts_sampler="nutpie"'),
    ):
        seconds, proc = _timed_process(
            [sys.executable, str(Path(__file__).resolve()), "--simuk", sampler, str(PEER_SIMS)]
        )
        try:
            out = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            out = {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
        if "error" in out or out.get("completed") != PEER_SIMS:
            reason = out.get("error") or (
                f"only {out['completed']} of {PEER_SIMS} simulations "
                f"finished: {proc.stderr.strip()[-300:]}"
            )
            print(f"   simuk, {label}: not measured ({reason})")
            continue
        name = f"simuk {out['version']}, {label}"
        print(
            f"   {name:55s} {seconds:7.1f} s  "
            f"({seconds / PEER_SIMS:.2f} s per simulation)   ratio simuk / ours "
            f"{seconds / ours:5.1f}x"
        )


def warm_rate(workers: int) -> float:
    """Simulations per second once every worker has compiled the model."""
    from distributed import wait

    from compare.studies.sbc import SbcSettings, SbcSpec, connect, run_block
    from compare.topics import get_topic

    topic = get_topic(TOPIC)
    spec = SbcSpec(topic=TOPIC, hyper=topic.hyper(), settings=SbcSettings())
    client, cluster = connect(workers=workers, scheduler=None)
    try:
        addresses = list(client.scheduler_info()["workers"])
        # one small block pinned to each worker: the compile
        wait(
            [
                client.submit(run_block, spec, [10_000 + i], workers=[a], pure=False)
                for i, a in enumerate(addresses)
            ]
        )
        blocks = np.array_split(np.arange(SCALING_SIMS), SCALING_SIMS // 12)
        start = time.perf_counter()
        wait([client.submit(run_block, spec, b.tolist(), pure=False) for b in blocks])
        return SCALING_SIMS / (time.perf_counter() - start)
    finally:
        client.close()
        cluster.close()


def exact_rates() -> list[tuple[str, str, float]]:
    from compare.studies.sbc_exact import exact_side
    from compare.topics import get_topic

    rows = []
    for name, sims, n_obs in (
        ("normal-known-variance", 20_000, 20),
        ("linear-regression", 5_000, 20),
        ("normal-inverse-gamma", 2_000, 20),
    ):
        topic = get_topic(name)
        hyper = topic.hyper({"degree": 3} if name == "linear-regression" else {})
        side = exact_side(topic, indices=range(sims), seed=1, n_obs=n_obs, hyper=hyper)
        rows.append((name, side.method, side.sims_per_second))
    return rows


def power(replications: int = 2000, sims: int = 300, alpha: float = 1e-4):
    """Rejection rates with exact posterior PITs (module docstring, item 4)."""
    from compare.studies.sbc import holm, uniformity_test

    rng = np.random.default_rng(20261130)
    prior_mean, prior_sd, noise_sd, n = 0.5, 1.0, 5.0, 1  # tests/compare/test_sbc.py

    def pits(factor: float) -> np.ndarray:
        theta = rng.normal(prior_mean, prior_sd, sims)
        xbar = rng.normal(theta, noise_sd / np.sqrt(n))
        prior_prec, data_prec = 1 / (factor * prior_sd**2), n / noise_sd**2
        prec = prior_prec + data_prec
        mean = (prior_prec * prior_mean + data_prec * xbar) / prec
        return stats.norm.cdf(theta, mean, 1 / np.sqrt(prec))

    rates = {}
    for label, factor in (("planted x2", 2.0), ("right model", 1.0)):
        ecdf = combined = 0
        for _ in range(replications):
            # as in the test: this parameter's MCMC test and the exact side's, Holm over 2
            wrong = uniformity_test(pits(factor), side="mcmc", parameter="mu", null_draws=4000)
            other = uniformity_test(pits(1.0), side="exact", parameter="mu", null_draws=4000)
            if factor == 1.0:  # any rejection is a false alarm
                ecdf += min(1.0, 2 * min(wrong.p_ecdf, other.p_ecdf)) <= alpha
                combined += min(holm([wrong.p, other.p])) <= alpha
            else:
                ecdf += min(1.0, 2 * wrong.p_ecdf) <= alpha
                combined += holm([wrong.p, other.p])[0] <= alpha
        rates[label] = (ecdf / replications, combined / replications)
    return rates


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} cores\n")
    with tempfile.TemporaryDirectory() as tmp:
        result, seconds = full_run(Path(tmp) / "sbc")
    naive = naive_seconds_per_fit()
    tp = result.throughput
    print(f"1. {SIMS} simulations of {TOPIC}, 2 local workers, fresh cluster")
    print(
        f"   sbc (compile once per worker, with_data):  {seconds:7.1f} s   "
        f"target <= 120 s: {'ok' if seconds <= 120 else 'MISSED'}   verdict {result.verdict}"
    )
    print(
        f"     of which simulating and fitting:          {tp['seconds']:7.1f} s "
        f"({tp['sims_per_second']:.1f} sims/s; "
        f"{tp['warm_sims_per_second'] or float('nan'):.1f} after the compiles)"
    )
    print(
        f"   naive pm.sample refit per simulation:        {naive:7.2f} s per fit, measured on "
        f"{NAIVE_SIMS}; x {SIMS} = {naive * SIMS / 60:.1f} min (extrapolated)"
    )
    print(f"   ratio naive / sbc:                          {naive * SIMS / seconds:7.1f}x")
    peer_report()
    one, two = warm_rate(1), warm_rate(2)
    print(f"\n2. after the compile, {SCALING_SIMS} simulations")
    print(f"   1 worker:  {one:6.1f} sims/s")
    print(f"   2 workers: {two:6.1f} sims/s   scaling {two / one:.2f}x (ideal 2x on 2 cores)")
    print("\n3. exact side (no MCMC), one process")
    for name, method, rate in exact_rates():
        print(f"   {name:24s} {method:9s} {rate:9.0f} sims/s")
    print(
        "\n4. power at 300 simulations, alpha 1e-4 (Holm over the MCMC and exact tests), "
        "2000 replications with exact posteriors"
    )
    for label, (ecdf, combined) in power().items():
        print(f"   {label:12s} ECDF test alone {ecdf:.3f}   ECDF + dispersion {combined:.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--simuk":
        simuk_child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
