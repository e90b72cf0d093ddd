"""The on-disk cache of nutpie's compiled models (compare/core/compiled_cache.py).

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

from compare.core import compiled_cache

# One small model, sampled the same way in the test process and in a child.
_SAMPLE = textwrap.dedent(
    """
    import sys, warnings
    import numpy as np
    warnings.simplefilter("ignore")
    import nutpie
    import pymc_models.beta_binomial as m
    from compare.core import compiled_cache

    def draws(n_obs):
        model = m.build_model(n_obs=n_obs)
        compiled, cached = compiled_cache.compile_pymc_model(model)
        data = {"x": (np.arange(n_obs) % 3 == 0).astype(float), "hp_a": 2.0, "hp_b": 3.0}
        tree = nutpie.sample(
            compiled.with_data(**data), draws=300, tune=300, chains=2, seed=11,
            progress_bar=False,
        )
        return tree.posterior["p"].values, cached

    if __name__ == "__main__":
        values, cached = draws(int(sys.argv[1]))
        np.save(sys.argv[2], values)
        print("cached" if cached else "compiled")
    """
)


def _child(tmp_path: Path, cache: Path, n_obs: int) -> tuple[np.ndarray, str]:
    script = tmp_path / "sample_once.py"
    script.write_text(_SAMPLE)
    out = tmp_path / f"draws-{n_obs}.npy"
    env = {**os.environ, "BAYES_COMPARE_CACHE_DIR": str(cache)}
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
    return namespace["draws"]


def test_a_new_process_loads_the_compiled_model_and_samples_the_same_draws(
    tmp_path: Path, in_process
) -> None:
    cache = tmp_path / "cache"
    fresh, how = _child(tmp_path, cache, n_obs=7)
    assert how == "compiled"
    assert len(list((cache / "compiled").glob("*.pkl"))) == 1
    again, cached = in_process(7)
    assert cached
    np.testing.assert_array_equal(again, fresh)  # bit for bit, not "close"


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
    for name in ("a.pkl", "b.pkl"):
        (folder / name).write_bytes(b"x")
    assert compiled_cache.clear(folder=folder) == 2
    assert not list(folder.glob("*.pkl"))


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
    import nutpie

    def draws(k: int) -> tuple[np.ndarray, bool]:
        compiled, cached = compiled_cache.compile_pymc_model(_categorical_model(k))
        tree = nutpie.sample(compiled, draws=200, tune=200, chains=2, seed=5, progress_bar=False)
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
