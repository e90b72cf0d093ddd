"""One BLAS thread per command-line process, unless the user chose a count."""

from __future__ import annotations

import os

import pytest

from compare.accel.blas_threads import CHOSEN, one_blas_thread
from tests.probe import run_probe

#: A new process running a command, then loading SciPy's BLAS as a sampling command
#: does; prints the thread count of every BLAS library loaded.
_PROBE = """
import json
from compare.interfaces.cli import main
main(["list"])
import scipy.linalg, threadpoolctl
print(json.dumps([i["num_threads"] for i in threadpoolctl.threadpool_info()
                  if i["user_api"] == "blas"]))
"""


def _blas_threads_of_a_command(**chosen: str) -> list[int]:
    env = {k: v for k, v in os.environ.items() if k not in CHOSEN}
    env.update(chosen)
    return run_probe(_PROBE, env=env)


def test_nothing_chosen_sets_one_thread_for_every_blas():
    env: dict[str, str] = {"PATH": "/bin"}
    assert one_blas_thread(environ=env)
    assert {k: v for k, v in env.items() if k != "PATH"} == {
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "VECLIB_MAXIMUM_THREADS": "1",
        "BLIS_NUM_THREADS": "1",
    }


@pytest.mark.parametrize("name", CHOSEN)
def test_a_count_the_user_chose_is_kept(name):
    env = {name: "4"}
    assert not one_blas_thread(environ=env)
    assert env == {name: "4"}


def test_a_command_runs_numpy_and_scipy_blas_on_one_thread():
    threads = _blas_threads_of_a_command()  # NumPy's and SciPy's OpenBLAS, in wheels
    assert threads and set(threads) == {1}, threads


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS caps its threads at the cores")
def test_a_command_keeps_the_users_thread_count():
    """Power of the test above: the probe does see more than one thread."""
    threads = _blas_threads_of_a_command(OPENBLAS_NUM_THREADS="2")
    assert threads and set(threads) == {2}, threads


def test_sampling_runs_every_loaded_blas_on_one_thread_whatever_the_users_count():
    """compare.core.sampling.one_thread: NumPy's and SciPy's OpenBLAS at one thread while a
    sampler runs (nutpie runs the chains in parallel), the user's count after; the
    libraries are found once per process, not at every sample."""
    import threadpoolctl

    from compare.core import sampling

    def blas() -> list[int]:
        infos = threadpoolctl.threadpool_info()
        return [i["num_threads"] for i in infos if i["user_api"] == "blas"]

    with sampling.one_thread():  # the libraries found before the user's count changes
        pass
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):  # as if the user chose 2
        chosen = blas()
        with sampling.one_thread():
            inside = blas()
        after = blas()
        with sampling.one_thread():
            assert blas() == inside
    assert len(chosen) >= 2 and set(chosen) == {2}  # NumPy's and SciPy's, at the user's 2
    assert inside == [1] * len(chosen)
    assert after == chosen
    assert len(sampling._THREADPOOLS) == 1
