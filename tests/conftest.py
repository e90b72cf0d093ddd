"""Shared fixtures.

Seeds come from fixtures, never from global state.  MCMC tests share one
model cache so each PyMC model compiles once per session.
"""

from __future__ import annotations

import gc
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from compare import accel

# The suite is a process of ours: the accelerators of the command line (compare/accel/),
# in every pytest-xdist worker (each imports this file). Among them one BLAS thread,
# set in the environment before pytest-xdist starts its workers (they and every
# subprocess inherit it: spare OpenBLAS threads spin on the cores the other worker
# needs). With BAYES_COMPARE_ACCEL=0 (CI's second step) none of them.
accel.enable()
# The figures the tests draw are files, as the command line's (compare.interfaces.cli.main).
os.environ["MPLBACKEND"] = "Agg"


def pytest_configure(config):
    # A developer's running local worker (`bayes-compare worker start`) must not
    # take the suite's runs: tests of the worker point this at their own file.
    os.environ["BAYES_COMPARE_WORKER_FILE"] = "off"


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    """Freeze what the session made before pytest's last collection (its
    unraisable-exception plugin runs ``gc.collect()`` at the end): a worker that
    compiled dozens of models walked millions of objects there, 13 CPU-s over
    both workers of `make test`; the process ends next."""
    gc.freeze()


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's name: reproducible, different per test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


# --- the suite's false-alarm budget: bayes-compare's own pytest plugin ---------
# Every test marked `verdict` asserts that a real MCMC run agrees.  The plugin
# (compare/pytest_plugin.py, enabled by installing the package) splits the
# budget `--bayes-alpha` (1e-3) over the verdict tests and divides by its
# INFLATION (3: the realised false-alarm rate exceeds the nominal alpha by up to
# 1.4x because ESS is estimated, measured in benchmarks/verdict_study.py), so the
# chance of any false failure in a whole `make test` stays below 1e-3; the
# split is printed under pytest's header.  A test counts when it uses the
# plugin's `bayes_alpha` fixture: `test_alpha` below is that fixture, and a test
# marked `verdict` that does not use it is made to, so it is counted too.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    for item in items:
        names = getattr(item, "fixturenames", None)
        if item.get_closest_marker("verdict") and names is not None and "bayes_alpha" not in names:
            names.append("bayes_alpha")
    # Heaviest units of work first (HEAVY_FIRST, below); every worker collects the same order.
    order = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: _unit_order(item.nodeid, order[id(item)]))


@pytest.fixture(scope="session")
def test_alpha(bayes_alpha) -> float:
    """Family-wise alpha for each `verdict` test: its share of the suite's budget."""
    return bayes_alpha


#: Environment variable choosing the seed of the suite's runs (default: the
#: project's default seed): the builtin-agreement tests must pass at any seed,
#: e.g. `BAYES_COMPARE_TEST_SEED=7 make test`.
SEED_ENV = "BAYES_COMPARE_TEST_SEED"


@pytest.fixture(scope="session")
def test_seed() -> int:
    """The seed of `test_settings`: `BAYES_COMPARE_TEST_SEED`, else the default seed."""
    import os

    from compare.core.defaults import DEFAULT

    raw = os.environ.get(SEED_ENV, "").strip()
    if not raw:
        return DEFAULT.seed
    try:
        seed = int(raw)
    except ValueError:
        raise pytest.UsageError(
            f"{SEED_ENV} must be an integer in [0, 2**32), got {raw!r}; e.g. {SEED_ENV}=7"
        ) from None
    if not 0 <= seed < 2**32:
        raise pytest.UsageError(
            f"{SEED_ENV} must be an integer in [0, 2**32), got {seed}; e.g. {SEED_ENV}=7"
        )
    return seed


@pytest.fixture(scope="session")
def test_settings(test_alpha, test_seed):
    import dataclasses

    from compare.core.defaults import DEFAULT

    return dataclasses.replace(DEFAULT, alpha=test_alpha, seed=test_seed)


def pytest_report_header(config):
    import os

    seed = os.environ.get(SEED_ENV, "").strip()
    return f"{SEED_ENV}={seed}" if seed else None


@pytest.fixture(scope="session")
def save_builtin_run():
    """``save(topic_name, directory, settings)``: run a topic on its first builtin
    data set, save the run (JSON and draws) under ``directory``, return the result."""

    def save(topic_name, directory, settings):
        from compare.core.runner import run
        from compare.outputs.document import save_run
        from compare.topics import get_topic

        topic = get_topic(topic_name)
        ds = topic.builtin[0]
        result = run(
            topic,
            data=ds.load(),
            hyper=topic.hyper(dataset=ds),
            settings=settings,
            source=f"builtin:{ds.name}",
        )
        save_run(result, directory)
        return result

    return save


# --- `make report`'s runs, shared -----------------------------------------------------
@dataclass(frozen=True)
class BuiltinRuns:
    """What `bayes-compare run --all` gave: its exit code, one JSON document per topic
    (catalogue order), and the runs folder (``<runs>/<topic>/``)."""

    code: int
    docs: list[dict]
    runs: Path
    args: tuple[str, ...]

    def doc(self, topic: str) -> dict:
        return next(d for d in self.docs if d["topic"] == topic)

    def again(self) -> tuple[int, list[dict]]:
        """The same command again, in this process: (exit code, documents)."""
        return _cli_json_lines(self.args)


