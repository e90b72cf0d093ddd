"""``bayes-compare sbc``: simulation-based calibration on a Dask cluster.

Exit codes (a public contract, as for ``run``): 0 ranks uniform (pass),
1 not uniform (fail), 2 inconclusive (too many failed or unconverged fits),
3 bad input (nothing written), 4 an unexpected failure, including every
fit failing on the workers (a few failed fits are data, counted in the verdict).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

import compare.topics
from compare.interfaces.cli_common import (
    BadInput,
    SetOpt,
    TopicArg,
    TopicFileOpt,
    app,
    check_out_dir,
    check_seed,
    check_sizes,
    err,
    load_topic_files,
    make_console,
    parse_sets,
)

if TYPE_CHECKING:
    from compare.studies.sbc import SbcResult

#: Most simulations of one study (the exact side keeps a few floats per
#: simulation and parameter; 10 million is ~1 GB for a 10-parameter topic).
MAX_SIMS = 10_000_000


@app.command("sbc")
def sbc_command(
    topic: TopicArg,
    sims: Annotated[int, typer.Option(help="number of simulations")] = 1000,
    draws: Annotated[
        int | None, typer.Option(help="kept draws per chain of every fit (default 250)")
    ] = None,
    thin: Annotated[
        int | None,
        typer.Option(help="keep every T-th draw before ranking (default: thin to about the ESS)"),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="worker processes of a local Dask cluster (default: cores)")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="tcp://HOST:PORT of a running Dask scheduler")
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(
            help="folder for sbc.zarr, sbc.json, figures (default reports/runs/<topic>/sbc)"
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option(help="keep the finished simulations in --out and run the rest")
    ] = False,
    set_: SetOpt = None,
    n: Annotated[
        int | None, typer.Option("--n", help="observations per simulated data set (default 20)")
    ] = None,
    chains: Annotated[int | None, typer.Option(help="chains per fit (default 4)")] = None,
    tune: Annotated[int | None, typer.Option(help="warm-up draws per chain (default 300)")] = None,
    seed: Annotated[int | None, typer.Option(help="base seed; simulation i uses (seed, i)")] = None,
    alpha: Annotated[
        float | None, typer.Option(help="family-wise false-alarm rate (default 0.01)")
    ] = None,
    exact_only: Annotated[
        bool,
        typer.Option(
            help="only the exact side: checks the analytic code, no fits, no cluster (default --out reports/runs/<topic>/sbc-exact)"
        ),
    ] = False,
    topic_file: TopicFileOpt = None,
) -> None:
    """Simulation-based calibration: are the ranks of prior draws among posterior draws uniform?"""
    from compare.studies import sbc  # heavy: scipy; Dask and PyMC when the study runs

    if sims < 1:
        raise BadInput(f"--sims must be >= 1, got {sims}; e.g. --sims 1000")
    if sims > MAX_SIMS:
        raise BadInput(f"--sims must be at most {MAX_SIMS}, got {sims}")
    check_seed(seed)
    check_sizes(draws=draws, chains=chains, tune=tune)
    if exact_only:
        unused = [
            flag
            for flag, value in (
                ("--draws", draws),
                ("--thin", thin),
                ("--chains", chains),
                ("--tune", tune),
                ("--workers", workers),
                ("--scheduler", scheduler),
                ("--resume", resume or None),
            )
            if value is not None
        ]
        if unused:
            raise BadInput(
                f"--exact-only fits nothing, so {', '.join(unused)} would be "
                f"ignored; drop {', '.join(unused)} or --exact-only"
            )
    if workers is not None and scheduler is not None:
        raise BadInput(
            "give --workers N (a local cluster) or --scheduler tcp://HOST:PORT "
            "(an existing one), not both"
        )
    if workers is not None and workers < 1:
        raise BadInput(f"--workers must be >= 1, got {workers}; e.g. --workers 2")
    check_out_dir(out, "--out")
    load_topic_files(topic_file)  # workers inherit them (BAYES_COMPARE_TOPIC_FILES)
    t = compare.topics.get_topic(topic)
    overrides: dict[str, Any] = {
        k: v
        for k, v in dict(
            draws=draws, thin=thin, n_obs=n, chains=chains, tune=tune, seed=seed, alpha=alpha
        ).items()
        if v is not None
    }
    settings = dataclasses.replace(sbc.SbcSettings(), **overrides)
    hyper = t.hyper(parse_sets(set_), parsed=False)
    out_dir = (
        Path(out)
        if out is not None
        else Path("reports/runs") / t.name / (sbc.RUN_SUBDIR + ("-exact" if exact_only else ""))
    )
    check_out_dir(out_dir, "--out")
    spec = sbc.SbcSpec(topic=t.name, hyper=hyper, settings=settings)

    class Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            rate = task.fields.get("rate")
            return Text("" if rate is None or rate != rate else f"{rate:.1f} sims/s")

    console = make_console()
    where = (
        f"scheduler {scheduler}"
        if scheduler
        else "exact side only"
        if exact_only
        else f"{workers or 'all'} local workers"
    )
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    ) as bar:
        task = bar.add_task(f"{t.name} SBC ({where})", total=sims, rate=None)

        def progress(done: int, total: int, rate: float) -> None:
            bar.update(task, completed=done, total=total, rate=rate)

        try:
            result = sbc.run_sbc(
                spec=spec,
                sims=sims,
                out=out_dir,
                workers=workers,
                scheduler=scheduler,
                resume=resume,
                progress=progress,
                exact_only=exact_only,
            )
        except KeyboardInterrupt:
            bar.stop()
            err.print(
                f"interrupted; finished simulations are kept in {out_dir}: rerun with "
                "--resume to finish",
                markup=False,
            )
            raise typer.Exit(130) from None
        except Exception:
            # Bad input found inside the study, or a crash: its one line alone, no bar.
            bar.live.transient = True
            raise
    _check_not_all_failed(result, out_dir)
    _print(result, out_dir, console)
    raise typer.Exit(result.exit_code)


class EveryFitFailed(RuntimeError):
    """Every fit of a study raised on its worker: a crash, not an inconclusive verdict."""


def _check_not_all_failed(result: SbcResult, out_dir: Path) -> None:
    """Raise :class:`EveryFitFailed` (exit 4) when no fit of this study succeeded.

    A few failed fits are data (counted, and too many make the verdict
    inconclusive); when every fit fails, the model, the workers or the code are
    broken, so the command reports a crash with the first worker's error.
    """
    c = result.counts
    if result.throughput.get("exact_only") or c.fitted > 0 or not c.failed:
        return
    first = next(iter(sorted(result.errors.items())), ("?", "no message"))
    raise EveryFitFailed(
        f"all {c.failed} fits failed on the workers (simulation "
        f"{first[0]}: {first[1]}); the study is kept in {out_dir}"
    )


def _print(result: SbcResult, out_dir: Path, console: Console) -> None:
    table = Table(title=f"{result.topic}: simulation-based calibration")
    for col in ("side", "parameter", "n", "p", "Holm p", "result"):
        table.add_column(col, justify="left" if col in ("side", "parameter", "result") else "right")
    alpha = result.spec.settings.alpha
    for t in result.tests:
        ok = not (t.p_holm == t.p_holm and t.p_holm <= alpha)
        table.add_row(
            t.side, t.parameter, str(t.n), f"{t.p:.3g}", f"{t.p_holm:.3g}", "pass" if ok else "FAIL"
        )
    console.print(table)
    c, tp, conv = result.counts, result.throughput, result.convergence
    assert conv is not None  # analyse() always measures it
    if tp.get("exact_only"):
        ex = result.exact
        assert ex is not None  # an exact-only study has its exact side
        console.print(
            f"exact side only ({ex.method}): {ex.indices.size} simulations in "
            f"{ex.seconds:.1f} s, {ex.sims_per_second:.0f}/s; no fits",
            markup=False,
        )
        _verdict(result, alpha, out_dir, console)
        return
    console.print(
        f"simulations: {c.done} done, {c.fitted} fitted, {c.failed} failed, "
        f"{c.unconverged} unconverged (R-hat >= {conv.rhat_max} or a "
        f"divergence); worst R-hat {conv.worst_rhat or float('nan'):.4f}",
        markup=False,
    )
    rate = tp.get("sims_per_second")
    if tp.get("reanalysed_seconds") is not None:
        console.print(
            f"nothing left to run: analysed the stored simulations again in "
            f"{tp['reanalysed_seconds']:.1f} s",
            markup=False,
        )
    if tp.get("seconds") is not None:
        console.print(
            f"throughput: {tp.get('sims_this_run')} simulations in {tp['seconds']:.1f} s "
            f"({'n/a' if rate is None else f'{rate:.1f}'} sims/s on {tp.get('workers')} "
            f"workers; {tp.get('total_seconds', float('nan')):.1f} s with start-up; "
            f"{tp.get('resumed_from')} resumed)",
            markup=False,
        )
    if tp.get("warm_sims_per_second"):
        console.print(
            f"  after each worker's first block (which compiles the model): "
            f"{tp['warm_sims_per_second']:.1f} sims/s",
            markup=False,
        )
    ex = result.exact
    if ex is not None and ex.available:
        console.print(
            f"exact side: {ex.method}, {ex.indices.size} simulations at {ex.sims_per_second:.0f}/s",
            markup=False,
        )
    elif ex is not None:
        console.print(f"exact side: not run ({ex.reason})", markup=False)
    _verdict(result, alpha, out_dir, console)


def _verdict(result: SbcResult, alpha: float, out_dir: Path, console: Console) -> None:
    colour = {"pass": "green", "fail": "red", "inconclusive": "yellow"}[result.verdict]
    console.print(
        f"verdict: [bold {colour}]{result.verdict.upper()}[/bold {colour}] (decided by "
        f"{result.decided_by}{'; ' + result.note if result.note else ''}; "
        f"family-wise alpha {alpha:g}, Holm)"
    )
    console.print(str((out_dir / "index.html").resolve()), markup=False, soft_wrap=True)
