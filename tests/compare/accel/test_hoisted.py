"""The data-only part of a log density, computed once per data set
(compare/accel/compiled_cache.py: ``Hoisted``, ``_hoist``, ``with_data``).

What a user relies on: the machine code computes the same log density and
gradient as the whole graph (to round-off), for the data it was compiled
with and for every data set swapped in afterwards; what moves out is what
costs (the GP's Cholesky factor). Planted: nutpie's own ``with_data``,
which knows nothing of the hoisted values, leaves the old data's in the
record, and the check below sees it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from compare.accel import compiled_cache
from compare.core.sampling import set_model_data
from compare.topics import get_topic

#: (topic, builtin data set) whose graphs hoist: a Cholesky of the data (the GP, with two
#: kernels), the Wishart prior's factor of its scale matrix (classifier, mixture).
CASES = [
    ("gaussian-process", "mcycle"),
    ("gaussian-process", "simulated"),
    ("gaussian-classifier", "iris"),
    ("gaussian-mixture", "faithful"),
]


def _model(topic_name: str, dataset: str):
    topic = get_topic(topic_name)
    ds = next(d for d in topic.builtin if d.name == dataset)
    hyper = topic.hyper(dataset=ds)
    x, hyper = topic.prepare(ds.load(), hyper)
    model = topic.build_model(**topic.structure(x, hyper))
    set_model_data(model, topic.model_data(x=x, **hyper))
    return model


def _captured_hoist(monkeypatch: pytest.MonkeyPatch, model) -> dict[str, Any]:
    """Build the model's graphs as a compile does (no numba), keeping ``_hoist``'s
    input and output."""
    seen: dict[str, Any] = {}
    real = compiled_cache._hoist

    def spy(joined, outputs):
        seen["joined"], seen["whole"] = joined, outputs
        seen["rest"], seen["hoisted"] = real(joined, outputs)
        return seen["rest"], seen["hoisted"]

    monkeypatch.setattr(compiled_cache, "_hoist", spy)
    monkeypatch.delenv(compiled_cache.NO_HOIST_ENV, raising=False)
    compiled_cache.model_key(model)
    return seen


def _python_function(inputs, outputs):
    import pytensor
    from pytensor.compile.mode import Mode

    mode = Mode(linker="py", optimizer="fast_compile").excluding("symbolic_op_recognition")
    return pytensor.function(inputs, compiled_cache.inline_inner_graphs(list(outputs)), mode=mode)


@pytest.mark.parametrize(("topic", "dataset"), CASES)
def test_the_hoisted_log_density_is_the_whole_one(topic, dataset, monkeypatch, rng):
    model = _model(topic, dataset)
    seen = _captured_hoist(monkeypatch, model)
    hoisted = seen["hoisted"]
    assert hoisted is not None and hoisted.hoisted
    for var, value in hoisted.values({}).items():
        var.set_value(value)
    whole = _python_function([seen["joined"]], seen["whole"])
    rest = _python_function([seen["joined"]], seen["rest"])
    n_dim = sum(int(np.size(v)) for v in model.initial_point().values())
    for _ in range(3):
        point = 0.3 * rng.standard_normal(n_dim)
        (logp_whole, grad_whole), (logp_rest, grad_rest) = whole(point), rest(point)
        assert np.isfinite(logp_whole) and np.all(np.isfinite(grad_whole))
        np.testing.assert_allclose(logp_rest, logp_whole, rtol=1e-10)
        scale = np.max(np.abs(grad_whole))
        np.testing.assert_allclose(grad_rest, grad_whole, rtol=1e-9, atol=1e-10 * scale)


def test_the_gps_cholesky_factor_leaves_the_machine_code(monkeypatch):
    from pytensor.graph.traversal import ancestors

    seen = _captured_hoist(monkeypatch, _model("gaussian-process", "mcycle"))

    def factorisations(graph):
        return [v for v in ancestors(graph) if v.owner and "Cholesky" in str(v.owner.op)]

    assert factorisations(seen["whole"])  # the whole graph factorises K at every gradient
    assert not factorisations(seen["rest"])  # the hoisted one never does


@pytest.mark.parametrize(
    ("topic", "dataset"), [("naive-bayes", "play-tennis"), ("beta-binomial", "birthwt-low")]
)
def test_a_graph_with_nothing_costly_on_the_data_hoists_nothing(topic, dataset, monkeypatch):
    """Shapes, sums and logs of the data stay in the machine code: each hoisted value is
    a field of nutpie's record, which costs more compile than such a node."""
    seen = _captured_hoist(monkeypatch, _model(topic, dataset))
    assert seen["hoisted"] is None and seen["rest"] is seen["whole"]  # left as they came


