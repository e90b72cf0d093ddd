"""Reuse a saved run when nothing it depends on has changed.

A run is a pure function of its inputs: the topic's code, the data, the
hyperparameters, the sampler settings (seed included) and the installed
packages. :func:`run_key` is a SHA-256 over all of them; ``save_run`` writes
it into ``result.json`` as ``run_key``, and :func:`reusable` returns the saved
document when a folder already holds a complete run with the same key (its
draws checked against their recorded SHA-256 by ``load_run``). ``run`` then
prints that verdict instead of sampling again; ``--force`` resamples.

What "the topic's code" means: every ``.py`` file of the ``analytic``,
``pymc_models`` and ``compare`` packages (any change to the exact maths, the
model, the checks or the verdict rule), plus the source files defining the
topic's ``solve`` and ``build_model`` (a user's topic file lives outside the
packages). Hashing them takes ~10 ms.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import sys
from pathlib import Path
from typing import Any

import numpy as np

from compare.core.files import versions
from compare.outputs.document import RunFolderError, load_run

#: Bumped when the recipe of the key changes.
FORMAT = 1
_PACKAGES = ("analytic", "pymc_models", "compare")


def _feed(hasher: Any, value: Any) -> None:
    """Hash ``value`` by content: arrays by dtype, shape and bytes; containers recursively."""
    if isinstance(value, np.ndarray) and value.dtype.hasobject:
        # Object arrays (labels as strings) hold pointers: hash the items themselves.
        hasher.update(f"ndarray-object{value.shape}".encode())
        for item in value.ravel().tolist():
            _feed(hasher, item)
    elif isinstance(value, np.ndarray):
        hasher.update(f"ndarray{value.dtype.str}{value.shape}".encode())
        hasher.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, dict):
        hasher.update(b"dict")
        for k in sorted(value, key=str):
            hasher.update(repr(k).encode())
            _feed(hasher, value[k])
    elif isinstance(value, (list, tuple)):
        hasher.update(f"{type(value).__name__}{len(value)}".encode())
        for item in value:
            _feed(hasher, item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        hasher.update(type(value).__qualname__.encode())
        for f in dataclasses.fields(value):
            hasher.update(f.name.encode())
            _feed(hasher, getattr(value, f.name))
    elif isinstance(value, (np.generic, int, float, str, bool, type(None))):
        hasher.update(f"{type(value).__name__}:{value!r}".encode())
    else:  # anything else (a path, an enum): its repr, which names its content
        hasher.update(f"{type(value).__qualname__}:{value!r}".encode())


@functools.cache
def package_sources() -> str:
    """SHA-256 over every source file of the three packages (once per process)."""
    hasher = hashlib.sha256()
    for name in _PACKAGES:
        module = sys.modules.get(name) or __import__(name)
        root = Path(module.__file__ or "").parent
        for path in sorted(root.rglob("*.py")):
            hasher.update(str(path.relative_to(root)).encode())
            hasher.update(path.read_bytes())
    return hasher.hexdigest()


def _topic_sources(topic: Any) -> str:
    """SHA-256 of the files defining the topic's exact answer and its model."""
    hasher = hashlib.sha256()
    for fn in (topic.solve, topic.build_model):
        try:
            path = inspect.getsourcefile(fn)
        except TypeError:  # a builtin or a C function: nothing to read
            path = None
        if path is not None and Path(path).is_file():
            hasher.update(Path(path).read_bytes())
    return hasher.hexdigest()


def run_key(*, topic: Any, data: Any, hyper: dict[str, Any], settings: Any) -> str:
    """The key of a run: equal keys give the same run, to the bit.

    Parameters
    ----------
    topic : Topic
        The registered topic.
    data : object
        The topic's data as ``run`` receives it (arrays or a data dataclass).
    hyper : dict
        The hyperparameters as ``run`` receives them.
    settings : Settings
        Draws, tune, chains, seed, alpha, ...
    """
    hasher = hashlib.sha256()
    hasher.update(f"bayes-compare run key {FORMAT}\n{topic.name}\n".encode())
    hasher.update(package_sources().encode())
    hasher.update(_topic_sources(topic).encode())
    _feed(hasher, data)
    _feed(hasher, hyper)
    _feed(hasher, settings)
    _feed(hasher, versions())
    hasher.update(f"{sys.version}".encode())
    return hasher.hexdigest()


def reusable(out_dir: str | Path, key: str) -> dict[str, Any] | None:
    """The saved document in ``out_dir`` if it is a complete run with this key; else None."""
    directory = Path(out_dir)
    if not (directory / "result.json").is_file():
        return None
    try:
        doc = load_run(directory).doc
    except RunFolderError:
        return None  # damaged or half-written: run again
    return doc if doc.get("run_key") == key else None
