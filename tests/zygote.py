"""Real `bayes-compare` commands in new processes, without paying each one's imports.

A zygote process imports the command line once (after ``compare.accel.enable``, as
the command line does), then forks one child per request, each running
``bayes-compare <args>`` (``cli.main``, then the exit code) with its own
environment, folder and stderr. A child is the real command in its own process (it
can be killed by a real SIGKILL); forking skips the imports each new interpreter
paid (the 11 runs of tests/compare/outputs/test_run_folder.py measured 42-44 CPU-s
in new interpreters, 12 forked: docs/speed.md). netCDF4 is left to the child: the
first netCDF write of a process imports it, as a fresh `bayes-compare run` does.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

_ZYGOTE = """
import json, os, signal, sys
from compare import accel
accel.enable()  # as the command line does, before the imports it pays once
import compare.core.runner, compare.core.sampling, nutpie, numba, scipy.stats, arviz_stats
from compare.interfaces.cli import main
assert "netCDF4" not in sys.modules
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(err, 2)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        code = 4
        try:
            code = main(request["args"])
        finally:
            with open(request["stderr"] + ".code", "w") as f:
                f.write(str(code))
            sys.stderr.flush()
            os._exit(code)
    print(pid, flush=True)
"""


class Forked:
    """What the test reads of a `subprocess.Popen`, for a child of the zygote."""

    def __init__(self, pid: int, stderr: Path) -> None:
        self.pid, self._stderr, self.returncode = pid, stderr, None

    def poll(self) -> int | None:
        if Path(f"/proc/{self.pid}").exists():
            return None  # running or stopped
        code = Path(f"{self._stderr}.code")  # written just before a child exits by itself
        self.returncode = int(code.read_text() or -1) if code.exists() else -signal.SIGKILL
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"child {self.pid} still running after {timeout} s")
            time.sleep(0.01)
        assert self.returncode is not None
        return self.returncode

    def stderr_text(self) -> str:
        return self._stderr.read_text(errors="replace")


@contextlib.contextmanager
def zygote(*, drop: tuple[str, ...] = ()) -> Iterator[tuple[Any, dict[str, str]]]:
    """The zygote process and the environment its children start from (this one's,
    one BLAS thread, without the variables ``drop``)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    for name in drop:
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-c", _ZYGOTE],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc, env
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


def start(
    zygote: tuple[Any, dict[str, str]],
    args: list[str],
    stderr: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
) -> Forked:
    """``bayes-compare ARGS`` in a child of the zygote, its stderr in ``stderr``."""
    proc, base = zygote
    request = {"args": args, "env": dict(base if env is None else env), "cwd": str(cwd)}
    request["stderr"] = str(stderr)
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise AssertionError(f"the zygote died (exit {proc.wait()})")
    return Forked(int(line), stderr)
