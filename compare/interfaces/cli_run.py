"""``bayes-compare run``, ``evidence``, ``summary``, ``report`` and ``cache``;
importing this module registers every other command too (``list`` and
``describe`` first, so ``--help`` lists them first).

The exit codes and the handling of bad input and crashes are
:func:`compare.interfaces.cli.main`'s (the program's entry point).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

import compare.topics
from compare.accel.compiled_cache import cache_dir
from compare.accel.compiled_cache import clear as clear_compiled
from compare.accel.quick_exit import spawn_context
from compare.core import defaults
from compare.core.checks import decided_text
from compare.core.cluster import check_scheduler
from compare.core.data import load_data
from compare.core.defaults import Settings
from compare.core.files import DRAWS_FILE, RESULT_FILE, atomic_write, dumps
from compare.core.methods import usable
from compare.core.registry import REGISTRY
from compare.core.text import check_lines
from compare.interfaces import cli_topics  # noqa: F401  (list and describe, first in --help)
from compare.interfaces.cli_common import (
    EXIT_AGREE,
    EXIT_DISAGREE,
    EXIT_INCONCLUSIVE,
    BadInput,
    ChainsOpt,
    ColumnOpt,
    DataOpt,
    DrawsOpt,
    FeaturesOpt,
    JsonOpt,
    SchedulerOpt,
    SeedOpt,
    SetOpt,
    TargetOpt,
    TopicFileOpt,
    TuneOpt,
    WorkerOpt,
    app,
    check_out_dir,
    check_out_file,
    checked_file,
    err,
    load_topic_files,
    make_console,
    make_settings,
    output_console,
    parse_degrees,
    parse_sets,
)
from compare.outputs import document
from compare.outputs.document import (
    _clean,
    check_room,
    estimate_run_bytes,
    recover_run,
    run_dirs_under,
    save_run,
    summary_markdown,
    to_document,
)
from compare.outputs.run_cache import reusable, run_key

if TYPE_CHECKING:
    from compare.core.runner import RunResult


def _cell(v: Any, spec: str = ".4g") -> str:
    """A table cell: n/a for missing; an infinite moment shows as inf."""
    try:
        return "n/a" if v is None else format(v, spec)
    except (TypeError, ValueError):
        return str(v)


def _print_result(result: RunResult, out: Console) -> None:
    post = result.exact.posterior
    mcmc = result.mcmc
    exact_sd = np.sqrt(np.diag(post.cov))
    table = Table(title=f"{result.topic} on {result.data_source} (n={result.n})")
    for col in (
        "parameter",
        "exact mean",
        "exact sd",
        "MCMC mean",
        "MCMC sd",
        "MCSE",
        "z",
        "R-hat",
        "ESS bulk",
        "ESS tail",
    ):
        table.add_column(col, justify="left" if col == "parameter" else "right")
    for i, name in enumerate(result.parameters):
        z = (mcmc.mean[i] - post.mean[i]) / mcmc.mcse_mean[i]
        z = z if np.isfinite(z) else None  # no finite exact mean: nothing to compare
        table.add_row(
            escape(name),
            _cell(post.mean[i]),
            _cell(exact_sd[i]),
            _cell(mcmc.mean[i]),
            _cell(mcmc.sd[i]),
            _cell(mcmc.mcse_mean[i], ".2g"),
            _cell(z, "+.2f"),
            _cell(mcmc.rhat[i], ".4f"),
            _cell(mcmc.ess_bulk[i], ".0f"),
            _cell(mcmc.ess_tail[i], ".0f"),
        )
    out.print(table)
    for line in result.extra.lines:
        out.print(line, markup=False)
    out.print("\n".join(check_lines(result)), markup=False)
    out.print(
        _verdict_line(
            result.verdict, result.decided_by, result.exact.log_evidence, result.also_failed
        )
        + f"; {result.timings['total']:.2f} s"
    )


def _verdict_line(
    verdict: str, decided_by: Any, log_evidence: float | None, also_failed: Any = ()
) -> str:
    """``verdict: AGREE (decided by ...); log evidence ...`` in the verdict's colour;
    ``also_failed`` names the other failed checks."""
    colour = {"agree": "green", "disagree": "red", "inconclusive": "yellow"}.get(verdict, "white")
    evidence = "n/a" if log_evidence is None else f"{log_evidence:.6g}"
    return (
        f"verdict: [bold {colour}]{verdict.upper()}[/bold {colour}] "
        f"({escape(decided_text(decided_by, also_failed or ()))}); log evidence {evidence}"
    )


@dataclasses.dataclass(frozen=True)
class _Outcome:
    """What ``run`` reports of one topic: its verdict and its JSON document."""

    verdict: str
    doc: dict[str, Any]
    reused: bool

    @property
    def exit_code(self) -> int:
        return {"agree": EXIT_AGREE, "disagree": EXIT_DISAGREE}.get(self.verdict, EXIT_INCONCLUSIVE)


#: Keys that only a saved result.json has; ``--json`` prints the run's document without them.
_SAVED_ONLY = ("files", "run_key")


def _reused(doc: dict[str, Any], out_dir: Path, out: Console) -> _Outcome:
    """Print a saved run's verdict instead of running it again; its outcome."""
    out.print(
        f"[bold]{escape(str(doc['topic']))}[/bold]: reused the saved run in "
        f"{escape(str(out_dir))} (same code, data, settings and packages; --force resamples)"
    )
    evidence = (doc.get("exact") or {}).get("log_evidence")
    out.print(
        _verdict_line(str(doc["verdict"]), doc.get("decided_by"), evidence, doc.get("also_failed"))
    )
    doc = {k: v for k, v in doc.items() if k not in _SAVED_ONLY}
    return _Outcome(verdict=str(doc["verdict"]), doc=doc, reused=True)


