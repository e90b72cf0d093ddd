"""The folder bayes-compare keeps its caches in, found without NumPy (``list``
and ``describe`` read the topics' cards from it, :mod:`compare.topics.cards`).

``$BAYES_COMPARE_CACHE_DIR`` if that variable is set (``off`` switches every
cache off), else ``$XDG_CACHE_HOME/bayes-compare``, else
``~/.cache/bayes-compare``; the compiled models are in its ``compiled``
folder (:mod:`compare.core.compiled_cache`).
"""

from __future__ import annotations

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
