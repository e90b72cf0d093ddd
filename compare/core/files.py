"""Files that never end half-written: JSON documents and atomic replacement.

Every file the package writes goes through :func:`atomic_write` (a temporary
file in the same folder, then ``os.replace``), so a reader or a killed writer
sees the old file or the new one, never a mix."""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Final

#: The two files of a saved run (see :mod:`compare.outputs.document`).
RESULT_FILE = "result.json"
DRAWS_FILE = "draws.nc"
#: xarray's engine for ``draws.nc``: netCDF4's C library. The file is netCDF-4 (HDF5)
#: either way, and h5netcdf reads it the same; h5netcdf (pure Python over h5py) took
#: 6-7x the time to write and to read each file, looking up dimension scales: the
#: 15 topics' default runs written in 3.3 s against 0.5 s, read in 3.0 against 0.45.
NETCDF_ENGINE: Final = "netcdf4"


def clean(value: Any) -> Any:
    """JSON-safe: arrays to lists, non-finite floats to None."""
    import numpy as np  # heavy: NumPy only when a value is written (list and describe need none)

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


#: The packages a run's result depends on, recorded in every run document and run key.
VERSIONED = (
    "bayes-compare",
    "pymc",
    "pytensor",
    "nutpie",
    "arviz-base",
    "arviz-stats",
    "numpy",
    "scipy",
)


def _normalised(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@functools.cache
def _dist_info_versions() -> dict[str, str]:
    """{normalised name: version} from the ``NAME-VERSION.dist-info`` folders on ``sys.path``.

    One directory listing per path entry, where ``importlib.metadata.version``
    searches every entry again for each package (measured 0.56 s for the 8 of
    :data:`VERSIONED`, paid by every run's key; this takes a few ms). The
    first entry holding a package wins, as in ``importlib.metadata``.
    """
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file or a missing folder: metadata.version covers it
            continue
        for folder in names:
            if folder.endswith(".dist-info"):
                name, _, version = folder[: -len(".dist-info")].rpartition("-")
                if name and version:
                    found.setdefault(_normalised(name), version)
    return found


def versions() -> dict[str, str]:
    """The installed versions of :data:`VERSIONED` (``"not installed"`` when absent)."""
    listed = _dist_info_versions()
    out = {}
    for pkg in VERSIONED:
        version = listed.get(_normalised(pkg))
        if version is None:
            try:
                version = metadata.version(pkg)
            except metadata.PackageNotFoundError:
                version = "not installed"
        out[pkg] = version
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
