"""The static HTML site: ``index.html`` and one page per saved run.

Everything is read from saved runs (``<runs>/<topic>/result.json`` and
``draws.nc``); nothing samples here, except that ``bayes-compare report``
first runs the topics that have no saved run.  Each run page sits beside
its JSON and draws, in ``<runs>/<topic>/index.html`` with its figures in
``<runs>/<topic>/figures/``, so a page can be rebuilt from what is next to
it.  Pages use no network: inline CSS, no scripts, images as files beside
the page.  Figures are drawn in parallel processes; a figure that fails
becomes a visible error box and the rest of the site is still written.
"""

from __future__ import annotations

import html
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from compare.accel.quick_exit import spawn_context
from compare.core.checks import CheckKind
from compare.core.files import atomic_write, versions
from compare.core.registry import REGISTRY, InputError
from compare.core.text import fmt
from compare.core.text import template_env as _env
from compare.outputs.document import (
    SkippedRun,
    common_settings,
    describe_settings,
    load_runs,
    split_settings,
)
from compare.outputs.figures import (
    FIGURE_INPUTS,
    FIGURES,
    FigureKind,
    SavedRun,
    kept_figures,
    render_run,
    render_run_files,
    stamp_figures,
)
from compare.studies.sbc import run_page_section
from compare.studies.sensitivity import page_context
from compare.topics import all_topics

INDEX_FILE = "index.html"
PAGE_FILE = "index.html"
FIGURE_DIR = "figures"


# --- formulas -----------------------------------------------------------------
_GREEK = {
    name: f"&{name};"
    for name in (
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "pi",
        "rho",
        "sigma",
        "tau",
        "phi",
        "theta",
        "psi",
        "omega",
        "Sigma",
        "Phi",
        "Lambda",
    )
}
_GREEK_RE = re.compile(r"\b(" + "|".join(sorted(_GREEK, key=len, reverse=True)) + r")(?=\d|\b|_)")
_SUP_RE = re.compile(r"\^(\{[^}]*\}|-?[\w.]+)")
_SUB_RE = re.compile(r"_(\{[^}]*\}|[A-Za-z0-9]+)")


def formula_html(text: str) -> str:
    """Plain-text formulas (``S_N^-1 = I/prior_sd^2``) as HTML with sub/superscripts.

    Topics write their model in ASCII, as ``describe`` prints it.  Here
    ``x^2``, ``x^{2 a}``, ``a_N`` and Greek names become ``<sup>``, ``<sub>``
    and Greek letters; hyperparameter names such as ``prior_sd`` keep their
    underscore, because the user types them in ``--set``.
    """
    protected: dict[str, str] = {}

    def protect(match: re.Match) -> str:
        key = f"\x00{len(protected)}\x00"
        protected[key] = match.group(0)
        return key

    # Names with an underscore followed by a lower-case word (prior_sd,
    # noise_sd, alpha0) are --set names: keep them literally.
    text = re.sub(r"\b[a-z]+(?:_[a-z][a-z]+)+\b", protect, text)
    out = html.escape(text, quote=False)
    out = _GREEK_RE.sub(lambda m: _GREEK[m.group(1)], out)
    out = _SUP_RE.sub(lambda m: f"<sup>{m.group(1).strip('{}')}</sup>", out)
    out = _SUB_RE.sub(lambda m: f"<sub>{m.group(1).strip('{}')}</sub>", out)
    for key, value in protected.items():
        out = out.replace(html.escape(key, quote=False), f"<code>{html.escape(value)}</code>")
    return out


# --- numbers ------------------------------------------------------------------
def _min_ess(mcmc: dict[str, Any]) -> float | None:
    values = [
        v for v in (mcmc.get("ess_bulk") or []) + (mcmc.get("ess_tail") or []) if v is not None
    ]
    return min(values) if values else None


def _max(values: Sequence[Any] | None) -> float | None:
    vals = [v for v in (values or []) if v is not None]
    return max(vals) if vals else None


def describe_family(marginal: dict[str, Any] | None) -> str:
    """``beta(a=12, b=8)`` from the JSON description of an exact marginal."""
    if marginal is None:
        return "no closed-form marginal"
    args = [fmt(a) for a in marginal.get("args", [])]
    args += [f"{k}={fmt(v)}" for k, v in marginal.get("kwds", {}).items()]
    return f"{marginal['family']}({', '.join(args)})"


