"""The pytest plugin (compare/pytest_plugin.py) and compare.testing, run as a user runs them.

Each test starts pytest in a new process (pytester) on a user's test file:
the shipped example examples/test_poisson_gamma.py (a correct closed form
passes; a planted wrong one is caught), and a file whose model is Neal's
funnel in its centred form, which NUTS cannot sample without divergences, so
its check is inconclusive whatever the seed: the three policies (set by the
option or by a test's ``bayes_inconclusive`` marker) must each end it as
they say, never in a silent pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compare.pytest_plugin import seed_for

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "test_poisson_gamma.py"
#: Plugins of the environment these user runs do not use, left out: zarr's (installed
#: with zarr, it registers a marker and imports zarr and Hypothesis, 1.8 s) and
#: Hypothesis's (0.97 s); 2.4 CPU-s of each pytest subprocess.
UNUSED = ("-p", "no:cacheprovider", "-p", "no:zarr", "-p", "no:hypothesispytest")


def _pytest(pytester, *args):
    """pytest in a new process on the files made in ``pytester``'s folder."""
    return pytester.runpytest_subprocess(*UNUSED, *args)


FUNNEL = """
import pymc as pm
import pytest
import compare


def funnel(bayes_check):
    with pm.Model() as model:
        v = pm.Normal("v", 0.0, 3.0)
        pm.Normal("x", 0.0, pm.math.exp(v / 2), shape=9)
    bayes_check(model, compare.Exact(mean=[0.0], cov=[[9.0]], gaussian=True), var_names=["v"],
                draws=100, tune=100, chains=2)


def test_funnel_by_the_option(bayes_check):
    funnel(bayes_check)


@pytest.mark.bayes_inconclusive("xfail")
def test_funnel_xfail(bayes_check):
    funnel(bayes_check)


@pytest.mark.bayes_inconclusive("rerun")
def test_funnel_rerun(bayes_check):
    funnel(bayes_check)
"""


#: What a user sees when the wrong closed form fails (``--runxfail``), printed from the
#: xfailed test's report: pytest keeps the failure's report and only marks it xfailed,
#: so one pytest run shows both the file passing and the failure's text.
SHOW_XFAILED = """
def pytest_runtest_logreport(report):
    if report.when == "call" and hasattr(report, "wasxfail"):
        print("\\n=== xfailed: " + report.nodeid + "\\n" + report.longreprtext + "\\n=== end")
"""


@pytest.mark.mcmc
def test_the_example_passes_and_its_planted_bug_is_caught(pytester):
    pytester.makepyfile(test_poisson_gamma=EXAMPLE.read_text())
    pytester.makeconftest(SHOW_XFAILED)
    result = _pytest(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "bayes-compare: false-alarm budget 0.001 over 2 verdict tests: alpha 0.000333 each*",
            "*bayes-compare verdict tests*",
            "*disagree*max |z|*>*by agreement*test_a_wrong_closed_form_is_caught",
            "*agree*max |z|*<=*by agreement*test_posterior_matches_the_closed_form",
        ]
    )
    # What the user sees when the wrong closed form fails: the report, not a traceback.
    out = result.stdout.str()
    shown = out.split("=== xfailed: ", 1)[1].split("\n=== end", 1)[0]
    assert shown.startswith("test_poisson_gamma.py::test_a_wrong_closed_form_is_caught"), out
    assert "bayes-compare: DISAGREE (decided by agreement)" in shown
    assert re.search(r"flagged (loc|scale|skew|kurt):lam", shown) and "Holm p=" in shown
    assert "run page: " in shown and "During handling" not in shown


@pytest.mark.mcmc
def test_an_inconclusive_check_never_passes(pytester):
    """Each policy, from the option or from a test's marker, in one pytest run:
    ``fail`` fails, ``xfail`` xfails, ``rerun`` reruns with twice the draws and
    then fails; none passes."""
    pytester.makepyfile(test_funnel=FUNNEL)
    # A user who opted in to the accelerators (the example above runs without them).
    result = _pytest(pytester, "--bayes-inconclusive=fail", "-rx", "--bayes-accelerate")
    result.assert_outcomes(failed=2, xfailed=1)
    out = result.stdout.str()
    failures = {
        name: out.split(f"_ {name} _", 1)[1].split("\n_", 1)[0]
        for name in ("test_funnel_by_the_option", "test_funnel_rerun")
    }
    for name, text in failures.items():
        assert "bayes-compare: INCONCLUSIVE (decided by" in text, (name, out)
    assert "after one rerun with twice the draws (200 per chain)" in failures["test_funnel_rerun"]
    # ... and a seed of its own: nutpie's draws for one seed share their prefix, so the
    # first run's divergences would recur with certainty.
    assert "and a seed of its own (" in failures["test_funnel_rerun"]
    assert "rerun" not in failures["test_funnel_by_the_option"]
    result.stdout.fnmatch_lines(["XFAIL*test_funnel_xfail*"])


def test_a_bad_policy_on_a_test_is_a_usage_error(pytester):
    pytester.makepyfile(
        test_x="""
        import pytest
        @pytest.mark.bayes_inconclusive("retry")
        def test_x(bayes_check):
            pass
        """
    )
    result = _pytest(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bayes_inconclusive('retry')*one of fail, xfail, rerun*"])


def test_the_budget_is_split_over_the_verdict_tests_collected(pytester):
    pytester.makepyfile(
        test_three="""
        def test_a(bayes_alpha):
            assert bayes_alpha == 0.01 / (1.5 * 3)
        def test_b(bayes_alpha):
            pass
        def test_c(bayes_check):
            pass
        def test_not_a_verdict_test():
            pass
        """
    )
    result = _pytest(pytester, "--bayes-alpha", "0.01")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["bayes-compare: false-alarm budget 0.01 over 3 verdict tests*"])


