"""bayes-compare used as a library leaves the user's process as it found it.

The uses run one after another in a new interpreter with the user's environment
(none of the settings the suite's own processes get from ``compare.accel.enable``),
which first imports the scientific stack a user's session would hold (PyMC, nutpie,
numba and the numba modules the accelerators reach into, xarray, ArviZ, SciPy,
matplotlib) and uses it once (an xarray object, a PyTensor function: what those
packages then do to the process is theirs). Around each use it takes a
:func:`tests.process_state.snapshot` before and after; any difference fails the
test: the environment, gc thresholds, signal handlers, ``sys.meta_path``, warning
filters, loggers, BLAS threads, the global random states, PyTensor's options,
modules taken out of ``sys.modules``, and any attribute of another package holding
an object of ours. The pytest plugin is checked by a pytest run of an unrelated
test file in an empty folder, with the plugin and without it
(``-p no:bayes_compare``): the state inside the test must be the same.

Power: on the code before issue 59 (``import compare`` installed seven patches)
every check but check_draws failed: ``import compare`` with 15 patched attributes
of numba and xarray, ``PYTENSOR_FLAGS=blas__ldflags=``, numba's lock callbacks
gone and arviz's ``jax`` and ``numpyro`` stubs taken out of ``sys.modules``;
``compare.check`` and ``compare.run`` with nutpie's trace conversion replaced;
loading a topic file with ``BAYES_COMPARE_TOPIC_FILES`` set; the pytest run with
the plugin had the numba patches and the ``sys.meta_path`` hooks.
``CheckResult.to_html`` drew its figures with ``matplotlib.use("Agg")`` until
2026-12-07, switching a user's backend (a notebook's inline figures) for the rest of
the session; it now draws on the user's, their open figures and rcParams as found
(``compare.core.drawing``).
``test_the_snapshot_sees_a_planted_patch`` plants each kind of change and sees it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / "tests" / "process_state.py"

#: What a user's session holds before it uses bayes-compare (and the numba modules that
#: an import hook would otherwise be waiting for).
STACK = (
    "numpy",
    "scipy.stats",
    "xarray",
    "matplotlib",
    "pymc",
    "nutpie",
    "numba",
    "numba.core.codegen",
    "numba.core.caching",
    "numba.core.base",
    "numba.np.arrayobj",
    "llvmlite.binding",
    "pytensor",
    "arviz_base",
    "arviz_stats",
    "threadpoolctl",
)

#: The variables compare.accel.enable and the command line set in our own processes
#: (the suite's among them): a user's process does not have them.
OURS = (
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MPLBACKEND",
)


def user_environment() -> dict[str, str]:
    """This process's environment as a user's would be: without our processes' settings
    (the compile caches' folders are kept, so CI's cold caches stay in use)."""
    env = {k: v for k, v in os.environ.items() if k not in OURS and not k.startswith("PYTEST_")}
    flags = [
        f
        for f in env.get("PYTENSOR_FLAGS", "").split(",")
        if f and f.split("=")[0] not in ("blas__ldflags", "traceback__limit")
    ]
    if flags:
        env["PYTENSOR_FLAGS"] = ",".join(flags)
    else:
        env.pop("PYTENSOR_FLAGS", None)
    env["PYTHONPATH"] = str(ROOT)  # analytic, pymc_models, compare (as installed)
    return env


#: What the user's session did with the stack before (what the packages then do to the
#: process is theirs: xarray's first object imports Dask, whose toolz adds an import
#: hook; PyTensor's first C-linked compile probes for a BLAS, which adds a folder to
#: PATH: reading the flag is that probe, without the compile).
SESSION = """
import numpy, pytensor, pytensor.tensor as pt, xarray
xarray.DataArray(numpy.zeros(2), dims=["a"]).sum()
_x = pt.dvector("x")
pytensor.function([_x], (_x + 1).sum())(numpy.zeros(2))
pytensor.config.blas__ldflags
"""

PRELUDE = f"""
import importlib, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("process_state", {str(STATE)!r})
state = importlib.util.module_from_spec(spec)
spec.loader.exec_module(state)
for name in {STACK!r}:
    importlib.import_module(name)
{SESSION}
"""

#: The uses, in the order one interpreter makes them: each is set up (what the user's
#: own code does first), then the snapshot, the use itself, the snapshot again.
USES = {
    "import compare": ("", "import compare"),
    "load a topic file": (
        "",
        f"compare.load_topic_file({str(ROOT / 'examples' / 'my_topic.py')!r})",
    ),
    "compare.check_draws": (
        """
import numpy as np
draws = np.random.default_rng(1).normal(size=(4, 1000, 2))
exact = compare.Exact(mean=[0.0, 0.0], cov=[[1.0, 0.0], [0.0, 1.0]], gaussian=True)
""",
        "compare.check_draws(draws, exact)",
    ),
    "compare.check": (
        """
import numpy as np, pymc as pm
y = np.array([2.1, 1.4, 2.9, 1.7])
with pm.Model() as model:
    mu = pm.Normal("mu", 0, 10)
    pm.Normal("y", mu, 1, observed=y)
precision = 1 / 10**2 + len(y)
exact = compare.Exact(mean=[y.sum() / precision], cov=[[1 / precision]], gaussian=True)
""",
        'compare.check(model, exact, var_names=["mu"], draws=500)',
    ),
    "compare.run": ("", 'compare.run("beta-binomial", settings={"draws": 500})'),
    "CheckResult.to_html": (
        """
