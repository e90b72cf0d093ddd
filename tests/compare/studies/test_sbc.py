"""Simulation-based calibration (compare/sbc.py, compare/sbc_exact.py, the sbc command).

Real parts: a real Dask LocalCluster of 2 single-threaded worker processes
(shared by the module), real nutpie fits, a real zarr store.

False-alarm rates and power (each statistical assertion):

* every SBC verdict here runs at family-wise alpha ``ALPHA`` = 1e-4 (Holm
  over the MCMC and exact tests), so a correct model fails by chance with
  probability <= 1e-4 per assertion, and the file's seven such assertions
  stay below the suite's 1e-3 budget; the uniformity test's own calibration
  is checked below (KS of 200 null p-values, false alarm 1e-3);
* power against the planted prior variance x2 (the simulator's prior is
  right, the PyMC model's is twice as wide) with the fixture below (the prior
  holds 96% of the posterior precision, so the model's posteriors are ~35%
  too wide in sd): 0.9995 at 300 simulations and alpha 1e-4, measured with
  exact posteriors in 2000 replications (``benchmarks/sbc.py``, item 4; the
  ECDF test alone: 0), so the planted-mismatch test misses it with
  probability ~5e-4;
* the exact side at 2,000 simulations against a prior sd passed where the
  variance belongs (prior_sd = 2, so the analytic prior variance is 16, not
  4, against 25 for the one observation): the dispersion statistic's
  expected z is about -10, so it is missed with probability < 1e-8.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy import special, stats

from compare.interfaces.cli import main
from compare.studies import sbc, sbc_exact
from compare.topics import get_topic

TOPIC = "normal-known-variance"
#: The prior dominates (precision 1 against 1/25 from one observation), so a
#: wrong prior variance shows in the ranks; see the module docstring.
HYPER = {"prior_mean": 0.5, "prior_sd": 1.0, "noise_sd": 5.0}
N_OBS = 1
ALPHA = 1e-4
SIMS = 120
#: Short fits: 4 chains x 250 draws (a converged fit's R-hat stays < 1.05).
SETTINGS = sbc.SbcSettings(n_obs=N_OBS, draws=250, tune=300, chains=4, alpha=ALPHA)


def _spec(bug=None, **changes) -> sbc.SbcSpec:
    topic = get_topic(TOPIC)
    return sbc.SbcSpec(
        topic=TOPIC,
        hyper=topic.hyper(HYPER),
        settings=dataclasses.replace(SETTINGS, **changes),
        bug=bug,
    )


@pytest.fixture(scope="module")
def client():
    client, cluster = sbc.connect(workers=2, scheduler=None)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def passing(client, tmp_path_factory):
    """A correct model's SBC run: 120 simulations on the shared cluster."""
    out = tmp_path_factory.mktemp("sbc") / "correct"
    return out, sbc.run_sbc(spec=_spec(), sims=SIMS, out=out, client=client)


# --- the uniformity test -------------------------------------------------------------
def test_uniformity_test_is_calibrated_and_sees_a_hump(rng):
    """Null p-values are uniform (KS over 200, false alarm 1e-3); a hump is caught.

    The hump is Phi(0.7 Z): ranks from posteriors 1/0.7 times too wide.  At
    n = 300 the dispersion statistic's expected z is -6.2 (sd 0.5) against a
    threshold of 4.1, so each is caught with probability > 0.9999 and 17 of
    20 is missed with probability < 1e-9 (binomial).
    """
    p = [
        sbc.uniformity_test(
            rng.uniform(size=200), side="mcmc", parameter="x", null_draws=4000
        ).p_ecdf
        for _ in range(200)
    ]
    assert stats.kstest(p, "uniform").pvalue > 1e-3
    p = [
        sbc.uniformity_test(
            rng.uniform(size=200), side="mcmc", parameter="x", null_draws=4000
        ).p_dispersion
        for _ in range(200)
    ]
    assert stats.kstest(p, "uniform").pvalue > 1e-3
    caught = sum(
        sbc.uniformity_test(
            special.ndtr(0.7 * rng.normal(size=300)), side="mcmc", parameter="x", null_draws=4000
        ).p
        <= ALPHA
        for _ in range(20)
    )
    assert caught >= 17


