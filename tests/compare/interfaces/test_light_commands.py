"""Light commands never import the sampling stack (issue 17, target 3).

``--help``, ``list``, ``describe``, ``summary``, ``sbc --exact-only``, an
export's input checks and the draws-only API (``compare.check_draws``) run in
new interpreters (``--help``, ``list`` and every ``describe`` one after another
in one); after each, none of PyMC, PyTensor, nutpie or numba may be in
``sys.modules``.  Importing PyMC alone costs about 1 s (``benchmarks/light_commands.py``
measures it next to ``list`` and ``describe``), and ``list`` took 2.5-3 s when
registering the topics imported it.  Timing is not asserted (the machine is
shared); ``python -X importtime -m compare.interfaces.cli list`` shows where the
time goes.

Deterministic: a module is imported or it is not, so there is no false-alarm
rate to state.  Power: :func:`test_probe_sees_a_planted_heavy_import` plants
``import pymc`` after a light module's import and shows the probe reports it.

The posteriordb export of a closed form is not light: its model file is
checked by building the PyMC model with the data before anything is written
(``compare.outputs.export._check_recipes``), and ``pm.set_data`` evaluates a
shape through PyTensor's default (numba) backend.  What stays light is
everything before that check: a bad input is refused (exit 3) without PyMC.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compare.topics.catalogue import CATALOGUE

ROOT = Path(__file__).resolve().parents[3]

#: The sampling stack: none of these may be imported by a light command.
HEAVY = ("pymc", "pytensor", "nutpie", "numba")

PROBE = """
import json, sys
{body}
loaded = sorted({{m.split('.')[0] for m in sys.modules}})
sys.stdout.write('\\nMODULES=' + json.dumps(loaded) + '\\n')
"""

CLI = """
from compare.interfaces.cli import main
code = main({args!r})
sys.stderr.write(f'exit code {{code}}\\n')
"""


def _heavy_loaded(
    body: str, cwd: Path, **environ: str
) -> tuple[list[str], subprocess.CompletedProcess]:
    """Run ``body`` in a new interpreter; the heavy packages left in ``sys.modules``."""
    env = {
        **os.environ,
        **environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "COLUMNS": "120",
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("MODULES=")][-1]
    modules = json.loads(line[len("MODULES=") :])
    return sorted(set(modules) & set(HEAVY)), proc


def _cli(args: list[str], cwd: Path, expect_exit: int = 0) -> list[str]:
    """Run ``bayes-compare ARGS`` through ``main`` in a new interpreter; the heavy packages."""
    loaded, proc = _heavy_loaded(CLI.format(args=args), cwd)
    assert f"exit code {expect_exit}" in proc.stderr, proc.stderr
    return loaded


#: The light commands checked together: every builtin topic's ``describe`` loads its
#: module, its analytic and PyMC modules and its glue.
LIGHT = [
    ["--help"],
    ["list"],
    ["run", "--help"],
    ["sbc", "--help"],
    ["sensitivity", "--help"],
    ["export", "--help"],
    *(["describe", entry.replace("_", "-")] for entry in CATALOGUE),
]

SEQUENCE = """
from compare.interfaces.cli import main
heavy = {heavy!r}
for args in {commands!r}:
    code = main(args)
    if args == {plant!r}:  # the power test's planted heavy import
        import pymc
    now = sorted(({{m.split('.')[0] for m in sys.modules}} | set(sys.modules)) & set(heavy))
    sys.stderr.write('COMMAND=' + json.dumps([args, code, now]) + '\\n')
"""


def test_light_commands_import_no_sampler(tmp_path):
    """Every light command, one after another in one new interpreter (one start-up
    for all): after each, none of the heavy packages is loaded. A module once
    imported stays in ``sys.modules``, so the first command that loads one is the
    one named, and none loading any means none of them does alone."""
    # SciPy and scikit-learn too: describe names the parameters from the data set's
    # declaration (BuiltinData.parameters), without loading or solving it (3.2 s for
    # logistic-regression's reference on scikit-learn's breast cancer data before).
    # pydantic too: typer 0.29 imports it to coerce every parameter (0.1 s of a 0.5 s
    # budget); pyproject.toml keeps typer below 0.29.
    watched = (*HEAVY, "scipy", "sklearn", "pydantic")
    loaded, proc = _heavy_loaded(
        SEQUENCE.format(heavy=watched, commands=LIGHT, plant=None), tmp_path
    )
    seen = [
        json.loads(ln[len("COMMAND=") :])
        for ln in proc.stderr.splitlines()
        if ln.startswith("COMMAND=")
    ]
    assert [args for args, _, _ in seen] == LIGHT, proc.stderr[-2000:]
    assert [(args, code) for args, code, _ in seen if code != 0] == []
    assert [(args, now) for args, _, now in seen if now] == [] and loaded == []


def test_sbc_exact_only_imports_no_sampler(tmp_path):
    args = ["sbc", "beta-binomial", "--exact-only", "--sims", "20", "--out", str(tmp_path / "sbc")]
    assert _cli(args, tmp_path) == []


def test_check_draws_and_summary_import_no_sampler(tmp_path):
    # A saved run from the draws-only API: no sampling is needed to make one.
    body = (
        "import numpy as np, compare\n"
        "rng = np.random.default_rng(0)\n"
        "r = compare.check_draws(rng.normal(size=(2, 400, 2)),\n"
        "                        compare.Exact(mean=np.zeros(2), cov=np.eye(2)))\n"
        f"r.save({str(tmp_path / 'runs' / 'user-draws')!r})\n"
    )
    loaded, _ = _heavy_loaded(body, tmp_path)
    assert loaded == []
    args = ["summary", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "s.md")]
    assert _cli(args, tmp_path) == []
    assert "user-draws" in (tmp_path / "s.md").read_text()


def test_export_input_checks_import_no_sampler(tmp_path):
    args = [
        "export",
        "beta-binomial",
        "--format",
        "posteriordb",
        "--out",
        str(tmp_path / "pdb"),
        "--set",
        "a=-1",
    ]
    assert _cli(args, tmp_path, expect_exit=3) == []
    assert not (tmp_path / "pdb").exists()


def test_the_reports_power_scaling_of_saved_draws_imports_no_sampler(tmp_path):
    """The report's sensitivity figure (``sensitivity.for_run``) power-scales a saved
    run's draws with the exact log densities: no PyMC.  (It imported the sampler
    for ``posterior_array`` alone, 1.0-1.4 s in each of the report's figure workers.)
    Draws from the exact posterior stand in for a run's."""
    body = (
        "import numpy as np, xarray as xr\n"
        "from compare.topics import get_topic\n"
        "from compare.studies.sensitivity import power_scaling\n"
        "topic = get_topic('beta-binomial')\n"
        "ds = topic.builtin[0]\n"
        "x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))\n"
        "m = topic.solve(x=x, **hyper).posterior.marginal(0)\n"
        "p = m.rvs(size=(2, 200), random_state=1)\n"
        "post = xr.Dataset({'p': (('chain', 'draw'), p)},\n"
        "                  coords={'chain': [0, 1], 'draw': np.arange(200)})\n"
        "tree = xr.DataTree.from_dict({'posterior': post})\n"
        "ps = power_scaling(topic, data=ds.load(), hyper=topic.hyper(dataset=ds),\n"
        "                   tree=tree, exact_densities=True)\n"
        "assert ps.psense_prior is not None\n"
    )
    loaded, _ = _heavy_loaded(body, tmp_path)
    assert loaded == []


