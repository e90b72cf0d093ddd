"""The compiled-model cache's files are verified before they are used (compare/accel/cache_store.py).

What a user relies on: whatever happens to the cache folder (a disk error, a
half-written file, a copied file, a stuck process, a folder another user can
write to), a run gives its verdict, says in one line what it found, and leaves
a good entry behind. Each kind of damage is planted in a real cache after a real
run, and a real ``bayes-compare run`` (a new process: a child of
``tests/zygote.py``, which paid the imports once) must agree, print one
``note:`` line about the cache, and rewrite the entry.

Power: ``test_unverified_bits_in_the_machine_code_crash_a_run`` loads the same
damaged machine code with the verification skipped: the process dies or fails,
which is what every later run did before (exit 4 or a segmentation fault).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compare.accel import cache_store
from tests.zygote import start, zygote

ROOT = Path(__file__).resolve().parents[3]


# --- the entry format, in this process -----------------------------------------------------
def _entry(tmp_path: Path, payload: bytes = b"payload " * 100) -> Path:
    path = tmp_path / "k.pkl"
    assert cache_store.write(path, kind="code", key="k", payload=payload)
    return path


def test_an_entry_reads_back_and_is_this_users_only(tmp_path: Path) -> None:
    path = _entry(tmp_path)
    assert cache_store.read(path, kind="code", key="k") == b"payload " * 100
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert cache_store.read(tmp_path / "absent.pkl", kind="code", key="k") is None


def _flip(data: bytes, at: int, bits: int = 1) -> bytes:
    out = bytearray(data)
    for i in range(bits):
        out[at + 7 * i] ^= 1 << (i % 8)
    return bytes(out)


DAMAGE = {
    "truncated": lambda d: d[: len(d) // 2],
    "empty": lambda d: b"",
    "garbled": lambda d: d[:40] + os.urandom(64) + d[104:],
    "a flipped bit in the payload": lambda d: _flip(d, len(d) - 50),
    "six flipped bits in the payload": lambda d: _flip(d, len(d) // 2 + 100, 6),
    "a flipped bit in the header": lambda d: _flip(d, len(cache_store.MAGIC) + 30),
    "one byte more": lambda d: d + b"\0",
    "another format": lambda d: d.replace(b'"format": 1', b'"format": 0', 1),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_any_damage_is_a_miss_said_once(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _entry(tmp_path)
    path.write_bytes(DAMAGE[kind](path.read_bytes()))
    assert cache_store.read(path, kind="code", key="k") is None
    assert cache_store.read(path, kind="code", key="k") is None  # said once per process
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("note: ") and path.name in lines[0], lines


def test_another_models_entry_under_this_key_is_a_miss(tmp_path: Path) -> None:
    other = tmp_path / "other.pkl"
    cache_store.write(other, kind="code", key="other", payload=b"x")
    shutil.copy(other, tmp_path / "k.pkl")
    assert cache_store.read(tmp_path / "k.pkl", kind="code", key="k") is None
    assert cache_store.read(other, kind="graphs", key="other") is None  # another kind


def test_a_file_others_may_write_or_a_link_is_not_read(tmp_path: Path) -> None:
    path = _entry(tmp_path)
    path.chmod(0o666)
    assert cache_store.read(path, kind="code", key="k") is None
    path.chmod(0o600)
    link = tmp_path / "link.pkl"
    link.symlink_to(path)
    assert cache_store.read(link, kind="code", key="k") is None


def test_a_folder_others_may_write_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "root" / "compiled"
    assert cache_store.usable_folder(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700  # made by us: ours only
    folder.parent.chmod(0o777)
    assert not cache_store.usable_folder(folder)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "chmod go-w" in err[0] and "0777" in err[0], err


# --- real runs, a new process each (children of tests/zygote.py) ---------------------------
@dataclass(frozen=True)
class Ran:
    """What a real `bayes-compare run` left: its exit code (0: agree) and its stderr."""

    returncode: int
    stderr: str


@pytest.fixture(scope="module")
def running() -> Iterator[Any]:
    with zygote() as started:
        yield started


def _run(running: Any, cache: Path, tmp_path: Path, topic: str = "beta-binomial") -> Ran:
    """``bayes-compare run TOPIC --force`` in a new process, the cache at ``cache``."""
    _, base = running
    out = tmp_path / "runs" / topic
    (tmp_path / "stderr").mkdir(exist_ok=True)
    stderr = tmp_path / "stderr" / f"{len(list((tmp_path / 'stderr').iterdir()))}.txt"
    env = {**base, "BAYES_COMPARE_CACHE_DIR": str(cache)}
    child = start(running, ["run", topic, "--force", "--out", str(out)], stderr, env=env)
    return Ran(child.wait(timeout=900), child.stderr_text())


@pytest.fixture(scope="module")
def warm_cache(running: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache after a clean run of beta-binomial and one of gamma-poisson."""
    root = tmp_path_factory.mktemp("warm")
    cache = root / "cache"
    for topic in ("gamma-poisson", "beta-binomial"):
        done = _run(running, cache, root, topic)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "note:" not in done.stderr, done.stderr
    return cache


