"""nutpie imported without arviz-plots and matplotlib (compare/accel/lazy_arviz.py).

Each case runs in a new Python process, since what is tested is what a
process imports. Power: without :func:`compare.accel.enable` (a user's process, where
nutpie imports as shipped), ``import nutpie`` loads arviz-plots and matplotlib.
"""

from __future__ import annotations

import pytest

from tests.probe import run_probe

_PROBE = """
import json, sys
from compare import accel
if not {planted}:  # planted: a user's process (no enable): nutpie imports the real arviz
    accel.enable()
import nutpie
loaded = sorted(m for m in ("arviz", "arviz_plots", "matplotlib") if m in sys.modules)
seen = sys.modules["nutpie.sample"].arviz  # nutpie's own reference
served = {{name: getattr(seen, name) for name in ("from_dict", "dict_to_dataset")}}
import arviz  # a user's import after ours: the real package
print(json.dumps({{
    "loaded": loaded,
    "real": type(arviz).__name__ == "module" and hasattr(arviz, "plot_dist"),
    "served_are_arvizs": all(served[name] is getattr(arviz, name) for name in served),
    "other_is_arvizs": seen.summary is arviz.summary,
}}))
"""


@pytest.mark.parametrize("planted", [False, True], ids=["enabled", "user-process"])
def test_nutpie_loads_no_plotting_and_sees_arvizs_own_functions(planted):
    found = run_probe(_PROBE.format(planted=planted))
    assert found["loaded"] == (["arviz", "arviz_plots", "matplotlib"] if planted else [])
    # arviz's own namespace exports arviz-base's functions that the stand-in serves, and
    # any other name nutpie might read comes from arviz itself.
    assert found["real"] and found["served_are_arvizs"] and found["other_is_arvizs"]
