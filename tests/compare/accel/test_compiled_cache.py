"""The on-disk cache of nutpie's compiled models (compare/accel/compiled_cache.py).

What a user relies on: a new process that finds the model in the cache
samples exactly the draws a fresh compile gives (same seed, bit for bit), a
changed model is never served stale code, and a damaged file is compiled
again rather than crashing or sampling garbage.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from compare.accel import compiled_cache
from compare.core.sampling import set_model_data

# One small model, sampled the same way in the test process and in a child.
_SAMPLE = textwrap.dedent(
    """
    import os, sys, warnings
    import numpy as np
    warnings.simplefilter("ignore")
    if os.environ.get("SAMPLE_AS") != "library":  # a process of ours, as the suite is
        from compare import accel
        accel.enable()
    import pymc_models.beta_binomial as m
    from compare.accel import compiled_cache

    def draws(n_obs):
        model = m.build_model(n_obs=n_obs)
        compiled, cached = compiled_cache.compile_pymc_model(model)
        data = {"x": (np.arange(n_obs) % 3 == 0).astype(float), "hp_a": 2.0, "hp_b": 3.0}
        tree = compiled_cache.sample(
            compiled_cache.with_data(compiled, **data), draws=300, tune=300, chains=2, seed=11,
            progress_bar=False,
        )
        graphs = isinstance(compiled.logp_func, compiled_cache.StoredGraphs)
        return tree.posterior["p"].values, cached, graphs

    if __name__ == "__main__":
        values, cached, graphs = draws(int(sys.argv[1]))
        np.save(sys.argv[2], values)
        print(("cached" if cached else "compiled") + (" graphs-loaded" if graphs else ""))
    """
)


def _child(
    tmp_path: Path, cache: Path, n_obs: int, *, library: bool = False
) -> tuple[np.ndarray, str]:
    script = tmp_path / "sample_once.py"
    script.write_text(_SAMPLE)
    out = tmp_path / f"draws-{n_obs}.npy"
    env = {**os.environ, "BAYES_COMPARE_CACHE_DIR": str(cache)}
    if library:
        env["SAMPLE_AS"] = "library"
    done = subprocess.run(
        [sys.executable, str(script), str(n_obs), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return np.load(out), done.stdout.strip().splitlines()[-1]


@pytest.fixture
def in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The sampling script's ``draws`` in this process, reading the cache at ``tmp_path/cache``."""
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(tmp_path / "cache"))
    namespace: dict[str, object] = {"__name__": "sample_once"}
    exec(compile(_SAMPLE, "sample_once.py", "exec"), namespace)
    draws = namespace["draws"]
    return lambda n_obs: draws(n_obs)[:2]  # type: ignore[operator]


def test_a_new_process_loads_the_compiled_model_and_samples_the_same_draws(
    tmp_path: Path, in_process
) -> None:
    """Compiled in one process, loaded in a new one (which links the code against numba's
    runtime alone, compiled_cache._load, and builds none of the graphs: StoredGraphs)
    and in this one: the same draws. Graphs whose machine code is gone are built again."""
    cache = tmp_path / "cache"
    fresh, how = _child(tmp_path, cache, n_obs=7)
    assert how == "compiled"
    assert len(list((cache / "compiled").glob("*.pkl"))) == 1
    assert len(list((cache / "compiled").glob("*.graphs"))) == 1
    loaded, how = _child(tmp_path, cache, n_obs=7)
    assert how == "cached graphs-loaded"
    np.testing.assert_array_equal(loaded, fresh)  # bit for bit, not "close"
    again, cached = in_process(7)
    assert cached
    np.testing.assert_array_equal(again, fresh)
    next((cache / "compiled").glob("*.pkl")).unlink()
    rebuilt, how = _child(tmp_path, cache, n_obs=7)
    assert how == "compiled"
    np.testing.assert_array_equal(rebuilt, fresh)


def test_a_users_process_uses_the_cache_with_no_patch_installed(tmp_path: Path, in_process) -> None:
    """Library use (``compare.check`` in a user's session: numba as released, no
    accelerator enabled) compiles into the cache and a later session loads from it,
    with the same draws; a process of ours (this one) keys its own entry apart (its
    numba accelerators change the machine code), so neither is served the other's."""
    cache = tmp_path / "cache"
    fresh, how = _child(tmp_path, cache, n_obs=7, library=True)
    assert how == "compiled"
    loaded, how = _child(tmp_path, cache, n_obs=7, library=True)
    assert how == "cached graphs-loaded"
    np.testing.assert_array_equal(loaded, fresh)
    _, cached = in_process(7)
    assert not cached
    assert len(list((cache / "compiled").glob("*.pkl"))) == 2


