"""Compile a PyMC model once, then sample it and find its MAP for many data sets.

``nutpie.compile_pymc_model`` costs seconds; ``compiled.with_data(...)``
swaps the ``pm.Data`` values in microseconds (measured in ``make bench``).
The same model's ``pm.Data`` shared variables are also updated with
``pm.set_data`` so that PyMC-side functions (the initial point, the MAP
objective) see the same data without recompiling.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
import types
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pymc as pm
import pytensor
import xarray as xr
from pymc.blocking import DictToArrayBijection, RaveledVars
from pymc.initial_point import make_initial_point_expression, make_initial_point_fn
from pymc.pytensorf import compile as compile_pymc
from pymc.pytensorf import join_nonshared_inputs, rewrite_pregrad
from pymc.step_methods.arraystep import metrop_select
from pymc.step_methods.metropolis import CategoricalGibbsMetropolis
from pytensor.compile.mode import Mode
from pytensor.tensor.random.basic import BernoulliRV, CategoricalRV
from scipy import optimize
from threadpoolctl import ThreadpoolController

from compare.accel import compiled_cache
from compare.core.agreement import posterior_array as posterior_array  # re-exported
from compare.core.defaults import Settings
from compare.core.registry import InputError

_THREADPOOLS: list[ThreadpoolController] = []


def one_thread() -> Any:
    """A context in which every loaded BLAS runs one thread (nutpie runs the chains).

    ``threadpool_limits`` finds the loaded libraries anew at each call (3.6 ms
    in a process that has loaded the sampling stack: a conjugate calibration's
    300 runs spent 1.5 of their 30 s in it); this finds them once per process,
    after importing SciPy's BLAS, the last one sampling can call (numba's
    linear algebra calls it).
    """
    if not _THREADPOOLS:
        import scipy.linalg  # noqa: F401  # SciPy's OpenBLAS, loaded before the scan

        _THREADPOOLS.append(ThreadpoolController())
    return _THREADPOOLS[0].limit(limits=1)


def flatten(values: dict[str, np.ndarray], variables: Sequence[str]) -> np.ndarray:
    """Concatenate ``values[v]`` for v in ``variables``, each raveled in C order."""
    return np.concatenate([np.ravel(np.asarray(values[v], dtype=float)) for v in variables])


#: PyTensor mode for a MAP objective that is evaluated many times: the C
#: backend, whose compiled modules are cached on disk (PyTensor's compiledir),
#: so only a machine's first run pays for compiling them (58-79 s for the
#: naive-Bayes, classifier and mixture objectives on a cold cache, 1.7-2.6 s
#: warm; measured).  PyTensor's default mode JIT-compiled some ops with numba
#: in every new process (10 s for the mixture's objective).
MAP_MODE = "CVM"

#: PyTensor mode for a MAP objective's first evaluations: the Python linker
#: after the FAST_RUN rewrites compiles next to nothing (cold: 2.1 s for
#: naive Bayes, 11 s for the classifier, 13 s for the mixture, against 58, 78
#: and 79 s in C), and one MAP search costs 0.2-0.8 s instead of 0.01-0.05 s.
#: A run finds one MAP, so this is the cheaper mode on any cache; a study that
#: finds hundreds switches to :data:`MAP_MODE` (see :data:`MAP_SWITCH_SECONDS`).
#: Without elementwise fusion (the two passes that make ``Composite`` ops): the
#: Python linker cannot evaluate a fused op of more than 32 operands (naive
#: Bayes on play-tennis made one); an op it still cannot evaluate moves the
#: finder to :data:`MAP_MODE`. The fusion step's first pass stays: it inlines
#: PyTensor's ops with an inner graph (softmax, log-softmax, logsumexp, xlogy
#: and their gradients; the simplex transform is a softmax). Left whole, the
#: Python linker runs such an op's inner graph with the ``vm`` linker, which
#: compiles each inner node in C: on an empty cache, 27 of the 41 g++ runs
#: of a ``run --all`` came from this objective (10 CPU-s for naive Bayes alone;
#: measured 2026-12-03), 36 with the variables computed after sampling
#: (``compiled_cache.inline_inner_graphs``).
#: Both reach the runner's optimum: the modes of the builtin data agree to
#: ~1e-8; on a 1e8-conditioned MvNormal the Python objective stopped 1.8e-4
#: posterior sd short, the C one 3e-7 (the map check allows 1e-2).
MAP_FIRST_MODE = Mode(linker="py", optimizer="fast_run").excluding(  # type: ignore[no-untyped-call]
    "composite_elemwise_fusion", "local_careduce_fusion"
)

#: CPU seconds a MapFinder may spend searching with :data:`MAP_FIRST_MODE` before
#: it compiles the objective in :data:`MAP_MODE`: about what that compile costs
#: a warm cache, and a tenth of what it costs a cold one.
MAP_SWITCH_SECONDS = 8.0


#: L-BFGS-B iterations per start of the MAP search, and restarts from where it stopped.
MAP_MAXITER = 10_000
MAP_RESTARTS = 3


@dataclass(frozen=True)
class MapSearch:
    """PyMC's MAP and the point its search started from, both flattened in parameter
    order (constrained values); ``point`` is None when the search failed, ``start``
    when the model has no continuous search (an enumerated discrete model).

    ``dispersed`` holds the same search from other starts (exact posterior draws,
    :meth:`MapFinder.search`): ``(start, point)`` pairs, ``point`` None where that
    search failed; a start outside the model's support is left out.
    """

    point: np.ndarray | None
    start: np.ndarray | None
    dispersed: tuple[tuple[np.ndarray, np.ndarray | None], ...] = ()


class MapFinder:
    """PyMC's MAP (what ``pm.find_MAP`` computes) with the objective compiled once.

    Like ``pm.find_MAP``: L-BFGS-B on ``-model.logp(jacobian=False)`` over the
    transformed value variables, from the model's un-jittered initial point;
    so the optimum is the mode in the constrained space.  Unlike it, the
    compiled objective, initial point and back-transform are kept, and reading
    the ``pm.Data`` shared variables at call time lets one compile serve every
    data set (``make bench`` reports the speed-up; ``tests`` check equality
    with ``pm.find_MAP``).  The objective starts in :data:`MAP_FIRST_MODE`
    (cheap to compile) and moves to :data:`MAP_MODE` (cheap to evaluate) once
    the searches have taken :data:`MAP_SWITCH_SECONDS`.
    """

    def __init__(self, model: pm.Model, variables: Sequence[str]):
        self._model = model
        self._variables = tuple(variables)
        self._value_vars = list(model.value_vars)
        self._initial_point = make_initial_point_fn(
            model=model, return_transformed=True, jitter_rvs=set()
        )
        self.in_c = False  # True once the objective is compiled in MAP_MODE
        self._searching = 0.0  # CPU seconds this finder's thread spent in find()
        self._compile(MAP_FIRST_MODE)
        self._bijection = DictToArrayBijection
        # Built on first use; None when a variable is not a free one (a Deterministic).
        self._forward: Callable[..., list[np.ndarray]] | None = None
        self._forward_built = False

    def _compile(self, mode: str | Mode) -> None:
        """The objective (with its gradient) and the back-transform, in ``mode``.

        The objective is ``scipy_optimize_funcs_from_loss``'s (PyMC's, as
        ``find_MAP`` builds it): the value variables joined in one vector at
        the initial point's shapes, ``rewrite_pregrad``, the gradient. In
        :data:`MAP_FIRST_MODE` both functions are read from the compile cache
        when a process built them before (``compiled_cache.python_functions``:
        their rewrites cost 0.25 s of a conjugate model's run, 2 s of the
        Normal-Wishart model's).
        """
        model = self._model
        start = self._initial_point(0)
        loss = -model.logp(jacobian=False)
        # Constrained values as functions of the value variables (as find_MAP does);
        # compiling model[v] itself would draw from the prior instead.
        unobserved = {var.name: var for var in model.unobserved_value_vars}
        constrained = [unobserved[v] for v in self._variables]

        def build() -> list[Any]:
            outputs, flat = join_nonshared_inputs(
                point=start, outputs=[loss], inputs=self._value_vars
            )
            objective = rewrite_pregrad(outputs[0])
            grad = pytensor.gradient.grad(objective, flat)
            fused = compile_pymc([flat], [objective, grad], trust_input=True, mode=mode)
            back = model.compile_fn(
                constrained,
                inputs=self._value_vars,
                point_fn=False,
                on_unused_input="ignore",
                mode=mode,
            )
            return [fused, back]

        if mode is MAP_FIRST_MODE:
            layout = [
                (name, np.shape(value), str(np.asarray(value).dtype))
                for name, value in start.items()
            ]
            fused, self._constrained = compiled_cache.python_functions(
                "map", [loss, *constrained], self._value_vars, (layout, mode.__getstate__()), build
            )
        else:
            fused, self._constrained = build()
        self._f_fused: Callable[[np.ndarray], Any] = fused
        # The joined vector's dtype (PyTensor's upcast of the value variables'), which the
        # objective, compiled with trust_input, must be given.
        self._dtype = np.result_type(*[np.dtype(v.dtype) for v in self._value_vars])

    def find(self) -> np.ndarray | None:
        """The MAP for the model's current ``pm.Data`` values, flattened; None on failure."""
        return self.search().point

    def search(self, starts: np.ndarray | None = None) -> MapSearch:
        """The MAP for the model's current ``pm.Data`` values and the initial point the
        search started from (a MAP check whose start is already the exact mode could
        not have failed: ``compare.core.runner.map_check`` says so).

        ``starts`` (shape ``(k, d)``, constrained values flattened in the order of
        ``variables``: exact posterior draws, say) are further starting points,
        searched the same way and returned in ``dispersed``. Free variables not
        among ``variables`` start at their initial point.
        """
        if not self.in_c and self._searching > MAP_SWITCH_SECONDS:
            self._compile(MAP_MODE)
            self.in_c = True
        # CPU time of this thread, not wall time: on a loaded machine the switch
        # would otherwise come sooner, and a study would pay the C compile for less.
        started = time.thread_time()
        try:
            return self._search(starts)
        except NotImplementedError:  # an op the Python linker cannot evaluate
            if self.in_c:
                raise
            self._compile(MAP_MODE)
            self.in_c = True
            return self._search(starts)
        finally:
            self._searching += time.thread_time() - started

    def _search(self, starts: np.ndarray | None = None) -> MapSearch:
        start = self._initial_point(0)
        names = [v.name for v in self._value_vars]
        begun = self._flat(self._constrained(**{n: start[n] for n in names}))
        dispersed = []
        for flat in () if starts is None else np.atleast_2d(starts):
            point = self._transformed(np.asarray(flat, dtype=float), start)
            if point is not None:
                dispersed.append((np.asarray(flat, dtype=float), self._find(point, names)))
        return MapSearch(self._find(start, names), begun, tuple(dispersed))

    def _transformed(
        self, flat: np.ndarray, initial: dict[str, np.ndarray]
    ) -> dict[str, np.ndarray] | None:
        """The value variables (unconstrained) at constrained values ``flat`` of
        ``variables``; None where ``flat`` is outside the model's support."""
        if not self._forward_built:
            self._forward = self._compile_forward(initial)
            self._forward_built = True
        if self._forward is None:
            return None
        sizes = [int(np.size(v)) for v in self._constrained(**initial)]
        if flat.shape != (sum(sizes),):
            raise ValueError(
                f"a start has {flat.size} values; the variables {self._variables} have {sum(sizes)}"
            )
        pieces = np.split(flat, np.cumsum(sizes)[:-1])
        with np.errstate(all="ignore"):
            values = self._forward(*pieces)
        out = {v.name: np.asarray(x) for v, x in zip(self._value_vars, values, strict=True)}
        return out if all(np.all(np.isfinite(x)) for x in out.values()) else None

    def _compile_forward(
        self, initial: dict[str, np.ndarray]
    ) -> Callable[..., list[np.ndarray]] | None:
        """Constrained values of ``variables`` (flat pieces) to every value variable,
        through each variable's transform (PyMC's own initial-point expression, with
        the given values as the initial values); None when a variable is not free."""
        model = self._model
        shapes = [np.shape(v) for v in self._constrained(**initial)]
        by_name = {rv.name: rv for rv in model.free_RVs}
        if not set(self._variables) <= set(by_name):
            return None
        inputs = [
            pytensor.tensor.vector(f"{name}_start", dtype=by_name[name].dtype)
            for name in self._variables
        ]
        strategies: dict[Any, Any] = dict(model.rvs_to_initial_values)
        for name, given, shape in zip(self._variables, inputs, shapes, strict=True):
            strategies[by_name[name]] = pytensor.tensor.reshape(given, shape)
        outputs = make_initial_point_expression(
            free_rvs=model.free_RVs,
            rvs_to_transforms=model.rvs_to_transforms,
            initval_strategies=strategies,
            return_transformed=True,
        )
        value_names = [model.rvs_to_values[rv].name for rv in model.free_RVs]
        order = [value_names.index(v.name) for v in self._value_vars]
        return cast(
            Callable[..., list[np.ndarray]],
            compile_pymc(
                inputs, [outputs[i] for i in order], on_unused_input="ignore", mode=MAP_FIRST_MODE
            ),
        )

    @staticmethod
    def _flat(values: Sequence[Any]) -> np.ndarray | None:
        out = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values])
        return out if np.all(np.isfinite(out)) else None

    def _find(self, start: dict[str, np.ndarray], names: list[str]) -> np.ndarray | None:
        x0 = self._bijection.map({n: start[n] for n in names})

        def fused(x: np.ndarray) -> tuple[float, np.ndarray]:
            # Copy: a compiled PyTensor function may reuse its output buffers.
            loss, grad = self._f_fused(np.asarray(x, dtype=self._dtype))
            return float(loss), np.array(grad, dtype=float)

        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = optimize.minimize(
                fused,
                x0.data,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": MAP_MAXITER, "ftol": 1e-15, "gtol": 1e-10},
            )
            # Badly scaled posteriors (raw wine columns, scales 0.1 to 1000) can use up
            # the iterations 1e-2 sd short of the mode; a restart from there, with
            # L-BFGS's curvature memory cleared, converged (measured: 1.2e-2 -> 2.5e-3 sd).
            for _ in range(MAP_RESTARTS):
                if res.status != 1 or not np.all(np.isfinite(res.x)):  # 1: iteration limit
                    break
                res = optimize.minimize(
                    fused,
                    res.x,
                    jac=True,
                    method="L-BFGS-B",
                    options={"maxiter": MAP_MAXITER, "ftol": 1e-15, "gtol": 1e-10},
                )
        if not np.all(np.isfinite(res.x)) or res.status == 1:
            return None
        point = self._bijection.rmap(type(x0)(np.asarray(res.x), x0.point_map_info), start)
        return self._flat(self._constrained(**{n: point[n] for n in names}))