def test_ranks_of_exact_draws_are_exactly_uniform(rng):
    """Ranks among iid posterior draws, ties broken at random, give uniform u (KS, 1e-3)."""
    u = []
    for _ in range(400):
        theta = rng.normal(size=1)
        draws = rng.normal(size=(2, 30, 1)).round(1)  # rounded: ties happen
        theta = theta.round(1)
        u.append(sbc.rank_of(theta, draws, thin=None, rng=rng, ess=np.array([60.0]))["u"][0])
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_holm_matches_its_definition():
    p = np.array([0.01, 0.04, np.nan, 0.03])
    np.testing.assert_allclose(sbc.holm(p), [0.03, 0.06, np.nan, 0.06])


# --- the exact side --------------------------------------------------------------------
def _buggy_topic():
    """normal-known-variance whose analytic code passes prior_sd^2 as the prior sd."""
    import analytic.normal_known_variance as a_nkv
    from analytic import ExactAnswer

    def solve(*, x, prior_mean, prior_sd, noise_sd):
        post = a_nkv.update(
            suff=a_nkv.sufficient_stats(x=x),
            prior_mean=prior_mean,
            prior_sd=prior_sd**2,
            noise_sd=noise_sd,
        )
        return ExactAnswer(posterior=post, mle=None, log_evidence=math.nan, predictive=None)

    return dataclasses.replace(get_topic(TOPIC), solve=solve)


def test_exact_side_passes_for_the_analytic_code_and_fails_for_a_planted_bug():
    hyper = {**HYPER, "prior_sd": 2.0}
    right = sbc_exact.exact_side(
        get_topic(TOPIC), indices=range(2000), seed=11, n_obs=N_OBS, hyper=hyper
    )
    wrong = sbc_exact.exact_side(
        _buggy_topic(), indices=range(2000), seed=11, n_obs=N_OBS, hyper=hyper
    )
    assert right.available and right.method == "whitened"
    assert (
        sbc.uniformity_test(right.u[:, 0], side="exact", parameter="mu", null_draws=4000).p > ALPHA
    )
    assert (
        sbc.uniformity_test(wrong.u[:, 0], side="exact", parameter="mu", null_draws=4000).p <= ALPHA
    )


def test_exact_side_pit_for_a_non_gaussian_posterior():
    """normal-inverse-gamma goes through its t and inverse-gamma marginal CDFs."""
    topic = get_topic("normal-inverse-gamma")
    side = sbc_exact.exact_side(
        topic,
        indices=range(300),
        seed=3,
        n_obs=6,
        hyper=topic.hyper({"kappa0": 2.0, "alpha0": 3.0}),
    )
    assert side.method == "pit" and side.names == ("mu", "sigma2")
    p = [
        sbc.uniformity_test(side.u[:, j], side="exact", parameter=n, null_draws=4000).p
        for j, n in enumerate(side.names)
    ]
    assert min(sbc.holm(p)) > ALPHA


def test_exact_side_uses_the_same_pairs_as_the_mcmc_side(passing):
    """The store's theta of simulation i is what the exact side regenerates for i."""
    out, _ = passing
    stored = sbc.Store.open(out / sbc.STORE).read()["theta"]
    topic = get_topic(TOPIC)
    for i in (0, 57, SIMS - 1):
        theta, _, _ = sbc_exact.simulate(
            topic, index=i, seed=SETTINGS.seed, n_obs=N_OBS, hyper=topic.hyper(HYPER)
        )
        np.testing.assert_array_equal(stored[i], theta)


# --- MCMC SBC on the cluster --------------------------------------------------------------
def test_sbc_passes_for_the_correct_model(passing):
    out, result = passing
    assert result.verdict == sbc.PASS, result.note
    assert result.counts.as_dict() == {
        "requested": SIMS,
        "done": SIMS,
        "fitted": SIMS,
        "failed": 0,
        "unconverged": result.counts.unconverged,
    }
    assert result.counts.unconverged <= SIMS // 10
    assert {t.side for t in result.tests} == {"mcmc", "exact"}
    doc = json.loads((out / sbc.DOCUMENT).read_text())
    assert doc["verdict"] == "pass" and doc["sims"]["done"] == SIMS
    assert doc["throughput"]["workers"] == 2
    for fig in ("rank", "ecdf"):
        assert (out / doc["figures"][fig]).stat().st_size > 1000
    page = (out / sbc.PAGE).read_text()
    assert 'id="sbc-verdict">pass<' in page and 'src="figures/rank.png"' in page


def test_sbc_fails_for_a_planted_prior_variance_mismatch(client, tmp_path):
    result = sbc.run_sbc(
        spec=_spec(bug=("prior_var", 2.0)), sims=300, out=tmp_path, client=client, figures=False
    )
    assert result.verdict == sbc.FAIL
    assert result.decided_by == "uniformity:mcmc"
    exact = [t for t in result.tests if t.side == "exact"]
    assert exact and all(t.p_holm > ALPHA for t in exact)  # the analytic code is right


