"""A run folder is always one run (compare/output.py: save_run, recover_run, load_run).

The pair ``draws.nc`` + ``result.json`` is written through a journal committed
by one rename.  Here: every state a killed writer can leave is built by hand
and read back as the old or the new run; a real ``bayes-compare run`` is
killed with SIGKILL at every pause point of the test hook and at random
moments of its write; unreadable and mismatched runs are skipped by the report
and the summary with one warning line; runs under different settings show
their own settings; a full disk is refused with one line and leaves nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compare.outputs import document as output
from compare.outputs.document import (
    COMMIT_DIR,
    DRAWS_FILE,
    PAUSE_POINTS,
    RESULT_FILE,
    STAGING_PREFIX,
    TEST_PAUSE_ENV,
    RunFolderError,
    WriteError,
    check_room,
    estimate_run_bytes,
    load_run,
    load_runs,
    recover_run,
    save_run,
)
from tests.zygote import Forked, start, zygote

REPO = Path(__file__).resolve().parents[3]
#: The old run (saved in this process) and the new one (a CLI subprocess): different shapes,
#: each long enough (1200 draws, ESS ~1000 for this one-parameter posterior) that the
#: runner's ESS extension (compare/runner.py) never changes the draws per chain.
OLD = {"draws": 600, "chains": 2}
NEW = {"draws": 400, "chains": 3}


def _draws_shape(folder: Path) -> tuple[int, int]:
    import xarray as xr

    with xr.open_datatree(folder / DRAWS_FILE, engine="h5netcdf") as tree:
        posterior = tree["posterior"].to_dataset()
        return tuple(int(posterior.sizes[d]) for d in ("chain", "draw"))


def _which(folder: Path) -> str:
    """'old', 'new' or 'none' for a folder read as the project reads it; fails on a mix."""
    if not (folder / RESULT_FILE).exists() and not (folder / COMMIT_DIR).exists():
        assert not (folder / DRAWS_FILE).exists(), "draws without a document"
        return "none"
    run = load_run(folder)  # rolls a committed journal forward, verifies the checksum
    settings = run.doc["settings"]
    shape = _draws_shape(folder)
    assert shape == (settings["chains"], settings["draws"]), (shape, settings)
    for name, want in (("old", OLD), ("new", NEW)):
        if (settings["chains"], settings["draws"]) == (want["chains"], want["draws"]):
            return name
    raise AssertionError(f"unexpected settings {settings}")


def _naive_pair_consistent(folder: Path) -> bool:
    """Without recovery: the top-level pair matches by checksum (or there is none)."""
    if not (folder / RESULT_FILE).exists() or not (folder / DRAWS_FILE).exists():
        return not (folder / RESULT_FILE).exists() and not (folder / DRAWS_FILE).exists()
    record = json.loads((folder / RESULT_FILE).read_text())["files"][DRAWS_FILE]
    return output._sha256(folder / DRAWS_FILE) == record["sha256"]


# --- real runs, sampled once -------------------------------------------------------------
@pytest.fixture(scope="module")
def results(test_settings):
    """Two real beta-binomial runs: OLD and NEW settings (different draws and chains)."""
    from compare.core.runner import run
    from compare.topics import get_topic

    topic = get_topic("beta-binomial")
    ds = topic.builtin[0]
    out = {}
    for name, shape in (("old", OLD), ("new", NEW)):
        settings = dataclasses.replace(test_settings, **shape)
        out[name] = run(
            topic,
            data=ds.load(),
            hyper=topic.hyper(dataset=ds),
            settings=settings,
            source=f"builtin:{ds.name}",
        )
    return out


@pytest.fixture
def old_folder(results, tmp_path):
    """A folder holding the old run and files of other tools that must survive a save."""
    folder = tmp_path / "runs" / "beta-binomial"
    save_run(results["old"], folder)
    (folder / "figures").mkdir()
    (folder / "figures" / "trace.png").write_bytes(b"png")
    (folder / "index.html").write_text("<html></html>")
    return folder


@pytest.mark.mcmc
def test_save_records_the_draws_checksum_and_leaves_nothing_else(old_folder):
    doc = json.loads((old_folder / RESULT_FILE).read_text())
    record = doc["files"][DRAWS_FILE]
    assert record["bytes"] == (old_folder / DRAWS_FILE).stat().st_size
    assert record["sha256"] == output._sha256(old_folder / DRAWS_FILE)
    assert sorted(p.name for p in old_folder.iterdir()) == sorted(
        [DRAWS_FILE, RESULT_FILE, "figures", "index.html"]
    )
    assert _which(old_folder) == "old"


@pytest.mark.mcmc
def test_next_write_cleans_what_killed_writers_left(results, old_folder):
    stale_tmp = old_folder / f".{DRAWS_FILE}.k3j2_x.tmp"  # as written by older versions
    stale_tmp.write_bytes(b"\0" * 2**20)
    stale_stage = old_folder / f"{STAGING_PREFIX}abc"
    stale_stage.mkdir()
    (stale_stage / DRAWS_FILE).write_bytes(b"half")
    other_tmp = old_folder / ".index.html.abc.tmp"  # not ours: left alone
    other_tmp.write_text("x")
    save_run(results["new"], old_folder)
    assert not stale_tmp.exists() and not stale_stage.exists() and other_tmp.exists()
    assert (old_folder / "figures" / "trace.png").exists()
    assert _which(old_folder) == "new"


def _journal_state(folder: Path, new_folder: Path, point: str) -> None:
    """Put ``folder`` (holding the old run) in the state a writer killed at ``point`` leaves,
    using the files of the new run saved in ``new_folder``."""
    stage = folder / f"{STAGING_PREFIX}killed"
    commit = folder / COMMIT_DIR
    if point == "staging":
        return
    stage.mkdir()
    shutil.copy(new_folder / DRAWS_FILE, stage / DRAWS_FILE)
    if point == "draws-staged":
        return
    shutil.copy(new_folder / RESULT_FILE, stage / RESULT_FILE)
    if point == "result-staged":
        return
    stage.rename(commit)
    if point == "committed":
        return
    os.replace(commit / DRAWS_FILE, folder / DRAWS_FILE)
    if point == "after-draws":
        return
    os.replace(commit / RESULT_FILE, folder / RESULT_FILE)
    if point == "after-result":
        return
    shutil.rmtree(commit)


@pytest.mark.mcmc
@pytest.mark.parametrize("point", PAUSE_POINTS)
def test_every_crash_state_reads_as_one_run(results, old_folder, tmp_path, point):
    """Each state of the protocol, built by hand: a reader sees the old run before the
    commit and the new one from it on; a naive reader of the two files would see a
    mismatch only while a journal is there to say so."""
    new_folder = tmp_path / "new"
    save_run(results["new"], new_folder)
    _journal_state(old_folder, new_folder, point)
    journal = (old_folder / COMMIT_DIR).exists()
    assert journal or _naive_pair_consistent(old_folder)
    committed = PAUSE_POINTS.index(point) >= PAUSE_POINTS.index("committed")
    assert _which(old_folder) == ("new" if committed else "old")
    assert not (old_folder / COMMIT_DIR).exists()  # the reader finished the journal
    save_run(results["old"], old_folder)  # and the next writer starts clean
    assert not any(p.name.startswith(STAGING_PREFIX) for p in old_folder.iterdir())
    assert _which(old_folder) == "old"


@pytest.mark.mcmc
def test_recover_run_is_a_no_op_on_a_clean_folder(old_folder):
    before = {p.name: p.stat().st_mtime_ns for p in old_folder.iterdir()}
    assert recover_run(old_folder) is False
    assert {p.name: p.stat().st_mtime_ns for p in old_folder.iterdir()} == before


# --- killing a real `bayes-compare run` (in children of tests/zygote.py) --------------
def _start(running, folder: Path, pause: str | None, stderr: Path) -> Forked:
    _, base = running
    env = dict(base)
    if pause is not None:
        env[TEST_PAUSE_ENV] = pause
    args = ["run", "beta-binomial", "--draws", str(NEW["draws"])]
    args += ["--chains", str(NEW["chains"]), "--out", str(folder)]
    return start(running, args, stderr, env=env)


def _wait_stopped(proc: Forked, timeout: float = 600.0) -> None:
    """Until the child has stopped itself at the hook (state T in /proc)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(
                f"exited {proc.returncode} before the pause point: {proc.stderr_text()[-2000:]}"
            )
        with contextlib.suppress(FileNotFoundError):
            state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "T":
                return
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the run never reached its pause point")


