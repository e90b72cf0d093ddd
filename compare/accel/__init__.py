"""The accelerators: everything bayes-compare does to other packages to run faster.

bayes-compare is fast because of a few reaches into its dependencies (numba's
code generation, nutpie's compile path, xarray's Dask probes, SciPy's import, ...).
They live here, one module each, and nowhere else; this module is their table
(:data:`ACCELERATORS`) and their switch. Two kinds:

- **process** accelerators change the process they run in: a patch of another
  package (installed by an import hook), an environment variable, gc
  thresholds, a process that exits without teardown. Only :func:`enable`
  switches them on, and only the project's own processes call it: the
  command line's entry point, its spawned workers (``quick_exit``), the local
  worker and the Dask workers of the clusters it starts (:func:`dask_setup`,
  a Dask preload), and the project's test suite. ``import compare``, the pytest
  plugin and the Python API (``compare.check``, ``check_draws``, ``run``) never
  call it, and leave the user's process as they found it
  (``tests/compare/test_guest.py``).
- **call** accelerators change nothing outside their own call: the compiled-model
  cache (:mod:`compare.accel.compiled_cache`), which keeps the machine code of a
  model in our cache folder and reads nutpie's private compile functions (it
  replaces nothing). It serves library use too, with no patch installed.

Each accelerator declares the packages it reaches into and the versions it was
verified with (:class:`Verified`): private internals are verified per minor
release (``numba>=0.68,<0.69``), public interfaces per major release. Outside
them it stays off, and says so (``bayes-compare doctor``): an upgrade of numba,
llvmlite, nutpie or PyTensor costs speed, never a crash or another verdict.
``BAYES_COMPARE_ACCEL=0`` switches every accelerator off; ``1`` (the default)
leaves them to their versions. Nothing here imports NumPy or a checked package:
versions are read when the package is imported anyway (the hooks fire then), or
when :func:`status` is asked.

What the layer may and may not do: ``docs/architecture.md``; each accelerator's
upstream problem and a reproducer: ``docs/upstream.md``.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ACCELERATORS",
    "ENV",
    "Accelerator",
    "SettingError",
    "Status",
    "Verified",
    "active",
    "allowed",
    "dask_setup",
    "enable",
    "enabled",
    "setting",
    "status",
]

#: The switch: ``0`` runs with no accelerator, ``1`` (the default) with those whose
#: versions are verified.
ENV = "BAYES_COMPARE_ACCEL"
#: The values :data:`ENV` takes.
VALUES = ("0", "1")


class SettingError(ValueError):
    """:data:`ENV` holds a value other than :data:`VALUES` (a user's setting: exit 3)."""


@dataclass(frozen=True)
class Verified:
    """A package an accelerator reaches into, and the versions it was verified with.

    ``low`` is the lowest verified version (included), ``below`` the first one
    that is not (excluded). ``package`` is the distribution's name as pip knows
    it, or ``python`` for the interpreter.
    """

    package: str
    low: str
    below: str

    def __str__(self) -> str:
        return f"{self.package}>={self.low},<{self.below}"


@dataclass(frozen=True)
class Accelerator:
    """One accelerator: what it is, where its code is, what it reaches into."""

    name: str
    module: str
    kind: Literal["process", "call"]
    summary: str
    verified: tuple[Verified, ...] = ()
    #: An environment variable whose value ``1`` switches this one off alone (for
    #: benchmarks that measure it, and for a user working around it).
    off_switch: str | None = None
    #: True when :func:`enable` calls the module's ``install()`` (an import hook, a
    #: setting); False when the code asks :func:`active` at the time it would act.
    installs: bool = True


_NUMBA = (Verified("numba", "0.68", "0.69"), Verified("llvmlite", "0.50", "0.51"))
_NUTPIE = Verified("nutpie", "0.16", "0.17")

#: Every accelerator, in the order :func:`enable` installs them.
ACCELERATORS: tuple[Accelerator, ...] = (
    Accelerator(
        "blas-threads",
        "compare.accel.blas_threads",
        "process",
        "one BLAS thread per process (OPENBLAS_NUM_THREADS, threadpoolctl's public API)",
    ),
    Accelerator(
        "gc-thresholds",
        "compare.accel.gc_thresholds",
        "process",
        "fewer full garbage collections (gc.set_threshold)",
    ),
    Accelerator(
        "pytensor-flags",
        "compare.accel.pytensor_flags",
        "process",
        "PyTensor without its C-BLAS probe and its creation stacks (public config options)",
        (Verified("pytensor", "3.0", "4"),),
    ),
    Accelerator(
        "scipy-docs",
        "compare.accel.scipy_docs",
        "process",
        "SciPy imported without rewriting its docstrings",
        (Verified("scipy", "1.18", "1.19"),),
        "BAYES_COMPARE_SCIPY_DOCS",
    ),
    Accelerator(
        "jax-stubs",
        "compare.accel.jax_stubs",
        "process",
        "arviz-base's unused JAX stubs forgotten (SciPy does not load JAX)",
        (Verified("arviz-base", "1.3", "1.4"),),
    ),
    Accelerator(
        "lazy-arviz",
        "compare.accel.lazy_arviz",
        "process",
        "nutpie imported without arviz-plots and matplotlib",
        (_NUTPIE,),
    ),
    Accelerator(
        "lazy-dask",
        "compare.accel.lazy_dask",
        "process",
        "xarray answers its Dask probes without importing Dask",
        (Verified("xarray", "2026.9", "2026.10"),),
    ),
    Accelerator(
        "numba-cache",
        "compare.accel.numba_cache",
        "process",
        "numba's on-disk cache safe for processes that share it (numba#10128)",
        _NUMBA[:1],
    ),
    Accelerator(
        "numba-lazy-code",
        "compare.accel.numba_lazy_code",
        "process",
        "numba emits machine code only for what is called",
        _NUMBA,
        "BAYES_COMPARE_EAGER_NUMBA",
    ),
    Accelerator(
        "numba-lock-events",
        "compare.accel.numba_lock_events",
        "process",
        "no event broadcast around each call into LLVM",
        _NUMBA,
        "BAYES_COMPARE_EAGER_NUMBA",
    ),
    Accelerator(
        "numba-slice-error",
        "compare.accel.numba_slice_error",
        "process",
        "no string formatting compiled for an error that never happens",
        _NUMBA[:1],
        "BAYES_COMPARE_EAGER_NUMBA",
    ),
    Accelerator(
        "nutpie-trace",
        "compare.accel.nutpie_trace",
        "process",
        "nutpie's trace converted one Dataset per group",
        (_NUTPIE,),
        installs=False,
    ),
    Accelerator(
        "jax-cache",
        "compare.accel.jax_cache",
        "process",
        "JAX's persistent compilation cache for the JAX methods (public config options)",
        (Verified("jax", "0.4.30", "1"),),
        installs=False,
    ),
    Accelerator(
        "quick-exit",
        "compare.accel.quick_exit",
        "process",
        "our processes exit without the interpreter's teardown",
        (Verified("python", "3.12", "3.13"),),
        installs=False,
    ),
    Accelerator(
        "compiled-cache",
        "compare.accel.compiled_cache",
        "call",
        "a model's machine code kept on disk and loaded by the next process",
        (
            _NUTPIE,
            Verified("pytensor", "3.3", "3.4"),
            Verified("numba", "0.68", "0.69"),
            Verified("llvmlite", "0.50", "0.51"),
        ),
        installs=False,
    ),
)

_BY_NAME = {a.name: a for a in ACCELERATORS}
_lock = threading.RLock()
_enabled = False
#: Why :func:`enable` did not install a process accelerator (name -> reason).
_skipped: dict[str, str] = {}
#: Installed versions read so far (package -> version, or None when absent).
_versions: dict[str, str | None] = {}
#: Version checks made so far (name -> reason, or None when verified): versions do not
#: change while a process runs; the environment may, so it is read at every ask.
_checked: dict[str, str | None] = {}


def setting(*, environ: Mapping[str, str] | None = None) -> bool:
    """Whether :data:`ENV` lets accelerators run (unset: yes).

    Raises
    ------
    SettingError
        When the variable holds anything but ``0`` or ``1``.
    """
    env = os.environ if environ is None else environ
    value = env.get(ENV)
    if value is None or value.strip() == "1":
        return True
    if value.strip() == "0":
        return False
    raise SettingError(
        f"{ENV} must be 0 (no accelerator) or 1 (accelerators whose versions are "
        f"verified; the default), got {value!r}: unset it or set one of those"
    )


def _version_key(text: str) -> tuple[int, ...]:
    """The leading numbers of a version (``0.69.0rc1`` -> (0, 69, 0))."""
    parts = []
    for piece in text.split("."):
        digits = ""
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):  # a suffix (rc1, .dev0, +local) ends the release
            break
    return tuple(parts)


