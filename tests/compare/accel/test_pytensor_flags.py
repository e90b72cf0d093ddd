"""PyTensor configuration: a sampling command shows only our own lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compare.accel.pytensor_flags import configure_pytensor, skip_creation_traces
from tests.probe import run_probe

ROOT = Path(__file__).resolve().parents[3]


def test_sets_empty_ldflags_when_user_did_not(tmp_path):
    env = {"PYTENSORRC": str(tmp_path / "absent.rc")}
    assert configure_pytensor(environ=env) is True
    assert env["PYTENSOR_FLAGS"] == "blas__ldflags="


def test_appends_to_existing_flags(tmp_path):
    env = {"PYTENSORRC": str(tmp_path / "absent.rc"), "PYTENSOR_FLAGS": "compiledir=/x"}
    configure_pytensor(environ=env)
    assert env["PYTENSOR_FLAGS"] == "compiledir=/x,blas__ldflags="


def test_keeps_the_users_flag():
    env = {"PYTENSOR_FLAGS": "blas__ldflags=-lopenblas"}
    assert configure_pytensor(environ=env) is False
    assert env["PYTENSOR_FLAGS"] == "blas__ldflags=-lopenblas"


def test_keeps_the_users_rc_file(tmp_path):
    rc = tmp_path / "pytensorrc"
    rc.write_text("[blas]\nldflags = -lblas\n", encoding="utf-8")
    env = {"PYTENSORRC": str(rc)}
    assert configure_pytensor(environ=env) is False
    assert "PYTENSOR_FLAGS" not in env


def test_in_process_value_is_empty():
    import pytensor  # after compare (imported above), as in every command

    assert pytensor.config.blas__ldflags == ""


def test_sampling_command_stderr_has_no_pytensor_warning(tmp_path):
    """A real `run` in a fresh process, on a cold compile cache: nothing on stderr
    but our own lines (no PyTensor, BLAS, or Python warning text)."""
    env = dict(os.environ)
    env.pop("PYTENSOR_FLAGS", None)
    env.update(
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        PYTENSORRC=str(tmp_path / "no.rc"),
        # A cold cache: the compile probe and the C helpers run as on a new machine.
        PYTENSOR_FLAGS=f"compiledir={tmp_path / 'pytensor'}",
        NUMBA_CACHE_DIR=str(tmp_path / "numba"),
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "compare.interfaces.cli",
            "run",
            "beta-binomial",
            "--draws",
            "100",
            "--chains",
            "2",
            "--out",
            str(tmp_path / "run"),
        ],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode in (0, 2), proc.stderr  # 100 draws may be inconclusive
    for word in ("BLAS", "PyTensor", "pytensor", "Warning", "warnings.warn"):
        assert word not in proc.stderr, proc.stderr
    assert "verdict:" in proc.stdout


def test_planted_warning_is_seen(tmp_path):
    """Power of the stderr check: with the setting undone, the warning appears."""
    env = dict(os.environ)
    env.update(
        PYTENSORRC=str(tmp_path / "no.rc"), PYTENSOR_FLAGS=f"compiledir={tmp_path / 'pytensor'}"
    )
    code = "import pytensor; pytensor.config.blas__ldflags\n"  # the first read warns
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "could not link to a BLAS" in proc.stderr


def test_creation_traces_are_skipped_unless_the_user_set_a_limit(tmp_path):
    env = {"PYTENSORRC": str(tmp_path / "absent.rc"), "PYTENSOR_FLAGS": "compiledir=/x"}
    assert skip_creation_traces(environ=env) is True
    assert env["PYTENSOR_FLAGS"] == "compiledir=/x,traceback__limit=0"
    assert skip_creation_traces(environ=env) is False  # once
    assert env["PYTENSOR_FLAGS"] == "compiledir=/x,traceback__limit=0"
    env = {"PYTENSORRC": str(tmp_path / "absent.rc"), "PYTENSOR_FLAGS": "traceback__limit=8"}
    assert skip_creation_traces(environ=env) is False
    assert env["PYTENSOR_FLAGS"] == "traceback__limit=8"
    rc = tmp_path / "pytensorrc"
    rc.write_text("[traceback]\nlimit = 3\n", encoding="utf-8")
    env = {"PYTENSORRC": str(rc)}
    assert skip_creation_traces(environ=env) is False
    assert "PYTENSOR_FLAGS" not in env


@pytest.mark.parametrize("command", [True, False])
def test_a_command_records_no_creation_stacks_and_the_library_keeps_them(tmp_path, command):
    """In a new process: after the command line's entry point, a new PyTensor
    variable carries no creation stack, and neither does one in a process the
    command starts (it inherits PYTENSOR_FLAGS); a process that only imports
    the library (the user's session) keeps PyTensor's default of 8 frames."""
    env = dict(os.environ)
    env.pop("PYTENSOR_FLAGS", None)
    env["PYTENSORRC"] = str(tmp_path / "no.rc")
    show = (
        "import json, pytensor, pytensor.tensor as pt; "
        "print(json.dumps([pytensor.config.traceback__limit, bool(pt.scalar().tag.trace)]))"
    )
    script = "\n".join(
        [
            "import compare, json",
            *(["from compare.interfaces.cli import main", "main(['list'])"] if command else []),
            "import pytensor, pytensor.tensor as pt",
            "from tests.probe import run_probe",
            "here = [pytensor.config.traceback__limit, bool(pt.scalar().tag.trace)]",
            f"print(json.dumps([here, run_probe({show!r})]))",
        ]
    )
    here, child = run_probe(script, env={**env, "PYTHONPATH": str(ROOT)})
    assert here == child == ([0, False] if command else [8, True])
