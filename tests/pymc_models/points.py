"""A model's value variables at given values of its variables (for density checks).

The density tests evaluate ``model.compile_logp(jacobian=False)`` at parameter
values theta (the exact posterior's, SciPy's). That function takes the value
variables, so theta is mapped onto them:

- a free variable given in theta: its transform applied forwards (PyMC's own);
- a ``Deterministic`` given in theta (the Normal-Wishart precisions ``Lambda``,
  L L^T of a free Cholesky factor ``Lambda_chol``): the free variables it is a
  function of, and that theta does not give, are solved for by least squares
  (Levenberg-Marquardt on the difference, to the last bits: the map is smooth
  and one to one), so no test names a topic's parametrisation.

A free variable that theta neither gives nor determines is an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytensor
import pytensor.tensor as pt
from scipy import optimize

from tests.evaluation import EVAL_MODE

#: The solved Deterministics must equal theta to this, relative to its size.
SOLVE_RTOL = 1e-13


def value_point(model: Any, theta: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The model's value variables (by name) at the variables' values ``theta``."""
    point: dict[str, np.ndarray] = {}
    for rv in model.free_RVs:
        if rv.name not in theta:
            continue
        transform = model.rvs_to_transforms.get(rv)
        value = np.asarray(theta[rv.name], dtype=float)
        if transform is not None:
            # The Python linker: `.eval()` compiles each transform with numba, for seconds.
            forward = transform.forward(pt.as_tensor(value), *rv.owner.inputs)
            value = pytensor.function([], forward, mode=EVAL_MODE)()
        point[model.rvs_to_values[rv].name] = np.asarray(value)
    solved = [v for v in model.value_vars if v.name not in point]
    derived = [name for name in theta if name not in {rv.name for rv in model.free_RVs}]
    if not solved:
        return point
    if not derived:
        raise ValueError(f"theta gives no value that determines {[v.name for v in solved]}")
    start = model.initial_point()
    fn = pytensor.function(
        solved,
        [model.replace_rvs_by_values([model[name]])[0] for name in derived],
        givens={v: pt.as_tensor(point[v.name]) for v in model.value_vars if v.name in point},
        mode=EVAL_MODE,
        on_unused_input="ignore",
    )
    shapes = [np.shape(start[v.name]) for v in solved]
    sizes = [int(np.prod(s)) for s in shapes]
    target = np.concatenate([np.ravel(theta[name]) for name in derived])

    def unpack(z: np.ndarray) -> list[np.ndarray]:
        return [part.reshape(s) for part, s in zip(np.split(z, np.cumsum(sizes)[:-1]), shapes)]

    def residual(z: np.ndarray) -> np.ndarray:
        return np.concatenate([np.ravel(out) for out in fn(*unpack(z))]) - target

    z0 = np.concatenate([np.ravel(start[v.name]) for v in solved])
    fit = optimize.least_squares(residual, z0, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15)
    scale = np.abs(target).max()
    if np.abs(residual(fit.x)).max() > SOLVE_RTOL * scale:
        raise ValueError(f"no value of {[v.name for v in solved]} gives {derived} = theta")
    point.update({v.name: value for v, value in zip(solved, unpack(fit.x))})
    return point
