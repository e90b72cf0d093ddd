"""User-defined topics: a topic file run end to end through the CLI, installed
packages' entry points (a real `bayes-compare` subprocess), and files that break
the protocol (what is missing named)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import compare
from compare.core.registry import REGISTRY, InputError
from compare.interfaces.cli import main
from compare.topics.user import ORIGINS, TOPIC_FILES_ENV, load_topic_file

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "my_topic.py"
NAME = "failure-waits"


@pytest.fixture
def unregister():
    """Topics registered by a test are removed afterwards (other tests list every topic)."""
    from compare.topics import all_topics

    all_topics()  # the builtins first, so they are in the snapshot
    before = set(REGISTRY)
    env = os.environ.get(TOPIC_FILES_ENV)
    yield
    for name in set(REGISTRY) - before:
        REGISTRY.pop(name)
        ORIGINS.pop(name, None)
    if env is None:
        os.environ.pop(TOPIC_FILES_ENV, None)
    else:
        os.environ[TOPIC_FILES_ENV] = env


def _cli(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compare.interfaces.cli", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env=env,
    )


@pytest.mark.mcmc
@pytest.mark.verdict
def test_topic_file_run_report_export_end_to_end(tmp_path, test_alpha, unregister, capsys):
    """`bayes-compare run --topic-file ...` (its entry function, in this process), then
    report, export, describe, sensitivity and sbc --exact-only on the same topic, and
    compare.run from Python."""
    runs = tmp_path / "runs"
    json_path = tmp_path / "run.json"
    assert (
        main(
            [
                "run",
                "--topic-file",
                str(EXAMPLE),
                NAME,
                "--draws",
                "1000",
                "--alpha",
                repr(test_alpha),
                "--out",
                str(runs / NAME),
                "--json",
                str(json_path),
            ]
        )
        == 0
    )
    doc = json.loads(json_path.read_text())
    assert doc["topic"] == NAME and doc["verdict"] == "agree"
    assert doc["data"] == {"source": "builtin:pump", "n": 12}
    assert {c["name"]: c["passed"] for c in doc["checks"]}["map"] is True
    assert "verdict: AGREE" in capsys.readouterr().out
    # The Python API runs registered topics too (reusing the model the CLI compiled).
    result = compare.run(NAME, settings={"draws": 1000, "alpha": test_alpha}, rate=4.0)
    assert result.verdict == "agree" and set(result.to_dict()) == set(doc)
    assert result.to_dict()["exact"]["mean"] == doc["exact"]["mean"]
    # The report and export commands work on it.
    assert (
        main(
            ["report", "--topic-file", str(EXAMPLE), NAME, "--out", str(tmp_path), "--workers", "1"]
        )
        == 0
    )
    page = (runs / NAME / "index.html").read_text()
    assert 'id="verdict">agree<' in page and "Gamma prior on the rate" in page
    assert main(["export", "--topic-file", str(EXAMPLE), NAME, "--out", str(tmp_path / "pdb")]) == 0
    assert "exact draws of 1 parameter(s)" in capsys.readouterr().out
    assert main(["describe", NAME]) == 0  # registered for the rest of the process
    # The sensitivity sweep and the exact side of SBC (no cluster) run on it too.
    assert (
        main(
            [
                "sensitivity",
                "--topic-file",
                str(EXAMPLE),
                NAME,
                "--param",
                "rate",
                "--grid",
                "1,4,16",
                "--out",
                str(tmp_path / "sens"),
            ]
        )
        == 0
    )
    assert (tmp_path / "sens" / "sensitivity.json").is_file()
    assert (
        main(
            [
                "sbc",
                "--topic-file",
                str(EXAMPLE),
                NAME,
                "--exact-only",
                "--sims",
                "200",
                "--alpha",
                repr(test_alpha),
                "--out",
                str(tmp_path / "sbc"),
            ]
        )
        == 0
    )


BROKEN = {
    "missing parts": (
        "TOPIC = {'name': 'broken', 'title': 't', 'model': 'm', "
        "'data_kind': 'reals', 'hyperparameters': (), 'variables': ('mu',), "
        "'builtin': ()}\n",
        ["TOPIC is missing 'solve', 'build_model', 'model_data', 'simulate'"],
    ),
    "no topic": ("x = 1\n", ["defines no topic", "TOPIC = compare.core.registry.Topic(...)"]),
    "not a topic": ("TOPIC = 3\n", ["expected a compare.core.registry.Topic", "got int"]),
    "syntax": ("TOPIC = (\n", ["line 1", "SyntaxError"]),
    "unknown field": (None, ["unknown field(s) 'colour'"]),
    "wrong variables": (None, ["has no variable(s) ['nope']", "its free variables are ['lam']"]),
    "clash": (
        None,
        ["a topic named 'beta-binomial' is already registered", "give yours another name"],
    ),
}


def _variant(tmp_path: Path, case: str) -> Path:
    """The example topic file with one part broken."""
    text = EXAMPLE.read_text()
    if case == "unknown field":
        text = text.replace("TOPIC = Topic(", "TOPIC = dict(colour='red', ").replace(
            'name="failure-waits"', 'name="failure-waits-2"'
        )
    elif case == "wrong variables":
        text = text.replace("variables=VARIABLES,", "variables=('nope',),").replace(
            'name="failure-waits"', 'name="failure-waits-3"'
        )
    elif case == "clash":
        text = text.replace('name="failure-waits"', 'name="beta-binomial"')
    path = tmp_path / "topic.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_protocol_violations_are_named(case, tmp_path, unregister, capsys):
    text, words = BROKEN[case]
    if text is None:
        path = _variant(tmp_path, case)
    else:
        path = tmp_path / "topic.py"
        path.write_text(text)
    with pytest.raises(InputError) as err:
        load_topic_file(path)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    # Through the CLI: exit code 3, one line, nothing run.
    assert main(["run", "--topic-file", str(path), "whatever", "--out", str(tmp_path / "out")]) == 3
    stderr = capsys.readouterr().err
    assert stderr.startswith("error: ") and stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()
    assert main(["run", "--topic-file", str(tmp_path / "missing.py"), NAME]) == 3
    assert "does not exist" in capsys.readouterr().err


def test_installed_package_entry_point(tmp_path):
    """A package on the path with entry points in group bayes_compare.topics.

    One entry point names a good topic (a copy of the example renamed), one a
    module without a topic: the good one is listed, the broken one is a warning.
    The same process also inherits a topic file from BAYES_COMPARE_TOPIC_FILES,
    as Dask workers of `sbc --topic-file` do.
    """
    pkg = tmp_path / "site"
    pkg.mkdir()
    (pkg / "pump_topics.py").write_text(
        EXAMPLE.read_text().replace('name="failure-waits"', 'name="pump-waits"')
    )
    (pkg / "empty_topics.py").write_text("x = 1\n")
    dist = pkg / "pump_topics-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pump-topics\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent("""\
        [bayes_compare.topics]
        pump = pump_topics:TOPIC
        empty = empty_topics
        """)
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(pkg), str(ROOT)]),
        TOPIC_FILES_ENV: str(EXAMPLE),
    }  # as a parent process that loaded it sets it
    out = _cli("list", env=env)
    assert out.returncode == 0, out.stderr
    assert "pump-waits" in out.stdout and NAME in out.stdout
    assert "skipped entry point 'empty'" in out.stderr and "defines no TOPIC" in out.stderr
    # With the builtin topics' cards kept (compare/topics/cards.py), an installed
    # entry point alone still makes `list` load the topics, and shows its topic.
    cold = {k: v for k, v in os.environ.items() if k != TOPIC_FILES_ENV}
    cold["BAYES_COMPARE_CACHE_DIR"] = str(tmp_path / "cache")
    assert _cli("list", env=cold).returncode == 0
    assert list((tmp_path / "cache" / "cards").glob("*.json"))
    out = _cli("list", env={**cold, "PYTHONPATH": env["PYTHONPATH"]})
    assert out.returncode == 0 and "pump-waits" in out.stdout, out.stderr
