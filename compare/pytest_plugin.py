"""The pytest plugin of bayes-compare (enabled by installing the package: ``pytest11``).

A suite-wide false-alarm budget for calibrated checks of PyMC models against
closed forms (:func:`compare.testing.assert_agrees`):

- ``--bayes-alpha A`` (default 1e-3): the chance that a whole correct suite
  fails by chance is at most A. It is split evenly (Bonferroni) over the
  verdict tests that will run (after ``-k``, ``-m`` and any deselection),
  those that use the ``bayes_check`` or ``bayes_alpha`` fixture, and divided
  by :data:`INFLATION`: the realised
  tail of one check at its threshold is at most 1.2x nominal within its
  Monte Carlo error (docs/verdict.md, "Calibrated at its own thresholds"),
  and 1.5 covers that error. A test's share is spent over its checks, not
  given to each: the k-th ``bayes_check`` call of a test (k = 1, 2, ...)
  gets ``share / 2^k`` -- or ``share / n`` each when the test declares
  ``@pytest.mark.bayes_checks(n)`` -- so any number of calls stays inside
  the share; within a call the rerun after an inconclusive check is
  charged too (:data:`compare.testing.RERUN_SHARE`), so an
  inconclusive-then-fail is a false alarm inside the budget. The split is
  printed under the header.
- ``--bayes-inconclusive=fail|xfail|rerun`` (default ``rerun``: once, with
  twice the draws, then fail): an inconclusive check never passes silently.
  ``@pytest.mark.bayes_inconclusive("xfail")`` sets one test's policy (a
  model known to be hard for the sampler, say) whatever the option says.
- ``--bayes-seed S`` (default 0): every check's seed derives from the test's
  node id and S, so a failure reproduces with the same command, and another
  S gives fresh draws.
- The terminal summary lists every verdict test: its verdict, max |z|
  against its threshold, the check that decided (a MAP-decided disagree
  shows an agreeing max |z|), the smallest posterior-mean shift (in sds) the
  check would have caught with probability 0.9, and time.
- ``--bayes-accelerate`` (off by default): switch bayes-compare's accelerators
  on in this pytest run (:mod:`compare.accel`: numba, xarray, SciPy and nutpie
  patched for speed, as ``bayes-compare`` runs; ``bayes-compare doctor`` lists
  them). Without it the plugin changes nothing in the process: no patch, no
  environment variable, no import hook (``tests/compare/test_guest.py``).

The fixture::

    def test_posterior(bayes_check):
        bayes_check(model, exact, var_names=["lam"])
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from compare.testing import INCONCLUSIVE_POLICIES  # light: no PyMC until a check runs

#: The realised false-alarm rate of one check over its nominal alpha, bounded (see the module).
INFLATION = 1.5
#: The fixtures that make a test a verdict test.
VERDICT_FIXTURES = ("bayes_check", "bayes_alpha")
_COUNT = pytest.StashKey[int]()
_PROPERTY = "bayes_compare"
#: The marker that sets one test's inconclusive policy (over ``--bayes-inconclusive``).
POLICY_MARKER = "bayes_inconclusive"
#: The marker by which a test declares how many checks it makes (its share split evenly).
CHECKS_MARKER = "bayes_checks"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bayes-compare", "calibrated checks of PyMC models (bayes-compare)")
    group.addoption(
        "--bayes-alpha",
        type=float,
        default=1e-3,
        help="suite-wide false-alarm budget of the verdict tests (default 1e-3)",
    )
    group.addoption(
        "--bayes-inconclusive",
        choices=INCONCLUSIVE_POLICIES,
        default="rerun",
        help="an inconclusive check: fail, xfail, or rerun once with twice the draws (default)",
    )
    group.addoption(
        "--bayes-accelerate",
        action="store_true",
        default=False,
        help="switch bayes-compare's accelerators on in this run (patches numba, xarray, "
        "SciPy for speed; `bayes-compare doctor` lists them); off by default",
    )
    group.addoption(
        "--bayes-seed",
        type=int,
        default=0,
        help="mixed into every check's seed (derived from the test's node id); default 0",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("bayes_accelerate"):  # the user's choice for their own process
        from compare import accel  # light: the accelerators' table and switch

        try:
            accel.enable()
        except accel.SettingError as err:
            raise pytest.UsageError(f"--bayes-accelerate: {err}") from None
    budget = config.getoption("bayes_alpha")
    if not 0.0 < budget < 1.0:
        raise pytest.UsageError(f"--bayes-alpha must be in (0, 1), got {budget}; e.g. 1e-3")
    config.stash[_COUNT] = 0
    config.addinivalue_line(
        "markers",
        f"{POLICY_MARKER}(policy): this test's inconclusive checks fail, xfail or rerun "
        "(over --bayes-inconclusive)",
    )
    config.addinivalue_line(
        "markers",
        f"{CHECKS_MARKER}(n): this test makes n bayes_check calls; its share of "
        "--bayes-alpha is split evenly over them (else share/2, share/4, ...)",
    )


def _policy(item: pytest.Item) -> str:
    """The test's inconclusive policy: its marker's, else ``--bayes-inconclusive``."""
    marker = item.get_closest_marker(POLICY_MARKER)
    if marker is None:
        return str(item.config.getoption("bayes_inconclusive"))
    policy = marker.args[0] if marker.args else marker.kwargs.get("policy")
    if policy not in INCONCLUSIVE_POLICIES:
        raise pytest.UsageError(
            f"@pytest.mark.{POLICY_MARKER}({policy!r}) on {item.nodeid}: the policy must be "
            f'one of {", ".join(INCONCLUSIVE_POLICIES)}, e.g. @pytest.mark.{POLICY_MARKER}("xfail")'
        )
    return str(policy)


def _is_verdict_test(item: pytest.Item) -> bool:
    return any(name in getattr(item, "fixturenames", ()) for name in VERDICT_FIXTURES)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # Last: after ``-k``, ``-m`` and every other plugin's deselection, so the budget
    # is split over the verdict tests that will run, not those collected.
    config.stash[_COUNT] = sum(1 for item in items if _is_verdict_test(item))
    for item in items:  # a bad policy or count is a usage error before anything runs
        _policy(item)
        _declared_checks(item)


def _alpha_each(config: pytest.Config) -> float:
    return float(config.getoption("bayes_alpha")) / (INFLATION * max(config.stash[_COUNT], 1))


def pytest_report_collectionfinish(
    config: pytest.Config, start_path: Any, items: list[pytest.Item]
) -> list[str]:
    n = config.stash.get(_COUNT, 0)
    if not n:
        return []
    return [
        f"bayes-compare: false-alarm budget {config.getoption('bayes_alpha'):g} over {n} "
        f"verdict test{'s' * (n != 1)}: alpha {_alpha_each(config):.3g} each "
        f"(Bonferroni, /{INFLATION:g} for estimated ESS; spent over each test's "
        f"checks and reruns); inconclusive: "
        f"{config.getoption('bayes_inconclusive')}; seed {config.getoption('bayes_seed')}"
    ]


def call_alpha(share: float, call: int, declared: int | None) -> float:
    """The alpha of a test's ``call``-th check (from 1): alpha spending over its
    checks -- ``share / n`` each when it declared n, else ``share / 2^call``
    (share/2, share/4, ...: any number of calls stays inside the share)."""
    if call < 1:
        raise ValueError(f"call counts from 1, got {call}")
    return share / declared if declared is not None else share / 2.0**call


def _declared_checks(item: pytest.Item) -> int | None:
    """The number of checks a test declares with ``@pytest.mark.bayes_checks(n)``."""
    marker = item.get_closest_marker(CHECKS_MARKER)
    if marker is None:
        return None
    n = marker.args[0] if marker.args else None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.{CHECKS_MARKER} takes the number of checks "
            f"the test makes, an integer >= 1; got {n!r}"
        )
    return n


def seed_for(nodeid: str, base: int) -> int:
    """The seed of a test's checks: from its node id and ``--bayes-seed`` (reproducible)."""
    return (zlib.crc32(nodeid.encode()) + 1_000_003 * int(base)) % (2**63 - 1)


