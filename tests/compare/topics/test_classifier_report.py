"""The classifiers' report sections: reliability tables and decision-boundary grids."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from compare.topics._classifier_report import (
    binary_log_proba,
    decision_grid,
    most_separating,
    reliability,
)


def test_reliability_of_calibrated_probabilities_is_within_its_binomial_error():
    """Labels drawn from the predicted probabilities: each bin's observed frequency is
    within 4.5 binomial SEs of its mean prediction (Bonferroni over 10 bins: a false
    failure has probability < 1e-4), and the ECE is small."""
    rng = np.random.default_rng(20261130)
    p = rng.uniform(size=20_000)
    truth = (rng.uniform(size=p.size) < p).astype(int)
    table = reliability(
        log_proba={"exact": binary_log_proba(p)},
        truth=truth,
        classes=("no", "yes"),
        rows="simulated",
    )
    method = table["methods"]["exact"]
    assert table["kind"] == "P(yes)" and sum(b["count"] for b in method["bins"]) == p.size
    for b in method["bins"]:
        assert abs(b["observed"] - b["mean_predicted"]) < 4.5 * b["se"], b
    assert method["ece"] < 0.02


def test_reliability_sees_overconfidence():
    """Power: probabilities pushed towards 0 and 1 (logit x 3) are caught by the table."""
    rng = np.random.default_rng(7)
    p = rng.uniform(0.05, 0.95, size=20_000)
    truth = (rng.uniform(size=p.size) < p).astype(int)
    over = special.expit(3 * special.logit(p))
    table = reliability(
        log_proba={"calibrated": binary_log_proba(p), "overconfident": binary_log_proba(over)},
        truth=truth,
        classes=("0", "1"),
        rows="simulated",
    )
    m = table["methods"]
    assert m["overconfident"]["ece"] > 5 * m["calibrated"]["ece"]
    assert m["overconfident"]["log_loss"] > m["calibrated"]["log_loss"]
    worst = max(
        abs(b["observed"] - b["mean_predicted"]) / b["se"] for b in m["overconfident"]["bins"]
    )
    assert worst > 10


def test_brier_and_log_loss_match_their_definitions():
    rng = np.random.default_rng(3)
    prob = rng.dirichlet(np.ones(3), size=50)
    truth = rng.integers(0, 3, size=50)
    table = reliability(
        log_proba={"m": np.log(prob)}, truth=truth, classes=("a", "b", "c"), rows="50 rows"
    )
    m = table["methods"]["m"]
    assert table["kind"] == "top-class confidence"
    brier = np.mean([np.sum((prob[i] - np.eye(3)[truth[i]]) ** 2) for i in range(50)])
    assert m["brier"] == pytest.approx(brier, rel=1e-12)
    assert m["log_loss"] == pytest.approx(-np.mean(np.log(prob[np.arange(50), truth])), rel=1e-12)


def test_decision_grid_slices_through_the_mean_and_keeps_probabilities():
    x = np.column_stack([np.linspace(-1, 1, 40), np.linspace(0, 4, 40), np.full(40, 2.0)])

    def logistic(rows):
        return binary_log_proba(special.expit(3 * rows[:, 0] - rows[:, 1] + rows[:, 2]))

    grid = decision_grid(
        x=x,
        features=("a", "b", "c"),
        classes=("0", "1"),
        predictors={"exact": logistic},
        shown=(0, 1),
        size=12,
    )
    assert grid["features"] == ["a", "b"] and grid["fixed"] == {"c": 2.0}
    p = np.asarray(grid["probability"]["exact"])
    assert p.shape == (12, 12, 2)
    a, b = np.meshgrid(grid["axes"][0], grid["axes"][1], indexing="ij")
    np.testing.assert_allclose(p[..., 1], special.expit(3 * a - b + 2.0), atol=1e-5)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=2e-5)
    assert grid["axes"][0][0] < -1 and grid["axes"][0][-1] > 1  # 5% beyond the data


def test_most_separating_picks_the_inputs_with_the_largest_f():
    """The ranking is scipy's one-way ANOVA F (the same statistic up to a constant)."""
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1, 2], 30)
    x = rng.normal(size=(90, 4)) + np.outer(y, [0.1, 2.0, 0.0, 1.0])
    f = [stats.f_oneway(*(x[y == c, j] for c in range(3))).statistic for j in range(4)]
    assert most_separating(x=x, y=y) == tuple(np.argsort(f)[::-1][:2])


@pytest.mark.parametrize("inputs", [1, 2])
def test_figures_draw_the_saved_sections(tmp_path, inputs):
    """The decision-boundary and calibration figures from a saved result.json and the
    data in draws.nc alone: one input (probability curves and a rug of the data) and
    two (boundaries over the grid, data coloured by class)."""
    import json

    import matplotlib.pyplot as plt
    import xarray as xr

    from compare.outputs.figures import SavedRun, calibration, decision_boundary

    rng = np.random.default_rng(5)
    x = rng.normal(size=(60, inputs))
    y = (x.sum(axis=1) + rng.normal(scale=0.5, size=60) > 0).astype(int)
    features = tuple(f"x{j}" for j in range(inputs))

    def model(rows):
        return binary_log_proba(special.expit(2 * rows.sum(axis=1)))

    doc = {
        "decision_boundary": decision_grid(
            x=x, features=features, classes=("0", "1"), predictors={"exact": model, "plugin": model}
        ),
        "calibration": reliability(
            log_proba={"exact": model(x)}, truth=y, classes=("0", "1"), rows="60 rows"
        ),
    }
    (tmp_path / "result.json").write_text(json.dumps(doc))
    observed = xr.Dataset(
        {**{f: ("obs", x[:, j]) for j, f in enumerate(features)}, "label": ("obs", y.astype(float))}
    )
    xr.DataTree.from_dict({"/observed_data": observed}).to_netcdf(tmp_path / "draws.nc")
    run = SavedRun(tmp_path)
    for draw in (decision_boundary, calibration):
        fig = draw(run)
        drawn = sum(len(ax.lines) + len(ax.collections) for ax in fig.axes)
        assert drawn >= 2, draw.__name__
        plt.close(fig)
