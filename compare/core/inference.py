"""The inference methods other than nutpie, on a PyMC model with ``pm.Data``.

:class:`MethodModel` stands where :class:`compare.core.sampling.CompiledModel`
stands for nutpie (same ``set_data``, ``sample`` and ``map_point``), so the
runner treats every sampler alike; approximations add :meth:`MethodModel.approximate`.
The catalogue (names, kinds, what each needs) is :mod:`compare.core.methods`.

Samplers return a DataTree with ``posterior`` and ``sample_stats["diverging"]``
(zeros where the method has no divergences: SMC). Chains run in this
process (``cores=1``; NumPyro's ``chain_method="sequential"``, BlackJAX's
``"vectorized"``, which has no sequential mode): a Dask worker may not start
processes, and the audit's times per method are then comparable.

Approximations return an :class:`Approximation`: iid draws in PyMC's
unconstrained space (the flat vector of the model's value variables, in the
order of :class:`UnconstrainedSpace`) with the approximation's log density at
each, which :mod:`compare.core.approximation` turns into the distances from
the exact posterior.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pymc as pm
import xarray as xr
from pymc.blocking import DictToArrayBijection, RaveledVars
from scipy import linalg, optimize

from compare.accel.jax_cache import use_jax_cache
from compare.core.approximation import Optimisation, loss_trend
from compare.core.defaults import Settings
from compare.core.methods import APPROXIMATION, get_method
from compare.core.registry import InputError
from compare.core.sampling import MapFinder, MapSearch, one_thread, set_model_data


@dataclass(frozen=True, eq=False)
class Approximation:
    """iid draws from an approximation, in the model's unconstrained space.

    Attributes
    ----------
    method : str
    draws : array of shape (S, k)
        Flat unconstrained values (:class:`UnconstrainedSpace` order).
    logq : array of shape (S,)
        The approximation's normalised log density at each draw.
    mean, cov : array of shape (k,) and (k, k), or None
        Its Gaussian's moments when it is one Gaussian (ADVI, Laplace).
    seconds : float
        Time to fit it (not to draw).
    optimisation : Optimisation or None
        ADVI's: whether its loss had levelled off at the last step.
    """

    method: str
    draws: np.ndarray
    logq: np.ndarray
    mean: np.ndarray | None
    cov: np.ndarray | None
    seconds: float
    optimisation: Optimisation | None = None


class UnconstrainedSpace:
    """The flat vector of a model's value variables, and what is computed from it.

    ``logp(u)`` is the model's log density of ``u`` with the Jacobian of the
    transforms (the density the unconstrained draws have); ``values(u)`` is
    the flattened ``variables`` (the exact side's parameters) at ``u``.
    Both read the ``pm.Data`` shared variables at call time.
    """

    def __init__(self, model: pm.Model, variables: tuple[str, ...]):
        self.model = model
        point = model.initial_point()
        self._template = DictToArrayBijection.map({v.name: point[v.name] for v in model.value_vars})
        self.size = int(self._template.data.size)
        self._logp = model.compile_logp(jacobian=True)
        self._dlogp = model.compile_dlogp(jacobian=True)
        unobserved = {var.name: var for var in model.unobserved_value_vars}
        self._values = model.compile_fn(
            [unobserved[v] for v in variables],
            inputs=model.value_vars,
            point_fn=False,
            on_unused_input="ignore",
        )
        self._names = [v.name for v in model.value_vars]
        self._variables = variables
        start = self.point(self.start())
        self.shapes = [np.shape(o) for o in self._values(*[start[n] for n in self._names])]

    def is_identity(self) -> bool:
        """True when the exact parameters are the unconstrained values themselves."""
        if sum(int(np.prod(s, dtype=int)) for s in self.shapes) != self.size:
            return False
        rng = np.random.default_rng(0)
        probes = rng.standard_normal((2, self.size))
        return all(np.allclose(self.values(u), u, rtol=0, atol=1e-12) for u in probes)

    def split(
        self, draws: np.ndarray, chains: int, n: int
    ) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
        """(variable, shape, values of shape (chains, n, *shape)) from flat draws (chains, n, d)."""
        out, offset = [], 0
        for name, shape in zip(self._variables, self.shapes):
            size = int(np.prod(shape, dtype=int))
            values = draws[..., offset : offset + size].reshape(chains, n, *shape)
            out.append((name, tuple(shape), values))
            offset += size
        return out

    def point(self, u: np.ndarray) -> dict[str, np.ndarray]:
        raveled = RaveledVars(np.asarray(u, dtype=float), self._template.point_map_info)
        return DictToArrayBijection.rmap(raveled)

    def start(self) -> np.ndarray:
        point = self.model.initial_point()
        return np.asarray(
            DictToArrayBijection.map({n: point[n] for n in self._names}).data, dtype=float
        )

    def logp(self, u: np.ndarray) -> float:
        return float(self._logp(self.point(u)))

    def dlogp(self, u: np.ndarray) -> np.ndarray:
        return np.asarray(self._dlogp(self.point(u)), dtype=float)

    def values(self, u: np.ndarray) -> np.ndarray:
        point = self.point(u)
        outs = self._values(*[point[n] for n in self._names])
        return np.concatenate([np.ravel(np.asarray(o, dtype=float)) for o in outs])


@dataclass
class MethodModel:
    """A PyMC model run by one method of :mod:`compare.core.methods` (not nutpie)."""

    model: pm.Model
    variables: tuple[str, ...]
    method: str
    compile_seconds: float = 0.0
    compile_cached: bool = False
    _map_finder: MapFinder | None = field(default=None, repr=False)
    _space: UnconstrainedSpace | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def set_data(self, data: dict[str, np.ndarray]) -> None:
        set_model_data(self.model, data)

    @property
    def space(self) -> UnconstrainedSpace:
        if self._space is None:
            self._space = UnconstrainedSpace(self.model, self.variables)
        return self._space

    def map_point(self, data: dict[str, np.ndarray]) -> np.ndarray | None:
        """PyMC's MAP for ``data`` (the same check whatever the method)."""
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

    def sample(
        self,
        data: dict[str, np.ndarray],
        settings: Settings,
        *,
        seed: int,
        progress: Callable[..., None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> xr.DataTree:
        """Draws of a sampler method on ``data`` (``options`` are nutpie's: not used)."""
        if get_method(self.method).kind == APPROXIMATION:
            raise ValueError(f"{self.method} is an approximation: use approximate()")
        uses_jax = "jax" in get_method(self.method).modules
        if uses_jax:
            use_jax_cache()
        with self._lock, _releasing_jax_programs(uses_jax):
            self.set_data(data)
            model = _static(self.model) if uses_jax else self.model
            logger = logging.getLogger("pymc")
            level = logger.level
            logger.setLevel(logging.ERROR)
            try:
                with model, one_thread(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if self.method == "smc":
                        tree = pm.sample_smc(
                            draws=settings.draws,
                            chains=settings.chains,
                            cores=1,
                            random_seed=seed,
                            progressbar=False,
                            compute_convergence_checks=False,
                        )
                    else:
                        extra: dict[str, Any] = {}
                        if self.method == "numpyro":
                            extra["nuts_sampler_kwargs"] = {"chain_method": "sequential"}
                        elif self.method == "blackjax":  # it has no sequential chains
                            extra["nuts_sampler_kwargs"] = {"chain_method": "vectorized"}
                        tree = pm.sample(
                            draws=settings.draws,
                            tune=settings.tune,
                            chains=settings.chains,
                            cores=1,
                            nuts_sampler=self.method,
                            random_seed=seed,
                            progressbar=False,
                            compute_convergence_checks=False,
                            **extra,
                        )
            finally:
                logger.setLevel(level)
        return _with_divergences(tree, settings)

    def approximate(
        self, data: dict[str, np.ndarray], settings: Settings, *, seed: int
    ) -> Approximation:
        """Fit the approximation on ``data`` and take ``chains x draws`` iid draws from it."""
        size = settings.chains * settings.draws
        rng = np.random.default_rng(seed)
        logger = logging.getLogger("pymc")
        level = logger.level
        with self._lock:
            self.set_data(data)
            space = self.space
            start = time.perf_counter()
            logger.setLevel(logging.ERROR)  # pm.fit's "Finished" line
            try:
                fitted = self._fit(space, settings, size, seed)
            finally:
                logger.setLevel(level)
            seconds = time.perf_counter() - start
        if isinstance(fitted, Approximation):
            return dataclasses.replace(fitted, seconds=seconds)
        mean, cov, optimisation = fitted
        draws, logq = _gaussian_draws(mean, cov, size, rng, what=self.method)
        return Approximation(self.method, draws, logq, mean, cov, seconds, optimisation)

    def _fit(
        self, space: UnconstrainedSpace, settings: Settings, size: int, seed: int
    ) -> Approximation | tuple[np.ndarray, np.ndarray, Optimisation | None]:
        """The fitted Gaussian (mean, cov, and ADVI's loss trend), or Pathfinder's draws
        (its q is not one Gaussian)."""
        with one_thread(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.method in ("advi", "fullrank-advi"):
                return _advi(self.model, self.method, settings.vi_steps, seed, space)
            if self.method == "laplace":
                return (*_laplace(space), None)
            if self.method == "pathfinder":
                with _releasing_jax_programs(True):
                    draws, logq = _pathfinder(space, size, seed)
                return Approximation(self.method, draws, logq, None, None, 0.0)
            raise ValueError(f"{self.method} is not an approximation")


@contextlib.contextmanager
def _releasing_jax_programs(uses_jax: bool) -> Any:
    """Drop JAX's in-memory compiled programs once a JAX method's call is done.

    PyMC's JAX samplers (and Pathfinder on PyMC's JAX log density) trace a new
    program at every call, with the data as constants, and JAX keeps every
    compiled program in memory for the life of the process: measured +75 MB
    a run on beta-binomial with NumPyro, so the per-sampler calibration's Dask
    workers reached 10.4 GB each after ~150 runs and paused. A program is
    never called again from memory (the next call has a new closure, and its
    data may differ); the same program on the same data is served by JAX's
    persistent cache on disk (:func:`use_jax_cache`). With
    ``jax.clear_caches()`` after each call the process stays flat (643 ->
    653 MB over 6 runs) and a run is no slower (1.7 s against 2.3 s).
    """
    try:
        yield
    finally:
        if uses_jax:
            import jax  # heavy: JAX, already loaded by the method that ran

            jax.clear_caches()  # type: ignore[no-untyped-call]


def _with_divergences(tree: xr.DataTree, settings: Settings) -> xr.DataTree:
    """Give every sampler's tree a ``sample_stats["diverging"]`` (zeros where it has none)."""
    stats = tree["sample_stats"].to_dataset() if "sample_stats" in tree.children else xr.Dataset()
    if "diverging" not in stats:
        posterior = tree.posterior
        stats["diverging"] = xr.DataArray(
            np.zeros((posterior.sizes["chain"], posterior.sizes["draw"]), dtype=bool),
            dims=("chain", "draw"),
            coords={"chain": posterior["chain"], "draw": posterior["draw"]},
        )
    tree["sample_stats"] = xr.DataTree(stats)
    return tree


def _gaussian_draws(
    mean: np.ndarray, cov: np.ndarray, size: int, rng: np.random.Generator, *, what: str
) -> tuple[np.ndarray, np.ndarray]:
    """iid draws of N(mean, cov) and their log densities, through a Cholesky factor."""
    k = mean.size
    try:
        chol = linalg.cholesky(cov, lower=True)
    except linalg.LinAlgError:
        raise InputError(
            f"--method {what}: the fitted covariance is not positive definite "
            "(the optimiser stopped at a saddle or a flat direction); try another method"
        ) from None
    z = rng.standard_normal((size, k))
    draws = mean + z @ chol.T
    log_det = 2.0 * np.sum(np.log(np.diag(chol)))
    logq = -0.5 * np.sum(z**2, axis=1) - 0.5 * log_det - 0.5 * k * np.log(2 * np.pi)
    return draws, logq


def _advi(
    model: pm.Model, method: str, steps: int, seed: int, space: UnconstrainedSpace
) -> tuple[np.ndarray, np.ndarray, Optimisation]:
    """pm.fit's Gaussian, in :class:`UnconstrainedSpace`'s order, and its loss's trend
    (``approx.hist``: the negative ELBO's estimate at each step)."""
    with model, contextlib.redirect_stdout(io.StringIO()):  # its "Finished" line
        approx = pm.fit(
            n=steps,
            method="advi" if method == "advi" else "fullrank_advi",
            random_seed=seed,
            progressbar=False,
        )
    group = approx.groups[0]
    mean = np.asarray(group.mean.eval(), dtype=float)
    cov = np.atleast_2d(np.asarray(group.cov.eval(), dtype=float))
    # pm.fit orders the value variables by its own ordering; put them in ours.
    order = np.empty(mean.size, dtype=int)
    ours = space._template.point_map_info
    offset = 0
    positions = {}
    for name, shape, _, _ in ours:
        n = int(np.prod(shape, dtype=int))
        positions[name] = np.arange(offset, offset + n)
        offset += n
    for name, slc, _, _ in group.ordering.values():
        order[positions[name]] = np.arange(slc.start, slc.stop)
    return mean[order], cov[np.ix_(order, order)], loss_trend(np.asarray(approx.hist))


def _laplace(space: UnconstrainedSpace) -> tuple[np.ndarray, np.ndarray]:
    """Mode of the unconstrained log density and the inverse of its negative Hessian.

    The Hessian is the central difference of the exact (autodiff) gradient,
    symmetrised: :func:`gradient_hessian`. PyMC's ``compile_d2logp`` builds
    a second graph for numba to compile (2.9 s warm for normal-inverse-gamma,
    tens of seconds cold for the Wishart topics, the largest share of the
    audit's Laplace cells), while ``2 k`` gradients at the mode cost
    milliseconds and are exact to ~1e-9 relative (for a Gaussian posterior,
    whose gradient is affine, to rounding).
    """
    res = optimize.minimize(
        lambda u: -space.logp(u),
        space.start(),
        jac=lambda u: -space.dlogp(u),
        method="L-BFGS-B",
        options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-14},
    )
    if not np.all(np.isfinite(res.x)):
        raise InputError("--method laplace: the mode search left the support; try another method")
    precision = -gradient_hessian(space.dlogp, np.asarray(res.x, dtype=float))
    if not np.all(np.isfinite(precision)):
        raise InputError(
            "--method laplace: the log density is not finite around the mode (it sits on "
            "the edge of the support); try another method"
        )
    try:
        factor = linalg.cho_factor(precision, lower=True)
    except linalg.LinAlgError:
        raise InputError(
            "--method laplace: the negative Hessian at the mode is not positive definite "
            "(a flat or saddle direction); try another method"
        ) from None
    cov = linalg.cho_solve(factor, np.eye(precision.shape[0]))
    return np.asarray(res.x, dtype=float), 0.5 * (cov + cov.T)


def gradient_hessian(grad: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """Hessian at ``x`` as central differences of the exact gradient ``grad``, symmetrised.

    Column j is ``(grad(x + h_j e_j) - grad(x - h_j e_j)) / (2 h_j)`` with
    ``h_j = eps^(1/3) max(1, |x_j|)`` (~6e-6 relative: the step that balances
    the O(h^2) truncation error against the rounding of the gradient,
    Nocedal & Wright 2006, sec. 8.1). For an affine gradient (a Gaussian
    log density) the difference is exact up to rounding.

    Parameters
    ----------
    grad : callable
        Gradient of a scalar function, array of shape (k,) in and out.
    x : array of shape (k,)

    Returns
    -------
    array of shape (k, k)
    """
    x = np.asarray(x, dtype=float)
    step = np.cbrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(x))
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = step[j]
        columns.append((np.asarray(grad(x + e)) - np.asarray(grad(x - e))) / (2.0 * step[j]))
    hessian = np.column_stack(columns) if columns else np.zeros((0, 0))
    return 0.5 * (hessian + hessian.T)


def _static(model: pm.Model) -> pm.Model:
    """``model`` with its data and dimension lengths as constants, for the JAX methods.

    JAX compiles for fixed shapes: PyTensor's JAX backend refuses an ``arange``
    whose length is read from a ``pm.Data`` (the Wishart's Cholesky factor's
    ``tril_indices`` in pymc_models/_common.py, which the numba backend compiles
    once for every length), so numpyro, blackjax and Pathfinder failed on the
    mixture, naive Bayes and the classifier. PyMC's ``freeze_dims_and_data``
    makes data and lengths constants (a new model, for the data set now), but
    refuses a starting value computed from data (the mixture's and the
    classifier's ``init_*``): those are evaluated for the current data first.
    A model it cannot move (a transform whose bounds close over the data, as
    pareto-uniform's: the copy's density then fails to build) is returned as
    it is; JAX compiles those as they are.
    """
    from pymc.model.transform.optimization import freeze_dims_and_data  # heavy: PyMC
    from pytensor.graph.basic import Constant, Variable  # heavy: PyTensor

    saved = dict(model.rvs_to_initial_values)
    logger = logging.getLogger("pytensor")
    level = logger.level
    try:
        for rv, init in saved.items():
            if isinstance(init, Variable) and not isinstance(init, Constant):
                model.rvs_to_initial_values[rv] = np.asarray(init.eval())
        frozen = freeze_dims_and_data(model)
        # A copy that cannot build prints PyTensor's rewriter's traceback on stderr
        # before it raises: the failure is expected here, and answered below.
        logger.setLevel(logging.CRITICAL)
        with contextlib.redirect_stderr(io.StringIO()):
            frozen.logp()
    except (ValueError, NotImplementedError):
        return model
    finally:
        logger.setLevel(level)
        model.rvs_to_initial_values.update(saved)
    return frozen


def _pathfinder(space: UnconstrainedSpace, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """BlackJAX's Pathfinder on PyMC's JAX log density: (draws, log q)."""
    import jax  # heavy: JAX only for the JAX methods

    use_jax_cache()
    # PyMC's float64 log density needs JAX's 64-bit mode: process-wide, so put back after.
    x64 = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
    try:
        return _pathfinder_x64(space, size, seed)
    finally:
        jax.config.update("jax_enable_x64", x64)  # type: ignore[no-untyped-call]


def _pathfinder_x64(
    space: UnconstrainedSpace, size: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pathfinder` in JAX's 64-bit mode."""
    import blackjax  # heavy: BlackJAX only for Pathfinder
    import jax  # heavy: JAX only for the JAX methods
    from pymc.sampling.jax import get_jaxified_graph  # heavy: JAX

    model = _static(space.model)
    info = space._template.point_map_info
    by_name = {v.name: v for v in model.value_vars}
    logp_fn = get_jaxified_graph(
        inputs=[by_name[name] for name, *_ in info], outputs=[model.logp()]
    )

    def logdensity(u: Any) -> Any:
        parts, offset = [], 0
        for _, shape, _, _ in info:
            n = int(np.prod(shape, dtype=int))
            parts.append(u[offset : offset + n].reshape(shape))
            offset += n
        return logp_fn(*parts)[0]

    key = jax.random.PRNGKey(seed % 2**32)
    fit_key, draw_key = jax.random.split(key)
    state, _ = blackjax.vi.pathfinder.approximate(fit_key, logdensity, space.start())
    draws, logq = blackjax.vi.pathfinder.sample(draw_key, state, size)
    return np.asarray(draws, dtype=float), np.asarray(logq, dtype=float)