def installed(package: str) -> str | None:
    """The installed version of ``package`` (a distribution; ``python``: the
    interpreter's), or None when it is not installed."""
    with _lock:
        if package in _versions:
            return _versions[package]
    if package == "python":
        found: str | None = ".".join(str(n) for n in sys.version_info[:3])
    else:
        import importlib.metadata  # 40 ms: only where a version is checked (a heavy path)

        try:
            found = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found = None
    with _lock:
        _versions[package] = found
    return found


def unverified(accelerator: Accelerator) -> str | None:
    """Why ``accelerator``'s packages are outside its verified versions, or None."""
    with _lock:
        if accelerator.name in _checked:
            return _checked[accelerator.name]
    reason = _check_versions(accelerator)
    with _lock:
        _checked[accelerator.name] = reason
    return reason


def _check_versions(accelerator: Accelerator) -> str | None:
    for need in accelerator.verified:
        version = installed(need.package)
        if version is None:
            return f"{need.package} is not installed"
        key = _version_key(version)
        if not _version_key(need.low) <= key < _version_key(need.below):
            return f"{need.package} {version} is not a verified version ({need})"
    return None


def _switched_off(accelerator: Accelerator) -> str | None:
    """Why the environment switches ``accelerator`` off, or None."""
    if not setting():
        return f"{ENV}=0"
    switch = accelerator.off_switch
    if switch is not None and os.environ.get(switch) == "1":
        return f"{switch}=1"
    if accelerator.kind == "call":
        from compare.accel.cache_root import ENV as CACHE_ENV  # light: os and pathlib
        from compare.accel.cache_root import cache_root  # light: as above

        if cache_root() is None:
            return f"{CACHE_ENV}={os.environ.get(CACHE_ENV)} (the caches are off)"
    return None