@pytest.mark.xfail(
    strict=True,
    reason="the export checks its PyMC model file builds with the data (PyMC, numba) "
    "before writing; a closed form needs no sampling, but that check needs PyMC",
)
def test_closed_form_export_imports_no_sampler(tmp_path):
    args = ["export", "beta-binomial", "--format", "posteriordb", "--out", str(tmp_path / "pdb")]
    assert _cli(args, tmp_path) == []


def test_probe_sees_a_planted_heavy_import(tmp_path):
    """Power: a light module followed by a planted ``import pymc`` is caught, and in
    a sequence of commands the one after which it was planted is named."""
    loaded, _ = _heavy_loaded("import compare.topics\nimport pymc\n", tmp_path)
    assert "pymc" in loaded and "pytensor" in loaded
    loaded, _ = _heavy_loaded("import compare.topics\n", tmp_path)
    assert loaded == []
    commands = [["--help"], ["list"], ["describe", "beta-binomial"]]
    _, proc = _heavy_loaded(
        SEQUENCE.format(heavy=HEAVY, commands=commands, plant=["list"]), tmp_path
    )
    seen = [json.loads(ln[8:]) for ln in proc.stderr.splitlines() if ln.startswith("COMMAND=")]
    assert [bool(now) for _, _, now in seen] == [False, True, True]
    assert "pymc" in seen[1][2]


def test_list_and_describe_read_cached_cards_without_numpy_or_a_topic(tmp_path):
    """Once a process has kept the topics' cards (``compare/topics/cards.py``), ``list``
    and ``describe`` in a new interpreter import no NumPy, no closed form, no model
    and no topic module (0.4-0.7 s of ``list`` before, 0.27-0.38 s after on the same
    slow machine), and print what the topics themselves give. The probe's power for
    this watched set: an ``import pymc`` planted after ``list`` is seen (NumPy with it)."""
    cache = str(tmp_path / "cache")
    watched = (
        *HEAVY,
        "numpy",
        "scipy",
        "analytic",
        "pymc_models",
        *(f"compare.topics.{entry}" for entry in CATALOGUE),
    )
    first = [["list"]]
    _, built = _heavy_loaded(
        SEQUENCE.format(heavy=watched, commands=first, plant=None),
        tmp_path,
        BAYES_COMPARE_CACHE_DIR=cache,
    )
    assert len(list((tmp_path / "cache" / "cards").glob("*.json"))) == 1
    describe = [["describe", entry.replace("_", "-")] for entry in CATALOGUE]
    commands = [["list"], *describe, ["describe", "no-such-topic"]]
    _, proc = _heavy_loaded(
        SEQUENCE.format(heavy=watched, commands=commands, plant=None),
        tmp_path,
        BAYES_COMPARE_CACHE_DIR=cache,
    )
    seen = [json.loads(ln[8:]) for ln in proc.stderr.splitlines() if ln.startswith("COMMAND=")]
    assert [(args, code) for args, code, _ in seen] == [
        *((args, 0) for args in commands[:-1]),
        (commands[-1], 3),
    ], proc.stderr[-2000:]
    assert [(args, now) for args, _, now in seen if now] == []
    assert "unknown topic 'no-such-topic'" in proc.stderr and "beta-binomial" in proc.stderr
    # the cached list prints what the topics gave the first process
    assert proc.stdout.startswith(built.stdout.split("\nMODULES=")[0])
    # power: a planted heavy import after `list` is named from there on
    _, planted = _heavy_loaded(
        SEQUENCE.format(heavy=watched, commands=commands[:2], plant=["list"]),
        tmp_path,
        BAYES_COMPARE_CACHE_DIR=cache,
    )
    seen = [json.loads(ln[8:]) for ln in planted.stderr.splitlines() if ln.startswith("COMMAND=")]
    assert all("numpy" in now for _, _, now in seen)