def test_a_load_that_fails_to_link_refreshes_numbas_context_and_retries(
    tmp_path: Path, in_process, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the restored code need a symbol only numba's full context registers, the
    load refreshes that context and links again, rather than failing or compiling."""
    from numba.core.registry import cpu_target

    reference, _ = in_process(6)  # compiled and stored
    context = type(cpu_target.target_context)
    link, refresh, calls = compiled_cache._link, context.refresh, []

    def failing_once(*args):
        calls.append("link")
        if calls.count("link") == 1:
            raise RuntimeError("Symbol not found: a planted missing symbol")
        return link(*args)

    def counted(self):
        calls.append("refresh")
        return refresh(self)

    monkeypatch.setattr(compiled_cache, "_link", failing_once)
    monkeypatch.setattr(context, "refresh", counted)
    values, cached = in_process(6)
    first = calls.index("link")
    assert cached and calls[first : first + 3] == ["link", "refresh", "link"], calls
    np.testing.assert_array_equal(values, reference)


def test_a_changed_model_is_not_served_the_cached_code(tmp_path: Path, in_process) -> None:
    import pymc as pm

    import pymc_models.beta_binomial as m

    _, cached = in_process(7)
    assert not cached
    # Another length of data is the same machine code (the length is read at call time).
    _, cached = in_process(9)
    assert cached
    # One more term in the log density is another graph, so another key: a hit
    # here would sample the unchanged density.
    model = m.build_model(n_obs=7)
    with model:
        pm.Potential("planted", 0.5 * model["p"])
    _, cached = compiled_cache.compile_pymc_model(model)
    assert not cached
    assert len(list((tmp_path / "cache" / "compiled").glob("*.pkl"))) == 2


def test_a_damaged_file_is_compiled_again(tmp_path: Path, in_process) -> None:
    reference, _ = in_process(5)
    (path,) = (tmp_path / "cache" / "compiled").glob("*.pkl")
    path.write_bytes(path.read_bytes()[:1000])  # a half-written or truncated file
    values, cached = in_process(5)
    assert not cached
    np.testing.assert_array_equal(values, reference)
    assert path.stat().st_size > 1000  # rewritten whole


def test_a_damaged_graphs_file_is_built_again(tmp_path: Path, in_process) -> None:
    reference, _ = in_process(5)
    (path,) = (tmp_path / "cache" / "compiled").glob("*.graphs")
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    values, cached = in_process(5)
    assert cached  # the graphs were built, their machine code loaded
    np.testing.assert_array_equal(values, reference)
    assert path.read_bytes() == whole  # filed again, whole


def test_the_build_graphs_switch_builds_them_and_loads_the_machine_code(
    in_process, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``BAYES_COMPARE_BUILD_GRAPHS=1`` (the benchmarks' reference) reads no stored
    graphs; without it a load reads them."""
    import pymc_models.beta_binomial as m

    in_process(5)  # compiled; machine code and graphs stored
    monkeypatch.setenv(compiled_cache.BUILD_GRAPHS_ENV, "1")
    compiled, cached = compiled_cache.compile_pymc_model(m.build_model(n_obs=5))
    assert cached and not isinstance(compiled.logp_func, compiled_cache.StoredGraphs)
    monkeypatch.delenv(compiled_cache.BUILD_GRAPHS_ENV)
    compiled, cached = compiled_cache.compile_pymc_model(m.build_model(n_obs=5))
    assert cached and isinstance(compiled.logp_func, compiled_cache.StoredGraphs)


def test_the_cache_can_be_switched_off(tmp_path: Path) -> None:
    assert compiled_cache.cache_dir(environ={"BAYES_COMPARE_CACHE_DIR": "off"}) is None
    assert compiled_cache.cache_dir(environ={"BAYES_COMPARE_CACHE_DIR": str(tmp_path)}) == (
        tmp_path / "compiled"
    )
    assert compiled_cache.cache_dir(environ={"XDG_CACHE_HOME": str(tmp_path)}) == (
        tmp_path / "bayes-compare" / "compiled"
    )


def test_clear_removes_every_cached_model(tmp_path: Path) -> None:
    folder = tmp_path / "compiled"
    folder.mkdir()
    for name in ("a.pkl", "b.pkl", "c.graphs", "d.map.functions"):
        (folder / name).write_bytes(b"x")
    assert compiled_cache.clear(folder=folder) == 2
    assert not list(folder.iterdir())


def test_a_process_waits_for_another_compiling_the_same_model(
    tmp_path: Path, in_process, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another process holds a model's lock (here: this process, on another
    file descriptor), a compile of that model waits, then loads what was stored,
    instead of compiling the same model a second time."""
    import fcntl
    import shutil
    import threading

    reference, _ = in_process(7)
    (stored,) = (tmp_path / "cache" / "compiled").glob("*.pkl")
    other = tmp_path / "other"
    (other / "compiled").mkdir(parents=True)
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(other))
    waiting = threading.Event()
    sleep = compiled_cache.time.sleep

    def sleep_and_say(seconds: float) -> None:
        waiting.set()  # only the wait for the lock sleeps
        sleep(seconds)

    monkeypatch.setattr(compiled_cache.time, "sleep", sleep_and_say)
    fd = os.open(other / "compiled" / f"{stored.stem}.lock", os.O_CREAT | os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    result: dict[str, object] = {}
    worker = threading.Thread(target=lambda: result.update(out=in_process(7)))
    try:
        worker.start()
        assert waiting.wait(timeout=120), "the second compile did not wait for the lock"
        shutil.copy(stored, other / "compiled" / stored.name)  # "the other process" stores
    finally:
        os.close(fd)  # and releases
    worker.join(timeout=300)
    values, cached = result["out"]
    assert cached  # loaded what the lock holder stored: no second compile
    np.testing.assert_array_equal(values, reference)


def _categorical_model(k: int):
    """p ~ Dirichlet(a) over ``k`` categories; five observed draws: every length a dim."""
    import pymc as pm

    with pm.Model(coords={"category": np.arange(k), "obs": np.arange(5)}) as model:
        x = pm.Data("x", np.arange(5) % k, dims="obs")
        a = pm.Data("hp_a", np.linspace(1.0, 2.0, k), dims="category")
        p = pm.Dirichlet("p", a=a, dims="category")
        pm.Categorical("x_obs", p=p, observed=x, dims="obs")
    return model


def test_one_compile_serves_every_dimension_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layout of the flat position follows the dims, so the model compiled for 3
    categories is loaded for 4, and samples what a compile for 4 samples, bit for bit."""

    def draws(k: int) -> tuple[np.ndarray, bool]:
        compiled, cached = compiled_cache.compile_pymc_model(_categorical_model(k))
        tree = compiled_cache.sample(
            compiled, draws=200, tune=200, chains=2, seed=5, progress_bar=False
        )
        values = tree.posterior["p"].values
        assert values.shape == (2, 200, k)
        return values, cached

    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(tmp_path / "shared"))
    _, cached = draws(3)
    assert not cached
    loaded, cached = draws(4)
    assert cached  # compiled for 3 categories, serving 4
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(tmp_path / "alone"))
    fresh, cached = draws(4)
    assert not cached
    np.testing.assert_array_equal(loaded, fresh)