def allowed(name: str) -> bool:
    """Whether accelerator ``name`` may act now in this process.

    A process accelerator only after :func:`enable` installed it (the project's
    own processes); a call accelerator in any process. Both only when the
    environment does not switch them off now and the installed versions are
    verified (read once per process).
    """
    accelerator = _BY_NAME[name]
    if accelerator.kind == "process" and (not _enabled or name in _skipped):
        return False
    try:
        off = _switched_off(accelerator)
    except SettingError:  # refused at the entry points (exit 3, InputError); here: off
        return False
    return (off or unverified(accelerator)) is None


def active(name: str) -> bool:
    """:func:`allowed`, for a process accelerator consulted at call time (the trace
    conversion, the JAX cache, xarray's distributed probe): False in a user's process."""
    return allowed(name)


def enabled() -> bool:
    """Whether :func:`enable` switched the process accelerators on in this process."""
    return _enabled


def enable() -> None:
    """Switch the process accelerators on in this process (a process of ours), once.

    Installs each one whose switch is on: an import hook waits for the package it
    reaches into, checks that package's version when it loads, and patches it only
    when the version is verified. With ``BAYES_COMPARE_ACCEL=0`` nothing is
    installed.

    Raises
    ------
    SettingError
        When ``BAYES_COMPARE_ACCEL`` holds a value other than 0 or 1.
    """
    global _enabled
    on = setting()
    with _lock:
        if _enabled:
            return
        if not on:
            return
        _enabled = True
    for accelerator in ACCELERATORS:
        if accelerator.kind != "process":
            continue
        reason = _switched_off(accelerator)
        if reason is not None:
            with _lock:
                _skipped[accelerator.name] = reason
            continue
        if accelerator.installs:  # each of these modules is light: no NumPy, no target
            importlib.import_module(accelerator.module).install()


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: :func:`enable` in a worker process of a cluster we started."""
    enable()


@dataclass(frozen=True)
class Status:
    """What ``bayes-compare doctor`` says of one accelerator."""

    name: str
    kind: str
    on: bool
    reason: str
    summary: str
    verified: str


def status() -> list[Status]:
    """Each accelerator on or off in this process, with the reason (reads the installed
    versions of the packages they reach into)."""
    found = []
    for accelerator in ACCELERATORS:
        with _lock:
            reason = _skipped.get(accelerator.name)
        if reason is None:
            try:
                reason = _switched_off(accelerator)
            except SettingError as err:
                reason = str(err)
        if reason is None:
            reason = unverified(accelerator)
        if reason is None and accelerator.kind == "process" and not _enabled:
            reason = "a process accelerator: only the project's own processes switch it on"
        verified = ", ".join(str(v) for v in accelerator.verified) or "public interfaces only"
        found.append(
            Status(
                name=accelerator.name,
                kind=accelerator.kind,
                on=reason is None,
                reason=reason or "verified versions",
                summary=accelerator.summary,
                verified=verified,
            )
        )
    return found
