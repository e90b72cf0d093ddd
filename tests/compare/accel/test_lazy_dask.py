"""xarray without Dask imports in a process that holds no Dask array (compare/accel/lazy_dask.py).

Each case runs in a new Python process, since what is tested is what a
process imports. Power: without :func:`compare.accel.enable` (a user's process, where
xarray stays as shipped), the same array imports ``dask.array``.
"""

from __future__ import annotations

import pytest

from tests.probe import run_probe

_PROBE = """
import json, sys
from compare import accel
if not {planted}:  # planted: a user's process (no enable), xarray as shipped
    accel.enable()
import numpy as np
import xarray as xr

plain = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("chain", "draw"))
before = "dask.array" in sys.modules
total = float(plain.sum())
import dask.array as da  # a user's Dask array, once Dask is loaded, is still one to xarray
lazy = xr.DataArray(da.ones((2, 3), chunks=(1, 3)), dims=("chain", "draw"))
print(json.dumps([before, total, lazy.chunks is not None, float(lazy.sum().compute())]))
"""


@pytest.mark.parametrize("planted", [False, True], ids=["enabled", "user-process"])
def test_a_numpy_array_loads_no_dask_and_a_dask_array_stays_one(planted):
    before, total, chunked, lazy_total = run_probe(_PROBE.format(planted=planted))
    assert before is planted
    assert (total, chunked, lazy_total) == (15.0, True, 6.0)


_COORDINATES = """
import json, sys
from compare import accel
if not {planted}:  # planted: a user's process (no enable): each index asks Dask
    accel.enable()
import numpy as np
import xarray as xr

ds = xr.Dataset({{"x": (("chain", "draw"), np.ones((2, 3)))}},
                coords={{"chain": np.arange(2), "draw": np.arange(3)}})
before = "dask" in sys.modules
from xarray.namedarray.utils import is_dask_collection
import dask.array as da  # once Dask is loaded, a Dask array is a collection, as before
print(json.dumps([before, list(ds.indexes), bool(is_dask_collection(da.ones(3))),
                  bool(is_dask_collection(np.ones(3)))]))
"""


@pytest.mark.parametrize("planted", [False, True], ids=["enabled", "user-process"])
def test_a_dataset_with_coordinates_loads_no_dask(planted):
    """Every coordinate's index asked Dask whether its values are a Dask collection,
    importing ``dask.base`` (0.19 s of each `run`); Dask's answer for an object
    without ``__dask_graph__`` is "no", so it is given without the import."""
    before, indexes, dask_array, numpy_array = run_probe(_COORDINATES.format(planted=planted))
    assert before is planted
    assert (indexes, dask_array, numpy_array) == (["chain", "draw"], True, False)