def _copy(warm_cache: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache, symlinks=True)
    return cache


def _newest(folder: Path, pattern: str) -> Path:
    return max(folder.glob(pattern), key=lambda p: p.stat().st_mtime_ns)


def _entries(cache: Path) -> dict[str, Path]:
    """beta-binomial's entries: its machine code, graphs and MAP functions (the newest)."""
    compiled = cache / "compiled"
    return {
        "code": _newest(compiled, "*.pkl"),
        "graphs": _newest(compiled, "*.graphs"),
        "functions": _newest(compiled, "*.functions"),
    }


def _machine_code_at(data: bytes) -> int:
    """Where the first object file (the log density's machine code) starts in an entry."""
    at = data.find(b"\x7fELF")
    assert at > 0, "no object code in the entry"
    return at


def _flip_machine_code(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(_flip(data, _machine_code_at(data) + 4096, 6))


REAL_DAMAGE = {
    "truncated": ("code", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])),
    "empty": ("code", lambda p: p.write_bytes(b"")),
    "garbled": ("code", lambda p: p.write_bytes(p.read_bytes()[:500] + os.urandom(2000))),
    "bits in the machine code": ("code", _flip_machine_code),
    "another version's entry": (
        "code",
        lambda p: p.write_bytes(p.read_bytes().replace(b'"format": 1', b'"format": 2', 1)),
    ),
    "damaged graphs": ("graphs", lambda p: p.write_bytes(p.read_bytes()[:-10])),
    "damaged MAP functions": ("functions", lambda p: p.write_bytes(b"\0" * 300)),
}


def _cache_notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("note:")]


def _agrees(done: Ran) -> None:
    assert done.returncode == 0, done.stderr[-3000:]  # exit 0: the verdict is agree


@pytest.mark.parametrize("kind", sorted(REAL_DAMAGE))
def test_a_damaged_entry_is_compiled_again_said_once_and_rewritten(
    running: Any, warm_cache: Path, tmp_path: Path, kind: str
) -> None:
    cache = _copy(warm_cache, tmp_path)
    which, damage = REAL_DAMAGE[kind]
    path = _entries(cache)[which]
    damage(path)
    done = _run(running, cache, tmp_path)
    _agrees(done)
    notes = _cache_notes(done.stderr)
    assert len(notes) == 1 and path.name in notes[0], done.stderr
    key = path.name.split(".")[0]
    assert cache_store.read(path, kind=which, key=key) is not None, "not rewritten"


def test_another_models_entry_under_this_key_is_compiled_again(
    running: Any, warm_cache: Path, tmp_path: Path
) -> None:
    cache = _copy(warm_cache, tmp_path)
    compiled = cache / "compiled"
    mine = _newest(compiled, "*.pkl")
    other = min(compiled.glob("*.pkl"), key=lambda p: p.stat().st_mtime_ns)
    assert other != mine
    shutil.copy(other, mine)
    done = _run(running, cache, tmp_path)
    _agrees(done)
    notes = _cache_notes(done.stderr)
    assert len(notes) == 1 and "another model's entry" in notes[0], done.stderr
    assert cache_store.read(mine, kind="code", key=mine.name.split(".")[0]) is not None


