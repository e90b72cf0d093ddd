"""Building the HTML report from saved runs: whole site, and time per figure kind.

Uses the runs under ``reports/runs`` when every registered topic has one
(``make report`` leaves them there); otherwise first runs every topic with
the default settings into a temporary directory (not timed).  Then builds
the site twice from the same runs, side by side: with one process (the
naive reference) and with the default number of worker processes.

Target: the whole site in <= 60 s on 2 cores.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators (compare/accel/)

import contextlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

#: Issue 17: a report of unchanged runs (the whole `make report`) in 20 s.
UNCHANGED_SECONDS = 20.0
TARGET_SECONDS = 60.0


def _runs(base: Path) -> tuple[Path, list[str]]:
    from compare.outputs.document import DRAWS_FILE, RESULT_FILE
    from compare.topics import all_topics

    topics = [t.name for t in all_topics()]
    saved = Path("reports/runs")
    if all(
        (saved / t / RESULT_FILE).is_file() and (saved / t / DRAWS_FILE).is_file() for t in topics
    ):
        print(f"using the saved runs in {saved}")
        return saved, topics
    from compare.core.defaults import DEFAULT
    from compare.core.runner import run
    from compare.outputs.document import save_run
    from compare.topics import get_topic

    runs = base / "runs"
    print(f"no complete set of saved runs in {saved}: running {len(topics)} topics (not timed)")
    for name in topics:
        topic = get_topic(name)
        ds = topic.builtin[0]
        result = run(
            topic,
            data=ds.load(),
            hyper=topic.hyper(dataset=ds),
            settings=DEFAULT,
            source=f"builtin:{ds.name}",
        )
        save_run(result, runs / name)
    return runs, topics


def rank_test(dirs: list[Path]) -> None:
    """The rank figures' multi-chain test, scipy's hypergeometric against ours.

    ``plot_rank`` of every topic's shown parameters, drawn twice side by side
    (alternating, so that drift cancels): with arviz-stats calling
    ``scipy.stats.hypergeom`` and inside ``fast_rank_test``
    (compare/outputs/_hypergeom.py), which the report uses.
    """
    import matplotlib

    matplotlib.use("Agg")
    import arviz_plots as azp
    import matplotlib.pyplot as plt

    from compare.outputs._hypergeom import fast_rank_test
    from compare.outputs.figures import SavedRun

    seconds = {"scipy": 0.0, "ours": 0.0}
    for d in dirs:
        flat = SavedRun(d).flat()
        for side in ("scipy", "ours", "scipy", "ours"):
            with fast_rank_test() if side == "ours" else contextlib.nullcontext():
                t0 = time.perf_counter()
                azp.plot_rank(flat, backend="matplotlib")
                seconds[side] += (time.perf_counter() - t0) / 2
            plt.close("all")
    print(
        f"rank figures of {len(dirs)} topics: {seconds['scipy']:.1f} s with scipy's "
        f"hypergeom, {seconds['ours']:.1f} s with compare.outputs._hypergeom: "
        f"ratio {seconds['ours'] / seconds['scipy']:.2f}x\n"
    )


def main() -> int:
    from compare.outputs.report import build_site, default_workers

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        runs, topics = _runs(base)
        copy = base / "site" / "runs"  # build into a copy: leave reports/ as it was
        shutil.copytree(runs, copy)
        dirs = [copy / t for t in topics]
        rank_test(dirs)
        timings, per_kind = {}, {}
        for workers in (1, default_workers()):
            for d in dirs:
                shutil.rmtree(d / "figures", ignore_errors=True)
            t0 = time.perf_counter()
            site = build_site(dirs, base / "site", workers=workers)
            timings[workers] = time.perf_counter() - t0
            per_kind.setdefault("serial", site.figure_seconds)
            print(
                f"workers={workers}: {len(topics)} topics, "
                f"{sum(len(f) for f in site.figures.values())} figures in "
                f"{timings[workers]:.1f} s; failed figures: {site.failed_figures or 'none'}"
            )
        t0 = time.perf_counter()
        build_site(dirs, base / "site")  # nothing changed: every figure is kept
        unchanged = time.perf_counter() - t0
        serial = timings[1]
        parallel = timings[default_workers()]
        print("\ntime per figure kind, summed over topics (serial build):")
        for kind, seconds in sorted(per_kind["serial"].items(), key=lambda kv: -kv[1]):
            print(f"  {kind:15s} {seconds:6.2f} s  ({seconds / len(topics):.2f} s per topic)")
        print(
            f"\nwhole site: {parallel:.1f} s with {default_workers()} workers, "
            f"{serial:.1f} s with one process: ratio {parallel / serial:.2f}x; "
            f"target {TARGET_SECONDS:.0f} s: {'met' if parallel <= TARGET_SECONDS else 'MISSED'}"
        )
        print(
            f"again, nothing changed (figures kept): {unchanged:.1f} s, "
            f"{unchanged / parallel:.2f}x the full build; "
            f"target {UNCHANGED_SECONDS:.0f} s: {'ok' if unchanged <= UNCHANGED_SECONDS else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
