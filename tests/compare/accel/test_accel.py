"""The accelerators' switch and version guards (compare/accel/__init__.py), and `doctor`.

What a user relies on: an upgrade of a package an accelerator reaches into costs
speed, never a crash or another verdict. The upgrade is planted for real: a
distribution's metadata claiming numba 0.99.0 (or nutpie 0.99.0) ahead of the
installed one on the path, which is what ``importlib.metadata`` (and pip) then
report. The accelerators that reach into it stay off, ``doctor`` says why, numba
is left as released, and a real run still agrees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compare import accel

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("value", "on"), [(None, True), ("1", True), (" 1 ", True), ("0", False)])
def test_the_switch_reads_0_and_1(value: str | None, on: bool) -> None:
    environ = {} if value is None else {accel.ENV: value}
    assert accel.setting(environ=environ) is on


@pytest.mark.parametrize("value", ["2", "yes", "off", "", "true"])
def test_any_other_value_is_refused_naming_the_variable_and_its_values(value: str) -> None:
    with pytest.raises(accel.SettingError, match=r"BAYES_COMPARE_ACCEL must be 0 .* or 1") as e:
        accel.setting(environ={accel.ENV: value})
    assert repr(value) in str(e.value)


def _command(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``bayes-compare ARGS`` in a new process (python ``-m``, or ``-c`` with a script)."""
    head = args[:2] if args[0] == "-c" else ["-m", "compare.interfaces.cli"]
    rest = args[2:] if args[0] == "-c" else args
    return subprocess.run(
        [sys.executable, *head, *rest],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_a_bad_value_exits_3_with_one_line_before_anything_runs(tmp_path: Path) -> None:
    env = {**os.environ, accel.ENV: "fast", "BAYES_COMPARE_CACHE_DIR": str(tmp_path / "c")}
    done = _command(["run", "beta-binomial", "--out", str(tmp_path / "out")], env)
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "BAYES_COMPARE_ACCEL" in lines[0] and "'fast'" in lines[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    ("text", "key"),
    [("0.68.0", (0, 68, 0)), ("0.69.0rc1", (0, 69, 0)), ("2026.9.0", (2026, 9, 0)),
     ("3.3.8+local", (3, 3, 8)), ("1.18.1.dev0", (1, 18, 1)), ("0.16", (0, 16))],
)  # fmt: skip
def test_versions_compare_by_their_numbers(text: str, key: tuple[int, ...]) -> None:
    assert accel._version_key(text) == key


def test_every_accelerator_is_known_by_its_module_and_declares_what_it_reaches() -> None:
    names = [a.name for a in accel.ACCELERATORS]
    assert len(names) == len(set(names))
    for accelerator in accel.ACCELERATORS:
        module = __import__(accelerator.module, fromlist=["NAME"])
        assert accelerator.name == module.NAME
        for need in accelerator.verified:
            assert accel._version_key(need.low) < accel._version_key(need.below)
    private = {"numba-lazy-code", "numba-cache", "compiled-cache", "lazy-dask", "scipy-docs"}
    assert all(accel._BY_NAME[n].verified for n in private)


def _fake_distribution(folder: Path, name: str, version: str) -> None:
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


#: A process of ours running one command, then telling whether numba was patched.
_RUN = """
import json, sys
from compare.interfaces.cli import main
code = main(sys.argv[1:])
import numba.core.codegen as codegen
print(json.dumps([code, codegen.JITCodeLibrary._finalize_final_module.__module__]))
"""


def _ours(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    done = _command(["-c", _RUN, *args], env)
    assert done.returncode == 0, done.stderr[-3000:]
    code, patched_by = json.loads(done.stdout.strip().splitlines()[-1])
    return code, patched_by, done.stdout


def _doctor(env: dict[str, str]) -> dict:
    done = _command(["doctor", "--json"], env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(("package", "run"), [("numba", True), ("nutpie", False)])
def test_an_unverified_version_keeps_its_accelerators_off_and_the_run_agrees(
    tmp_path: Path, package: str, run: bool
) -> None:
    """numba planted: the numba accelerators and the compiled-model cache are off, numba is
    left as released in a real run, which agrees. nutpie planted: ``doctor`` says which
    are off (the same guard; a run like the first would cost the suite seconds more)."""
    fake = tmp_path / "site"
    _fake_distribution(fake, package, "0.99.0")
    env = {
        **os.environ,
        "PYTHONPATH": f"{fake}{os.pathsep}{ROOT}",
        "BAYES_COMPARE_CACHE_DIR": str(tmp_path / "cache"),
    }
    doc = _doctor(env)
    assert doc["versions"][package] == "0.99.0"
    rows = {row["name"]: row for row in doc["accelerators"]}
    reaching = {a.name for a in accel.ACCELERATORS if any(v.package == package for v in a.verified)}
    assert "compiled-cache" in reaching
    for name, row in rows.items():
        if name in reaching:
            assert not row["on"] and f"{package} 0.99.0 is not a verified version" in row["reason"]
        else:
            assert row["on"], row
    if not run:
        return
    code, patched_by, out = _ours(["run", "beta-binomial", "--out", str(tmp_path / "r")], env)
    assert code == 0 and "verdict: AGREE" in out
    lazy_code_on = "numba-lazy-code" not in reaching
    assert patched_by.startswith("compare.accel") is lazy_code_on, patched_by
    assert not list((tmp_path / "cache" / "compiled").glob("*.pkl"))  # nutpie's own compile


def test_with_the_switch_at_0_nothing_is_on(tmp_path: Path) -> None:
    """``doctor`` says every accelerator is off and why, and a process of ours that
    compiles with numba leaves it as released. (Every topic's verdict with the switch at
    0 is CI's step of its own, ``make test-accel-off``.)"""
    env = {**os.environ, accel.ENV: "0", "BAYES_COMPARE_CACHE_DIR": str(tmp_path / "cache")}
    doc = _doctor(env)
    assert doc["accel_setting"] is False
    assert all(
        not row["on"] and row["reason"] == "BAYES_COMPARE_ACCEL=0" for row in doc["accelerators"]
    )
    code, patched_by, _ = _ours(["list"], env)
    assert code == 0 and patched_by == "numba.core.codegen"


def test_doctor_lists_each_accelerator_on_or_off_with_its_reason(tmp_path: Path) -> None:
    env = {**os.environ, "BAYES_COMPARE_CACHE_DIR": str(tmp_path / "cache")}
    doc = _doctor(env)
    assert [row["name"] for row in doc["accelerators"]] == [a.name for a in accel.ACCELERATORS]
    assert all(row["on"] for row in doc["accelerators"]), doc["accelerators"]  # verified here
    assert doc["cache"]["usable"] is True
    done = _command(["doctor"], {**env, "BAYES_COMPARE_EAGER_NUMBA": "1"})
    assert done.returncode == 0, done.stderr
    for a in accel.ACCELERATORS:
        assert a.name in done.stdout
    assert done.stdout.count("BAYES_COMPARE_EAGER_NUMBA=1") == 3  # its three, said so


def test_a_process_accelerator_is_off_until_enable_and_a_call_one_is_not() -> None:
    """In a user's process (no enable) a process accelerator never acts; the compiled-model
    cache (a call accelerator) does, its versions verified."""
    script = (
        "import json\nfrom compare import accel\n"
        "before = [accel.allowed('nutpie-trace'), accel.allowed('compiled-cache')]\n"
        "accel.enable()\n"
        "print(json.dumps([before, accel.allowed('nutpie-trace'), accel.enabled()]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    before, after, enabled = json.loads(done.stdout.strip().splitlines()[-1])
    assert before == [False, True] and after is True and enabled is True


def test_the_api_refuses_a_bad_switch_as_input(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    import compare

    monkeypatch.setenv(accel.ENV, "maybe")
    exact = compare.Exact(mean=[0.0], cov=[[1.0]], gaussian=True)
    draws = np.zeros((4, 100, 1))
    with pytest.raises(compare.InputError, match="BAYES_COMPARE_ACCEL must be 0"):
        compare.check_draws(draws, exact)
