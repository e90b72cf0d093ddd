"""`make bench`: a model's cold compile, with numba emitting only the machine code that runs.

compare/accel/numba_lazy_code.py stops numba from emitting machine code for
the functions that only their callers run (PyTensor's per-node functions,
numba's overloads). Measured side by side in one run, each side in a new
process with empty PyTensor, numba and bayes-compare caches: the same
topics' models compiled with nutpie (``compiled_cache.compile_pymc_model``),

- eager: numba as released (``BAYES_COMPARE_EAGER_NUMBA=1``), the reference;
- lazy: with the patch, what every command runs (and with
  compare/accel/numba_lock_events.py and compare/accel/numba_slice_error.py,
  which the same switch turns off: no event broadcast around each call into
  LLVM, no string formatting compiled for the slice-assignment error);

then each side again in a new process that loads the compiled models from
the cache it filled, and samples our default run (4 chains x (1000 + 2000)
draws, one thread) with them. Printed per topic: the cold compile times,
the sampling times and their ratios (lazy / eager), and whether the draws
of one seed (2 chains x 200 draws) are equal bit for bit between the cold
compile and the load. The eager side's loads can differ: the engine
resolves a caller's linked copy of a callee to the callee's own machine
code only where that was emitted.

``BENCH_TOPICS=a,b`` limits the topics (default: every topic nutpie
samples, about 12 minutes on 2 cores); ``BENCH_SAMPLE=0`` skips the
sampling.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = os.environ.get("BENCH_SAMPLE", "1") != "0"


def compile_first_model(name: str) -> tuple[object, bool, float]:
    """Topic ``name``'s model on its first builtin data set, compiled (or loaded):
    (nutpie's compiled model, loaded from the cache?, seconds)."""
    import time

    from compare.accel import compiled_cache
    from compare.topics import get_topic

    topic = get_topic(name)
    data = topic.builtin[0]
    x, hyper = topic.prepare(data.load(), topic.hyper(dataset=data))
    model = topic.build_model(**topic.structure(x, hyper))
    start = time.perf_counter()
    compiled, cached = compiled_cache.compile_pymc_model(model)
    return compiled, cached, time.perf_counter() - start


def child(names: list[str]) -> None:
    """Compile each topic's model on its builtin data; print one JSON line per topic."""
    import hashlib
    import time

    import numpy as np

    from compare.accel import compiled_cache

    for name in names:
        compiled, cached, seconds = compile_first_model(name)
        import nutpie

        trace = compiled_cache.sample(
            compiled, draws=200, tune=200, chains=2, seed=1, progress_bar=False
        )
        posterior = trace.posterior if hasattr(trace, "posterior") else trace["posterior"]
        digest = hashlib.sha256()
        for v in sorted(posterior.data_vars):
            digest.update(np.asarray(posterior[v]).tobytes())
        sampling = None
        if cached and SAMPLE:
            # Our default run length, one thread: what the machine code is worth.
            start = time.perf_counter()
            nutpie.sample(
                compiled, draws=2000, tune=1000, chains=4, cores=1, seed=2, progress_bar=False
            )
            sampling = time.perf_counter() - start
        out = {"topic": name, "seconds": seconds, "loaded": cached, "draws": digest.hexdigest()}
        print(json.dumps({**out, "sampling": sampling}), flush=True)


def side(names: list[str], eager: bool, cache: str) -> list[dict]:
    from compare.accel import compiled_cache

    env = compiled_cache.environment_with_caches_in(cache)
    env.pop("BAYES_COMPARE_EAGER_NUMBA", None)
    env.pop("BAYES_COMPARE_NUTPIE_EXTRACTION", None)
    if eager:
        env["BAYES_COMPARE_EAGER_NUMBA"] = "1"
    return run_child(
        __file__, [",".join(names)], env, "the eager side" if eager else "the lazy side"
    )


def run_child(script: str, args: list[str], env: dict[str, str], what: str) -> list[dict]:
    """``script --child *args`` in a new process with ``env``: the JSON lines it printed."""
    done = subprocess.run(
        [sys.executable, script, "--child", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _sampling(row: dict) -> str:
    eager, lazy = row["eager"][1], row["lazy"][1]
    if eager is None or lazy is None:
        return f"{'-':>12} {'-':>6} {'-':>6}"
    return f"{eager:12.2f} {lazy:6.2f} {lazy / eager:5.2f}x"


def main() -> int:
    from compare.topics import all_topics

    chosen = os.environ.get("BENCH_TOPICS")
    # Topics with a ``step`` are sampled by PyMC's steps, not compiled by nutpie.
    names = chosen.split(",") if chosen else [t.name for t in all_topics() if t.step is None]
    print("nutpie compile per model in a new process, empty caches (lazy = what we run),")
    print("and sampling 4 chains x (1000 + 2000) draws on one thread after the load")
    print(
        f"   {'topic':<22} {'compile eager':>13} {'lazy':>6} {'ratio':>6}"
        f"   {'sample eager':>12} {'lazy':>6} {'ratio':>6}   same draws loaded?"
    )
    results = {}
    for eager in (True, False):
        with tempfile.TemporaryDirectory(prefix="bench-compile-") as cache:
            cold = side(names, eager, cache)
            loaded = side(names, eager, cache)
        results[eager] = (cold, loaded)
    total = {key: 0.0 for key in ("eager", "lazy", "eager sample", "lazy sample")}
    for i, name in enumerate(names):
        row = {}
        for eager, side_name in ((True, "eager"), (False, "lazy")):
            cold, loaded = results[eager]
            same = cold[i]["draws"] == loaded[i]["draws"] and loaded[i]["loaded"]
            row[side_name] = (cold[i]["seconds"], loaded[i]["sampling"], "yes" if same else "NO")
            total[side_name] += cold[i]["seconds"]
            total[f"{side_name} sample"] += loaded[i]["sampling"] or 0.0
        print(
            f"   {name:<22} {row['eager'][0]:13.1f} {row['lazy'][0]:6.1f} "
            f"{row['lazy'][0] / row['eager'][0]:5.2f}x   " + _sampling(row) + "   "
            f"eager {row['eager'][2]:>3}, lazy {row['lazy'][2]}"
        )
    print(
        f"   {'all':<22} {total['eager']:13.1f} {total['lazy']:6.1f} "
        f"{total['lazy'] / total['eager']:5.2f}x   "
        + (
            f"{total['eager sample']:12.1f} {total['lazy sample']:6.1f} "
            f"{total['lazy sample'] / total['eager sample']:5.2f}x"
            if SAMPLE
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2].split(","))
        sys.exit(0)
    sys.exit(main())
