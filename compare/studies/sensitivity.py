"""Prior sensitivity: exact sweeps over one hyperparameter, MCMC at chosen points,
and power-scaling (exact against ``arviz_stats.psense``).

Orchestration only: the maths is in :mod:`analytic.sensitivity` (the
eigendecomposition path of the linear model, the exact CJS distance), in each
topic's analytic module (``sensitivity_path``, ``power_scaled``) and in its
``solve``; MCMC goes through :func:`compare.core.runner.run` and its
compiled-model cache.

Which topics, and how: each topic says so itself in ``Topic.sensitivity``, a
:class:`compare.core.registry.Sensitivity` (the parameter the report sweeps,
the vectorised exact path, the power-scaled posterior, the exact log
densities where PyMC's have no per-observation likelihood, derived
parameters such as ridge's lambda) or :class:`compare.core.registry.Unsupported`
with the reason the study refuses it (an exact answer that is no closed
form).  Power-scaling needs a conjugate prior: the topics that declare a
``power_scaled`` posterior.  This module names no topic.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from analytic import sensitivity as asens
from compare.core.agreement import posterior_array
from compare.core.checks import CheckKind
from compare.core.data import check_array
from compare.core.defaults import DEFAULT, Settings
from compare.core.drawing import drawing
from compare.core.files import DRAWS_FILE, NETCDF_ENGINE, atomic_write, dumps
from compare.core.files import clean as _clean
from compare.core.registry import (
    REGISTRY,
    DerivedParameter,
    InputError,
    Sensitivity,
    Topic,
    Unsupported,
)
from compare.core.text import fmt
from compare.topics import all_topics

SENSITIVITY_FILE = "sensitivity.json"
FIGURE_FILE = "sensitivity.png"

#: Points of the report's default grid (log-spaced over 1e-2..1e2 times the value);
#: fewer for the topics solved point by point (a GP or naive-Bayes solve takes ~50 ms).
REPORT_POINTS = 41
REPORT_POINTS_SLOW = 25
#: Central interval reported along the path.
INTERVAL = 0.95


# --- what the topic declares ----------------------------------------------------
def declared(topic: Topic) -> Sensitivity | None:
    """The topic's :class:`Sensitivity`, or None when it declares none (or Unsupported)."""
    return topic.sensitivity if isinstance(topic.sensitivity, Sensitivity) else None


def refusal(topic: Topic) -> str | None:
    """Why the study refuses ``topic`` (its ``Unsupported`` reason), or None.

    A topic that declares nothing (a topic file) is swept point by point
    with ``solve``, unless ``not_closed_form`` says its exact side is no
    closed form.
    """
    if isinstance(topic.sensitivity, Unsupported):
        return topic.sensitivity.reason
    if topic.sensitivity is None:
        return topic.not_closed_form
    return None


def power_scaled_of(topic: Topic) -> Callable[..., Any] | None:
    """The topic's exact power-scaled posterior, or None (no conjugate prior)."""
    s = declared(topic)
    return None if s is None else s.power_scaled


def derived_parameter(topic: Topic, param: str) -> DerivedParameter | None:
    """The derived quantity ``param`` of ``topic`` (ridge's lambda), or None."""
    s = declared(topic)
    return next((d for d in (s.derived if s else ()) if d.name == param), None)


# --- what can be swept ----------------------------------------------------------
def check_topic(topic: Topic) -> None:
    """Refuse a topic that declares the study Unsupported (InputError, exit code 3)."""
    reason = refusal(topic)
    if reason is not None:
        raise InputError(
            f"{topic.name} has no closed-form posterior ({reason}), "
            "so an exact sweep is not possible; sensitivity works for: "
            f"{', '.join(closed_form_topics())}"
        )


def closed_form_topics() -> list[str]:
    """The registered topics the study accepts (asked of each topic, see :func:`refusal`)."""
    return [t.name for t in all_topics() if refusal(t) is None]


def power_scaled_topics() -> list[str]:
    """The registered topics with an exact power-scaled posterior."""
    return [t.name for t in all_topics() if power_scaled_of(t) is not None]


def sweep_parameters(topic: Topic) -> tuple[str, ...]:
    """Hyperparameters of ``topic`` that ``--param`` accepts, then its derived quantities."""
    s = declared(topic)
    not_swept = set(s.not_swept) if s else set()
    names = [
        h.name
        for h in topic.hyperparameters
        if not h.structural
        and h.name not in not_swept
        and h.kind in ("positive", "real", "positive-list")
        and not (h.kind == "positive-list" and h.default is None)
    ]
    names += [d.name for d in (s.derived if s else ())]
    return tuple(names)


def check_param(topic: Topic, *, param: str) -> None:
    valid = sweep_parameters(topic)
    if param not in valid:
        raise InputError(
            f"--param {param!r} is not a hyperparameter of {topic.name} that can be "
            f"swept; choose one of: {', '.join(valid)}"
        )


