"""Run one topic on one data set: exact answer, MCMC, checks, verdict.

Orchestration only: the maths is in ``analytic``, the model in
``pymc_models``, the statistics in :mod:`compare.agreement`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr
from arviz_stats.base import array_stats

from analytic import ExactAnswer
from compare.agreement import Agreement, agreement_test, posterior_array
from compare.checks import Check, Extra, ExtraContext
from compare.data import check_array
from compare.defaults import DEFAULT, Settings
from compare.registry import InputError, Topic

if TYPE_CHECKING:  # sampling imports PyMC; checking draws alone (compare.check_draws) does not
    from compare.sampling import ModelCache

AGREE, DISAGREE, INCONCLUSIVE = "agree", "disagree", "inconclusive"


@dataclass(frozen=True)
class McmcSummary:
    """MCMC estimates, vectors in parameter order."""

    mean: np.ndarray
    cov: np.ndarray
    sd: np.ndarray
    mcse_mean: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    rhat: np.ndarray
    divergences: int
    map: np.ndarray | None


@dataclass(frozen=True)
class RunResult:
    """Everything one run produced; ``to_json`` gives the public document."""

    topic: str
    parameters: tuple[str, ...]
    verdict: str
    decided_by: str
    exact: ExactAnswer
    mcmc: McmcSummary
    agreement: Agreement | None
    checks: tuple[Check, ...]
    settings: Settings
    hyper: dict[str, Any]
    data_source: str
    n: int
    timings: dict[str, float]
    draws: xr.DataTree = field(repr=False)
    extra: Extra = field(default_factory=Extra)
    #: PyMC variables whose flattened draws line up with ``parameters``.
    variables: tuple[str, ...] = ()
    #: The data as named columns (kept beside the draws for the report).
    observed: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def exit_code(self) -> int:
        return {AGREE: 0, DISAGREE: 1, INCONCLUSIVE: 2}[self.verdict]

    @property
    def map_distance_sd(self) -> np.ndarray | None:
        """|PyMC MAP - exact mode| in exact posterior sds, per parameter."""
        mode = self.exact.posterior.mode
        if mode is None or self.mcmc.map is None:
            return None
        return np.abs(self.mcmc.map - mode) / posterior_scale(self.exact.posterior)


def posterior_scale(posterior) -> np.ndarray:
    """Per-parameter exact sd, or IQR / 1.349 where the sd is infinite.

    IQR / 1.349 equals the sd for a normal and exists for every posterior,
    so distances stay meaningful when heavy tails leave no finite variance.
    """
    sd = np.sqrt(np.diag(np.asarray(posterior.cov, dtype=float)))
    for i in np.flatnonzero(~np.isfinite(sd)):
        marginal = posterior.marginal(int(i))
        if marginal is not None:
            sd[i] = (marginal.ppf(0.75) - marginal.ppf(0.25)) / 1.349
    return sd


def convergence_checks(draws: np.ndarray, divergences: int, settings: Settings
                       ) -> tuple[tuple[Check, ...], dict[str, np.ndarray]]:
    """R-hat, bulk/tail ESS and divergence checks on draws of shape (chain, draw, d)."""
    arr = np.moveaxis(draws, -1, 0)  # (d, chain, draw)
    rhat = np.asarray(array_stats.rhat(arr, method="rank"), dtype=float)
    ess_bulk = np.asarray(array_stats.ess(arr, method="bulk"), dtype=float)
    ess_tail = np.asarray(array_stats.ess(arr, method="tail", prob=(0.05, 0.95)), dtype=float)
    worst_rhat = float(np.max(np.nan_to_num(rhat, nan=np.inf)))
    min_bulk = float(np.min(np.nan_to_num(ess_bulk, nan=0.0)))
    min_tail = float(np.min(np.nan_to_num(ess_tail, nan=0.0)))
    checks = (
        Check("rhat", worst_rhat, settings.rhat_max, worst_rhat < settings.rhat_max,
              "largest rank-normalised split R-hat must be below the threshold"),
        Check("ess_bulk", min_bulk, settings.ess_min, min_bulk > settings.ess_min,
              "smallest bulk ESS must exceed the threshold"),
        Check("ess_tail", min_tail, settings.ess_min, min_tail > settings.ess_min,
              "smallest tail ESS must exceed the threshold"),
        Check("divergences", float(divergences), 0.0, divergences == 0,
              "no divergent transitions allowed"),
    )
    return checks, {"rhat": rhat, "ess_bulk": ess_bulk, "ess_tail": ess_tail}


def map_check(exact: ExactAnswer, pymc_map: np.ndarray | None, settings: Settings) -> Check:
    """PyMC's MAP against the exact mode, in exact posterior sds (IQR/1.349 where infinite)."""
    post = exact.posterior
    tol = settings.map_tol_sd
    if post.mode is None:
        return Check("map", None, tol, None, "the exact posterior has no unique mode")
    if pymc_map is None:  # an optimiser that stops short says nothing about the maths
        return Check("map", None, tol, False, "PyMC's MAP optimisation did not converge "
                     "(iteration limit after restarts, or a non-finite point)",
                     on_fail=INCONCLUSIVE)
    dist = float(np.max(np.abs(pymc_map - post.mode) / posterior_scale(post)))
    if not post.mode_interior:
        return Check("map", dist, tol, None,
                     "the mode lies on the boundary of the support; reported, not tested")
    return Check("map", dist, tol, dist <= tol,
                 "largest |MAP - exact mode| in posterior sds must not exceed the threshold")


