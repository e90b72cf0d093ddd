"""PyTensor configuration, applied before PyTensor is first imported.

Why
---
PyTensor 3 compiles with the Numba backend by default (``linker=auto``
resolves to ``numba``); the MAP optimiser's functions go through it, and
nutpie compiles the model's log density through Numba as well. Numba calls
BLAS through SciPy's bundled OpenBLAS. PyTensor's C backend only builds a few
small ``FAST_COMPILE`` helpers (PyMC's initial point; elementwise ops and
sums, measured: no ``Gemm``/``Dot22``, whose rewrites ``FAST_COMPILE`` does
not apply), so the ``blas__ldflags`` setting is used by nothing we run.

Yet a graph rewrite (``pytensor/sparse/rewriting.py``) reads
``config.blas__ldflags`` while compiling any function, and reading it for the
first time runs ``default_blas_ldflags``: it probes the C compiler for MKL,
LAPACK, BLAS and OpenBLAS libraries (0.7-1.1 s measured), finds none on a
pip-installed machine (NumPy and SciPy ship OpenBLAS with renamed
``scipy_*`` symbols, which the C backend's ``dgemm_`` declarations cannot
link against) and prints a five-line "could not link to a BLAS installation"
warning on every sampling command.

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
our words, so :func:`skip_creation_traces` sets ``traceback__limit=0`` in the
processes of ours (the command line, and through the environment every process
it starts; the test suite), unless the user chose a value. A process the user
owns (their session calling :func:`compare.check`, their pytest run with our
plugin) keeps PyTensor's default. A user debugging their own ``--topic-file``
model gets the stacks back with ``PYTENSOR_FLAGS=traceback__limit=8``.
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path

__all__ = ["configure_pytensor", "skip_creation_traces"]

_FLAGS = "PYTENSOR_FLAGS"
_KEY = "blas__ldflags"
_TRACE_KEY = "traceback__limit"


def _user_set(key: str, *, environ: dict[str, str] | os._Environ[str]) -> bool:
    """True if ``key`` (``section__option``) is set in PYTENSOR_FLAGS or a PYTENSORRC file.

    Parameters
    ----------
    key : str
        The flag's name as PYTENSOR_FLAGS spells it (``blas__ldflags``).
    environ : mapping
        The environment to read (``os.environ`` in use; a dict in tests).
    """
    if key in environ.get(_FLAGS, ""):
        return True
    section, option = key.split("__", 1)
    rc_files = environ.get("PYTENSORRC", "~/.pytensorrc").split(os.pathsep)
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


def _claim(key: str, value: str, environ: dict[str, str] | os._Environ[str] | None) -> bool:
    """Add ``key=value`` to PYTENSOR_FLAGS in ``environ`` (``os.environ`` if None) unless
    ``key`` is set there or in a PYTENSORRC file; True if it was added."""
    env = os.environ if environ is None else environ
    if _user_set(key, environ=env):
        return False
    flags = env.get(_FLAGS, "")
    env[_FLAGS] = f"{flags},{key}={value}" if flags else f"{key}={value}"
    return True


def configure_pytensor(*, environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Declare "no C BLAS" to PyTensor unless the user configured it.

    Must run before PyTensor reads ``blas__ldflags`` (it is read lazily, at
    the first function compilation). Before ``import pytensor`` the setting
    goes through ``PYTENSOR_FLAGS`` (so child processes, such as the report's
    figure workers, inherit it); after, it is set on ``pytensor.config``.

    Parameters
    ----------
    environ : mapping, optional
        The environment to read and update; ``os.environ`` by default.

    Returns
    -------
    bool
        True if this call set the value, False if the user's own was kept.
    """
    if not _claim(_KEY, "", environ):
        return False
    pytensor = sys.modules.get("pytensor") if environ is None else None
    if pytensor is not None:
        param = type(pytensor.config).__dict__.get(_KEY)
        # Only if PyTensor has not computed (and warned about) it already.
        if param is not None and not hasattr(param, "val"):
            pytensor.config.blas__ldflags = ""
    return True


def skip_creation_traces(*, environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """``traceback__limit=0`` in a process of ours, unless the user set a limit (see module).

    Through ``PYTENSOR_FLAGS``, so every process this one starts records no stacks
    either; on ``pytensor.config`` too when PyTensor is imported already (the value
    is read at each variable's creation). ``environ`` and the result as in
    :func:`configure_pytensor` (False: a value was set already).
    """
    if not _claim(_TRACE_KEY, "0", environ):
        return False
    pytensor = sys.modules.get("pytensor") if environ is None else None
    if pytensor is not None:
        pytensor.config.traceback__limit = 0
    return True


configure_pytensor()
