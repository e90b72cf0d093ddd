"""What the ``bayes-compare`` commands share: the Typer app, the consoles, the
exit codes, the options that several commands take (each defined once below, so
its name, help and default are the same everywhere), and the checks of the
options (each names the option and the fix)."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from compare.core import defaults
from compare.core.defaults import Settings

EXIT_AGREE, EXIT_DISAGREE, EXIT_INCONCLUSIVE, EXIT_BAD_INPUT, EXIT_CRASH = 0, 1, 2, 3, 4


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Check closed-form Bayesian posteriors against PyMC's MCMC.",
)


def make_console(**kwargs: Any) -> Console:
    """A console that is not squeezed to 80 columns when output is piped."""
    console = Console(highlight=False, **kwargs)
    if not console.is_terminal:
        console = Console(highlight=False, width=120, **kwargs)
    return console


err = make_console(stderr=True)


class BadInput(Exception):
    """A usage or input problem reported as one line with exit code 3."""


def output_console(json_to_stdout: bool) -> Console:
    # Keep stdout pure JSON when the document goes there.
    return err if json_to_stdout else make_console()


def parse_sets(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--set {item!r} must look like NAME=VALUE, e.g. --set a=2")
        out[name.strip()] = value
    return out


#: Highest polynomial degree of an evidence table (a degree-100 design is already
#: numerically meaningless; the bound keeps a typo like 0-100000000 from filling memory).
MAX_DEGREE = 100


def parse_degrees(text: str, what: str) -> list[int]:
    """``regression.parse_degrees`` with the range checked first (exit 3)."""
    from compare.topics import _regression as regression  # heavy: scipy, xarray, ArviZ

    if not text.strip():
        raise BadInput(f"{what} {text!r} is empty; give a range like 0-9 or a list like 0,3,9")
    for number in re.findall(r"\d+", text):
        if int(number) > MAX_DEGREE:
            raise BadInput(
                f"{what} {text!r}: degree {number} is above {MAX_DEGREE}; "
                f"give degrees from 0 to {MAX_DEGREE}"
            )
    return regression.parse_degrees(text)


TOPIC_FILE_HELP = (
    "a Python file defining TOPIC = compare.core.registry.Topic(...) (repeatable); "
    "its topics are checked and can then be used by name"
)

# --- options shared by several commands ------------------------------------------
# Typer reads the help and the flag from the Annotated metadata and the default
# from the parameter (``= None``).  Options whose meaning differs by command
# (--out, --all, an SBC fit's --draws) stay with their command.
TopicArg = Annotated[str, typer.Argument(help="topic name (see `list`)")]
TopicFileOpt = Annotated[list[Path] | None, typer.Option("--topic-file", help=TOPIC_FILE_HELP)]
DataOpt = Annotated[str | None, typer.Option(help="builtin:NAME or PATH.csv")]
ColumnOpt = Annotated[str | None, typer.Option(help="CSV column to read")]
TargetOpt = Annotated[str | None, typer.Option(help="table topics: the target column (default y)")]
FeaturesOpt = Annotated[
    str | None,
    typer.Option(help="table topics: input columns a,b,... (default: all but the target)"),
]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", help="hyperparameter NAME=VALUE (repeatable)")
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        help="tcp://HOST:PORT of a running Dask scheduler: the runs go to its workers "
        "(no shared file system needed)"
    ),
]
WorkerOpt = Annotated[
    bool,
    typer.Option(
        "--worker/--no-worker",
        help="use the local worker when one runs (`bayes-compare worker start`); "
        "--no-worker computes in this process",
    ),
]
DrawsOpt = Annotated[int | None, typer.Option(help="kept draws per chain")]
ChainsOpt = Annotated[int | None, typer.Option(help="number of chains")]
TuneOpt = Annotated[int | None, typer.Option(help="warm-up draws per chain")]
SeedOpt = Annotated[int | None, typer.Option(help="random seed")]
JsonOpt = Annotated[
    str | None, typer.Option("--json", help="write the JSON document to PATH, or - for stdout")
]


def load_topic_files(paths: list[Path] | None) -> None:
    """Register the topics of each ``--topic-file`` (checked against the protocol)."""
    if not paths:
        return
    from compare.topics.user import export_topic_files, load_topic_file  # heavy: NumPy

    for path in paths:
        try:
            load_topic_file(path)
        except OSError as e:  # e.g. a name too long: the path is bad input
            raise BadInput(
                f"--topic-file {str(path)[:80]!r}: {e.strerror or e}; give the "
                "path of a Python file"
            ) from None
    export_topic_files()  # the workers this command starts load them too


#: CSV files above this size are read in chunks (sufficient statistics in one pass).
STREAM_ABOVE_BYTES = 256 * 2**20


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def _check_under(path: Path, what: str, shown: str) -> None:
    """The nearest existing folder above ``path`` is a folder and writable."""
    probe = _nearest_existing(path)
    if not probe.is_dir():
        raise BadInput(
            f"{what} {shown}: {str(probe)!r} is a file, so nothing can be "
            f"written under it; give a path in a folder"
        )
    if not os.access(probe, os.W_OK):
        raise BadInput(
            f"{what} {shown}: cannot write under {str(probe)!r}; give a folder you can write to"
        )


def _os_checked[F: Callable[..., None]](check: F) -> F:
    """Run a path check; an OS refusal (name too long, ...) is bad input naming the path."""

    @functools.wraps(check)
    def wrapper(path: str | Path | None, what: str, *args: Any, **kwargs: Any) -> None:
        # A name the file system refuses fails only when the first file is written:
        # check the usual limits (255 bytes a name, 4096 a path) up front.
        if path is not None and (
            len(str(path).encode()) > 4096
            or any(len(part.encode()) > 255 for part in Path(path).parts)
        ):
            raise BadInput(
                f"{what} {str(path)[:60]!r}...: a file name is longer than 255 "
                "bytes (or the path than 4096); give a shorter path"
            )
        try:
            check(path, what, *args, **kwargs)
        except OSError as e:
            raise BadInput(f"{what} {str(path)!r}: {e.strerror or e}; give another path") from None

    return wrapper  # type: ignore[return-value]  # same signature, wraps() keeps it


@_os_checked
def check_out_dir(path: str | Path | None, what: str = "--out") -> None:
    """Refuse (exit 3) an output folder that is empty, an existing file or not writable.

    Called before any work, so a run never ends in ``FileExistsError``.
    """
    if path is None:
        return
    shown = repr(str(path))
    if str(path).strip() == "":
        raise BadInput(f"{what} {shown} is empty; give a folder, e.g. {what} reports/runs/mine")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise BadInput(
            f"{what} {shown} is an existing file, and {what} names a folder; give "
            f"a new or existing folder, e.g. {what} {path.with_suffix('')!s}-out"
        )
    _check_under(path, what, shown)


@_os_checked
def check_out_file(
    path: str | Path | None, what: str = "--json", *, stdout_ok: bool = True
) -> None:
    """Refuse (exit 3) an output file that is empty, an existing folder or not writable."""
    if path is None or (stdout_ok and str(path) == "-"):
        return
    shown = repr(str(path))
    if str(path).strip() == "":
        raise BadInput(
            f"{what} {shown} is empty; give a file name" + (" or - for stdout" if stdout_ok else "")
        )
    path = Path(path)
    if path.is_dir():
        raise BadInput(
            f"{what} {shown} is an existing folder, and {what} names a file; give "
            f"a file name, e.g. {what} {path / 'result.json'!s}"
        )
    _check_under(path.parent, what, shown)


def _feature_names(features: str | None) -> tuple[str, ...] | None:
    if features is None:
        return None
    names = tuple(f.strip() for f in features.split(","))
    if not all(names):
        raise BadInput(f"--features {features!r} has an empty column name; list the columns as a,b")
    return names


def checked_file(value: Path | None, what: str) -> Path | None:
    """An option callback: :func:`check_out_file` at parse time (before the command runs)."""
    if value is not None and str(value) in ("", "."):
        raise BadInput(f"{what} '' is empty; give a file name")
    check_out_file(value, what, stdout_ok=False)
    return value


def _check_writable(path: Path, what: str) -> None:
    """Kept for callers outside this module: ``path`` is an output folder."""
    check_out_dir(path, what)


#: Seeds accepted everywhere: numpy's generators, int64 arrays and nutpie's u64
#: take any whole number in this range (seeds outside it made nutpie raise
#: OverflowError after the model had compiled).
SEED_RANGE = (0, 2**63 - 1)


#: Upper bounds of the sampler sizes, so a typo cannot fill the memory: at most
#: this many kept draws over all chains (8 bytes x draws x chains x parameters:
#: 0.8 GB per parameter at the bound).
MAX_TOTAL_DRAWS = 10**8


MAX_CHAINS = 1024


MAX_TUNE = 10**7


def check_seed(seed: int | None) -> None:
    """Refuse a seed outside :data:`SEED_RANGE` (exit 3) before anything compiles."""
    lo, hi = SEED_RANGE
    if seed is not None and not lo <= seed <= hi:
        raise BadInput(
            f"--seed must be a whole number from {lo} to 2**63 - 1 = {hi}, "
            f"got {seed}; e.g. --seed 20261129"
        )


def check_sizes(
    *, draws: int | None = None, chains: int | None = None, tune: int | None = None
) -> None:
    """Refuse sampler sizes beyond the bounds above (exit 3)."""
    if chains is not None and chains > MAX_CHAINS:
        raise BadInput(f"--chains must be at most {MAX_CHAINS}, got {chains}")
    if tune is not None and tune > MAX_TUNE:
        raise BadInput(f"--tune must be at most {MAX_TUNE:.0e}, got {tune}")
    d, c = draws or defaults.DEFAULT.draws, chains or defaults.DEFAULT.chains
    if draws is not None and d * c > MAX_TOTAL_DRAWS:
        raise BadInput(
            f"--draws {draws} x {c} chains is more than {MAX_TOTAL_DRAWS:.0e} kept "
            "draws (8 bytes each per parameter); use fewer draws"
        )


def make_settings(**overrides: Any) -> Settings:
    """:class:`compare.core.defaults.Settings` from the command's options, checked (exit 3)."""
    given = {k: v for k, v in overrides.items() if v is not None}
    check_seed(given.get("seed"))
    check_sizes(draws=given.get("draws"), chains=given.get("chains"), tune=given.get("tune"))
    try:
        return dataclasses.replace(defaults.DEFAULT, **given)
    except ValueError as e:
        raise BadInput(str(e)) from None
