"""A name for a PyTensor graph as built, before any rewrite: the same in every process.

Why
---
A compiled model loaded from the disk cache (:mod:`compare.accel.compiled_cache`)
still paid for the graphs its machine code was keyed by: PyTensor's rewrites of
the log density and its gradient, the hoisted part's rewrites and the numba
funcify: in the compile log of a warm run, 0.53 s of beta-binomial's load and 2.38 s
of the Gaussian classifier's (2026-12-05). Those graphs are a
deterministic function of the graph PyMC builds, the library versions and
PyTensor's configuration: given a name for that first graph, a load can find
what the rewrites made of it without making it again.

How
---
:func:`graph_key` walks the outputs in topological order and describes every
node by its Op and the descriptions of its inputs. An Op (and anything in an
Op's state: a scalar op, a type, a slice, an inner graph) is described by its
class and its ``__props__`` (what PyTensor's own equality compares) or, without
props, by all its attributes (a superset: at worst a miss, never two graphs
taken for one). Elemwise's ``nfunc``, which PyTensor caches on the op after a
first compile, is not a prop: the key of a graph is the same before and after
anything was compiled in the process. Constants are described by their data;
shared variables by their type and their order of first appearance (their
values are data, read at call time); the given inputs by their position.
Functions in an Op's state are described by their code (``marshal``), defaults
and closure; classes and functions from outside the libraries whose versions
are keyed add their module's source to the key. Anything else (an object
holding memory addresses, a file) makes the graph unkeyable: None, and the
caller builds the graphs as before.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
import types
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Top-level packages whose versions the compiled-model cache keys; the source of
#: classes and functions from any other module (the project's, a user's) is hashed.
VERSIONED = frozenset({"builtins", "numpy", "scipy", "pytensor", "pymc", "numba", "nutpie"})


class Unkeyable(Exception):
    """Something in the graph has no description that holds across processes."""


class _Describer:
    """Descriptions of variables and of the objects in Ops' state, memoised per graph."""

    def __init__(self) -> None:
        self.variables: dict[int, str] = {}
        self.objects: dict[int, Any] = {}
        self.modules: set[str] = set()
        self.roots = 0
        self.keep: list[Any] = []  # the objects whose id() keys the memos stay alive

    def variable(self, var: Any) -> str:
        """A digest of ``var``'s graph (an inner graph's free inputs numbered)."""
        from pytensor.graph.basic import Constant  # heavy: only when compiling

        found = self.variables.get(id(var))
        if found is not None:
            return found
        if var.owner is None:
            if isinstance(var, Constant):
                text: Any = ("constant", self.value(var.type), self.value(var.data))
            else:
                self.roots += 1
                text = ("root", self.roots, self.value(var.type))
        else:
            node = var.owner
            text = (
                "node",
                self.value(node.op),
                node.outputs.index(var),
                tuple(self.variable(i) for i in node.inputs),
                self.value(var.type),
            )
        digest = hashlib.sha256(repr(text).encode()).hexdigest()
        self.variables[id(var)] = digest
        self.keep.append(var)
        return digest

    def value(self, obj: Any) -> Any:
        """A description of ``obj`` made of plain Python values (raises :class:`Unkeyable`)."""
        if obj is None or isinstance(obj, bool | int | float | complex | str | bytes):
            return (type(obj).__name__, obj)
        if isinstance(obj, tuple | list):
            return (type(obj).__name__, tuple(self.value(x) for x in obj))
        if isinstance(obj, np.ndarray | np.generic):
            array = np.asarray(obj)
            if array.dtype.hasobject:
                raise Unkeyable("an array of Python objects")
            data = hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()
            return ("array", array.dtype.str, array.shape, data)
        if isinstance(obj, np.dtype):
            return ("dtype", obj.str)
        if isinstance(obj, slice):
            return ("slice", self.value(obj.start), self.value(obj.stop), self.value(obj.step))
        if isinstance(obj, np.ufunc):
            return ("ufunc", obj.__name__)
        if isinstance(obj, type | types.BuiltinFunctionType):
            self._module(obj.__module__)
            return ("named", obj.__module__, obj.__qualname__)
        if isinstance(obj, types.FunctionType):
            return self._function(obj)
        if isinstance(obj, set | frozenset):
            return ("set", tuple(sorted(repr(self.value(x)) for x in obj)))
        if isinstance(obj, dict) or (hasattr(obj, "items") and not hasattr(obj, "__dict__")):
            items = ((repr(self.value(k)), self.value(v)) for k, v in obj.items())
            return ("dict", tuple(sorted(items)))
        return self._object(obj)

    def _object(self, obj: Any) -> Any:
        from pytensor.graph.basic import Apply, Variable  # heavy: only when compiling
        from pytensor.graph.fg import FunctionGraph  # heavy: only when compiling

        if isinstance(obj, Variable):
            return ("variable", self.variable(obj))
        if isinstance(obj, Apply):
            return ("apply", self.value(obj.op), tuple(self.variable(i) for i in obj.inputs))
        if isinstance(obj, FunctionGraph):
            inputs = tuple(self.variable(i) for i in obj.inputs)
            return ("graph", inputs, tuple(self.variable(o) for o in obj.outputs))
        found = self.objects.get(id(obj))
        if found is not None:
            return found
        self.objects[id(obj)] = ("cycle",)  # an object that refers back to itself
        self.keep.append(obj)
        cls = type(obj)
        props = getattr(cls, "__props__", None)
        if props is not None:
            state = {name: getattr(obj, name) for name in props}
        elif hasattr(obj, "__dict__"):
            state = vars(obj)
        else:
            raise Unkeyable(f"{cls.__module__}.{cls.__qualname__} has no readable state")
        self._module(cls.__module__)
        described = ("object", cls.__module__, cls.__qualname__, self.value(state))
        self.objects[id(obj)] = described
        return described

    def _function(self, fn: Any) -> Any:
        self._module(fn.__module__)
        closure = tuple(cell.cell_contents for cell in fn.__closure__ or ())
        return (
            "function",
            fn.__module__,
            fn.__qualname__,
            hashlib.sha256(marshal.dumps(fn.__code__)).hexdigest(),
            self.value(fn.__defaults__),
            self.value(fn.__kwdefaults__),
            self.value(closure),
        )

    def _module(self, name: str | None) -> None:
        if name is not None and name.partition(".")[0] not in VERSIONED:
            self.modules.add(name)

    def sources(self) -> list[tuple[str, str]]:
        """(module, digest of its source file) for every unversioned module seen."""
        found = []
        for name in sorted(self.modules):
            path = getattr(sys.modules.get(name), "__file__", None)
            if path is None:
                raise Unkeyable(f"module {name} has no source file")
            with open(path, "rb") as handle:
                found.append((name, hashlib.sha256(handle.read()).hexdigest()))
        return found


