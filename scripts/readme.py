#!/usr/bin/env python3
"""Regenerate (``--write``) or verify (``--check``) the program output shown in README.md and docs/.

The files are README.md and every ``docs/**/*.md`` (:func:`doc_files`).  Every shown
output sits in a fenced block right after a marker comment::

    <!-- readme: cmd="run normal-inverse-gamma" keep="^checks|^  (ok|FAIL)" cost=cheap -->
    ```
    $ .venv/bin/bayes-compare run normal-inverse-gamma
    ...
    ```

Marker fields (shell-quoted ``key=value`` pairs):

``cmd``
    The ``bayes-compare`` arguments. The command runs under a pseudo-terminal in a
    fresh temporary directory (so default output folders never touch the
    checkout), one BLAS thread, ``COLUMNS`` set to ``width``. The cheap commands
    of one width share one process (``main(argv)`` of :data:`CLI_MODULE`, each in a
    folder of its own) so the package and PyMC are imported once, not per block;
    a lone command runs as ``python -m <CLI_MODULE> CMD``.
``python``
    ``python=previous`` instead of ``cmd``: run the ``python`` fenced block just
    before the marker (a Python API example) and show its output, no prompt.
``show``
    The command line printed after ``$ .venv/bin/bayes-compare`` (default: ``cmd``).
``keep``
    A regular expression; only output lines matching it are shown, and each
    run of dropped lines becomes one ``...`` line. Default: every line.
``cut``
    Lines longer than this are cut and end in `` ...`` (default 150).
``width``
    The terminal width the command sees (default 200, so tables are not wrapped).
``cost``
    ``cheap`` (seconds; the test suite checks these) or ``slow`` (minutes;
    ``make readme-check`` checks them).

``--check`` reruns each block and compares it with the README after masking
the numbers that vary from run to run (Monte Carlo estimates, timings,
ESS, z-scores) and collapsing table padding. Numbers that the program
derives without sampling stay exact: those following ``<=``, ``<``, ``>``,
``threshold``, ``alpha=``, ``over``, ``at`` or ``n=``, so thresholds,
alpha splits, check names, row sets and column headings must match exactly.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

#: The only reference to the package's layout: the module run as ``bayes-compare``.
CLI_MODULE = (
    "compare.interfaces.cli"
    if (ROOT / "compare" / "interfaces" / "cli.py").exists()
    else "compare.cli"
)


def doc_files() -> list[Path]:
    """README.md, then every Markdown page under docs/ (sorted): the files with blocks."""
    return [README, *sorted(DOCS.rglob("*.md"))]


PROMPT = "$ .venv/bin/bayes-compare "
MARKER = re.compile(r"^<!-- readme: (?P<fields>.*) -->\s*$")
FIELDS = {"cmd", "python", "show", "keep", "cut", "width", "cost"}

#: A number: optional sign, digits, decimals, exponent (1.2e-08, -25.36751, 7375, +1.27).
NUMBER = re.compile(r"(?<![\w.])[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?(?![\w.])", re.IGNORECASE)
#: Context after which a number is exact (derived, not sampled): thresholds, alpha, counts.
EXACT_BEFORE = re.compile(r"(<=|<|>=|>|\bthreshold|\balpha=?|\bover|\bat|\bn=|\bx)\s*$")
#: A rate or a duration after the number: masked whatever precedes it ("at 9009/s").
TIMING_AFTER = re.compile(r"\s*(/s|s\b|ms\b|min\b|sims/s|x\b)")
#: Table padding and rule characters that change width with the numbers in them.
RULES = re.compile(r"([━─═┃│┏┓┗┛┡┩┣┫┳┻╇╋└┘┌┐├┤┬┴┼ ])\1+")


@dataclass(frozen=True)
class Block:
    """One marked block of a Markdown file: its marker fields and its line span."""

    fields: dict[str, str]
    marker_line: int  # index of the marker comment
    start: int  # index of the opening fence
    end: int  # index of the closing fence
    code: str | None = None  # the Python block run for ``python=previous``

    @property
    def cmd(self) -> str:
        return self.fields.get("cmd") or "python (the example above)"

    @property
    def cost(self) -> str:
        return self.fields.get("cost", "slow")


def parse_blocks(lines: list[str], name: str = "README.md") -> list[Block]:
    """Every marker and the fenced block after it (``name`` is the file, for messages).

    Raises
    ------
    ValueError
        A marker without a ``cmd``, with an unknown field, or not followed by a fence.
    """
    blocks = []
    for i, line in enumerate(lines):
        match = MARKER.match(line)
        if not match:
            continue
        fields = dict(pair.split("=", 1) for pair in shlex.split(match["fields"]))
        unknown = set(fields) - FIELDS
        if ("cmd" in fields) == ("python" in fields) or unknown:
            raise ValueError(
                f"{name} line {i + 1}: marker needs cmd=... or "
                f"python=previous; known fields {sorted(FIELDS)}; "
                f"got {sorted(fields)}"
            )
        code = None
        if "python" in fields:
            close = next((j for j in range(i - 1, -1, -1) if lines[j].startswith("```")), None)
            open_ = (
                next((j for j in range(close - 1, -1, -1) if lines[j].startswith("```")), None)
                if close
                else None
            )
            if open_ is None or lines[open_].strip() != "```python":
                raise ValueError(
                    f"{name} line {i + 1}: python=previous needs a "
                    "```python block just before the marker"
                )
            code = "\n".join(lines[open_ + 1 : close]) + "\n"
        start = i + 1
        if start >= len(lines) or not lines[start].startswith("```"):
            raise ValueError(
                f"{name} line {i + 1}: the marker must be followed by a "
                f"``` fence on the next line, got {lines[start : start + 1]}"
            )
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ValueError(f"{name} line {start + 1}: fence never closed")
        blocks.append(Block(fields=fields, marker_line=i, start=start, end=end, code=code))
    return blocks


def _env(width: int) -> dict[str, str]:
    return dict(
        os.environ,
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        COLUMNS=str(width),
        TERM="xterm",
        NO_COLOR="1",
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )


def _clean(text: str, work: str) -> str:
    """Paths under the temporary working directory shown relative to it, and the
    program named as a user starts it (a help text names it as it was started)."""
    for prefix in (os.path.realpath(work) + os.sep, work + os.sep):
        text = text.replace(prefix, "")
    return text.replace(f"python -m {CLI_MODULE}", "bayes-compare")


def run_block(block: Block) -> tuple[list[str], float]:
    """Run the block's command; return the lines to show (prompt first) and its seconds."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="readme-") as work:
        argv = (
            [sys.executable, "-c", block.code]
            if block.code is not None
            else [sys.executable, "-m", CLI_MODULE, *shlex.split(block.cmd)]
        )
        returncode, text = _run_in_terminal(
            argv, cwd=work, env=_env(int(block.fields.get("width", "200")))
        )
        text = _clean(text, work)
    seconds = time.perf_counter() - t0
    if returncode not in (0, 1, 2):
        raise RuntimeError(f"`bayes-compare {block.cmd}` exited {returncode}:\n" + text[-3000:])
    return shape_output(block, text.splitlines()), seconds