def _expansion_model():
    """Transforms (log, simplex), Deterministics (one of data nutpie's graph never reads),
    a variable without dims: what the trace must hold after sampling."""
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model(coords={"k": ["a", "b", "c"], "i": np.arange(5)}) as model:
        x = pm.Data("x", np.linspace(0.0, 1.0, 5), dims="i")
        scale = pm.Data("scale", 2.0)  # read by a Deterministic only
        sigma = pm.HalfNormal("sigma", 1.0)
        w = pm.Dirichlet("w", a=np.ones(3), dims="k")
        b = pm.Normal("b", 0.0, 1.0, shape=2)  # no dims: nutpie names them b_dim_0
        pm.Normal("y", b[0] + b[1] * x, sigma, observed=np.zeros(5), dims="i")
        pm.Deterministic("fit", scale * (b[0] + b[1] * x), dims="i")
        pm.Deterministic("top", pt.max(w))
    return model


def _posterior(monkeypatch: pytest.MonkeyPatch, cache: Path, numba_expand: bool):
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(cache))
    if numba_expand:
        monkeypatch.setenv(compiled_cache.NUMBA_EXPAND_ENV, "1")
    else:
        monkeypatch.delenv(compiled_cache.NUMBA_EXPAND_ENV, raising=False)
    model = _expansion_model()
    compiled, _ = compiled_cache.compile_pymc_model(model)
    is_ours = isinstance(compiled.expand_func, compiled_cache.Expansion)
    assert is_ours is not numba_expand
    # As sampling.py does: the PyMC side gets all the data, nutpie what its record holds
    # (with nutpie's expand function that includes ``scale``, here it does not).
    data = {"x": np.linspace(-1.0, 2.0, 5), "scale": np.asarray(3.0)}
    set_model_data(model, data)
    known = {var.name for var in compiled.shared_var_keys}
    tree = compiled_cache.sample(
        compiled_cache.with_data(compiled, **{k: v for k, v in data.items() if k in known}),
        draws=150,
        tune=150,
        chains=2,
        seed=7,
        progress_bar=False,
    )
    return tree.posterior.to_dataset()