import matplotlib
matplotlib.use("svg")  # the user's own backend (a notebook's would be its inline one)
import matplotlib.pyplot as plt
plt.ion()
plt.plot([0, 1])  # a figure of the user's, open (its first axes import nutpie's lazy jax)
import netCDF4  # draws.nc's writer: its import sets HDF5_PLUGIN_PATH, netCDF4's doing
result = compare.check_draws(draws, compare.Exact(mean=[0.0, 0.0], cov=[[1.0, 0.0], [0.0, 1.0]]))
""",
        "result.to_html()",
    ),
}


#: Each kind of change a library could make, planted (the power of the snapshot).
PLANTS = {
    "os.environ": "import os; os.environ['PLANTED'] = '1'",
    "gc": "import gc; gc.set_threshold(20000, 20, 20)",
    "signal": "import signal; signal.signal(signal.SIGTERM, lambda *a: None)",
    "meta_path": "import sys\nclass F:\n    def find_spec(self, *a): return None\nsys.meta_path.insert(0, F())",
    "patch": (
        "import numba.core.codegen as c, compare.core.registry as r\n"
        "c.JITCodeLibrary.get_pointer_to_function = r.InputError"
    ),
    "sys.modules": "import sys; sys.modules.pop('jax', None); sys.modules.pop('numpy.linalg')",
    "blas": "from threadpoolctl import threadpool_limits; threadpool_limits(1)",
    "warnings": "import warnings; warnings.simplefilter('ignore')",
    "random": "import numpy as np; np.random.seed(1)",
    "matplotlib": "import matplotlib; matplotlib.use('Agg')",
}


def _uses_script() -> str:
    script = PRELUDE + "found = {'stack alone': state.snapshot()}\n"
    for use, (setup, step) in USES.items():
        script += setup + "\nbefore = state.snapshot()\n" + step + "\n"
        script += f"found[{use!r}] = state.differences(before, state.snapshot())\n"
    script += "import compare.core.registry\nfound['planted'] = {}\nbefore = state.snapshot()\n"
    for kind, code in PLANTS.items():  # each plant's after is the next one's before
        script += code + "\nafter = state.snapshot()\n"
        script += f"found['planted'][{kind!r}] = state.differences(before, after)\n"
        script += "before = after\n"
    return script + "print(json.dumps(found))\n"


@pytest.fixture(scope="module")
def library_uses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What each use changed, the uses made one after another in one new interpreter
    (then, under ``planted``, what each planted change did)."""
    found: dict[str, Any] = _last_json(_uses_script(), tmp_path_factory.mktemp("uses"))
    return found


def _last_json(script: str, tmp_path: Path) -> Any:
    """What ``script`` printed as JSON on its last line, run in a user's new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=user_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("use", list(USES))
def test_a_use_changes_nothing_in_the_users_process(use: str, library_uses) -> None:
    found = library_uses[use]
    assert not found, f"{use} changed the process:\n" + "\n".join(found)


def test_import_before_the_stack_leaves_no_hook(tmp_path: Path, library_uses) -> None:
    """``import compare`` first, then the stack: the process is as the uses' interpreter
    was before its first use, which imported the stack alone (no import hook waited for
    numba, xarray, SciPy or nutpie)."""
    script = f"""
import importlib, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("process_state", {str(STATE)!r})
state = importlib.util.module_from_spec(spec)
spec.loader.exec_module(state)
import compare
for name in {STACK!r}:
    importlib.import_module(name)
{SESSION}
print(json.dumps(state.snapshot()))
"""
    first = _last_json(script, tmp_path)
    found = _state().differences(library_uses["stack alone"], first, same_process=False)
    assert not found, "import compare, then the stack:\n" + "\n".join(found)


UNRELATED = f'''
"""A user's test that has nothing to do with Bayesian models."""
import importlib.util, json, os, sys

import numba
import numpy as np
import scipy.stats
import xarray as xr


@numba.njit(cache=False)
def total(x):
    return x.sum()


def test_unrelated():
    assert total(np.arange(4.0)) == 6.0
    xr.DataArray(np.zeros(3), dims=["a"]).sum()
    scipy.stats.norm.cdf(0.0)
    spec = importlib.util.spec_from_file_location("process_state", {str(STATE)!r})
    state = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(state)
    loaded = "compare.pytest_plugin" in sys.modules
    with open(os.environ["STATE_OUT"], "w") as out:
        json.dump({{"state": state.snapshot(), "plugin": loaded}}, out)
'''


def test_the_plugin_changes_nothing_in_an_unrelated_pytest_run(tmp_path: Path) -> None:
    """pytest auto-loads the installed plugin (``pytest11``); inside an unrelated test the
    process is as it is with the plugin disabled."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "test_unrelated.py").write_text(UNRELATED)
    snapshots = {}
    for label, extra in (("with", []), ("without", ["-p", "no:bayes_compare"])):
        env = user_environment()
        env["STATE_OUT"] = str(tmp_path / f"{label}.json")
        env.pop("PYTHONPATH")  # the installed package, as a user's project sees it
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        snapshots[label] = json.loads((tmp_path / f"{label}.json").read_text())
    assert snapshots["with"]["plugin"] and not snapshots["without"]["plugin"]
    with_plugin, without = snapshots["with"]["state"], snapshots["without"]["state"]
    found = _state().differences(without, with_plugin, same_process=False)
    found += [f"patched: {p}" for p in with_plugin["patches"]]
    assert not found, "the plugin's load changed the process:\n" + "\n".join(sorted(set(found)))


def _state() -> Any:
    """tests/process_state.py as a module (in this process: to compare two snapshots)."""
    spec = importlib.util.spec_from_file_location("process_state", STATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_snapshot_sees_a_planted_patch(library_uses) -> None:
    """Power: each kind of change a library could make, planted in the same interpreter
    after the uses, is found."""
    found = library_uses["planted"]
    missed = [kind for kind, lines in found.items() if not lines]
    assert not missed, f"planted changes not seen: {missed}"
