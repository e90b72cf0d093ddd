"""The ``bayes-compare`` command line: :func:`main` and :func:`program`.

Exit codes (a public contract): 0 agree, 1 disagree, 2 inconclusive,
3 bad input or usage, 4 an unexpected failure (a bug or a broken
environment, never a verdict).  With ``run --all`` the code is 1 if any
topic disagrees, else 2 if any is inconclusive, else 0.

Bad input (exit 3) is one line on stderr naming the value and the fix; it is
found before any model is compiled or sampled, and nothing is written.  An
unexpected exception (exit 4) is one line on stderr saying what failed and
where its full traceback was saved (``bayes-compare-crash-<time>-<pid>.txt``
in the system's temporary folder), so a script can always tell a crash from
a verdict.

The commands live in the modules that register them on ``app``
(:mod:`compare.interfaces.cli_common`): ``list`` and ``describe`` in
:mod:`~compare.interfaces.cli_topics`, ``run``, ``evidence``, ``summary``,
``report`` and ``cache`` in :mod:`~compare.interfaces.cli_run`, which imports
the others (``sbc``, ``sensitivity``, ``audit``, ``export``, ``worker``).  This
module imports none of them until :func:`main` knows the command: ``list`` and
``describe`` need no NumPy, no topic and none of the runner's modules
(issue 17's light commands, 0.5 s at most).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, NoReturn

import typer

from compare import accel
from compare.accel.quick_exit import finish
from compare.core.registry import InputError
from compare.interfaces.cli_common import (
    EXIT_AGREE,
    EXIT_BAD_INPUT,
    EXIT_CRASH,
    BadInput,
    app,
    err,
)

__all__ = ["EXIT_AGREE", "EXIT_BAD_INPUT", "EXIT_CRASH", "app", "main", "program"]

#: The commands :func:`main` runs with their own module alone (no NumPy, no topic).
LIGHT_COMMANDS = frozenset({"list", "describe"})


def _register(args: list[str]) -> None:
    """Import the modules whose commands ``args`` can reach: ``list`` and
    ``describe`` alone for those two, every command otherwise (``--help`` and a
    mistyped command included, so their text names every command)."""
    from compare.interfaces import cli_topics  # noqa: F401  light: list, describe

    if not args or args[0] not in LIGHT_COMMANDS:
        from compare.interfaces import cli_run  # noqa: F401  heavy: NumPy, the runner's modules


@functools.cache
def _click_command(commands: int, groups: int) -> Any:
    """The click command typer makes of ``app``, made once per process (per count of
    registered commands and groups).

    ``app()`` makes it again at every call: each command's signature and its
    string annotations evaluated, 70 ms for the 15 commands, and each parameter's
    coercion built anew. A command line pays it once either way; the tests and
    the Python callers of :func:`main` in one process paid it per call.
    """
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point: map every failure to its documented exit code.

    0/1/2 come only from a finished verdict; 3 is bad input or usage (one
    line); any other exception is 4 (one line, the traceback saved to a file).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # A process of ours: the accelerators (compare/accel/), before NumPy loads (its
        # BLAS starts with one thread) and before anything else is imported.
        accel.enable()
    except accel.SettingError as e:
        err.print(f"error: {e}", markup=False, soft_wrap=True)
        return EXIT_BAD_INPUT
    # Our figures are files: Agg in this process and the workers it starts, whatever a
    # user's MPLBACKEND says for their own sessions (compare.core.drawing chooses none).
    os.environ["MPLBACKEND"] = "Agg"
    try:
        _register(args)  # after the BLAS limit: NumPy's BLAS starts with one thread
        # standalone_mode=False: click returns the exit code of typer.Exit instead of exiting.
        command = _click_command(len(app.registered_commands), len(app.registered_groups))
        code = command(args=args, standalone_mode=False)
        return code if isinstance(code, int) else EXIT_AGREE
    except typer.Exit as e:
        return int(e.exit_code)
    except typer.TyperException as e:  # usage errors: unknown option, missing value, ...
        message = " ".join(e.format_message().split()) + _given(e, args)
        err.print(f"usage error: {message}", markup=False, soft_wrap=True)
        return EXIT_BAD_INPUT
    except typer.Abort:
        err.print("aborted")
        return EXIT_BAD_INPUT
    except (BadInput, InputError) as e:
        err.print(f"error: {' '.join(str(e).split())}", markup=False, soft_wrap=True)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err.print("interrupted (exit 130)", markup=False)
        return 130
    except Exception as e:  # noqa: BLE001  (anything else is a crash, never a verdict)
        return _crash(e, args)


def program() -> NoReturn:
    """The ``bayes-compare`` program: :func:`main`, then an exit without the
    interpreter's teardown where that accelerator is on (``compare/accel/quick_exit.py``:
    0.6-0.9 s of a 6 s ``run``). Tests that call :func:`main` in-process are unaffected."""
    finish(main())


def _given(exc: Exception, args: list[str]) -> str:
    """`` (got 'VALUE')`` for a bad option value whose message does not show it."""
    param = getattr(exc, "param", None)
    for opt in getattr(param, "opts", ()) if param is not None else ():
        for i, arg in enumerate(args):
            if arg == opt and i + 1 < len(args):
                return f" (got {args[i + 1]!r})"
            if arg.startswith(opt + "="):
                return f" (got {arg[len(opt) + 1 :]!r})"
    return ""


def _crash(exc: BaseException, args: list[str]) -> int:
    """Save the traceback, print one line, return :data:`EXIT_CRASH`."""
    command = next((a for a in args if not a.startswith("-")), "bayes-compare")
    text = "".join(traceback.format_exception(exc))
    where = "(the traceback could not be saved)"
    try:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        path = Path(tempfile.gettempdir()) / f"bayes-compare-crash-{stamp}-{os.getpid()}.txt"
        path.write_text(f"bayes-compare {' '.join(args)}\n\n{text}", encoding="utf-8")
        where = f"full traceback in {path}"
    except OSError:
        pass
    first = " ".join(str(exc).split())[:300]
    line = (
        f"internal error in `{command}`: {type(exc).__name__}: {first} (a bug, not a "
        f"verdict; exit {EXIT_CRASH}); {where}"
    )
    try:
        err.print(line, markup=False, soft_wrap=True)
    except Exception:  # noqa: BLE001  (a broken console must not hide the exit code)
        with contextlib.suppress(Exception):
            sys.stderr.write(line + "\n")
    return EXIT_CRASH


if __name__ == "__main__":
    # `python -m compare.interfaces.cli`: the commands are registered on
    # compare.interfaces.cli_common's app, which this __main__ copy shares.
    program()