def _differences(ours, reference) -> list[str]:
    """What differs between two posteriors: variables, dims, coordinates or values (to 1e-12)."""
    found = []
    if list(ours.data_vars) != list(reference.data_vars):
        return [f"variables {list(ours.data_vars)} != {list(reference.data_vars)}"]
    for name in reference.data_vars:
        a, b = ours[name], reference[name]
        if a.dims != b.dims:
            found.append(f"{name}: dims {a.dims} != {b.dims}")
        elif any(not np.array_equal(a[d].values, b[d].values) for d in b.dims):
            found.append(f"{name}: coordinates differ")
        elif not np.allclose(a.values, b.values, rtol=1e-12, atol=0.0):
            found.append(f"{name}: values differ")
    return found


def test_variables_computed_after_sampling_equal_nutpies_expand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trace after sampling the position alone holds what nutpie's own expand
    function gives: the same variables, dims, coordinates, and values (the same
    sampler path; the transforms in NumPy may differ in the last bits)."""
    ours = _posterior(monkeypatch, tmp_path / "ours", numba_expand=False)
    reference = _posterior(monkeypatch, tmp_path / "reference", numba_expand=True)
    assert sorted(ours.data_vars) == ["b", "fit", "sigma", "top", "w"]
    assert _differences(ours, reference) == []
    assert ours["b"].dims == ("chain", "draw", "b_dim_0")
    # The Deterministic of data nutpie never reads uses the PyMC side's value.
    x = np.linspace(-1.0, 2.0, 5)
    fit = 3.0 * (ours["b"].values[..., :1] + ours["b"].values[..., 1:] * x)
    np.testing.assert_allclose(ours["fit"].values, fit, rtol=1e-12)
    # Power: a value off by 1e-9 of itself, or a renamed dim, is reported.
    planted = ours.copy()
    planted["top"] = planted["top"] * (1.0 + 1e-9)
    assert _differences(planted, reference) == ["top: values differ"]
    renamed = ours.rename({"b_dim_0": "b_index"})
    assert _differences(renamed, reference)[0].startswith("b: dims")


class _Shaped:
    """What ``nutpie.compile_pymc.make_user_data`` reads of a shared variable."""

    def __init__(self, ndim: int) -> None:
        self.ndim = ndim


def _checksum(a: np.ndarray) -> float:
    """A number that changes with any value, its place, or the shape."""
    flat = np.asarray(a, dtype=float).ravel()
    return float((flat * (1.0 + np.arange(flat.size))).sum() + 1e3 * np.sum(np.shape(a)))


def test_the_extraction_hands_every_array_of_the_record_to_the_graph() -> None:
    """The machine code reads each shared value from nutpie's ``user_data`` record with
    ``_make_extraction_fn`` (one line per array, one reader per kind of array) instead of
    nutpie's ``make_extraction_fn`` (an overload per array). Every kind a model has
    (0-3 dimensions, float64 and int64, two arrays of one kind) must reach ``inner`` as
    the record holds it, in the keys' order (a checksum of each array's values, their
    places and its shape). Planted: the keys of two 2-d arrays in swapped order are caught.
    The whole models' draws are checked bit for bit elsewhere in this file."""
    import numba
    from nutpie import compile_pymc as ncp

    rng = np.random.default_rng(3)
    shared_data = {
        "shared0": np.array(2.5),
        "shared1": np.arange(5, dtype=np.int64) * 3 - 4,
        "shared2": rng.standard_normal((3, 4)),
        "shared3": rng.standard_normal((2, 3, 4)),
        "shared4": rng.standard_normal((4, 3)),
    }
    keys = list(shared_data)
    record = ncp.make_user_data({_Shaped(v.ndim): k for k, v in shared_data.items()}, shared_data)

    @numba.njit
    def checksum(a):  # as _checksum
        flat = np.asarray(a, dtype=np.float64).ravel()
        shape = 0.0
        for n in a.shape:
            shape += n
        return (flat * (1.0 + np.arange(flat.size))).sum() + 1e3 * shape

    @numba.njit
    def inner(x, a0, a1, a2, a3, a4):
        return np.array(
            [checksum(a0), checksum(a1), checksum(a2), checksum(a3), checksum(a4), x[0]]
        )

    def run(extract) -> np.ndarray:
        address_as_void_pointer = ncp.address_as_void_pointer

        @numba.njit
        def call(x, address):
            return extract(x, address_as_void_pointer(address))

        return call(np.array([7.0]), record.ctypes.data)

    expected = [*(_checksum(shared_data[k]) for k in keys), 7.0]
    ours = run(compiled_cache._make_extraction_fn(inner, shared_data, keys, record.dtype))
    np.testing.assert_allclose(ours, expected, rtol=1e-12)
    swapped = ["shared0", "shared1", "shared4", "shared3", "shared2"]
    planted = run(compiled_cache._make_extraction_fn(inner, shared_data, swapped, record.dtype))
    assert not np.allclose(planted, expected)
