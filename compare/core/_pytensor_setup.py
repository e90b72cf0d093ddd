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
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path

__all__ = ["configure_pytensor"]

_FLAGS = "PYTENSOR_FLAGS"
_KEY = "blas__ldflags"


def _user_set_ldflags(*, environ: dict[str, str] | os._Environ[str]) -> bool:
    """True if the user set ``blas__ldflags`` in PYTENSOR_FLAGS or a PYTENSORRC file.

    Parameters
    ----------
    environ : mapping
        The environment to read (``os.environ`` in use; a dict in tests).
    """
    if _KEY in environ.get(_FLAGS, ""):
        return True
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
        if parser.has_option("blas", "ldflags"):
            return True
    return False


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
    env = os.environ if environ is None else environ
    if _user_set_ldflags(environ=env):
        return False
    flags = env.get(_FLAGS, "")
    env[_FLAGS] = f"{flags},{_KEY}=" if flags else f"{_KEY}="
    pytensor = sys.modules.get("pytensor") if environ is None else None
    if pytensor is not None:
        param = type(pytensor.config).__dict__.get(_KEY)
        # Only if PyTensor has not computed (and warned about) it already.
        if param is not None and not hasattr(param, "val"):
            pytensor.config.blas__ldflags = ""
    return True


configure_pytensor()
