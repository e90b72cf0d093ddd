"""The figures behind docs/studies.md, "Is the verdict right?".

`make study` (about 25 minutes on 2 cores) prints:

1. with exact iid draws standing in for MCMC (1000 replications per
   posterior): the realised family-wise false-alarm rate at alpha = 0.01
   and 0.05;
2. with real PyMC runs on fresh prior-predictive data and seeds
   (REPLICATIONS per topic): the realised false-alarm rate at several
   alphas, the spread of the z-scores, the worst R-hat;
3. power against planted bugs at default settings, for the whole verdict
   and for the agreement test alone (the MAP check catches some bugs that
   the statistical test, at this sample size, cannot).

The fixtures are the topics' own (``Topic.calibration``; the power study's
is ``Calibration.power``) and the bugs the topics' ``Topic.planted``.

Sections 2 and 3 run as Dask tasks of CHUNK replications each: on a new
``LocalCluster`` of ``--workers`` processes (default: the usable cores), or
on a running cluster with ``--scheduler tcp://HOST:PORT`` (``make study
SCHEDULER=tcp://HOST:PORT``). Replication ``r`` of a fixture has the same
data and seed however the study is split (``mcmc_null(first=...)``), so the
figures do not depend on where it ran.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import argparse
import time

import numpy as np

import analytic.beta_binomial as bb
import analytic.dirichlet_categorical as dc
import analytic.gamma_poisson as gp
import analytic.normal_inverse_gamma as nig
import analytic.normal_known_variance as nkv
import analytic.pareto_uniform as pu
from compare.core.cluster import connect
from compare.studies.calibration import (
    NullStudy,
    detection_rate,
    iid_null,
    mcmc_null,
    null_fixtures,
    power_fixtures,
)
from compare.studies.planted import planted
from compare.topics import get_topic

IID_POSTERIORS = {
    "normal": nkv.NormalPosterior(loc=0.3, sd=0.7),
    "beta": bb.BetaPosterior(3.5, 12.0),
    "gamma": gp.GammaPosterior(4.2, 1.7),
    "nig": nig.NIGPosterior(mu=0.4, kappa=8.0, alpha=9.5, beta=6.0),
    "pareto": pu.ParetoPosterior(scale=2.0, shape=12.0),
    "dirichlet": dc.DirichletPosterior(np.array([3.0, 5.5, 9.0]), ("a", "b", "c")),
}
BUGS = [
    ("prior_var", 1.05),
    ("prior_var", 1.1),
    ("prior_var", 1.5),
    ("noise_sd", 1.02),
    ("noise_sd", 1.05),
    ("noise_sd", 1.2),
    ("sd_for_var", 1.0),
]


#: Replications per Dask task: ~10 tasks per topic at the default 200.
CHUNK = 20


def _part(
    name: str,
    hyper: dict,
    n: int,
    seed: int,
    first: int,
    count: int,
    bug: tuple[str, float] | None = None,
) -> tuple[NullStudy, float]:
    """Replications first..first+count-1 of one fixture, on a Dask worker; (study, seconds)."""
    start = time.perf_counter()
    study = mcmc_null(
        get_topic(name),
        replications=count,
        n_obs=n,
        hyper=hyper,
        seed=seed,
        first=first,
        model_topic=None if bug is None else planted(name, *bug),
    )
    return study, time.perf_counter() - start


def _submit(client, name, hyper, n, seed, replications, bug=None) -> list:
    return [
        client.submit(
            _part, name, hyper, n, seed, first, min(CHUNK, replications - first), bug, pure=False
        )
        for first in range(0, replications, CHUNK)
    ]


def _joined(futures) -> tuple[NullStudy, float]:
    parts = [f.result() for f in futures]
    return NullStudy.concat([p for p, _ in parts]), sum(t for _, t in parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--replications", type=int, default=200, help="MCMC null runs per topic (default 200)"
    )
    parser.add_argument("--power-replications", type=int, default=100)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, help="LocalCluster processes")
    where.add_argument("--scheduler", default=None, help="tcp://HOST:PORT of a Dask scheduler")
    args = parser.parse_args()
    client, cluster = connect(
        workers=args.workers or len(os.sched_getaffinity(0)), scheduler=args.scheduler
    )
    try:
        run_study(args, client)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_study(args: argparse.Namespace, client) -> None:
    started = time.perf_counter()
    workers = len(client.scheduler_info().get("workers", {}))
    fixtures = null_fixtures()  # every topic's Topic.calibration, in the catalogue's order
    # Every task of sections 2 and 3 is queued first (the cluster works while section 1
    # runs here); the lines print in order as they finish.
    null_parts = {
        name: _submit(client, name, hyper, n, 1000 + i, args.replications)
        for i, (name, (hyper, n)) in enumerate(fixtures.items())
    }
    power_parts = {
        (name, bug, factor): _submit(
            client, name, hyper, n, 5000, args.power_replications, (bug, factor)
        )
        for name, (hyper, n) in power_fixtures().items()  # Calibration.power
        for bug, factor in BUGS
    }

    print("1. iid draws in place of MCMC (4 chains x 1000 draws, 1000 replications)")
    print(f"   {'posterior':10s} {'tests':>5s} {'FWER@0.01':>10s} {'FWER@0.05':>10s}")
    rng = np.random.default_rng(20261129)
    for name, post in IID_POSTERIORS.items():
        s = iid_null(post, replications=1000, chains=4, draws=1000, rng=rng, n_reference=20_000)
        print(
            f"   {name:10s} {len(s.names):5d} {s.false_alarm_rate(0.01):10.3f} "
            f"{s.false_alarm_rate(0.05):10.3f}"
        )

    print(f"\n2. real PyMC runs under the null ({args.replications} per topic, default settings)")
    print(
        f"   {'topic':24s} {'tests':>5s} {'FAR@0.05':>9s} {'FAR@0.01':>9s} {'FAR@1e-3':>9s} "
        f"{'FAR@1e-4':>9s} {'var(z) range':>14s} {'worst R-hat':>11s} {'s/run':>6s}"
    )
    pooled = {a: [] for a in (0.05, 0.01, 1e-3, 1e-4)}
    for name, futures in null_parts.items():
        s, seconds = _joined(futures)
        per_run = seconds / args.replications
        rates = {a: s.false_alarm_rate(a) for a in pooled}
        for a, r in rates.items():
            pooled[a].append(r)
        var = s.z.var(axis=0)
        print(
            f"   {name:24s} {len(s.names):5d} {rates[0.05]:9.3f} {rates[0.01]:9.3f} "
            f"{rates[1e-3]:9.4f} {rates[1e-4]:9.4f} {var.min():6.2f}-{var.max():<6.2f} "
            f"{s.worst_rhat.max():11.4f} {per_run:6.2f}",
            flush=True,
        )
    total = args.replications * len(fixtures)
    print(
        f"   pooled over {total} runs: "
        + ", ".join(f"FAR@{a:g} = {np.mean(r):.4f}" for a, r in pooled.items())
    )

    print(
        f"\n3. power against planted PyMC bugs ({args.power_replications} fresh data sets "
        "and seeds each, default settings, alpha=1e-4)"
    )
    print(f"   {'topic':24s} {'bug':12s} {'factor':>6s} {'verdict':>8s} {'agreement':>10s}")
    for (name, bug, factor), futures in power_parts.items():
        s, _ = _joined(futures)
        print(
            f"   {name:24s} {bug:12s} {factor:6.2f} {detection_rate(s):8.2f} "
            f"{detection_rate(s, by='agreement'):10.2f}",
            flush=True,
        )
    print(
        f"\nsections 2-3 on {workers} Dask workers"
        + (f" ({args.scheduler})" if args.scheduler else " (a LocalCluster)")
        + f": {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
