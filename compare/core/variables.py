"""The flat parameter names of a PyMC model's variables (``mu``, ``w[0]``, ``L[0,1]``),
in the order the draws and the exact mean line up."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from compare.core.registry import InputError


def flat_names(
    model: Any, var_names: Sequence[str], *, what: str = "var_names"
) -> tuple[list[str], list[int]]:
    """Parameter names (``mu``, ``w[0]``, ``L[0,1]``) and sizes of each variable's draws.

    ``what`` names the argument in error messages.
    """
    shapes = variable_shapes(model, var_names, what=what)
    names, sizes = [], []
    for v in var_names:
        shape = shapes[v]
        size = int(np.prod(shape)) if shape else 1
        sizes.append(size)
        if not shape:
            names.append(v)
        else:
            names += [f"{v}[{','.join(str(i) for i in idx)}]" for idx in np.ndindex(*shape)]
    return names, sizes


def variable_shapes(
    model: Any, var_names: Sequence[str], *, what: str = "var_names"
) -> dict[str, tuple[int, ...]]:
    missing = [v for v in var_names if v not in model.named_vars]
    if missing:
        free = [rv.name for rv in model.free_RVs]
        raise InputError(
            f"{what}: the model has no variable(s) {missing}; its free variables are {free}"
        )
    shapes = model.eval_rv_shapes()  # free variables; FAST_COMPILE, nothing is JIT-compiled
    others = [v for v in var_names if v not in shapes]
    if others:  # deterministics: evaluate them once at the initial point, in Python mode
        import pytensor  # heavy: PyTensor only to evaluate a model's deterministics

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # The deterministics as functions of the value variables: compiled with
            # the random variables in them, they would be drawn (a Flat cannot be).
            fn = model.compile_fn(
                model.replace_rvs_by_values([model[v] for v in others]),
                inputs=model.value_vars,
                point_fn=False,
                on_unused_input="ignore",
                mode=pytensor.compile.mode.FAST_COMPILE,
            )
            point = model.initial_point()
            values = fn(*[point[v.name] for v in model.value_vars])
        shapes.update({v: tuple(np.shape(val)) for v, val in zip(others, values)})
    return {v: tuple(int(n) for n in shapes[v]) for v in var_names}
