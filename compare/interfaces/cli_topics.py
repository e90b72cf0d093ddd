"""``bayes-compare list`` and ``describe``: the topics' cards, as tables.

Light: neither command imports NumPy, a topic, or anything of the sampling
stack when the cards come from the cache (:mod:`compare.topics.cards`), and
:func:`compare.interfaces.cli.main` imports the other commands' modules only
for the other commands.  ``tests/compare/interfaces/test_light_commands.py``
checks what they import; ``benchmarks/light_commands.py`` times them.
"""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from compare.interfaces.cli_common import (
    TopicArg,
    TopicFileOpt,
    app,
    load_topic_files,
    make_console,
)
from compare.topics.cards import all_cards, topic_card


@app.command("list")
def list_topics(topic_file: TopicFileOpt = None) -> None:
    """List the topics."""
    load_topic_files(topic_file)
    table = Table(title="bayes-compare topics")
    for col in ("topic", "model", "data", "builtin data"):
        table.add_column(col)
    for t in all_cards():
        table.add_row(
            t.name,
            t.title,
            t.data_text,
            ", ".join("builtin:" + d.name for d in t.builtin),
        )
    make_console().print(table)


@app.command()
def describe(topic: TopicArg, topic_file: TopicFileOpt = None) -> None:
    """Show a topic's model, hyperparameters, parameters, builtin data and CSV format."""
    load_topic_files(topic_file)
    t = topic_card(topic)
    out = make_console()
    out.print(f"[bold]{t.name}[/bold]: {t.title}\n")
    out.print("[bold]Model[/bold]")
    for line in t.model.splitlines():
        out.print("  " + line, markup=False)
    hyper_table = Table(title="Hyperparameters (--set NAME=VALUE)", title_justify="left")
    for col in ("name", "default", "meaning"):
        hyper_table.add_column(col)
    for h in t.hyperparameters:
        hyper_table.add_row(h.name, h.default, h.doc)
    out.print()
    out.print(hyper_table)
    data = Table(
        title="Builtin data (--data builtin:NAME; the first is the default)", title_justify="left"
    )
    for col in ("name", "what", "source", "suggested hyperparameters"):
        data.add_column(col)
    for d in t.builtin:
        data.add_row("builtin:" + d.name, d.description, d.source, d.hyper)
    out.print(data)
    out.print(
        f"\n[bold]Parameters[/bold] (in this order in every vector; on "
        f"builtin:{t.builtin[0].name}): {escape(', '.join(t.parameters or ()))}",
        markup=True,
    )
    if t.data_kind == "points":
        out.print(
            "\n[bold]Your data[/bold]: a CSV file with a header line, then one row per "
            "observation of numeric columns; choose them with --features a,b (default: "
            "every column)."
        )
        out.print(
            f"  bayes-compare run {t.name} --data my.csv --features a,b "
            "--set components=3 --json -",
            markup=False,
        )
    elif t.data_kind == "table":
        has_degree = "degree" in {h.name for h in t.hyperparameters}
        out.print(
            "\n[bold]Your data[/bold]: a CSV file with a header line, then one row per "
            "observation; name the target column with --target (default y) and the "
            "inputs with --features a,b (default: every other column)."
            + (
                " With one input, --set degree=M uses polynomial features 1, x, ..., x^M."
                if has_degree
                else ""
            )
        )
        out.print(
            f"  bayes-compare run {t.name} --data my.csv --target y --features x "
            + ("--set degree=3 " if has_degree else "")
            + "--json -",
            markup=False,
        )
    else:
        out.print(
            f"\n[bold]Your data[/bold]: a CSV file with a header line, then one "
            f"observation per line; observations are {t.data_text}. Pick "
            f"the column with --column NAME (not needed for a one-column file)."
        )
        out.print(f"  bayes-compare run {t.name} --data my.csv --column x --json -", markup=False)
