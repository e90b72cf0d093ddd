"""Files that never end half-written: JSON documents and atomic replacement.

Every file the package writes goes through :func:`atomic_write` (a temporary
file in the same folder, then ``os.replace``), so a reader or a killed writer
sees the old file or the new one, never a mix."""

from __future__ import annotations

import json
import math
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

#: The two files of a saved run (see :mod:`compare.outputs.document`).
RESULT_FILE = "result.json"
DRAWS_FILE = "draws.nc"


def clean(value: Any) -> Any:
    """JSON-safe: arrays to lists, non-finite floats to None."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return [clean(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def versions() -> dict[str, str]:
    out = {}
    for pkg in (
        "bayes-compare",
        "pymc",
        "pytensor",
        "nutpie",
        "arviz-base",
        "arviz-stats",
        "numpy",
        "scipy",
    ):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def umask_mode() -> int:
    """Permissions a plain ``open`` would give a new file (mkstemp uses 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` via a temporary file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
