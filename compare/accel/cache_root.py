"""The folder bayes-compare keeps its caches in, found without NumPy (``list``
and ``describe`` read the topics' cards from it, :mod:`compare.topics.cards`).

``$BAYES_COMPARE_CACHE_DIR`` if that variable is set (``off`` switches every
cache off), else ``$XDG_CACHE_HOME/bayes-compare``, else
``~/.cache/bayes-compare``; the compiled models are in its ``compiled``
folder (:mod:`compare.accel.compiled_cache`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

#: The environment variable naming the cache folder.
ENV = "BAYES_COMPARE_CACHE_DIR"
#: Values of :data:`ENV` that switch the caches off.
DISABLED = frozenset({"off", "0", "false", "none", "no"})


def cache_root(*, environ: os._Environ[str] | dict[str, str] | None = None) -> Path | None:
    """The cache folder, or None when the caches are switched off.

    Parameters
    ----------
    environ : mapping, optional
        The environment to read (``os.environ`` by default).
    """
    env = os.environ if environ is None else environ
    chosen = env.get(ENV)
    if chosen is not None:
        if chosen.strip().lower() in DISABLED or not chosen.strip():
            return None
        return Path(chosen).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "bayes-compare"


def make_folder(path: Path) -> None:
    """Make ``path`` and every missing folder above it with mode 0700 (this user's only).

    ``Path.mkdir(parents=True)`` gives the parents the umask's mode, group-writable
    under a umask of 002, and the compiled-model cache refuses a folder others may
    write to (:mod:`compare.accel.cache_store`). Raises ``OSError`` as ``mkdir`` does.
    """
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            folder.mkdir(mode=0o700)
