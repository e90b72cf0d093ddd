"""numba emits machine code only for what is called (compare/accel/numba_lazy_code.py).

What a user relies on: every numba function still runs and raises as
before (callers, entry points, recursion, C callbacks, numba's cache, which
numba as released shares without reading our entries), and a model's draws
for one seed are the same after a cold compile as after loading the
compiled model in a new process. The
last is shown on a model with the Gaussian process's Matern kernel, whose
draws differed before (planted: the same check with numba as released,
which must fail).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import cfunc, njit, types

from compare.accel import compiled_cache, numba_lazy_code

ROOT = Path(__file__).resolve().parents[3]
INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def _library(dispatcher):
    (overload,) = dispatcher.overloads.values()
    return overload.library


def _deferred(library) -> bool:
    return hasattr(library, numba_lazy_code._DEFERRED)


def _child(args: list[str], *, eager: bool, env: dict[str, str] | None = None, **kwargs) -> str:
    """Run ``python args`` in a new process, numba as released (``eager``) or
    patched; importable ``compare`` from this checkout. Its stdout."""
    env = dict(os.environ if env is None else env)
    env.pop("BAYES_COMPARE_EAGER_NUMBA", None)
    if eager:
        env["BAYES_COMPARE_EAGER_NUMBA"] = "1"
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    done = subprocess.run(
        [sys.executable, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        **{"timeout": 300, **kwargs},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_callee_runs_inside_its_caller_without_machine_code_of_its_own() -> None:
    @njit(**INTERNAL)
    def affine(x):
        return 2.0 * x + 1.0

    @njit
    def caller(x):
        return affine(x) - 1.0

    assert caller(3.0) == 6.0
    assert _deferred(_library(affine))  # linked into the caller, never emitted
    assert not _deferred(_library(caller))  # an entry point: emitted as before


def test_asking_for_a_callees_address_emits_its_code() -> None:
    @njit(**INTERNAL)
    def square(x):
        return x * x

    @njit
    def caller(x):
        return square(x)

    assert caller(4.0) == 16.0
    library = _library(square)
    assert _deferred(library)
    (name,) = [
        fn.name
        for fn in library._final_module.functions
        if not fn.is_declaration and "square" in fn.name
    ]
    assert library.get_pointer_to_function(name) != 0
    assert not _deferred(library)
    assert caller(5.0) == 25.0


def test_a_deferred_function_is_saved_as_bitcode_and_an_emitted_one_as_its_machine_code() -> None:
    """What numba's cache and compiled_cache store: the bitcode of a module
    that was optimised when asked for would be optimised again when loaded,
    into other machine code (other draws after a load, as the Dirichlet and
    classifier models showed when this was so)."""

    @njit(no_cpython_wrapper=True)
    def twice(x):
        return x + x

    @njit
    def caller(x):
        return twice(x)

    assert caller(1.5) == 3.0
    library = _library(twice)
    assert _deferred(library)
    assert library.serialize_using_object_code()[1] == "bitcode"
    (name,) = [fn.name for fn in library._final_module.functions if fn.name.startswith("cfunc.")]
    library.get_pointer_to_function(name)
    assert library.serialize_using_object_code()[1] == "object"


_C_WRAPPER = textwrap.dedent(
    """
    import ctypes
    from compare import accel; accel.enable()  # the patch unless BAYES_COMPARE_EAGER_NUMBA=1
    from compare.accel import numba_lazy_code
    from numba import njit

    @njit(no_cpython_wrapper=True)
    def cube(x):
        return x * x * x

    @njit
    def caller(x):
        return cube(x) + 1.0

    assert caller(2.0) == 9.0
    (overload,) = cube.overloads.values()
    library = overload.library
    deferred = hasattr(library, numba_lazy_code._DEFERRED)
    (name,) = [f.name for f in library._final_module.functions if f.name.startswith("cfunc.")]
    address = library.get_pointer_to_function(name)
    assert not hasattr(library, numba_lazy_code._DEFERRED)
    assert ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(address)(3.0) == 27.0
    print(deferred)
    print(library._final_module)
    """
)


def test_a_c_wrapper_is_emitted_as_numba_would_only_when_its_address_is_asked_for(
    tmp_path: Path,
) -> None:
    """numba gives every jitted function a C wrapper (for first-class function
    values); numba's overloads and PyTensor's helpers keep theirs, and nothing
    asks for it while a model compiles. Asked for, it is the module numba as
    released optimises and emits at once."""
    script = tmp_path / "c_wrapper.py"
    script.write_text(_C_WRAPPER)

    def run(eager: bool) -> list[str]:
        return _child([str(script)], eager=eager).split("\n", 1)

    lazy_deferred, lazy_module = run(eager=False)
    eager_deferred, eager_module = run(eager=True)
    assert (lazy_deferred, eager_deferred) == ("True", "False")
    assert lazy_module == eager_module


def test_an_error_raised_in_a_callee_reaches_the_caller_with_its_message() -> None:
    @njit(**INTERNAL)
    def positive(x):
        if x <= 0:
            raise ValueError("not positive:", x)  # a run-time value: uses the Environment
        return np.log(x)

    @njit
    def caller(x):
        return positive(x) + 1.0

    assert caller(1.0) == 1.0
    with pytest.raises(ValueError, match="not positive"):
        caller(-2.0)


def test_recursion_and_c_callbacks_still_work() -> None:
    @njit
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    @njit(**INTERNAL)
    def half(x):
        return 0.5 * x

    @cfunc(types.float64(types.float64))
    def callback(x):
        return half(x) + fib(10)

    assert fib(15) == 610
    as_c = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(callback.address)
    assert as_c(8.0) == 59.0


_CACHED = textwrap.dedent(
    """
    import sys
    from compare import accel; accel.enable()  # the patch unless BAYES_COMPARE_EAGER_NUMBA=1
    from numba import njit

    @njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
    def inner(x):
        return x * 3.0 - 2.0

    @njit(cache=True)
    def outer(x):
        return inner(x) + inner(x + 1.0)

    print(repr(outer(float(sys.argv[1]))), sum(outer.stats.cache_hits.values()))
    """
)


def test_numbas_cache_round_trips_and_plain_numba_keeps_its_own_entries(tmp_path: Path) -> None:
    (tmp_path / "cached_fns.py").write_text(_CACHED)

    def run(eager: bool) -> str:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
        return _child(["cached_fns.py", "2.5"], eager=eager, env=env, cwd=tmp_path).strip()

    assert run(eager=False) == "14.0 0"  # compiled
    assert run(eager=False) == "14.0 1"  # loaded from the cache
    # numba as released does not load the not-yet-optimised callee: it compiles
    # its own, then loads that, and the patched process still loads its entry.
    assert run(eager=True) == "14.0 0"
    assert run(eager=True) == "14.0 1"
    assert run(eager=False) == "14.0 1"


# A Matern-5/2 kernel's quadratic form over a lengthscale and 12 values: a cold
# compile, then a load in a new process. The kernel's elementwise Composite is
# what made the Gaussian process topic draw differently after a load with numba
# as released (fast-math contractions of a callee inlined into its caller differ
# from the callee's own machine code); this model shows the same in a 5-9 s
# compile, where the GP's took 25-40 s in the suite. benchmarks/compile.py
# (`make bench`) checks every topic's own model the same way.
_MODEL = textwrap.dedent(
    """
    import sys, warnings
    from compare import accel; accel.enable()  # the patch unless BAYES_COMPARE_EAGER_NUMBA=1
    import numpy as np
    warnings.simplefilter("ignore")
    import pymc as pm
    import pytensor.tensor as pt
    from compare.accel import compiled_cache

    xs = np.linspace(0.0, 1.0, 12)
    with pm.Model(coords={"i": np.arange(12)}) as model:
        ell = pm.Gamma("ell", 2.0, 2.0)
        f = pm.Normal("f", 0.0, 1.0, dims="i")
        r = pt.abs(xs[:, None] - xs[None, :]) / ell
        k = (1.0 + np.sqrt(5.0) * r + 5.0 / 3.0 * r**2) * pt.exp(-np.sqrt(5.0) * r)
        pm.Potential("quadratic_form", -0.5 * pt.sum(k * f[:, None] * f[None, :]))
    compiled, cached = compiled_cache.compile_pymc_model(model)
    tree = compiled_cache.sample(
        compiled, draws=200, tune=200, chains=2, seed=1, progress_bar=False
    )
    np.save(sys.argv[1], tree.posterior["f"].values)
    print("cached" if cached else "compiled")
    """
)


def _cold_then_loaded(tmp_path: Path, eager: bool) -> tuple[np.ndarray, np.ndarray]:
    """The model's draws after a compile and after a load, in two new processes.

    Every cache starts empty for numba as released (a warm per-node cache can
    hide the difference there); the patched numba shares PyTensor's and
    numba's cache folders with it but not their entries (``TAG``), and starts
    with its own compiled-model cache empty.
    """
    script = tmp_path / "kernel_model.py"
    script.write_text(_MODEL)
    env = compiled_cache.environment_with_caches_in(tmp_path)
    env["BAYES_COMPARE_CACHE_DIR"] = str(tmp_path / f"compiled-{eager}")
    draws = []
    for how in ("compiled", "cached"):
        out = tmp_path / f"{eager}-{how}.npy"
        stdout = _child([str(script), str(out)], eager=eager, env=env, cwd=ROOT, timeout=900)
        assert stdout.strip().splitlines()[-1] == how
        draws.append(np.load(out))
    return draws[0], draws[1]


@pytest.mark.mcmc
def test_draws_after_a_cold_compile_equal_draws_after_a_load(tmp_path: Path) -> None:
    # Planted first: numba as released gives other draws after the load (as
    # the mixture, GP and classifier topics did: benchmarks/compile.py), so the
    # check below can fail.
    cold, loaded = _cold_then_loaded(tmp_path, eager=True)
    assert not np.array_equal(loaded, cold)
    cold, loaded = _cold_then_loaded(tmp_path, eager=False)
    np.testing.assert_array_equal(loaded, cold)  # bit for bit
