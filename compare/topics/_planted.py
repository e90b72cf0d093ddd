"""Planted bugs built from a topic's real PyMC model (shared glue of the topic modules).

A planted bug is the log density of the model with one classic mistake minus
the real model's, written with the variables of the model the topic's
``build_model`` returned (see :class:`compare.core.registry.PlantedBug`).
Two ways to write that difference cover the bugs of the builtin topics:

* :func:`normal_sd_bug`: a Normal variable (a prior, or an observed
  likelihood) whose ``sigma`` is replaced by ``change(sigma, factor)``:
  ``sum log N(v | mu, change(sigma)) - sum log N(v | mu, sigma)``;
* :func:`term_bug`: in a ``pm.Potential`` term (a likelihood from sufficient
  statistics), one variable is replaced by ``change(variable, factor)``:
  ``term(change(v)) - term(v)``.

The three classic mistakes, with their meaning at factor ``f``:

* ``prior_var``: the prior variance multiplied by ``f``, so ``sigma * sqrt(f)``;
* ``noise_sd``: the likelihood's standard deviation multiplied by ``f``
  (its variance by ``f**2``);
* ``sd_for_var``: a variance passed where a standard deviation belongs
  (``sigma**2`` for ``sigma``), or the reverse; it has no size (``neutral=None``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from compare.core.registry import PlantedBug

Change = Callable[[Any, float], Any]


def _variable(model: Any, name: str) -> Any:
    """``model[name]``, or a ValueError that names the model's variables."""
    try:
        return model[name]
    except KeyError:
        raise ValueError(
            f"the model has no variable {name!r} to plant the bug in; its "
            f"variables: {', '.join(model.named_vars)} (a variant or structure "
            "without it has no such bug)"
        ) from None


def normal_sd_bug(
    name: str,
    description: str,
    *,
    variable: str,
    change: Change,
    neutral: float | None = 1.0,
    needs: Mapping[str, Any] | None = None,
) -> PlantedBug:
    """A bug in the ``sigma`` of the Normal variable ``variable`` of the real model.

    Parameters
    ----------
    name, description : str
        As in :class:`PlantedBug`.
    variable : str
        A ``pm.Normal`` of the model: free (a prior) or observed (a likelihood).
    change : callable
        ``change(sigma, factor) -> sigma`` of the wrong model.
    neutral : float or None
        The factor at which ``change`` is the identity, or None.
    needs : mapping, optional
        Hyperparameters the bug needs (see :class:`PlantedBug`).

    Returns
    -------
    PlantedBug
        Its ``plant`` returns ``sum log N(v | mu, change(sigma, f)) - sum log N(v | mu, sigma)``
        at the variable's value ``v`` (its data when observed).
    """

    def plant(model: Any, factor: float) -> Any:
        import pymc as pm  # heavy: PyMC only when a model is built or sampled
        from pytensor.tensor.random.basic import (
            NormalRV,  # heavy: PyTensor only when a model is built
        )

        rv = _variable(model, variable)
        node = rv.owner
        if node is None or not isinstance(node.op, NormalRV):
            raise ValueError(
                f"{variable!r} is not a Normal variable of the model; "
                "normal_sd_bug changes a Normal's sigma"
            )
        mu, sigma = node.op.dist_params(node)
        # An observed variable's value is its data; a free one stands for its value
        # (PyMC replaces it by the value variable in the log density, as for any Potential).
        value = model.rvs_to_values[rv] if rv in model.observed_RVs else rv
        wrong = pm.logp(pm.Normal.dist(mu=mu, sigma=change(sigma, factor)), value)
        right = pm.logp(pm.Normal.dist(mu=mu, sigma=sigma), value)
        return (wrong - right).sum()

    return PlantedBug(
        name=name, description=description, plant=plant, neutral=neutral, needs=dict(needs or {})
    )


def term_bug(
    name: str,
    description: str,
    *,
    term: str,
    variable: str,
    change: Change,
    neutral: float | None = 1.0,
    needs: Mapping[str, Any] | None = None,
) -> PlantedBug:
    """A bug in how the ``pm.Potential`` ``term`` of the real model uses ``variable``.

    Parameters
    ----------
    name, description : str
        As in :class:`PlantedBug`.
    term : str
        A ``pm.Potential`` of the model (e.g. a likelihood written with
        sufficient statistics).
    variable : str
        A variable of the model (random or ``pm.Data``) that ``term`` uses;
        only inside ``term`` is it replaced.
    change : callable
        ``change(variable, factor)``: what the wrong model uses instead.
    neutral : float or None
        The factor at which ``change`` is the identity, or None.
    needs : mapping, optional
        Hyperparameters the bug needs (see :class:`PlantedBug`).

    Returns
    -------
    PlantedBug
        Its ``plant`` returns ``term(change(variable, f)) - term(variable)``.
    """

    def plant(model: Any, factor: float) -> Any:
        from pytensor.graph.replace import (
            graph_replace,  # heavy: PyTensor only when a model is built
        )

        expr = _variable(model, term)
        if not any(expr is p for p in model.potentials):
            raise ValueError(f"{term!r} is not a Potential of the model; term_bug changes one")
        var = _variable(model, variable)
        # Only the term's own use of `variable` changes: the model's random variables
        # are cut out as placeholders first, or a prior that depends on `variable`
        # (w | sigma2) would be rebuilt as a new random variable outside the model.
        leaves = {rv: rv.type() for rv in model.basic_RVs}
        cut = graph_replace(expr, leaves, strict=False)
        target = leaves.get(var, var)
        wrong = graph_replace(cut, {target: change(target, factor)}, strict=True)
        wrong = graph_replace(wrong, {leaf: rv for rv, leaf in leaves.items()}, strict=False)
        return (wrong - expr).sum()

    return PlantedBug(
        name=name, description=description, plant=plant, neutral=neutral, needs=dict(needs or {})
    )


def prior_var(variable: str, *, needs: Mapping[str, Any] | None = None) -> PlantedBug:
    """``prior_var``: the prior variance of the Normal ``variable`` multiplied by the factor."""
    return normal_sd_bug(
        "prior_var",
        f"the prior variance of {variable} multiplied by factor",
        variable=variable,
        change=lambda sd, f: sd * np.sqrt(f),
        needs=needs,
    )


def noise_sd(variable: str, *, needs: Mapping[str, Any] | None = None) -> PlantedBug:
    """``noise_sd``: the sd of the observed Normal ``variable`` multiplied by the factor."""
    return normal_sd_bug(
        "noise_sd",
        f"the sd of the likelihood of {variable} multiplied by factor",
        variable=variable,
        change=lambda sd, f: sd * f,
        needs=needs,
    )


def variance_for_sd(variable: str, *, needs: Mapping[str, Any] | None = None) -> PlantedBug:
    """``sd_for_var``: the Normal ``variable`` given its variance as ``sigma`` (no size)."""
    return normal_sd_bug(
        "sd_for_var",
        f"the variance of {variable} passed as its sigma (factor unused)",
        variable=variable,
        change=lambda sd, f: sd**2,
        neutral=None,
        needs=needs,
    )