@pytest.fixture(scope="session")
def bayes_alpha(request: pytest.FixtureRequest) -> float:
    """This test's share of ``--bayes-alpha`` (a family-wise alpha for one check)."""
    return _alpha_each(request.config)


@pytest.fixture
def bayes_check(
    request: pytest.FixtureRequest, bayes_alpha: float, tmp_path: Any
) -> Callable[..., Any]:
    """``bayes_check(model, exact, var_names=[...], **options)``: fail unless they agree.

    Calls :func:`compare.testing.assert_agrees` with this test's alpha and
    seed and its inconclusive policy (its ``bayes_inconclusive`` marker's,
    else ``--bayes-inconclusive``); returns the
    :class:`compare.CheckResult` when the verdict is ``agree``. A failure
    shows the flagged quantities (z and Holm p-values), every check and the
    saved run page.
    """
    from compare.testing import (  # PyMC when a check runs
        DisagreementError,
        assert_agrees,
        derived_seed,
    )

    config = request.config
    seed = seed_for(request.node.nodeid, config.getoption("bayes_seed"))
    policy = _policy(request.node)
    declared = _declared_checks(request.node)
    calls = 0

    from compare.core.registry import InputError  # light: a dataclass module, no PyMC

    def check(model: Any, exact: Any, **options: Any) -> Any:
        nonlocal calls
        # The test's first check has the test's seed; each later one a seed of its own.
        own = seed if calls == 0 else derived_seed(seed, calls)
        calls += 1
        if declared is not None and calls > declared:
            pytest.fail(
                f"this test declared @pytest.mark.{CHECKS_MARKER}({declared}) and made "
                f"check {calls}; raise the declared number",
                pytrace=False,
            )
        alpha = call_alpha(bayes_alpha, calls, declared)
        start = time.perf_counter()
        record: dict[str, Any] = {"verdict": "error", "max_abs_z": None, "threshold": None}
        failure = None
        try:
            result = assert_agrees(
                model,
                exact,
                alpha=alpha,
                seed=options.pop("seed", own),
                inconclusive=policy,
                page_dir=tmp_path / "bayes-compare-report",
                **options,
            )
            record.update(_figures(result))
        except DisagreementError as err:
            record.update(_figures(err.result))
            failure = str(err)
        except InputError as err:  # a model that cannot start, bad settings: its message
            failure = f"bayes-compare: {err}"
        finally:
            record["seconds"] = time.perf_counter() - start
            request.node.user_properties.append((_PROPERTY, json.dumps(record)))
        if failure is not None:  # outside the except: the report alone, no traceback chain
            pytest.fail(failure, pytrace=False)
        return result

    return check