def start_failure(model: pm.Model) -> str:
    """Why a model cannot start, as PyMC would say it: the variables whose log
    density is not finite at the model's initial point, the free variables' values
    there, and the fix (``initval``, or a prior whose support covers the data)."""
    point = model.initial_point()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logps = model.point_logps(point, round_vals=6)
    bad = [name for name, value in logps.items() if not np.isfinite(value)]
    constrained = make_initial_point_fn(model=model, return_transformed=False, jitter_rvs=set())(0)
    at = ", ".join(
        f"{name} = {np.array2string(np.asarray(v), precision=4, threshold=6)}"
        for name, v in constrained.items()
    )
    observed = {rv.name for rv in model.observed_RVs}
    free = [n for n in bad if n not in observed]
    data = [n for n in bad if n in observed]
    parts = []
    if free:
        parts.append(f"the prior of {', '.join(free)} has log density -inf at its initial value")
    if data:
        parts.append(
            f"the observed {', '.join(data)} cannot occur at the initial point (the data "
            "lie outside the support its values give)"
        )
    what = "; ".join(parts) or "the log density is not finite at the initial point"
    names = ", ".join(constrained) or "the free variables"
    return (
        f"the model cannot start: {what}; the initial point is {at}. Fix: start "
        f"{names} where the data are possible, with initval= (pm.<Distribution>(name, "
        "..., initval=value)), or give a prior whose support covers the data"
    )


