"""Shared fixtures.

Seeds come from fixtures, never from global state.  MCMC tests share one
model cache so each PyMC model compiles once per session.
"""

from __future__ import annotations

import os
import re
import zlib

import numpy as np
import pytest


def pytest_configure(config):
    # A developer's running local worker (`bayes-compare worker start`) must not
    # take the suite's runs: tests of the worker point this at their own file.
    os.environ["BAYES_COMPARE_WORKER_FILE"] = "off"


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


# --- how `make test` spreads the suite over pytest-xdist workers ---------------
#: A test module that defines a fixture of one of these scopes keeps its tests on
#: one worker, so that the fixture (a calibration study, the report tests'
#: `run --all`, the figure tests' tiny runs) is computed once.
_SHARED_SCOPE = re.compile(r"""scope\s*=\s*["'](module|package|session)["']""")


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadscope` (what `make test` asks for), one test per work unit.

    pytest-xdist's own scopes are whole modules (as `--dist loadfile`), which
    queued the 24 builtin-data runs of test_topics.py (10-300 s each) on one
    worker while the other idled.  Here each test is its own unit, sent to the
    worker that is free, except the tests of a module with a module- or
    session-scoped fixture, which stay one unit.  (`--dist loadgroup` with
    `xdist_group` markers would say the same, but pytest-xdist 3.8 names the
    group by rewriting `item._nodeid`, which pytest 9 no longer reads.)
    """
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling  # only under pytest-xdist

    root = config.rootpath
    shares: dict[str, bool] = {}

    def shares_a_fixture(path: str) -> bool:
        if path not in shares:
            try:
                shares[path] = bool(_SHARED_SCOPE.search((root / path).read_text()))
            except OSError:
                shares[path] = True  # unreadable: keep the module together, as before
        return shares[path]

    class OneTestPerUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if shares_a_fixture(path) else nodeid

    return OneTestPerUnit(config, log)
