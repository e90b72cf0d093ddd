"""nutpie's ``import arviz`` without arviz-plots and matplotlib.

Why
---
``nutpie.sample`` imports ``arviz``, the ArviZ meta-package, when nutpie is
imported, for two functions of arviz-base (``from_dict`` and
``dict_to_dataset``, which turn nutpie's trace into a DataTree). ``arviz``
imports arviz-base, arviz-stats and arviz-plots, and arviz-plots imports
``matplotlib.pyplot``: ``import nutpie`` took 1.57 s, 0.43 s without them.
Every process that samples paid it (each ``bayes-compare run``, the workers of
``run --all``), though no figure is drawn where the draws are made: the
report draws them, in its own processes. A ``run`` still imports arviz-stats
(the diagnostics) and SciPy's statistics; arviz-plots and matplotlib it no
longer imports.

What
----
While ``nutpie`` is first imported (:func:`compare.accel._hooks.around_import`),
``sys.modules["arviz"]`` is a stand-in module (:class:`ArvizForNutpie`), which
nutpie keeps as its ``arviz``. The stand-in gives arviz-base's functions
(:data:`SERVED`: the very objects ``arviz`` itself exports, which
``tests/compare/accel/test_lazy_arviz.py`` checks); reading any other
attribute imports the real ``arviz`` and copies its namespace into the
stand-in. Right after nutpie's import the stand-in leaves ``sys.modules``: an
``import arviz`` anywhere else (a user's script, the Python API) imports the
real package as usual. When ``arviz`` is already loaded, nutpie gets it.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from compare.accel import allowed
from compare.accel._hooks import around_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "lazy-arviz"

#: What nutpie reads from ``arviz``; each is arviz-base's function of that name.
SERVED = ("from_dict", "dict_to_dataset")


class ArvizForNutpie(ModuleType):
    """``arviz`` as nutpie sees it: :data:`SERVED` from arviz-base, the rest from ``arviz``."""

    def __getattr__(self, name: str) -> Any:
        if name in SERVED:
            import arviz_base  # heavy: arviz-base only when nutpie converts a trace

            return getattr(arviz_base, name)
        if sys.modules.get("arviz") is self:
            del sys.modules["arviz"]
        real = importlib.import_module("arviz")
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


@contextlib.contextmanager
def _stand_in() -> Iterator[None]:
    """``sys.modules["arviz"]`` is a stand-in while the block runs (unless arviz is loaded)."""
    if "arviz" in sys.modules or not allowed(NAME):  # nutpie's version, read now
        yield
        return
    stand_in = ArvizForNutpie("arviz", __doc__)
    sys.modules["arviz"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("arviz") is stand_in:
            del sys.modules["arviz"]


def install() -> None:
    """nutpie imports the stand-in, when nutpie is imported from now on."""
    around_import("nutpie", _stand_in)
