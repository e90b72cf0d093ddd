"""scipy's frozen distributions without the copy scipy makes at every freeze.

``scipy.stats.beta(a, b)`` builds a new ``beta_gen`` for the frozen object
(``rv_frozen.__init__``: ``dist.__class__(**dist._updated_ctor_param())``),
and a new distribution object formats its docstring and ``exec``-s its
argument parser: ~0.55 ms a freeze, more than four times what
``scipy.stats.beta.mean(a, b)`` costs (scipy 1.18, these machines). Marginals are frozen per
parameter, per run, per sensitivity grid point and per property-test
example, so that copy was 1.5% of the test suite's CPU and 3% of the report's
figures (py-spy, 2026-12-06).

The object :func:`freeze` returns is of a subclass of scipy's frozen class, whose
methods all call
``self.dist.<method>(x, *args, **kwds)``, with ``dist`` the module-level
distribution object itself, as ``scipy.stats.beta.pdf(x, a, b)`` uses it.
The only state a distribution object holds is its random state, and the copy
shares it too (``_updated_ctor_param`` passes it on), so every method gives
the same numbers and the same draws. Setting ``random_state`` on the frozen
object, which would otherwise reseed the module-level object, first gives it
its own copy, as scipy's frozen objects have. ``tests/analytic/test_frozen.py``
compares every method with scipy's freeze; :func:`freeze` falls back to
scipy's freeze if a scipy release changes what it relies on.
"""

from __future__ import annotations

from typing import Any

#: Our frozen classes, made at the first :func:`freeze` (SciPy is imported only
#: when the maths runs), by name: ``SharedContinuousFrozen``, ``SharedDiscreteFrozen``.
_CLASSES: dict[str, type] = {}


def _init(self: Any, dist: Any, *args: Any, **kwds: Any) -> None:
    """``rv_frozen.__init__`` without the copy of ``dist``."""
    self.args = args
    self.kwds = kwds
    self.dist = dist
    shapes, _, _ = dist._parse_args(*args, **kwds)
    self.a, self.b = dist._get_support(*shapes)


def _get_random_state(self: Any) -> Any:
    return self.dist._random_state


def _set_random_state(self: Any, seed: Any) -> None:
    """Copy on write: a frozen object reseeded gets its own distribution object first,
    as scipy's have from the start, so the module-level one keeps its random state."""
    from scipy.stats._distn_infrastructure import check_random_state  # heavy: SciPy

    self.dist = self.dist.__class__(**self.dist._updated_ctor_param())
    self.dist._random_state = check_random_state(seed)


def _classes() -> dict[str, type]:
    if not _CLASSES:
        from scipy.stats import _distn_infrastructure as infra  # heavy: SciPy

        made = {}
        for kind in ("Continuous", "Discrete"):
            base = getattr(infra, f"rv_{kind.lower()}_frozen")  # AttributeError if gone
            name = f"Shared{kind}Frozen"
            made[name] = type(
                name,
                (base,),
                {
                    "__init__": _init,
                    "__module__": __name__,
                    "__qualname__": name,
                    "__doc__": f"scipy's {base.__name__} over the shared distribution object.",
                    "random_state": property(_get_random_state, _set_random_state),
                },
            )
        _CLASSES.update(made)
    return _CLASSES


def __getattr__(name: str) -> type:
    """The classes by name, for pickle (a frozen marginal sent to another process)."""
    if name.startswith("Shared") and name in _classes():
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def freeze(dist: Any, *args: Any, **kwds: Any) -> Any:
    """``dist(*args, **kwds)``, a scipy frozen distribution, sharing ``dist``.

    Parameters
    ----------
    dist : scipy.stats distribution object
        A module-level one such as ``scipy.stats.beta``.
    *args, **kwds
        Its shape, ``loc`` and ``scale`` parameters, as scipy takes them.
    """
    from scipy.stats import rv_continuous, rv_discrete  # heavy: SciPy

    try:
        classes = _classes()
    except AttributeError:  # a SciPy without the frozen classes: its own freeze
        return dist(*args, **kwds)
    if hasattr(dist, "_parse_args") and hasattr(dist, "_get_support"):
        if isinstance(dist, rv_continuous):
            return classes["SharedContinuousFrozen"](dist, *args, **kwds)
        if isinstance(dist, rv_discrete):
            return classes["SharedDiscreteFrozen"](dist, *args, **kwds)
    return dist(*args, **kwds)
