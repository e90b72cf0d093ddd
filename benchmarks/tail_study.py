"""Issue 60's study: is the agreement test calibrated at the thresholds it uses?

Prints (1) the two-sided tail of each quantity's z at 4.26 and 4.9 over the
normal's, on chains of known ESS, all chains and those that pass the gate,
by importance sampling (compare/studies/tails.py); (2) the whole test's
family-wise false-alarm rate at alpha 0.05 and 0.01 on exact iid draws of the
heavy-tailed and high-dimensional posteriors of the issue; (3) the same on real
PyMC runs that the runner extended; (4) the spread test's tail at 4.26 and 4.9
on f AR(1) coordinates with correlated errors (``spread_tail_ratio``,
by conditional Monte Carlo). Each
figure with its Monte Carlo standard error. ``python benchmarks/tail_study.py
[REPS]`` (default 600 chains per tail side; ``--tails``, ``--rates``,
``--extended`` or ``--spread`` for one part; ``make study`` runs all four,
about 30 minutes on 2 cores).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from compare import accel

accel.enable()  # a benchmark is a process of ours: the command line's accelerators

import sys
import time

import numpy as np

from compare.studies.tails import (
    extended_rates,
    iid_cases,
    realised_rates,
    spread_tail_ratio,
    tail_ratio,
)

CASES = [
    ("ar1", "mean"),
    ("sticky", "loc"),
    ("sticky", "scale"),
    ("sticky", "skew"),
    ("sticky", "kurt"),
]
LEVELS = [
    (400, False),
    (400, True),
    (536, True),
    (1000, False),
    (1000, True),
    (2000, False),
    (8000, False),
]


def main(reps: int, parts: set[str]) -> None:
    start = time.perf_counter()
    if "tails" in parts:
        tails_table(reps, np.random.default_rng(60))
        print(f"({time.perf_counter() - start:.0f} s)")
    if "rates" in parts:
        rates_table(np.random.default_rng(61))
        print(f"({time.perf_counter() - start:.0f} s)")
    if "extended" in parts:
        extended_table()
        print(f"({time.perf_counter() - start:.0f} s)")
    if "spread" in parts:
        spread_table(reps, np.random.default_rng(62))
        print(f"({time.perf_counter() - start:.0f} s)")


def spread_table(reps: int, rng: np.random.Generator) -> None:
    print(
        "spread test: tail P(z > t) / P(|N(0,1)| > t), f AR(1) coordinates, 4 x 2000 draws "
        "(conditional Monte Carlo)"
    )
    print(f"{'f':>3} {'ESS':>5} {'corr':>4}  {'t=4.26':>12} {'t=4.9':>12}  made")
    for f in (3, 10, 30):
        for ess in (400, 1000, 2000, 8000):
            for corr in (0.0, 0.5):
                cells = []
                for t in (4.26, 4.9):
                    r = spread_tail_ratio(
                        ess=ess, f=f, threshold=t, replications=reps, rng=rng, correlation=corr
                    )
                    cells.append(f"{r.ratio:.2f}+-{r.se:.2f}")
                print(f"{f:3d} {ess:5d} {corr:4.1f}  {cells[0]:>12} {cells[1]:>12}  {r.made:.2f}")


#: Real runs started at 100 draws per chain (400 in all: ESS 400 is out of reach),
#: so every one is extended by the runner before its verdict.
EXTENDED = ("beta-binomial", "gamma-poisson", "normal-inverse-gamma")


def extended_table(replications: int = 800) -> None:
    print("family-wise false-alarm rate of real PyMC runs started at 100 draws per chain")
    for i, name in enumerate(EXTENDED):
        r = extended_rates(name, draws=100, replications=replications, seed=600 + i)
        print(
            f"{name:22} alpha 0.05: {r.rate_05:.3f} +- {r.se(0.05):.3f}"
            f"   alpha 0.01: {r.rate_01:.3f} +- {r.se(0.01):.3f}   verdicts {r.verdicts}",
            flush=True,
        )


def tails_table(reps: int, rng: np.random.Generator) -> None:
    print("tail ratio P(|z| > t) / P(|N(0,1)| > t); g = among chains that pass the gate")
    print(
        f"{'chain':7} {'quantity':8} {'t':>5} "
        + " ".join(f"{str(e) + ('g' if g else ''):>12}" for e, g in LEVELS)
    )
    for chain, quantity in CASES:
        for threshold in (4.26, 4.9):
            cells = []
            for ess, gate in LEVELS:
                est = tail_ratio(
                    chain=chain,
                    ess=ess,
                    quantity=quantity,
                    threshold=threshold,
                    replications=reps,
                    rng=rng,
                    gate=gate,
                )
                cells.append(f"{est.ratio:5.2f}+-{est.se:4.2f}")
            print(
                f"{chain:7} {quantity:8} {threshold:5.2f} " + " ".join(f"{c:>12}" for c in cells),
                flush=True,
            )


def rates_table(rng: np.random.Generator) -> None:
    print("family-wise false-alarm rate on exact iid draws (4 x 2000)")
    for case in iid_cases():
        replications = 200 if "100-d" in case else 1000
        r = realised_rates(case, replications=replications, rng=rng)
        print(
            f"{case:28} m={r.quantities:5d}  alpha 0.05: {r.rate_05:.3f} +- {r.se(0.05):.3f}"
            f"   alpha 0.01: {r.rate_01:.3f} +- {r.se(0.01):.3f}   ({replications} runs)",
            flush=True,
        )


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    chosen = {a[2:] for a in sys.argv[1:] if a.startswith("--")} or {
        "tails",
        "rates",
        "extended",
        "spread",
    }
    main(int(args[0]) if args else 600, chosen)
