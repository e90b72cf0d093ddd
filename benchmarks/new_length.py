"""`make bench`: a topic's model for a new length (categories, features, components).

compare/accel/compiled_cache.py reads the flat position's layout from the
model's dimension lengths, so the machine code compiled for one structure
serves another whose shapes follow the same dims. Measured side by side, for
each topic whose builtin data sets have two structures (asked of the topic:
``structure`` of each builtin), in a new process with empty PyTensor, numba
and bayes-compare caches:

1. our compile of the first structure's model (cold, not compared), then
2. either ours for the second structure (loaded from the cache when its graph
   is the same), or, in another such process, the reference:
   ``nutpie.compile_pymc_model`` for the second structure, what nutpie
   compiles for a new shape. Each side starts from the same warm state
   (PyTensor's and numba's per-node caches after step 1); in one process the
   side timed second would find the other's per-node functions compiled.

Then the same for two topics whose models are one graph (found by asking
each topic's model for its ``compiled_cache.model_key``, on its first builtin
data set; the Gaussian classifier's model is the mixture's complete-data one):
the second topic's model after a compile of the first's.

``BENCH_TOPICS=a,b`` limits the topics (default: every topic with two
structures, about 12 minutes on 2 cores).
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


def first_model(topic):
    """The topic's model for its first builtin data set."""
    ds = topic.builtin[0]
    x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    return topic.build_model(**topic.structure(x, hyper))


def child(name: str, side: str) -> None:
    """Compile the first structure, then time ``side``'s compile of the second; one JSON line.

    ``name`` is a topic (its two structures) or ``a+b``: topic a's first model, then
    topic b's."""
    import time

    import nutpie

    from compare.accel import compiled_cache
    from compare.topics import get_topic

    if "+" in name:
        one, other = (get_topic(n) for n in name.split("+"))
        first, second = one.builtin[0], other.builtin[0]
        compiled_cache.compile_pymc_model(first_model(one))
        model = first_model(other)
    else:
        topic = get_topic(name)
        (first, a), (second, b) = structures(topic)
        compiled_cache.compile_pymc_model(topic.build_model(**a))
        model = topic.build_model(**b)
    start = time.perf_counter()
    cached = False
    if side == "ours":
        _, cached = compiled_cache.compile_pymc_model(model)
    else:
        nutpie.compile_pymc_model(model)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {"first": first.name, "second": second.name, "loaded": cached, "seconds": seconds}
        )
    )


def _side(name: str, side: str) -> dict | None:
    """``child(name, side)`` in a new process with empty caches; its JSON line, or None."""
    from compare.accel import compiled_cache

    with tempfile.TemporaryDirectory(prefix="bench-new-length-") as cache:
        env = compiled_cache.environment_with_caches_in(Path(cache))
        env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
        done = subprocess.run(
            [sys.executable, __file__, "--child", name, side],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        print(f"   {name:<22} {side} failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def shared_pairs(topics) -> list[str]:
    """``a+b`` for each later topic whose first model has an earlier one's key."""
    from compare.accel import compiled_cache

    first_of: dict[str, str] = {}
    pairs = []
    for topic in topics:
        key = compiled_cache.model_key(first_model(topic))
        if key is None:
            continue
        if key in first_of:
            pairs.append(f"{first_of[key]}+{topic.name}")
        else:
            first_of[key] = topic.name
    return pairs


def _row(name: str) -> None:
    ours, reference = _side(name, "ours"), _side(name, "nutpie")
    if ours is None or reference is None:
        return
    pair = f"{ours['first']} -> {ours['second']}"
    how = "loaded" if ours["loaded"] else "compiled: another graph"
    print(
        f"   {name:<22} {pair:<28} {ours['seconds']:9.2f} {reference['seconds']:10.2f} "
        f"{ours['seconds'] / reference['seconds']:6.3f}x  ({how})"
    )


def main() -> int:
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
        _row(name)
    print("a topic's model after a compile of another topic's that is the same graph")
    for name in shared_pairs(topics):
        _row(name)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        sys.exit(0)
    sys.exit(main())
