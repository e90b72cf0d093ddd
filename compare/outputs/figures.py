"""Figures of one saved run, drawn from its ``result.json`` and ``draws.nc`` alone.

Each figure function takes a :class:`SavedRun` and returns a matplotlib
figure, or None when the figure does not apply to the run (no predictive
section, one parameter for a pair plot).  Nothing here samples: the draws,
data and exact marginal densities were written beside the JSON by
:func:`compare.outputs.document.save_draws`, so any figure can be redrawn later.

:data:`FIGURES` lists the kinds in page order; the report draws them in
parallel processes and turns a failure into an error box on the page.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from analytic.gaussian_process import kernel_matrix
from compare.core.agreement import posterior_array
from compare.core.checks import CheckKind
from compare.core.drawing import drawing
from compare.core.files import NETCDF_ENGINE, atomic_write, versions
from compare.outputs._hypergeom import fast_rank_test
from compare.outputs.document import DRAWS_FILE, RESULT_FILE
from compare.outputs.run_cache import package_sources
from compare.studies import sensitivity as sensitivity_study

#: Parameters shown in per-parameter figures (trace, rank, ESS, MCSE, marginals).
MAX_SHOWN = 8
#: Parameters in the pair plot (the first ones, in the run's order).
MAX_PAIR = 4
#: Points drawn in each pair-plot panel (a thinned subset of the draws).
PAIR_POINTS = 1500
DPI = 80
#: Characters of a 10 pt title per inch of figure width (a wider font's 0.55 em, rounded down).
PAIR_TITLE_CHARS = 11

COLORS = {
    "exact": "#222222",
    "mcmc": "#1f77b4",
    "map": "#d62728",
    "mle": "#2ca02c",
    "mean": "#222222",
    "plugin": "#ff7f0e",
}


@dataclass(frozen=True)
class SavedRun:
    """A run as saved on disk: ``directory/result.json`` and ``directory/draws.nc``."""

    directory: Path

    @cached_property
    def doc(self) -> dict[str, Any]:
        return json.loads((self.directory / RESULT_FILE).read_text())

    @cached_property
    def tree(self) -> xr.DataTree:
        with xr.open_datatree(self.directory / DRAWS_FILE, engine=NETCDF_ENGINE) as tree:
            return tree.load()

    @property
    def parameters(self) -> list[str]:
        return list(self.doc["parameters"])

    def group(self, name: str) -> xr.Dataset | None:
        """One group of ``draws.nc``, None when the file has none of that name."""
        if "tree" not in self.__dict__:
            # Only this group, when nothing has read the whole tree: the page's data
            # summary needs observed_data alone (0.1 s against 2.2 s for 15 topics).
            read = self.__dict__.setdefault("_groups", {})
            if name not in read:
                try:
                    with xr.open_dataset(
                        self.directory / DRAWS_FILE, group=name, engine=NETCDF_ENGINE
                    ) as dataset:
                        read[name] = dataset.load()
                except OSError:  # no such group, or no readable file: as the tree says
                    read[name] = None
            if read[name] is not None:
                return read[name]
        return self.tree[name].to_dataset() if name in self.tree.children else None

    @cached_property
    def draws(self) -> np.ndarray:
        """Posterior draws as an array of shape (chain, draw, d), in ``parameters`` order."""
        exact = self.group("exact")
        posterior = self.group("posterior")
        if posterior is None:
            raise ValueError(f"{self.directory}: draws.nc has no posterior group")
        variables = json.loads(exact.attrs["variables"]) if exact is not None else []
        if not variables:  # runs saved before the exact group: every posterior variable
            variables = list(posterior.data_vars)
        draws = posterior_array(posterior, variables)
        if draws.shape[-1] != len(self.parameters):
            raise ValueError(
                f"{self.directory}: {draws.shape[-1]} values per draw for "
                f"{len(self.parameters)} parameters"
            )
        return draws

    def flat(self, count: int = MAX_SHOWN) -> xr.DataTree:
        """The first ``count`` parameters as scalar variables, for arviz-plots."""
        draws = self.draws
        chains, n = draws.shape[:2]
        coords = {"chain": np.arange(chains), "draw": np.arange(n)}
        posterior = xr.Dataset(
            {
                name: (("chain", "draw"), draws[..., i])
                for i, name in enumerate(self.parameters[:count])
            },
            coords=coords,
        )
        groups = {"/posterior": posterior}
        stats = self.group("sample_stats")
        if stats is not None:
            groups["/sample_stats"] = stats
        return xr.DataTree.from_dict(groups)


def _figure_of(plot_collection) -> Any:
    return (
        plot_collection.viz["chart"].item()
        if "chart" in plot_collection.viz
        else plot_collection.viz["plot"].to_dataset().to_array().values.flat[0].figure
    )


def _pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the process's backend: the figures are drawn inside
    :func:`render`'s :func:`~compare.core.drawing.drawing`, which chooses none (in a
    user's process the backend is the user's; our command line's is Agg)."""
    import matplotlib.pyplot as plt  # heavy: matplotlib only where a figure is drawn

    return plt


