"""The command line: exit codes, the JSON contract, bad input, saved runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import special

from compare.interfaces.cli import main

CONTRACT = {
    "topic",
    "verdict",
    "parameters",
    "exact",
    "mcmc",
    "checks",
    "settings",
    "data",
}
EXACT_KEYS = {"mean", "cov", "map", "mle", "log_evidence"}
MCMC_KEYS = {"mean", "cov", "mcse_mean", "ess_bulk", "ess_tail", "rhat", "divergences", "map"}
CHECK_KEYS = {"name", "statistic", "threshold", "passed"}


def _csv(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _main(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


# --- bad input: one line naming the item, exit 3, nothing written ------------
BAD_INPUTS = [
    # (topic, csv text or None for builtin, extra args, words the message must contain)
    ("normal-known-variance", "x\n1.0\nabc\n", [], ["line 3", "'abc'", "not a number"]),
    ("normal-known-variance", "x\n1.0\n\n2.0\nNA\n", [], ["line 5", "missing value"]),
    ("normal-known-variance", "x\n1.0\nnan\n", [], ["line 3", "missing value"]),
    ("normal-known-variance", "x\n1.0\ninf\n", [], ["line 3", "'inf'", "not a finite number"]),
    ("gamma-poisson", "k\n1\n-2\n", [], ["line 3", "-2", "not a count"]),
    ("gamma-poisson", "k\n1\n2.5\n", [], ["line 3", "2.5", "not a count"]),
    ("beta-binomial", "y\n0\n1\n2\n", [], ["line 4", "2", "not 0 or 1"]),
    ("pareto-uniform", "s\n3\n-1\n", [], ["line 3", "-1", "negative"]),
    ("normal-known-variance", "x\n", [], ["no data lines"]),
    ("normal-known-variance", "", [], ["is empty"]),
    ("normal-known-variance", "1.5\n2.5\n", [], ["first line must name the columns"]),
    ("normal-known-variance", "a,b\n1,2\n", [], ["has columns a, b", "--column"]),
    ("normal-known-variance", "a,b\n1,2\n", ["--column", "c"], ["no column 'c'", "a, b"]),
    ("pareto-uniform", "s\n3\n", ["--set", "scale=0"], ["scale must be > 0", "got 0"]),
    ("beta-binomial", "y\n1\n", ["--set", "a=-1"], ["a must be > 0", "got -1"]),
    ("beta-binomial", "y\n1\n", ["--set", "a=abc"], ["'abc' is not a number"]),
    ("beta-binomial", "y\n1\n", ["--set", "c=2"], ["unknown hyperparameter 'c'", "a, b"]),
    ("beta-binomial", "y\n1\n", ["--set", "a"], ["NAME=VALUE"]),
    (
        "dirichlet-categorical",
        "c\nx\ny\nz\n",
        ["--set", "concentration=1,2"],
        ["concentration has 2 values", "3 categories"],
    ),
    ("dirichlet-categorical", "c\nx\nx\n", [], ["only one category", "--set categories"]),
    ("no-such-topic", None, [], ["unknown topic 'no-such-topic'", "bayes-compare list"]),
    ("beta-binomial", None, ["--data", "builtin:nope"], ["no builtin data set 'nope'"]),
    ("beta-binomial", None, ["--data", "missing.csv"], ["does not exist"]),
    ("beta-binomial", None, ["--draws", "0"], ["draws must be an integer >= 1", "got 0"]),
    ("beta-binomial", None, ["--alpha", "2"], ["alpha must be in (0, 1)", "got 2"]),
    ("beta-binomial", None, ["--bogus"], ["usage error", "--bogus"]),
    # regression tables
    ("linear-regression", "x,y\n1,2\n2,inf\n", [], ["line 3", "'inf'", "not a finite number"]),
    ("linear-regression", "x,y\n1,2\n2,\n", [], ["line 3", "column 'y'", "missing value"]),
    ("linear-regression", "x,z\n1,2\n", [], ["no target column 'y'", "--target"]),
    (
        "linear-regression",
        "x,y\n1,2\n",
        ["--set", "degree=-1"],
        ["degree must be a whole number >= 0", "got -1"],
    ),
    ("linear-regression", "x,y\n1,2\n", ["--set", "noise_sd=0"], ["noise_sd must be > 0"]),
    ("linear-regression-nig", "x,y\n1,2\n", ["--set", "beta0=-3"], ["beta0 must be > 0"]),
    ("linear-regression", "a,y\n1,2\n", ["--features", "a,a"], ["names a more than once"]),
    ("linear-regression", "a,y\n1,2\n", ["--features", "b"], ["no column(s) 'b'"]),
    (
        "linear-regression",
        "a,b,y\n1,2,3\n",
        ["--set", "degree=2"],
        ["polynomial features of one input", "a, b"],
    ),
    ("linear-regression", "x,y\n1,2\n", ["--column", "x"], ["--target", "--features"]),
    ("beta-binomial", "y\n1\n", ["--target", "y"], ["one column", "--column"]),
    # mixtures
    (
        "gaussian-mixture",
        "a,b\n1,2\n3,4\n",
        ["--set", "components=0"],
        ["components must be between 1 and the number of rows (2)", "got 0"],
    ),
    (
        "gaussian-mixture",
        "a,b\n1,2\n3,4\n",
        ["--set", "components=3"],
        ["components must be between 1 and the number of rows (2)", "got 3"],
    ),
    (
        "gaussian-mixture",
        "a,b\n1,2\n1,4\n2,5\n",
        ["--features", "a,b", "--set", "alpha=0.5"],
        ["alpha must be >= 1"],
    ),
    ("gaussian-mixture", "a,b\n1,2\n1,4\n1,5\n", [], ["column", "constant"]),
    ("gaussian-mixture", "a,b\n1,2\nnan,4\n", [], ["line 3", "missing value"]),
    (
        "gaussian-mixture",
        "a,b\n1,2\n2,4\n3,1\n",
        ["--set", "nu0=2"],
        ["nu0 must be an integer > 2"],
    ),
    ("gaussian-mixture", "a,b\n1,2\n", ["--column", "a"], ["--features"]),
]


@pytest.mark.parametrize("topic, text, extra, words", BAD_INPUTS)
def test_bad_input_is_one_clear_line_and_writes_nothing(
    tmp_path, capsys, topic, text, extra, words
):
    args = ["run", topic]
    if text is not None:
        args += ["--data", str(_csv(tmp_path / "data.csv", text))]
    out_dir, json_path = tmp_path / "out", tmp_path / "result.json"
    cwd = os.getcwd()
    os.chdir(tmp_path)  # relative data paths resolve here; nothing may appear in reports/
    try:
        code, out, err = _main(
            capsys, *args, *extra, "--out", str(out_dir), "--json", str(json_path)
        )
    finally:
        os.chdir(cwd)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in err and out == ""
    assert not out_dir.exists() and not json_path.exists()
    assert not (tmp_path / "reports").exists()


def test_all_rejects_per_topic_options(capsys):
    code, _, err = _main(capsys, "run", "--all", "--set", "a=2")
    assert code == 3 and "--all" in err


def test_list_and_describe(capsys):
    code, out, _ = _main(capsys, "list")
    assert code == 0
    for name in (
        "beta-binomial",
        "gamma-poisson",
        "normal-known-variance",
        "normal-inverse-gamma",
        "pareto-uniform",
        "dirichlet-categorical",
    ):
        assert name in out
    code, out, _ = _main(capsys, "describe", "normal-inverse-gamma")
    assert code == 0
    for word in ("InvGamma(alpha0, beta0)", "kappa0", "builtin:newcomb", "CSV", "mu, sigma2"):
        assert word in out


# --- real runs ----------------------------------------------------------------
def nig_textbook(x, mu0, kappa0, alpha0, beta0):
    """Murphy (2007), eqs. 86-89 and 95, written out independently of analytic/."""
    n, xbar = len(x), float(np.mean(x))
    kn = kappa0 + n
    mn = (kappa0 * mu0 + n * xbar) / kn
    an = alpha0 + n / 2
    bn = beta0 + 0.5 * np.sum((x - xbar) ** 2) + kappa0 * n * (xbar - mu0) ** 2 / (2 * kn)
    mean = [mn, bn / (an - 1)]
    cov = [[bn / (kn * (an - 1)), 0.0], [0.0, bn**2 / ((an - 1) ** 2 * (an - 2))]]
    log_ev = (
        special.gammaln(an)
        - special.gammaln(alpha0)
        + alpha0 * np.log(beta0)
        - an * np.log(bn)
        + 0.5 * np.log(kappa0 / kn)
        - n / 2 * np.log(2 * np.pi)
    )
    return mean, cov, [mn, bn / (an + 1.5)], log_ev


@pytest.mark.mcmc
@pytest.mark.verdict
def test_nig_run_prints_the_contract_with_textbook_posterior(tmp_path, capsys, test_alpha):
    """The foundation issue's "done when" command, on a user CSV."""
    x = np.random.default_rng(11).normal(2.0, 1.5, size=25)
    path = _csv(
        tmp_path / "some.csv", "id,x\n" + "".join(f"{i},{v:.17g}\n" for i, v in enumerate(x))
    )
    code, out, err = _main(
        capsys,
        "run",
        "normal-inverse-gamma",
        "--data",
        str(path),
        "--column",
        "x",
        "--set",
        "mu0=1",
        "--set",
        "kappa0=2",
        "--set",
        "alpha0=3",
        "--set",
        "beta0=4",
        "--json",
        "-",
        "--alpha",
        f"{test_alpha}",
        "--out",
        str(tmp_path / "run"),
    )
    assert out, err
    doc = json.loads(out)  # stdout is the JSON document and nothing else
    assert code == 0 and doc["verdict"] == "agree", err
    assert set(doc) >= CONTRACT
    assert set(doc["exact"]) >= EXACT_KEYS and set(doc["mcmc"]) >= MCMC_KEYS
    assert all(set(c) >= CHECK_KEYS for c in doc["checks"])
    assert {"draws", "chains", "seed", "alpha"} <= set(doc["settings"])
    assert doc["data"] == {"source": f"{path}:x", "n": 25}
    assert doc["parameters"] == ["mu", "sigma2"]
    mean, cov, mode, log_ev = nig_textbook(x, 1.0, 2.0, 3.0, 4.0)
    np.testing.assert_allclose(doc["exact"]["mean"], mean, rtol=1e-12)
    np.testing.assert_allclose(doc["exact"]["cov"], cov, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(doc["exact"]["map"], mode, rtol=1e-12)
    np.testing.assert_allclose(doc["exact"]["log_evidence"], log_ev, rtol=1e-12)
    np.testing.assert_allclose(doc["exact"]["mle"], [x.mean(), x.var()], rtol=1e-12)
    # The run is kept: draws and the same document, both readable.
    saved = json.loads((tmp_path / "run" / "result.json").read_text())
    assert saved["exact"] == doc["exact"] and saved["verdict"] == "agree"
    tree = xr.open_datatree(tmp_path / "run" / "draws.nc", engine="h5netcdf")
    draws = tree["posterior"]["mu"].values
    assert draws.shape == (doc["settings"]["chains"], doc["settings"]["draws"])
    np.testing.assert_allclose(draws.mean(), doc["mcmc"]["mean"][0], rtol=1e-12)


@pytest.mark.mcmc
def test_exit_code_is_1_on_disagreement(tmp_path, capsys, monkeypatch):
    """A planted bug through the real CLI path: verdict disagree, exit 1."""
    from compare.core import registry
    from compare.studies.planted import planted

    buggy = planted("normal-known-variance", "sd_for_var")
    monkeypatch.setitem(registry.REGISTRY, "normal-known-variance", buggy)
    code, out, _ = _main(
        capsys,
        "run",
        "normal-known-variance",
        "--data",
        "builtin:simulated",
        "--set",
        "noise_sd=2.5",
        "--json",
        "-",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 1 and json.loads(out)["verdict"] == "disagree"


@pytest.mark.mcmc
def test_exit_code_is_2_when_inconclusive(tmp_path, capsys, monkeypatch):
    """Too few draws for the ESS gate, with the runner's extension off: never `agree`, exit 2."""
    import dataclasses

    import compare.core.defaults

    monkeypatch.setattr(
        compare.core.defaults,
        "DEFAULT",
        dataclasses.replace(compare.core.defaults.DEFAULT, max_extensions=0),
    )
    code, out, err = _main(
        capsys,
        "run",
        "beta-binomial",
        "--draws",
        "60",
        "--tune",
        "200",
        "--json",
        "-",
        "--out",
        str(tmp_path / "r"),
    )
    doc = json.loads(out)
    assert code == 2 and doc["verdict"] == "inconclusive"
    assert doc["decided_by"] in ("rhat", "ess_bulk", "ess_tail") and "INCONCLUSIVE" in err
    # Every other failed gate is listed after the deciding one, in strength order.
    failed = [c["name"] for c in doc["checks"] if c["passed"] is False]
    assert sorted([doc["decided_by"], *doc["also_failed"]]) == sorted(failed)
    order = ["divergences", "rhat", "ess_bulk", "ess_tail"]
    ranks = [order.index(n) for n in [doc["decided_by"], *doc["also_failed"]]]
    assert ranks == sorted(ranks)
    if doc["also_failed"]:
        assert f"also failed: {', '.join(doc['also_failed'])}" in err


_EXIT_PROBE = """
import atexit, sys, threading, time
from compare.interfaces import cli

atexit.register(lambda: print("atexit ran"))


def late():
    time.sleep(0.3)
    print("thread done")


if {thread}:
    threading.Thread(target=late).start()
sys.argv = ["bayes-compare", "run", "no-such-topic"]
print("buffered", end=" ")  # in stdout's buffer (a pipe) until something flushes it
{exit}
"""


@pytest.mark.parametrize("thread", [False, True], ids=["main-thread", "a-thread-alive"])
@pytest.mark.parametrize("planted", [False, True], ids=["as-shipped", "bare-os-exit"])
def test_the_program_exits_quickly_with_its_code_its_output_and_atexit(thread, planted):
    """`bayes-compare` skips the interpreter's teardown (cli.program), not what a normal
    exit does: the exit code, buffered output, atexit functions, a thread still running.
    Power: a bare os._exit after main loses all but the exit code."""
    end = "import os; os._exit(cli.main())" if planted else "cli.program()"
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT_PROBE.format(thread=thread, exit=end)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3 and "unknown topic 'no-such-topic'" in proc.stderr
    expected = "buffered " + ("thread done\n" if thread else "") + "atexit ran\n"
    assert (proc.stdout == expected) is not planted, proc.stdout


@pytest.mark.mcmc
def test_report_runs_missing_topics_in_new_processes(tmp_path, capsys):
    """`report` runs the topics that have no saved run as `run --all --workers 2` does
    (`make report`'s default): in two new processes at once, each topic's files written
    here from what its process sent back; then the figures, in two processes too, and
    the same command again keeps them all. (`make report`'s own run of every topic is
    tests/conftest.py's `builtin_runs`, in one process.)"""
    topics = ["gamma-poisson", "exponential-gamma"]
    code = main(["report", *topics, "--out", str(tmp_path), "--workers", "2", "--no-worker"])
    shown = capsys.readouterr()
    assert code == 0, shown.err
    assert all(f"{name}: no saved run" in shown.out for name in topics), shown.out
    drawn = re.search(r"figures: (\d+) drawn, 0 kept from an earlier drawing", shown.out)
    assert drawn and int(drawn[1]) >= 2 * 6, shown.out  # marginals, trace, rank, ... each
    assert main(["report", *topics, "--out", str(tmp_path), "--workers", "2", "--no-worker"]) == 0
    assert f"figures: 0 drawn, {drawn[1]} kept" in capsys.readouterr().out
    for name in topics:
        doc = json.loads((tmp_path / "runs" / name / "result.json").read_text())
        assert doc["topic"] == name and doc["verdict"] in ("agree", "disagree", "inconclusive")
        assert (tmp_path / "runs" / name / "draws.nc").is_file()
        assert (tmp_path / "runs" / name / "index.html").is_file()


def test_a_first_run_all_starts_with_the_topics_declared_costliest(tmp_path):
    """With no saved run, `run --all`'s order comes from each topic's declared cost
    (`Topic.cold_seconds`); once a run is saved, from the time it took."""
    from compare.interfaces.cli_run import _measured_cost
    from compare.topics import all_topics

    topics = all_topics()
    assert sum(t.cold_seconds > 0 for t in topics) >= len(topics) // 2
    assert [_measured_cost(tmp_path / t.name) for t in topics] == [t.cold_seconds for t in topics]
    saved = tmp_path / topics[0].name
    saved.mkdir()
    (saved / "result.json").write_text(json.dumps({"timings": {"total": 1234.5}}))
    assert _measured_cost(saved) == 1234.5


def test_console_script_is_installed(tmp_path):
    """The entry point itself, in a fresh process: bad input exits 3."""
    exe = Path(sys.executable).with_name("bayes-compare")
    proc = subprocess.run(
        [str(exe), "run", "no-such-topic"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 3 and "unknown topic" in proc.stderr


def test_the_click_command_is_made_once_per_process(monkeypatch, capsys):
    """typer makes the click command anew at every ``app()`` call (70 ms of
    signatures and annotations for the 15 commands); :func:`main` makes it once and
    answers every later call with it, each call still reading its own arguments."""
    import typer

    from compare.interfaces import cli

    made = []
    real = typer.main.get_command
    monkeypatch.setattr(typer.main, "get_command", lambda app: made.append(app) or real(app))
    cli._click_command.cache_clear()
    assert main(["describe", "beta-binomial"]) == 0
    assert "beta-binomial" in capsys.readouterr().out
    assert main(["run", "beta-binomial", "--draws", "0"]) == 3
    assert "draws must be an integer >= 1, got 0" in capsys.readouterr().err
    assert main(["describe", "gamma-poisson"]) == 0
    assert "gamma-poisson" in capsys.readouterr().out
    assert made == [cli.app]