def _figures(result: Any) -> dict[str, Any]:
    from compare.core.checks import CheckKind  # light: loaded by the check that made result

    agreement = next((c for c in result.checks if c.name == CheckKind.AGREEMENT), None)
    power = result.run.power  # computed once per run, not a whole document
    return {
        "verdict": result.verdict,
        "decided_by": result.decided_by,
        "max_abs_z": None if agreement is None else agreement.statistic,
        "threshold": None if agreement is None else agreement.threshold,
        # What the test could have caught (compare/core/power.py), in posterior sds.
        "power_mean_shift_sd": None if power is None else power.mean_shift_sd,
    }


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    rows = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", ()):
                if name == _PROPERTY:
                    rows.append((report.nodeid, json.loads(value)))
    if not rows:
        return
    terminalreporter.section("bayes-compare verdict tests")
    for nodeid, r in sorted(rows):
        z, limit = r.get("max_abs_z"), r.get("threshold")
        shown = (
            f"max |z| {z:.2f} {'<=' if z <= limit else '>'} {limit:.2f}"
            if z is not None and limit is not None
            else "max |z| -"
        )
        # The check that decided: a MAP-decided disagree shows an agreeing max |z|.
        decided = f"by {r['decided_by']}" if r.get("decided_by") else ""
        # The smallest mean shift caught with probability 0.9: what an agree is worth.
        shift = r.get("power_mean_shift_sd")
        catches = f"catches {shift:.2g} sd" if shift is not None else ""
        terminalreporter.write_line(
            f"{r['verdict']:>12s}  {shown:24s} {decided:16s} {catches:16s} "
            f"{r['seconds']:7.1f} s  {nodeid}"
        )