def _saved_builtin_run(
    topic_name: str, settings: Settings, out_dir: Path, out: Console
) -> _Outcome | None:
    """``run --all``: the topic's saved run on its builtin data, printed, if still valid."""
    key = _prepared(topic_name, None, None, {}, settings).key
    saved = None if key is None else reusable(out_dir, key)
    return None if saved is None else _reused(saved, out_dir, out)


@dataclasses.dataclass(frozen=True)
class _Prepared:
    """A run's inputs, read and checked in the command's process (before any compile)."""

    topic: str
    data: Any
    hyper: dict[str, Any]
    source: str
    key: str | None  # None: streamed data, read in one pass while running (no content to key)


def _prepared(
    topic_name: str,
    data: str | None,
    column: str | None,
    sets: dict[str, str],
    settings: Settings,
    target: str | None = None,
    features: str | None = None,
    stream: bool = False,
) -> _Prepared:
    topic = compare.topics.get_topic(topic_name)
    values, dataset, source = load_data(topic, data, column, target, features, stream)
    hyper = topic.hyper(sets, dataset=dataset, parsed=False)
    key = None if stream else run_key(topic=topic, data=values, hyper=hyper, settings=settings)
    return _Prepared(topic=topic.name, data=values, hyper=hyper, source=source, key=key)


def _run_unit(
    job: _Prepared,
    settings: Settings,
    topic_files: list[str] | None,
    console: dict[str, Any],
    keep_models: bool,
) -> tuple[str, dict[str, Any], dict[str, bytes]]:
    """One run on a Dask worker: (its printed text, its document, its saved files' bytes).

    Nothing is written where the worker runs but a temporary folder: the
    command writes the files where it was asked (:func:`document.save_run_files`),
    so no shared file system is needed. ``keep_models``: the local worker keeps
    the compiled model warm for the next command; a user's cluster releases it.
    """
    from compare.core.runner import run  # heavy: ArviZ, xarray and SciPy, on the worker
    from compare.core.sampling import CACHE  # heavy: PyMC, on the worker

    load_topic_files([Path(f) for f in topic_files] if topic_files else None)
    topic = compare.topics.get_topic(job.topic)
    buffer = io.StringIO()
    result = run(topic, data=job.data, hyper=job.hyper, settings=settings, source=job.source)
    _print_result(result, Console(file=buffer, **console))
    with tempfile.TemporaryDirectory(prefix="bayes-compare-unit-") as tmp:
        save_run(result, tmp, run_key=job.key)
        files = document.run_files(tmp)
    doc = to_document(result)
    del result
    if not keep_models:  # release the model and draws before the worker's next unit
        CACHE.clear()
        gc.collect()  # 0.3 s with PyMC loaded: not paid by the local worker's units
    return buffer.getvalue(), doc, files


