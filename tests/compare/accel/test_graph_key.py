"""The key of a PyTensor graph as built (compare/accel/graph_key.py).

What the compiled-model cache relies on: the same model built again, in this
process after anything was compiled or in a new process with another hash
seed, has the same key (else every load builds its graphs again); a model
that differs anywhere (a constant, an op, an op's parameter, a function in an
op's state) has another (else a load would sample the wrong density).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from compare.accel import compiled_cache, graph_key


def _beta_binomial(n_obs: int = 7, **planted):
    import pymc_models.beta_binomial as m

    model = m.build_model(n_obs=n_obs)
    if planted:
        with model:
            pm.Potential("planted", planted["factor"] * model["p"])
    return model


def _key(model) -> str:
    value_vars = [model.rvs_to_values[rv] for rv in model.free_RVs]
    shapes = [compiled_cache._symbolic_shape(model, rv) for rv in model.free_RVs]
    found = graph_key.graph_key([model.logp(), *shapes], value_vars)
    assert found is not None
    return found[0]


def test_the_same_model_has_the_same_key_before_and_after_a_compile() -> None:
    before = _key(_beta_binomial())
    model = _beta_binomial()
    # PyTensor caches state on shared Op instances at a compile (Elemwise's nfunc).
    model.compile_logp(mode="FAST_RUN")(model.initial_point())
    assert _key(_beta_binomial()) == before
    # The data's length is a value of a shared variable, not part of the graph.
    assert _key(_beta_binomial(n_obs=11)) == before


def test_a_new_process_with_another_hash_seed_finds_the_same_key() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from test_graph_key import _beta_binomial, _key
        print(_key(_beta_binomial()))
        """
    )
    here = os.path.dirname(__file__)
    keys = set()
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", script, here],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        keys.add(done.stdout.strip().splitlines()[-1])
    assert keys == {_key(_beta_binomial())}


def test_a_model_that_differs_anywhere_has_another_key() -> None:
    """Power: each planted difference is one node, one constant or one op parameter."""
    keys = {
        "model": _key(_beta_binomial()),
        "one more term": _key(_beta_binomial(factor=0.5)),
        "another constant": _key(_beta_binomial(factor=0.25)),
    }
    x = pt.dvector("x")
    keys["sum"] = graph_key.graph_key([x.sum()], [x])[0]  # type: ignore[index]
    keys["sum on axis 0"] = graph_key.graph_key([x.sum(axis=0)], [x])[0]  # type: ignore[index]
    keys["prod"] = graph_key.graph_key([x.prod()], [x])[0]  # type: ignore[index]
    keys["exp then sum"] = graph_key.graph_key([pt.exp(x).sum()], [x])[0]  # type: ignore[index]
    keys["log then sum"] = graph_key.graph_key([pt.log(x).sum()], [x])[0]  # type: ignore[index]
    assert len(set(keys.values())) == len(keys), keys


def test_functions_in_an_ops_state_are_keyed_by_their_code_and_closure() -> None:
    def holder(scale: float):
        return lambda value: scale * value

    describer = graph_key._Describer()
    one, same, other = holder(1.0), holder(1.0), holder(2.0)
    assert describer.value(one) == describer.value(same)
    assert describer.value(one) != describer.value(other)
    assert describer.value(one) != describer.value(lambda value: 1.0 * value)


def test_a_graph_reading_an_unknown_root_or_an_opaque_object_cannot_be_keyed() -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    assert graph_key.graph_key([x + y], [x]) is None  # y: neither an input nor shared
    assert graph_key.graph_key([x + y], [x, y]) is not None
    with pytest.raises(graph_key.Unkeyable):
        graph_key._Describer().value(np.array([object()]))
