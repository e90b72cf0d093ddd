"""`make bench`: every sampler's speed, and every approximation's, as ratios to nutpie.

Issue 18's speed table, measured side by side in one process, one topic at a
time (the six conjugate topics, linear regression on builtin:diabetes and
the Gaussian process on its builtin data), every method on the same data
and seed, default settings, no extras:

- samplers: the smallest bulk ESS divided by the sampling time (warm-up
  included, compile not), and its ratio to nutpie's (> 1: faster than nutpie);
- approximations: the time to an answer (fit and draws, compile included)
  as a ratio to nutpie's time to a verdict (compile included; < 1: faster),
  with their largest |mean error| in posterior sds beside it, since a fast
  wrong answer is not a bargain.

The compile time of each method is shown on its own: the first run of a
model in a process pays it (nutpie's comes from its disk cache when warm).
BENCH_AUDIT_TOPICS=a,b limits the topics.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import time

CASES = [
    ("normal-known-variance", None),
    ("beta-binomial", None),
    ("gamma-poisson", None),
    ("normal-inverse-gamma", None),
    ("pareto-uniform", None),
    ("dirichlet-categorical", None),
    ("linear-regression", "builtin:diabetes"),
    ("gaussian-process", None),
]


def main() -> None:
    import compare
    from compare.core.methods import APPROXIMATION, METHODS

    wanted = [t for t in os.environ.get("BENCH_AUDIT_TOPICS", "").split(",") if t]
    cases = [c for c in CASES if not wanted or c[0] in wanted]
    print("\nsamplers: min bulk ESS per second of sampling, ratio to nutpie (> 1 is faster)")
    print(
        f"   {'topic':22s}"
        + "".join(f"{m:>16s}" for m in METHODS if METHODS[m].kind != APPROXIMATION)
    )
    approx_lines = []
    for topic, data in cases:
        per: dict[str, dict] = {}
        for name in METHODS:
            start = time.perf_counter()
            try:
                result = compare.run(topic, data=data, settings={"method": name, "extras": False})
            except ValueError as err:  # not applicable here: say so
                per[name] = {"error": str(err)[:60]}
                continue
            doc = result.to_dict()
            ess = min(e for e in doc["mcmc"]["ess_bulk"] if e is not None)
            per[name] = {
                "wall": time.perf_counter() - start,
                "sample": doc["timings"]["sample"],
                "compile": doc["timings"]["compile"],
                "ess_per_s": ess / doc["timings"]["sample"],
                "verdict": doc["verdict"],
                "error_sd": (doc.get("approximation") or {}).get("max_abs_mean_error_sd"),
            }
        base = per.get("nutpie", {})
        cells = []
        for name, method in METHODS.items():
            if method.kind == APPROXIMATION:
                continue
            got = per[name]
            if "error" in got or "ess_per_s" not in base:
                cells.append(f"{'n/a':>16s}")
            else:
                cells.append(
                    f"{got['ess_per_s']:8.0f} x{got['ess_per_s'] / base['ess_per_s']:5.2f} "
                )
        print(f"   {topic:22s}" + "".join(cells), flush=True)
        for name, method in METHODS.items():
            if method.kind != APPROXIMATION:
                continue
            got = per[name]
            if "error" in got or "wall" not in base:
                approx_lines.append(f"   {topic:22s} {name:14s} n/a")
                continue
            approx_lines.append(
                f"   {topic:22s} {name:14s} {got['wall']:6.1f} s  x{got['wall'] / base['wall']:5.2f}"
                f"   max |mean error| {got['error_sd']:.3f} sd   {got['verdict']}"
            )
    print(
        "\napproximations: time to an answer (compile included) and its ratio to nutpie's "
        "time to a verdict (< 1 is faster)"
    )
    print("\n".join(approx_lines))


if __name__ == "__main__":
    main()
