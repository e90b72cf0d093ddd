"""Helpers the topic modules share: builtin data loaders and simulator adapters."""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np

from compare.core.data import parse_column, read_column
from compare.core.registry import (
    BuiltinData,
    Simulation,
)

SIMULATED_SEED = 20261129  # builtin:simulated is the same data on every machine


def csv_column(file: str, column: str, kind: str):
    """Loader for a CSV shipped in compare/datasets."""

    def load() -> np.ndarray:
        path = resources.files("compare") / "datasets" / file
        with resources.as_file(path) as p:
            return parse_column(read_column(p, column), kind)

    return load


def simulator(module):
    """Adapt an analytic module's ``simulate`` to the registry's signature."""

    def simulate(rng: np.random.Generator, n: int, hyper: dict[str, Any]) -> Simulation:
        theta, data = module.simulate(rng, n=n, **hyper)
        return Simulation(theta=theta, data=data)

    return simulate


def simulated_data(
    simulate,
    n: int,
    hyper: dict[str, Any],
    what: str,
    *,
    parameters: tuple[str, ...] | None = None,
) -> BuiltinData:
    """builtin:simulated: n observations from the prior predictive with a fixed seed
    (``parameters``: their names, see :class:`BuiltinData`)."""

    def load() -> np.ndarray:
        return simulate(np.random.default_rng(SIMULATED_SEED), n, dict(hyper)).data

    return BuiltinData(
        name="simulated",
        description=f"{n} {what} simulated from the prior predictive",
        source=f"simulated, seed {SIMULATED_SEED}, n={n}",
        load=load,
        hyper=dict(hyper),
        parameters=parameters,
    )