def test_the_budget_is_split_over_the_verdict_tests_that_will_run(pytester):
    """Deselected tests (``-k``, ``-m``) take no share: 2 of 4 verdict tests run, and
    each gets half the budget (issue 61: -k selecting 4 of 28 split it over 28)."""
    pytester.makepyfile(
        test_four="""
        import pytest
        def test_kept_a(bayes_alpha):
            assert bayes_alpha == 0.01 / (1.5 * 2)
        def test_kept_b(bayes_alpha):
            assert bayes_alpha == 0.01 / (1.5 * 2)
        def test_dropped_c(bayes_alpha):
            pass
        @pytest.mark.skipme
        def test_kept_but_marked(bayes_alpha):
            pass
        """
    )
    pytester.makeini("[pytest]\nmarkers =\n    skipme: a mark to deselect")
    result = _pytest(pytester, "--bayes-alpha", "0.01", "-k", "kept", "-m", "not skipme")
    result.assert_outcomes(passed=2, deselected=2)
    result.stdout.fnmatch_lines(["bayes-compare: false-alarm budget 0.01 over 2 verdict tests*"])


def test_a_tests_share_is_spent_over_its_checks():
    """Issue 60: a test calling bayes_check several times shared one alpha. Now the
    calls spend it: share/2, share/4, ... (sum < share for any number of calls), or
    share/n each when the test declares n; within a call the rerun is charged."""
    from compare.pytest_plugin import call_alpha
    from compare.testing import RERUN_SHARE

    share = 1e-4
    undeclared = [call_alpha(share, k, None) for k in range(1, 40)]
    assert undeclared[:3] == [share / 2, share / 4, share / 8] and sum(undeclared) < share
    assert [call_alpha(share, k, 3) for k in (1, 2, 3)] == [share / 3] * 3
    assert 0 < RERUN_SHARE < 0.5  # the rerun is rare: most of a call's alpha is its first run
    with pytest.raises(ValueError, match="call counts from 1"):
        call_alpha(share, 0, None)


def test_a_bad_declared_count_is_a_usage_error(pytester):
    pytester.makepyfile(
        test_x="""
        import pytest
        @pytest.mark.bayes_checks(0)
        def test_x(bayes_check):
            pass
        """
    )
    result = _pytest(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bayes_checks takes the number of checks*got 0*"])


def test_a_bad_budget_is_a_usage_error(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    result = _pytest(pytester, "--bayes-alpha", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bayes-alpha must be in (0, 1), got 2.0*"])


def test_seeds_come_from_the_node_id_and_the_option():
    node = "tests/test_mine.py::test_posterior"
    assert seed_for(node, 0) == seed_for(node, 0)
    assert seed_for(node, 0) != seed_for(node, 1)
    assert seed_for(node, 0) != seed_for(node + "2", 0)


def test_the_accelerators_are_the_users_choice(pytester, monkeypatch):
    """Without ``--bayes-accelerate`` the plugin switches nothing on (numba as released);
    with it, the run has the command line's accelerators; a bad switch is a usage error."""
    pytester.makepyfile(
        test_x="""
def test_x():
    from compare import accel
    import numba.core.codegen as codegen
    module = codegen.JITCodeLibrary._finalize_final_module.__module__
    print("\\nSTATE", accel.enabled(), module.split(".")[0])
"""
    )
    off = _pytest(pytester, "-s").stdout.str()
    on = _pytest(pytester, "-s", "--bayes-accelerate").stdout.str()
    assert "STATE False numba" in off, off
    assert "STATE True compare" in on, on
    monkeypatch.setenv("BAYES_COMPARE_ACCEL", "2")
    bad = _pytest(pytester, "--bayes-accelerate")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--bayes-accelerate: BAYES_COMPARE_ACCEL must be 0*"])


def test_a_rerun_and_a_tests_later_checks_get_seeds_of_their_own():
    from compare.testing import derived_seed

    seeds = [derived_seed(12345, k) for k in range(50)] + [12345]
    assert len(set(seeds)) == len(seeds)  # none repeats the test's own seed
    assert derived_seed(12345, 3) == derived_seed(12345, 3)  # reproducible
    assert all(0 <= s < 2**32 for s in seeds)


@pytest.mark.mcmc
def test_a_model_that_cannot_start_fails_with_its_reason(pytester):
    """The plugin's failed test says why the model cannot start (the observed
    variable, the initial point, initval), not nutpie's backtrace (issue 61)."""
    pytester.makepyfile(
        test_pareto="""
        import numpy as np, pymc as pm, compare
        from scipy import stats

        def test_pareto(bayes_check):
            y = np.array([1.5, 2.7, 3.2, 0.4, 2.2])
            with pm.Model() as model:
                theta = pm.Pareto("theta", alpha=2, m=1)
                pm.Uniform("y", 0, theta, observed=y)
            exact = compare.Exact.from_scipy(stats.pareto(7, scale=y.max()))
            bayes_check(model, exact, var_names=["theta"], draws=200)
        """
    )
    result = _pytest(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*bayes-compare: the model cannot start: the observed y*"])
    assert "Stack backtrace" not in result.stdout.str()
