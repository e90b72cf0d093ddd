"""Result types shared by the runner and topic-specific comparisons."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Check:
    """One named check: ``passed`` when ``statistic`` is on the right side of ``threshold``."""

    name: str
    statistic: float | None
    threshold: float
    passed: bool | None  # None: not applicable (see ``note``)
    note: str = ""
    on_fail: str = "disagree"  # or "inconclusive": the check is about trust, not truth


@dataclass(frozen=True, eq=False)
class ExtraContext:
    """What a topic's extra comparisons get after the main verdict's checks.

    Attributes
    ----------
    x : object
        The prepared data (what ``Topic.solve`` received).
    hyper : dict
    exact : ExactAnswer
    tree : xarray.DataTree
        The MCMC run (posterior and sample_stats groups).
    compiled : compare.sampling.CompiledModel
        The compiled PyMC model, pointed at this data set.
    settings : compare.defaults.Settings
    pymc_map : array or None
        PyMC's MAP, flattened in parameter order.
    alpha : float
        The family-wise false-alarm rate each statistical test of the run
        gets (the verdict's alpha split over its tests).
    """

    x: Any
    hyper: dict[str, Any]
    exact: Any
    tree: Any
    compiled: Any
    settings: Any
    pymc_map: np.ndarray | None
    alpha: float


@dataclass(frozen=True)
class Extra:
    """A topic's extra comparisons: checks that join the verdict, JSON sections, text."""

    checks: tuple[Check, ...] = ()
    sections: dict[str, Any] = field(default_factory=dict)
    lines: tuple[str, ...] = ()
