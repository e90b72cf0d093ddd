"""numba's on-disk cache shared by processes (compare/accel/numba_cache.py).

What a user relies on: two processes that compile different signatures of one
cached function at the same moment (two test workers, two report workers, a
run beside a test suite) leave a cache from which every later process loads
the code of the signature it asked for, and a cache damaged by that race
before the fix never hands out another signature's code.

The race is made deterministic rather than waited for: each child process
sleeps before numba writes the index or the data (``_save_index`` and
``_save_data`` are numba's own writers, slowed down, not replaced), so that
both read the empty index before either writes it, and the float saver's
data lands last. Margins are a second or more, against a compile skew of
well under that between the two children.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import compare

_FUNCTION = textwrap.dedent(
    """
    import numba

    @numba.njit(cache=True)
    def f(x):
        return x + 1
    """
)

_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path

    folder, role, patched, kind, index_delay, data_delay = sys.argv[1:7]
    sys.path.insert(0, folder)
    import numba.core.caching as caching
    if patched == "1":  # a process of ours (numba_cache among the accelerators)
        from compare import accel
        accel.enable()

    cache_file = caching.IndexDataCacheFile
    save_index, save_data = cache_file._save_index, cache_file._save_data

    def slow_index(self, overloads):
        time.sleep(float(index_delay))
        save_index(self, overloads)

    def slow_data(self, name, data):
        time.sleep(float(data_delay))
        save_data(self, name, data)

    cache_file._save_index, cache_file._save_data = slow_index, slow_data

    import plus_one

    if role == "save":
        Path(folder, f"ready-{kind}").touch()
        while not Path(folder, "go").exists():
            time.sleep(0.005)
        plus_one.f(1.5 if kind == "float" else 2)
    else:
        out = {}
        for name, x in (("float", 1.5), ("int", 2)):
            try:
                out[name] = repr(plus_one.f(x))
            except Exception as err:
                out[name] = type(err).__name__
        out["loaded"] = sum(plus_one.f.stats.cache_hits.values())
        print(json.dumps(out))
    """
)


def _python(folder: Path, *args: str) -> list[str]:
    return [sys.executable, str(folder / "child.py"), str(folder), *args]


def _env(folder: Path) -> dict[str, str]:
    root = str(Path(compare.__file__).resolve().parents[1])
    return {
        **os.environ,
        "NUMBA_CACHE_DIR": str(folder / "cache"),
        "PYTHONPATH": root,
        # This file tests the save lock alone: without numba_lazy_code's tag on
        # the keys, so that unpatched and patched children share entries.
        "BAYES_COMPARE_EAGER_NUMBA": "1",
    }


def _race(folder: Path, *, patched: bool) -> None:
    """Two processes save f's float64 and int64 overloads at once into one new cache."""
    folder.mkdir()
    (folder / "plus_one.py").write_text(_FUNCTION)
    (folder / "child.py").write_text(_CHILD)
    flag = "1" if patched else "0"
    # float: index after 1 s, its data 2 s later; int: index after 2 s, data at once.
    savers = [
        subprocess.Popen(_python(folder, "save", flag, "float", "1.0", "2.0"), env=_env(folder)),
        subprocess.Popen(_python(folder, "save", flag, "int", "2.0", "0"), env=_env(folder)),
    ]
    deadline = time.monotonic() + 300
    while not all((folder / f"ready-{kind}").exists() for kind in ("float", "int")):
        assert time.monotonic() < deadline, "the saving children never started"
        assert all(p.poll() is None for p in savers), "a saving child died"
        time.sleep(0.01)
    (folder / "go").touch()
    assert [p.wait(timeout=300) for p in savers] == [0, 0]


def _check(folder: Path, *, patched: bool) -> dict[str, str | int]:
    """What a new process gets for f(1.5) and f(2), and how many overloads it loaded."""
    done = subprocess.run(
        _python(folder, "check", "1" if patched else "0", "-", "0", "0"),
        env=_env(folder),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: dict[str, str | int] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def _damaged_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("numba-race") / "unpatched"
    _race(folder, patched=False)
    shutil.copytree(folder / "cache", folder / "cache-as-raced")
    return folder


@pytest.fixture
def damaged(_damaged_once: Path) -> Path:
    """A cache written by two unpatched savers racing: its index maps int64 to float code.

    Restored for each test (a check writes what it compiled into the cache); in
    place, since numba files a function's cache under its source file's folder.
    """
    shutil.rmtree(_damaged_once / "cache")
    shutil.copytree(_damaged_once / "cache-as-raced", _damaged_once / "cache")
    return _damaged_once


def test_the_race_damages_numbas_own_cache(damaged):
    """Power of the tests below: without the fix, the race is real and silent. A new
    process asking for f(2) loads the float64 code and answers 3.0, not 3 (if numba
    fixes its cache one day, this test says so, and the module can go)."""
    assert _check(damaged, patched=False) == {"float": "2.5", "int": "3.0", "loaded": 1}


def test_a_damaged_cache_never_hands_out_the_wrong_code(damaged):
    """The load check: the float64 overload found under the int64 key is a miss."""
    assert _check(damaged, patched=True) == {"float": "2.5", "int": "3", "loaded": 0}


def test_racing_savers_keep_every_signature(tmp_path):
    """With the fix the same race leaves both overloads, each in its own file, in
    numba's own format: an unpatched process loads both from the cache."""
    folder = tmp_path / "patched"
    _race(folder, patched=True)
    names = sorted(p.name for p in (folder / "cache").rglob("*.nbc"))
    assert len(names) == 2, names
    assert _check(folder, patched=False) == {"float": "2.5", "int": "3", "loaded": 2}


@pytest.mark.parametrize("ours", [True, False], ids=["enabled", "user-process"])
def test_the_patch_is_applied_when_numba_is_imported_in_a_process_of_ours(ours):
    """The import hook: a process of ours (``accel.enable()``) that then imports numba
    has the fix; a user's process that imports compare keeps numba as released."""
    code = (
        "import sys, compare, compare.accel; assert 'numba' not in sys.modules; "
        + ("compare.accel.enable(); " if ours else "")
        + "import numba.core.caching as c; print(c.IndexDataCacheFile.save.__module__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    expected = "compare.accel.numba_cache" if ours else "numba.core.caching"
    assert done.stdout.strip() == expected
