"""The ``bayes-compare export`` command (registered on :data:`compare.interfaces.cli_common.app`).

Exit codes: 0 written, 3 bad input (nothing written), 4 an unexpected failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from compare.interfaces.cli_common import (
    BadInput,
    ColumnOpt,
    DataOpt,
    FeaturesOpt,
    SetOpt,
    TargetOpt,
    TopicArg,
    TopicFileOpt,
    app,
    check_out_dir,
    check_seed,
    load_topic_files,
    make_console,
    parse_sets,
)
from compare.outputs import export

FORMATS = ("posteriordb",)


@app.command("export")
def export_command(
    topic: TopicArg,
    format_: Annotated[
        str, typer.Option("--format", help="output layout: posteriordb")
    ] = "posteriordb",
    out: Annotated[str | None, typer.Option(help="the posteriordb root to write under")] = None,
    data: DataOpt = None,
    column: ColumnOpt = None,
    target: TargetOpt = None,
    features: FeaturesOpt = None,
    set_: SetOpt = None,
    seed: Annotated[int | None, typer.Option(help="seed of the exact draws")] = None,
    topic_file: TopicFileOpt = None,
) -> None:
    """Write a topic's exact posterior as a posteriordb reference posterior (exact iid draws)."""
    if format_ not in FORMATS:
        raise BadInput(f"--format {format_!r} is not supported; use --format posteriordb")
    if out is None:
        raise BadInput("give the directory to write with --out DIR")
    check_out_dir(out, "--out")
    check_seed(seed)
    load_topic_files(topic_file)
    features_list = None if features is None else [f.strip() for f in features.split(",")]
    result = export.export_posteriordb(
        topic,
        out=Path(out),
        data=data,
        column=column,
        target=target,
        features=features_list,
        sets=parse_sets(set_) or None,
        seed=seed,
    )
    console = make_console()
    console.print(
        f"wrote {result.posterior_name}: {export.POSTERIORDB_CHAINS} chains x "
        f"{export.POSTERIORDB_DRAWS} exact draws of {len(result.parameters)} parameter(s), "
        "validated against posteriordb's format",
        markup=False,
    )
    for kind, path in result.files.items():
        console.print(f"  {kind:26s} {path}", markup=False)
