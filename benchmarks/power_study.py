"""Issue 60, item 3: is "would have caught a shift of X sd" true on real runs?

For two conjugate topics and one structured topic, REPLICATIONS real PyMC runs
on fresh data from each topic's null fixture (default settings); each run's
draws of the first parameter are shifted by exactly the run's own stated
shift and tested again (compare/studies/power.py). Prints the share caught
(stated: 0.9, or more since the statement takes the best single quantity)
with its binomial standard error. ``python benchmarks/power_study.py [REPS]``
(default 200; ``make study`` runs it, about 5 minutes on 2 cores).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators

import sys
import time

from compare.studies.power import planted_shift_rate

TOPICS = ("beta-binomial", "gamma-poisson", "linear-regression")


def main(replications: int) -> None:
    start = time.perf_counter()
    print("planted mean shifts of exactly the stated size (probability 0.9 stated)")
    for i, name in enumerate(TOPICS):
        r = planted_shift_rate(name, replications=replications, seed=700 + i)
        print(
            f"{name:20} caught {r.caught:4d} of {r.runs:4d} agreeing runs = {r.rate:.3f} "
            f"+- {r.se:.3f}   (stated shift {r.mean_shift_sd:.3f} sd on average)",
            flush=True,
        )
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
