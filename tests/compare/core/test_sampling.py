"""Compiled-model reuse and the cached MAP finder."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pymc as pm
import pytest
import xarray as xr

from compare.core import sampling
from compare.core.defaults import DEFAULT
from compare.core.sampling import MapFinder, compile_model, posterior_array
from compare.topics import get_topic

pytestmark = pytest.mark.mcmc


@pytest.mark.parametrize(
    "name, dataset",
    [
        ("normal-inverse-gamma", "newcomb"),
        ("dirichlet-categorical", "hair-colour"),
        ("gamma-poisson", "discoveries"),
    ],
)
def test_map_finder_equals_pm_find_map(name, dataset):
    """Same objective and optimiser as pm.find_MAP, compiled once: same optimum."""
    topic = get_topic(name)
    ds = topic.builtin_data(dataset)
    x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    model = topic.build_model(**topic.structure(x, hyper))
    pm.set_data(topic.model_data(x=x, **hyper), model=model, coords={"obs": np.arange(len(x))})
    ours = MapFinder(model, topic.variables).find()
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = pm.find_MAP(progressbar=False, jitter=False, return_inferencedata=False)
    theirs = np.concatenate([np.ravel(theirs[v]) for v in topic.variables])
    sd = np.sqrt(np.diag(topic.solve(x=x, **hyper).posterior.cov))
    # Both stop at the optimiser's tolerance: compare in posterior sds.
    np.testing.assert_allclose(ours / sd, theirs / sd, atol=1e-4)
    np.testing.assert_allclose(ours, topic.solve(x=x, **hyper).posterior.mode, rtol=1e-6)


def test_map_finder_follows_new_data_without_recompiling():
    topic = get_topic("normal-known-variance")
    hyper = topic.hyper()
    model = topic.build_model()
    finder = None
    for shift in (0.0, 5.0, -3.0):
        x = np.linspace(-1, 1, 7) + shift
        pm.set_data(topic.model_data(x=x, **hyper), model=model, coords={"obs": np.arange(7)})
        finder = finder or MapFinder(model, topic.variables)
        np.testing.assert_allclose(
            finder.find(), topic.solve(x=x, **hyper).posterior.mode, rtol=1e-8, atol=1e-8
        )


def test_map_finder_moves_to_the_c_objective_once_searches_add_up(monkeypatch):
    """The first searches use the cheap-to-compile Python objective; once they have
    taken MAP_SWITCH_SECONDS the finder compiles the C one and keeps finding the
    same modes (new data included)."""
    import compare.core.sampling as sampling

    topic = get_topic("normal-known-variance")
    hyper = topic.hyper()
    model = topic.build_model()
    monkeypatch.setattr(sampling, "MAP_SWITCH_SECONDS", 0.0)
    finder = None
    modes = []
    for shift in (0.0, 5.0):
        x = np.linspace(-1, 1, 7) + shift
        pm.set_data(topic.model_data(x=x, **hyper), model=model, coords={"obs": np.arange(7)})
        finder = finder or MapFinder(model, topic.variables)
        found = finder.find()
        modes.append((finder.in_c, found))
        exact = topic.solve(x=x, **hyper).posterior.mode
        np.testing.assert_allclose(modes[-1][1], exact, rtol=1e-8, atol=1e-8)
    assert [in_c for in_c, _ in modes] == [False, True] and finder.in_c


def test_map_finder_restarts_when_the_iterations_run_out(monkeypatch):
    """Scales from 1e-2 to 1e2, correlation 0.5: L-BFGS needs ~85 iterations from the
    initial point, so 50 per start stop short.  Restarts from where the last start
    stopped reach the mode (deterministic: no random numbers); with no restarts left the
    finder says so (None) instead of returning a point short of it."""
    import compare.core.sampling as sampling

    scales = np.logspace(-2, 2, 6)
    cov = (0.5 * np.ones((6, 6)) + 0.5 * np.eye(6)) * np.outer(scales, scales)
    mode = np.linspace(-2.0, 2.0, 6) * scales
    with pm.Model() as model:
        pm.MvNormal("w", mu=mode, cov=cov, initval=np.zeros(6))  # start away from it
    monkeypatch.setattr(sampling, "MAP_MAXITER", 50)
    monkeypatch.setattr(sampling, "MAP_RESTARTS", 0)
    assert MapFinder(model, ("w",)).find() is None
    monkeypatch.setattr(sampling, "MAP_RESTARTS", 20)
    found = MapFinder(model, ("w",)).find()
    # In posterior sds (= scales), far inside the runner's 1e-2 sd tolerance (the
    # Python objective stops 1.8e-4 sd short on this 1e8-conditioned problem, the
    # C one 3e-7: measured).
    np.testing.assert_allclose(found / scales, mode / scales, atol=1e-3)


def _inner_graphs_linked(monkeypatch) -> list[str]:
    """The ops whose inner graph PyTensor links for a thunk from now on (by name)."""
    from pytensor.compile.inner_function import HasInnerFunction

    linked: list[str] = []
    original = HasInnerFunction.make_thunk

    def spy(self, *args, **kwargs):
        linked.append(type(self).__name__)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HasInnerFunction, "make_thunk", spy)
    return linked


def test_python_linker_functions_link_no_inner_graph(monkeypatch):
    """The MAP objective, its back-transform and the variables computed after sampling
    run on PyTensor's Python linker. An op with an inner graph (softmax, which the
    simplex transform is made of) would link that graph with C thunks: a g++ run per
    inner node on an empty cache, 36 of the 41 of a cold `run --all`. None is linked;
    planted: the MAP objective in the mode before (fusion excluded whole) links softmax
    ops, so the spy sees them."""
    from pytensor.compile.mode import Mode

    import compare.core.sampling as sampling
    from compare.accel import compiled_cache

    with pm.Model() as model:
        p = pm.Dirichlet("p", a=np.ones(3))
        pm.Multinomial("y", n=10, p=p, observed=[2, 3, 5])
    linked = _inner_graphs_linked(monkeypatch)
    # The Dirichlet(3, 4, 6) posterior's mode: (a - 1) / (sum(a) - 3).
    np.testing.assert_allclose(MapFinder(model, ("p",)).find(), [0.2, 0.3, 0.5], rtol=1e-6)
    made = compiled_cache._make_functions(
        model, compiled_cache._initial_point_fn(model, jitter=False)
    )
    expansion = made[3]
    assert isinstance(expansion, compiled_cache.Expansion)
    (p_draws,) = expansion(np.zeros((4, made[0])), {})  # the origin: the simplex's centre
    np.testing.assert_allclose(p_draws, np.full((4, 3), 1 / 3), rtol=1e-12)
    assert linked == []

    planted = Mode(linker="py", optimizer="fast_run").excluding("fusion")
    monkeypatch.setattr(sampling, "MAP_FIRST_MODE", planted)
    MapFinder(model, ("p",))
    assert "Softmax" in linked


def test_posterior_array_flattens_in_c_order():
    ds = xr.Dataset(
        {
            "a": (("chain", "draw"), np.zeros((2, 3))),
            "p": (("chain", "draw", "k"), np.arange(18.0).reshape(2, 3, 3)),
        }
    )
    arr = posterior_array(ds, ("a", "p"))
    assert arr.shape == (2, 3, 4)
    np.testing.assert_array_equal(arr[1, 2], [0.0, 15.0, 16.0, 17.0])


def test_a_jittered_model_samples_unjittered_as_an_unjittered_compile_does():
    """``CompiledModel.sample(jitter=False)`` (the gaussian mixture's marginalised run on
    the run's own model) draws, bit for bit, what a model compiled with jitter=False
    draws for the seed. Power: the same model with its jitter draws other values, so
    the starts are what the switch changes."""
    import dataclasses

    from compare.core.defaults import DEFAULT
    from compare.core.sampling import compile_model

    topic = get_topic("beta-binomial")
    hyper = topic.hyper()
    x = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1])
    data = topic.model_data(x=x, **hyper)
    settings = dataclasses.replace(DEFAULT, draws=60, tune=60, chains=2)

    def draws(compiled, **kwargs):
        tree = compiled.sample(data, settings, seed=11, **kwargs)
        return posterior_array(tree.posterior, topic.variables)

    jittered = compile_model(topic.build_model(**topic.structure(x, hyper)), topic.variables)
    still = compile_model(
        topic.build_model(**topic.structure(x, hyper)), topic.variables, jitter=False
    )
    expected = draws(still)
    np.testing.assert_array_equal(draws(jittered, jitter=False), expected)
    assert not np.array_equal(draws(jittered), expected)
    with pytest.raises(ValueError, match="jitter"):
        still.sample(data, settings, seed=11, jitter=True)


def test_a_map_finder_reads_a_stored_objective_that_follows_new_data(tmp_path, monkeypatch):
    """A second finder of the same graph reads the objective and back-transform from
    the compile cache (compiled_cache.python_functions) and finds, for every data set,
    the MAP the built one finds, bit for bit: the exact mode. Planted: the stored
    functions without their rebinding to the model's shared variables (their files
    keep no data) miss the new data's mode."""
    from compare.accel import compiled_cache

    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(tmp_path))
    topic = get_topic("normal-known-variance")
    hyper = topic.hyper()
    built, stored = topic.build_model(), topic.build_model()
    finders: dict[str, MapFinder] = {}
    for shift in (0.0, 5.0, -3.0):
        x = np.linspace(-1, 1, 7) + shift
        for name, model in (("built", built), ("stored", stored)):
            pm.set_data(topic.model_data(x=x, **hyper), model=model, coords={"obs": np.arange(7)})
            finders.setdefault(name, MapFinder(model, topic.variables))
        (filed,) = (tmp_path / "compiled").glob("*.map.functions")
        data = [v.get_value() for v in built.data_vars if np.size(v.get_value()) >= 7]
        assert data and not any(np.asarray(d).tobytes() in filed.read_bytes() for d in data)
        assert isinstance(finders["stored"]._constrained, compiled_cache._Rebound)
        ours = finders["stored"].find()
        np.testing.assert_array_equal(ours, finders["built"].find())
        np.testing.assert_allclose(
            ours, topic.solve(x=x, **hyper).posterior.mode, rtol=1e-8, atol=1e-8
        )
    planted = MapFinder(topic.build_model(), topic.variables)
    for rebound in (planted._constrained, planted._f_fused):
        rebound.pairs = []  # type: ignore[union-attr]
    pm.set_data(
        topic.model_data(x=np.linspace(-1, 1, 7) - 3.0, **hyper),
        model=planted._model,
        coords={"obs": np.arange(7)},
    )
    found = planted.find()
    assert found is None or not np.allclose(found, ours, rtol=1e-3)  # ours: shift -3's