def _cli_json_lines(args) -> tuple[int, list[dict]]:
    import contextlib
    import io
    import json

    from compare.interfaces.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def builtin_runs(tmp_path_factory, test_alpha, test_seed) -> BuiltinRuns:
    """`bayes-compare run --all --json -`, as `make report` runs it, in this process.

    Every topic on its default builtin data at the suite's alpha and seed, 4
    chains x 1000 draws (half the default: the verdict's z-scores are
    ESS-based, so calibrated at any run length; a run short of effective
    draws is extended by the runner).  `--workers 1`: the topics run in this
    process, so their compiled models serve the other tests of this worker;
    the multi-process path is tests/compare/interfaces/test_cli.py's.  With
    every accelerator off (CI's `make test-accel-off`), `--workers 2`: no
    compiled-model cache, each topic compiles for its full time, and only the
    default-data verdicts use these runs.

    One run of every topic serves the default-data verdicts and the CLI and
    site tests (tests/compare/outputs/test_report.py) and the figure tests
    (test_figures.py): the modules naming this fixture run as one unit of
    work on one pytest-xdist worker (pytest_xdist_make_scheduler below), so it
    is computed once per suite.
    """
    runs = tmp_path_factory.mktemp("report") / "runs"
    args = (
        "run",
        "--all",
        "--workers",
        "1" if accel.setting() else "2",
        "--alpha",
        f"{test_alpha}",
        "--seed",
        f"{test_seed}",
        "--draws",
        "1000",
        "--out",
        str(runs),
        "--json",
        "-",
    )
    code, docs = _cli_json_lines(args)
    return BuiltinRuns(code=code, docs=docs, runs=runs, args=args)


# --- how `make test` spreads the suite over pytest-xdist workers ---------------
#: A test module that defines a fixture of one of these scopes keeps its tests on
#: one worker, so that the fixture (a calibration study, a browser) is computed once.
_SHARED_SCOPE = re.compile(r"""scope\s*=\s*["'](module|package|session)["']""")
#: Modules naming this session fixture (conftest's `builtin_runs`) form one unit
#: together, so that `run --all` runs once for all of them.
_SHARED_RUNS = "builtin_runs"

#: The costliest units of work, sent first (longest processing time first: the
#: last unit to finish is then a short one).  Node id prefixes, in the order of
#: their cost measured on a cold compile cache (2 idle cores); everything else
#: keeps pytest's order after them.
HEAVY_FIRST = (
    "tests/compare/outputs/test_report.py",  # with test_figures.py: `run --all` and the site
    "tests/compare/outputs/test_figures.py",
    "tests/compare/topics/test_topics.py::test_builtin_data_agree",
    "tests/compare/topics/test_gaussian_mixture.py",
    "tests/compare/studies/test_calibration.py",
    # Marked `study` (`make study` runs them; `make test` leaves them out): heavy there.
    "tests/compare/studies/test_calibration_structured.py",
    "tests/compare/studies/test_calibration_samplers.py",
    "tests/compare/outputs/test_run_folder.py::test_kill_9",
    "tests/compare/test_pytest_plugin.py",
    "tests/compare/topics/test_regression.py::test_planted",
    "tests/compare/interfaces/test_worker.py",
)


#: Sent in reverse catalogue order.  The report tests' `run --all` (one unit, on one
#: worker) compiles the topics' models in catalogue order while the other worker starts
#: on these, which use the same models: in the same order each worker waited at every
#: topic for the other's compile of it (measured 2026-12-03, a cold run: ~150 s of one
#: core idle, 58 s at the mixture alone); in opposite orders they compile different
#: models and meet once, in the middle.
REVERSED = ("tests/compare/topics/test_topics.py::test_builtin_data_agree",)


def _heavy_rank(nodeid: str) -> int:
    return next((i for i, p in enumerate(HEAVY_FIRST) if nodeid.startswith(p)), len(HEAVY_FIRST))


def _unit_order(nodeid: str, index: int) -> tuple[int, int]:
    """Sort key: heaviest prefix first, then collection order (reversed for REVERSED)."""
    return _heavy_rank(nodeid), -index if nodeid.startswith(REVERSED) else index


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadscope` (what `make test` asks for), one test per work unit.

    pytest-xdist's own scopes are whole modules (as `--dist loadfile`), which
    queued the 24 builtin-data runs of test_topics.py (10-300 s each) on one
    worker while the other idled.  Here each test is its own unit, sent to the
    worker that is free, except the tests of a module with a module- or
    session-scoped fixture, which stay one unit, and the modules sharing
    `builtin_runs`, which are one unit together.  Units go out in collection
    order, heaviest first (HEAVY_FIRST), not pytest-xdist's largest-count
    first.  (`--dist loadgroup` with `xdist_group` markers would say the
    same, but pytest-xdist 3.8 names the group by rewriting `item._nodeid`,
    which pytest 9 no longer reads.)
    """
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling  # only under pytest-xdist

    config.option.loadscopereorder = False
    root = config.rootpath
    scopes: dict[str, str | None] = {}

    def shared_scope(path: str) -> str | None:
        """The unit a module's tests all belong to, or None: one unit per test."""
        if path not in scopes:
            try:
                text = (root / path).read_text()
            except OSError:
                scopes[path] = path  # unreadable: keep the module together, as before
            else:
                scopes[path] = (
                    _SHARED_RUNS
                    if _SHARED_RUNS in text
                    else path
                    if _SHARED_SCOPE.search(text)
                    else None
                )
        return scopes[path]

    class OneTestPerUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return shared_scope(nodeid.split("::", 1)[0]) or nodeid

    return OneTestPerUnit(config, log)