@dataclasses.dataclass
class _Cluster:
    """Where a command's runs go when not in its own process: a Dask client and its name."""

    client: Any
    name: str
    keep_models: bool
    cluster: Any = None

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a cluster gone already: nothing to close
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()


def _open_cluster(scheduler: str | None, use_worker: bool) -> _Cluster | None:
    """The user's scheduler, else the running local worker (unless ``--no-worker``), else None."""
    if scheduler is not None:
        from compare.core.cluster import connect  # heavy: Dask only when a cluster runs

        client, _ = connect(workers=None, scheduler=scheduler)
        return _Cluster(client=client, name=f"scheduler {scheduler}", keep_models=False)
    if not use_worker:
        return None
    from compare.interfaces.worker import client_for_commands  # Dask only if a worker runs

    found = client_for_commands()
    if found is None:
        return None
    client, local = found
    return _Cluster(client=client, name=f"the local worker (pid {local.pid})", keep_models=True)


def _console_style(console: Console) -> dict[str, Any]:
    return {
        "force_terminal": console.is_terminal,
        "color_system": console.color_system,
        "width": console.width,
        "no_color": console.no_color,
    }


def _absolute(topic_files: list[Path] | None) -> list[str] | None:
    return [str(Path(f).resolve()) for f in topic_files] if topic_files else None


def _run_one(
    topic_name: str,
    *,
    data: str | None,
    column: str | None,
    sets: dict[str, str],
    settings: Settings,
    json_path: str | None,
    out_dir: Path,
    out: Console,
    target: str | None = None,
    features: str | None = None,
    stream: bool = False,
    force: bool = False,
    status: bool = True,
    cluster: _Cluster | None = None,
    topic_files: list[Path] | None = None,
    job: _Prepared | None = None,
) -> _Outcome:
    if job is None:
        job = _prepared(topic_name, data, column, sets, settings, target, features, stream)
    saved = None if force or job.key is None else reusable(out_dir, job.key)
    if saved is not None:
        doc = _reused(saved, out_dir, out).doc
    elif cluster is not None and not stream:
        # Refuse a folder without room for the draws before sending the run away.
        check_room(out_dir, estimate_run_bytes(chains=settings.chains, draws=settings.draws))
        waiting = (
            err.status(f"{job.topic}: running on {cluster.name}")
            if status
            else contextlib.nullcontext()
        )
        with waiting:
            future = cluster.client.submit(
                _run_unit,
                job,
                settings,
                _absolute(topic_files),
                _console_style(out),
                cluster.keep_models,
                pure=False,
            )
            text, doc, files = future.result()
        out.file.write(text)
        out.file.flush()
        document.save_run_files(out_dir, files)
    else:
        from compare.core.runner import run  # heavy: ArviZ, xarray and scipy only when running

        topic = compare.topics.get_topic(job.topic)
        # Refuse a folder without room for the draws before compiling and sampling
        # (compare/outputs/document.py; save_run checks again with the exact size).
        check_room(out_dir, estimate_run_bytes(chains=settings.chains, draws=settings.draws))
        spinner = err.status(f"{topic.name}: starting") if status else contextlib.nullcontext()
        with spinner as shown:

            def on_stage(stage: str) -> None:
                text = {
                    "compiling": "compiling the PyMC model with nutpie (or loading it)",
                    "sampling": f"sampling {settings.chains} chains x {settings.draws} draws",
                    "checking": "checking convergence, agreement and MAP",
                }[stage]
                if shown is not None:
                    shown.update(f"{topic.name}: {text}")

            result = run(
                topic,
                data=job.data,
                hyper=job.hyper,
                settings=settings,
                source=job.source,
                on_stage=on_stage,
            )
        _print_result(result, out)
        save_run(result, out_dir, run_key=job.key)
        doc = to_document(result)
    if json_path == "-":
        sys.stdout.write(dumps(doc))
        sys.stdout.flush()
    elif json_path is not None:
        atomic_write(json_path, dumps(doc))
    return _Outcome(verdict=str(doc["verdict"]), doc=doc, reused=saved is not None)