def test_the_step_reads_the_enumerated_density_and_draws_what_pymcs_step_draws(monkeypatch):
    """``sampling.tabulate``: PyMC's uniform ``CategoricalGibbsMetropolis`` reading each
    proposal's log density from the enumeration draws, for one seed, exactly what PyMC's
    step calling the compiled density draws (EnjoySport: 7 coordinates of 2-4 values,
    1,944 joint values), and the same again when sampled again (``sampling.restart``).
    Power: the same table read with the coordinates' strides reversed draws otherwise,
    and so does a second sample without the restart."""
    topic = get_topic("bayes-optimal")
    ds = topic.builtin_data("enjoy-sport")
    x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    model = compile_model(
        topic.build_model(**topic.structure(x, hyper)), topic.variables, step=topic.step
    )
    data = topic.model_data(x=x, **hyper)
    settings = dataclasses.replace(DEFAULT, draws=300, tune=100)

    def draws():
        tree = model.sample(data, settings, seed=3)
        return tree.posterior["hypothesis"].values

    tabulated = draws()
    assert model._steps().astep.__func__ is sampling._tabulated_astep_unif
    # The same compiled model sampled again draws the same (sampling.restart).
    np.testing.assert_array_equal(draws(), tabulated)
    monkeypatch.setenv(sampling.UNTABULATED_ENV, "1")
    pymcs = draws()
    assert model._steps().astep.__func__ is pm.CategoricalGibbsMetropolis.astep_unif
    assert np.unique(pymcs).size > 1  # the chains moved: equal draws say something
    np.testing.assert_array_equal(tabulated, pymcs)

    monkeypatch.delenv(sampling.UNTABULATED_ENV)
    tabulate = sampling.tabulate

    def misread(step, found):
        tabulate(step, found)
        table, stride = step._table
        step._table = (table, stride[::-1].copy())

    monkeypatch.setattr(sampling, "tabulate", misread)
    assert not np.array_equal(draws(), pymcs)
    # And without the restart, the step's coordinates start where the last sample left them.
    monkeypatch.undo()
    monkeypatch.setattr(sampling, "restart", lambda step: None)
    assert not np.array_equal(draws(), tabulated)