def decide(checks: tuple[Check, ...]) -> tuple[str, str]:
    """Verdict and the name of the check that decided it.

    Convergence failures make the run inconclusive (the MCSEs are not
    trustworthy), before agreement is looked at; otherwise any failed
    agreement or MAP check is a disagreement.
    """
    convergence = ("rhat", "ess_bulk", "ess_tail", "divergences")
    by_name = {c.name: c for c in checks}
    for name in convergence:
        if by_name[name].passed is False:
            return INCONCLUSIVE, name
    for check in checks:  # topic checks that question trust, e.g. a multimodal mixture
        if check.name not in convergence and check.passed is False \
                and check.on_fail == INCONCLUSIVE:
            return INCONCLUSIVE, check.name
    for check in checks:  # agreement, map, then any topic-specific check, in order
        if check.name not in convergence and check.passed is False:
            return DISAGREE, check.name
    return AGREE, "agreement"


def summarise(draws: np.ndarray, extra: dict[str, np.ndarray], divergences: int,
              pymc_map: np.ndarray | None) -> McmcSummary:
    flat = draws.reshape(-1, draws.shape[-1])
    arr = np.moveaxis(draws, -1, 0)
    return McmcSummary(
        mean=flat.mean(axis=0),
        cov=np.atleast_2d(np.cov(flat, rowvar=False)),
        sd=flat.std(axis=0, ddof=1),
        mcse_mean=np.asarray(array_stats.mcse(arr, method="mean"), dtype=float),
        ess_bulk=extra["ess_bulk"], ess_tail=extra["ess_tail"], rhat=extra["rhat"],
        divergences=divergences, map=pymc_map,
    )