def test_interrupt_and_worker_kill_then_resume_lose_and_repeat_nothing(client, tmp_path):
    """Interrupted after two blocks, resumed while a worker process is killed.

    Dask reruns the dead worker's block elsewhere; the store keys every
    simulation by its index, so each index is written exactly once.
    """
    spec = _spec(seed=777)
    calls = []

    def interrupt(done, total, rate):
        calls.append(done)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sbc.run_sbc(
            spec=spec,
            sims=96,
            out=tmp_path,
            client=client,
            chunk=8,
            progress=interrupt,
            figures=False,
        )
    store = sbc.Store.open(tmp_path / sbc.STORE)
    before = store.read()
    kept = np.flatnonzero(before["done"])
    assert 0 < kept.size < 96

    pids = client.run(os.getpid)
    killed = []

    def kill_one(done, total, rate):
        # Late in the run: the survivor takes the dead worker's block at once, so
        # the test does not wait for the restarted worker to compile the model.
        if not killed and done >= kept.size + (96 - kept.size) // 2:
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    result = sbc.run_sbc(
        spec=spec,
        sims=96,
        out=tmp_path,
        client=client,
        resume=True,
        progress=kill_one,
        figures=False,
    )
    after = sbc.Store.open(tmp_path / sbc.STORE).read()
    assert killed
    assert after["done"].all() and after["done"].size == 96
    assert result.throughput["resumed_from"] == kept.size
    assert result.throughput["sims_this_run"] == 96 - kept.size
    assert result.counts.done == 96 and result.counts.failed == 0
    for name in ("theta", "rank", "u", "seconds"):  # nothing kept was redone
        np.testing.assert_array_equal(after[name][kept], before[name][kept])