def parse_grid(*, grid: str | None = None, log_grid: str | None = None) -> np.ndarray:
    """``--grid a,b,c`` or ``--log-grid LO:HI:N`` as a sorted array of at least 2 distinct points."""
    if (grid is None) == (log_grid is None):
        raise InputError("give exactly one of --grid a,b,c and --log-grid LO:HI:N")
    if grid is not None:
        try:
            values = np.array([float(v) for v in grid.split(",") if v.strip()], dtype=float)
        except ValueError:
            raise InputError(
                f"--grid {grid!r} must be comma-separated numbers, e.g. --grid 0.1,1,10"
            ) from None
        what = f"--grid {grid!r}"
    else:
        parts = log_grid.split(":")
        try:
            lo, hi, n = float(parts[0]), float(parts[1]), float(parts[2])
            if len(parts) != 3:
                raise ValueError
        except (ValueError, IndexError):
            raise InputError(
                f"--log-grid {log_grid!r} must look like LO:HI:N, e.g. --log-grid 1e-3:1e3:200"
            ) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo > 0 and hi > lo):
            raise InputError(
                f"--log-grid {log_grid!r} needs 0 < LO < HI, e.g. --log-grid 1e-3:1e3:200"
            )
        if not n.is_integer() or n < 2:
            raise InputError(
                f"--log-grid {log_grid!r}: N must be a whole number >= 2 "
                "(a sweep of one point is a single run: use `bayes-compare run`)"
            )
        values = np.geomspace(lo, hi, int(n))
        what = f"--log-grid {log_grid!r}"
    if not np.all(np.isfinite(values)):
        raise InputError(f"{what} must hold finite numbers, got {values.tolist()}")
    values = np.unique(values)
    if values.size < 2:
        raise InputError(
            f"{what} has {values.size} distinct point; a sweep needs at least 2 "
            "(for one value use `bayes-compare run --set NAME=VALUE`)"
        )
    return values


def default_grid(
    topic: Topic, *, param: str, hyper: Mapping[str, Any], n_obs: int, points: int = REPORT_POINTS
) -> np.ndarray:
    """The report's grid: 1e-2..1e2 times the value, unless the topic declares another.

    A derived quantity gets its range per observation (ridge's lambda: the
    course's 1e-8 n .. 0.1 n), a parameter in ``Sensitivity.linear_grids`` an
    even grid over its declared range (a label-noise probability whose value
    may be 0), and a real-valued parameter (a prior mean) an even grid of +-10
    around its value.
    """
    derived = derived_parameter(topic, param)
    if derived is not None:
        lo, hi = derived.range_per_n
        return np.geomspace(lo * n_obs, hi * n_obs, derived.points)
    s = declared(topic)
    if s is not None and param in s.linear_grids:
        lo, hi = s.linear_grids[param]
        return np.linspace(lo, hi, points)
    value = base_value(topic, hyper=hyper, param=param)
    spec = {h.name: h for h in topic.hyperparameters}[param]
    if spec.kind == "real":
        return np.linspace(value - 10.0, value + 10.0, points)
    return np.geomspace(value * 1e-2, value * 1e2, points)


def base_value(topic: Topic, *, hyper: Mapping[str, Any], param: str) -> float:
    """The current value of ``param`` (a derived quantity from the hyperparameters it is of)."""
    derived = derived_parameter(topic, param)
    if derived is not None:
        return float(derived.value(hyper))
    value = hyper[param]
    if isinstance(value, (tuple, list)):
        value = value[0]
    return float(value)


def hyper_at(topic: Topic, *, hyper: Mapping[str, Any], param: str, value: float) -> dict[str, Any]:
    """``hyper`` with ``param`` set to ``value`` (checked: a value outside the domain is InputError)."""
    out = dict(hyper)
    derived = derived_parameter(topic, param)
    if derived is not None:
        if not (np.isfinite(value) and value > 0):
            raise InputError(
                f"grid value {value:g} for {param} is outside its domain: {derived.domain}"
            )
        out[derived.sets] = derived.solve_for(hyper, value)
        return out
    spec = {h.name: h for h in topic.hyperparameters}[param]
    try:
        out[param] = spec.check(value)
    except InputError as err:
        raise InputError(
            f"grid value {value:g} for {param} is outside its domain ({err}); give a grid inside it"
        ) from None
    return out


def check_grid(
    topic: Topic, *, hyper: Mapping[str, Any], param: str, grid: np.ndarray
) -> np.ndarray:
    """The grid as floats, checked against the parameter's domain (InputError otherwise).

    The domains are intervals (> 0 or any finite number), so the extremes decide.
    """
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size < 2:
        raise InputError(f"a sweep needs at least 2 grid values, got {grid.size}")
    bad = grid[~np.isfinite(grid)]
    if bad.size:
        raise InputError(f"grid value {bad[0]} for {param} is not a finite number")
    for value in (grid.min(), grid.max()):
        hyper_at(topic, hyper=hyper, param=param, value=float(value))
    return grid


# --- the exact sweep -------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Sweep:
    """The exact posterior along a grid of one hyperparameter.

    Attributes
    ----------
    param : str
    grid : array of shape (G,)
    parameters : tuple of str, length d
    mean, sd, lower, upper, map : arrays of shape (G, d)
        Posterior mean and sd, the central ``INTERVAL`` interval of each
        marginal (NaN where there is no closed-form marginal), the MAP (NaN
        where no unique mode).
    log_evidence : array of shape (G,)
    seconds : float
        Time of the exact sweep.
    method : str
        The topic's ``Sensitivity.path_method`` (``vectorised closed form``,
        ``eigendecomposition``) or ``per-point solve``.
    """

    param: str
    grid: np.ndarray
    parameters: tuple[str, ...]
    mean: np.ndarray
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    map: np.ndarray
    log_evidence: np.ndarray
    seconds: float
    method: str


def _prepare(topic: Topic, data: Any, hyper: Mapping[str, Any], source: str):
    structured = topic.data_kind in ("table", "points")
    column = data if structured else check_array(np.asarray(data), topic.data_kind, source)
    return topic.prepare(column, dict(hyper))


