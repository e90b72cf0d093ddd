"""`make bench`: a model's cold compile with its variables computed after sampling, against nutpie's expand.

nutpie compiles two functions per model: the log density with its gradient,
and an "expand" function that turns each draw's flat position into the
model's variables. compare/accel/compiled_cache.py now gives nutpie a copy of
the position instead and computes the variables for all the draws at once
with NumPy after sampling (``Expansion``). Measured side by side in one run,
alternating, each side in a new process with empty PyTensor, numba and
bayes-compare caches: each topic's model (first builtin data set) compiled
and sampled (2 chains x 200 draws, one seed),

- numba expand: ``BAYES_COMPARE_NUMBA_EXPAND=1``, nutpie's way, the reference;
- NumPy: what every command runs.

Printed per topic: the compile time of each side and their ratio, and
whether both sides drew the same posterior (same variables, dims and
coordinates; values equal to 1e-12 relative: the sampler's path is the
same machine code, only the last bits of the transforms may differ).
``BENCH_TOPICS=a,b`` picks the topics (default: five, from the smallest
model to the largest; about 6 minutes on 2 cores).
"""

from __future__ import annotations

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TOPICS = os.environ.get(
    "BENCH_TOPICS",
    "beta-binomial,dirichlet-categorical,gaussian-process,naive-bayes,gaussian-mixture",
).split(",")


def child(names: list[str], folder: str) -> None:
    """Compile and sample each topic's model; save its posterior; print the compile times."""
    import warnings

    warnings.simplefilter("ignore")
    from compile import compile_first_model  # benchmarks/compile.py, this script's folder

    from compare.accel import compiled_cache

    for name in names:
        compiled, _, seconds = compile_first_model(name)
        tree = compiled_cache.sample(
            compiled, draws=200, tune=200, chains=2, seed=1, progress_bar=False
        )
        posterior = tree.posterior
        arrays = {v: posterior[v].values for v in posterior.data_vars}
        layout = {v: [list(posterior[v].dims), posterior[v].shape] for v in posterior.data_vars}
        np.savez(Path(folder) / f"{name}.npz", **arrays)
        print(json.dumps({"topic": name, "seconds": seconds, "layout": layout}), flush=True)


def _side(numba_expand: bool, folder: str) -> dict[str, dict]:
    from compile import run_child  # benchmarks/compile.py, this script's folder

    from compare.accel import compiled_cache

    with tempfile.TemporaryDirectory(prefix="bench-expand-") as cache:
        env = compiled_cache.environment_with_caches_in(cache)
        env.pop(compiled_cache.NUMBA_EXPAND_ENV, None)
        if numba_expand:
            env[compiled_cache.NUMBA_EXPAND_ENV] = "1"
        what = "the numba-expand side" if numba_expand else "the NumPy side"
        rows = run_child(__file__, [",".join(TOPICS), folder], env, what)
    return {row["topic"]: row for row in rows}


def _same(name: str, a: str, b: str, layouts: tuple[dict, dict]) -> bool:
    if layouts[0] != layouts[1]:
        return False
    with np.load(Path(a) / f"{name}.npz") as x, np.load(Path(b) / f"{name}.npz") as y:
        return set(x) == set(y) and all(np.allclose(x[v], y[v], rtol=1e-12, atol=1e-300) for v in x)


def main() -> int:
    print("nutpie compile per model in a new process, empty caches; NumPy = what we run")
    print(f"   {'topic':<22} {'numba expand':>12} {'NumPy':>7} {'ratio':>6}   same posterior?")
    with tempfile.TemporaryDirectory() as ref, tempfile.TemporaryDirectory() as ours:
        reference = _side(True, ref)
        numpy_side = _side(False, ours)
        totals = [0.0, 0.0]
        for name in TOPICS:
            a, b = reference[name], numpy_side[name]
            totals[0] += a["seconds"]
            totals[1] += b["seconds"]
            same = _same(name, ref, ours, (a["layout"], b["layout"]))
            print(
                f"   {name:<22} {a['seconds']:12.1f} {b['seconds']:7.1f} "
                f"{b['seconds'] / a['seconds']:5.2f}x   {'yes' if same else 'NO'}"
            )
    print(f"   {'all':<22} {totals[0]:12.1f} {totals[1]:7.1f} {totals[1] / totals[0]:5.2f}x")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2].split(","), sys.argv[3])
        sys.exit(0)
    sys.exit(main())
