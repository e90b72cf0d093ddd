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

import weakref
from typing import Any

import numpy as np
import pytensor
import pytensor.gradient
import pytensor.tensor as pt
from scipy import optimize

from tests.evaluation import EVAL_MODE

#: The solved Deterministics must equal theta to this, relative to its size.
SOLVE_RTOL = 1e-13


#: (model, names given) -> the compiled maps of :func:`value_point`; a model is
#: evaluated at many thetas, and compiling them per theta was most of the density
#: tests' time (the classifier's export test: 20 thetas, 7 s).
_COMPILED: weakref.WeakKeyDictionary[Any, dict[frozenset[str], _Maps]] = weakref.WeakKeyDictionary()


class _Maps:
    """What :func:`value_point` compiles for a model and the names theta gives."""

    def __init__(self, model: Any, given: frozenset[str]) -> None:
        free = {rv.name for rv in model.free_RVs}
        self.forward: dict[str, tuple[Any, Any]] = {}  # name -> (value var name, fn or None)
        for rv in model.free_RVs:
            if rv.name not in given:
                continue
            transform = model.rvs_to_transforms.get(rv)
            fn = None
            if transform is not None:
                # The Python linker: numba would compile each transform for seconds.
                value = pt.tensor(dtype="float64", shape=(None,) * rv.ndim)
                fn = pytensor.function(
                    [value], transform.forward(value, *rv.owner.inputs), mode=EVAL_MODE
                )
            self.forward[rv.name] = (model.rvs_to_values[rv].name, fn)
        done = {value_name for value_name, _ in self.forward.values()}
        self.solved = [v for v in model.value_vars if v.name not in done]
        self.derived = sorted(name for name in given if name not in free)
        self.solve = None
        if self.solved and self.derived:
            start = model.initial_point()
            known = [v for v in model.value_vars if v.name in done]
            self.known = [v.name for v in known]
            outputs = [model.replace_rvs_by_values([model[name]])[0] for name in self.derived]
            flat = pt.concatenate([pt.flatten(out) for out in outputs])
            # The exact Jacobian for Levenberg-Marquardt: finite differences took a
            # function evaluation per solved value and step.
            jacobians = pytensor.gradient.jacobian(
                flat, self.solved, disconnected_inputs="ignore", vectorize=True
            )
            jacobian = pt.concatenate(
                [pt.reshape(j, (flat.shape[0], -1)) for j in jacobians], axis=1
            )
            self.solve = pytensor.function(
                [*known, *self.solved], [flat, jacobian], mode=EVAL_MODE, on_unused_input="ignore"
            )
            self.shapes = [np.shape(start[v.name]) for v in self.solved]
            self.z0 = np.concatenate([np.ravel(start[v.name]) for v in self.solved])


def value_point(model: Any, theta: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The model's value variables (by name) at the variables' values ``theta``."""
    given = frozenset(theta)
    maps = _COMPILED.setdefault(model, {}).get(given)
    if maps is None:
        maps = _COMPILED[model][given] = _Maps(model, given)
    point: dict[str, np.ndarray] = {}
    for name, (value_name, fn) in maps.forward.items():
        value = np.asarray(theta[name], dtype=float)
        point[value_name] = np.asarray(value if fn is None else fn(value))
    solved, derived = maps.solved, maps.derived
    if not solved:
        return point
    if maps.solve is None:
        names = [v.name for v in solved]
        raise ValueError(f"theta gives no value that determines {names}")
    shapes = maps.shapes
    sizes = [int(np.prod(s)) for s in shapes]
    target = np.concatenate([np.ravel(theta[name]) for name in derived])
    known = [point[name] for name in maps.known]

    def unpack(z: np.ndarray) -> list[np.ndarray]:
        return [part.reshape(s) for part, s in zip(np.split(z, np.cumsum(sizes)[:-1]), shapes)]

    def residual(z: np.ndarray) -> np.ndarray:
        return maps.solve(*known, *unpack(z))[0] - target

    def jacobian(z: np.ndarray) -> np.ndarray:
        return maps.solve(*known, *unpack(z))[1]

    fit = optimize.least_squares(
        residual, maps.z0, jac=jacobian, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15
    )
    scale = np.abs(target).max()
    if np.abs(residual(fit.x)).max() > SOLVE_RTOL * scale:
        raise ValueError(f"no value of {[v.name for v in solved]} gives {derived} = theta")
    point.update({v.name: value for v, value in zip(solved, unpack(fit.x))})
    return point
