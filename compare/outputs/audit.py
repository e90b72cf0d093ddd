"""``bayes-compare audit``: every inference method against the exact answers.

The matrix topics x methods x seeds (:mod:`compare.core.methods`), each cell
one run of the topic on its default builtin data with that method and seed
(``Settings.seed + k`` for seed ``k``), saved like any run
(``<out>/cells/<topic>/<method>/seed-<k>/``, the atomic protocol of
:mod:`compare.outputs.document`). Cells run on Dask (a new ``LocalCluster``
by default, a user's scheduler with ``--scheduler``); each sends its files
back as bytes, so the cluster needs no shared file system. ``--resume`` keeps
every cell whose saved run has the same run key (code, data, settings,
packages) and runs the others.

A cell where the method does not apply is not run: it records why, from the
method and the topic's own declaration (a topic sampled by step methods has
discrete free variables, which gradient methods cannot take;
:meth:`compare.core.methods.Method.not_applicable`); a method whose packages
are missing records that. No topic is named here.

Every cell runs without the topics' extra comparisons (``extras=False``):
the audit is about the posterior each method gives, and the extras sample
their own models with nutpie.

Outputs, rewritten after every finished cell (so an interrupted audit shows
what it has):

- ``audit.json``: one row per cell (:data:`ROW_KEYS`);
- ``audit.md``: the table topics x methods (verdict for samplers, the mean
  error in exact posterior sds and the worst sd ratio for approximations);
- ``audit.html``: the same as a heat map, ESS per second per sampler, and a
  link to every cell's run page (``index.html`` in its folder).
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compare.core.checks import CheckKind
from compare.core.data import load_data
from compare.core.defaults import DEFAULT, Settings
from compare.core.files import atomic_write, versions
from compare.core.methods import APPROXIMATION, METHODS, Method
from compare.core.registry import InputError, Topic
from compare.core.text import template_env
from compare.outputs.document import (
    RESULT_FILE,
    run_files,
    save_run,
    save_run_files,
    to_document,
)
from compare.outputs.run_cache import reusable, run_key
from compare.topics import all_topics, get_topic

AUDIT_JSON = "audit.json"
AUDIT_MD = "audit.md"
AUDIT_PAGE = "audit.html"
CELLS = "cells"
FORMAT = 1

#: The keys of each row of ``audit.json`` (a public contract).
ROW_KEYS = (
    "topic",
    "method",
    "kind",
    "seed",
    "status",  # "ran", "reused", "n/a" or "failed"
    "reason",
    "verdict",
    "decided_by",
    "seconds",
    "min_ess",
    "ess_per_second",
    "divergences",
    "max_abs_z",
    "z_threshold",
    "max_abs_mean_error_sd",
    "worst_sd_ratio",
    "min_coverage90",
    "kl",
    "kl_se",
    "khat",
    "w2",
    "run",
    "vi_converged",  # ADVI: its loss had levelled off (None: not ADVI, or too few steps)
    "power_mean_shift_sd",  # the smallest mean shift (sds) caught with probability 0.9
)


@dataclass(frozen=True)
class Cell:
    topic: str
    method: str
    seed: int  # 0, 1, ...: the run's seed is DEFAULT.seed + seed

    def folder(self, out: Path) -> Path:
        return out / CELLS / self.topic / self.method / f"seed-{self.seed}"

    def settings(self) -> Settings:
        return dataclasses.replace(
            DEFAULT, method=self.method, seed=DEFAULT.seed + self.seed, extras=False
        )


def why_not(topic: Topic, method: Method) -> str | None:
    """Why ``method`` cannot run ``topic`` here, or None."""
    return method.missing() or method.not_applicable(discrete=topic.step is not None)


def _inputs(cell: Cell) -> tuple[Any, dict[str, Any], str, str]:
    topic = get_topic(cell.topic)
    values, dataset, source = load_data(topic, None, None, None, None, False)
    hyper = topic.hyper({}, dataset=dataset, parsed=False)
    key = run_key(topic=topic, data=values, hyper=hyper, settings=cell.settings())
    return values, hyper, source, key


def run_cell(cell: Cell, key: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """One cell on a Dask worker: (its document, its run files as bytes)."""
    from compare.core.runner import run  # heavy: PyMC and the methods, on the worker
    from compare.core.sampling import CACHE  # heavy: PyMC

    values, hyper, source, _ = _inputs(cell)
    result = run(
        get_topic(cell.topic), data=values, hyper=hyper, settings=cell.settings(), source=source
    )
    with tempfile.TemporaryDirectory(prefix="bayes-compare-audit-") as tmp:
        save_run(result, tmp, run_key=key)
        files = run_files(tmp)
    CACHE.clear()  # a cell's model is not needed by the next cell (another method or topic)
    return to_document(result), files


def row(cell: Cell, doc: dict[str, Any] | None, *, status: str, reason: str = "") -> dict:
    """The cell's row of ``audit.json`` (None where a figure does not apply)."""
    method = METHODS[cell.method]
    out: dict[str, Any] = dict.fromkeys(ROW_KEYS)
    out.update(
        topic=cell.topic,
        method=cell.method,
        kind=method.kind,
        seed=DEFAULT.seed + cell.seed,
        status=status,
        reason=reason,
    )
    if doc is None:
        return out
    timings = doc.get("timings") or {}
    mcmc = doc.get("mcmc") or {}
    ess = [e for e in (mcmc.get("ess_bulk") or []) if e is not None]
    sample_seconds = timings.get("sample") or 0.0
    checks = {c["name"]: c for c in doc.get("checks", [])}
    out.update(
        verdict=doc.get("verdict"),
        decided_by=doc.get("decided_by"),
        seconds=timings.get("total"),
        min_ess=min(ess) if ess else None,
        # Samplers only: an approximation's draws are iid, their ESS says nothing of it.
        ess_per_second=(
            min(ess) / sample_seconds
            if ess and sample_seconds > 0 and method.kind != APPROXIMATION
            else None
        ),
        divergences=mcmc.get("divergences"),
        run=str(Path(CELLS) / cell.topic / cell.method / f"seed-{cell.seed}"),
    )
    if CheckKind.AGREEMENT in checks:
        out.update(
            max_abs_z=checks[CheckKind.AGREEMENT]["statistic"],
            z_threshold=checks[CheckKind.AGREEMENT]["threshold"],
            power_mean_shift_sd=(doc.get("power") or {}).get("mean_shift_sd"),
        )
    approx = doc.get("approximation")
    if approx:
        out.update(
            max_abs_mean_error_sd=approx["max_abs_mean_error_sd"],
            worst_sd_ratio=approx["worst_sd_ratio"],
            min_coverage90=min(p["coverage90"] for p in approx["parameters"]),
            kl=approx["kl"],
            kl_se=approx["kl_se"],
            khat=approx["khat"],
            w2=approx["w2"],
            vi_converged=(approx.get("optimisation") or {}).get("converged"),
        )
    return out