def graph_key(
    outputs: Sequence[Any], inputs: Sequence[Any], *, extra: Any = ()
) -> tuple[str, list[Any]] | None:
    """The key of the graph of ``outputs`` in ``inputs`` (and its shared variables).

    Parameters
    ----------
    outputs : sequence of pytensor Variable
        The graph's outputs, as built (before any rewrite).
    inputs : sequence of pytensor Variable
        Root variables told apart by position (the model's value variables).
    extra : plain Python values
        Anything else the caller's result depends on (versions, flags), keyed too.

    Returns
    -------
    (key, shared) or None
        A SHA-256 hex digest, and the graph's shared variables in the order the key
        numbers them (the same order in any process that builds the same graph);
        None when something in the graph cannot be described (:class:`Unkeyable`).
    """
    from pytensor.compile.sharedvalue import SharedVariable  # heavy: only when compiling
    from pytensor.graph.basic import Constant  # heavy: only when compiling
    from pytensor.graph.traversal import graph_inputs, io_toposort  # heavy: as above

    describer = _Describer()
    shared: list[Any] = []
    try:
        for position, var in enumerate(inputs):
            text: Any = ("input", position, describer.value(var.type))
            describer.variables[id(var)] = hashlib.sha256(repr(text).encode()).hexdigest()
        for root in graph_inputs(list(outputs)):
            if id(root) in describer.variables or isinstance(root, Constant):
                continue
            if not isinstance(root, SharedVariable):
                raise Unkeyable(f"the graph reads {root}, neither an input nor shared")
            text = ("shared", len(shared), describer.value(root.type))
            describer.variables[id(root)] = hashlib.sha256(repr(text).encode()).hexdigest()
            shared.append(root)
        for node in io_toposort(list(graph_inputs(list(outputs))), list(outputs)):
            for out in node.outputs:  # in order: no deep recursion on long chains
                describer.variable(out)
        described = [describer.variable(out) for out in outputs]
        whole = repr((described, describer.sources(), describer.value(extra)))
    except (Unkeyable, OSError):
        return None
    return hashlib.sha256(whole.encode()).hexdigest(), shared
