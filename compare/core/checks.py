"""Result types shared by the runner and topic-specific comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from compare.core.ess import ess_bulk, ess_tail, rhat_rank


class CheckKind(StrEnum):
    """The checks the core makes. A member is its name (``CheckKind.RHAT == "rhat"``,
    and JSON writes ``"rhat"``): the run document's ``checks[].name`` is a public
    contract. A topic's own checks (``evidence``, ``predictive``, ...) keep plain
    string names: the topic owns them."""

    DIVERGENCES = "divergences"
    RHAT = "rhat"
    ESS_BULK = "ess_bulk"
    ESS_TAIL = "ess_tail"
    AGREEMENT = "agreement"
    MAP = "map"
    APPROX_MEAN = "approx_mean"
    APPROX_SD = "approx_sd"


#: The convergence gates, strongest first: divergences (the sampler could not
#: follow the posterior), then R-hat (chains disagree), then the effective draws
#: (too few, which more draws cure). A failed gate makes a run inconclusive; the
#: first failed one decides it (:func:`compare.core.runner.decide`).
GATES = (CheckKind.DIVERGENCES, CheckKind.RHAT, CheckKind.ESS_BULK, CheckKind.ESS_TAIL)


#: The MAP check's note starts with its rule; what follows ("; searched from ...")
#: is where the searches started.
MAP_RULE = "largest |MAP - exact mode| in posterior sds must not exceed the threshold"


def decided_text(decided_by: object, also_failed: Sequence[Any] = ()) -> str:
    """``decided by divergences; also failed: rhat, ess_tail``."""
    also = f"; also failed: {', '.join(map(str, also_failed))}" if also_failed else ""
    return f"decided by {decided_by}{also}"


@dataclass(frozen=True)
class Check:
    """One named check: ``passed`` when ``statistic`` is on the right side of ``threshold``."""

    name: str
    statistic: float | None
    threshold: float
    passed: bool | None  # None: not applicable (see ``note``)
    note: str = ""
    on_fail: str = "disagree"  # or "inconclusive": the check is about trust, not truth
    #: Set on a convergence check that failed only for want of effective draws
    #: (state "short" of :func:`diagnose`): the smallest ESS of the run it
    #: judged.  The runner then samples again with more draws (see
    #: ``compare.core.runner.run``); None otherwise.
    short_ess: float | None = None
    #: A short form of ``note`` for the check's text line, where the note is long
    #: (the MAP check's starts); empty: the line says what it says without it.
    brief: str = ""


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
    compiled : compare.core.sampling.CompiledModel
        The compiled PyMC model, pointed at this data set.
    settings : compare.core.defaults.Settings
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


# --- convergence: converged, too few effective draws, or several modes --------
#: States of :func:`diagnose`.
CONVERGED, SHORT, MODES, DIVERGENT = "converged", "short", "modes", "divergent"


@dataclass(frozen=True)
class Diagnosis:
    """Convergence of one MCMC run, and whether drawing more would help.

    Attributes
    ----------
    rhat, ess_bulk, ess_tail : array of shape (d,)
        Rank-normalised split R-hat, bulk ESS and tail ESS (5 % and 95 %
        quantiles) per parameter (Vehtari et al. 2021).
    worst_rhat, min_bulk, min_tail : float
        Their worst values (NaN counted as failing: R-hat inf, ESS 0).
    mode_gap_sd : float
        Largest distance between two chains' means of one parameter, in that
        parameter's pooled within-chain sds.
    divergences : int
    state : str
        ``"converged"``: the gate holds (R-hat below ``rhat_max``, bulk and
        tail ESS above ``ess_min``, no divergence).  ``"divergent"``: some
        divergent transition (more draws would not remove it).  ``"modes"``:
        R-hat fails and two chains' means of a parameter lie more than
        ``mode_gap_sd`` within-chain sds and :data:`MODE_GAP_SE` standard
        errors apart, i.e. in different modes; more draws would not join them.
        ``"short"``: the chains explore one region but too few effective draws
        were kept (ESS below the gate, or R-hat above it only by the noise of
        so few effective draws): a property of the run, not of the posterior;
        a longer run settles it.
    """

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    worst_rhat: float
    min_bulk: float
    min_tail: float
    mode_gap_sd: float
    divergences: int
    state: str

    @property
    def min_ess(self) -> float:
        return min(self.min_bulk, self.min_tail)


#: Chains are in different modes only if their means differ by more than this
#: many standard errors (from each chain's own bulk ESS) as well as by
#: ``Settings.mode_gap_sd`` within-chain sds: over 10 parameters and 6 pairs
#: of chains, one mode explored slowly crosses 5 standard errors with
#: probability below 1e-4 (normal tails), while chains trapped in separate
#: modes sit many standard errors apart because each mixes well in its own.
MODE_GAP_SE = 5.0


def mode_gaps(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gaps between chain means, in pooled within-chain sds and in standard errors.

    Parameters
    ----------
    draws : array of shape (chain, draw, d)

    Returns
    -------
    gap_sd, gap_se : arrays of shape (pairs, d)
        For each pair of chains and parameter, |mean_i - mean_j| over the
        pooled within-chain sd, and over ``sd x sqrt(1/ESS_i + 1/ESS_j)``
        with each chain's own bulk ESS.
    """
    chains, n, d = draws.shape
    if chains < 2 or n < 4:
        return np.zeros((0, d)), np.zeros((0, d))
    means = draws.mean(axis=1)  # (chain, d)
    within = np.sqrt(draws.var(axis=1, ddof=1).mean(axis=0))  # (d,)
    # Each chain's own bulk ESS: every (chain, parameter) a quantity of one chain.
    per_chain = np.transpose(draws, (0, 2, 1)).reshape(chains * d, 1, n)
    with np.errstate(all="ignore"):
        ess = ess_bulk(per_chain).reshape(chains, d)
        ess = np.where(np.isfinite(ess) & (ess > 1), ess, 1.0)
        i, j = np.triu_indices(chains, k=1)
        spread = np.abs(means[i] - means[j])
        gap_sd = np.where(within > 0, spread / within, np.where(spread > 0, np.inf, 0.0))
        gap_se = gap_sd / np.sqrt(1 / ess[i] + 1 / ess[j])
    return gap_sd, gap_se


