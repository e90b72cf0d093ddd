"""The check lines that the CLI and the Python API both print (compare.core.text)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from compare.core.checks import Check, decided_text
from compare.core.text import MAP_VECTOR_MAX, check_lines


def _run(checks, *, d=2, agreement_alpha=5e-05, settings_alpha=1e-04, flagged=()):
    """The parts of a RunResult that check_lines reads."""
    quantities = tuple(SimpleNamespace(name=f"q{i}") for i in range(7))
    agreement = SimpleNamespace(quantities=quantities, alpha=agreement_alpha, flagged=flagged)
    return SimpleNamespace(
        checks=tuple(checks),
        agreement=agreement,
        parameters=tuple(f"p{i}" for i in range(d)),
        settings=SimpleNamespace(alpha=settings_alpha),
        mcmc=SimpleNamespace(map=np.arange(d, dtype=float)),
        exact=SimpleNamespace(posterior=SimpleNamespace(mode=np.arange(d, dtype=float))),
    )


def test_each_check_has_its_line():
    run = _run(
        [
            Check("rhat", 1.0014, 1.01, True),
            Check("ess_bulk", 7375.2, 400.0, True),
            Check("divergences", 0, 0.5, True),
            Check("agreement", 1.28, 4.44, True),
            Check("evidence", 0.0936, 0.5, True, "|exact - SMC|"),
        ]
    )
    assert check_lines(run) == [
        "checks:",
        "  ok   rhat         1.0014 < 1.01 (worst rank-normalised split R-hat)",
        "  ok   ess_bulk     7375 > 400 (smallest over parameters)",
        "  ok   divergences  0 divergent transitions",
        "  ok   agreement    max |z| 1.28 <= 4.44 (Bonferroni over 7 quantities, alpha=5e-05)",
        "  ok   evidence     0.0936 vs threshold 0.5 (|exact - SMC|)",
    ]


def test_agreement_line_states_the_alpha_the_test_used():
    """Not the run's alpha: the runner splits it over the topic's extra tests."""
    line = check_lines(
        _run([Check("agreement", 1.0, 4.6, True)], agreement_alpha=5e-05, settings_alpha=1e-04)
    )[1]
    assert line.endswith("alpha=5e-05)")


def test_map_line_shows_the_vectors_or_names_them():
    check = Check("map", 6.7e-10, 0.01, True)
    cli = check_lines(_run([check]))[1]
    api = check_lines(_run([check]), map_vectors=False)[1]
    assert cli == "  ok   map          6.7e-10 sd <= 0.01 sd: PyMC [0. 1.] vs exact mode [0. 1.]"
    assert api == "  ok   map          6.7e-10 sd <= 0.01 sd (PyMC's MAP vs the exact mode)"
    long = check_lines(_run([check], d=MAP_VECTOR_MAX + 1))[1]
    assert long == "  ok   map          6.7e-10 sd <= 0.01 sd"


def test_a_failed_line_prints_the_inequality_that_failed():
    lines = check_lines(
        _run(
            [
                Check("rhat", 1.02, 1.01, False),
                Check("ess_bulk", 310.0, 400.0, False),
                Check("agreement", 4490.47, 4.72, False),
                Check("map", 0.2, 0.01, False),
                Check("divergences", 84.0, 0.0, False),
                Check("approx_mean", 0.31, 0.1, False, "largest |mean error|"),
            ]
        ),
        map_vectors=False,
    )[1:]
    assert lines[0].startswith("  FAIL rhat         1.0200 >= 1.01 ")
    assert lines[1].startswith("  FAIL ess_bulk     310 <= 400 ")
    assert lines[2].startswith("  FAIL agreement    max |z| 4490.47 > 4.72 ")
    assert lines[3].startswith("  FAIL map          2.0e-01 sd > 0.01 sd ")
    assert lines[4] == "  FAIL divergences  84 divergent transitions > 0 allowed"
    assert lines[5].startswith("  FAIL approx_mean  0.31 > 0.1 ")


def test_no_statistic_prints_the_note_and_flagged_quantities_follow():
    q = SimpleNamespace(name="mean:mu", estimate=1.5, expected=1.0, z=5.2, p_holm=1e-6)
    lines = check_lines(_run([Check("map", None, 0.01, None, "no interior mode")], flagged=(q,)))
    assert lines[1] == "  --   map          no interior mode"
    assert lines[2] == "  flagged mean:mu: MCMC 1.5 vs exact 1, z=+5.20, Holm p=1e-06"


def test_decided_text_lists_every_other_failed_check():
    assert decided_text("agreement") == "decided by agreement"
    both = decided_text("divergences", ("rhat", "ess_tail"))
    assert both == "decided by divergences; also failed: rhat, ess_tail"


def test_map_line_says_how_far_the_searches_started():
    check = Check(
        "map", 6.7e-10, 0.01, True, "the rule; searched from ...", brief="3 starts 0.5-2.3 sd away"
    )
    cli = check_lines(_run([check], d=MAP_VECTOR_MAX + 1))[1]
    api = check_lines(_run([check]), map_vectors=False)[1]
    assert cli == "  ok   map          6.7e-10 sd <= 0.01 sd (3 starts 0.5-2.3 sd away)"
    assert api == (
        "  ok   map          6.7e-10 sd <= 0.01 sd "
        "(PyMC's MAP vs the exact mode; 3 starts 0.5-2.3 sd away)"
    )


def test_a_flagged_quantity_is_shown_in_the_models_units():
    """Beside the whitened or PIT units, the parameters involved: MCMC posterior mean
    and sd against the exact ones (a pair for a dependence; names with commas)."""
    flagged = (
        SimpleNamespace(name="mean:lam", estimate=10.39, expected=0.0, z=10.4, p_holm=1e-20),
        SimpleNamespace(name="dep:w[0,1],lam", estimate=0.3, expected=0.0, z=5.1, p_holm=1e-5),
        SimpleNamespace(name="spread:location", estimate=3.0, expected=1.0, z=6.0, p_holm=1e-8),
    )
    run = _run([Check("agreement", 10.4, 4.4, False)], flagged=flagged)
    run.parameters = ("lam", "w[0,1]")
    run.exact.posterior.mean = np.array([3.2, 0.5])
    run.exact.posterior.cov = np.array([[0.25, 0.0], [0.0, 0.01]])
    run.mcmc.mean, run.mcmc.sd = np.array([4.1, 0.52]), np.array([0.26, 0.1])
    lines = check_lines(run)
    at = lines.index(next(x for x in lines if x.startswith("  flagged mean:lam")))
    assert lines[at + 1] == "    lam: MCMC mean 4.1 (exact 3.2), sd 0.26 (exact 0.5)"
    dep = lines.index(next(x for x in lines if x.startswith("  flagged dep:")))
    assert lines[dep + 1].startswith("    w[0,1]: MCMC mean 0.52 (exact 0.5)")
    assert lines[dep + 2].startswith("    lam: MCMC mean 4.1")
    assert lines[-1].startswith("  flagged spread:location")  # no single parameter
