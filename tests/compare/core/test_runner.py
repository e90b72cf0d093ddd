"""The verdict rule and the run document, without sampling."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import analytic.beta_binomial as bb
import analytic.pareto_uniform as pu
from compare.core.checks import CheckKind
from compare.core.defaults import DEFAULT, Settings
from compare.core.files import atomic_write
from compare.core.files import clean as _clean
from compare.core.runner import Check, decide, failing, map_check
from compare.outputs.document import summary_markdown


def _checks(**passed):
    names = ("rhat", "ess_bulk", "ess_tail", "divergences", "agreement", "map")
    return tuple(Check(n, 0.0, 1.0, passed.get(n, True)) for n in names)


def test_convergence_failure_is_inconclusive_even_when_agreement_fails():
    assert decide(_checks(rhat=False, agreement=False)) == ("inconclusive", "rhat")
    assert decide(_checks(divergences=False)) == ("inconclusive", "divergences")
    # The strongest failing gate decides: divergences before R-hat before ESS.
    both = _checks(rhat=False, divergences=False, ess_bulk=False)
    assert decide(both) == ("inconclusive", "divergences")
    assert decide(_checks(rhat=False, ess_tail=False)) == ("inconclusive", "rhat")


def test_every_failed_check_is_listed_the_strongest_gate_first():
    """A run with divergences and a high R-hat is decided by the divergences (the
    issue's run with 84 divergences said "decided by rhat"); the others are listed,
    gates strongest first, then checks that question trust, then the rest in order."""
    checks = _checks(rhat=False, divergences=False, ess_tail=False, agreement=False)
    assert failing(checks) == ("divergences", "rhat", "ess_tail", "agreement")
    assert decide(checks) == ("inconclusive", "divergences")
    unsure = (*_checks(map=False), Check("mixture", 1.0, 0.5, False, on_fail="inconclusive"))
    assert failing(unsure) == ("mixture", "map")
    assert decide(unsure) == ("inconclusive", "mixture")
    assert failing(_checks()) == ()
    assert (
        decide(_checks()) == ("agree", CheckKind.AGREEMENT) and CheckKind.AGREEMENT == "agreement"
    )
    with pytest.raises(ValueError, match="missing"):
        decide(_checks()[1:])


def test_agreement_or_map_failure_is_disagree():
    assert decide(_checks(agreement=False)) == ("disagree", "agreement")
    assert decide(_checks(map=False)) == ("disagree", "map")
    assert decide(_checks(map=None)) == ("agree", "agreement")
    assert decide(_checks()) == ("agree", "agreement")


def test_map_check_in_posterior_sds():
    exact = bb.solve(x=np.array([1.0, 0.0, 1.0, 1.0]), a=2.0, b=3.0)
    sd = math.sqrt(exact.posterior.cov[0, 0])
    close = map_check(exact, exact.posterior.mode + 0.005 * sd, DEFAULT)
    far = map_check(exact, exact.posterior.mode + 0.02 * sd, DEFAULT)
    assert close.passed and not far.passed
    assert far.statistic == pytest.approx(0.02, rel=1e-9)
    assert map_check(exact, None, DEFAULT).passed is False


def test_a_search_started_at_the_mode_is_not_informative_and_travel_is_said():
    exact = bb.solve(x=np.array([1.0, 0.0, 1.0, 1.0]), a=2.0, b=3.0)
    sd = math.sqrt(exact.posterior.cov[0, 0])
    mode = exact.posterior.mode
    at_mode = map_check(exact, mode, DEFAULT, start=mode + 0.001 * sd)
    assert at_mode.passed is None and at_mode.note.startswith("not informative")
    # A search that starts at the mode and leaves it (a wrong density's optimum) fails.
    left = map_check(exact, mode + 0.5 * sd, DEFAULT, start=mode)
    assert left.passed is False and left.statistic == pytest.approx(0.5)
    moved = map_check(exact, mode, DEFAULT, start=mode + 0.3 * sd)
    assert moved.passed is True and "initial point (0.3 sd away)" in moved.note
    wrong = map_check(exact, mode + 0.02 * sd, DEFAULT, start=mode + 0.3 * sd)
    assert wrong.passed is False


def test_searches_from_exact_draws_make_the_check_informative_and_count():
    """PyMC's initial point at the mode, but a search from an exact draw 1.5 sd away:
    informative; any converged search that ends off the mode fails the check; one
    that did not converge is left out and said."""
    exact = bb.solve(x=np.array([1.0, 0.0, 1.0, 1.0]), a=2.0, b=3.0)
    sd = math.sqrt(exact.posterior.cov[0, 0])
    mode = exact.posterior.mode
    tested = map_check(exact, mode, DEFAULT, start=mode, dispersed=[(mode + 1.5 * sd, mode)])
    assert tested.passed is True and "1 exact posterior draw (1.5 sd away)" in tested.note
    assert tested.brief == "2 starts 0-1.5 sd away"
    off = map_check(exact, mode, DEFAULT, start=mode, dispersed=[(mode + sd, mode + 0.05 * sd)])
    assert off.passed is False and off.statistic == pytest.approx(0.05)
    stalled = map_check(exact, mode, DEFAULT, start=mode + sd, dispersed=[(mode - sd, None)])
    assert stalled.passed is True and "1 search(es) from exact draws did not converge" in (
        stalled.note
    )
    assert stalled.brief == "1 start 1 sd away, 1 not converged"


def test_unconverged_map_search_is_inconclusive_not_disagree():
    """An optimiser that stops short (None) says nothing about the maths."""
    exact = bb.solve(x=np.array([1.0, 0.0, 1.0, 1.0]), a=2.0, b=3.0)
    stalled = map_check(exact, None, DEFAULT)
    checks = tuple(c for c in _checks() if c.name != "map") + (stalled,)
    assert decide(checks) == ("inconclusive", "map")


def test_boundary_mode_is_reported_not_tested():
    exact = pu.solve(x=np.array([3.0, 7.0]), scale=1.0, shape=4.0)
    check = map_check(exact, np.array([7.0 + 1e-3]), DEFAULT)
    assert check.passed is None and "boundary" in check.note


def test_settings_validate():
    with pytest.raises(ValueError, match="chains must be an integer >= 1"):
        Settings(chains=0)


def test_clean_makes_json_safe():
    doc = _clean(
        {
            "a": np.array([1.0, np.inf]),
            "b": np.float64(np.nan),
            "c": (np.int64(2),),
            "d": np.bool_(True),
        }
    )
    assert doc == {"a": [1.0, None], "b": None, "c": [2], "d": True}
    json.dumps(doc, allow_nan=False)


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    path = tmp_path / "x.json"
    atomic_write(path, "old")

    with pytest.raises(TypeError):
        atomic_write(path, object())  # type: ignore[arg-type]
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_summary_has_a_row_per_run():
    doc = {
        "topic": "t",
        "verdict": "agree",
        "decided_by": "agreement",
        "data": {"source": "builtin:x", "n": 3},
        "checks": [
            {"name": "rhat", "statistic": 1.001},
            {"name": "agreement", "statistic": 1.2, "threshold": 4.3},
            {"name": "map", "statistic": 1e-9},
        ],
        "mcmc": {"ess_bulk": [900.0], "ess_tail": [800.0], "divergences": 0},
        "timings": {"total": 0.2},
        "settings": {"chains": 4, "draws": 10, "tune": 5, "seed": 1, "alpha": 1e-4},
        "versions": {"pymc": "6"},
    }
    text = summary_markdown([doc, {**doc, "topic": "u"}])
    rows = [line for line in text.splitlines() if line.startswith(("| t ", "| u "))]
    assert len(rows) == 2 and "| 800 |" in rows[0] and "**agree**" in rows[0]


def test_map_distance_uses_the_iqr_when_the_sd_is_infinite():
    """Pareto with shape_n = 1.5 has no variance; the distance must not collapse to 0."""
    exact = pu.solve(x=np.array([3.0]), scale=1.0, shape=0.5)
    assert not np.isfinite(exact.posterior.cov[0, 0])
    check = map_check(exact, np.array([4.0]), DEFAULT)
    iqr = exact.posterior.marginal(0).ppf(0.75) - exact.posterior.marginal(0).ppf(0.25)
    assert check.statistic == pytest.approx(1.0 / (iqr / 1.349), rel=1e-12)
