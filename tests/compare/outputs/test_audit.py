"""``bayes-compare audit`` (compare/outputs/audit.py): a small real matrix on a real cluster.

Two topics x two methods on a real Dask LocalCluster with real sampling: the
cells that apply run and are saved as runs, the one that does not says why
(the topic declares step methods; Laplace needs gradients), ``--resume``
reruns nothing, and the page opens in headless Chromium with every link
resolving.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import dask
import pytest

from compare.accel.gc_thresholds import THRESHOLDS
from compare.core.cluster import DASK_SETTINGS, connect
from compare.interfaces.cli import main
from compare.outputs import audit, document
from tests.browser import load, start_chromium

TOPICS = ["beta-binomial", "bayes-optimal"]
METHODS = ["nutpie", "laplace"]


def _settings(dask_worker) -> tuple[bool, tuple[int, ...]]:
    """Whether Dask's statistical profiler runs in this worker (a ``Worker`` adds its
    periodic callback ``profile`` when ``distributed.worker.profile.enabled``), and
    the worker process's garbage-collection thresholds."""
    import gc

    return "profile" in dask_worker.periodic_callbacks, gc.get_threshold()


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit")
    # One worker process: the cells still run away from this process and come back as
    # bytes; a second worker added its imports and model loads and checked nothing more.
    client, cluster = connect(workers=1, scheduler=None)
    here = {key: dask.config.get(key) for key in DASK_SETTINGS}  # this process's, after
    try:
        settings = {**client.run(_settings), "here": here}
        first = audit.run_audit(topics=TOPICS, methods=METHODS, seeds=1, out=out, client=client)
        again = audit.run_audit(
            topics=TOPICS, methods=METHODS, seeds=1, out=out, client=client, resume=True
        )
    finally:
        client.close()
        cluster.close()
    return out, first, again, settings


def _by(rows):
    return {(r["topic"], r["method"]): r for r in rows}


@pytest.mark.mcmc
def test_the_matrix_runs_what_applies_and_says_why_not_elsewhere(audited):
    out, first, _, _ = audited
    rows = _by(first.rows)
    assert set(rows) == {(t, m) for t in TOPICS for m in METHODS}
    na = rows[("bayes-optimal", "laplace")]
    assert na["status"] == "n/a" and "discrete" in na["reason"] and na["run"] is None
    for key in [
        ("beta-binomial", "nutpie"),
        ("beta-binomial", "laplace"),
        ("bayes-optimal", "nutpie"),
    ]:
        r = rows[key]
        assert r["status"] == "ran", r
        loaded = document.load_run(out / r["run"])  # a complete saved run, digest checked
        assert loaded.doc["settings"]["method"] == key[1]
    assert rows[("beta-binomial", "nutpie")]["ess_per_second"] > 0
    laplace = rows[("beta-binomial", "laplace")]
    assert laplace["ess_per_second"] is None and laplace["khat"] is not None
    saved = json.loads((out / audit.AUDIT_JSON).read_text())
    assert saved["done"] == saved["cells"] == 4
    assert all(tuple(r) == audit.ROW_KEYS for r in saved["rows"])
    table = (out / audit.AUDIT_MD).read_text()
    assert "| topic | nutpie | laplace |" in table and "| bayes-optimal |" in table


def test_the_workers_run_without_dasks_profiler_and_with_our_gc_thresholds(audited):
    """compare.core.cluster.DASK_SETTINGS reach the worker processes (docs/speed.md):
    no profiler (Dask's default is on), and compare/accel/gc_thresholds.py's thresholds (Python's
    default is 700, 10, 10) by the preload."""
    import distributed
    import yaml

    shipped = yaml.safe_load((Path(distributed.__file__).parent / "distributed.yaml").read_text())
    assert shipped["distributed"]["worker"]["profile"]["enabled"] is True
    assert THRESHOLDS != (700, 10, 10)
    *_, settings = audited
    here = settings.pop("here")
    assert list(settings.values()) == [(False, THRESHOLDS)], settings

    # The process that started the cluster keeps Dask's own settings for its other clusters.
    def shipped_value(key: str):
        value = shipped
        for part in key.split("."):
            value = value[part]
        return value

    for key, value in here.items():
        expected = shipped_value(key)
        if isinstance(value, list):
            # A dashboard started in this process without bokeh (another test's cluster)
            # appends Dask's "missing bokeh" page to the scheduler's routes: Dask's doing.
            value = value[: len(expected)]
        assert value == expected, (key, value)
    assert here["distributed.worker.profile.enabled"] is True
    assert here["distributed.worker.preload"] == []