def diagnose(draws: np.ndarray, divergences: int, settings: Any) -> Diagnosis:
    """R-hat, bulk/tail ESS, the chains' mode gap, and the state they imply.

    Parameters
    ----------
    draws : array of shape (chain, draw, d)
    divergences : int
    settings : compare.core.defaults.Settings
        ``rhat_max``, ``ess_min`` and ``mode_gap_sd`` are read.
    """
    arr = np.moveaxis(draws, -1, 0)  # (d, chain, draw)
    with np.errstate(all="ignore"):
        rhat = rhat_rank(arr)
        bulk = ess_bulk(arr)
        tail = ess_tail(arr, prob=(0.05, 0.95))
    worst_rhat = float(np.max(np.nan_to_num(rhat, nan=np.inf)))
    min_bulk = float(np.min(np.nan_to_num(bulk, nan=0.0)))
    min_tail = float(np.min(np.nan_to_num(tail, nan=0.0)))
    gap_sd, gap_se = mode_gaps(draws)
    gap = float(np.max(gap_sd)) if gap_sd.size else 0.0
    separated = bool(np.any((gap_sd > settings.mode_gap_sd) & (gap_se > MODE_GAP_SE)))
    rhat_ok = worst_rhat < settings.rhat_max
    if divergences > 0:
        state = DIVERGENT
    elif rhat_ok and min(min_bulk, min_tail) > settings.ess_min:
        state = CONVERGED
    elif not rhat_ok and (separated or not np.isfinite(worst_rhat)):
        state = MODES
    else:
        state = SHORT
    return Diagnosis(
        rhat=rhat,
        ess_bulk=bulk,
        ess_tail=tail,
        worst_rhat=worst_rhat,
        min_bulk=min_bulk,
        min_tail=min_tail,
        mode_gap_sd=gap,
        divergences=int(divergences),
        state=state,
    )