def _run_task(
    topic_name: str,
    settings: Settings,
    out_dir: str,
    force: bool,
    topic_files: list[Path] | None,
    console: dict[str, Any],
) -> tuple[str, _Outcome]:
    """One topic of ``run --all`` in a worker process: (its printed text, outcome)."""
    from compare.core.sampling import CACHE  # heavy: PyMC, only in a worker that runs

    load_topic_files(topic_files)
    buffer = io.StringIO()
    out = Console(file=buffer, **console)
    outcome = _run_one(
        topic_name,
        data=None,
        column=None,
        sets={},
        settings=settings,
        json_path=None,
        out_dir=Path(out_dir),
        out=out,
        force=force,
        status=False,
    )
    # Release the topic's compiled models and draws before the worker's next topic.
    CACHE.clear()
    gc.collect()
    return buffer.getvalue(), outcome


def _measured_cost(out_dir: Path) -> float:
    """Seconds the topic's saved run took (its ``timings.total``), else what the topic
    declares a first run costs (``Topic.cold_seconds``), else 0."""
    try:
        doc = json.loads((out_dir / RESULT_FILE).read_text(encoding="utf-8"))
        return float(doc["timings"]["total"])
    except (OSError, ValueError, KeyError, TypeError):
        topic = REGISTRY.get(out_dir.name)
        return 0.0 if topic is None else topic.cold_seconds


def _run_all(
    *,
    settings: Settings,
    base: Path,
    console: Console,
    json_lines: bool,
    force: bool,
    workers: int,
    topic_files: list[Path] | None,
    cluster: _Cluster | None = None,
    names: list[str] | None = None,
) -> list[str]:
    """Every topic on its builtin data, ``workers`` processes at a time; the verdicts in order.

    Topics start longest first (by the time their saved run took, or for a
    first run what the topic declares, ``Topic.cold_seconds``), so the
    last to finish is a short one; each is printed, in catalogue order, as
    soon as it and the ones before it are done. Saved runs that are still
    valid are found here first: no worker is started for them. With a
    ``cluster`` (a user's scheduler or the local worker), the topics run
    there instead of in ``workers`` new processes, and their files come back
    as bytes (:func:`_run_unit`). ``names``: these topics only (default all).
    """
    names = [t.name for t in compare.topics.all_topics()] if names is None else names
    outcomes: dict[str, _Outcome] = {}
    shown = 0

    def show_ready(texts: dict[str, str]) -> None:
        nonlocal shown
        while shown < len(names) and names[shown] in outcomes:
            name = names[shown]
            if name in texts:  # a worker's output, as this console would have printed it
                console.file.write(texts[name])
                console.file.flush()
            if json_lines:
                doc = outcomes[name].doc
                sys.stdout.write(json.dumps(doc, allow_nan=False) + "\n")
                sys.stdout.flush()
            shown += 1

    if workers <= 1 and cluster is None:
        for name in names:
            outcomes[name] = _run_one(
                name,
                data=None,
                column=None,
                sets={},
                settings=settings,
                json_path=None,
                out_dir=base / name,
                out=console,
                force=force,
            )
            show_ready({})
        return [outcomes[n].verdict for n in names]

    if not force:
        for name in names:
            found = _saved_builtin_run(name, settings, base / name, console)
            if found is not None:
                outcomes[name] = found
        show_ready({})
    todo = [n for n in names if n not in outcomes]
    if not todo:
        return [outcomes[n].verdict for n in names]
    order = sorted(todo, key=lambda n: -_measured_cost(base / n))
    style = _console_style(console)
    texts: dict[str, str] = {}
    where = cluster.name if cluster is not None else f"{workers} workers"

    def done(name: str, text: str, outcome: _Outcome) -> None:
        texts[name], outcomes[name] = text, outcome
        status.update(f"run --all: {len(outcomes)}/{len(names)} topics done ({where})")
        show_ready(texts)

    with err.status(f"run --all: {len(outcomes)}/{len(names)} topics done ({where})") as status:
        if cluster is not None:
            from distributed import as_completed as finished  # heavy: Dask, a cluster runs

            check_room(
                base,
                len(order) * estimate_run_bytes(chains=settings.chains, draws=settings.draws),
            )
            jobs = {name: _prepared(name, None, None, {}, settings) for name in order}
            futures = {
                cluster.client.submit(
                    _run_unit,
                    jobs[name],
                    settings,
                    _absolute(topic_files),
                    style,
                    cluster.keep_models,
                    pure=False,
                ): name
                for name in order
            }
            try:
                for future in finished(futures):
                    name = futures[future]
                    text, doc, files = future.result()
                    future.release()
                    document.save_run_files(base / name, files)
                    done(name, text, _Outcome(verdict=str(doc["verdict"]), doc=doc, reused=False))
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
            return [outcomes[n].verdict for n in names]
        # spawn: a fresh interpreter per worker (fork after PyTensor/numba state is unsafe).
        # Each ends without the interpreter's teardown, which the pool would wait for.
        context = spawn_context()
        with ProcessPoolExecutor(max_workers=min(workers, len(order)), mp_context=context) as pool:
            # force=True: this process has just found no valid saved run for these.
            pending = {
                pool.submit(
                    _run_task, name, settings, str(base / name), True, topic_files, style
                ): name
                for name in order
            }
            for future in as_completed(pending):
                done(pending[future], *future.result())
    return [outcomes[n].verdict for n in names]


