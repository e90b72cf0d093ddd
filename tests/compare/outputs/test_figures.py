"""Each figure function on real saved runs, drawn from the saved files only."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.mcmc


@pytest.fixture(scope="session")
def saved_runs(builtin_runs):
    """The runs folder of `make report`'s `run --all` (tests/conftest.py): the figures
    are drawn from real saved runs, as `report` does.  Every figure of every topic is
    drawn once, by the site (test_report.py's test_every_figure_is_drawn_where_it_applies)."""
    return builtin_runs.runs


def test_saved_run_lines_draws_up_with_parameters(saved_runs):
    """draws.nc flattened in the JSON's parameter order reproduces the JSON's MCMC means."""
    from compare.outputs.figures import SavedRun

    run = SavedRun(saved_runs / "dirichlet-categorical")
    means = run.draws.reshape(-1, len(run.parameters)).mean(axis=0)
    np.testing.assert_allclose(means, run.doc["mcmc"]["mean"], rtol=1e-12)


def test_exact_density_overlay_is_the_exact_marginal(saved_runs):
    """The density kept for the overlay is the exact marginal's, and covers its mass."""
    from scipy import stats

    from compare.outputs.figures import SavedRun

    run = SavedRun(saved_runs / "beta-binomial")
    exact = run.group("exact")
    family = run.doc["exact"]["marginals"][0]
    marginal = getattr(stats, family["family"])(*family["args"], **family["kwds"])
    grid = exact["grid"].values[0]
    np.testing.assert_allclose(exact["density"].values[0], marginal.pdf(grid), rtol=1e-12)
    assert marginal.cdf(grid[-1]) - marginal.cdf(grid[0]) > 0.998


def test_kept_data_matches_the_builtin_data(saved_runs):
    from compare.outputs.figures import SavedRun
    from compare.topics import get_topic

    run = SavedRun(saved_runs / "dirichlet-categorical")
    kept = run.group("observed_data")["x"].values
    original = get_topic("dirichlet-categorical").builtin[0].load()
    assert list(kept) == [str(v) for v in original]


def test_one_group_is_read_alone_and_equals_the_whole_trees(saved_runs, tmp_path):
    """The page's data summary reads /observed_data without loading every draw; what it
    reads is the group the whole tree holds, a missing group or file is None or the
    tree's own error, as before."""
    from compare.outputs.figures import SavedRun

    for topic in ("dirichlet-categorical", "normal-inverse-gamma"):
        alone = SavedRun(saved_runs / topic)
        observed = alone.group("observed_data")
        assert "tree" not in alone.__dict__  # the draws were not loaded for it
        assert alone.group("observed_data") is observed  # read once
        whole = SavedRun(saved_runs / topic)
        whole.tree  # noqa: B018 - load the whole tree first: group() then reads from it
        assert observed.identical(whole.group("observed_data"))
        assert SavedRun(saved_runs / topic).group("no_such_group") is None
    with pytest.raises(FileNotFoundError):
        SavedRun(tmp_path).group("observed_data")


def _raises(run):
    raise RuntimeError("planted failure")


def _empty_frames(run):
    import matplotlib.pyplot as plt

    fig, axs = plt.subplots(1, 2)
    axs[0].set_title("a title, ticks, no data")
    return fig


@pytest.mark.parametrize(
    ("draw", "words"),
    [(_raises, "planted failure"), (_empty_frames, "drew axes but no data")],
    ids=["raises", "empty-axes"],
)
def test_a_failed_figure_is_reported_not_raised_or_written(draw, words, saved_runs, tmp_path):
    """A figure that raises, or draws frames with no data in them, is a "failed" result
    (the page's error box), never an exception or a PNG; a real figure of the same run
    is "ok"."""
    from compare.outputs.figures import FIGURE_KINDS, FigureKind, render

    run = saved_runs / "beta-binomial"
    out = render(FigureKind("planted", "Planted", "", draw), run, tmp_path / "planted.png")
    assert out["status"] == "failed" and words in out["error"]
    assert not (tmp_path / "planted.png").exists()
    drawn = render(FIGURE_KINDS["marginals"], run, tmp_path / "m.png")
    assert drawn["status"] == "ok" and (tmp_path / "m.png").is_file()


# --- what a reader sees: titles inside the figure, legends for every mark ----------
def _inside(fig, artist) -> bool:
    """The artist's drawn extent lies within the figure's (1 px slack)."""
    fig.canvas.draw()
    box, page = artist.get_window_extent(), fig.bbox
    return (
        box.x0 >= page.x0 - 1
        and box.x1 <= page.x1 + 1
        and box.y0 >= page.y0 - 1
        and box.y1 <= page.y1 + 1
    )


def _legend_labels(fig) -> list[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return [t.get_text() for legend in legends for t in legend.get_texts()]


def test_pair_title_fits_a_two_parameter_figure(saved_runs):
    """The narrowest pair plot (2 parameters) shows its whole title.

    Power: the one-line title this replaced is wider than the 3.6 in figure
    (checked below on the same figure)."""
    import matplotlib.pyplot as plt

    from compare.outputs.figures import SavedRun, pair

    fig = pair(SavedRun(saved_runs / "normal-inverse-gamma"))
    assert _inside(fig, fig._suptitle)
    fig.suptitle(fig._suptitle.get_text().replace("\n", " "), fontsize="medium")
    assert not _inside(fig, fig._suptitle)
    plt.close(fig)


def test_ess_evolution_legend_names_its_colours_and_the_gate(saved_runs):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from compare.outputs.figures import SavedRun, ess_evolution

    run = SavedRun(saved_runs / "normal-inverse-gamma")
    fig = ess_evolution(run)
    (legend,) = fig.legends
    entries = dict(
        zip([t.get_text() for t in legend.get_texts()], legend.legend_handles, strict=True)
    )
    gate = next(c["threshold"] for c in run.doc["checks"] if c["name"] == "ess_bulk")
    assert set(entries) == {"bulk ESS", "tail ESS", f"ESS gate ({gate:g})"}
    ax = fig.axes[0]
    drawn = {(to_hex(line.get_color()), line.get_linestyle()) for line in ax.lines}
    for handle in entries.values():  # each entry's colour and style is a drawn line's
        assert (to_hex(handle.get_color()), handle.get_linestyle()) in drawn
    # The gate line is at the run's threshold.
    flat = [line for line in ax.lines if np.ptp(line.get_ydata()) == 0]
    assert flat and np.allclose(flat[0].get_ydata(), gate)
    assert _inside(fig, legend)
    plt.close(fig)


def test_rank_legend_and_caption_match_what_is_drawn(saved_runs):
    """One legend entry per chain in the chain's colour; the caption describes the
    multi-chain test's marks and promises no envelope (none is drawn)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from compare.outputs.figures import FIGURE_KINDS, SavedRun, rank

    run = SavedRun(saved_runs / "normal-inverse-gamma")
    fig = rank(run)
    chains = run.draws.shape[0]
    labels = _legend_labels(fig)
    assert labels[:chains] == [f"chain {c}" for c in range(chains)]
    colours = [to_hex(h.get_color()) for h in fig.legends[0].legend_handles[:chains]]
    assert colours == [to_hex(line.get_color()) for line in fig.axes[0].lines[:chains]]
    assert not any(type(c).__name__ == "FillBetweenPolyCollection" for c in fig.axes[0].collections)
    caption = FIGURE_KINDS["rank"].caption
    assert "envelope" not in caption and "multi-chain" in caption
    plt.close(fig)


def test_marginals_legend_is_readable_and_complete(saved_runs):
    import matplotlib.pyplot as plt

    from compare.outputs.figures import LEGEND_FONTSIZE, SavedRun, marginals

    fig = marginals(SavedRun(saved_runs / "normal-inverse-gamma"))
    (legend,) = fig.legends
    assert min(t.get_fontsize() for t in legend.get_texts()) >= LEGEND_FONTSIZE >= 10
    assert {"MCMC (KDE)", "exact density", "exact mean", "MAP", "MLE"} <= set(_legend_labels(fig))
    assert _inside(fig, legend)
    plt.close(fig)


def test_sensitivity_legend_names_every_drawn_line(saved_runs):
    """Every labelled line on any panel is in the legend: normal-inverse-gamma's MAP
    path differs from the mean for sigma2 (second panel) but not for mu (first)."""
    import matplotlib.pyplot as plt

    from compare.outputs.figures import SavedRun, sensitivity

    fig = sensitivity(SavedRun(saved_runs / "normal-inverse-gamma"))
    labels = set(_legend_labels(fig))
    drawn = {
        a.get_label()
        for ax in fig.axes
        for a in (*ax.lines, *ax.collections)
        if not a.get_label().startswith("_")
    }
    assert "exact MAP" in drawn
    assert drawn <= labels, drawn - labels
    assert _inside(fig, fig.legends[0])
    plt.close(fig)