def exact_sweep(
    topic: Topic,
    *,
    data: Any,
    hyper: Mapping[str, Any],
    param: str,
    grid: np.ndarray,
    source: str = "array",
) -> Sweep:
    """The exact posterior at every grid value of ``param``; every value is checked first.

    A topic that declares a vectorised ``Sensitivity.path`` covering
    ``param`` gets the whole grid from it at once (linear regression: one
    eigendecomposition); otherwise ``solve`` runs per point (``Topic.solve``
    is what a single run uses, so the two agree).
    """
    check_topic(topic)
    check_param(topic, param=param)
    if hyper.get("optimise"):
        raise InputError(
            "a sensitivity sweep needs fixed hyperparameters: drop --set "
            "optimise=true (type-II ML would move lengthscale, signal_sd and "
            "noise_sd at every grid point)"
        )
    grid = check_grid(topic, hyper=hyper, param=param, grid=grid)
    x, hyper0 = _prepare(topic, data, hyper, source)
    t0 = time.perf_counter()
    s = declared(topic)
    derived = derived_parameter(topic, param)
    if s is not None and s.path is not None and (s.path_params is None or param in s.path_params):
        kw = _power_hyper(topic, hyper0)
        values = grid[:, None] if s.grid_column else grid
        if derived is not None:
            kw[derived.sets] = derived.solve_for(hyper0, values)
        else:
            kw[param] = values
        path = s.path(x=x, interval=INTERVAL, **kw)
        names = tuple(
            topic.solve(
                x=x, **hyper_at(topic, hyper=hyper0, param=param, value=float(grid[0]))
            ).parameters
        )
        out = Sweep(
            param=param,
            grid=grid,
            parameters=names,
            mean=path.mean,
            sd=path.sd,
            lower=path.lower,
            upper=path.upper,
            map=path.mode,
            log_evidence=path.log_evidence,
            seconds=0.0,
            method=s.path_method,
        )
    else:
        key = param if derived is None else derived.sets
        hypers = [
            {**hyper0, key: hyper_at(topic, hyper=hyper0, param=param, value=float(v))[key]}
            for v in grid
        ]
        out = _solve_path(topic, x, hypers, param, grid)
    return dataclasses.replace(out, seconds=time.perf_counter() - t0)


def _solve_path(
    topic: Topic, x: Any, hypers: list[dict[str, Any]], param: str, grid: np.ndarray
) -> Sweep:
    lo_q, hi_q = 0.5 - INTERVAL / 2.0, 0.5 + INTERVAL / 2.0
    rows = []
    for value, h in zip(grid, hypers):
        try:
            answer = topic.solve(x=x, **h)
        except ValueError as err:
            raise InputError(
                f"grid value {value:g} for {param} is outside its domain: {err}"
            ) from None
        post = answer.posterior
        d = len(post.parameters)
        cov = np.asarray(post.cov, dtype=float)
        lower, upper = np.full(d, np.nan), np.full(d, np.nan)
        for i in range(d):
            marginal = post.marginal(i)
            if marginal is not None:
                lower[i], upper[i] = marginal.ppf([lo_q, hi_q])
        mode = post.mode
        rows.append(
            (
                np.asarray(post.mean, dtype=float),
                np.sqrt(np.diag(cov)),
                lower,
                upper,
                np.full(d, np.nan) if mode is None else np.asarray(mode, dtype=float),
                float(answer.log_evidence),
                tuple(post.parameters),
            )
        )
    # A topic may compare its most probable hypotheses, which change with the
    # hyperparameter: align every row on the union of names (NaN where one is lumped).
    names = tuple(dict.fromkeys(n for r in rows for n in r[6]))
    stack = [np.full((len(rows), len(names)), np.nan) for _ in range(5)]
    for g, r in enumerate(rows):
        cols = [names.index(n) for n in r[6]]
        for k in range(5):
            stack[k][g, cols] = r[k]
    return Sweep(
        param=param,
        grid=grid,
        parameters=names,
        mean=stack[0],
        sd=stack[1],
        lower=stack[2],
        upper=stack[3],
        map=stack[4],
        log_evidence=np.array([r[5] for r in rows]),
        seconds=0.0,
        method="per-point solve",
    )


# --- MCMC at chosen points ---------------------------------------------------------
@dataclass(frozen=True, eq=False)
class McmcPoint:
    """One MCMC run at a grid point, with its calibrated verdict."""

    index: int
    value: float
    verdict: str
    decided_by: str
    max_abs_z: float | None
    threshold: float | None
    mean: np.ndarray
    sd: np.ndarray
    seconds: float
    power_scaling: PowerScaling | None = None
    parameters: tuple[str, ...] = ()


