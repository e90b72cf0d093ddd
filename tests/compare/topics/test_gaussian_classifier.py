"""The gaussian-classifier topic through the compare layer: data handling, bad input,
the MCMC predictive, and one real PyMC run that must agree."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA

import analytic.gaussian_classifier as gc
from compare.core.registry import InputError
from compare.interfaces.cli import main
from compare.topics import gaussian_classifier as gcl
from compare.topics import get_topic


def _main(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_builtin_data_as_documented():
    topic = get_topic("gaussian-classifier")
    for name, n, d, first in (("iris", 150, 4, "setosa"), ("wine", 178, 5, "class_0")):
        ds = topic.builtin_data(name)
        x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
        # holdout = 5: rows 5, 10, ... are held out.
        assert len(x) == n - n // 5 and x.test_y.size == n // 5 and x.x.shape[1] == d
        assert x.classes[0] == first and len(x.classes) == 3 and hyper["nu0"] == d + 2


def test_a_class_with_fewer_points_than_dimensions_is_reported_not_refused(rng):
    """No MLE covariance, no QDA; the posterior and the PyMC data are still proper."""
    from compare.core.data import table_from_arrays

    x = rng.normal(size=(30, 3))
    y = np.r_[np.zeros(27), np.ones(3)]
    topic = get_topic("gaussian-classifier")
    data, hyper = topic.prepare(table_from_arrays(x, y), topic.hyper({"holdout": 0}))
    assert "class '1' has 3 training point(s) in 3 dimensions" in data.notes["few_points"]
    exact = topic.solve(x=data, **hyper)
    assert exact.mle is None and np.all(np.isfinite(exact.posterior.mean))
    md = topic.model_data(x=data, **hyper)
    assert np.all(np.linalg.eigvalsh(md["init_Lambda"]) > 0)


def test_mcmc_predictive_with_constant_draws_is_the_qda_plug_in(rng):
    """Every draw at the MLE: the Monte Carlo predictive is QDA's P(C_k | x)."""
    x = rng.normal(size=(60, 2)) + np.repeat([[0, 0], [2, 1]], 30, axis=0)
    y = np.repeat([0, 1], 30)
    fit = gc.fit(x=x, labels=y, n_classes=2)
    quad = gc.quadratic_discriminant(
        priors=fit.priors, means=fit.means, covariances=fit.covariances
    )
    lam = np.linalg.inv(fit.covariances)  # test reference only
    s = 5
    got = gcl.mcmc_log_proba(
        pi=np.tile(fit.priors, (s, 1)),
        mu=np.tile(fit.means, (s, 1, 1)),
        lam=np.tile(lam, (s, 1, 1, 1)),
        x=x[:10],
    )
    np.testing.assert_allclose(got, quad.log_proba(x[:10]), rtol=0, atol=1e-10)


def test_unseen_class_in_python_api_is_an_input_error():
    pts = gcl.LabelledPoints(
        x=np.arange(12.0).reshape(6, 2) ** 1.5,
        labels=np.array(["a", "b", "a", "b", "c", "a"], dtype=object),
        features=("u", "v"),
        target="y",
        source="test",
    )
    topic = get_topic("gaussian-classifier")
    with pytest.raises(InputError, match="held-out row 5: class 'c' was unseen"):
        topic.prepare(pts, topic.hyper({"holdout": 5}))


BAD = [
    ("a,b,y\n1,2,1\n0,1,1\n3,1,1\n", [], ["one class only", "--set classes"]),
    ("a,y\n1,0\ninf,1\n2,1\n", [], ["line 3", "'inf'", "not a finite number"]),
    (
        "a,y\n1,0\n2,1\n3,0\n4,1\n5,2\n",
        ["--set", "holdout=5"],
        ["held-out row 5", "class '2'", "unseen at training time"],
    ),
    (
        "a,b,y\n1,2,0\n2,1,1\n3,5,0\n4,0,1\n",
        ["--set", "nu0=2", "--set", "holdout=0"],
        ["nu0 must be an integer > 2", "--set nu0=4"],
    ),
]


@pytest.mark.parametrize("text, extra, words", BAD)
def test_bad_input_is_one_clear_line_and_writes_nothing(tmp_path, capsys, text, extra, words):
    path = tmp_path / "data.csv"
    path.write_text(text)
    out_dir, json_path = tmp_path / "out", tmp_path / "result.json"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, err = _main(
            capsys,
            "run",
            "gaussian-classifier",
            "--data",
            str(path),
            "--target",
            "y",
            *extra,
            "--out",
            str(out_dir),
            "--json",
            str(json_path),
        )
    finally:
        os.chdir(cwd)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in err and out == ""
    assert not out_dir.exists() and not json_path.exists()
    assert not (tmp_path / "reports").exists()


@pytest.mark.mcmc
@pytest.mark.verdict
def test_csv_run_agrees_and_reports_the_lda_boundary(tmp_path, capsys, rng, test_alpha):
    """A user CSV, two classes in 2-D: the calibrated verdict agrees, and the JSON's
    two-class LDA boundary (w, b) reproduces scikit-learn's LDA on the training rows."""
    n = 80
    y = (rng.random(n) < 0.4).astype(int)
    x = rng.normal(size=(n, 2)) * np.where(y[:, None] == 1, [1.0, 0.5], [0.6, 1.2]) + np.where(
        y[:, None] == 1, [1.5, -1.0], [0.0, 0.0]
    )
    path = tmp_path / "points.csv"
    path.write_text("u,v,label\n" + "".join(f"{a:.17g},{b:.17g},{c}\n" for (a, b), c in zip(x, y)))
    code, out, err = _main(
        capsys,
        "run",
        "gaussian-classifier",
        "--data",
        str(path),
        "--target",
        "label",
        "--set",
        "holdout=4",
        "--alpha",
        f"{test_alpha}",
        "--json",
        "-",
        "--out",
        str(tmp_path / "run"),
    )
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "agree", err
    sec = doc["gaussian_classifier"]
    train = (np.arange(n) + 1) % 4 != 0
    sk = LDA(solver="lsqr").fit(x[train], y[train])
    w, b = (
        np.asarray(sec["linear_boundary"]["two_class"]["w"]),
        sec["linear_boundary"]["two_class"]["b"],
    )
    # scikit-learn's binary LDA models the second class: its coef_ is -w, its intercept -b.
    np.testing.assert_allclose(-w, sk.coef_[0], rtol=1e-8)
    assert -b == pytest.approx(sk.intercept_[0], rel=1e-8)
    p = sec["predictions"]
    assert len(p["rows"]) == n // 4 and p["max_abs_mcmc_minus_student_t"] < 0.05
    assert "held-out rows" in err and "LDA plug-in" in err