@dataclass(frozen=True)
class AuditResult:
    rows: list[dict[str, Any]]
    out: Path
    seconds: float


def run_audit(
    *,
    topics: Sequence[str] | None,
    methods: Sequence[str] | None,
    seeds: int,
    out: str | Path,
    client: Any,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
    pages: bool = True,
) -> AuditResult:
    """Run (or resume) the audit matrix on ``client``'s cluster; write its outputs.

    Raises
    ------
    InputError
        An unknown topic or method, or ``seeds`` < 1; nothing is run then.
    """
    t0 = time.perf_counter()
    if not isinstance(seeds, int) or seeds < 1:
        raise InputError(f"--seeds must be a whole number >= 1, got {seeds!r}; e.g. --seeds 1")
    chosen_topics = [t.name for t in all_topics()] if not topics else list(topics)
    for name in chosen_topics:
        get_topic(name)  # unknown: InputError naming the choices
    chosen_methods = list(METHODS) if not methods else list(methods)
    unknown = [m for m in chosen_methods if m not in METHODS]
    if unknown:
        raise InputError(
            f"--methods {', '.join(unknown)}: not a method; choose from {', '.join(METHODS)}"
        )
    out = Path(out)
    cells = [
        Cell(t, m, k) for t in chosen_topics for m in chosen_methods for k in range(int(seeds))
    ]
    rows: dict[Cell, dict[str, Any]] = {}
    todo: list[tuple[Cell, str]] = []
    for cell in cells:
        reason = why_not(get_topic(cell.topic), METHODS[cell.method])
        if reason is not None:
            rows[cell] = row(cell, None, status="n/a", reason=reason)
            continue
        key = _inputs(cell)[3]
        saved = reusable(cell.folder(out), key) if resume else None
        if saved is not None:
            rows[cell] = row(cell, saved, status="reused")
        else:
            todo.append((cell, key))
    total = len(cells)
    write_outputs(out, cells, rows, pages=False)
    if progress:
        progress(len(rows), total)
    if todo:
        from distributed import as_completed  # heavy: Dask only when cells run

        futures = {
            client.submit(run_cell, cell, key, pure=False, key=f"audit-{cell}-{t0}"): cell
            for cell, key in todo
        }
        try:
            for future in as_completed(futures):
                cell = futures[future]
                try:
                    doc, files = future.result()
                except Exception as err:  # noqa: BLE001 - a failed cell is recorded, not a crash
                    rows[cell] = row(
                        cell, None, status="failed", reason=f"{type(err).__name__}: {err}"[:500]
                    )
                else:
                    save_run_files(cell.folder(out), files)
                    rows[cell] = row(cell, doc, status="ran")
                future.release()
                write_outputs(out, cells, rows, pages=False)
                if progress:
                    progress(len(rows), total)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    write_outputs(out, cells, rows, pages=pages, seconds=time.perf_counter() - t0)
    return AuditResult(rows=[rows[c] for c in cells], out=out, seconds=time.perf_counter() - t0)


