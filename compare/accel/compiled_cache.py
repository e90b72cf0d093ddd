"""nutpie's compiled log density, kept on disk so that a new process does not compile again.

Why
---
``nutpie.compile_pymc_model`` spends ~90% of its 4.5-11 s in one
``numba.cfunc`` per model (the log density with its gradient, and the
"expand" function that turns the flat position into the model's variables).
Numba will not cache those cfuncs itself: they are closures over PyTensor's
generated functions. Yet their final machine code has no dynamic globals
(``library.has_dynamic_globals`` is False: the data arrive at call time
through nutpie's ``user_data`` pointer), so the object code can be
serialised and loaded again, exactly as numba's own cache does for a
``cache=True`` function. Loading takes ~0.05 s.

How
---
:func:`compile_pymc_model` does what ``nutpie.compile_pymc_model`` does for
the numba backend (same initial point function, same ``user_data`` record,
the same log-density cfunc), except that nutpie's second cfunc, which
computes the model's variables from each draw, is a copy of the position,
the variables being computed for all the draws at once after sampling
(:class:`Expansion`, :func:`sample`), that the two cfuncs are looked up in
:func:`cache_dir` first and written there after a compile, and that the
flat position's layout is read from the model's dimension lengths rather
than fixed (:func:`_make_functions`): a model whose shapes all follow its
dimensions compiles once for every length (the Dirichlet model for any
number of categories, the regression for any number of features).
What is restored is the very machine code that a compile produced, so the
draws for a seed are the same, bit for bit, whether it came from the cache
or not (``tests/compare/accel/test_compiled_cache.py`` checks it in two
processes).

The key (:func:`cache_key`) is a SHA-256 over what the machine code depends
on: PyTensor's own cache keys of the compiled graphs (every Op, constant
and edge; ``None`` when an Op has no key, and then nothing is cached), the
types of the graphs' inputs, the dimensions when the layout is fixed, the versions of Python, numba,
llvmlite, nutpie, PyTensor, PyMC and NumPy, and the host CPU's name and
features. A stale or damaged file is a miss: it is compiled again and
overwritten. A process about to compile a missing model holds
``<key>.lock`` (an advisory ``flock``, released by the kernel if the process
dies) while it compiles and stores; another process that wants the same model
waits for it (:func:`cache_store.compiling`) and loads what it wrote,
instead of spending the same minutes of CPU (two test workers reaching one
topic together compiled it twice).

A load still had to build the graphs its key is computed from (PyTensor's
rewrites, the hoisted part, the numba funcify): 0.35 s of a second ``run
beta-binomial``, 2.0 s of the Gaussian classifier's. Beside the machine code,
``<graph key>.graphs`` keeps what a load reads of those graphs (the machine
code's key, the order of the shared variables in the ``user_data`` record, the
hoisted part's PyTensor function), filed under the key of the graph PyMC
builds, before any rewrite (:func:`_graph_key_of`,
:mod:`compare.accel.graph_key`); a load that finds it builds no graph
(:class:`StoredGraphs`). Graphs whose machine code is gone are built again.
:func:`python_functions` does the same for PyTensor functions of the Python
linker (the MAP finder's objective): pickled, filed under their graph's key.

Where
-----
``$BAYES_COMPARE_CACHE_DIR/compiled`` if that variable is set (``off``
disables the cache), else ``$XDG_CACHE_HOME/bayes-compare/compiled``, else
``~/.cache/bayes-compare/compiled``. ``bayes-compare cache clear`` (or
deleting the folder) empties it. CI points it at a fresh temporary folder,
as it does PyTensor's and numba's caches, so a run starts cold.

Each entry is verified before it is read (its key, length and SHA-256:
:mod:`compare.accel.cache_store`): a damaged or foreign entry is a miss, said
in one line, and compiled again; a folder other users may write to is refused.

An accelerator of the "call" kind (:mod:`compare.accel`): it replaces nothing in
another package and serves library use (``compare.check``) as well as our own
processes. It reads nutpie's, PyTensor's and numba's private compile internals
(``_make_functions``, ``_make_c_logp_func``, ``CACHED_SRC_FUNCTIONS``, numba's
code libraries), so it runs only with the versions it was verified with
(:data:`compare.accel.ACCELERATORS`), when :func:`supported` finds those
internals, and not with ``BAYES_COMPARE_ACCEL=0``; otherwise nutpie's own
``compile_pymc_model``, ``with_data`` and ``sample`` are used and nothing is
cached (:func:`_folder`). In a process without the numba accelerators (a user's
session) its entries are keyed apart from those of our processes (the
accelerators' tags are in the key), and the draws of a loaded model can differ in
the last bits from those of a cold compile, as they do for numba's own cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import platform
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from compare.accel import allowed, cache_store, numba_lazy_code, numba_slice_error
from compare.accel.cache_root import ENV, cache_root
from compare.accel.nutpie_trace import faster_conversion

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "compiled-cache"

#: Bumped when the file layout or the key's recipe changes.
FORMAT = 5

_NUTPIE_NAMES = (
    "_make_functions",
    "_compute_shapes",
    "_rv_dict_to_flat_array_wrapper",
    "make_extraction_fn",
    "_prepare_dims_and_coords",
    "_wrap_with_lock",
    "make_user_data",
    "CompiledPyMCModel",
    "_UNCONSTRAINED_PARAMETER",
)
_lock = threading.Lock()


def cache_dir(*, environ: os._Environ[str] | dict[str, str] | None = None) -> Path | None:
    """The folder of compiled models, or None when the cache is switched off.

    Parameters
    ----------
    environ : mapping, optional
        The environment to read (``os.environ`` by default).
    """
    root = cache_root(environ=environ)
    return None if root is None else root / "compiled"


def environment_with_caches_in(
    folder: str | Path, *, environ: os._Environ[str] | dict[str, str] | None = None
) -> dict[str, str]:
    """A copy of the environment whose processes keep every compile cache in ``folder``.

    PyTensor's (``base_compiledir`` and ``compiledir``, which win over the
    user's own ``PYTENSOR_FLAGS``, whose other flags are kept), numba's and
    ours: an empty ``folder`` is a new machine (``.ci/run`` does the same in
    shell; the benchmarks and tests that need a cold cache use this).
    """
    env = dict(os.environ if environ is None else environ)
    flags = env.get("PYTENSOR_FLAGS", "")
    env["PYTENSOR_FLAGS"] = (
        f"{flags}," if flags else ""
    ) + f"base_compiledir={folder}/pytensor,compiledir={folder}/pytensor/compiledir"
    env["NUMBA_CACHE_DIR"] = f"{folder}/numba"
    env[ENV] = f"{folder}/bayes-compare"
    return env


def jax_cache_dir(*, environ: os._Environ[str] | dict[str, str] | None = None) -> Path | None:
    """JAX's persistent compilation cache for the JAX methods, beside :func:`cache_dir`.

    ``pm.sample(nuts_sampler="numpyro" | "blackjax")`` and Pathfinder trace and
    compile a new XLA program at every call (PyMC builds a fresh closure over
    the data), 4-6 s for a one-parameter model against well under a second of
    sampling. XLA's own disk cache, keyed by the program (its constants, so
    the data, included), the compile options, the JAX version and the
    device, turns a repeated program into a load: measured on beta-binomial,
    4 x 1500 NumPyro steps, 6.2 s -> 2.0 s per run from the second on, and a
    new process's first run too. None when the cache is off.
    """
    folder = cache_dir(environ=environ)
    return None if folder is None else folder.parent / "jax"


def supported() -> bool:
    """True if the installed nutpie has the compile internals this module reuses."""
    from nutpie import compile_pymc  # heavy: nutpie (numba) only when compiling

    return all(hasattr(compile_pymc, name) for name in _NUTPIE_NAMES)


def _folder() -> Path | None:
    """The folder of compiled models when this accelerator may run here, else None.

    None when the cache is off (``BAYES_COMPARE_CACHE_DIR=off``), when
    ``BAYES_COMPARE_ACCEL=0``, when the packages it reaches into are not the
    verified versions (:data:`compare.accel.ACCELERATORS`), when nutpie lacks the
    internals it reuses, or when the folder is unsafe or cannot be made
    (:func:`cache_store.usable_folder`, which says so): the caller then uses
    nutpie's own compile.
    """
    folder = cache_dir()
    if folder is None or not allowed(NAME) or not supported():
        return None
    return folder if cache_store.usable_folder(folder) else None


@dataclass(frozen=True)
class _Restored:
    """What nutpie reads of a compiled ``numba.cfunc``: its address (and the code's owner)."""

    address: int
    native_name: str
    _library: Any  # numba's CodeLibrary: keeps the loaded machine code alive
    _environments: tuple[Any, ...] = ()  # the code reads these objects' addresses


def _environment() -> dict[str, Any]:
    """Everything outside the graph that the machine code depends on."""
    import llvmlite  # heavy: numba's LLVM binding, only when compiling
    import llvmlite.binding as llvm  # heavy: as above
    import numba  # heavy: only when compiling
    import nutpie  # heavy: only when compiling
    import pymc as pm  # heavy: only when compiling
    import pytensor  # heavy: only when compiling

    return {
        "format": FORMAT,
        "python": sys.version,
        "platform": platform.platform(),
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "nutpie": nutpie.__version__,
        "pytensor": pytensor.__version__,
        "pymc": pm.__version__,
        "numpy": np.__version__,
        "cpu": llvm.get_host_cpu_name(),
        "cpu_features": llvm.get_host_cpu_features().flatten(),
        "numba_opt": getattr(numba.config, "OPT", None),
        # The machine code differs with numba's optimisation of callees (see module).
        "numba_lazy_code": numba_lazy_code.tag(),
        "numba_slice_error": numba_slice_error.tag(),
        "nutpie_extraction": os.environ.get(NUTPIE_EXTRACTION_ENV) == "1",
    }


def cache_key(
    logp_fn_pt: Any, expand_fn_pt: Any, *, n_dim: int, n_expanded: int, shape_generic: bool = False
) -> str | None:
    """The file name of this model's compiled code; None if it cannot be keyed.

    Parameters
    ----------
    logp_fn_pt, expand_fn_pt : pytensor.compile.function.types.Function
        The two functions of :func:`_make_functions` (numba mode).
    n_dim, n_expanded : int
        Length of the flat position and of the expanded draw.
    shape_generic : bool
        True when the graphs read the layout from the dimension lengths (then the
        machine code serves any lengths, and the two above are left out of the key).
    """
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS  # heavy: PyTensor

    graphs: list[Any] = []
    for fn in (logp_fn_pt, expand_fn_pt):
        if isinstance(fn, Expansion):  # nutpie gets a copy of the position: no graph
            graphs.append({"graph": "position copy"})
            continue
        key = CACHED_SRC_FUNCTIONS.get(fn.vm.jit_fn.py_func)
        if key is None:  # an Op PyTensor cannot key: the graph is not identified
            return None
        inputs = [str(inp.type) for inp in fn.maker.fgraph.inputs]
        shared = [str(var.type) for var in fn.get_shared()]
        graphs.append({"graph": key, "inputs": inputs, "shared": shared})
    layout: dict[str, int] = {} if shape_generic else {"n_dim": n_dim, "n_expanded": n_expanded}
    text = json.dumps({"graphs": graphs, **layout, "env": _environment()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _load(path: Path, key: str) -> tuple[_Restored, _Restored] | None:
    """The two cfuncs stored at ``path``; None if absent, stale or damaged.

    :func:`cache_store.read` verifies the entry (its key, length and checksum)
    before anything of it is unpickled or given to LLVM.
    """
    data = cache_store.read(path, kind="code", key=key)
    if data is None:
        return None
    try:
        payload = pickle.loads(data)
        if not isinstance(payload, dict) or payload.get("key") != key:
            raise ValueError("another model's entry")
        environments = pickle.loads(payload["environments"])
    except Exception as err:  # noqa: BLE001 -- a module gone or changed: compile again
        cache_store.note(
            f"the compiled-model cache entry {path.name} cannot be read here "
            f"({type(err).__name__}): the model is compiled again",
            once=f"unpickle {path}",
        )
        return None
    from numba.core.registry import cpu_target  # heavy: numba only when compiling
    from numba.core.runtime import rtsys  # heavy: as above

    context = cpu_target.target_context
    if os.environ.get(FULL_REFRESH_ENV) == "1":
        context.refresh()
    else:
        # What the restored code links against: numba's runtime (NRT), whose
        # symbols this registers, and the C helpers and math functions the context
        # registered when it was made. Not context.refresh(), which also installs
        # every typing and lowering registry (~0.3 CPU-s of a second `run`) that
        # only a compile reads (and numba's compiler and cache refresh it themselves).
        rtsys.initialize(context)
    try:
        return _link(context.codegen(), payload, environments)
    except Exception:  # noqa: BLE001 -- a symbol only the full context registers: add it
        context.refresh()
        return _link(context.codegen(), payload, environments)


#: ``BAYES_COMPARE_LOAD_REFRESH=1``: refresh numba's whole context before loading a
#: compiled model (as before; ``benchmarks/second_run.py`` measures the difference).
FULL_REFRESH_ENV = "BAYES_COMPARE_LOAD_REFRESH"


def _link(codegen: Any, payload: dict[str, Any], environments: Any) -> tuple[_Restored, _Restored]:
    """The two cfuncs of a cache file's payload, linked into this process."""
    restored = []
    for name, envs in zip(("logp", "expand"), environments, strict=True):
        library = codegen.unserialize_library(payload[name])
        native = payload[f"{name}_name"]
        address = library.get_pointer_to_function(native)
        for env in envs:  # as numba's CompileResult._rebuild does
            codegen.set_env(env.env_name, env)
        restored.append(_Restored(address, native, library, tuple(envs)))
    return restored[0], restored[1]


def _environments(library: Any) -> list[Any]:
    """The numba Environments the code refers to (Python objects used in object mode).

    As numba's own cache does (``CompileResult._find_referenced_environments``):
    each is rebuilt when the code is loaded and its address written into the
    code's global. Like numba, environments of functions made at run time
    (``can_cache()`` False: array expressions, with no constants) are left out.
    """
    from numba.core.environment import lookup_environment  # heavy: numba

    found = []
    for variable in library._final_module.global_variables:
        if variable.name.startswith("_ZN08NumbaEnv"):
            env = lookup_environment(variable.name)  # type: ignore[no-untyped-call]
            if env is None:
                continue  # never created: the code does not read it
            if env.can_cache():
                found.append(env)
    return found


def _store(path: Path, key: str, logp: Any, expand: Any) -> None:
    """Write both cfuncs' object code to ``path`` atomically; skip what cannot be stored."""
    if logp._library.has_dynamic_globals or expand._library.has_dynamic_globals:
        return  # raw addresses of this process: not valid in another
    try:
        environments = pickle.dumps(
            (_environments(logp._library), _environments(expand._library)),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
    except Exception:  # noqa: BLE001 -- an environment numba cannot rebuild: do not cache
        return
    payload = {
        "key": key,
        "environments": environments,
        "logp": logp._library.serialize_using_object_code(),
        "logp_name": logp.native_name,
        "expand": expand._library.serialize_using_object_code(),
        "expand_name": expand.native_name,
    }
    _write(path, "code", key, payload)


def _write(path: Path, kind: str, key: str, payload: Any) -> None:
    """Pickle ``payload`` into a verified entry at ``path`` (:mod:`cache_store`)."""
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    cache_store.write(path, kind=kind, key=key, payload=data)


def _symbolic_shape(model: Any, rv: Any) -> Any | None:
    """The shape of ``rv``'s value variable as a graph of the model's dimension lengths.

    None when the shape cannot be told without a draw (a ``RandomVariable`` left
    in its graph after PyTensor's shape inference).
    """
    from pytensor.graph import ancestors, rewrite_graph  # heavy: only when compiling
    from pytensor.tensor.random.op import RandomVariable  # heavy: only when compiling

    transform = model.rvs_to_transforms.get(rv)
    value = rv if transform is None else transform.forward(rv, *rv.owner.inputs)
    shape: Any = rewrite_graph(value.shape, include=("canonicalize", "ShapeOpt"), clone=True)
    for node in ancestors([shape]):
        if node.owner is not None and isinstance(node.owner.op, RandomVariable):
            return None
    return shape


#: Set to 1 to have nutpie compute the variables from each draw with its own compiled
#: "expand" function, as before :class:`Expansion` (``benchmarks/expand.py``'s reference).
NUMBA_EXPAND_ENV = "BAYES_COMPARE_NUMBA_EXPAND"

#: The one variable of nutpie's trace of a model compiled here: the flat position
#: (the free variables' unconstrained values, joined). :func:`sample` replaces it by
#: the model's variables, computed with :class:`Expansion`.
POSITION = "__position"


@dataclass
class Expansion:
    """The model's variables, as nutpie's trace holds them, from draws of the flat position.

    nutpie turns each draw's position into the model's variables with a second
    compiled function (its "expand" cfunc), called once per draw. That
    function is a sixth of a model's cold compile (1.5 of 9.1 s for the
    beta-binomial, 7.3 of 45.7 s for the mixture, timed in one process with
    empty caches; ``benchmarks/expand.py`` measures the change),
    yet all it computes is the transforms back to each variable's support and
    the model's Deterministics. Here nutpie is given a copy of the position
    instead (:func:`_make_c_copy_func`, the same few lines for every model),
    and :func:`sample` computes the variables for all the draws at once:
    PyTensor's graphs of them, vectorised over the draws
    (``vectorize_graph``), evaluated by its Python linker with NumPy (0.01-0.7 s
    to build at the first sample, 0.01-0.04 s for 8000 draws of any topic's model).

    ``names``, ``shapes``, ``dims`` and ``coords`` are what nutpie would have
    put in the trace (the transformed values left out, as nutpie leaves them).
    """

    position: Any  # the symbolic flat position, a vector
    outputs: list[Any]  # one graph per name: the variable as a function of position
    names: list[str]
    shapes: list[tuple[int, ...]]
    dims: dict[str, Any]
    coords: dict[str, Any]
    _graphs: tuple[Any, ...] = ()  # (draws, stand-ins of the shared variables, outputs)
    _inputs: tuple[Any, ...] = ()  # the shared variables the stand-ins stand for
    _batched: Any = None  # the compiled function of _graphs

    def vectorize(self) -> None:
        """Build the graphs of every variable for a matrix of draws (raises if PyTensor
        cannot vectorise one: then nutpie's own expand function is used)."""
        import pytensor.tensor as pt  # heavy: only when compiling
        from pytensor.compile.sharedvalue import SharedVariable  # heavy: only when compiling
        from pytensor.graph import clone_replace  # heavy: only when compiling
        from pytensor.graph.replace import vectorize_graph  # heavy: only when compiling
        from pytensor.graph.traversal import graph_inputs  # heavy: only when compiling

        shared = [v for v in graph_inputs(self.outputs) if isinstance(v, SharedVariable)]
        stand_ins: dict[Any, Any] = {var: var.type() for var in shared}
        draws = pt.dmatrix("draws")
        outputs = vectorize_graph(
            clone_replace(self.outputs, stand_ins), replace={self.position: draws}
        )
        self._graphs = (draws, tuple(stand_ins.values()), tuple(outputs))
        self._inputs = tuple(shared)

    def __call__(self, draws: np.ndarray, shared: dict[Any, np.ndarray]) -> list[np.ndarray]:
        """Each variable at each row of ``draws`` (n, position length): (n, *shape).

        ``shared`` gives the value of the model's shared variables nutpie was
        sampled with (its ``with_data``); the others have their current value.
        """
        if self._batched is None:
            import pytensor  # heavy: only when sampling
            from pytensor.compile.mode import Mode  # heavy: only when sampling

            matrix, stand_ins, outputs = self._graphs
            # The Python linker: NumPy on whole arrays, no C or numba compile. Its
            # rewrites must not turn exp(x) / sum(exp(x)) into a softmax op: see
            # inline_inner_graphs.
            mode = Mode(linker="py", optimizer="fast_compile").excluding(  # type: ignore[no-untyped-call]
                "symbolic_op_recognition"
            )
            self._batched = pytensor.function(
                [matrix, *stand_ins],
                inline_inner_graphs(outputs),
                mode=mode,
                on_unused_input="ignore",
            )
        values = [shared[var] if var in shared else var.get_value() for var in self._inputs]
        out = self._batched(np.ascontiguousarray(draws, dtype=np.float64), *values)
        return [
            np.asarray(value).reshape((draws.shape[0], *shape))
            for value, shape in zip(out, self.shapes, strict=True)
        ]


def inline_inner_graphs(outputs: Any) -> list[Any]:
    """``outputs`` with every op that has an inner graph replaced by that graph.

    PyTensor writes softmax, log-softmax, logsumexp and xlogy (and their
    gradients) as ops with an inner graph; the simplex transform's backward
    step is a softmax. The FAST_RUN rewrites inline them at their fusion step;
    without it, the Python linker runs such an op's inner graph with the
    ``vm`` linker, which compiles every inner node with the C compiler: with
    the MAP finder's (``sampling.MAP_FIRST_MODE``), 36 of the 41 g++ runs of a
    ``run --all`` on an empty cache, here softmax ops that the FAST_COMPILE
    rewrites had made of the simplex transform (the caller excludes that
    recognition too). Inlined, the Python linker evaluates them with NumPy
    like every other node: a cold ``run --all`` went from 167 s wall, 317
    CPU-s and 41 g++ runs to 148 s, 287 CPU-s and 5 (2026-12-04).
    """
    from pytensor.compile.builders import OpFromGraph  # heavy: only when compiling
    from pytensor.compile.rewriting import inline_ofg_node  # heavy: only when compiling
    from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter  # heavy
    from pytensor.graph.rewriting.utils import rewrite_graph  # heavy: only when compiling

    @node_rewriter([OpFromGraph])  # type: ignore[untyped-decorator]
    def inline(fgraph: Any, node: Any) -> Any:
        return inline_ofg_node(node)

    rewritten: Any = rewrite_graph(
        list(outputs), include=(), custom_rewrite=dfs_rewriter(inline), clone=True
    )
    return list(rewritten)


def _expand_signature(numba: Any) -> Any:
    """nutpie's expand cfunc signature: (dim, expanded, position, out, user_data) -> status."""
    double_pointer = numba.types.CPointer(numba.types.double)
    return numba.types.int64(
        numba.types.uint64,
        numba.types.uint64,
        double_pointer,
        double_pointer,
        numba.types.voidptr,
    )


def _make_c_copy_func() -> tuple[Any, Any]:
    """nutpie's expand cfunc for a model with an :class:`Expansion`: a copy of the position."""
    import numba as numba_module  # heavy: only when compiling

    numba: Any = numba_module
    c_sig = _expand_signature(numba)

    def copy_numba(dim: Any, expanded: Any, x_: Any, out_: Any, user_data_: Any) -> int:
        if expanded != dim:
            return -1
        x = numba.carray(x_, (dim,))
        out = numba.carray(out_, (expanded,))
        out[...] = x
        return 0

    return copy_numba, c_sig


@dataclass(frozen=True)
class RawTrace:
    """nutpie's raw trace (``return_raw_trace=True``) of a model with an :class:`Expansion`.

    Its arrow batches hold the column :data:`POSITION` instead of the model's
    variables; :meth:`variables` computes them from a batch's positions.
    """

    trace: Any
    expansion: Expansion
    shared: dict[Any, np.ndarray]

    def get_arrow_trace(self) -> Any:
        """nutpie's (draw batches, stat batches), one of each per chain."""
        return self.trace.get_arrow_trace()

    def variables(self, position: np.ndarray) -> dict[str, np.ndarray]:
        """Each variable at each row of ``position`` (n, position length): (n, *shape)."""
        return dict(zip(self.expansion.names, self.expansion(position, self.shared), strict=True))


def sample(compiled: Any, **kwargs: Any) -> Any:
    """``nutpie.sample(compiled, **kwargs)`` for a model of :func:`compile_pymc_model`.

    Returns nutpie's DataTree with the model's variables in the posterior
    (and the warm-up posterior, when kept), computed from the draws of the
    position (:class:`Expansion`); the same names, dims and coordinates as
    nutpie's own compile gives. With ``return_raw_trace=True``, a
    :class:`RawTrace` (nutpie's own raw trace for a model without an expansion).
    """
    import nutpie  # heavy: only when sampling
    import xarray as xr  # heavy: only when sampling

    with faster_conversion():  # nutpie's DataTree, without arviz-base's per-variable merge
        tree = nutpie.sample(compiled, **kwargs)
    expansion = getattr(compiled, "expand_func", None)
    if not isinstance(expansion, Expansion):
        return tree  # nutpie's own expand function (a fixed layout): nothing to do
    shared = {var: compiled.shared_data[key] for var, key in compiled.shared_var_keys.items()}
    for var in expansion._inputs:  # data nutpie's record lacks: its value now, kept
        if var not in shared:
            shared[var] = var.get_value()  # a copy (borrow=False)
    if not isinstance(tree, xr.DataTree):  # return_raw_trace: nutpie's arrow trace
        return RawTrace(tree, expansion, shared)
    for group in ("posterior", "warmup_posterior"):
        if group not in tree.children:
            continue
        old = tree[group].to_dataset()
        position = old[POSITION].values  # (chain, draw, n_dim)
        n_chain, n_draw = position.shape[:2]
        values = expansion(position.reshape(n_chain * n_draw, -1), shared)
        data_vars = {}
        coords: dict[str, Any] = {"chain": old["chain"].values, "draw": old["draw"].values}
        for name, value, shape in zip(expansion.names, values, expansion.shapes, strict=True):
            dims = list(expansion.dims.get(name) or [f"{name}_dim_{i}" for i in range(len(shape))])
            for dim, length in zip(dims, shape, strict=True):
                if dim not in coords:
                    known = expansion.coords.get(dim)
                    coords[dim] = np.asarray(known) if known is not None else np.arange(length)
            data_vars[name] = (("chain", "draw", *dims), value.reshape(n_chain, n_draw, *shape))
        tree[group] = xr.DataTree(xr.Dataset(data_vars, coords=coords, attrs=old.attrs))
    return tree


#: Set to 1 to compile the whole log density into the machine code, the part that reads
#: only the data included, as before :class:`Hoisted` (its tests' reference).
NO_HOIST_ENV = "BAYES_COMPARE_NO_HOIST"
#: Names of the shared variables that hold hoisted values (nutpie's ``with_data`` finds
#: shared variables by name).
HOISTED_PREFIX = "__bayes_compare_hoisted_"


@dataclass
class Hoisted:
    """The values of a log density's costly data-only part, computed once per data set.

    A model's log density and gradient read the data (its shared variables)
    through graphs that do not depend on the parameters. Where such a graph
    factorises, solves or multiplies matrices (the GP's Cholesky factor of
    K + noise^2 I and the solves with it; the Wishart prior's factor of its
    scale matrix), numba compiled it and the sampler evaluated it at every
    gradient: on mcycle's 133 points the GP's factor was nearly all of a
    250 us gradient. :func:`_hoist` cuts the rewritten graph where such values
    meet the parameters: the machine code reads them as more shared
    variables (``hoisted``, carried in nutpie's ``user_data`` record like the
    data), and :meth:`values` computes them with PyTensor's Python linker from
    the data, when the model is compiled and again for each data set
    :func:`with_data` swaps in. Cheap data-only nodes (shapes, sums, logs)
    stay: each hoisted value is a field of the record that the machine code
    unpacks, compiled per field, and hoisting all of them made small models'
    compiles slower (gamma-Poisson 5.5 -> 10.4 CPU-s for 14 scalars).

    Measured (new processes, empty caches, idle, 2026-12-05): the GP on mcycle,
    compile 19.5 -> 11.0 s and sampling 13.6 -> 1.3 s; on its default data,
    compile 10.3 -> 6.5 s and sampling 2.5 -> 0.5 s; the classifier's (and
    the mixture's) model hoists its prior's factor and compiles as before
    (40.4 and 40.1 CPU-s without, 40.4 and 41.2 with). The draws for a seed
    are the same whether the machine code was compiled or loaded (both read
    the same hoisted values), not those of the whole graph (round-off).
    """

    shared: list[Any]  # the model's shared variables the data-only part reads
    hoisted: list[Any]  # the shared variables the machine code reads instead of that part
    function: Any  # shared values (in ``shared``'s order) -> hoisted values

    def values(self, known: dict[Any, Any]) -> dict[Any, np.ndarray]:
        """Each hoisted variable's value, from each shared variable's value in ``known``
        (its current value if it is not there)."""
        args = [known[var] if var in known else var.get_value() for var in self.shared]
        out = self.function(*args)
        return {
            var: np.asarray(value, dtype=var.type.dtype)
            for var, value in zip(self.hoisted, out, strict=True)
        }


def hoisted_of(logp_fn: Any) -> Hoisted | None:
    """The :class:`Hoisted` part of a compiled log-density function (None: nothing hoisted)."""
    if isinstance(logp_fn, StoredGraphs):
        return logp_fn.hoisted
    return getattr(getattr(logp_fn, "maker", None), "bayes_compare_hoisted", None)


@dataclass(frozen=True)
class StoredGraphs:
    """What PyTensor made of a model's log density, read from the cache (no graph built).

    The log-density function's place in nutpie's compiled model when its graphs
    were found by :func:`_graph_key_of`: everything a load reads of the compiled
    PyTensor function (the machine code's key, the shared variables in the
    order of the ``user_data`` record, the :class:`Hoisted` part) without the
    rewrites and the numba funcify that made them (0.53 s for beta-binomial's
    model, 2.38 s for the Normal-Wishart one; 0.18 and 0.41 s with them read).
    """

    key: str  # the machine code's cache_key
    shared: tuple[Any, ...]  # the shared variables the machine code reads, in order
    hoisted: Hoisted | None

    def get_shared(self) -> list[Any]:
        """As ``pytensor.compile.function.types.Function.get_shared``."""
        return list(self.shared)


#: ``BAYES_COMPARE_BUILD_GRAPHS=1``: build every graph (the log density's, the MAP
#: finder's) as before :class:`StoredGraphs` and :func:`python_functions`, the machine
#: code still loaded (``benchmarks/second_run.py`` measures the difference).
BUILD_GRAPHS_ENV = "BAYES_COMPARE_BUILD_GRAPHS"
#: The graph files' suffix in :func:`cache_dir` (``<graph key>.graphs``, a pickle).
GRAPHS_SUFFIX = ".graphs"
#: PyTensor settings that change what its rewrites make of a graph (in the graph key).
_REWRITE_FLAGS = (
    "floatX",
    "cast_policy",
    "optimizer",
    "optimizer_excluding",
    "optimizer_including",
    "optimizer_requiring",
    "optdb__position_cutoff",
    "optdb__max_use_ratio",
    "numba__fastmath",
    "tensor__cmp_sloppy",
)


def _rewrite_context() -> dict[str, Any]:
    """What, besides a graph, decides what PyTensor's rewrites and numba make of it:
    the versions and CPU (:func:`_environment`) and PyTensor's rewrite flags."""
    import pytensor  # heavy: only when compiling

    flags = [str(getattr(pytensor.config, flag, None)) for flag in _REWRITE_FLAGS]
    return {"environment": _environment(), "flags": flags}


def _graph_key_of(
    model: Any, logp: Any, shapes: list[Any], value_vars: list[Any]
) -> tuple[str, list[Any]] | None:
    """The key of the graphs :func:`_make_functions` builds for ``model`` (and the
    model's shared variables in the key's order): its log density as PyMC built it,
    the free variables' symbolic shapes and all that the rewrites depend on
    (:mod:`compare.accel.graph_key`). None when the graph cannot be keyed."""
    from compare.accel import graph_key  # only when compiling: PyTensor graphs

    extra = {
        **_rewrite_context(),
        "check_bounds": bool(model.check_bounds),
        "dtypes": [rv.dtype for rv in model.free_RVs],
        "no_hoist": os.environ.get(NO_HOIST_ENV) == "1",
        "numba_expand": os.environ.get(NUMBA_EXPAND_ENV) == "1",
    }
    return graph_key.graph_key([logp, *shapes], value_vars, extra=extra)


def _load_graphs(folder: Path, graph: str, shared: list[Any]) -> StoredGraphs | None:
    """The :class:`StoredGraphs` filed under ``graph``; None if absent, stale or damaged."""
    import pytensor  # heavy: only when compiling

    data = cache_store.read(folder / f"{graph}{GRAPHS_SUFFIX}", kind="graphs", key=graph)
    if data is None:
        return None
    try:
        payload = pickle.loads(data)
        if payload.get("graph") != graph:
            return None
        hoisted = None
        if payload["hoisted"] is not None:
            stored = payload["hoisted"]
            new_shared: Any = pytensor.shared  # untyped in PyTensor
            made = [
                new_shared(
                    np.zeros([n if n is not None else 0 for n in shape], dtype=dtype),
                    name=f"{HOISTED_PREFIX}{i}",
                    shape=shape,
                )
                for i, (shape, dtype) in enumerate(stored["types"])
            ]
            hoisted = Hoisted(
                shared=[shared[i] for i in stored["from"]],
                hoisted=made,
                function=_unpickled_function(stored["function"]),
            )
        order = [
            shared[i] if kind == "model" else hoisted.hoisted[i]  # type: ignore[union-attr]
            for kind, i in payload["shared"]
        ]
        return StoredGraphs(key=payload["key"], shared=tuple(order), hoisted=hoisted)
    except Exception:  # noqa: BLE001 -- absent, damaged or of another graph: build them
        return None


#: The suffix of :func:`python_functions`' files (``<graph key>.<kind>.functions``).
FUNCTIONS_SUFFIX = ".functions"


@dataclass
class _Rebound:
    """A PyTensor function read from the cache, reading the model's shared variables.

    An unpickled function holds copies of the shared variables it was compiled
    with, their values empty (the file keeps no data, :func:`_pickled_function`);
    each call first gives those copies the model's current values (a reference,
    no copy), so that ``pm.set_data`` reaches it as it reaches a function
    compiled in this process.
    """

    function: Any
    pairs: list[tuple[Any, Any]]  # (the function's container, the model's shared variable)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for container, var in self.pairs:
            container.value = var.get_value(borrow=True)
        return self.function(*args, **kwargs)


#: The persistent id that stands, in a pickled function, for the data a shared variable
#: held when it was filed (``_pickled_function``): the file keeps no data set.
_DATA_ID = "bayes-compare-data"


def _pickled_function(function: Any) -> bytes:
    """``pickle.dumps(function)``, without its shared variables' values and without what
    its nodes cache at link time (Blockwise's ``gufunc``, a local function, made again
    when the unpickled function is linked); cloudpickle's when an op's own state holds a
    local function. :func:`_unpickled_function` reads it back."""
    data = {
        id(container.storage[0]): container.storage[0]
        for container, spec in zip(function.input_storage, function.maker.inputs, strict=True)
        if spec.implicit and isinstance(container.storage[0], np.ndarray)
    }

    def persistent_id(obj: Any) -> Any:
        if id(obj) in data and obj is data[id(obj)]:
            return (_DATA_ID, obj.dtype.str, obj.ndim)  # a data set: not kept
        return None

    removed = []
    for node in function.maker.fgraph.apply_nodes:
        if hasattr(node.tag, "gufunc"):
            removed.append((node, node.tag.gufunc))
            del node.tag.gufunc
    try:
        buffer = io.BytesIO()
        try:
            pickler: Any = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.persistent_id = persistent_id
            pickler.dump(function)
        except (AttributeError, pickle.PicklingError, TypeError):
            # An op holding a local function (OpFromGraph's cached gradient op):
            # cloudpickle (Dask's) writes it by value; pickle reads it back.
            import cloudpickle  # heavy: only when such a function is filed

            buffer = io.BytesIO()
            pickler = cloudpickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.persistent_id = persistent_id
            pickler.dump(function)
        return buffer.getvalue()
    finally:
        for node, gufunc in removed:
            node.tag.gufunc = gufunc


def _unpickled_function(payload: bytes) -> Any:
    """The function of :func:`_pickled_function`, its shared variables holding empty
    arrays until :class:`_Rebound` gives them the model's values."""
    unpickler: Any = pickle.Unpickler(io.BytesIO(payload))

    def persistent_load(pid: Any) -> Any:
        tag, dtype, ndim = pid
        if tag != _DATA_ID:
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        return np.zeros((0,) * ndim, dtype=dtype)

    unpickler.persistent_load = persistent_load
    return unpickler.load()


def python_functions(
    kind: str, outputs: list[Any], inputs: list[Any], extra: Any, build: Any
) -> list[Any]:
    """PyTensor functions of the Python linker, ``build()``'s, or read from :func:`cache_dir`.

    For functions that take time to build and nothing to compile (the MAP
    finder's objective, 0.25 s for a conjugate model and 2 s for the
    Normal-Wishart one): the rewrites are what costs. They are filed under the
    key of the graph of ``outputs`` in ``inputs`` (:mod:`compare.accel.graph_key`)
    with ``extra`` (what else ``build`` depends on) and ``kind``; a function
    read back reads the model's shared variables through :class:`_Rebound`.
    ``build`` runs when the cache is off, the graph cannot be keyed or the file
    is absent or damaged; then its functions are filed when they can be pickled.

    Parameters
    ----------
    kind : str
        A name for what ``build`` makes (in the key, and the file's name).
    outputs, inputs : lists of pytensor Variable
        The graph ``build`` compiles (as built, before any rewrite).
    extra : plain Python values
        Anything else ``build``'s functions depend on.
    build : callable
        ``build() -> list of pytensor Function``.
    """
    from compare.accel import graph_key  # only when compiling: PyTensor graphs

    folder = _folder()
    if folder is None or os.environ.get(BUILD_GRAPHS_ENV) == "1":
        return list(build())
    keyed = graph_key.graph_key(outputs, inputs, extra=(kind, _rewrite_context(), extra))
    if keyed is None:
        return list(build())
    key, shared = keyed
    path = folder / f"{key}.{kind}{FUNCTIONS_SUFFIX}"
    try:
        data = cache_store.read(path, kind="functions", key=key)
        if data is None:
            raise FileNotFoundError(path)
        payload = pickle.loads(data)
        if payload["graph"] != key:
            raise ValueError("another graph")
        loaded = []
        for data, positions in payload["functions"]:
            function = _unpickled_function(data)
            own = [
                function.input_storage[i]
                for i, spec in enumerate(function.maker.inputs)
                if spec.implicit
            ]
            pairs = list(zip(own, [shared[p] for p in positions], strict=True))
            loaded.append(_Rebound(function, pairs))
        return loaded
    except Exception:  # noqa: BLE001 -- absent, damaged or another graph's: build them
        pass
    functions = list(build())
    index = {id(var): i for i, var in enumerate(shared)}
    try:
        stored = []
        for function in functions:
            implicit = [spec.variable for spec in function.maker.inputs if spec.implicit]
            stored.append((_pickled_function(function), [index[id(v)] for v in implicit]))
    except Exception:  # noqa: BLE001 -- a function that will not pickle: built every time
        return functions
    _write(path, "functions", key, {"graph": key, "functions": stored})
    return functions


def _store_graphs(folder: Path, logp_fn: Any, key: str) -> None:
    """File what PyTensor made of the log density (a compiled Function of
    :func:`_make_functions`) under its graph key, beside the machine code ``key``."""
    graph = getattr(getattr(logp_fn, "maker", None), "bayes_compare_graph", None)
    if graph is None:
        return
    graph_key, shared = graph
    index = {id(var): i for i, var in enumerate(shared)}
    hoisted = hoisted_of(logp_fn)
    made = {} if hoisted is None else {id(var): i for i, var in enumerate(hoisted.hoisted)}
    try:
        order = []
        for var in logp_fn.get_shared():
            if id(var) in index:
                order.append(("model", index[id(var)]))
            else:
                order.append(("hoisted", made[id(var)]))
        stored_hoisted = None
        if hoisted is not None:
            stored_hoisted = {
                "from": [index[id(var)] for var in hoisted.shared],
                "types": [(var.type.shape, var.type.dtype) for var in hoisted.hoisted],
                "function": _pickled_function(hoisted.function),
            }
    except Exception:  # noqa: BLE001 -- a variable the key does not number, an unpicklable
        return  # function: the graphs are built at every load, as before
    payload = {"graph": graph_key, "key": key, "shared": order, "hoisted": stored_hoisted}
    _write(folder / f"{graph_key}{GRAPHS_SUFFIX}", "graphs", graph_key, payload)


#: Ops whose data-only results are worth a field of nutpie's record (see _hoist):
#: factorisations, solves, inverses, determinants and products of matrices.
_COSTLY_OPS = ("Cholesky", "Solve", "Inverse", "Inv", "Det", "Dot", "Gemm", "Gemv", "Eig", "SVD")


def _costly(var: Any) -> bool:
    """Whether ``var``'s data-only graph holds one of :data:`_COSTLY_OPS`."""
    from pytensor.graph.traversal import ancestors  # heavy: only when compiling

    for v in ancestors([var]):
        op = getattr(v.owner, "op", None)
        if op is None:
            continue
        core = getattr(op, "core_op", op)  # a Blockwise's op
        if any(name in type(core).__name__ for name in _COSTLY_OPS):
            return True
    return False


def _hoist(joined: Any, outputs: list[Any]) -> tuple[list[Any], Hoisted | None]:
    """``outputs`` (functions of ``joined`` and shared variables) with their data-only
    part replaced by new shared variables, and the :class:`Hoisted` that computes them.

    The graph is first rewritten as the numba mode would up to its backend's own
    passes (canonicalize, stabilize, specialize: a solve with a positive-definite
    matrix becomes a Cholesky factor and triangular solves, so the factor is
    data-only); in-place passes come later, in the numba compile of what is left,
    which sees the hoisted values as inputs it may not overwrite. Cut points of a
    type other than a tensor (a slice bound) stay with their graph, and so do those
    whose graph holds none of :data:`_COSTLY_OPS`. ``(outputs, None)``, the graphs
    as given, when nothing is hoisted.
    """
    import pytensor  # heavy: only when compiling
    from pytensor.compile.mode import Mode  # heavy: only when compiling
    from pytensor.compile.sharedvalue import SharedVariable  # heavy: only when compiling
    from pytensor.graph import clone_replace, rewrite_graph  # heavy: only when compiling
    from pytensor.graph.traversal import graph_inputs, io_toposort  # heavy: only when compiling
    from pytensor.tensor.type import TensorType  # heavy: only when compiling

    given = outputs
    rewritten: Any = rewrite_graph(
        outputs, include=("canonicalize", "stabilize", "specialize"), clone=True
    )
    outputs = list(rewritten)
    nodes = io_toposort(list(graph_inputs(outputs)), outputs)
    varying = {joined}
    for node in nodes:
        if any(i in varying for i in node.inputs):
            varying.update(node.outputs)
    cut: dict[Any, None] = {}  # insertion-ordered set
    pending = [
        i
        for node in nodes
        if node.outputs[0] in varying
        for i in node.inputs
        if i not in varying and i.owner is not None
    ]
    while pending:
        var = pending.pop(0)
        if var in cut:
            continue
        if isinstance(var.type, TensorType):
            cut[var] = None
        else:  # computed with the parameters' graph, from its own data-only inputs
            pending.extend(i for i in var.owner.inputs if i.owner is not None)
    # Only what costs: each hoisted value is one more field of nutpie's record, which
    # the machine code unpacks (compiled per field: 14 scalars cost gamma-Poisson's model
    # 5 s of compile, 2026-12-05), while a cheap node costs a tenth of that.
    cut = {var: None for var in cut if _costly(var)}
    if not cut:
        return given, None  # as they came: the numba compile rewrites them itself
    shared = [v for v in graph_inputs(list(cut)) if isinstance(v, SharedVariable)]
    stand_ins: dict[Any, Any] = {var: var.type() for var in shared}
    new_shared: Any = pytensor.shared  # untyped in PyTensor
    hoisted = [
        new_shared(
            np.zeros([n if n is not None else 0 for n in var.type.shape], dtype=var.type.dtype),
            name=f"{HOISTED_PREFIX}{i}",
            shape=var.type.shape,
        )
        for i, var in enumerate(cut)
    ]
    # The Python linker, as the MAP finder's first mode and the variables after
    # sampling: NumPy on whole arrays, nothing compiled; inner graphs inlined (see
    # inline_inner_graphs), no fused ops of more operands than it can run.
    mode = Mode(linker="py", optimizer="fast_run").excluding(  # type: ignore[no-untyped-call]
        "composite_elemwise_fusion", "local_careduce_fusion", "symbolic_op_recognition"
    )
    function = pytensor.function(
        list(stand_ins.values()),
        inline_inner_graphs(clone_replace(list(cut), stand_ins)),
        mode=mode,
        on_unused_input="ignore",
    )
    rest = clone_replace(outputs, dict(zip(cut, hoisted, strict=True)))
    return list(rest), Hoisted(shared=shared, hoisted=hoisted, function=function)


def _make_functions(
    model: Any, initial_point_fn: Any, *, folder: Path | None = None
) -> tuple[Any, ...]:
    """``nutpie.compile_pymc._make_functions`` (numba mode, with the gradient, the
    expanded draw joined), with the flat position's layout read from the model.

    nutpie slices its flat position ``x`` with constants (``x[0:3].reshape(3)``,
    a vector of static length), so a model with one more category or feature
    is another graph and another cold compile. Here each free variable's slice
    and shape are graphs of the model's dimension lengths (PyMC keeps those in
    shared variables, which reach the machine code through ``user_data``), so
    one compiled model serves every length; the numbers nutpie also returns
    (``n_dim``, the shapes) are this data's. When a variable's shape is not a
    function of the dimension lengths, nutpie's own ``_make_functions`` is used
    (a fixed layout, keyed by its lengths).

    Returns
    -------
    tuple
        What nutpie's returns, then True when the layout is symbolic. With a
        symbolic layout the expand function's place holds an :class:`Expansion`
        (nutpie then samples the position alone; the layout and lengths are
        the position's) unless PyTensor cannot vectorise a variable's graph or
        :data:`NUMBA_EXPAND_ENV` asks for nutpie's way. Given the cache's
        ``folder``, the log density's place may hold a :class:`StoredGraphs` read
        from there: what PyTensor made of this graph before (see
        :func:`_graph_key_of`), with no graph rewritten or compiled.
    """
    import pytensor.tensor  # heavy: only when compiling
    from nutpie import compile_pymc as ncp  # heavy: only when compiling
    from pymc.pytensorf import compile as compile_pymc  # heavy: only when compiling
    from pytensor.graph import clone_replace, rewrite_graph  # heavy: only when compiling

    pt: Any = pytensor.tensor  # untyped calls (concatenate, prod) in a typed module

    symbolic = [_symbolic_shape(model, rv) for rv in model.free_RVs]
    if any(shape is None for shape in symbolic):
        fixed = ncp._make_functions(
            model,
            mode="NUMBA",
            compute_grad=True,
            join_expanded=True,
            pymc_initial_point_fn=initial_point_fn,
            var_names=None,
        )
        return (*fixed, False)
    shapes = ncp._compute_shapes(model)  # this data's, for nutpie's bookkeeping
    value_vars = [model.rvs_to_values[rv] for rv in model.free_RVs]
    raw_logp = model.logp()
    graph = None if folder is None else _graph_key_of(model, raw_logp, symbolic, value_vars)
    joined = pt.dvector("_unconstrained_point")  # no static length: any layout
    names, slices, numeric, replacements, free_values = [], [], [], {}, []
    start_sym: Any = pt.constant(0, dtype="int64")
    count = 0
    for rv, value_var, shape in zip(model.free_RVs, value_vars, symbolic, strict=True):
        size = pt.prod(shape, dtype="int64") if value_var.ndim else pt.constant(1, dtype="int64")
        piece = joined[start_sym : start_sym + size]
        value = piece.reshape(shape, ndim=value_var.ndim).astype(rv.dtype)
        replacements[value_var] = value
        free_values.append(value)
        start_sym = start_sym + size
        names.append(value_var.name)
        numeric.append(tuple(shapes[value_var.name]))
        length = int(np.prod(numeric[-1], dtype=np.int64))
        slices.append(slice(count, count + length))
        count += length
    n_dim = count
    wrapped_initial = ncp._rv_dict_to_flat_array_wrapper(
        initial_point_fn, names=names, shapes=numeric
    )
    reparameterized = [
        model.rvs_to_values[rv].name
        for rv in model.free_RVs
        if model.rvs_to_transforms.get(rv) is not None
    ]
    remaining = [var for var in model.unobserved_value_vars if var.name not in names]
    all_names, all_slices, all_shapes = list(names), list(slices), list(numeric)
    for var in remaining:
        shape = tuple(shapes[var.name])
        length = int(np.prod(shape, dtype=np.int64))
        all_names.append(var.name)
        all_slices.append(slice(count, count + length))
        all_shapes.append(shape)
        count += length
    kept = [
        (name, value, shape)
        for name, value, shape in zip(
            all_names, [*free_values, *remaining], all_shapes, strict=True
        )
        if name not in reparameterized  # nutpie leaves these out of the trace
    ]
    outputs = clone_replace(
        [pt.as_tensor(value, allow_xtensor_conversion=True) for _, value, _ in kept],
        replacements,
    )
    dims, coords = ncp._prepare_dims_and_coords(
        model, (all_names, all_slices, all_shapes), reparameterized
    )
    expansion = Expansion(
        position=joined,
        outputs=outputs,
        names=[name for name, _, _ in kept],
        shapes=[tuple(int(n) for n in shape) for _, _, shape in kept],
        dims=dims,
        coords=coords,
    )
    try:
        if os.environ.get(NUMBA_EXPAND_ENV) == "1":
            raise NotImplementedError(f"{NUMBA_EXPAND_ENV}=1")
        expansion.vectorize()
        vectorized = True
    except Exception:  # noqa: BLE001 -- an Op PyTensor cannot vectorise: nutpie's way
        vectorized = False
    logp_fn_pt: Any = None
    if vectorized and folder is not None and graph is not None:
        logp_fn_pt = _load_graphs(folder, *graph)
    if logp_fn_pt is None:
        rewrites = ["canonicalize", "stabilize"]
        if not model.check_bounds:
            rewrites.append("local_remove_check_parameter")
        logp: Any = rewrite_graph(raw_logp, include=rewrites)
        grad: Any = pt.concatenate(
            [
                pt.as_tensor(g, allow_xtensor_conversion=True).ravel()
                for g in pt.grad(logp, value_vars)
            ]
        )
        logp, grad = clone_replace([logp, grad], replacements)
        hoisted = None
        if os.environ.get(NO_HOIST_ENV) != "1":
            try:
                (logp, grad), hoisted = _hoist(joined, [logp, grad])
            except Exception:  # noqa: BLE001 -- hoisting only saves time: when unsure, all
                hoisted = None
        with model:
            logp_fn_pt = compile_pymc((joined,), (logp, grad), mode="NUMBA")
        # Kept with the function (its maker: a Function takes no attributes), where
        # compile_pymc_model and with_data, given nutpie's compiled model, find it.
        logp_fn_pt.maker.bayes_compare_hoisted = hoisted
        # What compile_pymc_model files the graphs under once the machine code is kept.
        logp_fn_pt.maker.bayes_compare_graph = graph if vectorized else None
    if not vectorized:
        expanded = pt.concatenate(
            [
                *[v.ravel() for v in free_values],
                *[pt.as_tensor(v, allow_xtensor_conversion=True).ravel() for v in remaining],
            ]
        )
        with model:
            expand_fn_pt = compile_pymc(
                (joined,), [expanded], givens=list(replacements.items()), mode="NUMBA"
            )
        layout = (all_names, all_slices, all_shapes)
        return (
            n_dim,
            count,
            logp_fn_pt,
            expand_fn_pt,
            wrapped_initial,
            layout,
            reparameterized,
            True,
        )
    return (
        n_dim,
        n_dim,  # nutpie's draws are the position itself
        logp_fn_pt,
        expansion,
        wrapped_initial,
        ([POSITION], [slice(0, n_dim)], [(n_dim,)]),
        reparameterized,
        True,
    )


#: ``BAYES_COMPARE_NUTPIE_EXTRACTION=1``: read the data with nutpie's own extraction
#: function (:func:`_make_extraction_fn`), to measure the difference.
NUTPIE_EXTRACTION_ENV = "BAYES_COMPARE_NUTPIE_EXTRACTION"
_READERS: dict[tuple[int, str], Any] = {}


def _array_reader(ndim: int, dtype: Any) -> Any:
    """A jitted ``read(address, size, shape)``: the C-ordered array of ``dtype`` with
    ``ndim`` dimensions whose data start at ``address`` (one function per kind of
    array in a process, whatever the model)."""
    key = (ndim, np.dtype(dtype).str)
    reader = _READERS.get(key)
    if reader is None:
        import numba  # heavy: only when compiling
        from nutpie.compile_pymc import address_as_void_pointer  # heavy: only when compiling

        shape = "".join(f"int(shape[{i}]), " for i in range(ndim))
        source = (
            "def read(address, size, shape):\n"
            "    data = numba.carray(address_as_void_pointer(address), int(size), dtype)\n"
            f"    return data.reshape(({shape}))\n"
        )
        env: dict[str, Any] = {
            "numba": numba,
            "address_as_void_pointer": address_as_void_pointer,
            "dtype": np.dtype(dtype),
        }
        exec(compile(source, f"<bayes-compare array reader {key}>", "exec"), env)  # noqa: S102
        reader = _READERS[key] = numba.njit(env["read"])
    return reader


def _make_extraction_fn(
    inner: Any, shared_data: dict[str, np.ndarray], shared_keys: list[str], record_dtype: Any
) -> Any:
    """``extract(x, user_data_)``: ``inner(x, *arrays)``, the arrays read from nutpie's
    ``user_data`` record (its ``shared`` fields ``data``, ``size`` and ``shape`` of each
    key, in ``shared_keys`` order), as ``nutpie.compile_pymc.make_extraction_fn`` does.

    nutpie's reads each array with an overload made for that array alone, chosen by
    its index in a ``literal_unroll`` loop: numba types and compiles one function per
    shared variable (21 for the classifier's model), and its literal-unroll pass
    types the whole function once per loop body. Here the function is written out,
    one line per array calling :func:`_array_reader` of its kind (its ndim and
    dtype: a handful in any model), and numba types it once. The same record, the same values, the same draws bit
    for bit. ``benchmarks/extraction.py`` (2026-12-05, idle): the 14 nutpie topics'
    models compiled cold in one process in 88.0 s against 113.4 s with nutpie's
    (0.78x; the mixture's 32.8 against 40.2 s, the linear regression's 4.2 against
    7.6), every one drawing the same. :data:`NUTPIE_EXTRACTION_ENV` switches back
    to nutpie's.
    """
    import numba  # heavy: only when compiling
    from nutpie import compile_pymc as ncp  # heavy: only when compiling

    if os.environ.get(NUTPIE_EXTRACTION_ENV) == "1" or not shared_keys:
        return ncp.make_extraction_fn(inner, shared_data, shared_keys, record_dtype)
    env: dict[str, Any] = {"numba": numba, "inner": inner, "record_dtype": record_dtype}
    lines = [
        "def extract_shared(x, user_data_):",
        "    shared = numba.carray(user_data_, (), record_dtype)['shared']",
    ]
    for i, key in enumerate(shared_keys):
        if not key.isidentifier():  # the keys are written into the source below
            raise ValueError(f"a shared variable's field must be a name, got {key!r}")
        value = shared_data[key]
        env[f"read{i}"] = _array_reader(value.ndim, value.dtype)
        lines.append(
            f"    a{i} = read{i}(shared['data']['{key}'][()], shared['size']['{key}'][()], "
            f"shared['shape']['{key}'])"
        )
    lines.append(f"    return inner(x, {', '.join(f'a{i}' for i in range(len(shared_keys)))})")
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<bayes-compare extraction>", "exec"), env)  # noqa: S102
    return numba.njit(inline="always")(env["extract_shared"])


def _make_c_logp_func(
    logp_fn: Any, user_data: Any, shared_keys: list[str], shared_data: dict[str, np.ndarray]
) -> tuple[Any, Any]:
    """``nutpie.compile_pymc._make_c_logp_func`` with the position's length taken from
    the ``dim`` argument (nutpie compares it with the constant it closes over)."""
    import numba as numba_module  # heavy: only when compiling

    numba: Any = numba_module
    extract = _make_extraction_fn(logp_fn, shared_data, shared_keys, user_data.dtype)
    c_sig = numba.types.int64(
        numba.types.uint64,
        numba.types.CPointer(numba.types.double),
        numba.types.CPointer(numba.types.double),
        numba.types.CPointer(numba.types.double),
        numba.types.voidptr,
    )

    def logp_numba(dim: Any, x_: Any, out_: Any, logp_: Any, user_data_: Any) -> int:
        try:
            x = numba.carray(x_, (dim,))
            out = numba.carray(out_, (dim,))
            logp = numba.carray(logp_, ())
            logp_val, grad = extract(x, user_data_)
            if grad.shape[0] != dim:  # the data's layout is not this position's
                return -1
            logp[()] = logp_val
            out[...] = grad
            if not np.all(np.isfinite(out)):
                return 3
            if not np.isfinite(logp_val):
                return 4
        except Exception:  # noqa: BLE001 -- as nutpie's: an error code, not a crash
            return 1
        return 0

    return logp_numba, c_sig


def _make_c_expand_func(
    expand_fn: Any, user_data: Any, shared_keys: list[str], shared_data: dict[str, np.ndarray]
) -> tuple[Any, Any]:
    """``nutpie.compile_pymc._make_c_expand_func`` with both lengths from the arguments."""
    import numba as numba_module  # heavy: only when compiling

    numba: Any = numba_module
    extract = _make_extraction_fn(expand_fn, shared_data, shared_keys, user_data.dtype)
    c_sig = _expand_signature(numba)

    def expand_numba(dim: Any, expanded: Any, x_: Any, out_: Any, user_data_: Any) -> int:
        try:
            x = numba.carray(x_, (dim,))
            out = numba.carray(out_, (expanded,))
            (values,) = extract(x, user_data_)
            if values.shape[0] != expanded:
                return -1
            out[...] = values
        except Exception:  # noqa: BLE001 -- as nutpie's: an error code, not a crash
            return -2
        return 0

    return expand_numba, c_sig


def _initial_point_fn(model: Any, *, jitter: bool) -> Any:
    """The chains' starting point function, as ``nutpie.compile_pymc_model`` makes it for
    the numba backend (nutpie 0.16)."""
    from nutpie import compile_pymc as ncp  # heavy: only when compiling
    from pymc.initial_point import make_initial_point_fn  # heavy: only when compiling

    return ncp._wrap_with_lock(
        make_initial_point_fn(
            model=model,
            overrides=None,
            default_strategy="support_point",
            jitter_rvs=set(model.free_RVs) if jitter else set(),
            return_transformed=True,
        )
    )


def without_jitter(compiled: Any, model: Any) -> Any:
    """``compiled`` (of :func:`compile_pymc_model` on ``model``) with every chain starting
    exactly at the model's initial point, as ``compile_pymc_model(model, jitter=False)``
    gives, without building the model's graphs again.

    Only the starting-point function differs between the two: the machine code, its
    key and the data record are the same. Building the graphs (PyTensor's rewrites,
    the key, the hoisted values) is what a second :func:`compile_pymc_model` of a model
    whose code is cached costs: 2-4 s for the Normal-Wishart model.
    """
    import dataclasses  # only for the copy

    import nutpie  # heavy: only when compiling
    from nutpie import compile_pymc as ncp  # heavy: only when compiling

    if not allowed(NAME) or not supported():  # nutpie's public compile, without its jitter
        return nutpie.compile_pymc_model(model, jitter_rvs=set())
    names = [model.rvs_to_values[rv].name for rv in model.free_RVs]
    point = _initial_point_fn(model, jitter=False)
    shapes = [np.shape(value) for value in (point(0)[name] for name in names)]  # no jitter
    start = ncp._rv_dict_to_flat_array_wrapper(point, names=names, shapes=shapes)
    return dataclasses.replace(compiled, initial_point_func=start)


def model_key(model: Any) -> str | None:
    """The :func:`cache_key` that :func:`compile_pymc_model` would file ``model`` under,
    without compiling it (PyTensor builds the two graphs, ~1-3 s); None if it cannot be
    keyed. Two models with one key share one compile: they are the same graph, whatever
    their variables are named."""
    made = _make_functions(model, _initial_point_fn(model, jitter=False))
    n_dim, n_expanded, logp_fn_pt, expand_fn_pt = made[:4]
    return cache_key(
        logp_fn_pt, expand_fn_pt, n_dim=n_dim, n_expanded=n_expanded, shape_generic=made[-1]
    )


def compile_pymc_model(
    model: Any, *, jitter: bool = True, _stored_graphs: bool = True
) -> tuple[Any, bool]:
    """``nutpie.compile_pymc_model(model)`` (numba backend), its cfuncs cached on disk.

    Parameters
    ----------
    model : pymc.Model
        The model to compile.
    jitter : bool
        Add nutpie's U(-1, 1) jitter to the chains' starts (its default);
        False starts every chain at the model's initial point.

    Returns
    -------
    compiled : nutpie.compile_pymc.CompiledPyMCModel
        What ``nutpie.compile_pymc_model`` returns, usable by ``nutpie.sample``.
    cached : bool
        True if the machine code was loaded from :func:`cache_dir`.

    When the model's graphs are filed there too (:class:`StoredGraphs`) and their
    machine code is not (cleared, damaged), the graphs are built and compiled.
    """
    import nutpie  # heavy: nutpie (numba) only when compiling

    folder = _folder()
    if folder is None:  # nutpie's own compile, as a plain PyMC script has it
        kwargs: dict[str, Any] = {} if jitter else {"jitter_rvs": set()}
        return nutpie.compile_pymc_model(model, **kwargs), False

    import numba  # heavy: only when compiling
    from nutpie import compile_pymc as ncp  # heavy: only when compiling

    started = time.perf_counter()
    initial_point_fn = _initial_point_fn(model, jitter=jitter)
    stored_graphs = _stored_graphs and os.environ.get(BUILD_GRAPHS_ENV) != "1"
    (
        n_dim,
        n_expanded,
        logp_fn_pt,
        expand_fn_pt,
        initial_point_fn,
        shape_info,
        reparameterized_names,
        shape_generic,
    ) = _make_functions(model, initial_point_fn, folder=folder if stored_graphs else None)
    shared_data: dict[str, np.ndarray] = {}
    shared_var_keys: dict[Any, str] = {}
    hoisted = hoisted_of(logp_fn_pt)
    hoisted_values = {} if hoisted is None else hoisted.values({})  # of the model's data now
    # An Expansion's shared variables are read after sampling, not by the machine code.
    expand_shared = [] if isinstance(expand_fn_pt, Expansion) else expand_fn_pt.get_shared()
    # The data the hoisted values are computed from, read by with_data (see there).
    hoisted_from = [] if hoisted is None else hoisted.shared
    for var in [*logp_fn_pt.get_shared(), *expand_shared, *hoisted_from]:
        if var in shared_var_keys:
            continue
        # Keys name the fields of the user_data record the machine code reads by
        # offset; nutpie uses random names, stable ones keep the layout explicit.
        field = f"shared{len(shared_var_keys)}"
        value = hoisted_values[var] if var in hoisted_values else var.get_value()
        shared_data[field] = np.array(value, order="C", copy=True)
        shared_data[field].flags.writeable = False
        shared_var_keys[var] = field
    user_data = ncp.make_user_data(shared_var_keys, shared_data)

    graphs = time.perf_counter()
    stored = isinstance(logp_fn_pt, StoredGraphs)
    try:
        key = (
            logp_fn_pt.key
            if stored
            else cache_key(
                logp_fn_pt,
                expand_fn_pt,
                n_dim=n_dim,
                n_expanded=n_expanded,
                shape_generic=shape_generic,
            )
        )
    except Exception:  # noqa: BLE001 -- the cache only saves time: when unsure, compile
        key = None
    path = None if key is None else folder / f"{key}.pkl"
    with _lock:  # numba's compiler and its code libraries are process-wide
        found = None if path is None or key is None else _load(path, key)
    if found is None and stored:  # graphs without their machine code: build both
        return compile_pymc_model(model, jitter=jitter, _stored_graphs=False)
    cached = found is not None
    logp_numba: Any
    expand_numba: Any
    if found is not None:
        logp_numba, expand_numba = found
    else:
        with contextlib.ExitStack() as stack:
            if path is not None and key is not None:
                stack.enter_context(cache_store.compiling(path))
                with _lock:  # written by the process this one waited for?
                    found = _load(path, key)
            cached = found is not None
            if found is not None:
                logp_numba, expand_numba = found
            else:
                logp_raw, c_sig = _make_c_logp_func(
                    logp_fn_pt.vm.jit_fn,
                    user_data,
                    [shared_var_keys[v] for v in logp_fn_pt.get_shared()],
                    shared_data,
                )
                if isinstance(expand_fn_pt, Expansion):
                    expand_raw, c_sig_expand = _make_c_copy_func()
                else:
                    expand_raw, c_sig_expand = _make_c_expand_func(
                        expand_fn_pt.vm.jit_fn,
                        user_data,
                        [shared_var_keys[v] for v in expand_fn_pt.get_shared()],
                        shared_data,
                    )
                logp_numba = numba.cfunc(c_sig)(logp_raw)
                expand_numba = numba.cfunc(c_sig_expand)(expand_raw)
                if path is not None and key is not None:
                    _store(path, key, logp_numba, expand_numba)

    if path is not None and key is not None and not stored and path.exists():
        _store_graphs(folder, logp_fn_pt, key)
    _log_compile(model, key, cached, graphs - started, time.perf_counter() - graphs, stored)
    if isinstance(expand_fn_pt, Expansion):
        # nutpie's trace holds the position alone, along nutpie's own coordinate of it.
        unconstrained = ncp._UNCONSTRAINED_PARAMETER
        dims = {POSITION: [unconstrained]}
        coords = {unconstrained: expand_fn_pt.coords[unconstrained]}
    else:
        dims, coords = ncp._prepare_dims_and_coords(model, shape_info, reparameterized_names)
    compiled = ncp.CompiledPyMCModel(
        _n_dim=n_dim,
        dims=dims,
        _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=logp_numba,
        compiled_expand_func=expand_numba,
        initial_point_func=initial_point_fn,
        shared_data=shared_data,
        shared_var_keys=shared_var_keys,
        user_data=user_data,
        n_expanded=n_expanded,
        shape_info=shape_info,
        logp_func=logp_fn_pt,
        expand_func=expand_fn_pt,
        reparameterized_names=reparameterized_names,
    )
    return compiled, cached


def with_data(compiled: Any, **updates: Any) -> Any:
    """``compiled.with_data(**updates)`` (nutpie's: new values of the model's ``pm.Data``
    by name), with the :class:`Hoisted` values recomputed from the new data.

    The record holds the data the hoisted values are computed from even when the
    machine code reads none of it (a beta-binomial's ``x`` is read through its
    sums alone), so that an update of some of the data finds the rest.
    """
    hoisted = hoisted_of(getattr(compiled, "logp_func", None))
    updated = compiled.with_data(**updates)  # nutpie casts and checks the new values
    if hoisted is None or not updates:
        return updated
    keys = updated.shared_var_keys
    values = hoisted.values({var: updated.shared_data[keys[var]] for var in hoisted.shared})
    return updated.with_data(**{var.name: value for var, value in values.items()})


#: A file to append one JSON line per compile to (``BAYES_COMPARE_COMPILE_LOG``): which
#: model, by whom (the pytest test, the process), how long PyTensor took to build the
#: graphs and numba to compile or the cache to load them.  For finding what a run or a
#: test suite compiles; unset, nothing is written.
_LOG_ENV = "BAYES_COMPARE_COMPILE_LOG"


def _log_compile(
    model: Any, key: str | None, cached: bool, graphs: float, code: float, stored: bool
) -> None:
    path = os.environ.get(_LOG_ENV)
    if not path:
        return
    line = {
        "key": key,
        "cached": cached,
        "graphs_cached": stored,
        "graph_seconds": round(graphs, 3),
        "code_seconds": round(code, 3),
        "free": sorted(v.name for v in model.free_RVs),
        "potentials": sorted(v.name for v in model.potentials),
        "pid": os.getpid(),
        "test": os.environ.get("PYTEST_CURRENT_TEST"),
        "time": time.time(),
    }
    with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def clear(*, folder: Path | None = None) -> int:
    """Delete every cached model; the number of files removed."""
    folder = cache_dir() if folder is None else folder
    if folder is None or not folder.is_dir():
        return 0
    removed = 0
    for path in folder.glob("*.pkl"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed += 1
    # What the machine code was made from, and python_functions' files.
    for path in [*folder.glob(f"*{GRAPHS_SUFFIX}"), *folder.glob(f"*{FUNCTIONS_SUFFIX}")]:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    for path in folder.glob("*.lock"):  # empty; a compile under way keeps its open file
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return removed
