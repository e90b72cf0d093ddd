"""Our processes import SciPy without its docstring rewriting (compare/accel/scipy_docs.py),
and nothing but the docstrings changes."""

from __future__ import annotations

import os

import pytest

from compare.accel.scipy_docs import KEEP_ENV
from tests.probe import run_probe

#: A new process: a command (as `bayes-compare` runs it), then SciPy's stats as a run
#: imports them; prints what SciPy recorded and wrote, and what was imported before.
_PROBE = """
import json, sys
from compare.interfaces.cli import main
main(["list"])
before = sorted(m for m in sys.modules if m.split(".")[0] == "scipy")
import scipy.stats
from scipy._lib._array_api import xp_capabilities_table as table
doc = scipy.stats.ttest_ind.__doc__
print(json.dumps({
    "scipy_before": before,
    "note": "Array API Standard Support" in doc,
    "summary": doc.strip().splitlines()[0],
    "has_parameters": "Parameters" in doc and "equal_var" in doc,
    "table": sorted(f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', f)}"
                    for f in table),
    "capabilities": repr(table[scipy.stats.ttest_ind]),
    "value": scipy.stats.ttest_ind([1.0, 2.0, 3.5], [2.0, 4.0, 5.0]).pvalue,
}))
"""


def _probe(**env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if k != KEEP_ENV}
    return run_probe(_PROBE, env={**environ, **env})


def test_a_command_skips_the_notes_and_changes_nothing_else():
    """With the stand-in the note is gone (as shipped it is there: the probe can tell),
    while the docstring's text, SciPy's capability table and its results are the same;
    and `list`, which never imports SciPy, still does not."""
    ours, shipped = _probe(), _probe(**{KEEP_ENV: "1"})
    assert shipped["note"] and not ours["note"]
    assert ours["summary"] == shipped["summary"] and ours["has_parameters"]
    assert ours["table"] == shipped["table"] and len(ours["table"]) > 100
    assert ours["capabilities"] == shipped["capabilities"]
    assert ours["value"] == shipped["value"]
    assert ours["scipy_before"] == [] == shipped["scipy_before"]


@pytest.mark.parametrize("case", ["too-late", "kept"])
def test_too_late_or_kept_is_said_and_leaves_scipy_as_it_ships(case):
    """SciPy's stats imported before our entry point (too late to change), or the
    docstrings asked for as shipped: SciPy stays as it ships, and the call says so."""
    script = (
        "import json, os\n"
        + ("import scipy.stats\n" if case == "too-late" else f"os.environ[{KEEP_ENV!r}] = '1'\n")
        + "from compare import accel\n"
        "accel.enable()\n"
        "from compare.accel.scipy_docs import skip_capability_notes\n"
        "import scipy.stats\n"
        "from scipy._lib import _array_api\n"
        "print(json.dumps([skip_capability_notes(), _array_api.FunctionDoc.__module__]))\n"
    )
    said, where = run_probe(script, env={k: v for k, v in os.environ.items() if k != KEEP_ENV})
    assert said is False
    assert not where.startswith("compare")