#: Ends each command's output in a batch: "<SEP> index exit-code seconds".
SEP = "@@readme-block-done@@"
BATCH = """
import importlib, os, sys, time
sys.argv = ["bayes-compare"]  # the program name click shows in help texts
cli = importlib.import_module({module!r})
for i, argv in enumerate({argvs!r}):
    os.makedirs(str(i))
    os.chdir(str(i))  # each command in a folder of its own, as in a fresh process
    t0 = time.perf_counter()
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    sys.stdout.flush(); sys.stderr.flush()
    print(f"{sep} {{i}} {{code}} {{time.perf_counter() - t0:.3f}}", flush=True)
    os.chdir("..")
"""


def run_batch(blocks: list[Block]) -> list[tuple[list[str], float]]:
    """Run several ``cmd`` blocks of one width in one process (one import of the package
    and PyMC instead of one per block); each command's output as :func:`run_block`'s."""
    if len(blocks) == 1:
        return [run_block(blocks[0])]
    width = int(blocks[0].fields.get("width", "200"))
    argvs = [shlex.split(b.cmd) for b in blocks]
    code = BATCH.format(module=CLI_MODULE, argvs=argvs, sep=SEP)
    with tempfile.TemporaryDirectory(prefix="readme-") as work:
        returncode, text = _run_in_terminal([sys.executable, "-c", code], cwd=work, env=_env(width))
        pieces, current = [], []
        for line in text.splitlines():
            if line.startswith(SEP):
                index, exit_code, seconds = line.split()[1:]
                block = blocks[int(index)]
                shown = _clean("\n".join(current), os.path.join(work, index))
                if int(exit_code) not in (0, 1, 2):
                    raise RuntimeError(
                        f"`bayes-compare {block.cmd}` exited {exit_code}:\n" + shown[-3000:]
                    )
                pieces.append(
                    (shape_output(block, _clean(shown, work).splitlines()), float(seconds))
                )
                current = []
            else:
                current.append(line)
    if returncode != 0 or len(pieces) != len(blocks):
        raise RuntimeError(
            f"the batch of {len(blocks)} commands exited {returncode} after "
            f"{len(pieces)}:\n" + "\n".join(current)[-3000:]
        )
    return pieces


