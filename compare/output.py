"""The run document (JSON), saved draws and the summary table, written atomically.

The JSON keys named in the foundation issue are a public contract; others
are added freely, never renamed.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from compare.runner import RunResult

RESULT_FILE = "result.json"
DRAWS_FILE = "draws.nc"


def _clean(value: Any) -> Any:
    """JSON-safe: arrays to lists, non-finite floats to None."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return [_clean(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def versions() -> dict[str, str]:
    out = {}
    for pkg in ("bayes-compare", "pymc", "pytensor", "nutpie", "arviz-base", "arviz-stats",
                "numpy", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def predictive_summary(predictive: Any) -> dict[str, Any]:
    """Mean and variance of the posterior predictive where they exist."""
    try:
        mean = np.asarray(predictive.mean(), dtype=float)
        var = predictive.var() if hasattr(predictive, "var") else None
    except (TypeError, ValueError):
        return {"mean": None, "var": None}
    return {"mean": mean.item() if mean.size == 1 else mean, "var": var}


def describe_marginal(marginal: Any) -> dict[str, Any] | None:
    """A scipy frozen distribution as {"family", "args", "kwds"} (None if absent)."""
    if marginal is None:
        return None
    dist = getattr(marginal, "dist", None)
    if dist is None:
        return {"family": type(marginal).__name__, "args": [], "kwds": {}}
    return {"family": getattr(dist, "name", type(dist).__name__),
            "args": [np.asarray(a).tolist() for a in marginal.args],
            "kwds": {k: np.asarray(v).tolist() for k, v in marginal.kwds.items()}}


def to_document(result: RunResult) -> dict[str, Any]:
    """The public JSON document of one run (vectors in the order of ``parameters``)."""
    exact = result.exact
    post = exact.posterior
    mcmc = result.mcmc
    agreement = result.agreement
    doc = {
        "topic": result.topic,
        "verdict": result.verdict,
        "decided_by": result.decided_by,
        "parameters": list(result.parameters),
        "exact": {
            "mean": post.mean,
            "cov": post.cov,
            "sd": np.sqrt(np.diag(post.cov)),
            "map": post.mode,
            "map_interior": post.mode_interior,
            "mle": exact.mle,
            "marginals": [describe_marginal(post.marginal(i))
                          for i in range(len(result.parameters))],
            "log_evidence": exact.log_evidence,
            "quantiles": {f"q{round(p * 100):02d}": [
                None if post.marginal(i) is None else float(post.marginal(i).ppf(p))
                for i in range(len(result.parameters))] for p in (0.05, 0.5, 0.95)},
            "predictive": predictive_summary(exact.predictive),
        },
        "mcmc": {
            "mean": mcmc.mean,
            "cov": mcmc.cov,
            "sd": mcmc.sd,
            "mcse_mean": mcmc.mcse_mean,
            "ess_bulk": mcmc.ess_bulk,
            "ess_tail": mcmc.ess_tail,
            "rhat": mcmc.rhat,
            "divergences": mcmc.divergences,
            "map": mcmc.map,
            "map_distance_sd": result.map_distance_sd,
        },
        "checks": [{"name": c.name, "statistic": c.statistic, "threshold": c.threshold,
                    "passed": c.passed, "note": c.note} for c in result.checks],
        "quantities": [] if agreement is None else [
            {"name": q.name, "estimate": q.estimate, "expected": q.expected,
             "null_sd": q.null_sd, "ess": q.ess, "z": q.z, "p": q.p_value, "p_holm": q.p_holm}
            for q in agreement.quantities],
        "settings": {"draws": result.settings.draws, "chains": result.settings.chains,
                     "seed": result.settings.seed, "alpha": result.settings.alpha,
                     "tune": result.settings.tune, "rhat_max": result.settings.rhat_max,
                     "ess_min": result.settings.ess_min,
                     "map_tol_sd": result.settings.map_tol_sd},
        "data": {"source": result.data_source, "n": result.n},
        **result.extra.sections,
        "hyperparameters": result.hyper,
        "timings": result.timings,
        "versions": versions(),
    }
    return _clean(doc)


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def _umask_mode() -> int:
    """Permissions a plain ``open`` would give a new file (mkstemp uses 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` via a temporary file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: Points of each exact marginal density kept for the report's overlays.
DENSITY_POINTS = 241


def exact_densities(result: RunResult):
    """Each exact marginal density on a grid spanning it and the MCMC draws.

    Returns an ``xarray.Dataset`` with ``grid`` and ``density`` of shape
    (parameter, point); rows are NaN where a marginal has no closed form.
    Discrete marginals give their probability mass at the grid's integers.
    The ``variables`` attribute names the PyMC variables whose flattened
    draws line up with ``parameter``.
    """
    import json

    import xarray as xr

    from compare.agreement import posterior_array

    post = result.exact.posterior
    d = len(result.parameters)
    grid = np.full((d, DENSITY_POINTS), np.nan)
    density = np.full((d, DENSITY_POINTS), np.nan)
    draws = None
    if result.variables and "posterior" in result.draws.children:
        draws = posterior_array(result.draws["posterior"].to_dataset(), result.variables)
        if draws.shape[-1] != d:
            draws = None
    for i in range(d):
        marginal = post.marginal(i)
        if marginal is None:
            continue
        lo, hi = (float(v) for v in marginal.ppf([0.001, 0.999]))
        if draws is not None:
            qlo, qhi = np.quantile(draws[..., i], [0.001, 0.999])
            lo, hi = min(lo, qlo), max(hi, qhi)
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
            continue
        grid[i] = np.linspace(lo, hi, DENSITY_POINTS)
        with np.errstate(all="ignore"):
            density[i] = (marginal.pdf(grid[i]) if hasattr(marginal, "pdf")
                          else marginal.pmf(np.round(grid[i])))
    return xr.Dataset(
        {"grid": (("parameter", "point"), grid), "density": (("parameter", "point"), density)},
        coords={"parameter": list(result.parameters)},
        attrs={"variables": json.dumps(list(result.variables))})


def observed_data(result: RunResult):
    """The run's data columns as a Dataset over ``obs`` (None when not kept)."""
    import xarray as xr

    if not result.observed:
        return None
    return xr.Dataset({name: ("obs", np.asarray(v) if np.asarray(v).dtype.kind in "biufb"
                               else np.asarray(v).astype(str))
                       for name, v in result.observed.items()})


def save_draws(result: RunResult, path: str | Path) -> None:
    """Keep the draws, sampler statistics, data and exact densities as netCDF.

    Groups: ``/posterior`` and ``/sample_stats`` (numeric variables),
    ``/observed_data`` (the data columns, when small enough) and ``/exact``
    (:func:`exact_densities`), so every report figure can be redrawn without
    sampling.  Written atomically.
    """
    import xarray as xr

    tree = result.draws
    groups = {}
    for name in ("posterior", "sample_stats"):
        if name in tree.children:
            ds = tree[name].to_dataset()
            keep = [v for v in ds.data_vars if ds[v].dtype.kind in "biuf"]
            groups[f"/{name}"] = ds[keep]
    groups["/exact"] = exact_densities(result)
    observed = observed_data(result)
    if observed is not None:
        groups["/observed_data"] = observed
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        xr.DataTree.from_dict(groups).to_netcdf(tmp, engine="h5netcdf")
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_run(result: RunResult, out_dir: str | Path) -> Path:
    """Write the draws, then the JSON document, under ``out_dir``; return the JSON path."""
    out_dir = Path(out_dir)
    save_draws(result, out_dir / DRAWS_FILE)
    path = out_dir / RESULT_FILE
    atomic_write(path, dumps(to_document(result)))
    return path


def _fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


_CORE_CHECKS = {"rhat", "ess_bulk", "ess_tail", "divergences", "agreement", "map"}


def _other_checks(checks: list[dict[str, Any]]) -> str:
    """Topic-specific checks (predictive, evidence, ...) as 'name ok/FAIL'."""
    marks = {True: "ok", False: "FAIL", None: "n/a"}
    return ", ".join(f"{c['name']} {marks[c['passed']]}" for c in checks
                     if c["name"] not in _CORE_CHECKS) or "-"


def summary_markdown(docs: Iterable[dict[str, Any]]) -> str:
    """One row per run: verdict, max |z|, worst R-hat, min ESS, divergences, time."""
    lines = [
        "# bayes-compare summary",
        "",
        "| topic | data | n | verdict | decided by | max abs z | threshold | worst R-hat "
        "| min ESS (bulk/tail) | divergences | MAP dist (sd) | other checks | time (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    docs_seen = list(docs)
    for doc in docs_seen:
        checks = {c["name"]: c for c in doc["checks"]}
        mcmc = doc["mcmc"]
        ess = min([v for v in mcmc["ess_bulk"] + mcmc["ess_tail"] if v is not None], default=None)
        agreement = checks.get("agreement", {})
        lines.append(
            f"| {doc['topic']} | {doc['data']['source']} | {doc['data']['n']} "
            f"| **{doc['verdict']}** | {doc.get('decided_by', '')} "
            f"| {_fmt(agreement.get('statistic'), '.2f')} "
            f"| {_fmt(agreement.get('threshold'), '.2f')} "
            f"| {_fmt(checks['rhat']['statistic'], '.4f')} | {_fmt(ess, '.0f')} "
            f"| {mcmc['divergences']} | {_fmt(checks.get('map', {}).get('statistic'), '.1e')} "
            f"| {_other_checks(doc['checks'])} | {_fmt(doc['timings']['total'], '.2f')} |")
    if docs_seen:
        settings = docs_seen[0]["settings"]
        lines += ["", f"Settings: {settings['chains']} chains x {settings['draws']} draws "
                  f"(+{settings['tune']} warm-up), seed {settings['seed']}, "
                  f"alpha {settings['alpha']:g}. Versions: "
                  + ", ".join(f"{k} {v}" for k, v in docs_seen[0]["versions"].items()) + "."]
    return "\n".join(lines) + "\n"
