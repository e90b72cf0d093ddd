"""The gaussian-process topic end to end: test inputs, type-II ML in prepare, bad
input, and a calibrated verdict through the CLI.  (The PyMC models against the exact
GP: tests/pymc_models/test_gaussian_process.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

import analytic.gaussian_process as agp
from compare.core.agreement import agreement_test
from compare.core.data import table_from_arrays
from compare.core.registry import InputError
from compare.core.runner import run
from compare.interfaces.cli import main
from compare.topics import gaussian_process as gpr
from compare.topics import get_topic

HYPER = dict(lengthscale=0.8, signal_sd=1.3, noise_sd=0.3, jitter=1e-8)
TOPIC = "gaussian-process"


def _table(rng, n=25, p=2):
    x = rng.uniform(0.0, 5.0, size=(n, p))
    y = np.sin(x[:, 0]) + rng.normal(0.0, 0.3, n)
    return table_from_arrays(x, y, features=tuple(f"x{j}" for j in range(p)), target="y")


def test_default_test_inputs():
    x = np.array([[0.2], [0.9], [0.5]])
    grid = gpr.default_test_inputs(x, np.zeros(3), points=4, kernel="rbf")
    np.testing.assert_allclose(grid[:, 0], np.linspace(0.2, 0.9, 4))
    # linear: f has p + 1 = 2 degrees of freedom: the range's ends.
    np.testing.assert_allclose(
        gpr.default_test_inputs(x, np.zeros(3), points=20, kernel="linear")[:, 0], [0.2, 0.9]
    )
    # Several inputs: distinct data rows, spread over the sorted target.
    x2 = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [3.0, 1.0]])
    rows = gpr.default_test_inputs(
        x2, np.array([5.0, 1.0, 5.0, 3.0, 0.0]), points=3, kernel="matern32"
    )
    assert len({tuple(r) for r in rows}) == len(rows) == 3
    np.testing.assert_array_equal(rows, x2[[4, 3, 0]])


def test_test_inputs_from_a_csv(tmp_path, rng):
    topic = get_topic(TOPIC)
    table = _table(rng)
    path = tmp_path / "test.csv"
    path.write_text("x1,x0\n1,2\n3,4\n0.5,0.25\n")  # columns found by name, any order
    x, hyper = topic.prepare(table, topic.hyper({"test_inputs": str(path)}))
    np.testing.assert_array_equal(x.x_test, [[2.0, 1.0], [4.0, 3.0], [0.25, 0.5]])
    assert gpr.structure(x, hyper) == {"kernel": "rbf", "input_dim": 2, "n_test": 3}
    with pytest.raises(InputError, match="at most 3 rows"):
        path.write_text("x0,x1\n" + "".join(f"{i},{i}\n" for i in range(4)))
        topic.prepare(table, topic.hyper({"test_inputs": str(path), "kernel": "linear"}))


def test_kernel_is_chosen_by_name():
    topic = get_topic(TOPIC)
    assert topic.hyper({"kernel": "matern32"}, parsed=False)["kernel"] == "matern32"
    with pytest.raises(
        InputError, match="kernel must be one of rbf, matern32, matern52, linear, got 'cubic'"
    ):
        topic.hyper({"kernel": "cubic"}, parsed=False)


def test_optimise_uses_the_type2_ml_values(rng):
    topic = get_topic(TOPIC)
    table = _table(rng, n=40, p=1)
    start = topic.hyper({"optimise": True, "kernel": "matern52"})
    x, hyper = topic.prepare(table, start)
    ref = agp.type2_ml(
        x=table.x,
        y=table.y,
        kernel="matern52",
        lengthscale=1.0,
        signal_sd=1.0,
        noise_sd=1.0,
        jitter=start["jitter"],
    )
    assert x.type2 is not None and x.type2.converged
    assert (hyper["lengthscale"], hyper["signal_sd"], hyper["noise_sd"]) == (
        ref.lengthscale,
        ref.signal_sd,
        ref.noise_sd,
    )


@pytest.mark.parametrize(
    "sets, words",
    [
        (["--set", "lengthscale=0"], ["lengthscale must be > 0, got 0"]),
        (["--set", "signal_sd=-2"], ["signal_sd must be > 0, got -2"]),
        (["--set", "kernel=cubic"], ["kernel must be one of", "'cubic'"]),
        (["--set", "test_points=0"], ["test_points must be >= 1"]),
    ],
)
def test_bad_input_exits_3_with_the_fix(sets, words, capsys, tmp_path):
    code = main(["run", TOPIC, *sets, "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 3 and all(w in err for w in words), err
    assert not (tmp_path / "r").exists()


def test_not_positive_definite_names_the_jitter(rng):
    """Noise and jitter too small for dense rbf inputs: a one-line error, before any sampling."""
    x = np.linspace(0.0, 1.0, 40)
    table = table_from_arrays(x, np.sin(x), features=("x",))
    topic = get_topic(TOPIC)
    hyper = topic.hyper({"noise_sd": 1e-50, "jitter": 1e-50, "test_points": 3})
    with pytest.raises(
        InputError,
        match=r"not positive definite.*jitter=1e-50; try a larger "
        r"jitter, e\.g\. jitter=1e-08",
    ):
        run(topic, data=table, hyper=hyper)


def test_a_wrong_noise_sd_would_be_caught(rng):
    """Power of the verdict's statistic for a planted mistake (noise_sd x 1.3 in the
    model): iid draws from that wrong posterior, as many as a default run's ESS (~8000),
    fail the agreement test at the default alpha.  The shift is ~0.3 posterior sds,
    a z of ~25 on 8000 draws against a threshold of ~5."""
    topic = get_topic(TOPIC)
    ds = topic.builtin_data("mcycle")
    x, hyper = topic.prepare(ds.load(), topic.hyper(dataset=ds))
    right = topic.solve(x=x, **hyper).posterior
    wrong = topic.solve(x=x, **{**hyper, "noise_sd": 1.3 * hyper["noise_sd"]}).posterior
    draws = wrong.sample(rng, 8000).reshape(4, 2000, -1)
    assert not agreement_test(draws, right, alpha=1e-4).passed
    assert agreement_test(right.sample(rng, 8000).reshape(4, 2000, -1), right, alpha=1e-4).passed


@pytest.mark.mcmc
@pytest.mark.verdict
def test_csv_run_agrees_and_reports_f_and_the_evidence(tmp_path, capsys, test_alpha, rng):
    """A user CSV through the CLI (target and feature columns named, an ignored column):
    verdict agree, PyMC's marginal likelihood equals the exact one, the f table."""
    x = np.sort(rng.uniform(-2.0, 2.0, 30))
    y = np.sin(2.0 * x) + rng.normal(0.0, 0.2, 30)
    path = tmp_path / "d.csv"
    path.write_text(
        "t,other,y\n" + "".join(f"{a!s},0,{b!s}\n" for a, b in zip(x.tolist(), y.tolist()))
    )
    code = main(
        [
            "run",
            TOPIC,
            "--data",
            str(path),
            "--target",
            "y",
            "--features",
            "t",
            "--set",
            "kernel=matern32",
            "--set",
            "test_points=8",
            "--set",
            "noise_sd=0.2",
            "--alpha",
            f"{test_alpha}",
            "--json",
            "-",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["verdict"] == "agree", doc["checks"]
    assert doc["parameters"] == [f"f[{i}]" for i in range(8)]
    checks = {c["name"]: c for c in doc["checks"]}
    assert checks["evidence"]["passed"]
    # PyMC's initial point of f is its conditional's mean, which is the exact mode;
    # the searches from two exact posterior draws make the check a test.
    assert checks["map"]["passed"] is True, checks["map"]
    assert "2 exact posterior draws" in checks["map"]["note"]
    # 8 means + 8 x (scale, skew, kurt) + 28 dependences + the spread test, all in
    # the Bonferroni count.
    assert len(doc["quantities"]) == 61 and doc["quantities"][-1]["name"] == "spread:location"
    section = doc["gaussian_process"]
    assert section["kernel"] == "matern32" and len(section["inputs"]) == 8
    np.testing.assert_allclose(np.ravel(section["inputs"]), np.linspace(x.min(), x.max(), 8))
    pred = doc["predictive"]  # the noisy predictive, in the regression topics' layout
    np.testing.assert_allclose(
        np.array(pred["exact"]["var"]) - np.array(section["exact"]["sd"]) ** 2, 0.2**2, rtol=1e-10
    )
    assert {"inputs", "mcmc", "map_plugin"} <= set(pred)
