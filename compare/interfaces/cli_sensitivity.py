"""The ``bayes-compare sensitivity`` command (registered on :data:`compare.interfaces.cli_common.app`).

Exit codes as ``run``: 0 when every MCMC point agrees (or none was asked
for), 1 when one disagrees, 2 when one is inconclusive (and none disagrees),
3 for bad input (a grid outside the parameter's domain, an unknown
hyperparameter, a grid of one point or of more than MAX_GRID points, a topic
without a closed form, an option that only MCMC points read without
``--mcmc-at``), 4 for an unexpected failure (see :mod:`compare.interfaces.cli`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.markup import escape
from rich.table import Table

import compare.topics
from compare.core.data import load_data
from compare.core.files import atomic_write, dumps
from compare.interfaces.cli_common import (
    BadInput,
    ChainsOpt,
    ColumnOpt,
    DataOpt,
    DrawsOpt,
    FeaturesOpt,
    JsonOpt,
    SeedOpt,
    SetOpt,
    TargetOpt,
    TopicFileOpt,
    TuneOpt,
    app,
    check_out_dir,
    check_out_file,
    err,
    load_topic_files,
    make_settings,
    output_console,
    parse_sets,
)

#: Rows of the sweep table printed (the JSON holds every grid point).
TABLE_ROWS = 12

#: Most grid points of one sweep.  The sweep keeps about 10 floats per point and
#: parameter (means, intervals, evidence, power-scaling), so the bound is ~80 MB
#: per parameter; a grid above it was a typo (1:10:100000000 grew to 10 GB).
MAX_GRID = 100_000


def check_grid_size(*, grid: str | None, log_grid: str | None) -> None:
    """Refuse a grid of more than :data:`MAX_GRID` points before it is built (exit 3)."""
    if grid is not None:
        n = grid.count(",") + 1
        if n > MAX_GRID:
            raise BadInput(
                f"--grid has {n} values, more than {MAX_GRID} (about 80 MB per "
                "parameter); use --log-grid LO:HI:N with a smaller N"
            )
    if log_grid is not None:
        parts = log_grid.split(":")
        try:
            n_text = parts[2]
            points = float(n_text)
        except (IndexError, ValueError):
            return  # the grid parser names the format
        if points > MAX_GRID:
            raise BadInput(
                f"--log-grid {log_grid!r}: N = {n_text} is more than {MAX_GRID} "
                f"points (about 80 MB per parameter); give N <= {MAX_GRID}"
            )


@app.command("sensitivity")
def sensitivity_command(
    topic: Annotated[str, typer.Argument(help="a topic with a closed form (see `list`)")],
    param: Annotated[
        str,
        typer.Option(
            help="the hyperparameter to sweep, or a quantity the topic "
            "derives (lambda = noise_sd^2/prior_sd^2)"
        ),
    ],
    grid: Annotated[
        str | None,
        typer.Option(help="grid values a,b,c (at most 100000 values, about 80 MB per parameter)"),
    ] = None,
    log_grid: Annotated[
        str | None,
        typer.Option(
            "--log-grid",
            help="LO:HI:N, N log-spaced "
            "values, N <= 100000 (lambda alone defaults "
            "to the course's 1e-8 n .. 0.1 n)",
        ),
    ] = None,
    mcmc_at: Annotated[
        int,
        typer.Option(
            "--mcmc-at",
            help="run MCMC (with the calibrated verdict) at K grid points spread over the grid",
        ),
    ] = 0,
    data: DataOpt = None,
    column: ColumnOpt = None,
    target: TargetOpt = None,
    features: FeaturesOpt = None,
    set_: SetOpt = None,
    draws: DrawsOpt = None,
    chains: ChainsOpt = None,
    tune: TuneOpt = None,
    seed: SeedOpt = None,
    alpha: Annotated[
        float | None,
        typer.Option(help="family-wise false-alarm rate of each point's agreement test"),
    ] = None,
    json_path: JsonOpt = None,
    out: Annotated[
        str | None,
        typer.Option(
            help="directory for sensitivity.json and sensitivity.png "
            "(default reports/runs/<topic>/)"
        ),
    ] = None,
    topic_file: TopicFileOpt = None,
) -> None:
    """Exact posterior along a grid of one hyperparameter, MCMC at K points, power-scaling."""
    from compare.studies import sensitivity as sens  # heavy: scipy, xarray; --help stays light

    settings = make_settings(draws=draws, chains=chains, tune=tune, seed=seed, alpha=alpha)
    if mcmc_at < 0:
        raise BadInput(f"--mcmc-at must be >= 0, got {mcmc_at}")
    check_out_file(json_path, "--json")
    check_out_dir(
        out if out is not None else "reports/runs",
        "--out" if out is not None else "the default --out",
    )
    check_grid_size(grid=grid, log_grid=log_grid)
    load_topic_files(topic_file)
    t = compare.topics.get_topic(topic)
    sens.check_topic(t)
    sens.check_param(t, param=param)
    if not mcmc_at:
        # Without MCMC points only the exact power-scaling reads draws x chains.
        sized = sens.power_scaled_of(t) is not None
        unused = [
            flag
            for flag, value in (
                ("--draws", None if sized else draws),
                ("--chains", None if sized else chains),
                ("--tune", tune),
                ("--alpha", alpha),
                ("--seed", seed),
            )
            if value is not None
        ]
        if unused:
            raise BadInput(
                f"{', '.join(unused)} set(s) the MCMC points, and there are none; "
                "add --mcmc-at K or drop " + ", ".join(unused)
            )
    sets = parse_sets(set_)
    if param in sets:
        raise BadInput(
            f"--set {param}={sets[param]}: --param {param} is swept over the grid, "
            f"so a fixed value would be ignored; drop --set {param}"
        )
    values, dataset, source = load_data(t, data, column, target, features)
    hyper = t.hyper(sets, dataset=dataset, parsed=False)
    if grid is None and log_grid is None and sens.derived_parameter(t, param) is not None:
        x, _ = sens._prepare(t, values, hyper, source)
        points = sens.default_grid(t, param=param, hyper=hyper, n_obs=sens._n_obs(x))
    else:
        points = sens.parse_grid(grid=grid, log_grid=log_grid)
    if mcmc_at:
        sens.mcmc_indices(n_grid=len(points), k=mcmc_at)
    console = output_console(json_path == "-")
    with err.status(f"{t.name}: exact sweep over {len(points)} values of {param}") as status:

        def on_point(j: int, k: int, value: float) -> None:
            status.update(f"{t.name}: MCMC at {param}={value:.4g} ({j + 1} of {k})")

        result = sens.sensitivity(
            t,
            data=values,
            hyper=hyper,
            param=param,
            grid=points,
            mcmc=mcmc_at,
            settings=settings,
            source=source,
            on_point=on_point,
        )
    doc = sens.to_document(result)
    _print(result, doc, console)
    out_dir = Path(out) if out is not None else Path("reports/runs") / t.name
    sens.save(result, out_dir)
    console.print(
        f"wrote {out_dir / sens.SENSITIVITY_FILE} and {out_dir / sens.FIGURE_FILE}", markup=False
    )
    if json_path == "-":
        sys.stdout.write(dumps(doc))
        sys.stdout.flush()
    elif json_path is not None:
        atomic_write(json_path, dumps(doc))
    raise typer.Exit(result.exit_code)


def _f(v, spec: str = ".4g") -> str:
    return "n/a" if v is None else format(v, spec)


def _short(diagnosis: str | None) -> str:
    if diagnosis is None:
        return ""
    return {
        "potential prior-data conflict": "conflict",
        "potential strong prior / weak likelihood": "strong prior",
    }.get(diagnosis, diagnosis)


def _print(result, doc, out) -> None:
    s = result.sweep
    shown = list(s.parameters[:2])
    table = Table(
        title=f"{result.topic}: exact posterior along {s.param} on {result.source} "
        f"(n={result.n}); {len(s.grid)} values in {s.seconds:.3g} s "
        f"({s.method})"
    )
    table.add_column(s.param, justify="right")
    for name in shown:
        table.add_column(f"{escape(name)} mean", justify="right")
        table.add_column(f"{int(100 * doc['exact']['interval'])}% interval", justify="right")
    table.add_column("log evidence", justify="right")
    table.add_column("MCMC", justify="left")
    rows = np.unique(
        np.concatenate(
            [
                np.round(np.linspace(0, len(s.grid) - 1, min(TABLE_ROWS, len(s.grid)))),
                [p.index for p in result.points],
            ]
        ).astype(int)
    )
    by_index = {p.index: p for p in result.points}
    for g in rows:
        cells = [format(s.grid[g], ".4g")]
        for i in range(len(shown)):
            cells.append(format(s.mean[g, i], ".4g"))
            cells.append(
                "n/a"
                if not np.isfinite(s.lower[g, i])
                else f"[{s.lower[g, i]:.4g}, {s.upper[g, i]:.4g}]"
            )
        cells.append(format(s.log_evidence[g], ".6g"))
        p = by_index.get(int(g))
        cells.append(
            ""
            if p is None
            else f"{p.verdict.upper()} max|z| {_f(p.max_abs_z, '.2f')} <= {_f(p.threshold, '.2f')}"
        )
        table.add_row(*cells)
    out.print(table)
    if len(s.parameters) > len(shown):
        out.print(
            f"(first {len(shown)} of {len(s.parameters)} parameters; the JSON has all)",
            markup=False,
        )
    blocks = []
    if result.power is not None:
        blocks.append((f"exact, {s.param}={result.base_value:.4g}", result.power))
    blocks += [
        (f"{s.param}={p.value:.4g}, MCMC", p.power_scaling)
        for p in result.points
        if p.power_scaling is not None
    ]
    if blocks:
        from compare.studies.sensitivity import power_rows  # heavy: scipy; --help stays light

        view = Table(
            title="power-scaling sensitivity (psense's measure): exact vs psense on "
            "the MCMC draws; conflict = prior and likelihood both >= 0.05",
            title_justify="left",
        )
        for col in (
            "at",
            "parameter",
            "prior exact",
            "prior psense",
            "lik. exact",
            "lik. psense",
            "exact says",
            "psense says",
        ):
            view.add_column(
                col, justify="left" if col in ("at", "parameter") or "says" in col else "right"
            )
        for title, ps in blocks:
            for r in power_rows(ps):
                psense_says = _short(r["diagnosis_psense"])
                if r["diagnoses_differ"]:
                    psense_says += " (differs)"
                view.add_row(
                    title,
                    escape(r["parameter"]),
                    f"{r['prior_exact']:.4f}",
                    _f(r["prior_psense"], ".4f"),
                    f"{r['likelihood_exact']:.4f}",
                    _f(r["likelihood_psense"], ".4f"),
                    _short(r["diagnosis_exact"]),
                    psense_says,
                )
        out.print(view)
    if result.verdict is not None:
        colour = {"agree": "green", "disagree": "red", "inconclusive": "yellow"}[result.verdict]
        out.print(
            f"MCMC at {len(result.points)} points: [bold {colour}]"
            f"{result.verdict.upper()}[/bold {colour}]"
        )
