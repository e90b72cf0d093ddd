"""Null calibration of the verdict for every sampler of ``--method`` (issue 18).

For each sampler of the catalogue (:mod:`compare.core.methods`: nutpie, pymc,
numpyro, blackjax, smc) and each topic that declares it
(``Calibration.samplers``: two conjugate topics and one structured one),
``--replications`` runs of the real method on fresh prior-predictive data sets
and fresh seeds (``compare.studies.calibration.mcmc_null``, the topics' own
``Topic.calibration`` fixtures). Under the null every alarm is false, so the
share of runs the agreement test flags is the realised false-alarm rate; it
is printed against alpha with its exact (Clopper-Pearson) 95% interval, per
topic and pooled per sampler, with the spread of the z-scores, the share of
verdicts that were inconclusive (the convergence gate) and the seconds a run.

Settings: 4 chains x 1000 draws after 500 warm-up (:data:`SETTINGS`) and the
topics' extra comparisons off, for every sampler alike. The z-scores divide
by ESS-based Monte Carlo standard errors, so the test is calibrated at any
run length the gate admits (ESS > 400); half-length runs halve the cost of a
study whose slowest samplers (PyMC's Python NUTS, JAX's per-run compile)
take 5-11 s a run.

Runs as Dask tasks of CHUNK replications: a ``LocalCluster`` of ``--workers``
processes (default: the usable cores) or ``--scheduler tcp://HOST:PORT``.
Replication ``r`` has the same data and seed however the study is split.
``make study`` runs it; docs/audit.md (its null calibration section) and the README's audit
table quote it; the figures go to ``docs/sampler_calibration.json``
(``--json``), from which ``make audit`` writes the README's row.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import argparse
import dataclasses
import json
import time

import numpy as np
from scipy import stats

from compare.core.cluster import connect
from compare.core.methods import METHODS, SAMPLER
from compare.studies.calibration import STUDY_SETTINGS, NullStudy, mcmc_null, null_fixtures
from compare.topics import all_topics, get_topic

SETTINGS = dataclasses.replace(STUDY_SETTINGS, draws=1000, tune=500, extras=False)
CHUNK = 10
ALPHAS = (0.05, 0.01)


def _part(method: str, name: str, seed: int, first: int, count: int) -> tuple[NullStudy, float]:
    """Replications first..first+count-1 of one (sampler, topic), on a Dask worker."""
    hyper, n = null_fixtures()[name]
    start = time.perf_counter()
    study = mcmc_null(
        get_topic(name),
        replications=count,
        n_obs=n,
        hyper=hyper,
        seed=seed,
        first=first,
        settings=dataclasses.replace(SETTINGS, method=method),
    )
    return study, time.perf_counter() - start


def clopper_pearson(alarms: int, runs: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for a rate from ``alarms`` of ``runs``."""
    tail = (1 - level) / 2
    low = stats.beta.ppf(tail, alarms, runs - alarms + 1) if alarms else 0.0
    high = stats.beta.ppf(1 - tail, alarms + 1, runs - alarms) if alarms < runs else 1.0
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replications", type=int, default=100, help="runs per sampler and topic")
    parser.add_argument(
        "--methods", default=",".join(m.name for m in METHODS.values() if m.kind == SAMPLER)
    )
    parser.add_argument(
        "--json",
        default="docs/sampler_calibration.json",
        help="where the figures go (scripts/audit_readme.py reads them); '' for nowhere",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, help="LocalCluster processes")
    where.add_argument("--scheduler", default=None, help="tcp://HOST:PORT of a Dask scheduler")
    args = parser.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    client, cluster = connect(
        workers=args.workers or len(os.sched_getaffinity(0)), scheduler=args.scheduler
    )
    started = time.perf_counter()
    try:
        order = list(null_fixtures())
        topics = [t.name for t in all_topics() if getattr(t.calibration, "samplers", False)]
        parts = {
            (method, name): [
                client.submit(
                    _part,
                    method,
                    name,
                    31_000 + order.index(name),  # the same data sets for every sampler
                    first,
                    min(CHUNK, args.replications - first),
                    pure=False,
                )
                for first in range(0, args.replications, CHUNK)
            ]
            for method in methods
            for name in topics
        }
        figures = report(parts, args.replications)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    wall = time.perf_counter() - started
    print(f"\n{len(parts) * args.replications} runs in {wall:.0f} s wall")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"settings": dataclasses.asdict(SETTINGS), "wall_seconds": wall, **figures},
                fh,
                indent=1,
            )


def report(parts: dict, replications: int) -> dict:
    """Print the per-topic lines as they finish and the pooled line per sampler."""
    print(
        f"null calibration per sampler: {replications} runs per topic, "
        f"{SETTINGS.chains} chains x {SETTINGS.draws} draws after {SETTINGS.tune} warm-up"
    )
    print(
        f"{'method':9s} {'topic':22s} {'tests':>5s} {'FAR@0.05':>9s} {'FAR@0.01':>9s} "
        f"{'var(z)':>11s} {'inconcl.':>8s} {'disagree':>8s} {'s/run':>6s}"
    )
    rows, pooled = [], {}
    for (method, name), futures in parts.items():
        done = [f.result() for f in futures]
        study = NullStudy.concat([s for s, _ in done])
        seconds = sum(t for _, t in done) / replications
        var = study.z.var(axis=0)
        rates = {a: study.false_alarm_rate(a) for a in ALPHAS}
        inconclusive = float(np.mean([v == "inconclusive" for v in study.verdicts]))
        disagree = float(np.mean([v == "disagree" for v in study.verdicts]))
        print(
            f"{method:9s} {name:22s} {len(study.names):5d} {rates[0.05]:9.3f} {rates[0.01]:9.3f} "
            f"{var.min():5.2f}-{var.max():<5.2f} {inconclusive:8.2f} {disagree:8.2f} {seconds:6.2f}",
            flush=True,
        )
        rows.append(
            {
                "method": method,
                "topic": name,
                "runs": replications,
                "tests": len(study.names),
                "far": {str(a): r for a, r in rates.items()},
                "var_z": [float(var.min()), float(var.max())],
                "inconclusive": inconclusive,
                "disagree": disagree,
                "seconds_per_run": seconds,
            }
        )
        pooled.setdefault(method, []).append((rates[0.05], replications))
    print("\npooled per sampler, alpha = 0.05 (exact 95% interval)")
    summary = {}
    for method, items in pooled.items():
        runs = sum(n for _, n in items)
        alarms = round(sum(r * n for r, n in items))
        low, high = clopper_pearson(alarms, runs)
        summary[method] = {
            "runs": runs,
            "alarms": alarms,
            "rate": alarms / runs,
            "ci95": [low, high],
        }
        print(f"{method:9s} {alarms:3d}/{runs} = {alarms / runs:.3f}  [{low:.3f}, {high:.3f}]")
    return {"rows": rows, "pooled": summary}


if __name__ == "__main__":
    main()
