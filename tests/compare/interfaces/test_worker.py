"""Runs away from the command's process: the local worker, and a user's Dask scheduler.

Real parts: a real ``bayes-compare worker start`` (a detached LocalCluster on
127.0.0.1 with TLS), a real Dask ``LocalCluster`` standing for a user's
scheduler, real nutpie sampling. What is checked:

- a run sent away gives the same draws as a run in the command's own process
  (same seed, same compiled model: identical summaries, to the bit);
- the local worker keeps the compiled model warm (it has it in memory after
  one run), refuses connections without its credentials, and is not used when
  the command's code differs from the code it loaded;
- the files come back as bytes and are written by the command where it was
  asked (the worker's folder is never the output folder);
- bad addresses and option clashes are bad input (exit 3) before anything runs.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from compare.core import cluster as cluster_mod
from compare.core.defaults import DEFAULT
from compare.interfaces import cli, cli_run
from compare.outputs import document

TOPIC = "beta-binomial"


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compare.interfaces.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=600,
    )


def _summary(run_dir: Path) -> dict:
    doc = json.loads((run_dir / "result.json").read_text())
    return {k: doc[k] for k in ("verdict", "mcmc", "exact", "checks", "parameters")}


@pytest.fixture(scope="module")
def worker_env(tmp_path_factory):
    """A started local worker (one process) with its own file; stopped at the end."""
    home = tmp_path_factory.mktemp("worker")
    env = {**os.environ, "BAYES_COMPARE_WORKER_FILE": str(home / "worker.json")}
    started = _cli("worker", "start", "--workers", "1", "--idle-minutes", "20", env=env, cwd=home)
    assert started.returncode == 0, started.stderr
    yield env, home
    _cli("worker", "stop", env=env, cwd=home)


@pytest.mark.mcmc
def test_a_run_on_the_local_worker_equals_a_run_here_and_keeps_its_model(worker_env, tmp_path):
    env, home = worker_env
    status = json.loads(_cli("worker", "status", "--json", env=env, cwd=home).stdout)
    assert status["running"] and status["same_code"] and status["models_in_memory"] == 0
    assert stat.S_IMODE(Path(env["BAYES_COMPARE_WORKER_FILE"]).stat().st_mode) == 0o600

    away = _cli("run", TOPIC, "--out", str(tmp_path / "away"), env=env, cwd=tmp_path)
    assert away.returncode == 0, away.stderr
    assert "note:" not in away.stderr  # it did not fall back to computing here
    status = json.loads(_cli("worker", "status", "--json", env=env, cwd=home).stdout)
    assert status["models_in_memory"] == 1  # the compiled model stayed warm

    here = _cli("run", TOPIC, "--no-worker", "--out", str(tmp_path / "here"), env=env, cwd=tmp_path)
    assert here.returncode == 0, here.stderr
    assert _summary(tmp_path / "away") == _summary(tmp_path / "here")
    # The printed table is the same whichever process sampled.
    assert away.stdout.splitlines()[:8] == here.stdout.splitlines()[:8]
    # The folder is a complete saved run: it is reused by the next identical command.
    again = _cli("run", TOPIC, "--out", str(tmp_path / "away"), env=env, cwd=tmp_path)
    assert "reused the saved run" in again.stdout


def test_the_local_worker_refuses_a_client_without_its_credentials(worker_env):
    from distributed import Client

    env, _ = worker_env
    found = cluster_mod.read_worker(Path(env["BAYES_COMPARE_WORKER_FILE"]))
    assert found is not None and found.address.startswith("tls://127.0.0.1:")
    with pytest.raises((OSError, TimeoutError, TypeError)):
        Client(found.address.replace("tls://", "tcp://"), timeout=2)


def _pages(pid: int) -> dict[int, int | str]:
    """Every TCP port the worker's processes listen on, with what an HTTP request for the
    scheduler's info page gets there (a status code, or the error's name)."""
    import urllib.error
    import urllib.request

    import psutil

    root = psutil.Process(pid)
    found: dict[int, int | str] = {}
    for proc in [root, *root.children(recursive=True)]:
        for conn in proc.net_connections(kind="tcp"):
            if conn.status != psutil.CONN_LISTEN:
                continue
            assert conn.laddr.ip == "127.0.0.1", conn  # nothing beyond this machine
            url = f"http://127.0.0.1:{conn.laddr.port}/info/main/workers.html"
            try:
                with urllib.request.urlopen(url, timeout=3) as answer:
                    found[conn.laddr.port] = answer.status
            except urllib.error.HTTPError as err:
                found[conn.laddr.port] = err.code
            except (OSError, ValueError) as err:  # the TLS ports: no HTTP there
                found[conn.laddr.port] = type(err).__name__
    return found


def test_the_local_worker_serves_no_page_to_other_users(worker_env):
    """No dashboard unless asked: the scheduler's info pages (its logs, the tasks' errors
    with paths and data) are served nowhere, and port 8787 (a user's own Dask) is free."""
    env, _ = worker_env
    found = cluster_mod.read_worker(Path(env["BAYES_COMPARE_WORKER_FILE"]))
    assert found is not None and found.dashboard is None
    pages = _pages(found.pid)
    assert pages and 8787 not in pages
    assert 200 not in pages.values(), pages


def test_a_dashboard_asked_for_is_served_and_who_can_read_it_is_said(tmp_path):
    """Power of the test above: with ``--dashboard`` the same request gets the page."""
    env = {**os.environ, "BAYES_COMPARE_WORKER_FILE": str(tmp_path / "worker.json")}
    started = _cli(
        "worker", "start", "--workers", "1", "--dashboard", "--idle-minutes", "5",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert started.returncode == 0, started.stderr
        assert "every account on this machine can read it" in " ".join(started.stdout.split())
        found = cluster_mod.read_worker(Path(env["BAYES_COMPARE_WORKER_FILE"]))
        assert found is not None and found.dashboard is not None
        assert found.dashboard.startswith("http://127.0.0.1:")
        assert 200 in _pages(found.pid).values()
        status = json.loads(_cli("worker", "status", "--json", env=env, cwd=tmp_path).stdout)
        assert status["dashboard"] == found.dashboard
    finally:
        _cli("worker", "stop", env=env, cwd=tmp_path)


def test_a_worker_that_loaded_other_code_is_not_used(worker_env, tmp_path, monkeypatch, capsys):
    env, _ = worker_env
    real = Path(env["BAYES_COMPARE_WORKER_FILE"])
    doc = json.loads(real.read_text())
    doc["code"] = "0" * 64  # as if the sources were edited after it started
    fake = tmp_path / "worker.json"
    fake.write_text(json.dumps(doc))
    found = cluster_mod.read_worker(fake)
    assert found is not None
    monkeypatch.setenv("BAYES_COMPARE_WORKER_FILE", str(fake))
    assert cli_run._open_cluster(None, use_worker=True) is None
    assert "runs other code" in capsys.readouterr().err
    # The same file with the right code is used: the refusal above came from the code.
    monkeypatch.setenv("BAYES_COMPARE_WORKER_FILE", str(real))
    opened = cli_run._open_cluster(None, use_worker=True)
    assert opened is not None and opened.keep_models
    opened.close()
    assert cli_run._open_cluster(None, use_worker=False) is None


def test_a_file_left_by_a_dead_worker_is_removed(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = cluster_mod.LocalWorker(
        address="tls://127.0.0.1:1",
        pid=int(proc.stdout),
        workers=1,
        code="x",
        started=0.0,
        idle_timeout=0.0,
        tls={"ca": "", "cert": "", "key": ""},
    )
    path = tmp_path / "worker.json"
    cluster_mod.write_worker(path, gone)
    assert cluster_mod.read_worker(path) is None
    assert not path.exists()


# --- a user's scheduler: a real LocalCluster standing for it ------------------------------
@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A LocalCluster of one worker process, reached by its address as a user's scheduler
    would be: the units still run in another process and come back as files (a second
    worker process added its imports and model loads and checked nothing more). Its
    worker has opted in to the accelerators, as a user's may (``dask worker --preload
    compare.accel``, docs/commands.md): a user's own process runs as shipped otherwise."""
    import dask
    from distributed import LocalCluster

    elsewhere = tmp_path_factory.mktemp("elsewhere")
    cwd = os.getcwd()
    os.chdir(elsewhere)  # the workers' folder is not the command's
    try:
        with dask.config.set({"distributed.worker.preload": ["compare.accel"]}):
            cluster = LocalCluster(
                n_workers=1, threads_per_worker=1, dashboard_address="127.0.0.1:0"
            )
    finally:
        os.chdir(cwd)
    yield cluster.scheduler_address
    cluster.close()


@pytest.mark.mcmc
def test_run_all_units_on_a_scheduler_come_back_as_files(scheduler, tmp_path, capsys):
    names = [TOPIC, "normal-known-variance"]
    opened = cli_run._open_cluster(scheduler, use_worker=False)
    assert opened is not None and not opened.keep_models
    try:
        verdicts = cli_run._run_all(
            settings=DEFAULT,
            base=tmp_path / "runs",
            console=cli_run.make_console(),
            json_lines=False,
            force=True,
            workers=2,
            topic_files=None,
            cluster=opened,
            names=names,
        )
    finally:
        opened.close()
    assert len(verdicts) == 2
    for name in names:
        loaded = document.load_run(tmp_path / "runs" / name)  # the digest of draws.nc checks
        assert loaded.doc["topic"] == name
    # The units left nothing in the workers' folder's place: the runs are only here.
    printed = capsys.readouterr().out
    assert printed.index(TOPIC) < printed.index("normal-known-variance")  # catalogue order


@pytest.mark.mcmc
def test_report_draws_figures_on_a_scheduler_and_keeps_them(scheduler, tmp_path):
    env = {**os.environ, "BAYES_COMPARE_WORKER_FILE": "off"}
    out = tmp_path / "site"
    first = _cli(
        "report", TOPIC, "--out", str(out), "--scheduler", scheduler, env=env, cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    figures = out / "runs" / TOPIC / "figures"
    stamped = json.loads((figures / "figures.json").read_text())
    drawn = [r["kind"] for r in stamped["results"] if r["status"] == "ok"]
    assert drawn and all((figures / f"{k}.png").stat().st_size > 1000 for k in drawn)
    before = {p.name: p.stat().st_mtime_ns for p in figures.glob("*.png")}
    second = _cli(
        "report", TOPIC, "--out", str(out), "--scheduler", scheduler, env=env, cwd=tmp_path
    )
    assert second.returncode == 0, second.stderr
    assert {p.name: p.stat().st_mtime_ns for p in figures.glob("*.png")} == before


def test_files_sent_back_that_do_not_match_their_digest_are_refused(tmp_path):
    files = {
        "draws.nc": b"not the draws",
        "result.json": json.dumps({"files": {"draws.nc": {"sha256": "0" * 64}}}).encode(),
    }
    with pytest.raises(document.WriteError, match="digest"):
        document.save_run_files(tmp_path / "run", files)
    assert not (tmp_path / "run" / "result.json").exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["run", TOPIC, "--scheduler", "127.0.0.1:8786"], ["must look like tcp://HOST:PORT"]),
        (["run", "--all", "--scheduler", "tcp://127.0.0.1:1"], ["no Dask scheduler answered"]),
        (
            ["run", "--all", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
            ["--workers 2", "not both"],
        ),
        (["report", "--scheduler", "nowhere"], ["must look like tcp://HOST:PORT"]),
        (["worker", "start", "--workers", "0"], ["--workers must be >= 1"]),
    ],
)
def test_bad_cluster_options_exit_3(args, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = cli.main(args)
    err = capsys.readouterr().err
    assert code == 3, err
    for word in words:
        assert word in err
    assert not (tmp_path / "reports").exists()  # nothing written
