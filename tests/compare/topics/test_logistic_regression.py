"""The logistic-regression topic through the compare layer: verdict, extras, bad input.

The verdict run uses the importance-sampling reference (d = 3).  The agreement
test treats the reference's moments as exact; their error (scrambled Sobol'
points, 2^18 draws) is ~4e-5 posterior sds across seeds, ~300x below MCMC's
~1/sqrt(ESS) ~ 0.01 (tests/analytic/test_logistic_regression.py bounds it at
1e-3 with 2^16 draws), so it inflates the z-scores' variance by < 1e-3.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy import special

from compare.core.data import table_from_arrays
from compare.core.runner import run
from compare.interfaces.cli import main
from compare.topics import get_topic

TOPIC = "logistic-regression"


def _table(rng, n=120, w=(0.3, -1.0, 0.8)):
    x = rng.standard_normal((n, len(w) - 1))
    p = special.expit(w[0] + x @ np.asarray(w[1:]))
    y = (rng.uniform(size=n) < p).astype(float)
    return table_from_arrays(x, y, features=tuple(f"x{j}" for j in range(x.shape[1])))


@pytest.mark.mcmc
@pytest.mark.verdict
def test_importance_reference_agrees_with_nuts(rng, test_settings):
    topic = get_topic(TOPIC)
    result = run(
        topic, data=_table(rng), hyper=topic.hyper({"prior_sd": 1.5}), settings=test_settings
    )
    ref = result.extra.sections["logistic"]["reference"]
    assert ref["method"] == "importance" and ref["khat"] < 0.7
    assert result.verdict == "agree", [(c.name, c.statistic, c.threshold) for c in result.checks]
    rows = result.extra.sections["laplace_error"]["rows"]
    assert rows[-1]["n"] == 120 and rows[0]["n"] == 20


@pytest.mark.mcmc
def test_separated_data_run_and_report(rng):
    """Perfectly separated classes: no MLE, but the MAP and posterior exist and a run works."""
    import dataclasses

    from compare.core.defaults import DEFAULT

    x = np.linspace(-2, 2, 30)
    table = table_from_arrays(x, (x > 0).astype(float), features=("x",))
    topic = get_topic(TOPIC)
    settings = dataclasses.replace(DEFAULT, draws=300, tune=300, chains=2, n_reference=20_000)
    result = run(topic, data=table, hyper=topic.hyper(), settings=settings)
    assert result.exact.mle is None
    assert result.extra.sections["logistic"]["separation"] == "complete"
    assert any("MLE does not exist" in line for line in result.extra.lines)


BAD = [
    # (csv text, extra arguments, words the one-line message must contain)
    ("x,y\n1,0\n2,1\n3,2\n", [], ["y[2] is 2.0", "0/1"]),
    ("x,y\n1,1\n2,1\n3,1\n", [], ["every label is 1", "both classes"]),
    ("x,y\n1,0\n2,inf\n", [], ["line 3", "not a finite number"]),
    ("x,y\n1,0\n2,1\n", ["--set", "prior_sd=0"], ["prior_sd must be > 0"]),
    ("x,y\n1,0\n2,1\n3,0\n4,1\n", ["--sizes", "2,500"], ["500 is more than the 4 rows"]),
    ("x,y\n1,0\n2,1\n3,0\n4,1\n", ["--sizes", "-3"], ["sizes must be > 0"]),
    ("x,y\n1,0\n2,1\n", ["--sizes", "2", "--set", "sizes=3"], ["--sizes or --set sizes"]),
]


@pytest.mark.parametrize("text, extra, words", BAD)
def test_bad_input_is_one_line_exit_3_nothing_written(tmp_path, capsys, text, extra, words):
    path = tmp_path / "data.csv"
    path.write_text(text)
    out_dir, json_path = tmp_path / "out", tmp_path / "r.json"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = main(
            [
                "run",
                TOPIC,
                "--data",
                str(path),
                "--target",
                "y",
                *extra,
                "--out",
                str(out_dir),
                "--json",
                str(json_path),
            ]
        )
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert not out_dir.exists() and not json_path.exists()
    assert not (tmp_path / "reports").exists()


def test_sizes_is_refused_by_topics_without_a_sweep(capsys):
    code = main(["run", "beta-binomial", "--sizes", "10,20"])
    err = capsys.readouterr().err
    assert code == 3 and "no size sweep" in err and len(err.strip().splitlines()) == 1


def test_sweep_sizes_shares_counts_and_floor():
    from compare.topics.logistic_regression import MIN_SWEEP_ROWS, sweep_sizes

    assert sweep_sizes(200, (0.25, 1.0, 50, 120)) == [50, 120, 200]
    assert sweep_sizes(200, (0.01,)) == [MIN_SWEEP_ROWS]


@pytest.mark.mcmc
def test_sizes_option_sets_the_laplace_sweep(tmp_path, capsys):
    """--sizes reaches the Laplace-error table (short chains: only the table is checked)."""
    import json

    json_path = tmp_path / "r.json"
    code = main(
        [
            "run",
            TOPIC,
            "--data",
            "builtin:simulated",
            "--sizes",
            "20,0.5,60",
            "--draws",
            "200",
            "--tune",
            "200",
            "--chains",
            "2",
            "--json",
            str(json_path),
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code in (0, 2), capsys.readouterr().err
    doc = json.loads(json_path.read_text())
    assert [r["n"] for r in doc["laplace_error"]["rows"]] == [20, 30, 60]
    assert doc["hyperparameters"]["sizes"] == [20.0, 0.5, 60.0]


@pytest.mark.mcmc
@pytest.mark.verdict
def test_one_weight_without_intercept_agrees(test_settings):
    """Issue 15: ``run logistic-regression --data builtin:simulated --set intercept=false``
    (d = 1, no closed-form marginal) crashed in the agreement test with AttributeError;
    its PIT is now its rank among the reference's exact draws."""
    topic = get_topic(TOPIC)
    ds = topic.builtin_data("simulated")
    result = run(
        topic,
        data=ds.load(),
        hyper=topic.hyper({"intercept": False}, dataset=ds),
        settings=test_settings,
    )
    assert result.parameters == ("w[x]",)
    names = [q.name for q in result.agreement.quantities]
    assert names == ["loc:w[x]", "scale:w[x]", "skew:w[x]", "kurt:w[x]"]
    assert all(np.isfinite(q.z) and q.null_sd > 0 for q in result.agreement.quantities)
    assert result.verdict == "agree", [(c.name, c.statistic, c.threshold) for c in result.checks]


