"""`make bench`: runs on a Dask cluster, 1 worker against 2 (issue 17, target 6).

The units of ``run --all`` (and of ``report`` and ``make study``) are
independent, so they spread over a cluster's workers: ``--scheduler
tcp://HOST:PORT`` sends them to a user's cluster, the same code path as here.
This runs one batch of topics (BATCH: the six conjugate ones, each on its
builtin data, ``--force``) through that path (``_run_all`` with a cluster) on
a new ``LocalCluster`` of 1 worker, then of 2, side by side in one run, and
prints runs per minute and the ratio. A third line runs the same batch a
second time on the 2-worker cluster, whose workers now hold the compiled
models: what the local worker (``bayes-compare worker start``) saves a
command that comes after.

Each cluster gets a fresh compiled-model cache (a temporary folder), so both
compile every model they run; PyTensor's and numba's own caches are warm for
the second (the first cluster filled them), which favours 2 workers a little.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import io
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

BATCH = [
    "normal-known-variance",
    "beta-binomial",
    "gamma-poisson",
    "normal-inverse-gamma",
    "pareto-uniform",
    "dirichlet-categorical",
]


def _batch(cluster, out: Path) -> float:
    from compare.core.defaults import DEFAULT
    from compare.interfaces import cli_run as cli

    start = time.perf_counter()
    verdicts = cli._run_all(
        settings=DEFAULT,
        base=out,
        console=Console(file=io.StringIO()),
        json_lines=False,
        force=True,
        workers=1,
        topic_files=None,
        cluster=cluster,
        names=BATCH,
    )
    seconds = time.perf_counter() - start
    if len(verdicts) != len(BATCH):
        raise RuntimeError(f"{len(verdicts)} verdicts for {len(BATCH)} runs")
    return seconds


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        from compare.core.cluster import connect
        from compare.interfaces.cli_run import _Cluster

        rows = []
        for workers in (1, 2):
            # The workers inherit it: a fresh compiled-model cache for each cluster.
            os.environ["BAYES_COMPARE_CACHE_DIR"] = str(Path(tmp) / f"cache{workers}")
            client, local = connect(workers=workers, scheduler=None)
            cluster = _Cluster(
                client=client, name=f"{workers} workers", keep_models=True, cluster=local
            )
            try:
                first = _batch(cluster, Path(tmp) / f"runs{workers}")
                rows.append((f"LocalCluster, {workers} worker{'s' * (workers > 1)}", first))
                if workers == 2:
                    again = _batch(cluster, Path(tmp) / "again")
                    rows.append(("same 2 workers again (models warm)", again))
            finally:
                cluster.close()
    one = rows[0][1]
    print(f"\ncluster throughput: {len(BATCH)} topics ({', '.join(BATCH)}), run --all's units")
    for label, seconds in rows:
        print(
            f"   {label:38s} {seconds:7.1f} s  {60 * len(BATCH) / seconds:6.1f} runs/min  "
            f"ratio to 1 worker {seconds / one:5.2f}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