@app.command("run")
def run_command(
    topic: Annotated[str | None, typer.Argument(help="topic name (see `list`)")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="run every topic on its default builtin data")
    ] = False,
    data: DataOpt = None,
    column: ColumnOpt = None,
    target: TargetOpt = None,
    features: FeaturesOpt = None,
    stream: Annotated[
        bool,
        typer.Option(
            help="regression: read the CSV in chunks, one pass, bounded memory (automatic above 256 MiB)"
        ),
    ] = False,
    set_: SetOpt = None,
    sizes: Annotated[
        str | None,
        typer.Option(
            help="topics with a Laplace-error sweep: its rows, e.g. 20,50,100,200 (<= 1: shares of the rows); same as --set sizes=..."
        ),
    ] = None,
    draws: DrawsOpt = None,
    chains: ChainsOpt = None,
    tune: TuneOpt = None,
    seed: SeedOpt = None,
    alpha: Annotated[
        float | None, typer.Option(help="family-wise false-alarm rate of the agreement test")
    ] = None,
    json_path: JsonOpt = None,
    out: Annotated[
        str | None,
        typer.Option(
            help="directory for draws and result.json "
            "(default reports/runs/<topic>/; with --all, the parent)"
        ),
    ] = None,
    topic_file: TopicFileOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="sample again even if --out holds a run of the same code, data, settings and packages",
        ),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            help="with --all: topics run in this many new processes at once (1: in this one; "
            "default 2, or the local worker when one runs)"
        ),
    ] = None,
    scheduler: SchedulerOpt = None,
    use_worker: WorkerOpt = True,
    method: Annotated[
        str | None,
        typer.Option(
            help="inference method: nutpie (default), pymc, numpyro, blackjax, smc "
            "(samplers); advi, fullrank-advi, pathfinder, laplace (approximations)"
        ),
    ] = None,
    tolerance_sd: Annotated[
        float | None,
        typer.Option(help="approximations: largest mean error, in exact posterior sds (0.1)"),
    ] = None,
    tolerance_sd_ratio: Annotated[
        float | None,
        typer.Option(help="approximations: largest relative error of a posterior sd (0.1)"),
    ] = None,
    vi_steps: Annotated[
        int | None,
        typer.Option(help="advi, fullrank-advi: optimisation steps (20000)"),
    ] = None,
) -> None:
    """Run the exact and the MCMC posterior side by side and give a verdict."""
    if workers is not None and workers < 1:
        raise BadInput(f"--workers must be >= 1, got {workers}; 1 runs the topics one by one")
    if workers is not None and scheduler is not None:
        raise BadInput(
            f"give --workers {workers} (new local processes) or --scheduler {scheduler} "
            "(an existing Dask cluster), not both"
        )
    if scheduler is not None:
        check_scheduler(scheduler)
    if method is not None:
        usable(method)  # bad input (exit 3) before anything is compiled
    settings = make_settings(
        draws=draws,
        chains=chains,
        tune=tune,
        seed=seed,
        alpha=alpha,
        method=method,
        tolerance_sd=tolerance_sd,
        tolerance_sd_ratio=tolerance_sd_ratio,
        vi_steps=vi_steps,
    )
    sets = parse_sets(set_)
    if sizes is not None:
        if "sizes" in sets:
            raise BadInput("give the sweep once: --sizes or --set sizes=..., not both")
        sets["sizes"] = sizes
    check_out_file(json_path, "--json")
    check_out_dir(out, "--out")
    if out is None:
        check_out_dir("reports/runs", "the default --out")
    load_topic_files(topic_file)
    console = output_console(json_path == "-")
    if all_:
        if (
            topic is not None
            or data is not None
            or column is not None
            or sets
            or target is not None
            or features is not None
            or stream
        ):
            raise BadInput(
                "--all runs every topic on its builtin data; it takes no TOPIC, "
                "--data, --column, --target, --features, --stream, --set or --sizes"
            )
        if json_path not in (None, "-"):
            raise BadInput(
                "with --all, --json takes only '-' (one JSON document per line); "
                "each run's JSON is saved under --out"
            )
        # Explicit --workers N means N new processes here, not the local worker.
        cluster = _open_cluster(scheduler, use_worker and workers is None)
        try:
            verdicts = _run_all(
                settings=settings,
                base=Path(out or "reports/runs"),
                console=console,
                json_lines=json_path == "-",
                force=force,
                workers=2 if workers is None else workers,
                topic_files=topic_file,
                cluster=cluster,
            )
        finally:
            if cluster is not None:
                cluster.close()
        code = (
            EXIT_DISAGREE
            if "disagree" in verdicts
            else EXIT_INCONCLUSIVE
            if "inconclusive" in verdicts
            else EXIT_AGREE
        )
        raise typer.Exit(code)
    if topic is None:
        raise BadInput("give a TOPIC (see `bayes-compare list`) or --all")
    if sizes is not None:
        known = REGISTRY.get(topic)
        if known is not None and "sizes" not in {h.name for h in known.hyperparameters}:
            having = [
                t.name
                for t in compare.topics.all_topics()
                if "sizes" in {h.name for h in t.hyperparameters}
            ]
            raise BadInput(
                f"--sizes {sizes}: {topic} has no size sweep; it is the "
                f"Laplace-error sweep of {', '.join(having)}"
            )
    out_dir = Path(out) if out is not None else Path("reports/runs") / topic
    job = _prepared(topic, data, column, sets, settings, target, features, stream)
    # A saved run to reuse, or streamed data (read here, in one pass): no cluster needed.
    reuse = job.key is not None and not force and reusable(out_dir, job.key) is not None
    cluster = None if reuse or stream else _open_cluster(scheduler, use_worker)
    try:
        result = _run_one(
            topic,
            data=data,
            column=column,
            sets=sets,
            settings=settings,
            json_path=json_path,
            out_dir=out_dir,
            out=console,
            target=target,
            features=features,
            stream=stream,
            force=force,
            cluster=cluster,
            topic_files=topic_file,
            job=job,
        )
    finally:
        if cluster is not None:
            cluster.close()
    raise typer.Exit(result.exit_code)