def run(topic: Topic, *, data: np.ndarray, hyper: Mapping[str, Any] | None = None,
        settings: Settings = DEFAULT, source: str = "array", cache: ModelCache | None = None,
        on_stage: Callable[[str], None] | None = None) -> RunResult:
    """Compare the exact posterior with PyMC's on one data set.

    Parameters
    ----------
    topic : Topic
    data : array of shape (n,)
        One column of observations (numbers, or labels for categorical topics).
    hyper : mapping, optional
        Complete hyperparameters (see ``Topic.hyper``); defaults when None.
    settings : Settings
    source : str
        Where the data came from, for the report.
    cache : ModelCache, optional
        Compiled models; one compile per topic and structure (default: the
        process-wide ``compare.sampling.CACHE``).
    on_stage : callable, optional
        Called with "compiling", "sampling", "checking" as the run progresses.
    """
    if cache is None:
        from compare.sampling import CACHE as cache
    stage = on_stage or (lambda _: None)
    t0 = time.perf_counter()
    hyper = dict(topic.hyper() if hyper is None else hyper)
    structured = topic.data_kind in ("table", "points")
    column = data if structured else check_array(np.asarray(data), topic.data_kind, source)
    if structured and not hasattr(column, "features"):
        raise InputError(f"{topic.name} takes {topic.data_kind} data: build it with "
                         "compare.data.table_from_arrays(x, y) or points_from_array(x)")
    x, hyper = topic.prepare(column, hyper)
    try:
        exact = topic.solve(x=x, **hyper)
    except ValueError as err:
        raise InputError(str(err)) from err
    structure = topic.structure(x, hyper)
    key = (topic.name, tuple(sorted(structure.items())), topic.build_model)
    if key not in cache:
        stage("compiling")
    t1 = time.perf_counter()
    compiled = cache.get(key, lambda: topic.build_model(**structure), topic.variables,
                         **({} if topic.step is None else {"step": topic.step}))
    t2 = time.perf_counter()
    model_data = topic.model_data(x=x, **hyper)
    stage("sampling")
    tree = compiled.sample(model_data, settings, seed=settings.seed,
                           options=dict(topic.sampler_options))
    t3 = time.perf_counter()
    stage("checking")
    draws = posterior_array(tree.posterior, topic.variables)
    if draws.shape[-1] != len(exact.parameters):
        raise ValueError(f"topic {topic.name}: PyMC variables {topic.variables} give "
                         f"{draws.shape[-1]} values per draw, the exact posterior has "
                         f"{len(exact.parameters)} parameters")
    divergences = int(np.asarray(tree.sample_stats["diverging"]).sum())
    checks, diag = convergence_checks(draws, divergences, settings)
    alpha_each = settings.alpha / (1 + topic.extra_tests)  # Bonferroni across the tests
    agreement = agreement_test(draws, exact.posterior, alpha=alpha_each,
                               seed=settings.seed,
                               n_reference=settings.n_reference)
    agreement_check = Check("agreement", agreement.max_abs_z, agreement.threshold,
                            agreement.passed,
                            f"max |z| over {len(agreement.quantities)} quantities must not "
                            f"exceed the Bonferroni threshold for alpha={alpha_each:g}")
    pymc_map = compiled.map_point(model_data)
    checks = (*checks, agreement_check, map_check(exact, pymc_map, settings))
    extra = Extra()
    if topic.extras is not None and settings.extras:
        extra = topic.extras(ExtraContext(x=x, hyper=hyper, exact=exact, tree=tree,
                                          compiled=compiled, settings=settings,
                                          pymc_map=pymc_map, alpha=alpha_each))
        checks = (*checks, *extra.checks)
    verdict, decided_by = decide(checks)
    t4 = time.perf_counter()
    return RunResult(
        topic=topic.name, parameters=tuple(exact.parameters), verdict=verdict,
        decided_by=decided_by, exact=exact,
        mcmc=summarise(draws, diag, divergences, pymc_map), agreement=agreement,
        checks=checks, settings=settings, hyper=hyper, data_source=source, n=int(len(x)),
        timings={"compile": t2 - t1, "sample": t3 - t2, "check": t4 - t3, "total": t4 - t0},
        draws=tree, extra=extra, variables=tuple(topic.variables),
        observed=observed_columns(column),
    )


#: Largest data set (in values) whose columns are kept beside the draws.
OBSERVED_MAX_VALUES = 2_000_000


def observed_columns(column: Any) -> dict[str, np.ndarray]:
    """The run's data as named columns; empty when streamed or very large."""
    if hasattr(column, "y"):  # Table
        cols = {name: column.x[:, j] for j, name in enumerate(column.features)}
        cols[column.target] = column.y
    elif hasattr(column, "x") and hasattr(column, "features"):  # Points
        cols = {name: column.x[:, j] for j, name in enumerate(column.features)}
        labels = getattr(column, "labels", None)  # LabelledPoints: the class of each row
        if labels is not None:
            cols[getattr(column, "target", None) or "label"] = np.asarray(labels).astype(str)
    elif isinstance(column, np.ndarray):
        cols = {"x": column}
    else:  # StreamedTable: never held in memory
        return {}
    if sum(np.asarray(v).size for v in cols.values()) > OBSERVED_MAX_VALUES:
        return {}
    return {str(k): np.asarray(v) for k, v in cols.items()}
