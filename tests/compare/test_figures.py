"""Each figure function on tiny real runs (few draws), drawn from the saved files only."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytestmark = pytest.mark.mcmc

#: Tiny runs covering the figure kinds' cases: one parameter (no pair plot),
#: labelled data with a singular covariance, a regression (predictive) and a
#: Gaussian process (its function and kernel figures).
TINY_TOPICS = ("beta-binomial", "dirichlet-categorical", "linear-regression",
               "gaussian-process")
NOT_APPLICABLE = {("beta-binomial", "pair"), ("beta-binomial", "predictive"),
                  ("dirichlet-categorical", "predictive"),
                  *((t, k) for t in TINY_TOPICS[:3] for k in ("gp_function", "gp_kernel")),
                  # The classifiers' figures (test_report.py draws them for the classifiers).
                  *((t, k) for t in TINY_TOPICS
                    for k in ("decision_boundary", "calibration", "laplace_overlay"))}


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory, save_builtin_run):
    from compare.defaults import DEFAULT

    settings = dataclasses.replace(DEFAULT, draws=150, chains=2, tune=300, smc_chains=0,
                                   n_reference=20_000)
    base = tmp_path_factory.mktemp("tiny_runs")
    for name in TINY_TOPICS:
        save_builtin_run(name, base / name, settings)
    return base


@pytest.mark.parametrize("topic", TINY_TOPICS)
@pytest.mark.parametrize("kind", [k.name for k in __import__("compare.figures").figures.FIGURES])
def test_figure_draws_from_saved_files(kind, topic, tiny_runs):
    import matplotlib.pyplot as plt

    from compare.figures import FIGURE_KINDS, SavedRun

    run = SavedRun(tiny_runs / topic)
    fig = FIGURE_KINDS[kind].draw(run)
    if (topic, kind) in NOT_APPLICABLE:
        assert fig is None
        return
    assert fig is not None and fig.axes
    plotted = sum(len(ax.lines) + len(ax.collections) + len(ax.patches) for ax in fig.axes)
    assert plotted > 0, f"{kind} for {topic} drew nothing"
    plt.close(fig)


def test_saved_run_lines_draws_up_with_parameters(tiny_runs):
    """draws.nc flattened in the JSON's parameter order reproduces the JSON's MCMC means."""
    from compare.figures import SavedRun

    run = SavedRun(tiny_runs / "dirichlet-categorical")
    means = run.draws.reshape(-1, len(run.parameters)).mean(axis=0)
    np.testing.assert_allclose(means, run.doc["mcmc"]["mean"], rtol=1e-12)


def test_exact_density_overlay_is_the_exact_marginal(tiny_runs):
    """The density kept for the overlay is the exact marginal's, and covers its mass."""
    from scipy import stats

    from compare.figures import SavedRun

    run = SavedRun(tiny_runs / "beta-binomial")
    exact = run.group("exact")
    family = run.doc["exact"]["marginals"][0]
    marginal = getattr(stats, family["family"])(*family["args"], **family["kwds"])
    grid = exact["grid"].values[0]
    np.testing.assert_allclose(exact["density"].values[0], marginal.pdf(grid), rtol=1e-12)
    assert marginal.cdf(grid[-1]) - marginal.cdf(grid[0]) > 0.998


def test_kept_data_matches_the_builtin_data(tiny_runs):
    from compare.figures import SavedRun
    from compare.registry import get_topic

    run = SavedRun(tiny_runs / "dirichlet-categorical")
    kept = run.group("observed_data")["x"].values
    original = get_topic("dirichlet-categorical").builtin[0].load()
    assert list(kept) == [str(v) for v in original]


def test_render_reports_a_failure_instead_of_raising(tiny_runs, tmp_path):
    from compare.figures import FigureKind, render

    def broken(run):
        raise RuntimeError("planted failure")

    out = render(FigureKind("broken", "Broken", "", broken), tiny_runs / "beta-binomial",
                 tmp_path / "broken.png")
    assert out["status"] == "failed" and "planted failure" in out["error"]
    assert not (tmp_path / "broken.png").exists()
