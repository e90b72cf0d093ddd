"""xarray without Dask imports in a process that holds no Dask array (compare/core/_lazy_dask.py).

Each case runs in a new Python process, since what is tested is what a
process imports. Power: with the patch planted away, the same array
imports ``dask.array``.
"""

from __future__ import annotations

import pytest

from tests.probe import run_probe

_PROBE = """
import json, sys
import compare  # installs the patch
if {planted}:  # the bug: xarray asks for Dask's array type, importing dask.array
    from compare.core import _lazy_dask
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "then", None) is not _lazy_dask.patch]
import numpy as np
import xarray as xr

plain = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("chain", "draw"))
before = "dask.array" in sys.modules
total = float(plain.sum())
import dask.array as da  # a user's Dask array, once Dask is loaded, is still one to xarray
lazy = xr.DataArray(da.ones((2, 3), chunks=(1, 3)), dims=("chain", "draw"))
print(json.dumps([before, total, lazy.chunks is not None, float(lazy.sum().compute())]))
"""


@pytest.mark.parametrize("planted", [False, True], ids=["as-shipped", "planted-away"])
def test_a_numpy_array_loads_no_dask_and_a_dask_array_stays_one(planted):
    before, total, chunked, lazy_total = run_probe(_PROBE.format(planted=planted))
    assert before is planted
    assert (total, chunked, lazy_total) == (15.0, True, 6.0)