# --- pages --------------------------------------------------------------------
@dataclass
class FigureResult:
    kind: str
    title: str
    caption: str
    status: str  # ok / skipped / failed
    seconds: float
    error: str | None = None
    src: str | None = None
    #: Kept from an earlier drawing (compare.outputs.figures.kept_figures), not drawn now.
    kept: bool = False


@dataclass
class SiteResult:
    """What :func:`build_site` wrote, and how long each part took."""

    index: Path
    pages: dict[str, Path]
    figures: dict[str, list[FigureResult]]
    seconds: float
    figure_seconds: dict[str, float] = field(default_factory=dict)
    #: Runs left out: unreadable result.json, draws of another run (compare.outputs.document.load_run).
    skipped: list[SkippedRun] = field(default_factory=list)

    @property
    def failed_figures(self) -> list[tuple[str, str]]:
        return [
            (topic, f.kind)
            for topic, figs in self.figures.items()
            for f in figs
            if f.status == "failed"
        ]

    @property
    def figure_counts(self) -> tuple[int, int]:
        """(figures drawn by this build, failed ones included, figures kept from an
        earlier one); skipped kinds, which do not apply to a run, are not counted."""
        figs = [f for fs in self.figures.values() for f in fs if f.status != "skipped"]
        kept = sum(f.kept for f in figs)
        return len(figs) - kept, kept


def _topic_info(name: str) -> tuple[str, str]:
    """Title and model text of a registered topic ('' when unknown)."""
    all_topics()
    topic = REGISTRY.get(name)
    return (topic.title, topic.model) if topic is not None else ("", "")


def _data_summary(run: SavedRun) -> list[dict[str, str]]:
    """One row per data column: numbers get n/mean/sd/min/max, labels their counts."""
    observed = run.group("observed_data")
    if observed is None:
        return []
    rows = []
    for name in observed.data_vars:
        values = observed[name].values
        if values.dtype.kind in "biuf":
            v = values.astype(float)
            rows.append(
                {
                    "column": str(name),
                    "n": str(v.size),
                    "mean": fmt(v.mean()),
                    "sd": fmt(v.std(ddof=1) if v.size > 1 else float("nan")),
                    "min": fmt(v.min()),
                    "max": fmt(v.max()),
                    "counts": "",
                }
            )
        else:
            labels, counts = np.unique(values.astype(str), return_counts=True)
            order = np.argsort(-counts)[:12]
            shown = ", ".join(f"{labels[i]}: {counts[i]}" for i in order)
            if labels.size > 12:
                shown += f", ... ({labels.size} labels)"
            rows.append(
                {
                    "column": str(name),
                    "n": str(values.size),
                    "mean": "",
                    "sd": "",
                    "min": "",
                    "max": "",
                    "counts": shown,
                }
            )
    return rows


def _data_context(run: SavedRun) -> dict[str, Any]:
    """The data summary, or why there is none (draws.nc unreadable or without data)."""
    try:
        return {"data_rows": _data_summary(run), "data_error": None}
    except Exception as err:  # noqa: BLE001 - the page still shows everything from the JSON
        return {
            "data_rows": [],
            "data_error": f"draws.nc could not be read ({type(err).__name__}: "
            f"{err}); rerun the topic to recreate it",
        }


def _parameter_rows(doc: dict[str, Any]) -> list[dict[str, str]]:
    exact, mcmc = doc["exact"], doc["mcmc"]
    tests = {q["name"]: q for q in doc.get("quantities") or []}
    rows = []
    for i, name in enumerate(doc["parameters"]):

        def at(vec, i=i):
            return None if vec is None or i >= len(vec) else vec[i]

        # A Gaussian posterior's location test is ``mean:``, any other's ``loc:``.
        test = tests.get(f"mean:{name}") or tests.get(f"loc:{name}", {})
        rows.append(
            {
                "name": name,
                "family": describe_family(at(exact.get("marginals"))),
                "exact_mean": fmt(at(exact["mean"])),
                "exact_sd": fmt(at(exact["sd"])),
                "map": fmt(at(exact.get("map"))),
                "mle": fmt(at(exact.get("mle"))),
                "mcmc_mean": fmt(at(mcmc["mean"])),
                "mcmc_sd": fmt(at(mcmc["sd"])),
                "mcse": fmt(at(mcmc["mcse_mean"])),
                "z": fmt(test.get("z"), ".2f"),
                "p_holm": fmt(test.get("p_holm"), ".3g"),
                "rhat": fmt(at(mcmc["rhat"]), ".4f"),
                "ess": fmt(
                    min(
                        v
                        for v in (at(mcmc["ess_bulk"]), at(mcmc["ess_tail"]), math.inf)
                        if v is not None
                    ),
                    ".0f",
                ),
            }
        )
    return rows


