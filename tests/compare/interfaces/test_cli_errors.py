"""The CLI's failure contract: bad input is exit 3 (one line, nothing written, no
compile), an unexpected exception is exit 4 (one line and a saved traceback).

The corpus runs in-process through :func:`compare.interfaces.cli.main`, inside a folder
holding a few odd files; every case must be refused before any model is
compiled or sampled (the guard below turns reaching a sampler into a test
failure) and must leave the folder exactly as it was.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compare.interfaces import cli
from compare.interfaces.cli import EXIT_BAD_INPUT, EXIT_CRASH, main


class ReachedSampling(BaseException):
    """Raised by the guard: a bad input got as far as compiling or sampling."""


@pytest.fixture
def guard(monkeypatch):
    """Fail any case that reaches a compile, a sampler, an SBC study or a report build."""
    import pymc as pm

    from compare.core import sampling
    from compare.outputs import report
    from compare.studies import sbc

    def stop(*_a, **_k):
        raise ReachedSampling("bad input reached compiling or sampling")

    monkeypatch.setattr(sampling, "compile_model", stop)
    monkeypatch.setattr(sampling.ModelCache, "get", stop)
    monkeypatch.setattr(pm, "sample", stop)
    monkeypatch.setattr(pm, "sample_smc", stop)
    monkeypatch.setattr(sbc, "run_sbc", stop)
    monkeypatch.setattr(report, "build_site", stop)


FILES = {
    "n.csv": b"y,x\n1,2\n\xff,3\n",  # not UTF-8 (table)
    "n1.csv": b"x\n1\n\xff\n",  # not UTF-8 (one column)
    "np.csv": b"a,b\n1,2\n3,\xfe\n",  # not UTF-8 (points)
    "nh.csv": b"\xffy,x\n1,2\n",  # not UTF-8 in the header
    "good.csv": b"x,y\n1,2\n2,3\n3,5\n4,4\n",
    "pts.csv": b"a,b\n1,2\n2,1\n3,4\n4,3\n5,5\n",
    "bin.csv": b"y\n0\n1\n1\n",
    "e.txt": b"x\n",  # an existing file
    "d/keep": b"",  # an existing directory
    "runs/beta-binomial/result.json": b'{"topic": "beta-binomial", "verd',  # truncated
    "bad_topic.py": b"TOPIC = 3\n",
}

BIG = str(2**70)
S = "--sims"
# (argv, a word the single stderr line must contain)
CORPUS: list[tuple[list[str], str]] = [
    # -- non-UTF-8 CSV: every reader, every command that reads data
    (["run", "linear-regression", "--data", "n.csv"], "0xff"),
    (["run", "linear-regression-nig", "--data", "n.csv"], "0xff"),
    (["run", "gaussian-mixture", "--data", "n.csv"], "0xff"),
    (["run", "gaussian-mixture", "--data", "np.csv"], "0xfe"),
    (["run", "naive-bayes", "--data", "n.csv"], "0xff"),
    (["run", "bayes-optimal", "--data", "n.csv", "--target", "y"], "0xff"),
    (["run", "gaussian-classifier", "--data", "n.csv"], "0xff"),
    (["run", "logistic-regression", "--data", "n.csv"], "0xff"),
    (["run", "gaussian-process", "--data", "n.csv"], "0xff"),
    (["run", "normal-known-variance", "--data", "n1.csv"], "0xff"),
    (["run", "beta-binomial", "--data", "n1.csv"], "0xff"),
    (["run", "dirichlet-categorical", "--data", "n1.csv"], "0xff"),
    (["run", "linear-regression", "--data", "nh.csv"], "0xff"),
    (["run", "linear-regression", "--data", "n.csv", "--stream"], "0xff"),
    (
        [
            "sensitivity",
            "linear-regression",
            "--param",
            "noise_sd",
            "--grid",
            "1,2",
            "--data",
            "n.csv",
        ],
        "0xff",
    ),
    (
        [
            "sensitivity",
            "normal-known-variance",
            "--param",
            "noise_sd",
            "--grid",
            "1,2",
            "--data",
            "n1.csv",
        ],
        "0xff",
    ),
    (["export", "linear-regression", "--out", "o", "--data", "n.csv"], "0xff"),
    (["export", "gamma-poisson", "--out", "o", "--data", "n1.csv"], "0xff"),
    (["evidence", "linear-regression", "--data", "n.csv"], "0xff"),
    # -- seeds outside what numpy and nutpie accept
    (["run", "beta-binomial", "--seed", "-1"], "-1"),
    (["run", "beta-binomial", "--seed", BIG], BIG),
    (["run", "linear-regression", "--seed", "-5"], "-5"),
    (
        [
            "sensitivity",
            "beta-binomial",
            "--param",
            "a",
            "--grid",
            "1,2",
            "--mcmc-at",
            "2",
            "--seed",
            "-1",
        ],
        "-1",
    ),
    (
        [
            "sensitivity",
            "beta-binomial",
            "--param",
            "a",
            "--grid",
            "1,2",
            "--mcmc-at",
            "2",
            "--seed",
            BIG,
        ],
        BIG,
    ),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--seed", "3"], "--seed"),
    (["export", "beta-binomial", "--out", "o", "--seed", "-1"], "-1"),
    (["export", "beta-binomial", "--out", "o", "--seed", BIG], BIG),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--seed", "-1"], "-1"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--seed", BIG], BIG),
    (["sbc", "beta-binomial", S, "10", "--seed", "-1"], "-1"),
    (["evidence", "linear-regression", "--seed", "-1"], "-1"),
    (["evidence", "linear-regression", "--seed", BIG], BIG),
    # -- output paths: a file where a folder goes, a folder where a file goes, empty
    (["run", "beta-binomial", "--out", "e.txt"], "e.txt"),
    (["run", "beta-binomial", "--out", "e.txt/sub"], "e.txt"),
    (["run", "beta-binomial", "--out", ""], "--out"),
    (["run", "beta-binomial", "--out", "o", "--json", "d"], "'d'"),
    (["run", "beta-binomial", "--out", "o", "--json", ""], "--json"),
    (["run", "beta-binomial", "--out", "o", "--json", "e.txt/r.json"], "e.txt"),
    (["run", "--all", "--out", "e.txt"], "e.txt"),
    (["run", "--all", "--out", ""], "--out"),
    (["evidence", "linear-regression", "--json", "d"], "'d'"),
    (["evidence", "linear-regression", "--json", ""], "--json"),
    (["evidence", "linear-regression", "--json", "e.txt/x.json"], "e.txt"),
    (["summary", "--runs", "runs", "--out", "d"], "'d'"),
    (["summary", "--runs", "runs", "--out", ""], "--out"),
    (["summary", "--runs", "runs", "--out", "e.txt/s.md"], "e.txt"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--out", "e.txt"], "e.txt"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--out", ""], "--out"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--json", "d"], "'d'"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--json", ""], "--json"),
    (["export", "beta-binomial", "--out", "e.txt"], "e.txt"),
    (["export", "beta-binomial", "--out", ""], "--out"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--out", "e.txt"], "e.txt"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--out", ""], "--out"),
    (["sbc", "beta-binomial", S, "10", "--out", "e.txt"], "e.txt"),
    (["report", "beta-binomial", "--out", "e.txt"], "e.txt"),
    (["report", "beta-binomial", "--out", ""], "--out"),
    (["report", "beta-binomial", "--out", "o", "--runs", "e.txt"], "e.txt"),
    (["report", "beta-binomial", "--out", "o", "--runs", ""], "--runs"),
    (["audit", "--out", "e.txt"], "e.txt"),
    # -- inference methods and the audit matrix
    (["run", "beta-binomial", "--method", "hmc"], "hmc"),
    (["run", "bayes-optimal", "--method", "laplace"], "laplace"),
    (["run", "beta-binomial", "--method", "advi", "--tolerance-sd", "0"], "tolerance_sd"),
    (["audit", "--methods", "hmc"], "hmc"),
    (["audit", "--topics", "no-such-topic"], "no-such-topic"),
    (["audit", "--seeds", "0"], "--seeds"),
    (["audit", "--scheduler", "127.0.0.1:8786"], "127.0.0.1:8786"),
    # -- unbounded sizes
    (["sensitivity", "beta-binomial", "--param", "a", "--log-grid", "1:10:100000000"], "100000000"),
    (["sensitivity", "beta-binomial", "--param", "a", "--log-grid", "1:10:1e12"], "1e12"),
    (
        [
            "sensitivity",
            "beta-binomial",
            "--param",
            "a",
            "--grid",
            ",".join(str(i + 1) for i in range(100_001)),
        ],
        "100001",
    ),
    (["evidence", "linear-regression", "--degrees", "0-100000000"], "100000000"),
    (["evidence", "linear-regression", "--degrees", "0,500"], "500"),
    (["sbc", "beta-binomial", S, "1000000000000", "--exact-only"], "1000000000000"),
    # -- options that would be silently ignored
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--set", "a=3"], "a=3"),
    # (beta-binomial's exact power-scaling reads --draws x --chains; the GP's does not exist)
    (
        [
            "sensitivity",
            "gaussian-process",
            "--param",
            "noise_sd",
            "--grid",
            "0.1,1",
            "--draws",
            "100",
        ],
        "--draws",
    ),
    (
        [
            "sensitivity",
            "gaussian-process",
            "--param",
            "noise_sd",
            "--grid",
            "0.1,1",
            "--chains",
            "2",
        ],
        "--chains",
    ),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--tune", "10"], "--tune"),
    (
        ["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--alpha", "0.01"],
        "--alpha",
    ),
    (["run", "beta-binomial", "--stream"], "--stream"),
    (["run", "linear-regression", "--stream"], "--stream"),
    (["run", "--all", "--stream"], "--stream"),
    (["run", "gaussian-mixture", "--data", "pts.csv", "--stream"], "--stream"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--workers", "2"], "--workers"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--scheduler", "tcp://x:1"], "--scheduler"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--draws", "100"], "--draws"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--chains", "2"], "--chains"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--tune", "10"], "--tune"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--thin", "2"], "--thin"),
    (["sbc", "beta-binomial", S, "10", "--exact-only", "--resume"], "--resume"),
    (["evidence", "linear-regression", "--set", "degree=3"], "degree"),
    (["evidence", "linear-regression", "--smc-degrees", "none", "--seed", "3"], "--seed"),
    (["report", "beta-binomial", "--all"], "--all"),
    # -- values out of range or of the wrong kind
    (["run", "beta-binomial", "--draws", "0"], "got 0"),
    (["run", "beta-binomial", "--draws", "-3"], "-3"),
    (["run", "beta-binomial", "--chains", "0"], "got 0"),
    (["run", "beta-binomial", "--tune", "-1"], "-1"),
    (["run", "beta-binomial", "--alpha", "0"], "alpha"),
    (["run", "beta-binomial", "--alpha", "1"], "alpha"),
    (["run", "beta-binomial", "--alpha", "nan"], "nan"),
    (["run", "beta-binomial", "--alpha", "-inf"], "-inf"),
    (["run", "beta-binomial", "--draws", "abc"], "abc"),
    (["run", "beta-binomial", "--draws", BIG], BIG),
    (["run", "beta-binomial", "--chains", BIG], BIG),
    (["run", "beta-binomial", "--tune", BIG], BIG),
    (["run", "beta-binomial", "--set", "a=-1"], "a must be > 0"),
    (["run", "beta-binomial", "--set", "a=nan"], "nan"),
    (["run", "beta-binomial", "--set", "a=inf"], "inf"),
    (["run", "beta-binomial", "--set", "a=1e400"], "a must be finite"),
    (["run", "beta-binomial", "--set", "=2"], "NAME=VALUE"),
    (["run", "beta-binomial", "--set", "zz=2"], "zz"),
    (["run", "beta-binomial", "--set", "a=é"], "é"),
    (["run", "gamma-poisson", "--set", "shape=0"], "shape"),
    (["run", "normal-known-variance", "--set", "noise_sd=-2"], "noise_sd"),
    (["run", "dirichlet-categorical", "--set", "concentration=0"], "concentration"),
    (["run", "linear-regression", "--set", "degree=1.5"], "degree"),
    (["run", "linear-regression", "--set", "intercept=maybe"], "maybe"),
    (["run", "gaussian-mixture", "--set", "components=0"], "components"),
    (["run", "gaussian-mixture", "--set", "components=abc"], "abc"),
    (["run", "gaussian-process", "--set", "lengthscale=-1"], "lengthscale"),
    (["run", "gaussian-process", "--set", "kernel=nope"], "nope"),
    (["run", "logistic-regression", "--set", "prior_sd=0"], "prior_sd"),
    (["run", "naive-bayes", "--set", "variant=nope"], "nope"),
    (["run", "bayes-optimal", "--set", "noise=2"], "noise"),
    (["run", "gaussian-classifier", "--set", "kappa0=-1"], "kappa0"),
    (["run", "logistic-regression", "--sizes", "abc"], "abc"),
    (["run", "beta-binomial", "--sizes", "1,2"], "--sizes"),
    (["run", "no-such-topic"], "no-such-topic"),
    (["run"], "TOPIC"),
    (["run", "beta-binomial", "--data", "builtin:nope"], "nope"),
    (["run", "beta-binomial", "--data", "missing.csv"], "missing.csv"),
    (["run", "beta-binomial", "--data", "d"], "'d'"),
    (["run", "beta-binomial", "--data", ""], "--data"),
    (["run", "beta-binomial", "--data", "good.csv"], "good.csv"),
    (["run", "beta-binomial", "--data", "bin.csv", "--column", "nope"], "nope"),
    (["run", "linear-regression", "--data", "good.csv", "--target", "nope"], "nope"),
    (["run", "linear-regression", "--data", "good.csv", "--features", "x,nope"], "nope"),
    (["run", "linear-regression", "--data", "good.csv", "--features", ""], "--features"),
    (["run", "linear-regression", "--column", "x"], "--column"),
    (["run", "beta-binomial", "--target", "y"], "--target"),
    (["run", "beta-binomial", "--features", "y"], "--features"),
    (["run", "--all", "beta-binomial"], "--all"),
    (["run", "--all", "--json", "r.json"], "--json"),
    (["run", "beta-binomial", "--topic-file", "missing.py"], "missing.py"),
    (["run", "beta-binomial", "--topic-file", "bad_topic.py"], "bad_topic.py"),
    (["run", "beta-binomial", "--bogus"], "--bogus"),
    (["run", "beta-binomial", "--draws"], "--draws"),
    (["describe", "nope"], "nope"),
    (["describe"], "topic"),
    (["describe", "beta-binomial", "--topic-file", "missing.py"], "missing.py"),
    (["doctor", "--jsn"], "--jsn"),
    (["doctor", "extra"], "extra"),
    (["list", "--topic-file", "missing.py"], "missing.py"),
    (["list", "--topic-file", "d"], "'d'"),
    (["list", "--topic-file", "n.csv"], "n.csv"),
    (["evidence", "beta-binomial"], "beta-binomial"),
    (["evidence", "nope"], "nope"),
    (["evidence", "linear-regression", "--degrees", "abc"], "abc"),
    (["evidence", "linear-regression", "--degrees", "-1"], "-1"),
    (["evidence", "linear-regression", "--degrees", "5-2"], "5-2"),
    (["evidence", "linear-regression", "--degrees", ""], "--degrees"),
    (["evidence", "linear-regression", "--smc-degrees", "abc"], "abc"),
    (["evidence", "linear-regression", "--smc-degrees", "11"], "11"),
    (["evidence", "linear-regression", "--data", "missing.csv"], "missing.csv"),
    (["evidence", "linear-regression", "--set", "noise_sd=0"], "noise_sd"),
    (["evidence", "linear-regression", "--data", "good.csv", "--features", "x,y"], "y"),
    (["summary", "--runs", "d"], "'d'"),
    (["summary", "--runs", "missing"], "missing"),
    (["report", "nope", "--out", "o"], "nope"),
    (["report", "beta-binomial", "--out", "o", "--workers", "0"], "--workers"),
    (["report", "beta-binomial", "--out", "o", "--workers", "-2"], "-2"),
    (["sensitivity", "nope", "--param", "a", "--grid", "1,2"], "nope"),
    (["sensitivity", "beta-binomial", "--param", "zz", "--grid", "1,2"], "zz"),
    (["sensitivity", "beta-binomial", "--grid", "1,2"], "--param"),
    (["sensitivity", "beta-binomial", "--param", "a"], "--grid"),
    (
        ["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--log-grid", "1:2:3"],
        "--log-grid",
    ),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "abc"], "abc"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1"], "1"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,nan"], "nan"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "-1,2"], "-1"),
    (["sensitivity", "beta-binomial", "--param", "a", "--log-grid", "0:1:3"], "0:1:3"),
    (["sensitivity", "beta-binomial", "--param", "a", "--log-grid", "1:2:1.5"], "1:2:1.5"),
    (["sensitivity", "beta-binomial", "--param", "a", "--log-grid", "1:2"], "1:2"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--mcmc-at", "-1"], "-1"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--mcmc-at", "5"], "5"),
    (["sensitivity", "gaussian-mixture", "--param", "alpha", "--grid", "1,2"], "gaussian-mixture"),
    (["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--data", "n.csv"], "0xff"),
    (["export", "beta-binomial"], "--out"),
    (["export", "nope", "--out", "o"], "nope"),
    (["export", "beta-binomial", "--out", "o", "--format", "stan"], "stan"),
    (["export", "beta-binomial", "--out", "o", "--set", "a=0"], "a must be > 0"),
    (["export", "beta-binomial", "--out", "o", "--data", "missing.csv"], "missing.csv"),
    (["export", "logistic-regression", "--out", "o"], "logistic-regression"),
    (["sbc", "beta-binomial", S, "0"], "--sims"),
    (["sbc", "beta-binomial", S, "-5"], "-5"),
    (["sbc", "nope", S, "10"], "nope"),
    (["sbc", "beta-binomial", S, "10", "--n", "0"], "--n"),
    (["sbc", "beta-binomial", S, "10", "--thin", "0"], "--thin"),
    (["sbc", "beta-binomial", S, "10", "--draws", "0"], "--draws"),
    (["sbc", "beta-binomial", S, "10", "--workers", "0"], "--workers"),
    (
        ["sbc", "beta-binomial", S, "10", "--workers", "2", "--scheduler", "tcp://x:1"],
        "--scheduler",
    ),
    (["sbc", "beta-binomial", S, "10", "--alpha", "2"], "alpha"),
    (["sbc", "beta-binomial", S, "10", "--set", "a=0"], "a must be > 0"),
    (["nonsense"], "nonsense"),
    # -- names the file system refuses (found by the fuzz test)
    (["run", "beta-binomial", "--out", "x" * 300], "255 bytes"),
    (["run", "beta-binomial", "--out", "o", "--json", "x" * 300], "255 bytes"),
    (["run", "beta-binomial", "--data", "x" * 300], "File name too long"),
    (["run", "beta-binomial", "--topic-file", "x" * 300], "File name too long"),
    (["export", "beta-binomial", "--out", "o/" + "x" * 300], "255 bytes"),
    (["summary", "--runs", "runs", "--out", "x" * 300], "255 bytes"),
]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def site(tmp_path):
    for name, content in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def _id(case) -> str:
    argv, _ = case
    text = " ".join(a if len(a) < 30 else a[:12] + "..." for a in argv)
    return text or "empty"


@pytest.mark.parametrize("argv, word", CORPUS, ids=[_id(c) for c in CORPUS])
def test_bad_input_corpus(site, guard, capsys, argv, word):
    """Exit 3, one stderr line naming the value, no traceback, nothing written, no compile."""
    before = _tree(site)
    code = main(list(argv))
    out = capsys.readouterr()
    assert code == EXIT_BAD_INPUT, out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert word in lines[0], lines[0]
    assert "Traceback" not in out.err + out.out
    assert _tree(site) == before


def test_corpus_is_large_and_covers_every_command():
    commands = {c.name or c.callback.__name__ for c in cli.app.registered_commands}
    used = {argv[0] for argv, _ in CORPUS if argv}
    assert len(CORPUS) >= 130
    assert commands <= used, commands - used


# --- exit 4: an unexpected exception is never a verdict -------------------------
#: For each command, a valid command line and the function its body calls
#: first that can be made to raise.
CRASH_POINTS = {
    "doctor": (["doctor"], "compare.interfaces.cli_doctor", "report"),
    "list": (["list"], "compare.topics", "all_topics"),
    "describe": (["describe", "beta-binomial"], "compare.topics", "get_topic"),
    "run": (["run", "beta-binomial", "--out", "o"], "compare.core.runner", "run"),
    "evidence": (["evidence", "linear-regression"], "compare.topics._regression", "evidence_table"),
    "summary": (
        ["summary", "--runs", "runs", "--out", "s.md"],
        "compare.outputs.document",
        "load_runs",
    ),
    "report": (["report", "beta-binomial", "--out", "o"], "compare.topics", "get_topic"),
    "sensitivity": (
        ["sensitivity", "beta-binomial", "--param", "a", "--grid", "1,2", "--out", "o"],
        "compare.studies.sensitivity",
        "sensitivity",
    ),
    "sbc": (
        ["sbc", "beta-binomial", S, "10", "--exact-only", "--out", "o"],
        "compare.studies.sbc",
        "run_sbc",
    ),
    "export": (
        ["export", "beta-binomial", "--out", "o"],
        "compare.outputs.export",
        "export_posteriordb",
    ),
    "audit": (
        ["audit", "--topics", "beta-binomial", "--methods", "nutpie", "--out", "o"],
        "compare.core.cluster",
        "connect",
    ),
}


def test_every_command_has_a_crash_test():
    commands = {c.name or c.callback.__name__ for c in cli.app.registered_commands}
    assert commands == set(CRASH_POINTS), (
        "a command was added or removed: give it a CRASH_POINTS entry"
    )


@pytest.mark.parametrize("command", sorted(CRASH_POINTS))
def test_unexpected_exception_exits_4_with_one_line(site, capsys, monkeypatch, tmp_path, command):
    import importlib

    argv, module, name = CRASH_POINTS[command]
    if command == "summary":  # summary needs a run folder to get past its checks
        (site / "runs" / "beta-binomial" / "result.json").write_text(
            '{"topic": "beta-binomial", "verdict": "agree"}'
        )

    def boom(*_a, **_k):
        raise RuntimeError("planted failure\nsecond line")

    monkeypatch.setattr(importlib.import_module(module), name, boom)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code = main(argv)
    out = capsys.readouterr()
    assert code == EXIT_CRASH == 4, out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert "RuntimeError: planted failure" in lines[0] and command in lines[0]
    assert "Traceback" not in out.err
    saved = Path(lines[0].rsplit(" ", 1)[-1])
    assert saved.is_file() and saved.parent == tmp_path
    text = saved.read_text()
    assert "Traceback" in text and "planted failure" in text and "boom" in text


def _fresh_process(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``script`` in a new interpreter at the repository's root, its crash
    files in ``tmp_path``."""
    return subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )


