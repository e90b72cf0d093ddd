"""`make bench`: a run's draws.nc written and read with netCDF4 (ours) against h5netcdf.

compare/outputs/document.py writes each run's draws with xarray's ``netcdf4``
engine (``NETCDF_ENGINE``, compare/core/files.py); it used h5netcdf, which
spends most of each write and read looking up dimension scales in Python.
Side by side in one process: the groups ``save_run`` writes for real runs of
a one-parameter topic and of the classifier (4 chains x 2000 draws), each
written to a new file and read back whole, best of ``BENCH_REPEAT`` (3). The
two files are checked identical after the round trip first.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import _timing  # one BLAS thread: import it before numpy
import xarray as xr

from compare.core.defaults import DEFAULT
from compare.core.files import NETCDF_ENGINE
from compare.core.runner import run
from compare.outputs.document import _draw_groups
from compare.topics import get_topic

REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
TOPICS = ("beta-binomial", "gaussian-classifier")


def _groups(name: str) -> dict[str, xr.Dataset]:
    topic = get_topic(name)
    data = topic.builtin[0]
    result = run(topic, data=data.load(), hyper=topic.hyper(dataset=data), settings=DEFAULT)
    return _draw_groups(result)


def _write_and_read(groups: dict[str, xr.Dataset], folder: Path, engine: str) -> xr.DataTree:
    path = Path(tempfile.mkstemp(dir=folder, suffix=".nc")[1])
    xr.DataTree.from_dict(groups).to_netcdf(path, engine=engine)
    with xr.open_datatree(path, engine=engine) as tree:
        return tree.load()


def main() -> None:
    print("A run's draws.nc written and read back: netCDF4 (ours) against h5netcdf")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in TOPICS:
            groups = _groups(name)
            ours = _write_and_read(groups, folder, NETCDF_ENGINE)
            assert ours.identical(_write_and_read(groups, folder, "h5netcdf")), name
            n = sum(len(ds.variables) for ds in groups.values())
            t_h5 = _timing.best(lambda g=groups: _write_and_read(g, folder, "h5netcdf"), REPEAT)
            t_ours = _timing.best(
                lambda g=groups: _write_and_read(g, folder, NETCDF_ENGINE), REPEAT
            )
            print(
                f"  {name:22s} {n:3d} variables  h5netcdf {t_h5 * 1e3:7.1f} ms"
                f"  netCDF4 {t_ours * 1e3:7.1f} ms  {t_h5 / t_ours:5.2f}x faster"
            )


if __name__ == "__main__":
    main()