#: Kills after resuming at "staging" fall in [0, WRITE_SECONDS): the first netCDF write
#: of a process also imports netCDF4 (h5py/h5netcdf took 1-3 s on a loaded 2-core machine).
WRITE_SECONDS = 4.0
#: Kills after resuming at "draws-staged" fall in [0, COMMIT_SECONDS): the checksum, the
#: JSON, the fsyncs, the commit rename and the roll-forward (~0.05-0.3 s).
COMMIT_SECONDS = 0.4


def _kill_plan(rng: random.Random) -> list[tuple[str, str, float | None]]:
    """(start folder, pause point, delay after resuming) for each kill.

    Every pause point over the old run; the two points where an empty folder gets
    its first files; then N random moments of the write (resumed at "staging", killed
    up to WRITE_SECONDS later), N of the commit (resumed at "draws-staged", killed up
    to COMMIT_SECONDS later) and, from N = 4 on, N // 4 of the whole run (no pause,
    killed 3-30 s after the start).  N = BAYES_COMPARE_KILL_TRIALS (default 1).
    """
    plan = [("old", p, None) for p in PAUSE_POINTS]
    plan += [("empty", "committed", None), ("empty", "after-draws", None)]
    n = int(os.environ.get("BAYES_COMPARE_KILL_TRIALS", "1"))
    plan += [("old", "staging", rng.uniform(0.0, WRITE_SECONDS)) for _ in range(n)]
    plan += [("old", "draws-staged", rng.uniform(0.0, COMMIT_SECONDS)) for _ in range(n)]
    plan += [("old", None, rng.uniform(3.0, 30.0)) for _ in range(n // 4)]
    return plan


@pytest.mark.mcmc
def test_kill_9_at_any_moment_leaves_the_old_or_the_new_run(results, tmp_path, capsys):
    """SIGKILL a real CLI run at every pause point and at random moments (two at a time):
    the folder then reads as the old run or the new one, never a mix; `summary` and the
    report work on it; the next run over it leaves no temporary file."""
    from compare.interfaces.cli import main
    from compare.outputs.report import build_site

    template = tmp_path / "template"
    save_run(results["old"], template)
    plan = _kill_plan(random.Random(20261130))
    outcomes: list[tuple[str, str | None, float | None, str]] = []
    pending = list(enumerate(plan))
    running: list[tuple[int, Forked, Path, float]] = []
    (tmp_path / "stderr").mkdir()

    def finish(i, proc, folder, started):
        start, pause, delay = plan[i]
        if pause is not None:
            _wait_stopped(proc)
            if delay is not None:
                os.kill(proc.pid, signal.SIGCONT)
                time.sleep(delay)
        else:
            time.sleep(max(0.0, started + delay - time.monotonic()))
        proc.kill()  # SIGKILL, as kill -9 (a no-op if it already finished)
        proc.wait()
        state = _which(folder)
        assert state in (("none", "new") if start == "empty" else ("old", "new")), state
        if pause is not None and delay is None:  # a deterministic point: which run we expect
            committed = PAUSE_POINTS.index(pause) >= PAUSE_POINTS.index("committed")
            assert state == ("new" if committed else ("none" if start == "empty" else "old"))
        outcomes.append((start, pause, delay, state))

    with zygote(drop=(TEST_PAUSE_ENV,)) as running_zygote:
        while pending or running:
            while pending and len(running) < 2:
                i, (start, pause, _) = pending.pop(0)
                folder = tmp_path / f"kill{i}" / "beta-binomial"
                if start == "old":
                    shutil.copytree(template, folder)
                else:
                    folder.mkdir(parents=True)
                child = _start(running_zygote, folder, pause, tmp_path / "stderr" / f"{i}.txt")
                running.append((i, child, folder, time.monotonic()))
            finish(*running.pop(0))

    # Readers on the killed folders: the summary over all of them, a report page on two.
    runs = [tmp_path / f"kill{i}" / "beta-binomial" for i in range(len(plan))]
    for i, folder in enumerate(runs):
        if _which(folder) == "none":
            continue
        summary = tmp_path / f"summary{i}.md"
        assert main(["summary", "--runs", str(folder.parent), "--out", str(summary)]) == 0
        assert "skipped" not in summary.read_text()
    capsys.readouterr()
    for folder in runs[PAUSE_POINTS.index("after-draws")], runs[0]:
        site = build_site([folder], folder.parent, workers=1, kinds=())
        assert site.skipped == [] and site.pages["beta-binomial"].is_file()
    # The next writer over a killed folder: the new run, nothing stale left.
    for folder in runs[:3]:
        save_run(results["new"], folder)
        names = {p.name for p in folder.iterdir()}
        assert not {n for n in names if n.startswith(".")}, names
        assert _which(folder) == "new"
    print(
        f"kills: {len(outcomes)}, consistent: {len(outcomes)}; "
        + ", ".join(
            f"{p or 'timed'}{'' if d is None else f'+{d:.2f}s'}->{s}" for _, p, d, s in outcomes
        )
    )


# --- readers: unreadable and mismatched runs are skipped, settings per run ---------------
@pytest.mark.mcmc
@pytest.mark.parametrize("damage", ["truncated", "empty", "not-a-run", "other-draws"])
def test_report_and_summary_skip_an_unusable_run_with_one_warning(
    results, tmp_path, capsys, damage
):
    from compare.interfaces.cli import main
    from compare.outputs.report import build_site

    runs = tmp_path / "runs"
    good, bad = runs / "beta-binomial", runs / "gamma-poisson"
    save_run(results["old"], good)
    save_run(results["new"], bad)
    result = bad / RESULT_FILE
    if damage == "truncated":
        result.write_bytes(result.read_bytes()[:700])
    elif damage == "empty":
        result.write_bytes(b"")
    elif damage == "not-a-run":
        result.write_text('{"topic": "x"}')
    else:  # the draws of another run beside this document, as older versions could leave
        shutil.copy(good / DRAWS_FILE, bad / DRAWS_FILE)
    at_fault = bad / (DRAWS_FILE if damage == "other-draws" else RESULT_FILE)
    with pytest.raises(RunFolderError) as caught:
        load_run(bad)
    assert caught.value.path == at_fault

    summary = tmp_path / "summary.md"
    capsys.readouterr()
    assert main(["summary", "--runs", str(runs), "--out", str(summary)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(at_fault) in err[0] and "Traceback" not in err[0], err
    text = summary.read_text()
    assert f"- skipped: {at_fault}: " in text
    assert text.count("| beta-binomial |") == 1 and "gamma-poisson |" not in text

    warnings: list[str] = []
    site = build_site([good, bad], tmp_path, workers=1, kinds=(), warn=warnings.append)
    assert [s.path for s in site.skipped] == [at_fault]
    assert len(warnings) == 1 and str(at_fault) in warnings[0]
    index = site.index.read_text()
    assert 'id="skipped"' in index and str(at_fault) in index
    assert list(site.pages) == ["beta-binomial"]


@pytest.mark.mcmc
def test_report_cli_skips_a_truncated_run_and_still_builds(results, tmp_path, capsys):
    from compare.interfaces.cli import main

    runs = tmp_path / "reports" / "runs"
    save_run(results["old"], runs / "beta-binomial")
    save_run(results["old"], runs / "gamma-poisson")
    truncated = runs / "gamma-poisson" / RESULT_FILE
    truncated.write_bytes(truncated.read_bytes()[:300])
    capsys.readouterr()
    code = main(
        [
            "report",
            "beta-binomial",
            "gamma-poisson",
            "--out",
            str(tmp_path / "reports"),
            "--workers",
            "1",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    warning = [line for line in captured.err.splitlines() if str(truncated) in line]
    assert len(warning) == 1 and "Traceback" not in captured.err
    assert str(truncated) in (tmp_path / "reports" / "index.html").read_text()


@pytest.mark.mcmc
def test_mixed_settings_are_shown_per_run(results, tmp_path, capsys):
    """2 x 600 and 3 x 400 in one folder: each row shows its own settings, the common
    line is gone; with equal settings the one common line stays."""
    from compare.interfaces.cli import main
    from compare.outputs.report import build_site

    runs = tmp_path / "runs"
    save_run(results["old"], runs / "beta-binomial")
    save_run(results["new"], runs / "gamma-poisson")
    summary = tmp_path / "s.md"
    assert main(["summary", "--runs", str(runs), "--out", str(summary)]) == 0
    text = summary.read_text()
    assert "| settings that differ |" in text and "Settings differ between runs" in text
    assert "shared: " in text and "seed " in text.split("shared: ")[1]
    rows = [line for line in text.splitlines() if "**" in line]  # both are beta-binomial runs
    assert len(rows) == 2
    assert sorted(row.strip(" |").split(" | ")[-1] for row in rows) == [
        "2 chains, 600 draws",
        "3 chains, 400 draws",
    ]
    site = build_site(
        [runs / "beta-binomial", runs / "gamma-poisson"], tmp_path, workers=1, kinds=()
    )
    index = site.index.read_text()
    assert "2 chains, 600 draws" in index and "3 chains, 400 draws" in index
    assert "different sampler settings" in index

    save_run(results["old"], runs / "gamma-poisson")
    assert main(["summary", "--runs", str(runs), "--out", str(summary)]) == 0
    text = summary.read_text()
    assert "settings that differ" not in text and "Settings: 2 chains x 600 draws" in text
    site = build_site(
        [runs / "beta-binomial", runs / "gamma-poisson"], tmp_path, workers=1, kinds=()
    )
    index = site.index.read_text()
    assert "different sampler settings" not in index and "3 chains" not in index
    capsys.readouterr()


def test_summary_out_naming_a_directory_is_refused(tmp_path, capsys):
    from compare.interfaces.cli import main

    (tmp_path / "runs").mkdir()
    assert main(["summary", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is an existing folder" in err[0]


# --- a full disk ---------------------------------------------------------------------------
def test_check_room_refuses_with_one_line_naming_folder_space_and_fix(tmp_path):
    check_room(tmp_path / "new" / "run", 1000)  # plenty of room: nothing raised
    with pytest.raises(WriteError) as caught:
        check_room(tmp_path / "new" / "run", 2**62)
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path / "new" / "run") in message
    assert "free" in message and "another --out" in message


def test_estimate_covers_a_real_beta_binomial_file():
    """The estimate before sampling is at least the measured file (121 kB for 2 x 300)."""
    assert estimate_run_bytes(chains=2, draws=300) >= 121_368
    assert estimate_run_bytes(chains=4, draws=1000) < 2 * 4 * 1000 * 21 * 8 + 200_000


@contextlib.contextmanager
def _tmpfs(path: Path, options: str):
    """A small tmpfs at ``path``; skips the test when mounting is not permitted."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"mount not permitted here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


@pytest.mark.mcmc
def test_full_disk_is_refused_before_sampling_with_one_line(tmp_path, capsys):
    from compare.interfaces.cli import main

    with _tmpfs(tmp_path / "tiny", "size=64k") as tiny:
        t0 = time.perf_counter()
        code = main(
            ["run", "beta-binomial", "--draws", "300", "--chains", "2", "--out", str(tiny / "run")]
        )
        seconds = time.perf_counter() - t0
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 3 and len(err) == 1, err
        assert str(tiny / "run") in err[0] and "free" in err[0]
        assert seconds < 5, "refused only after compiling or sampling"
        assert list(tiny.iterdir()) == []


@pytest.mark.mcmc
def test_full_disk_at_save_leaves_the_old_run_and_no_temporary(results, tmp_path):
    """The exact size is checked again at save time (64 kB tmpfs); a write that fails
    anyway (no inode left for result.json) is one WriteError and changes nothing."""
    with _tmpfs(tmp_path / "tiny", "size=64k") as tiny:
        with pytest.raises(WriteError, match="free some space"):
            save_run(results["old"], tiny / "run")
        assert not (tiny / "run").exists() or list((tiny / "run").iterdir()) == []
    # 4 inodes: the root, the run folder, the staging folder, draws.nc; result.json fails.
    with _tmpfs(tmp_path / "inodes", "size=8m,nr_inodes=4") as small:
        with pytest.raises(WriteError) as caught:
            save_run(results["old"], small / "run")
        assert "\n" not in str(caught.value) and "writing the run failed" in str(caught.value)
        assert list((small / "run").iterdir()) == []
    # The old run stays readable when there is no room for the new one.
    with _tmpfs(tmp_path / "old", "size=8m,nr_inodes=4") as small:
        folder = small / "run"
        folder.mkdir()
        save_run(results["old"], tmp_path / "elsewhere")
        for name in (DRAWS_FILE, RESULT_FILE):
            shutil.copy(tmp_path / "elsewhere" / name, folder / name)  # uses the last inode
        with pytest.raises(WriteError):
            save_run(results["new"], folder)
        assert sorted(p.name for p in folder.iterdir()) == sorted([DRAWS_FILE, RESULT_FILE])
        assert _which(folder) == "old"


def test_load_runs_reports_each_skip_once(tmp_path):
    missing = tmp_path / "nothing"
    missing.mkdir()
    lines: list[str] = []
    loaded, skipped = load_runs([missing], warn=lines.append)
    assert loaded == [] and len(skipped) == 1 and lines == [skipped[0].line]
    assert skipped[0].path == missing / RESULT_FILE


@pytest.mark.mcmc
def test_concurrent_writers_and_readers_never_see_a_mix(results, old_folder):
    """Writers of both runs and a reader, in threads, on one folder: the folder lock keeps
    the writers apart and every read (load_run) is one whole run."""
    import threading

    seen: list[str] = []
    errors: list[BaseException] = []

    def write(which: str) -> None:
        try:
            for _ in range(3):
                save_run(results[which], old_folder)
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    def read() -> None:
        try:
            for _ in range(12):
                run = load_run(old_folder)
                seen.append(f"{run.doc['settings']['chains']}x{run.doc['settings']['draws']}")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [
        threading.Thread(target=write, args=("old",)),
        threading.Thread(target=write, args=("new",)),
        threading.Thread(target=read),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and set(seen) <= {"2x600", "3x400"}
    assert _which(old_folder) in ("old", "new")
    assert not [p for p in old_folder.iterdir() if p.name.startswith(".")]


_WRITE_PROBE = """
import contextlib, json, sys, threading
from pathlib import Path
from compare import accel
if not {planted}:  # planted: a user's process (no enable), xarray asks Dask as shipped
    accel.enable()  # a process of ours, as `bayes-compare run` is
import numpy as np
import xarray as xr
from xarray.backends import locks, writers
from compare.outputs import document

originals = writers.get_dask_scheduler, locks.get_dask_scheduler
values = np.arange(12.0).reshape(2, 6)
groups = {{"/posterior": xr.Dataset({{"p": (("chain", "draw"), values)}})}}
folder = Path({folder!r})
threads = [
    threading.Thread(target=document._write_draws, args=(groups, folder / f"{{i}}.nc"))
    for i in range(4)
]
for t in threads:
    t.start()
for t in threads:
    t.join()
same = all(
    np.array_equal(xr.open_datatree(folder / f"{{i}}.nc")["posterior"]["p"].values, values)
    for i in range(4)
)
restored = (writers.get_dask_scheduler, locks.get_dask_scheduler) == originals
print(json.dumps(["distributed" in sys.modules, same, restored]))
"""


@pytest.mark.parametrize("planted", [False, True], ids=["ours", "users-process"])
def test_writing_draws_in_a_new_process_does_not_import_distributed(tmp_path, planted):
    """xarray's to_netcdf asks Dask for its scheduler, and Dask imports distributed
    (0.4-0.6 s of every new `run` process) to look for a client that cannot exist
    in a process that never imported it. The draws are written without that, four
    threads at once, read back equal, and xarray's functions are restored. Power:
    in a user's process, where the probe is left to xarray (planted), the same write
    imports distributed."""
    probe = _WRITE_PROBE.format(planted=planted, folder=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    )
    imported, same, restored = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (imported, same, restored) == (planted, True, True)