def test_crash_exit_code_from_a_fresh_process(tmp_path):
    """`python -m compare.interfaces.cli`: the module's __main__ path maps a crash to 4 as well."""
    script = (
        "import runpy, sys\n"
        "import compare.topics.cards as cards\n"
        "def boom():\n"
        "    raise ZeroDivisionError('planted in a fresh process')\n"
        "cards.all_cards = boom\n"
        "sys.argv = ['bayes-compare', 'list']\n"
        "runpy.run_module('compare.interfaces.cli', run_name='__main__')\n"
    )
    proc = _fresh_process(script, tmp_path)
    assert proc.returncode == EXIT_CRASH, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "ZeroDivisionError: planted" in lines[0], proc.stderr
    assert Path(lines[0].rsplit(" ", 1)[-1]).parent == tmp_path


def test_a_command_module_that_cannot_import_is_a_crash_and_list_still_works(tmp_path):
    """`main` imports a command's module when the command is asked for: one that
    cannot be imported (a broken install) is exit 4 with its one line, and `list`,
    which does not need it, still runs."""
    script = (
        "import sys\n"
        "sys.modules['compare.interfaces.cli_run'] = None  # planted: import fails\n"
        "from compare.interfaces.cli import main\n"
        'sys.stderr.write(f\'CODES {main(["list"])} {main(["run", "beta-binomial"])}\\n\')\n'
    )
    proc = _fresh_process(script, tmp_path)
    assert f"CODES 0 {EXIT_CRASH}" in proc.stderr, proc.stderr
    crash = [ln for ln in proc.stderr.splitlines() if ln.startswith("internal error")]
    assert len(crash) == 1 and "ModuleNotFoundError" in crash[0], proc.stderr


