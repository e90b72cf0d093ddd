"""PyTensor configuration: a sampling command shows only our own lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compare.accel.pytensor_flags import user_set
from tests.probe import run_probe

ROOT = Path(__file__).resolve().parents[3]


def test_the_users_own_flags_and_rc_file_are_seen(tmp_path):
    absent = str(tmp_path / "absent.rc")
    assert not user_set("blas__ldflags", environ={"PYTENSORRC": absent})
    assert not user_set(
        "blas__ldflags", environ={"PYTENSORRC": absent, "PYTENSOR_FLAGS": "compiledir=/x"}
    )
    assert user_set("blas__ldflags", environ={"PYTENSOR_FLAGS": "blas__ldflags=-lopenblas"})
    rc = tmp_path / "pytensorrc"
    rc.write_text("[blas]\nldflags = -lblas\n[traceback]\nlimit = 3\n", encoding="utf-8")
    assert user_set("blas__ldflags", environ={"PYTENSORRC": str(rc)})
    assert user_set("traceback__limit", environ={"PYTENSORRC": str(rc)})


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


@pytest.mark.parametrize("case", ["command", "library", "user-limit"])
def test_a_command_records_no_creation_stacks_and_the_library_keeps_them(tmp_path, case):
    """In a new process: after the command line's entry point, a new PyTensor variable
    carries no creation stack and PyTensor skips its C-BLAS probe; a process that only
    imports the library (the user's session) keeps PyTensor's defaults, as does a
    limit the user chose; the environment, which child processes inherit, is left as
    it was either way."""
    env = dict(os.environ)
    env.pop("PYTENSOR_FLAGS", None)
    env["PYTENSORRC"] = str(tmp_path / "no.rc")
    if case == "user-limit":
        env["PYTENSOR_FLAGS"] = "traceback__limit=3"
    script = "\n".join(
        [
            "import compare, json, os",
            *(
                ["from compare.interfaces.cli import main", "main(['list'])"]
                if case != "library"
                else []
            ),
            "import pytensor, pytensor.tensor as pt",
            "param = type(pytensor.config).__dict__['blas__ldflags']",
            "here = [pytensor.config.traceback__limit, bool(pt.scalar().tag.trace),",
            "        getattr(param, 'val', None), os.environ.get('PYTENSOR_FLAGS')]",
            "print(json.dumps(here))",
        ]
    )
    found = run_probe(script, env={**env, "PYTHONPATH": str(ROOT)})
    expected = {
        "command": [0, False, "", None],
        "library": [8, True, None, None],
        "user-limit": [3, True, "", "traceback__limit=3"],
    }[case]
    assert found == expected