def _azp() -> ModuleType:
    _pyplot()
    import arviz_plots as azp  # heavy: arviz-plots (and matplotlib) only when drawing

    return azp


def _shown(run: SavedRun, count: int = MAX_SHOWN) -> list[str]:
    return run.parameters[:count]


def trace(run: SavedRun):
    """Trace and per-chain density (arviz-plots ``plot_trace_dist``)."""
    azp = _azp()
    pc = azp.plot_trace_dist(run.flat(), backend="matplotlib", compact=False)
    return _figure_of(pc)


#: Colours of the ESS-evolution plot, set here so its legend can name them.
ESS_STYLE = {"bulk": ("#1f77b4", "-"), "tail": ("#ff7f0e", "-"), "gate": ("#595959", "--")}
#: Legend and caption font size of the figures (points): readable at the page's width.
LEGEND_FONTSIZE = 10


def _ess_gate(run: SavedRun) -> float:
    """The ESS threshold the run was judged by (its ``ess_bulk`` check; 400 by default)."""
    for check in run.doc.get("checks", []):
        if check.get("name") == CheckKind.ESS_BULK and check.get("threshold") is not None:
            return float(check["threshold"])
    return float((run.doc.get("settings") or {}).get("ess_min", 400.0))


def _bottom_legend(fig, handles: list, labels: list[str]) -> None:
    """One legend under all panels, in as many columns as the figure's width holds.

    Constrained layout makes room for it (and for the x labels) instead of a
    hand-tuned ``subplots_adjust``.
    """
    # An entry's width: its text at LEGEND_FONTSIZE (0.55 em a character) plus the handle.
    entry = max(len(label) for label in labels) * 0.55 * LEGEND_FONTSIZE / 72 + 0.6
    ncol = max(1, min(len(labels), int(fig.get_size_inches()[0] // entry)))
    fig.set_layout_engine("constrained")
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=ncol,
        frameon=False,
        fontsize=LEGEND_FONTSIZE,
    )


def rank(run: SavedRun):
    """Fractional-rank ECDF of each chain, minus the uniform's, with the points that
    arviz-stats' multi-chain uniformity test flags (``plot_rank``, method ``mtc_c``).

    ``mtc_c`` is arviz-plots' default and preferred method: it accounts for the
    autocorrelation of the ranks, which a simultaneous envelope does not; so no
    envelope is drawn, and the caption says what is.  The test's hypergeometric
    pmf and cdf are :mod:`compare.outputs._hypergeom`'s, 10x scipy's (same values to 1e-10).
    """
    plt = _pyplot()
    azp = _azp()
    with fast_rank_test():
        fig = _figure_of(azp.plot_rank(run.flat(), backend="matplotlib"))
    chains = run.draws.shape[0]
    ax = fig.axes[0]
    handles = [plt.Line2D([], [], color=line.get_color(), lw=1.5) for line in ax.lines[:chains]]
    labels = [f"chain {c}" for c in range(len(handles))]
    handles.append(plt.Line2D([], [], ls="", marker="o", color="#000000", ms=5))
    labels.append("ranks flagged by the multi-chain test")
    _bottom_legend(fig, handles, labels)
    return fig


def ess_evolution(run: SavedRun):
    """Bulk and tail ESS as draws accumulate, with the run's ESS gate
    (``plot_ess_evolution``) and a legend naming the three."""
    plt = _pyplot()
    azp = _azp()
    gate = _ess_gate(run)
    visuals = {}
    for which in ("bulk", "tail"):
        color, style = ESS_STYLE[which]
        visuals[f"ess_{which}"] = {"color": color}
        visuals[f"ess_{which}_line"] = {"color": color, "linestyle": style}
    visuals["min_ess"] = {"color": ESS_STYLE["gate"][0], "linestyle": ESS_STYLE["gate"][1]}
    fig = _figure_of(
        azp.plot_ess_evolution(run.flat(), backend="matplotlib", min_ess=gate, visuals=visuals)
    )
    handles = [
        plt.Line2D([], [], color=ESS_STYLE[w][0], ls=ESS_STYLE[w][1], marker="o", ms=4)
        for w in ("bulk", "tail")
    ]
    handles.append(plt.Line2D([], [], color=ESS_STYLE["gate"][0], ls=ESS_STYLE["gate"][1]))
    labels = ["bulk ESS", "tail ESS", f"ESS gate ({gate:g})"]
    _bottom_legend(fig, handles, labels)
    return fig


def mcse(run: SavedRun):
    """MCSE of the quantiles (``plot_mcse``)."""
    azp = _azp()
    return _figure_of(azp.plot_mcse(run.flat(), backend="matplotlib"))


def _vector(value: Any, d: int) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.asarray([np.nan if v is None else v for v in np.ravel(value)], dtype=float)
    return arr if arr.size == d else None


def marginals(run: SavedRun):
    """Each MCMC marginal (arviz-plots KDE) with the exact density, MAP, MLE and mean."""
    azp = _azp()
    names = _shown(run)
    cols = min(4, len(names))
    rows = -(-len(names) // cols)
    pc = azp.plot_dist(
        run.flat(),
        backend="matplotlib",
        kind="kde",
        visuals={"credible_interval": False, "point_estimate": False, "point_estimate_text": False},
        col_wrap=cols,
        figure_kwargs={"figsize": (3.2 * cols, 2.3 * rows + 0.7)},
    )
    exact = run.group("exact")
    doc = run.doc
    d = len(run.parameters)
    marks = {
        "exact mean": (_vector(doc["exact"]["mean"], d), COLORS["mean"], "-"),
        "MAP": (_vector(doc["exact"]["map"], d), COLORS["map"], "--"),
        "MLE": (_vector(doc["exact"]["mle"], d), COLORS["mle"], ":"),
    }
    handles: dict[str, Any] = {}
    for i, name in enumerate(names):
        ax = pc.get_target(name, {})
        if exact is not None and np.isfinite(exact["density"].values[i]).any():
            (line,) = ax.plot(
                exact["grid"].values[i],
                exact["density"].values[i],
                color=COLORS["exact"],
                lw=1.2,
                ls=(0, (4, 2)),
                label="exact density",
            )
            handles.setdefault("exact density", line)
        for label, (values, color, style) in marks.items():
            if values is not None and np.isfinite(values[i]):
                handles.setdefault(
                    label, ax.axvline(values[i], color=color, ls=style, lw=1, label=label)
                )
    fig = _figure_of(pc)
    mcmc_line = fig.axes[0].lines[0] if fig.axes and fig.axes[0].lines else None
    labels = (["MCMC (KDE)"] if mcmc_line is not None else []) + list(handles)
    artists = ([mcmc_line] if mcmc_line is not None else []) + list(handles.values())
    _bottom_legend(fig, artists, labels)
    return fig


def _ellipse(mean: np.ndarray, cov: np.ndarray, k: float, points: int = 100) -> np.ndarray:
    """Points of the k-sd ellipse of a 2-D normal (through the Cholesky factor)."""
    t = np.linspace(0, 2 * np.pi, points)
    chol = np.linalg.cholesky(cov)
    return mean[:, None] + k * chol @ np.vstack([np.cos(t), np.sin(t)])


def pair(run: SavedRun):
    """Pairs of the first parameters: thinned draws with the exact 1-, 2- and 3-sd ellipses."""
    plt = _pyplot()
    _azp()
    d = len(run.parameters)
    k = min(MAX_PAIR, d)
    if k < 2:
        return None
    draws = run.draws.reshape(-1, d)
    step = max(1, draws.shape[0] // PAIR_POINTS)
    thin = draws[::step, :k]
    mean = _vector(run.doc["exact"]["mean"], d)
    cov = np.asarray(run.doc["exact"]["cov"], dtype=float) if run.doc["exact"]["cov"] else None
    fig, axes = plt.subplots(
        k - 1, k - 1, figsize=(2.6 * (k - 1) + 1, 2.6 * (k - 1) + 0.6), squeeze=False
    )
    for row in range(1, k):
        for col in range(k - 1):
            ax = axes[row - 1, col]
            if col >= row:
                ax.axis("off")
                continue
            ax.plot(thin[:, col], thin[:, row], ".", ms=2, alpha=0.3, color=COLORS["mcmc"])
            sub = None
            if mean is not None and cov is not None and cov.shape == (d, d):
                sub = cov[np.ix_([col, row], [col, row])]
            if (
                sub is not None
                and mean is not None
                and np.all(np.isfinite(sub))
                and np.linalg.det(sub) > 0
            ):
                for level in (1, 2, 3):
                    xy = _ellipse(mean[[col, row]], sub, level)
                    ax.plot(xy[0], xy[1], color=COLORS["exact"], lw=1)
            if row == k - 1:
                ax.set_xlabel(run.parameters[col])
            if col == 0:
                ax.set_ylabel(run.parameters[row])
    # Wrapped to the figure's width: one line is wider than a 2-parameter figure.
    title = "MCMC draws (dots) and exact 1, 2, 3 sd ellipses (lines)"
    fig.suptitle(
        textwrap.fill(title, width=int(fig.get_size_inches()[0] * PAIR_TITLE_CHARS)),
        fontsize="medium",
    )
    fig.tight_layout()
    return fig


def zscores(run: SavedRun):
    """Every tested quantity's z against the Bonferroni threshold."""
    plt = _pyplot()
    _azp()
    quantities = run.doc.get("quantities") or []
    if not quantities:
        return None
    checks = {c["name"]: c for c in run.doc["checks"]}
    threshold = checks.get(CheckKind.AGREEMENT, {}).get("threshold")
    z = np.array([np.nan if q["z"] is None else q["z"] for q in quantities])
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot(np.arange(z.size), z, "o", ms=3, color=COLORS["mcmc"])
    if threshold is not None:
        for sign in (1, -1):
            ax.axhline(sign * threshold, color=COLORS["map"], ls="--", lw=1)
        ax.text(0, threshold, f" threshold {threshold:.2f}", va="bottom", fontsize="small")
    ax.axhline(0, color="#999999", lw=0.8)
    ax.set_xlabel("tested quantity (see the table of all quantities)")
    ax.set_ylabel("z")
    ax.set_title(
        f"agreement: {z.size} z-scores; a bug pushes some past the dashed lines", fontsize="medium"
    )
    fig.tight_layout()
    return fig


def predictive(run: SavedRun):
    """Predictive mean and 95% band: exact, MCMC and the MAP plug-in (regression topics)."""
    plt = _pyplot()
    _azp()
    section = run.doc.get("predictive")
    if not section or "exact" not in section:
        return None
    inputs = np.asarray(section["inputs"], dtype=float)
    fig, ax = plt.subplots(figsize=(8, 4))
    one_d = inputs.ndim == 2 and inputs.shape[1] == 1
    where = inputs[:, 0] if one_d else np.arange(inputs.shape[0])
    order = np.argsort(where)
    observed = run.group("observed_data")
    names = section.get("input_names") or []
    target = run.doc.get("regression", {}).get("target")
    if one_d and observed is not None and names and names[0] in observed:
        others = [v for v in observed.data_vars if v != names[0]]
        y_name = target if target in observed else (others[-1] if others else None)
        if y_name is not None:
            ax.plot(
                observed[names[0]].values,
                observed[y_name].values,
                ".",
                ms=3,
                color="#888888",
                label="data",
            )
    offsets = {"exact": 0.0, "mcmc": 0.15, "map_plugin": -0.15}
    styles = {
        "exact": ("exact predictive", COLORS["exact"]),
        "mcmc": ("MCMC predictive", COLORS["mcmc"]),
        "map_plugin": ("MAP plug-in", COLORS["plugin"]),
    }
    for key, (label, color) in styles.items():
        if key not in section or section[key] is None:
            continue
        mean = np.asarray(section[key]["mean"], dtype=float)[order]
        sd = np.sqrt(np.asarray(section[key]["var"], dtype=float))[order]
        x = where[order]
        if one_d:
            ax.plot(x, mean, color=color, label=f"{label} mean")
            if key == "exact":
                ax.fill_between(
                    x,
                    mean - 1.96 * sd,
                    mean + 1.96 * sd,
                    color=color,
                    alpha=0.15,
                    label=f"{label} 95%",
                )
            else:
                ax.plot(x, mean - 1.96 * sd, color=color, ls="--", lw=1)
                ax.plot(x, mean + 1.96 * sd, color=color, ls="--", lw=1, label=f"{label} 95%")
        else:
            ax.errorbar(
                x + offsets[key],
                mean,
                yerr=1.96 * sd,
                fmt="o",
                ms=3,
                color=color,
                capsize=2,
                label=f"{label} (mean, 95%)",
            )
    ax.set_xlabel(names[0] if one_d and names else "test input (index)")
    ax.set_ylabel("prediction")
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    return fig


def gp_function(run: SavedRun):
    """Gaussian process: f at the test inputs, exact mean and 95% band against MCMC quantiles."""
    plt = _pyplot()
    _azp()
    section = run.doc.get("gaussian_process")
    inputs = (run.doc.get("predictive") or {}).get("inputs")
    if not section or not inputs:
        return None
    x = np.asarray(inputs, dtype=float)
    one_d = x.shape[1] == 1
    where = x[:, 0] if one_d else np.arange(x.shape[0])
    order = np.argsort(where)
    mean = np.asarray(section["exact"]["mean"], dtype=float)
    sd = np.asarray(section["exact"]["sd"], dtype=float)
    draws = run.draws.reshape(-1, len(run.parameters))[:, : mean.size]
    lo, mid, hi = np.quantile(draws, [0.025, 0.5, 0.975], axis=0)
    fig, ax = plt.subplots(figsize=(8, 4))
    w = where[order]
    ax.fill_between(
        w,
        (mean - 1.96 * sd)[order],
        (mean + 1.96 * sd)[order],
        color=COLORS["exact"],
        alpha=0.15,
        label="exact 95% band of f",
    )
    ax.plot(w, mean[order], color=COLORS["exact"], label="exact mean of f")
    ax.plot(w, mid[order], "o", ms=3, color=COLORS["mcmc"], label="MCMC median")
    ax.vlines(w, lo[order], hi[order], color=COLORS["mcmc"], lw=1, label="MCMC 2.5-97.5% quantiles")
    ax.set_xlabel(
        ((run.doc.get("predictive") or {}).get("input_names") or ["x"])[0]
        if one_d
        else "test input (index)"
    )
    ax.set_ylabel("f")
    ax.set_title(f"latent function, kernel {section.get('kernel', '')}", fontsize="medium")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def gp_kernel(run: SavedRun):
    """Gaussian process: the kernel matrix K over the data inputs (sorted by the first)."""
    plt = _pyplot()

    _azp()
    section = run.doc.get("gaussian_process")
    observed = run.group("observed_data")
    names = (run.doc.get("predictive") or {}).get("input_names")
    if not section or observed is None or not names:
        return None
    x = np.column_stack([observed[n].values.astype(float) for n in names])
    x = x[np.lexsort(x.T[::-1])][:400]
    hyper = run.doc["hyperparameters"]
    k = kernel_matrix(
        kernel=section["kernel"],
        x1=x,
        lengthscale=hyper["lengthscale"],
        signal_sd=hyper["signal_sd"],
    )
    fig, ax = plt.subplots(figsize=(5, 4.3))
    image = ax.imshow(k, cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=ax, shrink=0.85)
    ax.set_title(
        f"K ({section['kernel']}, {x.shape[0]} inputs sorted by {names[0]})", fontsize="medium"
    )
    ax.set_xlabel("input")
    ax.set_ylabel("input")
    fig.tight_layout()
    return fig


def sensitivity(run: SavedRun):
    """Exact posterior path along one hyperparameter (compare/sensitivity.py); the exact
    sweep is computed here, beside the run, when no sensitivity.json is saved."""
    doc = sensitivity_study.for_run(run.directory, run.doc)
    return None if doc is None else sensitivity_study.figure(doc)


_METHOD_STYLE = {
    "exact": ("exact predictive", COLORS["exact"], "-"),
    "mcmc": ("MCMC predictive", COLORS["mcmc"], "--"),
    "plugin": ("plug-in", COLORS["plugin"], ":"),
}


def _observed_points(run: SavedRun, features: list[str]):
    """Training inputs and labels from /observed_data (None when not saved)."""
    observed = run.group("observed_data")
    if observed is None or not all(f in observed for f in features):
        return None
    x = np.column_stack([observed[f].values.astype(float) for f in features])
    label_vars = [v for v in observed.data_vars if v not in features]
    labels = observed[label_vars[-1]].values if label_vars else None
    return x, labels


def _label_text(value: Any) -> str:
    """A label as the classifiers name classes: integer-valued numbers without ".0"."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def decision_boundary(run: SavedRun):
    """Classifiers: P(class | x) over the first inputs, exact against MCMC and plug-in."""
    plt = _pyplot()
    _azp()
    section = run.doc.get("decision_boundary")
    if not section:
        return None
    features, axes, classes = section["features"], section["axes"], section["classes"]
    probs = {k: np.asarray(v, dtype=float) for k, v in section["probability"].items()}
    fixed = section.get("fixed") or {}
    held = ", others at their mean" if fixed else ""
    if len(features) == 1:
        fig, ax = plt.subplots(figsize=(8, 4))
        u = np.asarray(axes[0])
        for c in range(1 if len(classes) == 2 else 0, len(classes)):
            for name, p in probs.items():
                label, color, style = _METHOD_STYLE.get(name, (name, None, "-"))
                ax.plot(
                    u,
                    p[:, c],
                    ls=style,
                    color=color if len(classes) == 2 else None,
                    label=f"{label}: P({classes[c]} | x)",
                )
        points = _observed_points(run, features)
        if points is not None and points[1] is not None and len(classes) == 2:
            # The data as a rug: each point at 1 if its class is the second, else at 0.
            at = np.array([1.0 if _label_text(v) == classes[1] else 0.0 for v in points[1]])
            ax.plot(
                points[0][:, 0],
                at,
                "|",
                ms=10,
                color="#888888",
                alpha=0.6,
                label=f"data (at 1: class {classes[1]})",
            )
        ax.set_xlabel(features[0])
        ax.set_ylabel("probability")
        ax.set_ylim(-0.05, 1.05)
        ax.legend(fontsize="small")
        ax.set_title(f"class probability along {features[0]}{held}", fontsize="medium")
        fig.tight_layout()
        return fig
    g0, g1 = np.meshgrid(axes[0], axes[1], indexing="ij")
    fig, ax = plt.subplots(figsize=(7.5, 6))
    exact = probs.get("exact", next(iter(probs.values())))
    cmap = plt.get_cmap("tab10")
    # Colour: the exact predictive's most probable class, shaded by its probability.
    top = exact.argmax(axis=-1)
    rgba = np.array([cmap(c % 10) for c in top.ravel()]).reshape(*top.shape, 4)
    rgba[..., 3] = 0.15 + 0.35 * (exact.max(axis=-1) - 1 / len(classes)) / (1 - 1 / len(classes))
    ax.imshow(
        np.transpose(rgba, (1, 0, 2)),
        origin="lower",
        aspect="auto",
        extent=(axes[0][0], axes[0][-1], axes[1][0], axes[1][-1]),
    )
    handles = []
    for name, p in probs.items():
        label, color, style = _METHOD_STYLE.get(name, (name, "#444444", "-"))
        # A boundary is where the leading class changes: the zero set of
        # (P of class c) - (largest P among the others), for each class c.
        for c in range(len(classes) if len(classes) > 2 else 1):
            others = np.delete(p, c, axis=-1).max(axis=-1)
            margin = p[..., c] - others
            if margin.min() < 0 < margin.max():
                ax.contour(
                    g0, g1, margin, levels=[0.0], colors=[color], linestyles=[style], linewidths=1.6
                )
        handles.append(plt.Line2D([], [], color=color, ls=style, label=f"{label} boundary"))
    points = _observed_points(run, features)
    if points is not None:
        x, labels = points
        if labels is not None:
            names = [_label_text(v) for v in labels]
            for c, cls in enumerate(classes):
                sel = np.array([n == cls for n in names])
                if sel.any():
                    ax.scatter(
                        x[sel, 0],
                        x[sel, 1],
                        s=9,
                        color=cmap(c % 10),
                        edgecolor="k",
                        linewidths=0.3,
                        label=f"class {cls}",
                    )
                    handles.append(
                        plt.Line2D(
                            [], [], marker="o", ls="", color=cmap(c % 10), label=f"class {cls}"
                        )
                    )
        else:
            ax.plot(x[:, 0], x[:, 1], ".", ms=3, color="#555555")
    ax.set_xlim(axes[0][0], axes[0][-1])
    ax.set_ylim(axes[1][0], axes[1][-1])
    ax.set_xlabel(features[0])
    ax.set_ylabel(features[1])
    ax.legend(handles=handles, fontsize="small", loc="best")
    title = (
        "decision boundaries"
        + (f" (plug-in: {section['plugin']})" if section.get("plugin") else "")
        + held
    )
    ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    return fig


def calibration(run: SavedRun):
    """Classifiers: reliability diagram of the predicted probabilities, per method."""
    plt = _pyplot()
    _azp()
    section = run.doc.get("calibration")
    if not section or not section.get("methods"):
        return None
    fig, ax = plt.subplots(figsize=(6.5, 5))
    ax.plot([0, 1], [0, 1], color="#999999", lw=0.8, label="perfect calibration")
    offsets = {"exact": 0.0, "mcmc": 0.006, "plugin": -0.006}
    for name, method in section["methods"].items():
        label, color, _ = _METHOD_STYLE.get(name, (name, None, "-"))
        bins = method["bins"]
        if not bins:
            continue
        mp = np.array([b["mean_predicted"] for b in bins]) + offsets.get(name, 0.0)
        ob = np.array([b["observed"] for b in bins])
        se = np.array([b["se"] for b in bins])
        ax.errorbar(
            mp,
            ob,
            yerr=1.96 * se,
            fmt="o-",
            ms=4,
            lw=1,
            capsize=2,
            color=color,
            label=f"{label} (Brier {method['brier']:.3f}, ECE {method['ece']:.3f})",
        )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(f"predicted {section['kind']} (bin mean)")
    ax.set_ylabel("observed frequency")
    ax.set_title(f"reliability on {section['rows']}", fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    fig.tight_layout()
    return fig


def laplace_overlay(run: SavedRun):
    """Logistic regression: MCMC and the Laplace normal against the exact marginals,
    and the Laplace error as n grows."""
    plt = _pyplot()

    _azp()
    section = run.doc.get("laplace_overlay")
    if not section:
        return None
    params = section["parameters"][:MAX_SHOWN]
    rows_err = (run.doc.get("laplace_error") or {}).get("rows") or []
    cols = min(3, len(params) + (1 if rows_err else 0))
    panels = len(params) + (1 if rows_err else 0)
    nrows = -(-panels // cols)
    fig, axs = plt.subplots(nrows, cols, figsize=(3.6 * cols, 2.8 * nrows + 0.5), squeeze=False)
    draws = run.draws.reshape(-1, len(run.parameters))
    for i, p in enumerate(params):
        ax = axs.flat[i]
        edges = np.asarray(p["edges"])
        j = run.parameters.index(p["parameter"]) if p["parameter"] in run.parameters else i
        ax.hist(
            draws[:, j], bins=edges, density=True, color=COLORS["mcmc"], alpha=0.35, label="MCMC"
        )
        ax.stairs(
            p["reference_density"],
            edges,
            color=COLORS["exact"],
            lw=1.2,
            label="exact (reference draws)",
        )
        grid = np.linspace(edges[0], edges[-1], 200)
        ax.plot(
            grid,
            stats.norm.pdf(grid, p["laplace_mean"], p["laplace_sd"]),
            color=COLORS["map"],
            ls="--",
            lw=1.2,
            label="Laplace N(MAP, H^-1)",
        )
        ax.set_title(p["parameter"], fontsize="small")
        ax.set_yticks([])
    if rows_err:
        ax = axs.flat[len(params)]
        n = np.array([r["n"] for r in rows_err], dtype=float)
        ax.loglog(
            n,
            [max(r["max_abs_shift"], 1e-6) for r in rows_err],
            "o-",
            color=COLORS["map"],
            label="max |mean shift| (sd)",
        )
        ax.loglog(
            n,
            [max(abs(r["max_log_sd_ratio"]), 1e-6) for r in rows_err],
            "s--",
            color=COLORS["mle"],
            label="max |log sd ratio|",
        )
        ax.set_xticks(n, [str(int(v)) for v in n], fontsize="x-small")
        ax.minorticks_off()
        ax.set_xlabel("n (rows)")
        ax.set_title("Laplace error vs n", fontsize="small")
        ax.legend(fontsize="x-small")
    for ax in list(axs.flat)[panels:]:
        ax.axis("off")
    handles, labels = axs.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False, fontsize="small")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


@dataclass(frozen=True)
class FigureKind:
    """One kind of figure on a run page."""

    name: str
    title: str
    caption: str
    draw: Callable[[SavedRun], Any]


FIGURES: tuple[FigureKind, ...] = (
    FigureKind(
        "marginals",
        "Marginal posteriors",
        "MCMC kernel density estimate of each marginal with the exact density (dashed) "
        "and the exact mean, MAP and MLE marked.",
        marginals,
    ),
    FigureKind(
        "pair",
        "Pair plot",
        "MCMC draws of the first parameters with the ellipses at 1, 2 and 3 exact "
        "posterior sds (from the exact mean and covariance).",
        pair,
    ),
    FigureKind(
        "zscores",
        "Agreement z-scores",
        "Each tested quantity's z-score; the verdict fails when any passes the "
        "Bonferroni threshold.",
        zscores,
    ),
    FigureKind(
        "predictive",
        "Predictive distribution",
        "Posterior predictive mean and 95% band at the test inputs: exact, MCMC and the "
        "MAP plug-in (which ignores parameter uncertainty).",
        predictive,
    ),
    FigureKind(
        "gp_function",
        "Latent function",
        "Gaussian process: the exact posterior mean and 95% band of f at the test "
        "inputs against the MCMC median and 2.5-97.5% quantiles.",
        gp_function,
    ),
    FigureKind(
        "gp_kernel",
        "Kernel matrix",
        "Gaussian process: the prior covariance K between the data inputs.",
        gp_kernel,
    ),
    FigureKind(
        "sensitivity",
        "Prior sensitivity",
        "Exact posterior mean and 95% interval along a grid of one hyperparameter, "
        "MCMC points (mean +- 1.96 sd) where they were run, and the log evidence.",
        sensitivity,
    ),
    FigureKind(
        "decision_boundary",
        "Decision boundaries",
        "Classifiers: where the most probable class changes, under the exact posterior "
        "predictive, the MCMC predictive (averaged over draws) and a plug-in point "
        "estimate; shading is the exact predictive's leading class and its probability.",
        decision_boundary,
    ),
    FigureKind(
        "calibration",
        "Calibration of predicted probabilities",
        "Reliability diagram: predicted probability (binned) against the observed "
        "frequency, with 95% binomial bars; points on the diagonal are calibrated.",
        calibration,
    ),
    FigureKind(
        "laplace_overlay",
        "Laplace approximation against MCMC",
        "Logistic regression: each weight's exact marginal (histogram of reference "
        "draws), the MCMC draws and the Laplace normal N(MAP, H^-1); last panel: the "
        "Laplace error shrinking as n grows.",
        laplace_overlay,
    ),
    FigureKind("trace", "Trace", "Each chain's draws and density (arviz-plots).", trace),
    FigureKind(
        "rank",
        "Rank plot",
        "Each chain's fractional-rank ECDF minus the uniform's, with the p-value of "
        "arviz-stats' multi-chain uniformity test (which allows for autocorrelation); "
        "points mark ranks where it finds the chains differ. Chains sampling the same "
        "distribution stay near zero with no marked points (arviz-plots).",
        rank,
    ),
    FigureKind(
        "ess_evolution",
        "ESS evolution",
        "Bulk and tail effective sample size as the draws accumulate; the verdict needs "
        "both above the ESS gate (dashed) (arviz-plots).",
        ess_evolution,
    ),
    FigureKind(
        "mcse",
        "Monte Carlo standard error",
        "MCSE of the quantiles of each marginal (arviz-plots).",
        mcse,
    ),
)

FIGURE_KINDS = {f.name: f for f in FIGURES}


#: Beside a run's figures: the stamp of what they were drawn from, and each result.
FIGURE_STAMP = "figures.json"
#: The files of a run folder the figures read (those present are sent to a Dask worker).
FIGURE_INPUTS = (RESULT_FILE, DRAWS_FILE, sensitivity_study.SENSITIVITY_FILE)


def _stamp(run_dir: Path, kinds: tuple[FigureKind, ...]) -> str:
    """What a run's figures depend on: its files, the figure kinds, the code and packages."""
    hasher = hashlib.sha256()
    hasher.update((run_dir / RESULT_FILE).read_bytes())
    draws = (run_dir / DRAWS_FILE).stat()
    hasher.update(f"{draws.st_size} {draws.st_mtime_ns}".encode())
    hasher.update(" ".join(k.name for k in kinds).encode())
    hasher.update(package_sources().encode())
    hasher.update(json.dumps(versions(), sort_keys=True).encode())
    return hasher.hexdigest()


def kept_figures(
    run_dir: str | Path, out_dir: str | Path, kinds: tuple[FigureKind, ...] = FIGURES
) -> list[dict[str, Any]] | None:
    """The results of the figures already in ``out_dir``, if still valid; else None.

    Valid means ``figures.json`` stamps them as drawn from this run's
    ``result.json`` and ``draws.nc``, these kinds, this code and these
    package versions, and every "ok" figure's PNG is there. Kept figures
    report 0 seconds and ``"cached": True``.
    """
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    try:
        stamp = _stamp(run_dir, kinds)
        saved = json.loads((out_dir / FIGURE_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("stamp") != stamp:
        return None
    results = saved.get("results")
    if not isinstance(results, list) or not all(
        r["status"] != "ok" or (out_dir / f"{r['kind']}.png").is_file() for r in results
    ):
        return None
    return [{**r, "seconds": 0.0, "cached": True} for r in results]


def render_run(
    run_dir: str | Path,
    out_dir: str | Path,
    kinds: tuple[FigureKind, ...] = FIGURES,
    *,
    force: bool = False,
) -> list[dict[str, Any]]:
    """Every figure of one saved run, as ``out_dir/<kind>.png``; see :func:`render`.

    One task per run: the draws are read once for all its figures. Figures
    still valid (:func:`kept_figures`) are kept unless ``force``; drawn ones
    are stamped in ``figures.json`` when none failed.
    """
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    kept = None if force else kept_figures(run_dir, out_dir, kinds)
    if kept is not None:
        return kept
    run = SavedRun(run_dir)
    results = [render(kind, run, out_dir / f"{kind.name}.png") for kind in kinds]
    stamp_figures(run_dir, out_dir, kinds, results)
    return results


def stamp_figures(
    run_dir: Path, out_dir: Path, kinds: tuple[FigureKind, ...], results: list[dict[str, Any]]
) -> None:
    """Record in ``figures.json`` what the figures were drawn from, when none failed."""
    if all(r["status"] != "failed" for r in results):
        with contextlib.suppress(OSError):  # no stamp: the next build draws again
            stamp = _stamp(run_dir, kinds)
            atomic_write(out_dir / FIGURE_STAMP, json.dumps({"stamp": stamp, "results": results}))


def render_run_files(
    files: dict[str, bytes], figure_dir: str, kinds: tuple[FigureKind, ...] = FIGURES
) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """:func:`render_run` on a Dask worker, from a run folder's files sent as bytes.

    ``files`` maps names in the run folder (``result.json``, ``draws.nc`` and
    what the figures read beside them, such as ``sensitivity.json``) to their
    bytes. Returns the figures' results and every file the drawing wrote or
    changed, by path relative to the run folder (``<figure_dir>/<kind>.png``,
    a computed ``sensitivity.json``), for the command to write: no shared file
    system is needed.
    """
    import tempfile  # only on a worker

    with tempfile.TemporaryDirectory(prefix="bayes-compare-figures-") as tmp:
        run_dir = Path(tmp)
        for name, data in files.items():
            (run_dir / name).write_bytes(data)
        run = SavedRun(run_dir)
        out_dir = run_dir / figure_dir
        results = [render(kind, run, out_dir / f"{kind.name}.png") for kind in kinds]
        written = {
            str(path.relative_to(run_dir)): path.read_bytes()
            for path in sorted(run_dir.rglob("*"))
            if path.is_file()
            and not path.name.startswith(".")
            and files.get(str(path.relative_to(run_dir))) != path.read_bytes()
        }
    return results, written


def _drew_marks(fig: Any) -> bool:
    """Whether any axes of ``fig`` holds data: a line, a collection (points, bands,
    meshes), a patch (bars, ellipses) or an image."""
    return any(ax.lines or ax.collections or ax.patches or ax.images for ax in fig.axes)


def render(
    kind: str | FigureKind, run: SavedRun | str | Path, out_path: str | Path
) -> dict[str, Any]:
    """Draw one figure of one saved run into ``out_path`` (PNG).

    Returns ``{"kind", "seconds", "status", "error"}`` with status ``ok``,
    ``skipped`` (does not apply) or ``failed`` (``error`` holds the message;
    a figure whose axes hold no data fails too, rather than showing empty
    frames). Never raises for a figure's own failure: the page shows an error box.
    """
    t0 = time.perf_counter()
    kind = FIGURE_KINDS[kind] if isinstance(kind, str) else kind
    out_path = Path(out_path)
    try:
        with drawing() as plt:
            run = run if isinstance(run, SavedRun) else SavedRun(Path(run))
            fig = kind.draw(run)
            if fig is None:
                out_path.unlink(missing_ok=True)
                return {
                    "kind": kind.name,
                    "seconds": time.perf_counter() - t0,
                    "status": "skipped",
                    "error": None,
                }
            if not _drew_marks(fig):
                raise ValueError("the figure drew axes but no data")
            out_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = out_path.with_name(f".{out_path.name}.tmp.png")
            fig.savefig(tmp, dpi=DPI)
            plt.close(fig)
        tmp.replace(out_path)
        return {
            "kind": kind.name,
            "seconds": time.perf_counter() - t0,
            "status": "ok",
            "error": None,
        }
    except Exception as err:  # noqa: BLE001 - a figure's failure becomes an error box
        out_path.unlink(missing_ok=True)
        return {
            "kind": kind.name,
            "seconds": time.perf_counter() - t0,
            "status": "failed",
            "error": f"{type(err).__name__}: {err}",
        }