def test_sbc_where_every_fit_failed_is_a_crash_not_inconclusive(tmp_path):
    """Worker-side failures: a few failed fits are data, all of them failing is exit 4."""
    from types import SimpleNamespace

    from compare.interfaces.cli_sbc import EveryFitFailed, _check_not_all_failed
    from compare.studies.sbc import SbcCounts

    def result(fitted, failed):
        return SimpleNamespace(
            counts=SbcCounts(
                requested=fitted + failed,
                done=fitted + failed,
                fitted=fitted,
                failed=failed,
                unconverged=0,
            ),
            throughput={},
            errors={"3": "ValueError: planted", "7": "ValueError: later"},
        )

    _check_not_all_failed(result(fitted=8, failed=2), tmp_path)  # data: no exception
    with pytest.raises(EveryFitFailed, match=r"all 10 fits failed.*simulation 3: ValueError"):
        _check_not_all_failed(result(fitted=0, failed=10), tmp_path)
    assert issubclass(EveryFitFailed, Exception)  # main() maps it to exit 4


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_utf8_check_names_line_and_byte_across_block_boundaries(tmp_path, chunk):
    """The one strict reader: the right line and byte wherever the 1 MiB blocks split."""
    from compare.core.data import check_text_file
    from compare.core.registry import InputError

    good = tmp_path / "good.csv"
    good.write_bytes(("x\n" + "é€😀\n" * 50).encode())  # 2-, 3- and 4-byte characters
    check_text_file(good, chunk_bytes=chunk)
    for content, line, byte, shown in [
        (("x\n" + "é\n" * 40).encode() + b"ab\xffc\n", 42, 3, "byte 0xff"),
        (b"\xfex\n1\n", 1, 1, "byte 0xfe"),
        ("x\né\n".encode() + b"1,\x002\n", 3, 3, "NUL byte"),
        (b"x\n" + "é".encode()[:1] + b"\n", 2, 1, "byte 0xc3"),
    ]:
        path = tmp_path / f"bad{line}.csv"
        path.write_bytes(content)
        with pytest.raises(InputError) as info:
            check_text_file(path, chunk_bytes=chunk)
        text = str(info.value)
        assert f"line {line}, byte {byte} of the line" in text and shown in text, text
