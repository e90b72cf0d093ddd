"""numba's slice-assignment error without the shapes (compare/accel/numba_slice_error.py).

What a user relies on: a slice assignment still assigns, a mismatch still
raises ``ValueError`` where it did, and numba no longer compiles its string
formatting for the message. Planted: a process with numba as released
(``BAYES_COMPARE_EAGER_NUMBA=1``) compiles ``raise_with_shape_context``'s CPU
implementation and numba's unicode functions, so the probe tells the two apart.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from numba import njit

from compare.accel import numba_slice_error
from tests.compare.accel.test_numba_lazy_code import _child  # a new process, numba either way

#: Compiles a function assigning a 2-d slice in a new process with ``compare``
#: imported first; prints what it assigned, the message of a mismatch, the
#: functions numba compiled on the way and the tag in numba's cache keys.
PROBE = textwrap.dedent(
    """
    import inspect, json
    import numpy as np
    from compare import accel; accel.enable()  # a process of ours: the import hooks
    import numba
    from numba.core import event
    from compare.accel import numba_slice_error

    compiled = []

    class Names(event.Listener):
        def on_start(self, ev):
            f = getattr(ev.data["dispatcher"], "py_func", None)
            compiled.append(f"{inspect.getsourcefile(f)}::{f.__qualname__}")
        def on_end(self, ev):
            pass

    @numba.njit
    def assign(a, b):
        a[1:, :] = b
        return a.sum()

    event.register("numba:compile", Names())
    total = assign(np.zeros((3, 2)), np.ones((2, 2)))
    try:
        assign(np.zeros((3, 2)), np.ones((3, 2)))
        message = None
    except ValueError as error:
        message = str(error)
    codegen = numba.core.registry.cpu_target.target_context.codegen()
    print(json.dumps({
        "total": total,
        "message": message,
        "compiled": compiled,
        "tagged": numba_slice_error.TAG in codegen.magic_tuple(),
    }))
    """
)


def _probe(*, eager: bool) -> dict:
    return json.loads(_child(["-c", PROBE], eager=eager).strip().splitlines()[-1])


@pytest.mark.parametrize("eager", [False, True], ids=["as-shipped", "planted-numba-as-released"])
def test_a_mismatch_raises_without_compiling_the_shapes_message(eager):
    out = _probe(eager=eager)
    assert out["total"] == 4.0
    assert out["message"] is not None and out["message"].startswith("cannot assign slice")
    formatting = [
        name
        for name in out["compiled"]
        if "raise_with_shape_context" in name or name.split("::")[0].endswith("unicode.py")
    ]
    if eager:
        assert "of shape (3, 2)" in out["message"]
        assert formatting and not out["tagged"]
    else:
        assert out["message"] == numba_slice_error.MESSAGE
        assert formatting == [] and out["tagged"]


def test_this_process_is_patched_and_raises_the_message():
    """The suite's own processes run the patch; an assignment of another rank still raises."""

    @njit
    def assign(a, b):
        a[:, :, :] = b

    a = np.zeros((2, 2, 2))
    assign(a, np.full((2, 2, 2), 3.0))
    assert (a == 3.0).all()
    with pytest.raises(ValueError, match=numba_slice_error.MESSAGE):
        assign(a, np.ones((2, 3, 2)))
    assert numba_slice_error.tag() == numba_slice_error.TAG