@app.command()
def evidence(
    topic: Annotated[
        str, typer.Argument(help="a regression topic with a polynomial degree (see `list`)")
    ],
    degrees: Annotated[
        str, typer.Option(help="polynomial degrees: a range 0-9 or a list 0,3,9")
    ] = "0-9",
    data: DataOpt = None,
    target: TargetOpt = None,
    features: Annotated[str | None, typer.Option(help="the one input column")] = None,
    set_: SetOpt = None,
    smc_degrees: Annotated[
        str | None,
        typer.Option(
            help="degrees to check with pm.sample_smc "
            "(default: smallest, best, largest; 'none' to skip)"
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="random seed for SMC")] = None,
    json_path: Annotated[
        str | None, typer.Option("--json", help="write the table as JSON to PATH, or - for stdout")
    ] = None,
) -> None:
    """Exact log evidence per polynomial degree: which degree do the data support?"""
    from compare.topics import _regression as regression  # heavy: scipy, xarray, ArviZ

    settings = make_settings(seed=seed)
    check_out_file(json_path, "--json")
    t = compare.topics.get_topic(topic)
    if t.data_kind != "table" or "degree" not in {h.name for h in t.hyperparameters}:
        having = [
            u.name
            for u in compare.topics.all_topics()
            if u.data_kind == "table" and "degree" in {h.name for h in u.hyperparameters}
        ]
        raise BadInput(
            f"{topic} has no polynomial degree; evidence tables are for {' and '.join(having)}"
        )
    wanted = parse_degrees(degrees, "--degrees")
    smc = None
    if smc_degrees is not None:
        smc = (
            []
            if smc_degrees.strip().lower() == "none"
            else parse_degrees(smc_degrees, "--smc-degrees")
        )
        outside = sorted(set(smc) - set(wanted))
        if outside:
            raise BadInput(
                f"--smc-degrees {smc_degrees!r}: degree(s) "
                f"{', '.join(map(str, outside))} are not in --degrees {degrees!r}; "
                "check only degrees of the table"
            )
        if not smc and seed is not None:
            raise BadInput(
                f"--seed {seed} seeds SMC, and --smc-degrees none runs no SMC; drop --seed"
            )
    sets = parse_sets(set_)
    if "degree" in sets:
        raise BadInput(
            f"--set degree={sets['degree']}: the evidence table sweeps the degree; "
            "choose the degrees with --degrees, not --set degree"
        )
    table, dataset, source = load_data(t, data, None, target, features)
    hyper = t.hyper(sets, dataset=dataset, parsed=False)
    with err.status(f"{t.name}: exact evidence for {len(wanted)} degrees, SMC for some"):
        rows = regression.evidence_table(
            t, table, hyper, wanted, smc_degrees=smc, settings=settings
        )
    best = max(rows, key=lambda r: r.log_evidence)
    out = output_console(json_path == "-")
    view = Table(title=f"{t.name}: log evidence by polynomial degree on {source} (n={table.n})")
    for col in (
        "degree",
        "features",
        "log evidence",
        "vs best",
        "train RMSE (MLE)",
        "MLE unique",
        "SMC log evidence",
    ):
        view.add_column(col, justify="right")
    for r in rows:
        smc_text = "" if r.smc_mean is None else f"{r.smc_mean:.2f} +- {r.smc_sd:.2f}"
        view.add_row(
            str(r.degree),
            str(r.n_features),
            f"{r.log_evidence:.3f}",
            f"{r.log_evidence - best.log_evidence:+.2f}",
            f"{r.train_rmse:.4f}",
            "yes" if r.mle_unique else "no",
            smc_text,
            style="bold" if r is best else None,
        )
    out.print(view)
    out.print(
        f"chosen degree: {best.degree} (highest exact evidence). The MLE training error "
        "keeps falling with the degree; the evidence penalises the extra flexibility."
    )
    if json_path is not None:
        doc = _clean(
            {
                "topic": t.name,
                "data": {"source": source, "n": table.n},
                "hyperparameters": {k: v for k, v in hyper.items() if k != "degree"},
                "chosen_degree": best.degree,
                "rows": [dataclasses.asdict(r) for r in rows],
            }
        )
        if json_path == "-":
            sys.stdout.write(dumps(doc))
        else:
            atomic_write(json_path, dumps(doc))


