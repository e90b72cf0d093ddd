"""`make bench`: the light commands in a new process against ``python -c "import pymc"``.

Issue 17, target 3: ``bayes-compare list`` and ``bayes-compare describe``
(beta-binomial, and the two topics named on a scikit-learn data set) take <=
0.5 s wall in a new process, and never import PyMC.
Their reference is the import they avoid: ``python -c "import pymc"``, the
least a command that loads PyMC pays.  Each repetition starts a new process
for each of the three, in turn (list, describe, import pymc, list, ...), so
load from other work on the machine falls on all of them; the medians, the
ratios to the reference and ok/MISSED against the 0.5 s target are printed,
with the heavy packages each command left in ``sys.modules`` (one more run of
each).

Bytecode caches are written (to a temporary ``PYTHONPYCACHEPREFIX``, with a
warm-up run first) even where ``PYTHONDONTWRITEBYTECODE`` is set, as after
``pip install``: otherwise every run recompiles the project's modules (about
0.15 s) and the numbers measure the compiler.  The cache folder
(``BAYES_COMPARE_CACHE_DIR``) is a temporary one: the warm-up keeps the topics'
cards there (``compare/topics/cards.py``), and one ``list`` with the cards
removed is timed too, what the first ``list`` after a change of the package
pays.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
TARGET = 0.5  # seconds of wall time, issue 17 target 3

#: Packages whose import a light command should not pay for: the sampling stack
#: (forbidden), the numerical stack it brings (SciPy, ArviZ, xarray, pandas),
#: pydantic (typer 0.29's coercion; pyproject.toml keeps typer below 0.29) and
#: NumPy (not needed once the topics' cards are kept).
HEAVY = (
    "pymc",
    "pytensor",
    "nutpie",
    "numba",
    "scipy",
    "arviz_stats",
    "xarray",
    "pandas",
    "pydantic",
    "numpy",
)

COMMANDS = {
    "bayes-compare list": [sys.executable, "-m", "compare.interfaces.cli", "list"],
    "bayes-compare describe beta-binomial": [
        sys.executable,
        "-m",
        "compare.interfaces.cli",
        "describe",
        "beta-binomial",
    ],
    # The topics whose parameter names depend on the data, on a scikit-learn data set (the
    # names declared with it: before, describe loaded it and solved it, 3.2 s and 1.3 s).
    "bayes-compare describe logistic-regression": [
        sys.executable,
        "-m",
        "compare.interfaces.cli",
        "describe",
        "logistic-regression",
    ],
    "bayes-compare describe gaussian-classifier": [
        sys.executable,
        "-m",
        "compare.interfaces.cli",
        "describe",
        "gaussian-classifier",
    ],
}
REFERENCE = ("python -c 'import pymc'", [sys.executable, "-c", "import pymc"])

PROBE = """
import json, sys
from compare.interfaces.cli import main
main({args!r})
sys.stderr.write('\\nMODULES=' + json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})) + '\\n')
"""


def _env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPYCACHEPREFIX=cache,
        PYTHONPATH=str(ROOT),
        COLUMNS="120",
        BAYES_COMPARE_CACHE_DIR=str(Path(cache) / "bayes-compare"),
    )
    return env


def _wall(command: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return wall


def _heavy(command: list[str], env: dict[str, str], cwd: str) -> list[str]:
    """The heavy packages the command leaves in ``sys.modules``."""
    probe = PROBE.format(args=command[3:])
    proc = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=cwd, capture_output=True, text=True
    )
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES=")][-1]
    loaded = set(json.loads(line[len("MODULES=") :]))
    return [name for name in HEAVY if name in loaded]


def main() -> int:
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cwd:
        env = _env(cache)
        everything = {**COMMANDS, REFERENCE[0]: REFERENCE[1]}
        for command in everything.values():  # warm-up: bytecode caches, disk cache, cards
            _wall(command, env, cwd)
        for card in (Path(cache) / "bayes-compare" / "cards").glob("*.json"):
            card.unlink()
        first = _wall(COMMANDS["bayes-compare list"], env, cwd)  # builds the cards again
        times: dict[str, list[float]] = {name: [] for name in everything}
        for _ in range(REPEAT):
            for name, command in everything.items():
                times[name].append(_wall(command, env, cwd))
        heavy = {name: _heavy(command, env, cwd) for name, command in COMMANDS.items()}
    reference = statistics.median(times[REFERENCE[0]])
    print(
        f"light commands, new process each, median of {REPEAT} "
        f"(target <= {TARGET:.1f} s wall; reference {REFERENCE[0]}):"
    )
    print(f"  {REFERENCE[0]:44s} {reference:6.2f} s")
    for name in COMMANDS:
        wall = statistics.median(times[name])
        verdict = "ok" if wall <= TARGET else "MISSED"
        print(
            f"  {name:44s} {wall:6.2f} s  ratio to import pymc {wall / reference:5.2f}  "
            f"{verdict}  heavy imports: {', '.join(heavy[name]) or 'none'}"
        )
    print(
        f"  {'bayes-compare list, the cards built':44s} {first:6.2f} s  (once after a "
        "change of the package's files)"
    )
    print(f"  load average when done: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