# --- outputs ---------------------------------------------------------------------------
def write_outputs(
    out: Path,
    cells: Sequence[Cell],
    rows: dict[Cell, dict[str, Any]],
    *,
    pages: bool,
    seconds: float | None = None,
) -> None:
    """``audit.json``, ``audit.md`` and (``pages``) ``audit.html`` plus the cells' run pages.

    ``seconds``: the whole audit's wall time, once it is done (``wall_seconds``).
    """
    done = [rows[c] for c in cells if c in rows]
    doc = {
        "format": FORMAT,
        "cells": len(cells),
        "done": len(done),
        "wall_seconds": None if seconds is None else round(seconds, 1),
        "rows": done,
        "versions": versions(),
    }
    atomic_write(out / AUDIT_JSON, json.dumps(doc, indent=2, allow_nan=False) + "\n")
    atomic_write(out / AUDIT_MD, markdown(done))
    if pages:
        ran = [r for r in done if r["run"] and (out / r["run"] / RESULT_FILE).is_file()]
        if ran:
            from compare.outputs.report import build_site  # heavy: the report's pages

            build_site([out / r["run"] for r in ran], out / CELLS, kinds=(), warn=lambda _: None)
        atomic_write(out / AUDIT_PAGE, page(done))


def cell_text(r: dict[str, Any]) -> str:
    """What a table cell shows for one row."""
    if r["status"] == "n/a":
        return "n/a"
    if r["status"] == "failed":
        return "failed"
    if r["kind"] == APPROXIMATION:
        unfinished = ", unfinished" if r.get("vi_converged") is False else ""
        return f"{r['max_abs_mean_error_sd']:.2f} sd, x{r['worst_sd_ratio']:.2f}{unfinished}"
    return f"{r['verdict']}"


def _table(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[str], dict]:
    topics = list(dict.fromkeys(r["topic"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["topic"], r["method"]), []).append(r)
    return topics, methods, by


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The audit table: samplers' verdicts; approximations' worst mean error and sd ratio."""
    topics, methods, by = _table(rows)
    lines = [
        "| topic | " + " | ".join(methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    for t in topics:
        cells = []
        for m in methods:
            found = by.get((t, m), [])
            cells.append("; ".join(cell_text(r) for r in found) if found else "")
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Samplers: the calibrated verdict. Approximations: the largest |mean error| in "
        "exact posterior sds and the sd ratio farthest from 1 (x1.00 is right); unfinished: "
        "ADVI's loss was still falling at its last step. n/a: the "
        "method does not apply (see audit.json's reason)."
    )
    per_method = []
    for m in methods:
        rates = [r["ess_per_second"] for r in rows if r["method"] == m and r["ess_per_second"]]
        times = [r["seconds"] for r in rows if r["method"] == m and r["seconds"]]
        if times:
            per_method.append(
                f"| {m} | {statistics.median(times):.1f} | "
                + (f"{statistics.median(rates):.0f}" if rates else "")
                + " |"
            )
    if per_method:
        lines += [
            "",
            "| method | median seconds per run | median min-ESS per second of sampling |",
            "|---|---|---|",
            *per_method,
        ]
    return "\n".join(lines) + "\n"


def _colour(r: dict[str, Any]) -> str:
    if r["status"] in ("n/a", "failed"):
        return "#e5e5e5"
    if r["kind"] == APPROXIMATION:
        # 0 sd: green; 1 sd or more: red, on the worse of the mean error and the sd error.
        badness = max(r["max_abs_mean_error_sd"] or 0.0, abs((r["worst_sd_ratio"] or 1.0) - 1))
        share = min(1.0, badness)
        return f"hsl({120 * (1 - share):.0f}, 65%, 75%)"
    return {"agree": "#b7e4b9", "disagree": "#f3b0ad", "inconclusive": "#f7dc9c"}.get(
        str(r["verdict"]), "#e5e5e5"
    )


def page(rows: Sequence[dict[str, Any]]) -> str:
    """``audit.html``: the heat map, ESS per second per sampler, links to every cell."""
    topics, methods, by = _table(rows)
    grid = [
        {
            "topic": t,
            "cells": [
                [
                    {
                        "text": cell_text(r),
                        "colour": _colour(r),
                        "href": f"{r['run']}/index.html" if r["run"] else None,
                        "title": r["reason"] or f"{r['decided_by']}; {r['seconds']:.1f} s"
                        if r["seconds"] is not None
                        else r["reason"],
                    }
                    for r in by.get((t, m), [])
                ]
                for m in methods
            ],
        }
        for t in topics
    ]
    rates = {}
    for m in methods:
        found = [r["ess_per_second"] for r in rows if r["method"] == m and r["ess_per_second"]]
        if found and METHODS[m].kind != APPROXIMATION:
            rates[m] = statistics.median(found)
    top = max(rates.values(), default=1.0)
    bars = [
        {"method": m, "rate": f"{v:.0f}", "width": f"{60 * v / top:.1f}"} for m, v in rates.items()
    ]
    return (
        template_env()
        .get_template("audit.html")
        .render(methods=methods, grid=grid, bars=bars, n=len(rows))
    )
