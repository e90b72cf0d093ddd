"""`make bench`: how the compiled log density reads its data, ours against nutpie's.

The machine code of every model gets its data (the ``pm.Data`` values, the
hoisted values) from nutpie's ``user_data`` record. nutpie's
``make_extraction_fn`` reads each array with an overload made for it alone,
chosen in a ``literal_unroll`` loop; ``compiled_cache._make_extraction_fn``
writes one line per array calling a reader per kind of array (see there).
Measured side by side in one run, each side in a new process with empty
PyTensor, numba and bayes-compare caches: every nutpie topic's model on its
first builtin data set compiled (``benchmarks/compile.py``'s child, without
its sampling), nutpie's way (``BAYES_COMPARE_NUTPIE_EXTRACTION=1``, the
reference) and ours. Printed per topic: the compile times, their ratio, and
whether the two sides draw the same (2 chains x 200 draws of one seed, bit
for bit).

``BENCH_TOPICS=a,b`` limits the topics (default: every topic nutpie samples,
about 4 minutes on 2 cores).
"""

from __future__ import annotations

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import os
import sys
import tempfile

from compile import ROOT, run_child  # one BLAS thread: set there before numpy

from compare.accel import compiled_cache


def side(names: list[str], nutpie: bool) -> list[dict]:
    """Compile ``names`` in a new process with empty caches; nutpie's extraction or ours."""
    with tempfile.TemporaryDirectory(prefix="bench-extraction-") as cache:
        env = compiled_cache.environment_with_caches_in(cache)
        env["BENCH_SAMPLE"] = "0"
        env.pop(compiled_cache.NUTPIE_EXTRACTION_ENV, None)
        if nutpie:
            env[compiled_cache.NUTPIE_EXTRACTION_ENV] = "1"
        what = "nutpie's extraction" if nutpie else "ours"
        return run_child(str(ROOT / "benchmarks" / "compile.py"), [",".join(names)], env, what)


def main() -> int:
    from compare.topics import all_topics

    chosen = os.environ.get("BENCH_TOPICS")
    names = chosen.split(",") if chosen else [t.name for t in all_topics() if t.step is None]
    print("the compiled log density's data reads: a cold compile per model in a new process")
    print(f"   {'topic':<22} {'nutpie (s)':>10} {'ours (s)':>9} {'ratio':>6}   same draws?")
    theirs, ours = side(names, nutpie=True), side(names, nutpie=False)
    total = [0.0, 0.0]
    for name, a, b in zip(names, theirs, ours, strict=True):
        total[0] += a["seconds"]
        total[1] += b["seconds"]
        same = "yes" if a["draws"] == b["draws"] else "NO"
        print(
            f"   {name:<22} {a['seconds']:10.1f} {b['seconds']:9.1f} "
            f"{b['seconds'] / a['seconds']:5.2f}x   {same}"
        )
    print(f"   {'all':<22} {total[0]:10.1f} {total[1]:9.1f} {total[1] / total[0]:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