SPINNER = re.compile(r"^\s*[\u2800-\u28ff]")
ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-B])")


def _run_in_terminal(argv: list[str], *, cwd: str, env: dict[str, str]) -> tuple[int, str]:
    """Run under a pseudo-terminal, as a user at a shell sees it (the CLI squeezes piped
    output to 120 columns); return the exit code and the text, stdout and stderr in
    order, control sequences and progress-bar redraws removed."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    # The terminal's size, as a shell window of COLUMNS columns would report it.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, int(env["COLUMNS"]), 0, 0))
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    returncode = proc.wait()
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", errors="replace"))
    # A progress bar redraws its line after "\r": keep what was drawn last.
    lines = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n")]
    # A transient spinner line (Rich's status, erased on screen when the work ends).
    lines = [line for line in lines if not SPINNER.match(line)]
    return returncode, "\n".join(lines)


def shape_output(block: Block, out: list[str]) -> list[str]:
    """The prompt line, then the kept output lines, each gap as ``...``, long lines cut."""
    keep = re.compile(block.fields["keep"]) if "keep" in block.fields else None
    cut = int(block.fields.get("cut", "150"))
    shown = [] if block.code is not None else [PROMPT + block.fields.get("show", block.cmd)]
    dropped = False
    for line in out:
        line = line.rstrip()
        if keep is not None and not keep.search(line):
            # A dropped table rule or blank line is not worth a "..." of its own.
            dropped = dropped or bool(line.strip(" ━─┏┓┗┛┡┩┳┻╇└┘┌┐├┤┬┴┼"))
            continue
        if dropped:
            shown.append("...")
            dropped = False
        shown.append(line if len(line) <= cut else line[: cut - 4].rstrip() + " ...")
    if dropped:
        shown.append("...")
    return shown


def mask(line: str) -> str:
    """A line with its run-to-run numbers replaced by ``#`` and table padding collapsed."""
    pieces, last = [], 0
    for match in NUMBER.finditer(line):
        before = line[last : match.start()]
        pieces.append(before)
        exact = EXACT_BEFORE.search(line[: match.start()]) and not TIMING_AFTER.match(
            line[match.end() :]
        )
        pieces.append(match.group() if exact else "#")
        last = match.end()
    pieces.append(line[last:])
    return RULES.sub(r"\1", "".join(pieces)).strip()


def compare_lines(shown: list[str], fresh: list[str]) -> list[str]:
    """Unified diff of the masked lines; empty when they match."""
    a, b = [mask(x) for x in shown], [mask(x) for x in fresh]
    if a == b:
        return []
    return list(difflib.unified_diff(a, b, "shown (masked)", "fresh run (masked)", lineterm=""))