def test_simulated_data_always_hold_both_classes(rng):
    """The null study and SBC simulate from the prior predictive; a draw of one class
    (which the topic refuses) is drawn again.  With prior_sd 5 and 6 rows about a third
    of the first draws are of one class (the code before returned them: the study
    crashed); every returned data set has both, and a data set with both classes the
    first time is the one the code before gave.  One row can never hold both: a clear
    error, not a loop."""
    from compare.topics.logistic_regression import simulate

    hyper = {"prior_sd": 5.0, "intercept": True}
    one_class_first = 0
    for r in range(300):
        seed = [int(rng.integers(2**32)), r]
        labels = simulate(np.random.default_rng(seed), 6, hyper).data.y
        assert 0 < labels.mean() < 1
        first = np.random.default_rng(seed)
        x = np.sort(first.standard_normal(6))
        w = 5.0 * first.standard_normal(2)
        y = (first.uniform(size=6) < special.expit(w[0] + w[1] * x)).astype(float)
        if 0 < y.mean() < 1:
            np.testing.assert_array_equal(labels, y)
        else:
            one_class_first += 1
    assert one_class_first > 30  # the case is exercised (expected ~100 of 300)
    with pytest.raises(ValueError, match="one class"):
        simulate(np.random.default_rng(0), 1, hyper)
