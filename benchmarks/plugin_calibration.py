"""The pytest plugin's false-alarm rate, measured over many runs of a correct suite.

A user's suite of K correct verdict tests (the README's Poisson-Gamma test on
K data sets) is run N times with fresh seeds (``--bayes-seed i``) at a budget
large enough for false alarms to be counted (``--bayes-alpha 0.5``; the
default 1e-3 would need ~10^4 runs to show one). The plugin promises that a
whole correct suite fails with probability at most the budget; the
Bonferroni split with its inflation margin (``INFLATION``) and the alpha
spending over a test's checks (its one call gets half its share) make the
nominal rate ``budget / (2 INFLATION)``. At the default budget the per-check
alpha puts the threshold near 4.7-4.9, where ``benchmarks/tail_study.py``
measures each quantity's tail directly (a direct count would need ~10^5
suite runs). Printed: the suite runs that failed, the checks that failed,
with exact binomial 95% intervals, against both; then the rate at the default
budget from the tails measured at its thresholds (:func:`default_budget`).

    python benchmarks/plugin_calibration.py [N] [K]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy import stats

BUDGET = 0.5
SUITE = """
import numpy as np, pymc as pm, pytest, compare
from scipy import stats

CASES = [np.random.default_rng(k).poisson(2.0 + k, size=12 + 3 * k) for k in range({k})]


@pytest.mark.parametrize("y", CASES)
def test_poisson_gamma(bayes_check, y):
    with pm.Model() as model:
        lam = pm.Gamma("lam", alpha=2.0, beta=1.0)
        pm.Poisson("y", mu=lam, observed=y)
    exact = stats.gamma(2.0 + y.sum(), scale=1 / (1.0 + len(y)))
    bayes_check(model, compare.Exact.from_scipy(exact), var_names=["lam"])
"""


def interval(k: int, n: int) -> str:
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return f"{k}/{n} = {k / n:.3f} (95% CI {lo:.3f}-{hi:.3f})"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    failed_runs = failed_checks = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-plugin-") as tmp:
        (Path(tmp) / "test_suite.py").write_text(SUITE.format(k=k))
        for i in range(n):
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--bayes-alpha",
                    str(BUDGET),
                    "--bayes-seed",
                    str(i),
                    "--bayes-inconclusive",
                    "fail",
                    "test_suite.py",
                ],
                cwd=tmp,
                capture_output=True,
                text=True,
                env={**os.environ, "BAYES_COMPARE_WORKER_FILE": "off"},
                check=False,
            )
            found = re.search(r"(\d+) failed", proc.stdout)
            fails = int(found.group(1)) if found else 0
            if proc.returncode not in (0, 1):
                raise RuntimeError(proc.stdout[-3000:] + proc.stderr[-2000:])
            failed_checks += fails
            failed_runs += fails > 0
            print(f"   run {i + 1}/{n}: {fails} of {k} checks failed", flush=True)
    from compare.pytest_plugin import INFLATION  # light: the plugin's constant

    each = BUDGET / (2 * INFLATION * k)
    print(
        f"\nplugin false-alarm rate: {n} runs of a correct suite of {k} verdict tests, "
        f"--bayes-alpha {BUDGET} ({time.perf_counter() - start:.0f} s)\n"
        f"   suite runs that failed: {interval(failed_runs, n)}; promised <= {BUDGET}, "
        f"nominal {BUDGET / (2 * INFLATION):.3f}\n"
        f"   checks that failed:     {interval(failed_checks, n * k)}; nominal alpha "
        f"{each:.4f} each"
    )


def default_budget(k: int, replications: int = 300) -> None:
    """The suite-wide rate at the default budget, from each check's threshold and
    the tails measured there: a direct count would need ~10^4 suite runs, so the
    tail of each of a check's quantities at the threshold the plugin gives it is
    measured by importance sampling (compare/studies/tails.py: sticky chains at
    true ESS 400 among those passing the gate, the hardest case of the tail table)
    and summed over quantities and checks (a union bound, as Bonferroni's)."""
    import numpy as np

    from compare.core.agreement import bonferroni_threshold
    from compare.pytest_plugin import INFLATION, call_alpha  # light: the plugin's rule
    from compare.studies.tails import tail_ratio
    from compare.testing import RERUN_SHARE

    default = 1e-3
    share = default / (INFLATION * k)
    first = call_alpha(share, 1, None) * (1.0 - RERUN_SHARE)  # rerun policy: first check
    threshold = bonferroni_threshold(first, 4)  # loc, scale, skew, kurt of lam
    nominal = 2 * stats.norm.sf(threshold)
    rng = np.random.default_rng(4)
    rates, ses = [], []
    for quantity in ("loc", "scale", "skew", "kurt"):
        r = tail_ratio(
            chain="sticky",
            ess=400,
            quantity=quantity,
            threshold=threshold,
            replications=replications,
            rng=rng,
            gate=True,
        )
        rates.append(r.ratio * nominal)
        ses.append(r.se * nominal)
        print(f"   {quantity:5}: tail at {threshold:.2f} is {r.ratio:.2f} +- {r.se:.2f} x nominal")
    per_check = float(np.sum(rates))
    per_check_se = float(np.sqrt(np.sum(np.square(ses))))
    print(
        f"default budget {default:g}, {k} tests: first check's alpha {first:.2e}, threshold "
        f"{threshold:.2f}; realised per check {per_check:.2e} +- {per_check_se:.1e} (nominal "
        f"{4 * nominal:.2e}); suite-wide at most {k * per_check:.2e} +- {k * per_check_se:.1e} "
        f"(budget {default:g}; the rerun's share {RERUN_SHARE:g} of each test's alpha is "
        f"spent only after an inconclusive)"
    )


if __name__ == "__main__":
    main()
    default_budget(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
