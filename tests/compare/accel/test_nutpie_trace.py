"""nutpie's trace as a DataTree (compare/accel/nutpie_trace.py): the tree nutpie builds.

The conversion is checked against nutpie's own ``_arrow_to_arviz`` on the
arguments nutpie hands it in real sampling: a model with named dims (text
coordinates), an unnamed matrix and a Deterministic, with nutpie's own
expand function (every variable a column of the trace) and with ours (the
position alone), the warm-up kept and not.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from compare.accel import compiled_cache, nutpie_trace


def _model():
    import pymc as pm

    with pm.Model(coords={"group": ["a", "b", "c"]}) as model:
        mu = pm.Normal("mu", 0.0, 1.0, dims="group")
        scale = pm.HalfNormal("scale", 1.0)
        pm.Normal("m", 0.0, 1.0, shape=(2, 2))
        pm.Deterministic("total", mu.sum() * scale)
    return model


@pytest.fixture
def cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One compiled-model cache for this module's tests in this process: the model is
    compiled once for each way of expanding (its key tells the two apart), then loaded."""
    folder = tmp_path_factory.getbasetemp() / "nutpie-trace-cache"
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(folder))
    return folder


def _captured(monkeypatch: pytest.MonkeyPatch, numba_expand: bool, **kwargs):
    """The arguments nutpie gives its conversion when ``compiled_cache.sample`` samples."""
    if numba_expand:
        monkeypatch.setenv(compiled_cache.NUMBA_EXPAND_ENV, "1")
    else:
        monkeypatch.delenv(compiled_cache.NUMBA_EXPAND_ENV, raising=False)
    compiled, _ = compiled_cache.compile_pymc_model(_model())
    seen = []
    real = nutpie_trace.arrow_to_tree

    def spy(*args, **kw):
        seen.append((args, kw))
        return real(*args, **kw)

    monkeypatch.setattr(nutpie_trace, "arrow_to_tree", spy)
    tree = compiled_cache.sample(
        compiled, draws=60, tune=40, chains=3, seed=5, progress_bar=False, **kwargs
    )
    monkeypatch.setattr(nutpie_trace, "arrow_to_tree", real)
    assert len(seen) == 1  # the conversion went through the switch
    return tree, seen[0]


def _same_tree(ours: xr.DataTree, nutpies: xr.DataTree) -> None:
    """Identical groups, variables (in order), coordinates (in order), dtypes, values and
    attributes, but for the time of creation."""
    assert list(ours.children) == list(nutpies.children)
    for group in nutpies.children:
        a, b = ours[group].to_dataset(), nutpies[group].to_dataset()
        a.attrs.pop("created_at")
        b.attrs.pop("created_at")
        xr.testing.assert_identical(a, b)
        assert list(a.data_vars) == list(b.data_vars)
        assert list(a.coords) == list(b.coords)
        assert {k: v.dtype for k, v in a.variables.items()} == {
            k: v.dtype for k, v in b.variables.items()
        }


@pytest.mark.parametrize("numba_expand", [True, False], ids=["nutpies-expand", "ours"])
def test_the_tree_is_the_one_nutpie_builds(monkeypatch, cache, numba_expand):
    tree, (args, kwargs) = _captured(monkeypatch, numba_expand)
    original = sys.modules["nutpie.sample"]._original_arrow_to_arviz
    for save_warmup in (False, True):
        kw = {**kwargs, "save_warmup": save_warmup}
        _same_tree(nutpie_trace.arrow_to_tree(*args, **kw), original(*args, **kw))
    if numba_expand:  # every variable is a column: named, unnamed and text-labelled dims
        posterior = tree.posterior
        assert posterior["mu"].dims == ("chain", "draw", "group")
        assert list(posterior["group"].values) == ["a", "b", "c"]
        assert posterior["m"].dims == ("chain", "draw", "m_dim_0", "m_dim_1")
    # Power: a changed value, or a dropped variable, is seen by the comparison.
    ours = nutpie_trace.arrow_to_tree(*args, **kwargs)
    changed = ours.copy()
    changed["sample_stats"]["energy"] = changed["sample_stats"]["energy"] + 1e-12
    with pytest.raises(AssertionError):
        _same_tree(changed, original(*args, **kwargs))
    dropped = ours.copy()
    dropped["sample_stats"] = xr.DataTree(ours["sample_stats"].to_dataset().drop_vars("depth"))
    with pytest.raises(AssertionError):
        _same_tree(dropped, original(*args, **kwargs))


def test_warmup_kept_by_the_sampler_is_in_the_tree(monkeypatch, cache):
    tree, _ = _captured(monkeypatch, numba_expand=False, save_warmup=True)
    assert tree["warmup_posterior"].sizes["draw"] == 40
    assert tree["posterior"].sizes["draw"] == 60
    assert np.isfinite(tree["warmup_sample_stats"]["energy"].values).all()


def test_outside_the_switch_nutpie_converts_as_it_does(monkeypatch, cache):
    """A user's own ``nutpie.sample`` in the same process is nutpie's, untouched; and
    arguments the conversion was not written for go to nutpie's own function."""
    import nutpie

    _, (args, kwargs) = _captured(monkeypatch, numba_expand=True)
    calls = []
    monkeypatch.setattr(nutpie_trace, "arrow_to_tree", lambda *a, **k: calls.append(1))
    compiled, _ = compiled_cache.compile_pymc_model(_model())
    tree = nutpie.sample(compiled, draws=20, tune=20, chains=2, seed=1, progress_bar=False)
    assert calls == [] and "posterior" in tree.children
    monkeypatch.undo()
    with pytest.raises(TypeError, match="a_later_keyword"):  # nutpie's own signature answers
        nutpie_trace.arrow_to_tree(*args, **kwargs, a_later_keyword=1)