def set_model_data(model: pm.Model, data: dict[str, np.ndarray]) -> None:
    """``pm.set_data`` of ``data``; the per-observation topics' ``obs`` dimension follows ``x``."""
    coords = None
    if "x" in data:
        coords = {"obs": np.arange(int(np.asarray(data["x"]).shape[0]))}
    # pm.set_data evaluates each dimension's old length with PyTensor's default mode,
    # numba's: that made numba install its whole context (~0.3 CPU-s) in a process
    # that compiles nothing (a loaded model). A length needs no compiled code. The
    # flag is process-wide: a default-mode compile in another thread during this call
    # would use the Python linker too (the same values, slower); ours name their mode.
    with pytensor.config.change_flags(mode="FAST_COMPILE"):
        pm.set_data(data, model=model, coords=coords)


@dataclass
class CompiledModel:
    """A PyMC model with its nutpie compilation and (lazily) its MAP finder."""

    model: pm.Model
    variables: tuple[str, ...]
    nutpie_model: Any  # nutpie's compiled model: its class is internal to nutpie
    compile_seconds: float
    #: True if nutpie's machine code came from the on-disk cache (compiled_cache).
    compile_cached: bool = False
    #: Whether nutpie jitters the chains' starts (``compile_model``'s ``jitter``).
    jitter: bool = True
    _map_finder: MapFinder | None = field(default=None, repr=False)
    _unjittered: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def set_data(self, data: dict[str, np.ndarray]) -> None:
        """Point the PyMC-side shared variables at ``data``."""
        set_model_data(self.model, data)

    def sample(
        self,
        data: dict[str, np.ndarray],
        settings: Settings,
        *,
        seed: int,
        progress: Callable[..., None] | None = None,
        options: dict[str, Any] | None = None,
        jitter: bool | None = None,
    ) -> xr.DataTree:
        """Run nutpie on ``data`` (the model's ``pm.Data`` values).

        ``jitter=False`` starts every chain exactly at the model's initial point for
        this sampling, whatever the model was compiled with (None: as compiled), from
        the same machine code (the gaussian mixture's marginalised run: its
        complete-data model on unlabelled rows).
        """
        with self._lock:
            self.set_data(data)  # the initial point is computed from the PyMC graph
            nutpie_model = self.nutpie_model
            if jitter is False and self.jitter:
                if self._unjittered is None:
                    self._unjittered = compiled_cache.without_jitter(nutpie_model, self.model)
                nutpie_model = self._unjittered
            elif jitter and not self.jitter:
                raise ValueError("a model compiled with jitter=False cannot jitter its starts")
            # Data only the PyMC side reads (initial values) is not in nutpie's graph.
            keys = getattr(nutpie_model, "shared_var_keys", None)
            known = data if keys is None else {var.name for var in keys}
            compiled = compiled_cache.with_data(
                nutpie_model, **{k: v for k, v in data.items() if k in known}
            )
            kwargs = dict(
                draws=settings.draws,
                tune=settings.tune,
                chains=settings.chains,
                seed=seed,
                progress_bar=False,
                # Nothing reads the warmup groups; converting them to
                # xarray cost ~40% of a small model's run.
                save_warmup=False,
                **(options or {}),
            )
            if progress is not None:
                kwargs.update(progress_bar=True, progress_callback=progress)
            # One BLAS thread per chain: nutpie already runs chains in parallel.
            with one_thread(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    return compiled_cache.sample(compiled, **kwargs)
                except RuntimeError as err:
                    if "initialization points failed" not in str(err):
                        raise
                    # nutpie's own message is a Rust backtrace; name the cause.
                    raise InputError(start_failure(self.model)) from None

    def map_point(self, data: dict[str, np.ndarray]) -> np.ndarray | None:
        """PyMC's MAP for ``data``, flattened in the order of ``variables``."""
        return self.map_search(data).point

    def map_search(
        self, data: dict[str, np.ndarray], starts: np.ndarray | None = None
    ) -> MapSearch:
        """PyMC's MAP for ``data`` and the initial point its search started from, and
        the same search from each of ``starts`` (:meth:`MapFinder.search`)."""
        with self._lock:
            if self._map_finder is None:
                self._map_finder = MapFinder(self.model, self.variables)
            self.set_data(data)
            return self._map_finder.search(starts)


#: Most joint values of a discrete model's free variables that StepModel
#: enumerates (for chain starts and the MAP); above it, neither is computed.
ENUMERATE_LIMIT = 200_000


#: Set to 1 to have ``CategoricalGibbsMetropolis`` call the model's compiled log density
#: at every proposal, as PyMC does, instead of reading it from the table (:func:`tabulate`).
UNTABULATED_ENV = "BAYES_COMPARE_UNTABULATED_STEP"


@dataclass
class Enumeration:
    """A discrete model's log density at every joint value of its free variables."""

    #: (value variable, flat position, number of values) of each coordinate; the
    #: joint values run in ``itertools.product`` order over them.
    coords: list[tuple[str, int, int]]
    points: list[dict[str, np.ndarray]]
    logps: np.ndarray
    #: The recorded variables at each point, flattened.
    recorded: np.ndarray


def tabulate(step: object, found: Enumeration | None) -> None:
    """Have PyMC's uniform-proposal ``CategoricalGibbsMetropolis`` read the log density
    of a proposal from ``found``, the model's log density at every joint value.

    PyMC's step calls the model's compiled log density once per proposal,
    through its point-dict wrappers: about 30 us, 84,000 times for EnjoySport's
    4 x 3000 steps of 7 coordinates, most of a ``bayes-optimal`` run. The
    enumeration (:meth:`StepModel._enumerate`) has already evaluated that same
    log density (PyMC's ``model.logp()``) at every joint value, so the step
    reads it there: the index of a point is its mixed-radix number over
    ``found.coords`` (in ``itertools.product`` order), and a proposal that changes
    one coordinate moves it by that coordinate's stride. Everything else is
    PyMC's ``astep_unif``: the same shuffle of the coordinates, the same
    proposal (``sample_except``'s ``rng.choice(k - 1)``, drawn as
    ``rng.integers(k - 1)``, the same numbers) and PyMC's ``metrop_select``. So
    the chain is PyMC's, draw for draw: ``tests/compare/core/test_sampling.py``
    checks the draws equal PyMC's on EnjoySport, bit for bit, and that a table
    read with the wrong strides draws otherwise. EnjoySport's run took 5.1 s
    warm before, 1.9 s after (2026-12-06).

    ``found=None`` (a model too large to enumerate), a step over some of the
    coordinates, another step method, the proportional proposal or
    ``BAYES_COMPARE_UNTABULATED_STEP=1`` leave PyMC's step as it is.
    """
    if not isinstance(step, CategoricalGibbsMetropolis):
        return
    pymcs = types.MethodType(CategoricalGibbsMetropolis.astep_unif, step)
    ours = getattr(step, "_tabulated", None)
    if step.astep != pymcs and (ours is None or step.astep != ours):
        return  # the proportional proposal: PyMC's, untouched
    names = {name for name, *_ in found.coords} if found is not None else set()
    if (
        found is None
        or names != {var.name for var in step.vars}
        or os.environ.get(UNTABULATED_ENV) == "1"
    ):
        step.astep = pymcs  # not enumerable, or a step over some of the coordinates
        return
    coords = found.coords
    sizes = [k for *_, k in coords]
    strides = np.cumprod([1, *sizes[:0:-1]])[::-1]  # C order, as itertools.product
    offsets, offset = {}, 0
    for var in step.vars:  # the order of the step's raveled point
        offsets[var.name] = offset
        offset += sum(1 for name, *_ in coords if name == var.name)
    position = np.zeros(offset, dtype=np.int64)
    for j, (name, i, _) in enumerate(coords):
        position[offsets[name] + i] = strides[j]
    step._table = (np.asarray(found.logps, dtype=float), position)
    step._tabulated = types.MethodType(_tabulated_astep_unif, step)
    step.astep = step._tabulated


def restart(step: object) -> None:
    """Put the coordinates of PyMC's ``CategoricalGibbsMetropolis`` (in ``step``, or
    in the methods of a compound ``step``) back in the order it was built with.

    The step shuffles its list of coordinates in place at every iteration, so
    a step reused for another ``pm.sample`` would start from the order the
    last one left, and draw otherwise for the same seed: a second run in the
    same process, as ``run --all``'s processes and the local worker make,
    differed from the first. ``tests/compare/core/test_sampling.py`` checks
    that two samples of one compiled model draw the same.
    """
    for method in getattr(step, "methods", [step]):
        if isinstance(method, CategoricalGibbsMetropolis):
            if not hasattr(method, "_built_order"):
                method._built_order = list(method.dimcats)
            method.dimcats[:] = method._built_order


def _tabulated_astep_unif(self: Any, apoint: Any, *args: Any) -> tuple[Any, list[dict[str, Any]]]:
    """PyMC's ``CategoricalGibbsMetropolis.astep_unif`` with the log density read from
    ``self._table`` (see :func:`tabulate`)."""
    table, stride = self._table
    q = np.copy(apoint.data)
    dimcats = self.dimcats
    if self.shuffle_dims:
        self.rng.shuffle(dimcats)
    index = int(q @ stride)
    logp_curr = table[index]
    for dim, k in dimcats:
        current = q[dim]
        proposal = int(self.rng.integers(k - 1))  # PyMC's sample_except: rng.choice(k - 1)
        if proposal >= current:
            proposal += 1
        moved = index + (proposal - current) * int(stride[dim])
        logp_prop = table[moved]
        q[dim], accepted = metrop_select(logp_prop - logp_curr, proposal, current, rng=self.rng)
        if accepted:
            logp_curr, index = logp_prop, moved
    return RaveledVars(q, apoint.point_map_info), [{}]


@dataclass
class StepModel:
    """A PyMC model sampled by ``pm.sample`` with given step methods, not by NUTS.

    For models whose free variables are discrete (NUTS needs gradients):
    ``step(model)`` returns the step method(s), e.g. ``CategoricalGibbsMetropolis``.
    When every free variable is Categorical or Bernoulli and their joint
    values number at most :data:`ENUMERATE_LIMIT`, PyMC's own log density is
    evaluated at each joint value, which gives

    * chain starts: distinct points drawn uniformly from those of positive
      density (a noise-free likelihood gives most points density zero, where
      ``pm.sample`` cannot start), so the chains start over-dispersed;
    * the MAP: the mode of the recorded ``variables`` (their probability
      summed over the points that record the same value), i.e. the mode of
      the distribution the exact side describes, found without an optimiser.

    The draws carry a ``diverging`` statistic of zeros (these steps have no
    divergences) so that the runner reads every sampler alike.
    """

    model: pm.Model
    variables: tuple[str, ...]
    step: Callable[[pm.Model], object]
    compile_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Built once and reused: both read the pm.Data shared variables at call
    # time, and pm.sample gives the step a fresh generator per chain.
    _step: object | None = field(default=None, repr=False)
    _enum_fn: Callable[..., Any] | None = field(default=None, repr=False)
    _sizes_fn: Callable[[], Any] | None = field(default=None, repr=False)
    _start_fn: Callable[[Any], dict[str, np.ndarray]] | None = field(default=None, repr=False)

    def set_data(self, data: dict[str, np.ndarray]) -> None:
        pm.set_data(data, model=self.model)

    def _start(self) -> dict[str, np.ndarray]:
        """The model's initial point (``model.initial_point()``, which compiles anew each call)."""
        assert self._start_fn is not None
        return self._start_fn(None)

    def _coordinates(self) -> list[tuple[str, int, int]] | None:
        """(value variable, flat position, number of values) of each discrete coordinate,
        in the enumeration's order; None when the model is not enumerable."""
        if self._sizes_fn is None:
            graphs = []  # each free variable's number of values: 2, or its p's length
            for rv in self.model.free_RVs:
                op = rv.owner.op
                if isinstance(op, CategoricalRV):
                    graphs.append(rv.owner.inputs[-1].shape[-1])
                elif isinstance(op, BernoulliRV):
                    graphs.append(pytensor.tensor.constant(2))
                else:
                    self._sizes_fn = lambda: None
                    break
            else:
                # Compiled once (they may read pm.Data), by the Python linker (no g++ or
                # numba for a few shapes); so is the initial point.
                self._sizes_fn = pytensor.function(
                    [], graphs, mode=Mode(linker="py", optimizer="None")
                )
                self._start_fn = make_initial_point_fn(
                    model=self.model, return_transformed=True, jitter_rvs=set()
                )
        sizes = self._sizes_fn()
        if sizes is None:
            return None
        start = self._start()
        coords = []
        for rv, k in zip(self.model.free_RVs, sizes):
            name = self.model.rvs_to_values[rv].name
            coords += [(name, i, int(k)) for i in range(int(np.size(start[name])))]
        if np.prod([k for *_, k in coords], dtype=float) > ENUMERATE_LIMIT:
            return None
        return coords

    def _enumerate(self) -> Enumeration | None:
        """The model's log density and recorded values at every joint value, or None."""
        coords = self._coordinates()
        if coords is None:
            return None
        start = self._start()
        if self._enum_fn is None:
            unobserved = {var.name: var for var in self.model.unobserved_value_vars}
            self._enum_fn = self.model.compile_fn(
                [self.model.logp(), *[unobserved[v] for v in self.variables]],
                inputs=self.model.value_vars,
                point_fn=False,
                on_unused_input="ignore",
            )
        fn = self._enum_fn
        names = [v.name for v in self.model.value_vars]
        points, logps, recorded = [], [], []
        for values in itertools.product(*[range(k) for *_, k in coords]):
            point = {n: np.array(start[n], copy=True) for n in names}
            for (name, i, _), v in zip(coords, values):
                point[name].reshape(-1)[i] = v
            logp, *outs = fn(*[point[n] for n in names])
            points.append(point)
            logps.append(float(logp))
            recorded.append(np.concatenate([np.ravel(np.asarray(o, dtype=float)) for o in outs]))
        return Enumeration(coords, points, np.array(logps), np.array(recorded))

    def sample(
        self,
        data: dict[str, np.ndarray],
        settings: Settings,
        *,
        seed: int,
        progress: Callable[..., None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> xr.DataTree:
        """Run ``pm.sample`` with this model's step methods on ``data``."""
        with self._lock:
            self.set_data(data)
            initvals = None
            found = self._enumerate()
            step = self._steps()
            restart(step)
            if found is not None:
                ok = np.flatnonzero(np.isfinite(found.logps))
                rng = np.random.default_rng(seed)
                pick = rng.choice(ok, size=settings.chains, replace=ok.size < settings.chains)
                initvals = [found.points[i] for i in pick]
            tabulate(step, found)
            logger = logging.getLogger("pymc")
            level = logger.level
            logger.setLevel(logging.ERROR)  # keep pm.sample's progress lines off the terminal
            try:
                with self.model, one_thread(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = pm.sample(
                        draws=settings.draws,
                        tune=settings.tune,
                        chains=settings.chains,
                        cores=1,
                        step=step,
                        initvals=initvals,
                        random_seed=seed,
                        progressbar=False,
                        compute_convergence_checks=False,
                        **(options or {}),
                    )
            finally:
                logger.setLevel(level)
        stats = (
            tree["sample_stats"].to_dataset() if "sample_stats" in tree.children else xr.Dataset()
        )
        stats["diverging"] = xr.DataArray(
            np.zeros((settings.chains, settings.draws), dtype=bool),
            dims=("chain", "draw"),
            coords={"chain": tree.posterior["chain"], "draw": tree.posterior["draw"]},
        )
        tree["sample_stats"] = xr.DataTree(stats)
        return tree

    def _steps(self) -> object:
        if self._step is None:
            self._step = self.step(self.model)
        return self._step

    def map_search(
        self, data: dict[str, np.ndarray], starts: np.ndarray | None = None
    ) -> MapSearch:
        """The mode by enumeration (:meth:`map_point`): no search, so no start
        (``starts`` are not used)."""
        return MapSearch(self.map_point(data), None)

    def map_point(self, data: dict[str, np.ndarray]) -> np.ndarray | None:
        """Mode of the recorded variables by enumeration; None when not enumerable."""
        with self._lock:
            self.set_data(data)
            found = self._enumerate()
        if found is None:
            return None
        logps, recorded = found.logps, found.recorded
        keys, inverse = np.unique(np.round(recorded, 12), axis=0, return_inverse=True)
        mass = np.full(len(keys), -np.inf)
        np.logaddexp.at(mass, inverse.ravel(), logps)
        return keys[int(np.argmax(mass))]


class ModelCache:
    """Compiled models keyed by (topic, structure, builder); one compile each."""

    def __init__(self) -> None:
        self._models: dict[Hashable, CompiledModel | StepModel] = {}
        self._lock = threading.Lock()

    def get(
        self,
        key: Hashable,
        build: Callable[[], pm.Model],
        variables: Sequence[str],
        compiler: Callable[[pm.Model, Sequence[str]], Any] | None = None,
        **compile_kwargs: Any,
    ) -> Any:
        """The model under ``key``, compiled once: by :func:`compile_model`, or ``compiler``
        (another inference method, :class:`compare.core.inference.MethodModel`)."""
        with self._lock:
            if key not in self._models:
                model = build()
                self._models[key] = (
                    compile_model(model, variables, **compile_kwargs)
                    if compiler is None
                    else compiler(model, variables)
                )
            return self._models[key]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._models

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


def compile_model(
    model: pm.Model,
    variables: Sequence[str],
    *,
    jitter: bool = True,
    step: Callable[[pm.Model], object] | None = None,
) -> Any:
    """Compile ``model`` with nutpie (numba backend), or load it from the disk cache.

    ``jitter=False`` starts every chain exactly at the model's initial point
    (nutpie otherwise adds U(-1, 1) in the unconstrained space).  With
    ``step`` (discrete models), nothing is compiled ahead: the model is
    sampled by ``pm.sample`` with ``step(model)`` (see :class:`StepModel`).
    """
    missing = [v for v in variables if v not in model.named_vars]
    if missing:
        raise ValueError(
            f"the PyMC model has no variable(s) {missing}; "
            f"it has {sorted(v.name for v in model.free_RVs)}"
        )
    if step is not None:
        return StepModel(model=model, variables=tuple(variables), step=step)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled, cached = compiled_cache.compile_pymc_model(model, jitter=jitter)
    return CompiledModel(
        model=model,
        variables=tuple(variables),
        nutpie_model=compiled,
        compile_seconds=time.perf_counter() - start,
        compile_cached=cached,
        jitter=jitter,
    )


CACHE = ModelCache()