@app.command()
def summary(
    runs: Annotated[Path, typer.Option(help="directory holding <topic>/result.json")] = Path(
        "reports/runs"
    ),
    out: Annotated[
        Path,
        typer.Option(
            help="where to write the Markdown table", callback=lambda v: checked_file(v, "--out")
        ),
    ] = Path("reports/summary.md"),
) -> None:
    """Write a Markdown table with one row per saved run."""
    dirs = run_dirs_under(runs)
    if not dirs:
        raise BadInput(f"no runs under {str(runs)!r}; run `bayes-compare run --all` first")
    loaded, skipped = document.load_runs(
        dirs,
        need_draws=False,
        warn=lambda line: err.print(f"warning: {line}", markup=False, soft_wrap=True),
    )
    docs = [run.doc for run in loaded]
    order = {t.name: i for i, t in enumerate(compare.topics.all_topics())}
    docs.sort(key=lambda d: (order.get(d["topic"], len(order)), d["topic"]))
    atomic_write(out, summary_markdown(docs, skipped=skipped))
    make_console().print(
        f"wrote {out} ({len(docs)} runs" + (f", {len(skipped)} skipped)" if skipped else ")")
    )


@app.command()
def report(
    topics: Annotated[
        list[str] | None, typer.Argument(help="topics to include (default: every topic)")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="every registered topic")] = False,
    out: Annotated[str, typer.Option(help="where index.html goes")] = "reports",
    runs: Annotated[
        str | None, typer.Option(help="saved runs, <runs>/<topic>/ (default OUT/runs)")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="new processes drawing figures and running missing topics "
            "(default: cores, at most 4, or the local worker when one runs)"
        ),
    ] = None,
    topic_file: TopicFileOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="draw every figure again (by default unchanged runs keep theirs)"
        ),
    ] = False,
    scheduler: SchedulerOpt = None,
    use_worker: WorkerOpt = True,
) -> None:
    """Build the HTML report from saved runs, running the topics that have none."""
    from compare.outputs.report import build_site  # heavy: xarray, Jinja2, the figures

    if topics and all_:
        raise BadInput("give TOPIC names or --all, not both")
    if workers is not None and workers < 1:
        raise BadInput(f"--workers must be >= 1, got {workers}")
    if workers is not None and scheduler is not None:
        raise BadInput(
            f"give --workers {workers} (new local processes) or --scheduler {scheduler} "
            "(an existing Dask cluster), not both"
        )
    if scheduler is not None:
        check_scheduler(scheduler)
    check_out_dir(out, "--out")
    check_out_dir(runs, "--runs")
    load_topic_files(topic_file)
    chosen = (
        [compare.topics.get_topic(t) for t in topics] if topics else compare.topics.all_topics()
    )
    out_dir = Path(out)
    runs_dir = Path(runs) if runs is not None else out_dir / "runs"
    check_out_dir(runs_dir, "--runs")
    console = make_console()
    missing = []
    for t in chosen:
        run_dir = runs_dir / t.name
        # A save killed after its commit (compare/outputs/document.py): finish it, do not
        # rerun.  A folder it cannot read is named by build_site.
        with contextlib.suppress(OSError):
            recover_run(run_dir)
        if not ((run_dir / RESULT_FILE).is_file() and (run_dir / DRAWS_FILE).is_file()):
            console.print(f"{t.name}: no saved run under {run_dir}; running it on its default data")
            missing.append(t.name)
    cluster = _open_cluster(scheduler, use_worker and workers is None)
    try:
        if missing:
            _run_all(
                settings=defaults.DEFAULT,
                base=runs_dir,
                console=console,
                json_lines=False,
                force=True,
                workers=1 if workers is None else workers,
                topic_files=topic_file,
                cluster=cluster,
                names=missing,
            )
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task("drawing figures", total=None)
            site = build_site(
                [runs_dir / t.name for t in chosen],
                out_dir,
                workers=workers,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
                force=force,
                client=None if cluster is None else cluster.client,
            )
    finally:
        if cluster is not None:
            cluster.close()
    for topic, kind in site.failed_figures:
        err.print(f"warning: {topic}: the {kind} figure failed; its page shows the error")
    drawn, kept = site.figure_counts
    console.print(
        f"built the report for {len(site.pages)} topics in {site.seconds:.1f} s "
        f"(figures: {drawn} drawn, {kept} kept from an earlier drawing)"
    )
    console.print(str(site.index.resolve()))