def test_a_stale_lock_is_said_and_the_model_compiled(
    running: Any, warm_cache: Path, tmp_path: Path
) -> None:
    """The model is missing and its compile lock is held by a process that was stopped
    (^Z, a debugger): the run says so and compiles, instead of waiting 15 minutes."""
    cache = _copy(warm_cache, tmp_path)
    code = _entries(cache)["code"]
    code.unlink()
    lock = code.with_suffix(".lock")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, signal, sys\n"
            f"fd = os.open({str(lock)!r}, os.O_CREAT | os.O_RDWR, 0o600)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "os.ftruncate(fd, 0); os.pwrite(fd, f'{os.getpid()}\\n'.encode(), 0)\n"
            "print('held', flush=True)\n"
            "os.kill(os.getpid(), signal.SIGSTOP)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        done = _run(running, cache, tmp_path)
        _agrees(done)
        notes = _cache_notes(done.stderr)
        assert len(notes) == 1 and "stopped" in notes[0], done.stderr
        assert time.monotonic() - started < 300
        assert code.exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_an_unwritable_cache_folder_is_said_and_the_run_agrees(
    running: Any, tmp_path: Path
) -> None:
    """The compiled models' folder cannot be made (a file stands where it would be):
    one line, and the run compiles in its own process."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    (cache / "compiled").write_text("not a folder")
    done = _run(running, cache, tmp_path)
    _agrees(done)
    notes = _cache_notes(done.stderr)
    assert len(notes) == 1 and "compiled-model cache" in notes[0], done.stderr


def test_a_cache_others_can_write_is_refused_and_the_run_agrees(
    running: Any, warm_cache: Path, tmp_path: Path
) -> None:
    """As ssh refuses a key file others can write: the entries are pickles. One line,
    the run goes on without the cache, and the entries are left as they were."""
    cache = _copy(warm_cache, tmp_path)
    compiled = cache / "compiled"
    before = {p.name: p.read_bytes() for p in compiled.iterdir()}
    compiled.chmod(0o777)
    done = _run(running, cache, tmp_path)
    _agrees(done)
    notes = _cache_notes(done.stderr)
    assert len(notes) == 1 and "is not used" in notes[0], done.stderr
    assert {p.name: p.read_bytes() for p in compiled.iterdir()} == before


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_cache_folder_of_another_user_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "root" / "compiled"
    assert cache_store.usable_folder(folder)
    os.chown(folder, 65534, 65534)  # nobody
    assert not cache_store.usable_folder(folder)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "another user (uid 65534)" in err[0], err


_UNVERIFIED = """
import sys
from pathlib import Path
from compare import accel
accel.enable()
from compare.accel import cache_store
from tests.zygote import start, zygote
import compare.interfaces.cli as cli

real = cache_store.read

def unverified(path, *, kind, key):  # the payload after the header, checksum not checked
    data = Path(path).read_bytes() if Path(path).exists() else None
    if data is None or not data.startswith(cache_store.MAGIC):
        return real(path, kind=kind, key=key)
    end = data.index(b"\\n", len(cache_store.MAGIC))
    return data[end + 1:]

cache_store.read = unverified
sys.exit(cli.main(sys.argv[1:]))
"""


def test_unverified_bits_in_the_machine_code_crash_a_run(warm_cache: Path, tmp_path: Path) -> None:
    """Power: the machine code damaged as in the test above, loaded without the
    verification, does not give a verdict (a crash: a signal, or exit 4)."""
    cache = _copy(warm_cache, tmp_path)
    _flip_machine_code(_entries(cache)["code"])
    env = {**os.environ, "BAYES_COMPARE_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", _UNVERIFIED, "run", "beta-binomial", "--force"]
        + ["--out", str(tmp_path / "runs"), "--json", str(tmp_path / "out.json")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    verdict = None
    if (tmp_path / "out.json").exists():
        verdict = json.loads((tmp_path / "out.json").read_text()).get("verdict")
    assert done.returncode not in (0, 1, 2) or verdict != "agree", (done.returncode, verdict)
