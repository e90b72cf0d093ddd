"""Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari and Gelman 2018).

Each simulation draws theta from the prior and data from the likelihood (the
topic's ``simulate``), fits the PyMC model to the data (compiled once per
worker process, the data swapped with ``with_data``), and records the rank
of theta among the posterior draws thinned to about their effective sample
size.  If the model and sampler are right, ranks are uniform.

Orchestration:

* Dask distributed: a ``LocalCluster`` of W single-threaded worker processes,
  or an existing cluster (``scheduler``); the same code path.  A task is a
  block of consecutive simulations (one zarr chunk); each worker keeps its
  compiled models in :data:`compare.core.sampling.CACHE`, so it compiles once.
* Results go to a zarr store as blocks complete (chunk writes are atomic;
  the ``done`` flags are written last), so a resumed run redoes only blocks
  whose flags were not written; every simulation's random streams derive
  from (seed, index) alone (:func:`compare.studies.sbc_exact.stream`), so a redone
  simulation is the same simulation.
* Statistics: per parameter a rank histogram with its binomial band and the
  ECDF difference with a simultaneous band; the uniformity test is the one
  behind that band (Säilynoja, Bürkner and Vehtari 2022): the smallest
  two-sided binomial tail probability of the ECDF over a grid, its p-value
  from Monte Carlo draws of its null distribution.  Holm's method over all
  tests (every parameter, the MCMC side and the exact side) keeps the
  family-wise false-alarm rate at ``alpha``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special, stats

from compare.accel import compiled_cache
from compare.core.cluster import connect
from compare.core.defaults import DEFAULT
from compare.core.drawing import drawing
from compare.core.files import atomic_write, dumps, versions
from compare.core.files import clean as _clean
from compare.core.registry import InputError, Topic
from compare.core.text import fmt
from compare.core.text import template_env as _env
from compare.studies import sbc_exact
from compare.studies.planted import planted
from compare.topics import get_topic

STORE = "sbc.zarr"
DOCUMENT = "sbc.json"
PAGE = "index.html"
FIGURE_DIR = "figures"
#: The SBC folder's name inside a topic's run folder (``reports/runs/<topic>/sbc``).
RUN_SUBDIR = "sbc"
FORMAT = 1

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
EXIT_CODES = {PASS: 0, FAIL: 1, INCONCLUSIVE: 2}


# --- settings -----------------------------------------------------------------
@dataclass(frozen=True)
class SbcSettings:
    """How each simulation is fitted and how the verdict is reached.

    Attributes
    ----------
    n_obs : int
        Observations per simulated data set.
    draws, tune, chains : int
        Kept and warm-up draws per chain, and chains, of every fit.
    thin : int or None
        Keep every ``thin``-th draw of each chain before ranking; None thins
        each parameter to about its ESS, ``ceil(draws x chains / min(bulk,
        tail ESS))``, so that the ranked draws are close to independent.
    seed : int
        Base seed; simulation i uses streams of ``SeedSequence([seed, i])``.
    alpha : float
        Family-wise false-alarm rate of the verdict (Holm over all tests).
    rhat_max : float
        A fit is unconverged when its largest rank-normalised split R-hat
        reaches this, or it has a divergent transition.  Not the 1.01 of a
        single run's gate: with 4 x 500 draws a converged fit of
        the normal mean with known variance exceeded 1.01 in 4.7% of fits, with 4 x 250 in
        23%, and 1.05 in none of 150 (measured), so 1.01 would call healthy
        short fits unconverged; 1.05 still flags stuck or multimodal chains.
    max_bad_share : float
        More failed plus unconverged fits than this share of the finished
        ones make the verdict inconclusive.
    null_draws : int
        Monte Carlo draws of the uniformity statistic's null distribution.
    """

    n_obs: int = 20
    draws: int = 250
    tune: int = 300
    chains: int = 4
    thin: int | None = None
    seed: int = DEFAULT.seed
    alpha: float = 0.01
    rhat_max: float = 1.05
    max_bad_share: float = 0.1
    null_draws: int = 4000

    def __post_init__(self) -> None:
        flags = {
            "n_obs": "--n",
            "draws": "--draws",
            "chains": "--chains",
            "null_draws": "null_draws",
        }
        for name, flag in flags.items():
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InputError(f"{flag} must be a whole number >= 1, got {value!r}")
        if not isinstance(self.tune, int) or self.tune < 0:
            raise InputError(f"--tune must be a whole number >= 0, got {self.tune!r}")
        if self.thin is not None and (not isinstance(self.thin, int) or self.thin < 1):
            raise InputError(
                f"--thin must be a whole number >= 1, got {self.thin!r}; "
                "leave it out to thin to about the ESS"
            )
        if not 0.0 < self.alpha < 1.0:
            raise InputError(f"--alpha must be in (0, 1), got {self.alpha!r}; e.g. --alpha 0.01")


@dataclass(frozen=True)
class SbcSpec:
    """Everything a worker needs to run a simulation; small and picklable.

    ``bug`` plants a mistake in the PyMC model (``compare.studies.planted``:
    ``(bug, factor)``), for power studies; the simulator stays right.
    """

    topic: str
    hyper: Mapping[str, Any]
    settings: SbcSettings = SbcSettings()
    bug: tuple[str, float] | None = None

    def resolve(self) -> Topic:
        if self.bug is None:
            return get_topic(self.topic)

        return planted(self.topic, self.bug[0], float(self.bug[1]))

    def fingerprint(self) -> dict[str, Any]:
        """What a resumed run must share with the stored one (JSON-safe)."""

        s = self.settings
        return _clean(
            {
                "topic": self.topic,
                "bug": None if self.bug is None else list(self.bug),
                "hyper": dict(sorted(self.hyper.items())),
                "n_obs": s.n_obs,
                "draws": s.draws,
                "tune": s.tune,
                "chains": s.chains,
                "thin": s.thin,
                "seed": s.seed,
            }
        )


# --- one block of simulations (runs on a worker) -------------------------------
#: Per-simulation fields of the store: name -> (dtype, per parameter?, fill).
FIELDS: dict[str, tuple[str, bool, Any]] = {
    "status": ("int8", False, 0),  # 0 not run, 1 fitted, 2 failed
    "theta": ("float64", True, np.nan),
    "rank": ("int32", True, -1),
    "n_ranked": ("int32", True, 0),  # draws theta was ranked among (after thinning)
    "u": ("float64", True, np.nan),  # (rank + V) / (n_ranked + 1), V ~ U(0, 1)
    "thin": ("int32", True, 0),
    "rhat": ("float64", False, np.nan),  # largest over parameters
    "ess_bulk": ("float64", False, np.nan),  # smallest over parameters
    "ess_tail": ("float64", False, np.nan),
    "divergences": ("int32", False, -1),
    "seconds": ("float64", False, np.nan),  # the fit alone
}
OK, FAILED = 1, 2


def _raw_draws(trace: Any, variables: Sequence[str]) -> tuple[np.ndarray, int]:
    """(draws of shape (chain, draw, d), divergences) from nutpie's raw arrow trace.

    Skips nutpie's conversion to an ArviZ DataTree (half the time of a small
    fit, measured); values are flattened in C order, as
    :func:`compare.core.sampling.flatten` does.
    """
    import pyarrow  # heavy: pyarrow only when a study is stored

    def column(draw: Any, name: str) -> np.ndarray:
        col = pyarrow.array(draw.column(name))
        if hasattr(col, "flatten"):
            col = col.flatten()
        return np.asarray(col.to_numpy(False), dtype=float).reshape(draw.num_rows, -1)

    draw_batches, stat_batches = trace.get_arrow_trace()
    chains, divergences = [], 0
    for draw, stat in zip(draw_batches, stat_batches):
        tuning = np.asarray(pyarrow.array(stat.column("tuning")).to_numpy(False), dtype=bool)
        keep = ~tuning
        diverging = np.asarray(pyarrow.array(stat.column("diverging")).to_numpy(False))
        divergences += int(np.sum(diverging[keep]))
        if isinstance(trace, compiled_cache.RawTrace):  # the position alone: expand it
            expanded = trace.variables(column(draw, compiled_cache.POSITION)[keep])
            parts = [expanded[name].reshape(int(keep.sum()), -1) for name in variables]
        else:
            parts = [column(draw, name)[keep] for name in variables]
        chains.append(np.concatenate(parts, axis=1))
    return np.stack(chains), divergences


def rank_of(
    theta: np.ndarray,
    draws: np.ndarray,
    *,
    thin: int | None,
    rng: np.random.Generator,
    ess: np.ndarray,
) -> dict[str, np.ndarray]:
    """Ranks of ``theta`` (d,) among ``draws`` (chain, draw, d), ties broken at random.

    Each parameter's chains are thinned by ``thin``, or by
    ``ceil(chains x draws / ess)`` when ``thin`` is None.  The rank r counts
    the kept draws below theta plus a uniform share of those equal to it, so
    under the null r is uniform on {0, ..., L}; ``u = (r + V) / (L + 1)``
    with V ~ U(0, 1) is then exactly uniform on (0, 1) whatever L is.
    """
    chains, n, d = draws.shape
    out = {k: np.zeros(d, dtype=int) for k in ("rank", "n_ranked", "thin")}
    out["u"] = np.zeros(d)
    for j in range(d):
        if thin is not None:
            t = thin
        else:
            e = float(ess[j])
            t = int(min(n, max(1, math.ceil(chains * n / e)))) if math.isfinite(e) and e > 0 else n
        kept = draws[:, ::t, j].ravel()
        below = int(np.sum(kept < theta[j]))
        ties = int(np.sum(kept == theta[j]))
        r = below + (int(rng.integers(0, ties + 1)) if ties else 0)
        out["rank"][j], out["n_ranked"][j], out["thin"][j] = r, kept.size, t
        out["u"][j] = (r + rng.uniform()) / (kept.size + 1)
    return out


def run_block(spec: SbcSpec, indices: Sequence[int]) -> dict[str, Any]:
    """Simulate and fit simulations ``indices``; runs on a Dask worker.

    The compiled model lives in the worker's :data:`compare.core.sampling.CACHE`,
    so only a worker's first block compiles.  A fit that raises, or gives
    non-finite draws, is recorded as failed (with its message), never dropped.

    Returns
    -------
    dict
        ``indices`` and one array per :data:`FIELDS` entry (first axis over
        ``indices``), plus ``errors`` ({index: message}).
    """

    from compare.core.runner import (
        convergence_checks,  # heavy: ArviZ, xarray and SciPy via the runner
    )
    from compare.core.sampling import (  # heavy: PyMC via the sampler
        CACHE,
        CompiledModel,
        posterior_array,
    )

    topic = spec.resolve()
    s = spec.settings
    run_settings = dataclasses.replace(DEFAULT, draws=s.draws, tune=s.tune, chains=s.chains)
    indices = [int(i) for i in indices]
    rows: list[dict[str, Any]] = []
    errors: dict[int, str] = {}
    for index in indices:
        row: dict[str, Any] = {"status": FAILED}
        try:
            theta, x, hyper = sbc_exact.simulate(
                topic, index=index, seed=s.seed, n_obs=s.n_obs, hyper=spec.hyper
            )
            row["theta"] = theta
            structure = topic.structure(x, hyper)
            key = (topic.name, tuple(sorted(structure.items())), topic.build_model)
            compiled = CACHE.get(
                key,
                lambda: topic.build_model(**structure),  # noqa: B023 (called by CACHE.get at once)
                topic.variables,
                **({} if topic.step is None else {"step": topic.step}),
            )
            data = topic.model_data(x=x, **hyper)
            seed = sbc_exact.sampler_seed(s.seed, index)
            start = time.perf_counter()
            if isinstance(compiled, CompiledModel):
                # cores=1: the worker process is the unit of parallelism.
                options = {**topic.sampler_options, "return_raw_trace": True, "cores": 1}
                trace = compiled.sample(data, run_settings, seed=seed, options=options)
                draws, divergences = _raw_draws(trace, topic.variables)
            else:
                tree = compiled.sample(
                    data, run_settings, seed=seed, options=dict(topic.sampler_options)
                )
                draws = posterior_array(tree.posterior, topic.variables)
                divergences = int(np.asarray(tree.sample_stats["diverging"]).sum())
            row["seconds"] = time.perf_counter() - start
            if draws.shape[-1] != theta.size:
                raise ValueError(
                    f"the PyMC model gives {draws.shape[-1]} values per draw, the "
                    f"simulator {theta.size}; set the structural hyperparameters "
                    "so that they match"
                )
            if not np.all(np.isfinite(draws)):
                raise ValueError("non-finite posterior draws")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, diag = convergence_checks(draws, divergences, run_settings)
            ess = np.minimum(diag["ess_bulk"], diag["ess_tail"])
            row.update(
                rank_of(
                    theta,
                    draws,
                    thin=s.thin,
                    rng=sbc_exact.rng(s.seed, index, sbc_exact.TIES),
                    ess=ess,
                )
            )
            row.update(
                status=OK,
                divergences=divergences,
                rhat=float(np.max(np.nan_to_num(diag["rhat"], nan=np.inf))),
                ess_bulk=float(np.min(np.nan_to_num(diag["ess_bulk"], nan=0.0))),
                ess_tail=float(np.min(np.nan_to_num(diag["ess_tail"], nan=0.0))),
            )
        except Exception as err:  # noqa: BLE001 - a failed fit is data: counted, reported
            errors[index] = f"{type(err).__name__}: {err}"[:300]
        rows.append(row)
    d = max((np.size(r["theta"]) for r in rows if "theta" in r), default=0)
    out: dict[str, Any] = {"indices": np.array(indices, dtype=int), "errors": errors, "d": d}
    for name, (dtype, per_param, fill) in FIELDS.items():
        shape = (len(rows), d) if per_param else (len(rows),)
        arr = np.full(shape, fill, dtype=dtype)
        for i, r in enumerate(rows):
            if name in r and (not per_param or np.size(r[name]) == d):
                arr[i] = r[name]
        out[name] = arr
    return out


# --- the zarr store -------------------------------------------------------------
class Store:
    """A run's zarr store: one array per :data:`FIELDS` entry plus ``done``.

    Chunks hold ``chunk`` consecutive simulations and a task computes one
    chunk, so each write replaces whole chunks (atomically, by zarr's local
    store); ``done`` is written after the data, so an interrupted write is
    redone on resume.
    """

    def __init__(self, path: Path, group: Any):
        self.path = path
        self.group = group

    @property
    def attrs(self) -> dict[str, Any]:
        return dict(self.group.attrs)

    @property
    def sims(self) -> int:
        return int(self.group["done"].shape[0])

    @property
    def chunk(self) -> int:
        return int(self.group.attrs["chunk"])

    @classmethod
    def create(
        cls, path: Path, *, spec: SbcSpec, sims: int, chunk: int, parameters: Sequence[str]
    ) -> Store:
        import zarr  # heavy: zarr only when a study is stored

        if path.exists():
            shutil.rmtree(path)
        group = zarr.open_group(str(path), mode="w")
        group.attrs.update(
            {
                "format": FORMAT,
                "fingerprint": spec.fingerprint(),
                "parameters": list(parameters),
                "chunk": int(chunk),
            }
        )
        d = len(parameters)
        group.create_array("done", shape=(sims,), chunks=(chunk,), dtype="bool", fill_value=False)
        for name, (dtype, per_param, fill) in FIELDS.items():
            shape, chunks = ((sims, d), (chunk, d)) if per_param else ((sims,), (chunk,))
            group.create_array(name, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill)
        return cls(path, group)

    @classmethod
    def open(cls, path: Path) -> Store:
        import zarr  # heavy: zarr only when a study is stored

        try:
            group = zarr.open_group(str(path), mode="r+")
            if group.attrs.get("format") != FORMAT or "done" not in group:
                raise ValueError("not an SBC store")
        except Exception as err:  # noqa: BLE001 - any unreadable store is bad input
            raise InputError(
                f"--out {str(path.parent)!r}: {path.name} is not an SBC store "
                f"this version can resume ({type(err).__name__}); use another "
                "--out or drop --resume to start afresh"
            ) from None
        return cls(path, group)

    def grow(self, sims: int) -> None:
        for name in ("done", *FIELDS):
            arr = self.group[name]
            arr.resize((sims, *arr.shape[1:]))

    def pending_blocks(self) -> list[np.ndarray]:
        """Indices not yet done, grouped by chunk (one task each)."""
        done = np.asarray(self.group["done"][:], dtype=bool)
        blocks = []
        for start in range(0, done.size, self.chunk):
            idx = np.flatnonzero(~done[start : start + self.chunk]) + start
            if idx.size:
                blocks.append(idx)
        return blocks

    def write(self, block: dict[str, Any]) -> int:
        """Write a finished block; returns how many simulations were new."""
        idx = np.asarray(block["indices"], dtype=int)
        done = np.asarray(self.group["done"][idx.min() : idx.max() + 1], dtype=bool)
        new = ~done[idx - idx.min()]
        if not new.any():
            return 0
        idx = idx[new]
        lo, hi = int(idx.min()), int(idx.max()) + 1
        contiguous = hi - lo == idx.size
        for name in FIELDS:
            values = np.asarray(block[name])[new]
            if values.ndim == 2 and values.shape[1] != self.group[name].shape[1]:
                values = np.full(
                    (values.shape[0], self.group[name].shape[1]),
                    FIELDS[name][2],
                    dtype=FIELDS[name][0],
                )
            if contiguous:
                self.group[name][lo:hi] = values
            else:
                current = np.asarray(self.group[name][lo:hi])
                current[idx - lo] = values
                self.group[name][lo:hi] = current
        current = np.asarray(self.group["done"][lo:hi], dtype=bool)
        current[idx - lo] = True
        self.group["done"][lo:hi] = current
        errors = dict(self.group.attrs.get("errors", {}))
        for i, msg in block.get("errors", {}).items():
            if int(i) in set(idx.tolist()) and len(errors) < 20:
                errors[str(i)] = msg
        if block.get("errors"):
            self.group.attrs["errors"] = errors
        return int(idx.size)

    def read(self, sims: int | None = None) -> dict[str, np.ndarray]:
        n = self.sims if sims is None else sims
        out = {name: np.asarray(self.group[name][:n]) for name in ("done", *FIELDS)}
        return out


def check_resume(path: Path, spec: SbcSpec, sims: int) -> None:
    """Raise InputError unless the store at ``path`` belongs to this topic and settings."""
    store = Store.open(path)
    stored = store.attrs.get("fingerprint", {})
    wanted = spec.fingerprint()
    if stored != wanted:
        diff = [k for k in sorted(set(stored) | set(wanted)) if stored.get(k) != wanted.get(k)]
        shown = ", ".join(f"{k}={stored.get(k)!r} (asked {wanted.get(k)!r})" for k in diff)
        raise InputError(
            f"--out {str(path.parent)!r} holds an SBC run with other settings: "
            f"{shown}; resume with the same settings, use another --out, or "
            "drop --resume to start afresh"
        )
    if sims < store.sims:
        raise InputError(
            f"--sims {sims}: the store at {str(path)!r} already holds "
            f"{store.sims} simulations; give --sims >= {store.sims}"
        )


# --- uniformity -------------------------------------------------------------------
def _grid(n: int) -> np.ndarray:
    """ECDF evaluation points k/K, k = 1..K-1, with K = min(n, 256) bins."""
    k = int(min(n, 256))
    return np.arange(1, k) / k


def _tail_statistic(counts: np.ndarray, n: int, z: np.ndarray) -> np.ndarray:
    """Smallest two-sided binomial tail probability of ECDF counts (..., K-1) at z.

    Many rows of counts (the Monte Carlo null's 4000) read the binomial CDF from a
    table over every count 0..n at each grid point, the same ``bdtr`` values
    computed once each: (n + 1)(K - 1) evaluations instead of 2 per count (4000
    rows: 0.70 -> 0.035 s for n = 300, 1.13 -> 0.08 s for n = 1000).
    """
    counts = np.asarray(counts)
    if counts.size > (n + 1) * z.size:
        cdf = special.bdtr(np.arange(n + 1)[None, :], n, z[:, None])  # (K-1, n+1)
        # P(count >= c) = 1 - P(count <= c - 1), and 1 at c = 0.
        at_least = np.ones_like(cdf)
        at_least[:, 1:] = 1.0 - cdf[:, :-1]
        column = np.arange(z.size)
        lower, upper = cdf[column, counts], at_least[column, counts]
    else:
        lower = special.bdtr(counts, n, z)
        # bdtr is NaN below 0, where P(count >= c) is 1.
        upper = np.where(counts > 0, 1.0 - special.bdtr(np.maximum(counts - 1, 0), n, z), 1.0)
    return np.minimum(lower.min(axis=-1), upper.min(axis=-1))


@lru_cache(maxsize=32)
def null_statistics(n: int, draws: int, seed: int = 20261130) -> np.ndarray:
    """Monte Carlo draws of :func:`_tail_statistic` for n uniform values.

    Counts in K equal bins of n uniforms are Multinomial(n, 1/K), so the null
    is drawn at O(K) per draw whatever n is.
    """
    z = _grid(n)
    k = z.size + 1
    counts = np.random.default_rng(seed).multinomial(n, np.full(k, 1.0 / k), size=draws)
    return _tail_statistic(np.cumsum(counts, axis=1)[:, :-1], n, z)


@dataclass(frozen=True)
class Uniformity:
    """One uniformity test of values in (0, 1).

    Two statistics, combined by Bonferroni (``p = min(1, 2 min(p_ecdf,
    p_dispersion))``):
    * ``ecdf``: the smallest two-sided binomial tail probability of the ECDF
      on a grid (Säilynoja et al. 2022), p-value by Monte Carlo; it sees
      shifts and any local excess, and it is the band drawn in the figure;
    * ``dispersion``: ``sum Phi^-1(u)^2``, exactly chi-square with n degrees
      of freedom under uniformity, two-sided.  A posterior too wide or too
      narrow on average gives a hump- or U-shaped rank histogram (Talts et
      al. 2018, sec. 4.2), which the ECDF test sees late: for the planted
      prior variance x2 of ``tests/compare/test_sbc.py`` its power at 300
      simulations and alpha 1e-4 was 0, the combination's 0.9995, with no
      false alarm under the right model (2000 replications each with exact
      posteriors, ``benchmarks/sbc.py``).

    Attributes
    ----------
    side : str
        ``mcmc`` or ``exact``.
    parameter : str
    n : int
    statistic : float
        The ECDF statistic.
    p_ecdf, p_dispersion, p : float
    p_holm : float
        ``p`` Holm-adjusted over every test of the run.
    """

    side: str
    parameter: str
    n: int
    statistic: float
    p_ecdf: float
    p_dispersion: float
    p: float
    p_holm: float = float("nan")


def uniformity_test(u: np.ndarray, *, side: str, parameter: str, null_draws: int) -> Uniformity:
    """Test ``u`` (n,) against Uniform(0, 1); see :class:`Uniformity`."""
    u = np.asarray(u, dtype=float)
    u = u[np.isfinite(u)]
    n = int(u.size)
    if n < 2:
        nan = float("nan")
        return Uniformity(side, parameter, n, nan, nan, nan, nan)
    z = _grid(n)
    counts = np.searchsorted(np.sort(u), z, side="right")
    stat = float(_tail_statistic(counts, n, z))
    null = null_statistics(n, null_draws)
    p_ecdf = float((1.0 + np.sum(null <= stat)) / (1.0 + null.size))
    squares = float(np.sum(special.ndtri(np.clip(u, 1e-300, 1 - 1e-16)) ** 2))
    p_disp = float(min(1.0, 2.0 * min(stats.chi2.cdf(squares, n), stats.chi2.sf(squares, n))))
    return Uniformity(
        side, parameter, n, stat, p_ecdf, p_disp, float(min(1.0, 2.0 * min(p_ecdf, p_disp)))
    )


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values (NaN stays NaN and is not counted)."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok])]
    m = order.size
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def simultaneous_band(
    n: int, level: float, null_draws: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(z, lower, upper): the ECDF band at simultaneous ``level`` for n uniforms.

    The pointwise level whose band holds the whole ECDF with probability
    ``level`` comes from the same null draws as the p-value (arviz-stats'
    simulation method), and the pointwise band from
    ``arviz_stats.ecdf_utils.get_pointwise_confidence_band``.
    """
    from arviz_stats.ecdf_utils import (
        get_pointwise_confidence_band,  # heavy: ArviZ (and xarray) only when draws are summarised
    )

    z = _grid(n)
    threshold = float(np.quantile(null_statistics(n, null_draws), 1.0 - level))
    lower, upper = get_pointwise_confidence_band(1.0 - 2.0 * threshold, n, z)
    return z, lower, upper


def histogram_bins(n: int) -> int:
    """Rank-histogram bins: about 20 expected per bin, between 2 and 20 (Talts et al.)."""
    return int(min(20, max(2, n // 20)))


# --- the result -------------------------------------------------------------------
@dataclass(frozen=True)
class SbcCounts:
    """How the simulations of a study ended (the document's ``sims`` section)."""

    requested: int
    done: int
    fitted: int
    failed: int
    unconverged: int

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SbcConvergence:
    """The fitted simulations' convergence, worst and median (the ``convergence``
    section); None where no simulation was fitted."""

    rhat_max: float
    worst_rhat: float | None
    min_ess_bulk: float | None
    min_ess_tail: float | None
    median_ess_bulk: float | None
    divergent_fits: int
    median_thin: float | None
    median_ranked: float | None
    median_fit_seconds: float | None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SbcResult:
    """What an SBC run found; :func:`to_document` gives its JSON.

    ``u`` holds the MCMC side's normalised ranks of the fitted simulations
    (array of shape (ok, d)); ``exact`` the exact side's values.
    """

    topic: str
    parameters: tuple[str, ...]
    verdict: str
    decided_by: str
    spec: SbcSpec
    sims: int
    counts: SbcCounts
    tests: tuple[Uniformity, ...]
    u: np.ndarray = field(repr=False)
    exact: sbc_exact.ExactSide | None = field(default=None, repr=False)
    convergence: SbcConvergence | None = None
    # Throughput keeps a mapping: its keys depend on the mode (exact-only, fits,
    # a resumed study analysed again) and a resumed study reads it back from JSON.
    throughput: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    note: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]


def analyse(
    spec: SbcSpec,
    arrays: Mapping[str, np.ndarray],
    parameters: Sequence[str],
    *,
    exact: sbc_exact.ExactSide | None = None,
    throughput: Mapping[str, Any] | None = None,
    errors: Mapping[str, str] | None = None,
    exact_only: bool = False,
) -> SbcResult:
    """Tests, counts and verdict from the stored per-simulation arrays.

    With ``exact_only`` (no fits; ``arrays`` empty) the verdict rests on the
    exact side's tests alone.
    """
    s = spec.settings
    done = np.asarray(arrays["done"], dtype=bool)
    status = np.asarray(arrays["status"])
    ok = done & (status == OK)
    failed = done & (status != OK)
    unconverged = ok & ((arrays["rhat"] >= s.rhat_max) | (arrays["divergences"] > 0))
    u = np.asarray(arrays["u"], dtype=float)[ok]
    tests = (
        []
        if exact_only
        else [
            uniformity_test(u[:, j], side="mcmc", parameter=p, null_draws=s.null_draws)
            for j, p in enumerate(parameters)
        ]
    )
    if exact is not None and exact.available:
        tests += [
            uniformity_test(exact.u[:, j], side="exact", parameter=p, null_draws=s.null_draws)
            for j, p in enumerate(exact.names)
        ]
    adjusted = holm([t.p for t in tests])
    tests = [dataclasses.replace(t, p_holm=float(a)) for t, a in zip(tests, adjusted)]
    n_done = int(done.sum())
    requested = int(exact.indices.size) if exact_only and exact is not None else int(done.size)
    counts = SbcCounts(
        requested=requested,
        done=requested if exact_only else n_done,
        fitted=int(ok.sum()),
        failed=int(failed.sum()),
        unconverged=int(unconverged.sum()),
    )
    bad_share = (counts.failed + counts.unconverged) / n_done if n_done else 1.0
    note = ""
    if exact_only:
        bad_share = 0.0
    if not exact_only and counts.fitted < 2:
        verdict, decided_by = INCONCLUSIVE, "fits"
        note = f"only {counts.fitted} simulation(s) fitted"
    elif bad_share > s.max_bad_share:
        verdict, decided_by = INCONCLUSIVE, "convergence"
        note = (
            f"{counts.failed} failed and {counts.unconverged} unconverged of "
            f"{n_done} fits ({bad_share:.1%} > {s.max_bad_share:.0%})"
        )
    else:
        flagged = [t for t in tests if np.isfinite(t.p_holm) and t.p_holm <= s.alpha]
        if flagged:
            worst = min(flagged, key=lambda t: t.p_holm)
            verdict, decided_by = FAIL, f"uniformity:{worst.side}"
            note = ", ".join(f"{t.side} {t.parameter} (Holm p {t.p_holm:.2g})" for t in flagged)
        else:
            verdict, decided_by = PASS, "uniformity"
    fitted = ok
    convergence = SbcConvergence(
        rhat_max=s.rhat_max,
        worst_rhat=_finite_max(arrays["rhat"][fitted]),
        min_ess_bulk=_finite_min(arrays["ess_bulk"][fitted]),
        min_ess_tail=_finite_min(arrays["ess_tail"][fitted]),
        median_ess_bulk=_finite_median(arrays["ess_bulk"][fitted]),
        divergent_fits=int(np.sum(arrays["divergences"][fitted] > 0)),
        median_thin=_finite_median(np.asarray(arrays["thin"])[fitted].ravel()),
        median_ranked=_finite_median(np.asarray(arrays["n_ranked"])[fitted].ravel()),
        median_fit_seconds=_finite_median(arrays["seconds"][fitted]),
    )
    return SbcResult(
        topic=spec.topic,
        parameters=tuple(parameters),
        verdict=verdict,
        decided_by=decided_by,
        spec=spec,
        sims=int(done.size),
        counts=counts,
        tests=tuple(tests),
        u=u,
        exact=exact,
        convergence=convergence,
        throughput=dict(throughput or {}),
        errors=dict(errors or {}),
        note=note,
    )


def _finite_max(a) -> float | None:
    a = np.asarray(a, dtype=float)
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else None


def _finite_min(a) -> float | None:
    a = np.asarray(a, dtype=float)
    a = a[np.isfinite(a)]
    return float(a.min()) if a.size else None


def _finite_median(a) -> float | None:
    a = np.asarray(a, dtype=float)
    a = a[np.isfinite(a)]
    return float(np.median(a)) if a.size else None


def histograms(u: np.ndarray, bins: int) -> np.ndarray:
    """Counts of ``u`` (n, d) in ``bins`` equal bins per column: (d, bins)."""
    u = np.asarray(u, dtype=float)
    return (
        np.stack(
            [
                np.histogram(u[np.isfinite(u[:, j]), j], bins=bins, range=(0, 1))[0]
                for j in range(u.shape[1])
            ]
        )
        if u.size
        else np.zeros((0, bins), int)
    )


def binomial_band(n: int, bins: int, level: float = 0.99) -> tuple[float, float]:
    """Pointwise ``level`` band of one bin's count, Binomial(n, 1/bins)."""
    lo, hi = stats.binom.interval(level, n, 1.0 / bins)
    return float(lo), float(hi)


def to_document(result: SbcResult) -> dict[str, Any]:
    """The run's JSON document (``sbc.json``)."""

    s = result.spec.settings
    n = result.counts.fitted
    bins = histogram_bins(n)
    exact = result.exact
    doc = {
        "topic": result.topic,
        "verdict": result.verdict,
        "decided_by": result.decided_by,
        "note": result.note,
        "parameters": list(result.parameters),
        "sims": result.counts.as_dict(),
        "alpha": s.alpha,
        "settings": {**dataclasses.asdict(s), "bug": result.spec.bug},
        "hyperparameters": dict(result.spec.hyper),
        "tests": [
            dataclasses.asdict(t) | {"passed": not (np.isfinite(t.p_holm) and t.p_holm <= s.alpha)}
            for t in result.tests
        ],
        "histogram": {
            "bins": bins,
            "counts": histograms(result.u, bins),
            "band99": binomial_band(n, bins) if n else None,
        },
        "convergence": None if result.convergence is None else result.convergence.as_dict(),
        "throughput": result.throughput,
        "errors": result.errors,
        "exact": None
        if exact is None
        else {
            "available": exact.available,
            "reason": exact.reason,
            "method": exact.method,
            "names": list(exact.names),
            "sims": int(exact.indices.size),
            "seconds": exact.seconds,
            "sims_per_second": exact.sims_per_second if exact.available else None,
        },
        "versions": versions(),
    }
    return _clean(doc)


# --- orchestration -------------------------------------------------------------
def parameters_of(spec: SbcSpec) -> tuple[str, ...]:
    """Parameter names of the model, from simulation 0's exact answer or PyMC model."""
    topic = spec.resolve()
    s = spec.settings
    theta, x, hyper = sbc_exact.simulate(
        topic, index=0, seed=s.seed, n_obs=s.n_obs, hyper=spec.hyper
    )
    names: tuple[str, ...] | None = None
    if sbc_exact.closed_form(topic):
        try:
            names = tuple(sbc_exact.posterior_function(topic)(x, hyper).parameters)
        except Exception:  # noqa: BLE001 - fall back to generic names below
            names = None
    if names is None or len(names) != theta.size:
        if names is not None:
            raise InputError(
                f"{topic.name}: the simulator draws {theta.size} parameters but "
                f"the model has {len(names)} ({', '.join(names)}); set the "
                "structural hyperparameters (e.g. --set degree=...) so that "
                "they match"
            )
        names = tuple(f"theta[{j}]" for j in range(theta.size))
    return names


def default_chunk(sims: int, workers: int) -> int:
    """Simulations per task: ~8 tasks per worker, between 4 and 25 simulations.

    Big enough to amortise scheduling (~ms per task), small enough that the
    progress bar moves and an interrupt loses little.
    """
    return int(min(25, max(4, math.ceil(sims / (8 * max(1, workers))))))


def run_sbc(
    *,
    spec: SbcSpec,
    sims: int,
    out: str | Path,
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    client: Any = None,
    progress: Callable[[int, int, float], None] | None = None,
    chunk: int | None = None,
    figures: bool = True,
    exact_only: bool = False,
) -> SbcResult:
    """Run (or resume) an SBC study and write its store, JSON, figures and page.

    Parameters
    ----------
    spec : SbcSpec
    sims : int
        Simulations in the study (indices 0..sims-1).
    out : path
        Folder for ``sbc.zarr``, ``sbc.json``, ``figures/`` and ``index.html``.
    workers : int, optional
        Worker processes of the LocalCluster (default: usable cores).
    scheduler : str, optional
        ``tcp://HOST:PORT`` of a running Dask scheduler instead of a LocalCluster.
    resume : bool
        Keep the finished simulations of the store in ``out`` (which must
        belong to the same topic and settings) and run only the others.
    client : distributed.Client, optional
        Use this client (tests share one cluster); ``workers``/``scheduler``
        are then ignored.
    progress : callable, optional
        ``progress(done, total, sims_per_second)`` after every finished block.
    chunk : int, optional
        Simulations per task and zarr chunk of a new store (default
        :func:`default_chunk`).
    figures : bool
        Draw the figures and the page.
    exact_only : bool
        Run the exact side alone (no cluster, no fits, no store): a check of
        the analytic code at thousands of simulations per second.

    Raises
    ------
    InputError
        sims < 1, both or neither of ``workers``/``scheduler`` wrong, an
        unreachable scheduler, or a store of other settings with ``resume``;
        nothing is written then.
    """

    t0 = time.perf_counter()
    if not isinstance(sims, (int, np.integer)) or isinstance(sims, bool) or sims < 1:
        raise InputError(f"--sims must be a whole number >= 1, got {sims!r}; e.g. --sims 1000")
    if workers is not None and scheduler is not None:
        raise InputError(
            "give --workers N (a local cluster) or --scheduler tcp://HOST:PORT "
            "(an existing one), not both"
        )
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be >= 1, got {workers}; e.g. --workers 2")
    out = Path(out)
    store_path = out / STORE
    parameters = parameters_of(spec)  # validates the topic, hyper and structure
    if exact_only:
        if resume:
            raise InputError(
                "--exact-only fits nothing, so there is nothing to resume; drop --resume"
            )
        exact = sbc_exact.exact_side(
            spec.resolve(),
            indices=np.arange(int(sims)),
            seed=spec.settings.seed,
            n_obs=spec.settings.n_obs,
            hyper=spec.hyper,
        )
        if not exact.available:
            raise InputError(f"{spec.topic}: no exact side ({exact.reason}); drop --exact-only")
        empty = {
            name: np.full((0, len(parameters)) if per_param else (0,), fill, dtype=dtype)
            for name, (dtype, per_param, fill) in FIELDS.items()
        }
        empty["done"] = np.zeros(0, dtype=bool)
        throughput = {
            "workers": 0,
            "exact_only": True,
            "sims_this_run": int(sims),
            "resumed_from": 0,
            "seconds": exact.seconds,
            "total_seconds": time.perf_counter() - t0,
            "sims_per_second": exact.sims_per_second,
        }
        if progress:
            progress(int(sims), int(sims), exact.sims_per_second)
        result = analyse(
            spec, empty, parameters, exact=exact, throughput=throughput, exact_only=True
        )
        save(result, out, figures=figures)
        return result
    resuming = resume and store_path.exists()
    pending = True
    if resuming:
        check_resume(store_path, spec, int(sims))
        stored = Store.open(store_path)
        pending = sims > stored.sims or bool(stored.pending_blocks())
    workers = workers or max(1, len(os.sched_getaffinity(0)))
    if not pending:  # a finished store: analyse again, no cluster needed
        store = stored
        previous = _previous_throughput(out)
        n_workers, already, done_now, seconds = previous.get("workers"), int(sims), 0, 0.0
        first_round, warm = None, 0
    else:
        own = client is None
        cluster = None
        if own:
            client, cluster = connect(workers=workers, scheduler=scheduler)
        try:
            n_workers = len(client.scheduler_info().get("workers", {})) or workers
            if resuming:
                store = Store.open(store_path)
                if sims > store.sims:
                    store.grow(int(sims))
            else:
                store = Store.create(
                    store_path,
                    spec=spec,
                    sims=int(sims),
                    chunk=chunk or default_chunk(int(sims), n_workers),
                    parameters=parameters,
                )
            blocks = store.pending_blocks()
            already = int(sims) - sum(b.size for b in blocks)
            started = time.perf_counter()
            done_now = 0
            if progress:
                progress(already, int(sims), float("nan"))
            first_round: float | None = None  # when every worker has finished a block
            warm = 0
            futures = [
                client.submit(
                    run_block,
                    spec,
                    block.tolist(),
                    pure=False,
                    key=f"sbc-{spec.topic}-{int(block[0])}-{os.getpid()}-{t0}",
                )
                for block in blocks
            ]
            try:
                from distributed import as_completed  # heavy: Dask only when a cluster runs

                for future in as_completed(futures):
                    new = store.write(future.result())
                    done_now += new
                    future.release()
                    if first_round is not None:
                        warm += new
                    elif done_now >= min(
                        n_workers, len(blocks)
                    ) * store.chunk or already + done_now >= int(sims):
                        first_round = time.perf_counter()
                    if progress:
                        rate = done_now / max(time.perf_counter() - started, 1e-9)
                        progress(already + done_now, int(sims), rate)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
            seconds = time.perf_counter() - started
        finally:
            if own:
                client.close()
                if cluster is not None:
                    cluster.close()
    arrays = store.read(int(sims))
    exact = sbc_exact.exact_side(
        spec.resolve(),
        indices=np.arange(int(sims)),
        seed=spec.settings.seed,
        n_obs=spec.settings.n_obs,
        hyper=spec.hyper,
    )
    if pending:
        throughput = {
            "workers": n_workers,
            "scheduler": scheduler,
            "sims_this_run": done_now,
            "resumed_from": already,
            "seconds": seconds,
            "total_seconds": time.perf_counter() - t0,
            "sims_per_second": done_now / seconds if seconds > 0 else None,
            # after each worker's first block (which compiles the model)
            "warm_sims_per_second": (
                warm / (started + seconds - first_round)
                if first_round is not None and warm and started + seconds > first_round
                else None
            ),
        }
    else:
        throughput = {**previous, "reanalysed_seconds": time.perf_counter() - t0}
    result = analyse(
        spec,
        arrays,
        parameters,
        exact=exact,
        throughput=throughput,
        errors=store.attrs.get("errors", {}),
    )
    save(result, out, figures=figures)
    return result


def _previous_throughput(out: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((out / DOCUMENT).read_text()).get("throughput") or {})
    except (OSError, ValueError):
        return {}


def save(result: SbcResult, out: str | Path, *, figures: bool = True) -> Path:
    """Write ``sbc.json`` (and the figures and page) under ``out``; return the JSON path."""

    out = Path(out)
    doc = to_document(result)
    if figures:
        doc["figures"] = draw_figures(result, out / FIGURE_DIR)
    path = out / DOCUMENT
    atomic_write(path, dumps(doc))
    if figures:
        write_page(doc, out)
    return path


# --- figures and the page -----------------------------------------------------------
def _panels(d: int):
    import matplotlib.pyplot as plt  # heavy: matplotlib only when a figure is drawn

    cols = min(d, 4)
    rows = math.ceil(d / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(max(4.5, 3.2 * cols), 2.6 * rows), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[d:]:
        ax.set_visible(False)
    return fig, axes.flat


#: Parameters shown in the figures (the tables list all).
MAX_SHOWN = 8


def draw_figures(result: SbcResult, folder: Path) -> dict[str, str]:
    """Rank histograms and ECDF differences as PNGs in ``folder``; returns {kind: file}."""
    with drawing() as plt:
        folder.mkdir(parents=True, exist_ok=True)
        s = result.spec.settings
        written = {}
        d = min(len(result.parameters), MAX_SHOWN)
        n = result.u.shape[0]
        if n >= 2 and d:
            bins = histogram_bins(n)
            lo, hi = binomial_band(n, bins)
            fig, axes = _panels(d)
            counts = histograms(result.u, bins)
            for j, ax in zip(range(d), axes):
                ax.axhspan(lo, hi, color="#cccccc", alpha=0.6, lw=0)
                ax.axhline(n / bins, color="#888888", lw=0.8)
                ax.bar(
                    np.arange(bins) / bins,
                    counts[j],
                    width=1 / bins,
                    align="edge",
                    color="#1f77b4",
                    edgecolor="white",
                    lw=0.5,
                )
                ax.set_title(result.parameters[j], fontsize=9)
                ax.set_xlabel("normalised rank", fontsize=8)
                ax.tick_params(labelsize=7)
            fig.suptitle(f"rank histograms of {n} fits", fontsize=9)
            written["rank"] = _savefig(fig, folder / "rank.png")
            plt.close(fig)
        panels = (
            [("mcmc", result.parameters[j], result.u[:, j]) for j in range(d)] if n >= 2 else []
        )
        if result.exact is not None and result.exact.available:
            panels += [
                ("exact", name, result.exact.u[:, j])
                for j, name in enumerate(result.exact.names[:MAX_SHOWN])
            ]
        if panels:
            # Holm's first step rejects at p <= alpha/m, and p = 2 min(p_ecdf, p_dispersion):
            # the ECDF leaves this band exactly when its half of the test rejects.
            m = sum(1 for t in result.tests if np.isfinite(t.p))
            level = 1.0 - s.alpha / (2 * max(m, 1))
            fig, axes = _panels(len(panels))
            for (side, name, u), ax in zip(panels, axes):
                u = u[np.isfinite(u)]
                z, lower, upper = simultaneous_band(u.size, level, s.null_draws)
                ecdf = np.searchsorted(np.sort(u), z, side="right") / u.size
                ax.fill_between(
                    z, lower - z, upper - z, color="#cccccc", alpha=0.6, lw=0, step="mid"
                )
                ax.plot(z, ecdf - z, color="#1f77b4" if side == "mcmc" else "#2ca02c", lw=1.2)
                ax.axhline(0, color="#888888", lw=0.8)
                ax.set_title(f"{name} ({side})", fontsize=9)
                ax.set_xlabel("u", fontsize=8)
                ax.tick_params(labelsize=7)
            fig.suptitle(f"ECDF - uniform CDF, simultaneous {level:.4g} band", fontsize=9)
            written["ecdf"] = _savefig(fig, folder / "ecdf.png")
            plt.close(fig)
    return written


def _savefig(fig, path: Path) -> str:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=80)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return f"{FIGURE_DIR}/{path.name}"


def page_context(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """What ``templates/sbc.html`` shows, figure paths prefixed by ``prefix``."""

    figures = {k: f"{prefix}{v}" for k, v in (doc.get("figures") or {}).items()}
    tp = doc.get("throughput") or {}
    conv = doc.get("convergence") or {}
    exact = doc.get("exact") or {}
    return {
        "sbc": doc,
        "sbc_figures": figures,
        "sbc_tests": [
            {
                "side": t["side"],
                "parameter": t["parameter"],
                "n": t["n"],
                "p": fmt(t["p"], ".3g"),
                "p_holm": fmt(t["p_holm"], ".3g"),
                "passed": t["passed"],
            }
            for t in doc["tests"]
        ],
        "sbc_rows": [
            (
                "simulations",
                f"{doc['sims']['done']} of {doc['sims']['requested']} done, "
                f"{doc['sims']['fitted']} fitted",
            ),
            ("failed fits", str(doc["sims"]["failed"])),
            (
                "unconverged fits",
                f"{doc['sims']['unconverged']} (R-hat >= {conv.get('rhat_max')} or a divergence)",
            ),
            ("worst R-hat", fmt(conv.get("worst_rhat"), ".4f")),
            ("median bulk ESS", fmt(conv.get("median_ess_bulk"), ".0f")),
            (
                "median thinning, draws ranked",
                f"{fmt(conv.get('median_thin'), '.0f')}, {fmt(conv.get('median_ranked'), '.0f')}",
            ),
            (
                "throughput",
                f"{fmt(tp.get('sims_per_second'), '.3g')} simulations/s on "
                f"{tp.get('workers')} workers ({fmt(tp.get('seconds'), '.1f')} s; "
                f"{fmt(tp.get('total_seconds'), '.1f')} s with start-up)",
            ),
            (
                "after the compile",
                f"{fmt(tp.get('warm_sims_per_second'), '.3g')} "
                "simulations/s (each worker's first block compiles)",
            ),
            ("median fit", f"{fmt(conv.get('median_fit_seconds'), '.3f')} s"),
            (
                "exact side",
                (
                    f"{exact.get('method')}, {exact.get('sims')} simulations at "
                    f"{fmt(exact.get('sims_per_second'), '.0f')}/s"
                )
                if exact.get("available")
                else (exact.get("reason") or "not run"),
            ),
        ],
    }


def write_page(doc: Mapping[str, Any], out: Path) -> Path:
    """A standalone ``index.html`` for the SBC folder (the topic page links here)."""

    path = out / PAGE
    atomic_write(path, _env().get_template("sbc_page.html").render(**page_context(doc)))
    return path


def run_page_section(run_dir: str | Path) -> dict[str, Any]:
    """Template context for a topic page: the SBC block when ``run_dir/sbc`` has a run."""
    path = Path(run_dir) / RUN_SUBDIR / DOCUMENT
    if not path.is_file():
        return {"sbc": None}
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {"sbc": None}
    return page_context(doc, prefix=f"{RUN_SUBDIR}/")
