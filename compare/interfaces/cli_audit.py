"""``bayes-compare audit``: the matrix topics x inference methods x seeds on Dask.

Exit codes: 0 the audit ran (whatever its cells found: an approximation
that is wrong is a finding, not a failure), 3 bad input (nothing run),
4 an unexpected failure. A cell that fails on a worker is recorded as
``failed`` with its message, not a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import compare.topics
from compare.core.cluster import check_scheduler
from compare.core.methods import METHODS
from compare.interfaces.cli_common import (
    BadInput,
    SchedulerOpt,
    app,
    check_out_dir,
    err,
    make_console,
)


def _names(values: list[str] | None) -> list[str]:
    """``--topics a,b --topics c`` -> [a, b, c]."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


@app.command("audit")
def audit_command(
    topics: Annotated[
        list[str] | None,
        typer.Option(help="topics, comma-separated or repeated (default: every topic)"),
    ] = None,
    all_topics: Annotated[bool, typer.Option("--all", help="every topic (the default)")] = False,
    methods: Annotated[
        list[str] | None,
        typer.Option(
            help=f"methods, comma-separated or repeated, or 'all' (default); of {', '.join(METHODS)}"
        ),
    ] = None,
    seeds: Annotated[int, typer.Option(help="runs per topic and method, seeds S, S+1, ...")] = 1,
    workers: Annotated[
        int | None, typer.Option(help="worker processes of a local Dask cluster (default 2)")
    ] = None,
    scheduler: SchedulerOpt = None,
    out: Annotated[str, typer.Option(help="folder of audit.json, audit.md, audit.html")] = (
        "reports/audit"
    ),
    resume: Annotated[
        bool, typer.Option(help="keep the cells whose saved run is still valid, run the rest")
    ] = False,
    summary: Annotated[
        bool, typer.Option(help="print the saved audit.md of --out and run nothing")
    ] = False,
) -> None:
    """Every inference method on every topic, against the exact answer (docs/audit.md)."""
    from compare.outputs.audit import AUDIT_MD, run_audit  # heavy: the runner's imports

    console = make_console()
    if summary:
        path = Path(out) / AUDIT_MD
        if not path.is_file():
            raise BadInput(f"--out {out}: no {AUDIT_MD} there; run `bayes-compare audit` first")
        console.print(path.read_text(encoding="utf-8"), markup=False, end="")
        return
    if workers is not None and workers < 1:
        raise BadInput(f"--workers must be >= 1, got {workers}; e.g. --workers 2")
    if workers is not None and scheduler is not None:
        raise BadInput(
            "give --workers N (a local cluster) or --scheduler tcp://HOST:PORT, not both"
        )
    if scheduler is not None:
        check_scheduler(scheduler)
    if seeds < 1:
        raise BadInput(f"--seeds must be >= 1, got {seeds}; e.g. --seeds 1")
    check_out_dir(out, "--out")
    chosen = _names(topics)
    if chosen and all_topics:
        raise BadInput("give --topics or --all, not both")
    for name in chosen:
        compare.topics.get_topic(name)
    wanted = _names(methods)
    if wanted == ["all"]:
        wanted = []
    unknown = [m for m in wanted if m not in METHODS]
    if unknown:
        raise BadInput(
            f"--methods {', '.join(unknown)}: not a method; choose from {', '.join(METHODS)} or all"
        )
    from compare.core.cluster import connect  # heavy: Dask only when cells run

    client, cluster = connect(workers=workers or 2, scheduler=scheduler)
    try:
        with Progress(
            TextColumn("audit"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        ) as bar:
            task = bar.add_task("cells", total=None)
            result = run_audit(
                topics=chosen or None,
                methods=wanted or None,
                seeds=seeds,
                out=out,
                client=client,
                resume=resume,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    console.print((result.out / AUDIT_MD).read_text(encoding="utf-8"), markup=False, end="")
    failed = sum(r["status"] == "failed" for r in result.rows)
    console.print(
        f"audit: {len(result.rows)} cells in {result.seconds:.0f} s"
        + (f", {failed} failed (see audit.json)" if failed else "")
    )
    console.print(str((result.out / "audit.html").resolve()))
    raise typer.Exit(0)