#: JSON sections drawn by dedicated templates; others get the generic table.
_DEDICATED = {
    "topic",
    "verdict",
    "decided_by",
    "parameters",
    "exact",
    "mcmc",
    "checks",
    "quantities",
    "settings",
    "data",
    "hyperparameters",
    "timings",
    "versions",
    "predictive",
    "evidence",
    # drawn as figures (compare/classifier_report.py); too large for a table
    "decision_boundary",
    "calibration",
    "laplace_overlay",
}


def _section_rows(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A JSON section flattened into (key, value text) rows, nested keys dotted."""
    rows: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            rows += _section_rows(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value[:20]):
            rows += _section_rows(v, f"{prefix}[{i}]")
        if len(value) > 20:
            rows.append((prefix, f"... {len(value)} entries in result.json"))
    else:
        rows.append((prefix, fmt(value)))
    return rows


def _other_sections(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": key.replace("_", " "), "rows": _section_rows(value)}
        for key, value in doc.items()
        if key not in _DEDICATED and value
    ]


def _evidence(doc: dict[str, Any]) -> list[tuple[str, str]] | None:
    section = doc.get("evidence")
    exact = doc["exact"].get("log_evidence")
    if not section and exact is None:
        return None
    rows = [("exact log evidence", fmt(exact, ".6g"))]
    if section:
        rows += [(k.replace("_", " "), fmt(v, ".6g")) for k, v in section.items() if k != "exact"]
    return rows


def _predictive_rows(doc: dict[str, Any]) -> list[dict[str, str]] | None:
    section = doc.get("predictive")
    if not section or "exact" not in section:
        return None
    rows = []
    for i, x in enumerate(section["inputs"]):

        def cell(key, part, i=i):
            block = section.get(key)
            if not block or block.get(part) is None:
                return None
            return block[part][i]

        sd = {
            k: None if cell(k, "var") is None else math.sqrt(cell(k, "var"))
            for k in ("exact", "mcmc", "map_plugin")
        }
        rows.append(
            {
                "x": fmt(x),
                "exact": f"{fmt(cell('exact', 'mean'))} ± {fmt(sd['exact'])}",
                "mcmc": f"{fmt(cell('mcmc', 'mean'))} ± {fmt(sd['mcmc'])}",
                "map": f"{fmt(cell('map_plugin', 'mean'))} ± {fmt(sd['map_plugin'])}",
            }
        )
    return rows


def _run_context(run: SavedRun, figures: list[FigureResult], index_href: str) -> dict[str, Any]:
    doc = run.doc
    title, model = _topic_info(doc["topic"])
    checks = doc["checks"]
    return {
        "doc": doc,
        "title": title or doc["topic"],
        "model_html": [formula_html(line) for line in (doc.get("model") or model).splitlines()],
        "parameters": _parameter_rows(doc),
        **_data_context(run),
        "hyper_rows": [(k, fmt(v)) for k, v in doc.get("hyperparameters", {}).items()],
        "checks": checks,
        "evidence": _evidence(doc),
        "predictive": _predictive_rows(doc),
        "others": _other_sections(doc),
        "sensitivity": _sensitivity_section(run),
        **_sbc_section(run),
        "figures": figures,
        "index_href": index_href,
        "max_z": next((c["statistic"] for c in checks if c["name"] == CheckKind.AGREEMENT), None),
        "threshold": next(
            (c["threshold"] for c in checks if c["name"] == CheckKind.AGREEMENT), None
        ),
    }


def _sensitivity_section(run: SavedRun) -> dict[str, Any] | None:
    """The prior-sensitivity section (compare/sensitivity.py), from sensitivity.json if saved."""
    return page_context(run.directory)


def _sbc_section(run: SavedRun) -> dict[str, Any]:
    """The simulation-based calibration block (compare/sbc.py) when ``<run>/sbc`` holds one."""
    return run_page_section(run.directory)


def _index_row(run: SavedRun, href: str) -> dict[str, Any]:
    doc = run.doc
    checks = {c["name"]: c for c in doc["checks"]}
    return {
        "topic": doc["topic"],
        "href": href,
        "verdict": doc["verdict"],
        "decided_by": doc.get("decided_by", ""),
        "max_z": checks.get(CheckKind.AGREEMENT, {}).get("statistic"),
        "threshold": checks.get(CheckKind.AGREEMENT, {}).get("threshold"),
        "rhat": _max(doc["mcmc"]["rhat"]),
        "ess": _min_ess(doc["mcmc"]),
        "divergences": doc["mcmc"]["divergences"],
        "time": doc["timings"].get("total"),
        "data": doc["data"]["source"],
        "n": doc["data"]["n"],
        "settings": "",
    }


# --- figures in parallel --------------------------------------------------------
def _render_all(
    runs: Sequence[SavedRun],
    workers: int,
    progress: Callable[[int, int], None],
    kinds: tuple[FigureKind, ...],
    force: bool = False,
    client: Any = None,
) -> list[list[dict[str, Any]]]:
    """Figures of every run, one task per run; a dead worker gives error boxes.

    Runs whose figures are still valid (:func:`~compare.outputs.figures.kept_figures`)
    are read here; processes are started only for the runs left to draw. With
    a Dask ``client`` the runs are drawn on its workers from their files sent
    as bytes, and the figures come back the same way.
    """
    jobs = [(str(run.directory), str(run.directory / FIGURE_DIR), kinds) for run in runs]
    results: dict[int, list[dict[str, Any]]] = {}
    if not force:
        for i, job in enumerate(jobs):
            kept = kept_figures(*job)
            if kept is not None:
                results[i] = kept
    todo = [i for i in range(len(jobs)) if i not in results]
    if results:
        progress(len(results), len(jobs))

    def failed(err: BaseException) -> list[dict[str, Any]]:
        return [
            {
                "kind": kind.name,
                "seconds": 0.0,
                "status": "failed",
                "error": f"{type(err).__name__}: {err}",
            }
            for kind in kinds
        ]

    if client is not None and todo:
        from distributed import as_completed  # heavy: Dask only when a cluster runs

        futures = {
            client.submit(
                render_run_files,
                {
                    name: (runs[i].directory / name).read_bytes()
                    for name in FIGURE_INPUTS
                    if (runs[i].directory / name).is_file()
                },
                FIGURE_DIR,
                kinds,
                pure=False,
            ): i
            for i in todo
        }
        for future in as_completed(futures):
            i = futures[future]
            try:
                drawn, written = future.result()
            except Exception as err:  # noqa: BLE001 - a dead worker: error boxes, not a crash
                results[i] = failed(err)
            else:
                run_dir = runs[i].directory
                for name, data in written.items():
                    atomic_write(run_dir / name, data)
                stamp_figures(run_dir, run_dir / FIGURE_DIR, kinds, drawn)
                results[i] = drawn
            progress(len(results), len(jobs))
        return [results[i] for i in range(len(jobs))]
    if workers <= 1 or len(todo) <= 1:
        for i in todo:
            results[i] = render_run(*jobs[i], force=True)
            progress(len(results), len(jobs))
        return [results[i] for i in range(len(jobs))]
    # spawn: the parent may hold PyTensor/numba state (it may just have
    # sampled); a fresh interpreter per worker is safe and costs ~3 s once. Each
    # ends without the interpreter's teardown, which the pool would wait for.
    ctx = spawn_context()
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx) as pool:
        futures_ = {i: pool.submit(render_run, *jobs[i], force=True) for i in todo}
        for i, future_ in futures_.items():
            try:
                results[i] = future_.result()
            except Exception as err:  # noqa: BLE001 - a dead worker: error boxes, not a crash
                results[i] = failed(err)
            progress(len(results), len(jobs))
    return [results[i] for i in range(len(jobs))]


def default_workers() -> int:
    return max(1, min(4, len(os.sched_getaffinity(0))))


def _warn_stderr(line: str) -> None:
    print(f"warning: {line}", file=sys.stderr, flush=True)


def build_site(
    run_dirs: Iterable[str | Path],
    out: str | Path,
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    kinds: tuple[FigureKind, ...] = FIGURES,
    warn: Callable[[str], None] = _warn_stderr,
    force: bool = False,
    client: Any = None,
) -> SiteResult:
    """Write ``out/index.html`` and a page per run (beside each run's files).

    Parameters
    ----------
    run_dirs : iterable of path
        Directories holding ``result.json`` and ``draws.nc``.
    out : path
        Where ``index.html`` goes; run pages are linked relative to it.
    workers : int, optional
        Processes drawing figures (default: the usable cores, at most 4).
    progress : callable, optional
        ``progress(done, total)`` after each run's figures.
    kinds : tuple of FigureKind
        The figures of each page, in order (default :data:`FIGURES`).
    warn : callable
        Gets one line per run left out (default: printed to stderr).
    force : bool
        Draw every figure again; by default a run's figures are kept when
        nothing they were drawn from changed (:func:`compare.outputs.figures.render_run`).
    client : distributed.Client, optional
        Draw on this Dask cluster's workers instead of ``workers`` new processes.

    A run folder that cannot be used (``result.json`` truncated or not a run,
    ``draws.nc`` missing or of another run; :func:`compare.outputs.document.load_run`)
    is skipped: one warning line, and a "skipped" row on the index.

    Raises
    ------
    InputError
        When no run is left to report on.
    """
    t0 = time.perf_counter()
    out = Path(out)
    loaded, skipped = load_runs([Path(d) for d in run_dirs], warn=warn)
    runs = []
    for item in loaded:
        run = SavedRun(item.directory)
        run.__dict__["doc"] = item.doc  # the document checked against its draws
        runs.append(run)
    if not runs:
        raise InputError(
            "no saved runs to report on"
            + (
                f" ({len(skipped)} skipped: {skipped[0].line}"
                + (", ..." if len(skipped) > 1 else "")
                + ")"
                if skipped
                else ""
            )
            + "; run `bayes-compare run --all` first"
        )
    results = _render_all(
        runs,
        workers or default_workers(),
        progress or (lambda *_: None),
        tuple(kinds),
        force,
        client,
    )
    figure_seconds: dict[str, float] = {}
    by_run: dict[str, list[FigureResult]] = {}
    meta = {k.name: k for k in kinds}
    for run, run_results in zip(runs, results):
        for res in run_results:
            kind = res["kind"]
            figure_seconds[kind] = figure_seconds.get(kind, 0.0) + res["seconds"]
            by_run.setdefault(str(run.directory), []).append(
                FigureResult(
                    kind=kind,
                    title=meta[kind].title,
                    caption=meta[kind].caption,
                    status=res["status"],
                    seconds=res["seconds"],
                    error=res["error"],
                    src=f"{FIGURE_DIR}/{kind}.png" if res["status"] == "ok" else None,
                    kept=bool(res.get("cached", False)),
                )
            )
    env = _env()
    pages: dict[str, Path] = {}
    rows = []
    figures_by_topic: dict[str, list[FigureResult]] = {}
    for run in runs:
        page = run.directory / PAGE_FILE
        index_href = _relative(out / INDEX_FILE, run.directory)
        figs = by_run.get(str(run.directory), [])
        atomic_write(
            page, env.get_template("run.html").render(**_run_context(run, figs, index_href))
        )
        pages[run.doc["topic"]] = page
        figures_by_topic[run.doc["topic"]] = figs
        rows.append(_index_row(run, _relative(page, out)))
    docs = [run.doc for run in runs]
    common = common_settings(docs)
    shared, differing = split_settings(docs)
    for row, own in zip(rows, differing):
        row["settings"] = describe_settings(own)
    index = out / INDEX_FILE
    atomic_write(
        index,
        env.get_template("index.html").render(
            rows=rows,
            settings=common,
            per_run_settings=common is None,
            shared_settings=describe_settings(shared),
            skipped=[{"path": str(s.path), "reason": s.reason} for s in skipped],
            versions=versions(),
            built=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            counts={
                v: sum(r["verdict"] == v for r in rows)
                for v in ("agree", "disagree", "inconclusive")
            },
        ),
    )
    return SiteResult(
        index=index,
        pages=pages,
        figures=figures_by_topic,
        seconds=time.perf_counter() - t0,
        figure_seconds=figure_seconds,
        skipped=skipped,
    )


def _relative(target: Path, start: Path) -> str:
    """``target`` relative to directory ``start``, with forward slashes."""
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()
