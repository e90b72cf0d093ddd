"""`make bench`: a model's cold compile, with numba emitting only the machine code that runs.

compare/core/_numba_lazy_code.py stops numba from emitting machine code for
the functions that only their callers run (PyTensor's per-node functions,
numba's overloads). Measured side by side in one run, each side in a new
process with empty PyTensor, numba and bayes-compare caches: the same
topics' models compiled with nutpie (``compiled_cache.compile_pymc_model``),

- eager: numba as released (``BAYES_COMPARE_EAGER_NUMBA=1``), the reference;
- lazy: with the patch, what every command runs;

then each side again in a new process that loads the compiled models from
the cache it filled. Printed per topic: the cold compile times and their
ratio (lazy / eager), and whether the draws of one seed (2 chains x 200
draws) are equal bit for bit between the cold compile and the load. The
eager side's loads can differ: the engine resolves a caller's linked copy
of a callee to the callee's own machine code only where that was emitted.

``BENCH_TOPICS=a,b`` limits the topics (default: every topic, about 8
minutes on 2 cores).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(names: list[str]) -> None:
    """Compile each topic's model on its builtin data; print one JSON line per topic."""
    import hashlib
    import time

    import numpy as np

    from compare.core import compiled_cache
    from compare.topics import get_topic

    for name in names:
        topic = get_topic(name)
        data = topic.builtin[0]
        x, hyper = topic.prepare(data.load(), topic.hyper(dataset=data))
        model = topic.build_model(**topic.structure(x, hyper))
        start = time.perf_counter()
        compiled, cached = compiled_cache.compile_pymc_model(model)
        seconds = time.perf_counter() - start
        import nutpie

        trace = nutpie.sample(compiled, draws=200, tune=200, chains=2, seed=1, progress_bar=False)
        posterior = trace.posterior if hasattr(trace, "posterior") else trace["posterior"]
        digest = hashlib.sha256()
        for v in sorted(posterior.data_vars):
            digest.update(np.asarray(posterior[v]).tobytes())
        print(
            json.dumps(
                {"topic": name, "seconds": seconds, "loaded": cached, "draws": digest.hexdigest()}
            ),
            flush=True,
        )


def side(names: list[str], eager: bool, cache: str) -> list[dict]:
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    env = {
        **os.environ,
        "PYTENSOR_FLAGS": (f"{flags}," if flags else "")
        + f"base_compiledir={cache}/pytensor,compiledir={cache}/pytensor/compiledir",
        "NUMBA_CACHE_DIR": f"{cache}/numba",
        "BAYES_COMPARE_CACHE_DIR": f"{cache}/bayes-compare",
    }
    env.pop("BAYES_COMPARE_EAGER_NUMBA", None)
    if eager:
        env["BAYES_COMPARE_EAGER_NUMBA"] = "1"
    done = subprocess.run(
        [sys.executable, __file__, "--child", ",".join(names)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the {'eager' if eager else 'lazy'} side failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> int:
    from compare.topics import all_topics

    chosen = os.environ.get("BENCH_TOPICS")
    # Topics with a ``step`` are sampled by PyMC's steps, not compiled by nutpie.
    names = chosen.split(",") if chosen else [t.name for t in all_topics() if t.step is None]
    print("cold nutpie compile per model, new process, empty caches (lazy = what we run)")
    print(
        f"   {'topic':<24} {'eager (s)':>9} {'lazy (s)':>9} {'lazy/eager':>10}   same draws loaded?"
    )
    results = {}
    for eager in (True, False):
        with tempfile.TemporaryDirectory(prefix="bench-compile-") as cache:
            cold = side(names, eager, cache)
            loaded = side(names, eager, cache)
        results[eager] = (cold, loaded)
    total = {True: 0.0, False: 0.0}
    for i, name in enumerate(names):
        row = {}
        for eager in (True, False):
            cold, loaded = results[eager]
            total[eager] += cold[i]["seconds"]
            same = cold[i]["draws"] == loaded[i]["draws"] and loaded[i]["loaded"]
            row[eager] = (cold[i]["seconds"], "yes" if same else "NO")
        print(
            f"   {name:<24} {row[True][0]:9.1f} {row[False][0]:9.1f} "
            f"{row[False][0] / row[True][0]:9.2f}x   eager {row[True][1]:>3}, lazy {row[False][1]}"
        )
    print(
        f"   {'all':<24} {total[True]:9.1f} {total[False]:9.1f} {total[False] / total[True]:9.2f}x"
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2].split(","))
        sys.exit(0)
    sys.exit(main())