# --- the command line: bad input ----------------------------------------------------------
def _main(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_sims_below_one_is_bad_input(capsys, tmp_path):
    code, err = _main(capsys, "sbc", TOPIC, "--sims", "0", "--out", str(tmp_path / "x"))
    assert code == 3 and "--sims must be >= 1, got 0" in err
    assert not (tmp_path / "x").exists()


def test_unreachable_scheduler_is_bad_input_within_seconds(capsys, tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.perf_counter()
    code, err = _main(
        capsys,
        "sbc",
        TOPIC,
        "--sims",
        "10",
        "--scheduler",
        f"tcp://127.0.0.1:{port}",
        "--out",
        str(tmp_path / "x"),
    )
    assert code == 3 and f"tcp://127.0.0.1:{port}" in err and "no Dask scheduler" in err
    assert time.perf_counter() - start < 15
    assert not (tmp_path / "x").exists()
    code, err = _main(
        capsys,
        "sbc",
        TOPIC,
        "--workers",
        "2",
        "--scheduler",
        "tcp://127.0.0.1:1",
        "--out",
        str(tmp_path / "x"),
    )
    assert code == 3 and "not both" in err


def test_resume_with_other_settings_is_bad_input(capsys, passing):
    out, _ = passing
    before = sorted(p.name for p in out.iterdir())
    stamp = (out / sbc.DOCUMENT).stat().st_mtime_ns
    code, err = _main(
        capsys,
        "sbc",
        TOPIC,
        "--sims",
        str(SIMS),
        "--out",
        str(out),
        "--resume",
        "--n",
        str(N_OBS),
        "--draws",
        "100",
    )
    assert code == 3 and "other settings" in err and "draws=250" in err
    code, err = _main(
        capsys, "sbc", "beta-binomial", "--sims", str(SIMS), "--out", str(out), "--resume"
    )
    assert code == 3 and "topic='normal-known-variance'" in err
    assert sorted(p.name for p in out.iterdir()) == before
    assert (out / sbc.DOCUMENT).stat().st_mtime_ns == stamp


def test_exact_only_runs_no_fits_and_needs_a_closed_form(capsys, tmp_path):
    code, err = _main(
        capsys,
        "sbc",
        TOPIC,
        "--sims",
        "3000",
        "--exact-only",
        "--out",
        str(tmp_path / "ok"),
        "--alpha",
        str(ALPHA),
    )
    assert code == 0
    doc = json.loads((tmp_path / "ok" / sbc.DOCUMENT).read_text())
    assert [t["side"] for t in doc["tests"]] == ["exact"] and doc["exact"]["sims"] == 3000
    assert not (tmp_path / "ok" / sbc.STORE).exists()
    code, err = _main(
        capsys,
        "sbc",
        "gaussian-mixture",
        "--sims",
        "10",
        "--exact-only",
        "--out",
        str(tmp_path / "no"),
    )
    assert code == 3 and "no closed-form posterior" in err
    assert not (tmp_path / "no").exists()


# --- the report ------------------------------------------------------------------------------
def test_topic_page_section_reads_the_sbc_folder(passing, tmp_path):
    out, _ = passing
    assert sbc.run_page_section(tmp_path) == {"sbc": None}
    run_dir = out.parent
    (run_dir / sbc.RUN_SUBDIR).mkdir(exist_ok=True)
    (run_dir / sbc.RUN_SUBDIR / sbc.DOCUMENT).write_text((out / sbc.DOCUMENT).read_text())
    section = sbc.run_page_section(run_dir)
    assert section["sbc"]["verdict"] == "pass"
    assert section["sbc_figures"]["rank"] == "sbc/figures/rank.png"
    assert [t["side"] for t in section["sbc_tests"]] == ["mcmc", "exact"]


def test_sbc_page_in_a_browser(passing):
    """Headless Chromium: no console error, figures load, links resolve, fits 390 px."""
    from urllib.parse import unquote, urlparse

    from tests.browser import load, start_chromium

    out, _ = passing
    driver = start_chromium(390, 844)
    try:
        load(driver, out / sbc.PAGE)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        broken = driver.execute_script(
            "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.getAttribute('src'))"
        )
        assert broken == [] and len(driver.find_elements("tag name", "img")) == 2
        for href in driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
        ):
            assert Path(unquote(urlparse(href).path)).exists(), href
        assert driver.find_element("id", "sbc-verdict").text.lower() == "pass"
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 1
    finally:
        driver.quit()


# --- the command line end to end: kill -9, then --resume ---------------------------------------
def test_cli_killed_mid_run_then_resumed(client, tmp_path):
    """The command, a client of the module's cluster (--scheduler), killed with SIGKILL.

    Its workers stay up (and keep their compiled model), as with any
    separately started cluster; the resumed command finishes the rest.
    """
    out = tmp_path / "sbc"
    exe = Path(sys.executable).parent / "bayes-compare"
    args = [
        str(exe),
        "sbc",
        TOPIC,
        "--sims",
        "96",
        "--scheduler",
        client.scheduler.address,
        "--out",
        str(out),
        "--n",
        str(N_OBS),
        "--draws",
        "250",
        "--tune",
        "300",
        "--alpha",
        str(ALPHA),
        "--seed",
        "4242",
    ]
    for k, v in HYPER.items():
        args += ["--set", f"{k}={v}"]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            try:
                if sbc.Store.open(out / sbc.STORE).read()["done"].any():
                    break
            except Exception:  # noqa: BLE001 - not created yet
                continue
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = sbc.Store.open(out / sbc.STORE).read()
    kept = np.flatnonzero(before["done"])
    assert 0 < kept.size < 96
    assert main(args[1:] + ["--resume"]) == 0  # the same command, in this process
    after = sbc.Store.open(out / sbc.STORE).read()
    assert after["done"].all() and after["done"].size == 96
    for name in ("theta", "rank", "u", "seconds"):
        np.testing.assert_array_equal(after[name][kept], before[name][kept])
    doc = json.loads((out / sbc.DOCUMENT).read_text())
    assert doc["throughput"]["resumed_from"] == kept.size
    assert doc["throughput"]["sims_this_run"] == 96 - kept.size


@pytest.mark.parametrize("n", [2, 7, 300])
def test_the_tabulated_tail_statistic_is_the_row_by_row_one(n):
    """The Monte Carlo null reads ``bdtr`` from a table (``sbc._tail_statistic``); one
    row of counts computes it directly.  The same values, bit for bit, at every row,
    and a planted off-by-one in the table's counts is seen."""
    z = sbc._grid(n)
    k = z.size + 1
    rng = np.random.default_rng(n)
    counts = np.cumsum(rng.multinomial(n, np.full(k, 1.0 / k), size=500), axis=1)[:, :-1]
    table = sbc._tail_statistic(counts, n, z)
    rows = np.array([sbc._tail_statistic(row, n, z) for row in counts])
    np.testing.assert_array_equal(table, rows)
    shifted = sbc._tail_statistic(np.minimum(counts + 1, n), n, z)
    assert not np.array_equal(shifted, rows)