def test_map_search_from_given_starts_goes_through_each_transform():
    """Starts in constrained values (a Beta's probability, a HalfNormal's scale, a
    Dirichlet's simplex) reach the same mode; a start outside the support (p = 1.2)
    is left out, not searched from a NaN."""
    with pm.Model() as model:
        p = pm.Beta("p", 2, 3)
        s = pm.HalfNormal("s", 1)
        w = pm.Dirichlet("w", np.ones(3))
        pm.Binomial("y", n=10, p=p, observed=7)
        pm.Normal("z", 0, s, observed=[1.0, -0.5, 0.3])
        pm.Multinomial("c", n=10, p=w, observed=[2, 3, 5])
    starts = np.array(
        [[0.5, 1.0, 0.2, 0.3, 0.5], [0.9, 0.1, 0.6, 0.2, 0.2], [1.2, 1, 0.2, 0.3, 0.5]]
    )
    search = MapFinder(model, ("p", "s", "w")).search(starts)
    assert search.point is not None
    assert len(search.dispersed) == 2
    for (start, found), given in zip(search.dispersed, starts, strict=False):
        np.testing.assert_array_equal(start, given)
        assert found is not None
        np.testing.assert_allclose(found, search.point, rtol=1e-6)
    # p: the Beta(9, 6) mode 8/13; w: the Dirichlet(3, 4, 6) mode.
    np.testing.assert_allclose(search.point[[0, 2, 3, 4]], [8 / 13, 0.2, 0.3, 0.5], rtol=1e-6)
