"""PyTensor configured for our processes as it is imported: no C-BLAS probe, no creation stacks.

Why
---
PyTensor 3 compiles with the Numba backend by default (``linker=auto``
resolves to ``numba``); the MAP optimiser's functions go through it, and
nutpie compiles the model's log density through Numba as well. Numba calls
BLAS through SciPy's bundled OpenBLAS. PyTensor's C backend only builds a few
small ``FAST_COMPILE`` helpers (PyMC's initial point; elementwise ops and
sums, measured: no ``Gemm``/``Dot22``, whose rewrites ``FAST_COMPILE`` does
not apply), so the ``blas__ldflags`` setting is used by nothing we run.

Yet reading ``config.blas__ldflags`` for the first time runs
``default_blas_ldflags``: it probes the C compiler for MKL, LAPACK, BLAS and
OpenBLAS libraries, finds none on a pip-installed machine (NumPy and SciPy ship
OpenBLAS with renamed ``scipy_*`` symbols, which the C backend's ``dgemm_``
declarations cannot link against) and prints a five-line "could not link to a
BLAS installation" warning. With the PyTensor 3 release this was written for, a
graph rewrite (``pytensor/sparse/rewriting.py``) read the flag while compiling any
function, and the probe took 0.7-1.1 s of every sampling command; on 3.3.8
only a compile with the C linker's ``fast_run`` rewrites reads it (the MAP
finder's objective), and the probe gives up in 0.03 s where the compiler's
library folders hold no BLAS at all (docs/upstream.md, checked 2026-12-07).

Setting ``blas__ldflags`` to the empty string states the truth (no C BLAS;
the Numba backend does its own), skips the compiler probe, and keeps the
warning away. A value the user chose (``PYTENSOR_FLAGS`` or a ``.pytensorrc``
file) is left untouched.

Creation stacks
---------------
PyTensor records, on every variable and node it creates, the stack of user
code that created it (``traceback__limit`` frames, 8 by default: a walk up
the stack past PyTensor's own frames and a source-line read per kept frame),
to print it when a node fails at run time. Building and loading the graphs of
the 15 topics' models in a process with their machine code cached: 11.6-13.2
CPU-s with the recording, 10.4-11.1 without (alternating, three runs with and two
without, 2026-12-07); in a profile of the whole test suite it was 2.9% of the CPU.
The models our commands build are our own, and their failures are reported in
our words, so in the processes of ours PyTensor records none
(``traceback__limit=0``), unless the user chose a value. A user debugging their
own ``--topic-file`` model gets the stacks back with
``PYTENSOR_FLAGS=traceback__limit=8``.

How
---
:func:`install` (called by :func:`compare.accel.enable`) waits for PyTensor's
import and then sets both options on ``pytensor.config`` (never through
``PYTENSOR_FLAGS``: the environment, which child processes inherit, is left
alone; our own child processes call ``enable`` themselves). A process the user
owns (their session calling :func:`compare.check`, their pytest run with our
plugin) keeps PyTensor's defaults and its warning.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from compare.accel._hooks import patch_on_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "pytensor-flags"

__all__ = ["configure", "install", "user_set"]

#: The options set, with the value set: no C BLAS, no creation stacks.
OPTIONS = {"blas__ldflags": "", "traceback__limit": 0}


def user_set(key: str, *, environ: Mapping[str, str] | None = None) -> bool:
    """True if ``key`` (``section__option``) is set in PYTENSOR_FLAGS or a PYTENSORRC file.

    Parameters
    ----------
    key : str
        The flag's name as PYTENSOR_FLAGS spells it (``blas__ldflags``).
    environ : mapping, optional
        The environment to read (``os.environ`` by default).
    """
    env = os.environ if environ is None else environ
    if key in env.get("PYTENSOR_FLAGS", ""):
        return True
    section, option = key.split("__", 1)
    rc_files = env.get("PYTENSORRC", "~/.pytensorrc").split(os.pathsep)
    for rc in rc_files:
        path = Path(rc).expanduser()
        if not path.is_file():
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError, OSError):
            # A file PyTensor itself will complain about; not ours to judge.
            return True
        if parser.has_option(section, option):
            return True
    return False


def _configure(pytensor: ModuleType) -> None:
    configure(pytensor)


def configure(pytensor: ModuleType) -> list[str]:
    """Set :data:`OPTIONS` on ``pytensor.config``, each unless the user chose a value
    (or PyTensor computed ``blas__ldflags`` already); the names set."""
    done = []
    for key, value in OPTIONS.items():
        if user_set(key):
            continue
        if key == "blas__ldflags":
            param = type(pytensor.config).__dict__.get(key)
            # Only if PyTensor has not computed (and warned about) it already.
            if param is None or hasattr(param, "val"):
                continue
        setattr(pytensor.config, key, value)
        done.append(key)
    return done


def install() -> None:
    """Configure PyTensor as it is imported (at once if it is loaded), in a process of ours."""
    patch_on_import("pytensor", NAME, _configure)