def mcmc_indices(*, n_grid: int, k: int) -> np.ndarray:
    """K grid indices spread evenly over the grid, both ends included."""
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"--mcmc-at must be a whole number >= 1, got {k!r}")
    if k > n_grid:
        raise InputError(
            f"--mcmc-at {k} asks for more MCMC points than the grid's {n_grid}; "
            f"give at most {n_grid}"
        )
    if k == 1:
        return np.array([n_grid // 2])
    return np.unique(np.round(np.linspace(0, n_grid - 1, k)).astype(int))


def mcmc_at(
    topic: Topic,
    *,
    data: Any,
    hyper: Mapping[str, Any],
    param: str,
    grid: np.ndarray,
    k: int,
    settings: Settings = DEFAULT,
    source: str = "array",
    on_point: Callable[[int, int, float], None] | None = None,
) -> list[McmcPoint]:
    """Run the comparison (exact vs PyMC, the calibrated verdict) at K grid points.

    The topic's extra comparisons (predictive, SMC evidence) are skipped:
    the verdict is the posterior agreement test, convergence and MAP checks.
    For the conjugate topics, psense runs on each point's draws beside the
    exact power-scaling (:func:`power_scaling`).
    """
    from compare.core.runner import run  # heavy: ArviZ, xarray and SciPy via the runner

    settings = dataclasses.replace(settings, extras=False)
    points = []
    chosen = mcmc_indices(n_grid=len(grid), k=k)
    for j, i in enumerate(chosen):
        value = float(grid[i])
        if on_point is not None:
            on_point(j, len(chosen), value)
        h = hyper_at(topic, hyper=hyper, param=param, value=value)
        result = run(topic, data=data, hyper=h, settings=settings, source=source)
        agreement = next((c for c in result.checks if c.name == CheckKind.AGREEMENT), None)
        ps = None
        if power_scaled_of(topic) is not None:
            ps = power_scaling(topic, data=data, hyper=h, source=source, tree=result.draws)
        points.append(
            McmcPoint(
                index=int(i),
                value=value,
                verdict=result.verdict,
                decided_by=result.decided_by,
                max_abs_z=None if agreement is None else agreement.statistic,
                threshold=None if agreement is None else agreement.threshold,
                mean=result.mcmc.mean,
                sd=result.mcmc.sd,
                seconds=result.timings["total"],
                power_scaling=ps,
                parameters=tuple(result.parameters),
            )
        )
    return points


def overall_verdict(points: list[McmcPoint]) -> str | None:
    """disagree if any point disagrees, else inconclusive if any is, else agree; None without MCMC."""
    verdicts = [p.verdict for p in points]
    if not verdicts:
        return None
    for v in ("disagree", "inconclusive"):
        if v in verdicts:
            return v
    return "agree"


# --- power-scaling -------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PowerScaling:
    """Power-scaling sensitivity per parameter: exact, and psense on draws when given.

    Attributes
    ----------
    parameters : tuple of str
    prior, likelihood : array of shape (d,)
        The exact sensitivity (psense's measure with exact CDFs).
    psense_prior, psense_likelihood : array of shape (d,) or None
        ``arviz_stats.psense`` on the draws (PyMC's log prior and log likelihood).
    lower, upper : array of shape (d,)
        The range each CJS integral covers (the draws' range, or the expected
        range of ``n_draws`` draws).
    n_draws : int
    """

    parameters: tuple[str, ...]
    prior: np.ndarray
    likelihood: np.ndarray
    psense_prior: np.ndarray | None
    psense_likelihood: np.ndarray | None
    lower: np.ndarray
    upper: np.ndarray
    n_draws: int
    alphas: tuple[float, float] = asens.PSENSE_ALPHAS

    def diagnosis(self, source: str = "exact") -> list[str]:
        prior, lik = (
            (self.prior, self.likelihood)
            if source == "exact"
            else (self.psense_prior, self.psense_likelihood)
        )
        if prior is None:
            return []
        return [
            asens.diagnosis(float(p), float(q))
            if np.isfinite(p) and np.isfinite(q)
            else "n/a (psense failed: log density constant over the draws)"
            for p, q in zip(prior, lik)
        ]


def exact_power_scaling(
    topic: Topic,
    *,
    x: Any,
    hyper: Mapping[str, Any],
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    n_draws: int | None = None,
    alphas: tuple[float, float] = asens.PSENSE_ALPHAS,
    scaled: Callable[..., Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact prior and likelihood sensitivity of every parameter of a conjugate topic.

    ``x`` is the prepared data (what ``solve`` takes).  The range of each
    CJS integral is ``[lower, upper]`` when given (psense: the draws' range),
    else the expected range of ``n_draws`` draws.  ``scaled`` replaces the
    topic's power-scaled posterior (tests plant bugs through it).

    Returns (prior, likelihood, lower, upper), arrays of shape (d,).
    """
    fn = scaled or power_scaled_of(topic)
    if fn is None:
        raise InputError(
            f"power-scaling is exact only for conjugate topics "
            f"({', '.join(power_scaled_topics())}), not {topic.name}"
        )
    kw = _power_hyper(topic, hyper)
    base = topic.solve(x=x, **hyper).posterior
    d = len(base.parameters)
    n_draws = n_draws or DEFAULT.draws * DEFAULT.chains
    if lower is None or upper is None:
        ranges = [asens.expected_range(base.marginal(i), n_draws) for i in range(d)]
        lower = np.array([r[0] for r in ranges])
        upper = np.array([r[1] for r in ranges])
    out = {}
    for component in asens.COMPONENTS:
        lo_post = fn(x=x, **kw, alpha=alphas[0], component=component)
        hi_post = fn(x=x, **kw, alpha=alphas[1], component=component)
        out[component] = np.array(
            [
                asens.power_scaling_sensitivity(
                    base=base.marginal(i),
                    lower_scaled=lo_post.marginal(i),
                    upper_scaled=hi_post.marginal(i),
                    lower=float(lower[i]),
                    upper=float(upper[i]),
                    alphas=alphas,
                )
                for i in range(d)
            ]
        )
    return out["prior"], out["likelihood"], np.asarray(lower), np.asarray(upper)


def _power_hyper(topic: Topic, hyper: Mapping[str, Any]) -> dict[str, Any]:
    names = {h.name for h in topic.hyperparameters}
    return {k: v for k, v in hyper.items() if k in names}


def power_scaling(
    topic: Topic,
    *,
    data: Any,
    hyper: Mapping[str, Any],
    source: str = "array",
    tree: xr.DataTree | None = None,
    n_draws: int | None = None,
    exact_densities: bool = False,
) -> PowerScaling:
    """Exact power-scaling sensitivity, and psense on ``tree`` (an MCMC fit) when given.

    With a tree, PyMC's log prior and log likelihood are added to it
    (``pymc.stats.compute_log_prior`` / ``compute_log_likelihood`` on the
    topic's compiled model) and each exact CJS is integrated over that
    parameter's range of draws, as psense's is.
    """
    if power_scaled_of(topic) is None:
        raise InputError(
            f"power-scaling is exact only for conjugate topics "
            f"({', '.join(power_scaled_topics())}), not {topic.name}"
        )
    x, hyper = _prepare(topic, data, hyper, source)
    psense_prior = psense_lik = lower = upper = None
    if tree is not None:
        tree = with_log_densities(topic, x=x, hyper=hyper, tree=tree, exact=exact_densities)
        draws = posterior_array(tree.posterior, topic.variables)
        flat = draws.reshape(-1, draws.shape[-1])
        lower, upper = flat.min(axis=0), flat.max(axis=0)
        n_draws = flat.shape[0]
        psense_prior, psense_lik = psense_values(tree, variables=topic.variables)
    prior, lik, lower, upper = exact_power_scaling(
        topic, x=x, hyper=hyper, lower=lower, upper=upper, n_draws=n_draws
    )
    names = tuple(topic.solve(x=x, **hyper).parameters)
    return PowerScaling(
        parameters=names,
        prior=prior,
        likelihood=lik,
        psense_prior=psense_prior,
        psense_likelihood=psense_lik,
        lower=lower,
        upper=upper,
        n_draws=int(n_draws or DEFAULT.draws * DEFAULT.chains),
    )


#: pm.set_data then compute: one thread at a time per process.
_MODEL_LOCK = threading.Lock()


def with_log_densities(
    topic: Topic, *, x: Any, hyper: Mapping[str, Any], tree: xr.DataTree, exact: bool = False
) -> xr.DataTree:
    """``tree`` plus ``log_prior`` and ``log_likelihood`` groups for psense.

    By default PyMC's (``pymc.stats.compute_log_prior`` / ``compute_log_likelihood``
    on the topic's model).  ``exact=True`` uses the exact side instead (no
    PyTensor compile; the report does this): the log prior is the zero-data
    posterior's log density, the log likelihood the posterior's minus it.  The
    two agree up to an additive constant, which psense ignores (a test checks it).
    A topic whose PyMC likelihood has no per-observation terms declares its
    exact ``Sensitivity.log_densities``, which are always used.
    """
    s = declared(topic)
    if exact or (s is not None and s.log_densities is not None):
        theta = posterior_array(tree.posterior, topic.variables)
        log_prior, log_lik = _exact_log_densities(topic, x, hyper, theta)
        dims = ("chain", "draw")
        coords = {k: tree.posterior[k].values for k in dims}
        tree = tree.copy()
        tree["log_prior"] = xr.DataTree(xr.Dataset({"prior": (dims, log_prior)}, coords=coords))
        tree["log_likelihood"] = xr.DataTree(xr.Dataset({"obs": (dims, log_lik)}, coords=coords))
        return tree

    import pymc as pm  # heavy: PyMC only when a model is built or sampled

    from compare.core.sampling import CACHE  # heavy: PyMC via the sampler

    structure = topic.structure(x, hyper)
    key = (topic.name, tuple(sorted(structure.items())), topic.build_model)
    # The run's compiled model when this process has one; else the bare PyMC model
    # (no nutpie compile: only PyMC's log densities are needed).
    cached = CACHE._models.get(key)
    model = cached.model if cached is not None else topic.build_model(**structure)
    lock = cached._lock if cached is not None else _MODEL_LOCK
    values = topic.model_data(x=x, **hyper)
    coords = {"obs": np.arange(int(np.asarray(values["x"]).shape[0]))} if "x" in values else None
    posterior = tree.posterior.to_dataset()[list(topic.variables)]
    slim = xr.DataTree.from_dict({"/posterior": posterior})
    with lock, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pm.set_data(values, model=model, coords=coords)
        slim = pm.stats.compute_log_likelihood(slim, model=model, progressbar=False)
        slim = pm.stats.compute_log_prior(slim, model=model, progressbar=False)
    tree = tree.copy()
    tree["log_likelihood"] = slim["log_likelihood"]
    tree["log_prior"] = slim["log_prior"]
    return tree


def psense_values(
    tree: xr.DataTree, *, variables: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """``arviz_stats.psense`` for the prior and the likelihood, flattened in ``variables`` order.

    NaN where psense cannot be computed (a log density constant over the draws).
    """
    from arviz_stats import psense  # heavy: ArviZ (and xarray) only when draws are summarised

    size = sum(int(np.prod(tree.posterior[v].shape[2:], dtype=int)) for v in variables)
    out = []
    for group in asens.COMPONENTS:
        try:
            with warnings.catch_warnings():  # PSIS's small-tail notices; failures raise
                warnings.simplefilter("ignore")
                ds = psense(tree, var_names=list(variables), group=group)
        except ValueError:
            # PSIS fails when the log density is constant over the draws (a flat
            # prior such as Dirichlet(1, ..., 1): "All tail values are the same");
            # the exact sensitivity is then 0.
            out.append(np.full(size, np.nan))
            continue
        out.append(np.concatenate([np.ravel(np.asarray(ds[v], dtype=float)) for v in variables]))
    return out[0], out[1]


def iid_tree(
    topic: Topic,
    *,
    x: Any,
    hyper: Mapping[str, Any],
    rng: np.random.Generator,
    chains: int,
    draws: int,
) -> xr.DataTree:
    """Exact iid posterior draws with the exact log prior and log likelihood, for psense.

    The log prior is the zero-data posterior's log density and the log
    likelihood the difference of the two (up to a constant, which psense
    ignores).  Used for psense's empirical null (tests) without MCMC.
    """
    post = topic.solve(x=x, **hyper).posterior
    theta = post.sample(rng, chains * draws)
    log_prior, log_lik = _exact_log_densities(topic, x, hyper, theta)
    d = theta.shape[1]
    dims = ("chain", "draw")
    coords = {"chain": np.arange(chains), "draw": np.arange(draws), "param": np.arange(d)}
    return xr.DataTree.from_dict(
        {
            "/posterior": xr.Dataset(
                {"theta": (dims + ("param",), theta.reshape(chains, draws, d))}, coords=coords
            ),
            "/log_prior": xr.Dataset(
                {"theta": (dims, log_prior.reshape(chains, draws))},
                coords={k: coords[k] for k in dims},
            ),
            "/log_likelihood": xr.Dataset(
                {"obs": (dims, log_lik.reshape(chains, draws))}, coords={k: coords[k] for k in dims}
            ),
        }
    )


def _exact_log_densities(
    topic: Topic, x: Any, hyper: Mapping[str, Any], theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """log prior and log likelihood (up to constants) at ``theta`` of shape (..., d):
    the topic's declared ``log_densities``, else from the zero-data posterior."""
    s = declared(topic)
    if s is not None and s.log_densities is not None:
        return s.log_densities(x=x, theta=theta, **_power_hyper(topic, hyper))
    post = topic.solve(x=x, **hyper).posterior
    prior = topic.solve(x=_empty_like(topic, x), **hyper).posterior
    log_prior = prior.logpdf(theta)
    return log_prior, post.logpdf(theta) - log_prior


def _empty_like(topic: Topic, x: Any) -> Any:
    arr = np.asarray(x)
    return arr[:0]


# --- the document, the table, the figure ----------------------------------------------
def power_rows(ps: PowerScaling) -> list[dict[str, Any]]:
    rows = []
    exact_dx = ps.diagnosis("exact")
    mc_dx = ps.diagnosis("psense") or [None] * len(ps.parameters)
    for i, name in enumerate(ps.parameters):
        rows.append(
            {
                "parameter": name,
                "prior_exact": ps.prior[i],
                "likelihood_exact": ps.likelihood[i],
                "prior_psense": None if ps.psense_prior is None else ps.psense_prior[i],
                "likelihood_psense": None
                if ps.psense_likelihood is None
                else ps.psense_likelihood[i],
                "diagnosis_exact": exact_dx[i],
                "diagnosis_psense": mc_dx[i],
                "diagnoses_differ": (
                    None
                    if mc_dx[i] is None or mc_dx[i].startswith("n/a")
                    else mc_dx[i] != exact_dx[i]
                ),
                "range": [ps.lower[i], ps.upper[i]],
            }
        )
    return rows


@dataclass(frozen=True, eq=False)
class SensitivityResult:
    """A sweep, its MCMC points and power-scaling at the base hyperparameters."""

    topic: str
    sweep: Sweep
    base_value: float
    hyper: dict[str, Any]
    source: str
    n: int
    points: list[McmcPoint] = field(default_factory=list)
    power: PowerScaling | None = None
    #: The document key of the grid divided by n (a derived quantity whose default
    #: range is per observation, e.g. ``lambda_over_n``), or None.
    over_n: str | None = None

    @property
    def verdict(self) -> str | None:
        return overall_verdict(self.points)

    @property
    def exit_code(self) -> int:
        return {None: 0, "agree": 0, "disagree": 1, "inconclusive": 2}[self.verdict]


def sensitivity(
    topic: Topic,
    *,
    data: Any,
    hyper: Mapping[str, Any],
    param: str,
    grid: np.ndarray,
    mcmc: int = 0,
    settings: Settings = DEFAULT,
    source: str = "array",
    on_point: Callable[[int, int, float], None] | None = None,
) -> SensitivityResult:
    """The whole sensitivity study of one topic: exact sweep, MCMC at ``mcmc`` points,
    exact power-scaling at the base hyperparameters (conjugate topics)."""
    sweep = exact_sweep(topic, data=data, hyper=hyper, param=param, grid=grid, source=source)
    if mcmc:
        mcmc_indices(n_grid=len(grid), k=mcmc)  # bad K is bad input before any sampling
    x, hyper0 = _prepare(topic, data, hyper, source)
    power = None
    if power_scaled_of(topic) is not None:
        power = power_scaling(
            topic, data=data, hyper=hyper, source=source, n_draws=settings.draws * settings.chains
        )
    points = (
        mcmc_at(
            topic,
            data=data,
            hyper=hyper,
            param=param,
            grid=grid,
            k=mcmc,
            settings=settings,
            source=source,
            on_point=on_point,
        )
        if mcmc
        else []
    )
    derived = derived_parameter(topic, param)
    return SensitivityResult(
        topic=topic.name,
        sweep=sweep,
        base_value=base_value(topic, hyper=hyper, param=param),
        hyper=dict(hyper0),
        source=source,
        n=_n_obs(x),
        points=points,
        power=power,
        over_n=None if derived is None else f"{param}_over_n",
    )


def _n_obs(x: Any) -> int:
    if hasattr(x, "stats") and hasattr(x.stats, "n"):
        return int(x.stats.n)
    if hasattr(x, "n"):
        return int(x.n)
    try:
        return int(len(x))
    except TypeError:
        return 0


def to_document(result: SensitivityResult) -> dict[str, Any]:
    """The JSON document (``sensitivity.json``)."""

    s = result.sweep
    doc = {
        "topic": result.topic,
        "param": s.param,
        "verdict": result.verdict,
        "base_value": result.base_value,
        "grid": s.grid,
        "parameters": list(s.parameters),
        "data": {"source": result.source, "n": result.n},
        "hyperparameters": result.hyper,
        "exact": {
            "method": s.method,
            "seconds": s.seconds,
            "interval": INTERVAL,
            "mean": s.mean,
            "sd": s.sd,
            "lower": s.lower,
            "upper": s.upper,
            "map": s.map,
            "log_evidence": s.log_evidence,
        },
        "mcmc": [
            {
                "index": p.index,
                "value": p.value,
                "verdict": p.verdict,
                "decided_by": p.decided_by,
                "max_abs_z": p.max_abs_z,
                "threshold": p.threshold,
                "mean": _aligned(p.mean, p.parameters, s),
                "sd": _aligned(p.sd, p.parameters, s),
                "seconds": p.seconds,
                "power_scaling": None if p.power_scaling is None else power_rows(p.power_scaling),
            }
            for p in result.points
        ],
        "power_scaling": None
        if result.power is None
        else {
            "alphas": list(result.power.alphas),
            "threshold": asens.PSENSE_THRESHOLD,
            "n_draws": result.power.n_draws,
            "rows": power_rows(result.power),
        },
    }
    if result.over_n is not None:
        doc[result.over_n] = s.grid / max(result.n, 1)
    return _clean(doc)


def _aligned(values: np.ndarray, names: tuple[str, ...], sweep: Sweep) -> np.ndarray:
    """An MCMC point's vector in the sweep's parameter order (NaN where it has none)."""
    if not names or tuple(names) == sweep.parameters:
        return values
    where = {n: i for i, n in enumerate(names)}
    return np.array([values[where[n]] if n in where else np.nan for n in sweep.parameters])


def save(result: SensitivityResult, out_dir: str | Path) -> Path:
    """Write ``sensitivity.json`` and ``sensitivity.png`` into ``out_dir`` (atomically)."""

    out_dir = Path(out_dir)
    doc = to_document(result)
    path = out_dir / SENSITIVITY_FILE
    atomic_write(path, dumps(doc))
    draw_figure(doc, out_dir / FIGURE_FILE)
    return path


def draw_figure(doc: dict[str, Any], path: str | Path) -> Path:
    """Write the figure of :func:`figure` to ``path`` (PNG)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    with drawing():
        figure(doc).savefig(tmp, dpi=80)
    tmp.replace(path)
    return path


#: Parameters drawn in the sensitivity figure.
FIGURE_PARAMETERS = 4


def _log_axis(ax, grid: np.ndarray) -> None:
    """A log x axis labelled at its major ticks only (the minor labels overlap over
    less than two decades); over two decades or more, no minor ticks at all: the
    labelled decades place a point, and the minor ticks (8 a decade, each a tick
    object matplotlib builds and lays out) were a third of the figure's time."""
    from matplotlib.ticker import NullFormatter, NullLocator  # heavy: matplotlib only here

    ax.set_xscale("log")
    if np.log10(grid.max() / grid.min()) >= 2:
        ax.xaxis.set_minor_locator(NullLocator())
    else:
        ax.xaxis.set_minor_formatter(NullFormatter())


def figure(doc: dict[str, Any]):
    """The posterior path: mean and central interval of the first parameters along the
    grid, MCMC points (mean +- 1.96 sd) on it, the base value marked, and the log evidence."""
    import matplotlib.pyplot as plt  # heavy: matplotlib only when a figure is drawn

    grid = np.asarray(doc["grid"], dtype=float)
    ex = doc["exact"]
    names = doc["parameters"][:FIGURE_PARAMETERS]
    panels = len(names) + 1
    cols = min(panels, 3)
    rows = -(-panels // cols)
    # Constrained layout: placed once, while the figure is saved (tight_layout drew the
    # whole figure once more to measure it: 7 of the 13 figures' 8 s).
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False, layout="constrained"
    )
    log_x = bool(
        np.all(grid > 0)
        and grid.size > 2
        and np.allclose(np.diff(np.log(grid)), np.log(grid[1] / grid[0]), rtol=1e-6)
    )

    def arr(key, i):
        return np.array([np.nan if r[i] is None else r[i] for r in ex[key]], dtype=float)

    for i, name in enumerate(names):
        ax = axes.flat[i]
        mean = arr("mean", i)
        ax.plot(grid, mean, color="#222222", label="exact mean")
        lo, hi = arr("lower", i), arr("upper", i)
        if np.any(np.isfinite(lo)):
            ax.fill_between(
                grid,
                lo,
                hi,
                color="#222222",
                alpha=0.15,
                label=f"exact {int(100 * ex['interval'])}% interval",
            )
        mp = arr("map", i)
        if np.any(np.isfinite(mp)) and not np.allclose(mp, mean, equal_nan=True):
            ax.plot(grid, mp, color="#d62728", ls=":", label="exact MAP")
        for p in doc["mcmc"]:
            m = p["mean"][i] if p["mean"] is not None else None
            sd = p["sd"][i] if p["sd"] is not None else None
            if m is None:
                continue
            color = {"agree": "#1f77b4", "disagree": "#d62728"}.get(p["verdict"], "#ff7f0e")
            ax.errorbar(
                [p["value"]], [m], yerr=[1.96 * (sd or 0.0)], fmt="o", color=color, ms=4, capsize=3
            )
        ax.axvline(doc["base_value"], color="#888888", ls="--", lw=1, label="current value")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(doc["param"])
        if log_x:
            _log_axis(ax, grid)
    # One legend for every panel: an entry drawn on any panel (the MAP path
    # differs from the mean on some parameters only) is named once.
    entries: dict[str, Any] = {}
    for ax in list(axes.flat)[: len(names)]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    for verdict, color in (
        ("agree", "#1f77b4"),
        ("disagree", "#d62728"),
        ("inconclusive", "#ff7f0e"),
    ):
        if any(p["verdict"] == verdict for p in doc["mcmc"] if p["mean"] is not None):
            entries[f"MCMC mean +- 1.96 sd ({verdict})"] = plt.Line2D(
                [], [], ls="", marker="o", color=color, ms=4
            )
    fig.legend(
        list(entries.values()),
        list(entries),
        loc="outside lower center",
        ncol=min(len(entries), 3),
        frameon=False,
        fontsize=9,
    )
    ax = axes.flat[len(names)]
    ev = np.array([np.nan if v is None else v for v in ex["log_evidence"]], dtype=float)
    ax.plot(grid, ev, color="#2ca02c")
    ax.axvline(doc["base_value"], color="#888888", ls="--", lw=1)
    ax.set_title("log evidence", fontsize=10)
    ax.set_xlabel(doc["param"])
    if log_x:
        _log_axis(ax, grid)
    for extra in list(axes.flat)[panels:]:
        extra.set_visible(False)
    fig.suptitle(f"{doc['topic']}: exact posterior along {doc['param']}", fontsize=11)
    return fig


# --- the report ---------------------------------------------------------------------
def for_run(run_dir: str | Path, doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The sensitivity document beside a saved run, computed (exact only) unless the
    ``sensitivity`` command saved one.

    A topic that declares :class:`Sensitivity`, run on builtin data, gets the
    exact sweep over its ``default_param`` at the run's hyperparameters and
    exact power-scaling,
    written to ``sensitivity.json`` beside the run with ``"generated_by":
    "report"`` (recomputed at every report build, so it follows the run; MCMC
    points come only from the ``sensitivity`` command, whose file is kept).
    Returns None for topics that declare no Sensitivity or runs whose data
    cannot be reloaded.
    """

    run_dir = Path(run_dir)
    path = run_dir / SENSITIVITY_FILE
    if path.is_file():
        saved = json.loads(path.read_text())
        if saved.get("generated_by") != "report":
            return saved
    all_topics()
    topic = REGISTRY.get(doc.get("topic", ""))
    source = str(doc.get("data", {}).get("source", ""))
    if topic is None or not source.startswith("builtin:"):
        return None
    declaration = declared(topic)
    if declaration is None:
        return None
    dataset = topic.builtin_data(source[len("builtin:") :])
    hyper = topic.hyper(dataset=dataset)
    saved_hyper = doc.get("hyperparameters") or {}
    for h in topic.hyperparameters:  # the run's own values of the numeric hyperparameters
        if (
            not h.structural
            and h.kind in ("positive", "real", "positive-list")
            and saved_hyper.get(h.name) is not None
        ):
            hyper[h.name] = h.check(saved_hyper[h.name])
    data = dataset.load()
    param = declaration.default_param
    x, _ = _prepare(topic, data, hyper, source)
    fast = declaration.path is not None and (
        declaration.path_params is None or param in declaration.path_params
    )
    grid = default_grid(
        topic,
        param=param,
        hyper=hyper,
        n_obs=_n_obs(x),
        points=REPORT_POINTS if fast else REPORT_POINTS_SLOW,
    )
    result = sensitivity(topic, data=data, hyper=hyper, param=param, grid=grid, source=source)
    out = {**to_document(result), "generated_by": "report"}
    draws_file = run_dir / DRAWS_FILE
    if declaration.power_scaled is not None and draws_file.is_file():
        with xr.open_datatree(draws_file, engine=NETCDF_ENGINE) as tree:
            ps = power_scaling(
                topic, data=data, hyper=hyper, source=source, tree=tree.load(), exact_densities=True
            )
        out["power_scaling_run"] = _clean({"n_draws": ps.n_draws, "rows": power_rows(ps)})
    atomic_write(path, dumps(out))
    return out


def page_context(run_dir: str | Path) -> dict[str, Any] | None:
    """The run page's sensitivity section from ``sensitivity.json`` beside the run, if any."""
    path = Path(run_dir) / SENSITIVITY_FILE
    if not path.is_file():
        return None
    try:
        return report_context(json.loads(path.read_text()))
    except (ValueError, KeyError, TypeError) as err:
        return {
            "error": f"{SENSITIVITY_FILE} could not be read ({type(err).__name__}: {err}); "
            "rerun `bayes-compare sensitivity` or delete the file"
        }


def report_context(doc: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the run page's sensitivity section shows (None: no section)."""
    if not doc:
        return None

    grid = doc["grid"]
    ps = doc.get("power_scaling")
    power = []
    blocks = [("exact, at the current value", ps)] if ps else []
    if doc.get("power_scaling_run"):
        blocks.append(
            ("the run's MCMC draws (psense with exact log densities)", doc["power_scaling_run"])
        )
    blocks += [
        (f"{doc['param']} = {fmt(p['value'])} (MCMC)", {"rows": p["power_scaling"]})
        for p in doc.get("mcmc", [])
        if p.get("power_scaling")
    ]
    for label, block in blocks:
        for r in block["rows"]:
            power.append(
                {
                    "at": label,
                    "parameter": r["parameter"],
                    "prior_exact": fmt(r["prior_exact"], ".4f"),
                    "prior_psense": fmt(r["prior_psense"], ".4f"),
                    "likelihood_exact": fmt(r["likelihood_exact"], ".4f"),
                    "likelihood_psense": fmt(r["likelihood_psense"], ".4f"),
                    "diagnosis_exact": r["diagnosis_exact"],
                    "diagnosis_psense": r["diagnosis_psense"] or "",
                    "differ": bool(r.get("diagnoses_differ")),
                }
            )
    return {
        "error": None,
        "source": doc["data"]["source"],
        "n": doc["data"]["n"],
        "generated_by": doc.get("generated_by", "sensitivity command"),
        "param": doc["param"],
        "points": len(grid),
        "lo": fmt(min(grid)),
        "hi": fmt(max(grid)),
        "base": fmt(doc["base_value"]),
        "seconds": fmt(doc["exact"]["seconds"], ".3g"),
        "method": doc["exact"]["method"],
        "verdict": doc.get("verdict"),
        "mcmc": [
            {
                "value": fmt(p["value"]),
                "verdict": p["verdict"],
                "max_abs_z": fmt(p["max_abs_z"], ".2f"),
                "threshold": fmt(p["threshold"], ".2f"),
            }
            for p in doc.get("mcmc", [])
        ],
        "power": power,
    }