cache_app = typer.Typer(help="the compiled models kept on disk (see docs/commands.md#cache)")
app.add_typer(cache_app, name="cache")


@cache_app.command("info")
def cache_info() -> None:
    """Where the compiled models are kept, how many and how large."""
    folder = cache_dir()
    console = make_console()
    if folder is None:
        console.print("the compile cache is off (BAYES_COMPARE_CACHE_DIR=off)")
        return
    files = list(folder.glob("*.pkl")) if folder.is_dir() else []
    size = sum(f.stat().st_size for f in files)
    console.print(f"{folder}: {len(files)} compiled models, {size / 2**20:.1f} MiB", markup=False)


@cache_app.command("clear")
def cache_clear() -> None:
    """Delete the compiled models: the next run of each topic compiles again."""
    folder = cache_dir()
    removed = clear_compiled()
    make_console().print(f"removed {removed} compiled models from {folder}", markup=False)


# The other commands register themselves on `app` when imported; they come after
# this module's commands so that `--help` lists run, describe, ... first.
from compare.interfaces import (  # noqa: E402
    cli_audit,  # noqa: F401
    cli_doctor,  # noqa: F401
    cli_export,  # noqa: F401
    cli_sbc,  # noqa: F401
    cli_sensitivity,  # noqa: F401
    worker,  # noqa: F401
)
