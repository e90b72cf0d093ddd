"""`make bench`: a topic's model for a new length (categories, features, components).

compare/core/compiled_cache.py reads the flat position's layout from the
model's dimension lengths, so the machine code compiled for one structure
serves another whose shapes follow the same dims. Measured side by side, for
each topic whose builtin data sets have two structures (asked of the topic:
``structure`` of each builtin), in a new process with empty PyTensor, numba
and bayes-compare caches:

1. our compile of the first structure's model (cold, not compared);
2. ours for the second structure: loaded from the cache when its graph is the same;
3. the reference: ``nutpie.compile_pymc_model`` for the second structure, what
   nutpie compiles for a new shape, in the same process (PyTensor's and
   numba's per-node caches as warm as for 2).

``BENCH_TOPICS=a,b`` limits the topics (default: every topic with two
structures, about 6 minutes on 2 cores).
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


def structures(topic) -> list[tuple[object, dict]]:
    """The first two builtin data sets of distinct structure: (data set, structure) each."""
    seen: list[tuple[object, dict]] = []
    for ds in topic.builtin:
        x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
        shape = topic.structure(x, hyper)
        if all(shape != s for _, s in seen):
            seen.append((ds, shape))
        if len(seen) == 2:
            break
    return seen


def child(name: str) -> None:
    """Time the three compiles of one topic; print one JSON line."""
    import time

    import nutpie

    from compare.core import compiled_cache
    from compare.topics import get_topic

    topic = get_topic(name)
    (first, a), (second, b) = structures(topic)
    compiled_cache.compile_pymc_model(topic.build_model(**a))
    start = time.perf_counter()
    _, cached = compiled_cache.compile_pymc_model(topic.build_model(**b))
    ours = time.perf_counter() - start
    start = time.perf_counter()
    nutpie.compile_pymc_model(topic.build_model(**b))
    reference = time.perf_counter() - start
    print(
        json.dumps(
            {
                "first": first.name,
                "second": second.name,
                "loaded": cached,
                "ours": ours,
                "nutpie": reference,
            }
        )
    )


def main() -> int:
    from compare.core import compiled_cache
    from compare.topics import all_topics

    chosen = os.environ.get("BENCH_TOPICS")
    topics = [t for t in all_topics() if t.step is None]
    if chosen:
        topics = [t for t in topics if t.name in chosen.split(",")]
    names = [t.name for t in topics if len(structures(t)) == 2]
    print("a topic's model for its second builtin structure, after a compile of its first,")
    print("in a new process with empty caches: ours (loaded when the graph is the same)")
    print("against nutpie.compile_pymc_model of the same model")
    print(f"   {'topic':<22} {'data sets':<28} {'ours (s)':>9} {'nutpie (s)':>10} {'ratio':>7}")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="bench-new-length-") as cache:
            env = compiled_cache.environment_with_caches_in(Path(cache))
            env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
            done = subprocess.run(
                [sys.executable, __file__, "--child", name],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
        if done.returncode != 0:
            print(f"   {name:<22} failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        pair = f"{row['first']} -> {row['second']}"
        how = "loaded" if row["loaded"] else "compiled"
        print(
            f"   {name:<22} {pair:<28} {row['ours']:9.2f} {row['nutpie']:10.2f} "
            f"{row['ours'] / row['nutpie']:6.3f}x  ({how})"
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