@pytest.mark.mcmc
def test_with_data_recomputes_the_hoisted_values(monkeypatch):
    """The record nutpie samples with holds the new data's hoisted values after our
    ``with_data`` (the GP's factor of K + noise^2 I, for another noise); after
    nutpie's own (planted), the old data's."""
    monkeypatch.delenv(compiled_cache.NO_HOIST_ENV, raising=False)
    topic = get_topic("gaussian-process")
    ds = topic.builtin[0]
    hyper = topic.hyper(dataset=ds)
    x, hyper = topic.prepare(ds.load(), hyper)
    model = topic.build_model(**topic.structure(x, hyper))
    first = topic.model_data(x=x, **hyper)
    set_model_data(model, first)
    compiled, _ = compiled_cache.compile_pymc_model(model)  # the suite's shared cache
    hoisted = compiled_cache.hoisted_of(compiled.logp_func)
    assert hoisted is not None

    def record(c) -> dict[str, np.ndarray]:
        return {var.name: c.shared_data[c.shared_var_keys[var]] for var in hoisted.hoisted}

    second = {**first, "hp_noise_sd": 2.0 * np.asarray(first["hp_noise_sd"])}
    known = {var.name for var in compiled.shared_var_keys}
    second = {k: v for k, v in second.items() if k in known}
    ours = record(compiled_cache.with_data(compiled, **second))
    plain = record(compiled.with_data(**second))
    by_name = {var.name: var for var in compiled.shared_var_keys}
    expected = hoisted.values(
        {by_name[k]: np.asarray(v, dtype=by_name[k].type.dtype) for k, v in second.items()}
    )
    before = record(compiled)
    changed = False
    for var, value in expected.items():
        np.testing.assert_array_equal(ours[var.name], value)
        np.testing.assert_array_equal(plain[var.name], before[var.name])  # stale
        changed |= not np.array_equal(value, before[var.name])
    assert changed  # the second data's values differ, so a stale record is caught


@pytest.mark.parametrize(("topic", "dataset"), [CASES[0], CASES[2]])
def test_stored_graphs_read_the_same_record_and_hoisted_values(topic, dataset, tmp_path):
    """What a load reads from a ``.graphs`` file (no graph built) is what the graphs
    gave: the shared variables in the record's order, and the hoisted values bit for
    bit, for the model's data and for another data set. Planted: a file of another
    graph is not read."""
    model = _model(topic, dataset)
    start = compiled_cache._initial_point_fn(model, jitter=False)
    logp_fn = compiled_cache._make_functions(model, start, folder=tmp_path)[2]
    graph = logp_fn.maker.bayes_compare_graph
    assert graph is not None
    compiled_cache._store_graphs(tmp_path, logp_fn, key="machine-code-key")
    stored = compiled_cache._load_graphs(tmp_path, *graph)
    assert isinstance(stored, compiled_cache.StoredGraphs)
    assert stored.key == "machine-code-key"
    built = compiled_cache.hoisted_of(logp_fn)
    loaded = compiled_cache.hoisted_of(stored)
    assert built is not None and loaded is not None
    names = [var.name for var in logp_fn.get_shared()]
    assert [var.name for var in stored.get_shared()] == names
    assert loaded.shared == built.shared  # the model's own shared variables
    for scale in (1.0, 3.0):
        data = {var: scale * np.asarray(var.get_value()) for var in built.shared}
        ours = [loaded.values(data)[var] for var in loaded.hoisted]
        theirs = [built.values(data)[var] for var in built.hoisted]
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
    assert compiled_cache._load_graphs(tmp_path, "0" * 64, graph[1]) is None
    # A model of the same graph built again finds the file.
    again = compiled_cache._make_functions(_model(topic, dataset), start, folder=tmp_path)[2]
    assert isinstance(again, compiled_cache.StoredGraphs)
