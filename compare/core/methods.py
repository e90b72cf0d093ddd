"""The inference methods a run can use (``--method``): what each is, needs and declares.

This module is the catalogue only (no PyMC, no JAX): commands validate
``--method`` with it before anything heavy is imported. The methods
themselves are in :mod:`compare.core.inference`.

Two kinds:

- **samplers** (``nutpie``, the default; ``pymc``, PyMC's own NUTS;
  ``numpyro`` and ``blackjax``, NUTS in JAX through ``pm.sample(nuts_sampler=...)``;
  ``smc``, ``pm.sample_smc``) give MCMC draws and get the calibrated verdict
  exactly as nutpie's (convergence gate, ESS-based z, Bonferroni);
- **approximations** (``advi`` and ``fullrank-advi``, ``pm.fit``; ``laplace``
  and ``pathfinder``) are not exact, so their verdict is about how wrong they
  are, measured against the exact posterior with its Monte Carlo error
  (:mod:`compare.core.approximation`).

Why Pathfinder and Laplace are not pymc-extras': its newest release (0.15.1)
requires ``pymc<6.4``, and installing it downgrades this project's PyMC
(6.4). Pathfinder is BlackJAX's (``blackjax.vi.pathfinder``, Zhang et al.
2022) on PyMC's JAX log density; Laplace is the textbook one (a Gaussian at
the mode of the log density in PyMC's unconstrained space, with covariance
the inverse of its negative Hessian, Bishop 2006 section 4.4), as
pymc-extras computes it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from compare.core.registry import InputError

SAMPLER, APPROXIMATION = "sampler", "approximation"


@dataclass(frozen=True)
class Method:
    """One inference method.

    Attributes
    ----------
    name : str
        What ``--method`` takes.
    kind : str
        :data:`SAMPLER` or :data:`APPROXIMATION`.
    summary : str
        One line for ``describe`` and the audit table.
    modules : tuple of str
        Modules it imports (checked before anything runs).
    install : str
        What to ``pip install`` when one is missing.
    gradients : bool
        Works on continuous free variables only (the log density's gradient,
        or for SMC Gaussian proposals): not applicable to a model whose free
        variables are discrete (a topic sampled by step methods).
    needs : str
        What it needs of the model, for the message that says why not.
    """

    name: str
    kind: str
    summary: str
    modules: tuple[str, ...] = ()
    install: str = ""
    gradients: bool = True
    needs: str = "the log density's gradient"

    def missing(self) -> str | None:
        """Why it cannot run here (a module not installed), or None."""
        absent = [m for m in self.modules if importlib.util.find_spec(m) is None]
        if not absent:
            return None
        return (
            f"--method {self.name} needs {', '.join(absent)}, which is not installed; "
            f"install it with `pip install {self.install}` (or `make install`)"
        )

    def not_applicable(self, *, discrete: bool) -> str | None:
        """Why it does not apply to a model, or None (``discrete``: discrete free variables).

        The default method runs every topic: a topic with discrete free
        variables declares its own step methods, which ``nutpie`` then means.
        """
        if discrete and self.gradients and self.name != DEFAULT_METHOD:
            return (
                f"{self.name} needs {self.needs} and this model's free "
                "variables are discrete (the topic samples them with step methods); "
                "only the default method runs it"
            )
        return None


#: Every method, in the order tables list them.
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("nutpie", SAMPLER, "NUTS in nutpie (numba), PyMC's default", ("nutpie",), "nutpie"),
        Method("pymc", SAMPLER, "PyMC's own NUTS (PyTensor, C backend)", ("pymc",), "pymc"),
        Method("numpyro", SAMPLER, "NUTS in NumPyro (JAX)", ("numpyro", "jax"), "numpyro jax"),
        Method("blackjax", SAMPLER, "NUTS in BlackJAX (JAX)", ("blackjax", "jax"), "blackjax jax"),
        Method(
            "smc",
            SAMPLER,
            "sequential Monte Carlo, pm.sample_smc (independent-MH kernel)",
            ("pymc",),
            "pymc",
            needs="continuous free variables (its proposals are Gaussian)",
        ),
        Method(
            "advi",
            APPROXIMATION,
            "mean-field ADVI, pm.fit (a diagonal Gaussian in the unconstrained space)",
            ("pymc",),
            "pymc",
        ),
        Method(
            "fullrank-advi",
            APPROXIMATION,
            "full-rank ADVI, pm.fit (a full Gaussian in the unconstrained space)",
            ("pymc",),
            "pymc",
        ),
        Method(
            "pathfinder",
            APPROXIMATION,
            "Pathfinder, blackjax.vi.pathfinder (a low-rank Gaussian from L-BFGS)",
            ("blackjax", "jax"),
            "blackjax jax",
        ),
        Method(
            "laplace",
            APPROXIMATION,
            "Laplace: a Gaussian at the unconstrained mode, inverse negative Hessian",
            ("pymc",),
            "pymc",
        ),
    )
}
DEFAULT_METHOD = "nutpie"


def get_method(name: str) -> Method:
    """The method called ``name``; :class:`InputError` naming the choices otherwise."""
    found = METHODS.get(name)
    if found is None:
        raise InputError(
            f"--method {name!r} is not a method; choose one of {', '.join(METHODS)} "
            "(docs/commands.md#methods)"
        )
    return found


def usable(name: str) -> Method:
    """:func:`get_method`, also refusing a method whose packages are not installed."""
    found = get_method(name)
    reason = found.missing()
    if reason is not None:
        raise InputError(reason)
    return found
