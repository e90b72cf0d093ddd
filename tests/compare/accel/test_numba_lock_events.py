"""numba no longer broadcasts an event around each call into LLVM
(compare/accel/numba_lock_events.py).

What a user relies on: numba still compiles and runs what it did, a compile
takes llvmlite's lock as before (a callback registered on it still sees it),
and only numba's own two callbacks are gone. Planted: a process with numba
as released (``BAYES_COMPARE_EAGER_NUMBA=1``) broadcasts the event on every
call, so the counting probe below tells the two apart.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.compare.accel.test_numba_lazy_code import _child  # a new process, numba either way

#: Compiles and runs a small function in a new process with ``compare`` imported first;
#: prints how many llvm-lock events numba broadcast, how many times a callback of our
#: own saw the lock taken, numba's callbacks still registered, and the result.
PROBE = textwrap.dedent(
    """
    import json
    from compare import accel; accel.enable()  # a process of ours: the import hooks
    import numba
    from llvmlite.binding import ffi
    from numba.core import event
    from compare.accel import numba_lock_events

    taken = []
    ffi.register_lock_callback(lambda: taken.append(1), lambda: None)

    class Count(event.Listener):
        n = 0
        def on_start(self, ev):
            Count.n += 1
        def on_end(self, ev):
            pass

    listener = Count()
    event.register("numba:llvm_lock", listener)

    @numba.njit
    def total(n):
        s = 0.0
        for i in range(n):
            s += i * 0.5
        return s

    result = total(10)
    print(json.dumps({
        "events": Count.n,
        "taken": len(taken),
        "numba_callbacks": len(numba_lock_events.callbacks()),
        "result": result,
    }))
    """
)


def _probe(*, eager: bool) -> dict:
    return json.loads(_child(["-c", PROBE], eager=eager).strip().splitlines()[-1])


@pytest.mark.parametrize("eager", [False, True], ids=["as-shipped", "planted-numba-as-released"])
def test_a_compile_takes_the_lock_without_numbas_events(eager):
    out = _probe(eager=eager)
    assert out["result"] == sum(i * 0.5 for i in range(10))
    # The lock is taken on every call into LLVM, with or without numba's callbacks.
    assert out["taken"] > 100
    if eager:
        assert out["numba_callbacks"] == 1 and out["events"] >= out["taken"]
    else:
        assert out["numba_callbacks"] == 0 and out["events"] == 0