def merge(shown: list[str], fresh: list[str]) -> list[str]:
    """The fresh lines, except that a line equal to the README's once masked keeps the
    README's numbers: rewriting changes what drifted, not every estimate and timing.

    Only lines whose masked form is unique on both sides are kept from the README
    (table rows look alike once masked; those are taken from the fresh run).
    """
    a, b = [mask(x) for x in shown], [mask(x) for x in fresh]
    merged: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            merged.extend(fresh[j1:j2])
            continue
        for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
            unique = a.count(a[i]) == 1 and b.count(b[j]) == 1
            merged.append(shown[i] if unique else fresh[j])
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rerun the blocks, rewrite the files")
    mode.add_argument("--check", action="store_true", help="rerun and compare; exit 1 on drift")
    mode.add_argument("--list", action="store_true", help="list the marked blocks")
    parser.add_argument(
        "--cost", choices=("cheap", "slow", "all"), default="all", help="which blocks (default all)"
    )
    parser.add_argument("--match", default=None, help="only blocks whose cmd contains this")
    parser.add_argument(
        "--file",
        "--readme",
        dest="files",
        type=Path,
        action="append",
        default=None,
        help="only this Markdown file (repeatable; default README.md and docs/**/*.md)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="processes at once: the commands of one width share one, a "
        "Python example has its own (default 2)",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="with --write: take every number from the new run (default: "
        "keep the file's line where only numbers differ)",
    )
    args = parser.parse_args(argv)

    files = {}
    for path in args.files or doc_files():
        name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
        lines = path.read_text(encoding="utf-8").splitlines()
        blocks = [
            b
            for b in parse_blocks(lines, name)
            if args.cost in ("all", b.cost) and (args.match is None or args.match in b.cmd)
        ]
        files[path] = (name, lines, blocks)
    if args.list:
        for name, _, blocks in files.values():
            for b in blocks:
                print(f"{name}:{b.marker_line + 1:<5d} {b.cost:5s}  {b.cmd}")
        return 0

    # The commands run side by side (most of a block's time is a process importing PyMC).
    # Cheap commands of one width share a process; a Python example or a slow command
    # (a study, a cluster) has its own.
    groups: dict[object, list[tuple[Path, Block]]] = {}
    for path, (_, _, blocks) in files.items():
        for block in blocks:
            key = (
                ("cmd", block.fields.get("width", "200"))
                if block.code is None and block.cost == "cheap"
                else (path, block.start)
            )
            groups.setdefault(key, []).append((path, block))
    tasks = list(groups.values())
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = pool.map(lambda task: run_batch([block for _, block in task]), tasks)
        results = {
            (path, block.start): run
            for task, batch in zip(tasks, runs, strict=True)
            for (path, block), run in zip(task, batch, strict=True)
        }

    drift = 0
    for path, (name, lines, blocks) in files.items():
        # From the last block up, so rewriting one block keeps the earlier indices valid.
        for block in sorted(blocks, key=lambda b: b.start, reverse=True):
            fresh, seconds = results[(path, block.start)]
            shown = lines[block.start + 1 : block.end]
            if args.write:
                lines[block.start + 1 : block.end] = fresh if args.fresh else merge(shown, fresh)
                print(f"wrote  {name}: {block.cmd}  ({seconds:.1f} s)", file=sys.stderr)
                continue
            diff = compare_lines(shown, fresh)
            print(
                f"{'ok   ' if not diff else 'DRIFT'}  {name}: {block.cmd}  ({seconds:.1f} s)",
                file=sys.stderr,
            )
            if diff:
                drift += 1
                print("\n".join(diff), file=sys.stderr)
        if args.write and blocks:
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if drift:
        print(
            f"{drift} block(s) no longer match the program; "
            "rerun `python scripts/readme.py --write` and review the diff",
            file=sys.stderr,
        )
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