@pytest.mark.mcmc
def test_resume_reruns_nothing(audited):
    _, first, again, _ = audited
    assert [r["status"] for r in again.rows] == [
        "n/a" if r["status"] == "n/a" else "reused" for r in first.rows
    ]
    assert [r["verdict"] for r in again.rows] == [r["verdict"] for r in first.rows]


@pytest.mark.mcmc
def test_the_audit_page_in_a_browser(audited):
    out, first, _, _ = audited
    driver = start_chromium(1100, 900)
    try:
        driver.get_log("browser")
        load(driver, out / audit.AUDIT_PAGE)
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
        shown = driver.execute_script(
            "return Array.from(document.querySelectorAll('#heatmap tr[data-topic]'))"
            ".map(r => r.dataset.topic)"
        )
        assert shown == TOPICS
        hrefs = driver.execute_script(
            "return Array.from(document.querySelectorAll('#heatmap a[href]')).map(a => a.href)"
        )
        assert len(hrefs) == sum(r["status"] == "ran" for r in first.rows)
        for href in hrefs:
            assert Path(unquote(urlparse(href).path)).is_file(), href
        titles = driver.execute_script(
            "return Array.from(document.querySelectorAll('#heatmap span[title]')).map(s => s.title)"
        )
        assert any("discrete" in t for t in titles)
        assert driver.find_elements("css selector", "#ess-bars .bar-row[data-method='nutpie']")
    finally:
        driver.quit()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--methods", "hmc"], ["--methods hmc", "nutpie"]),
        (["--seeds", "0"], ["--seeds must be >= 1"]),
        (["--topics", "no-such-topic"], ["no-such-topic"]),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], ["not both"]),
    ],
)
def test_bad_audit_options_exit_3_before_anything_runs(args, words, tmp_path, capsys):
    code = main(["audit", "--out", str(tmp_path / "a"), *args])
    err = capsys.readouterr().err
    assert code == 3, err
    for word in words:
        assert word in err
    assert not (tmp_path / "a").exists()


def test_summary_without_a_saved_audit_is_bad_input(tmp_path, capsys):
    assert main(["audit", "--summary", "--out", str(tmp_path)]) == 3
    assert "run `bayes-compare audit` first" in capsys.readouterr().err


def test_an_unfinished_advi_fit_is_marked_in_its_row_and_cell():
    """vi_converged comes from the run's `approximation.optimisation`; the cell of a fit
    whose loss was still falling says so, a levelled-off or non-ADVI one does not."""

    def doc(optimisation):
        approx = {
            "max_abs_mean_error_sd": 233.65,
            "worst_sd_ratio": 0.109,
            "parameters": [{"coverage90": 0.0}],
            "kl": None,
            "kl_se": None,
            "khat": 7.5,
            "w2": None,
            "optimisation": optimisation,
        }
        return {"verdict": "disagree", "decided_by": "approx_mean", "approximation": approx}

    cell = audit.Cell("normal-known-variance", "advi", 0)
    stuck = audit.row(cell, doc({"converged": False}), status="ran")
    assert stuck["vi_converged"] is False and tuple(stuck) == audit.ROW_KEYS
    assert audit.cell_text(stuck) == "233.65 sd, x0.11, unfinished"
    level = audit.row(cell, doc({"converged": True}), status="ran")
    assert level["vi_converged"] is True and audit.cell_text(level) == "233.65 sd, x0.11"
    laplace = audit.row(audit.Cell("normal-known-variance", "laplace", 0), doc(None), status="ran")
    assert laplace["vi_converged"] is None and audit.cell_text(laplace) == "233.65 sd, x0.11"
