"""The run document (JSON), saved draws and the summary table, written atomically.

The JSON keys named in the foundation issue are a public contract; others
are added freely, never renamed.

A run folder is always one run
------------------------------
A saved run is a *pair*, ``draws.nc`` and ``result.json``, and a reader must
never see the draws of one run beside the document of another (issue 15: a
``kill -9`` between two separately atomic writes did exactly that).  Two
designs were weighed:

* *Swap the whole folder* (write both into a sibling directory, rename it into
  place).  Rejected: a run folder is not only the pair.  It also holds the
  report page and its ``figures/``, ``sensitivity.json`` and ``sbc/``, and
  ``--out`` may name any folder of the user's (even ``.``); replacing the
  folder would drop or have to copy all of that, and the rename of a
  non-empty directory needs the old one moved aside first, a window in which
  the folder does not exist at all.
* *A journal of the pair inside the folder* (chosen).  :func:`save_run`

  1. takes an exclusive ``flock`` on the folder (two writers never interleave)
     and finishes or clears what an earlier, killed writer left
     (:func:`recover_run`): a committed journal is rolled forward; stale
     staging folders and the ``.draws.nc.*.tmp`` files of older versions
     (30 MB each) are removed;
  2. checks the free space for the draws it is about to write
     (:func:`check_room`), then writes ``draws.nc`` and ``result.json`` into a
     fresh staging folder ``.run-staging-*`` and flushes them to disk; the
     document records the draws' SHA-256 and size under ``files``;
  3. **commits** by renaming the staging folder to ``.run-commit`` (one
     atomic ``rename(2)``);
  4. rolls forward: ``os.replace`` of ``draws.nc``, then of ``result.json``,
     into the folder, then removes ``.run-commit``.

  Every intermediate state reads as exactly one run.  Before step 3 the old
  pair is untouched (the staging folder is ignored by readers and removed by
  the next writer).  From step 3 on the new run is the committed one: any
  reader or writer first calls :func:`recover_run`, which repeats the
  idempotent step 4, so a kill between the two replacements is completed,
  not seen.  The SHA-256 in ``result.json`` is the second line of defence,
  for pairs not made by this protocol (older versions, files copied by hand,
  a damaged file): :func:`load_run` refuses a pair whose draws do not match
  and the report and summary skip it with a warning naming the file.

A test hook makes the crash windows reachable from a test:
``BAYES_COMPARE_TEST_PAUSE_AT=<point>`` (one of :data:`PAUSE_POINTS`) stops
the writing process with ``SIGSTOP`` at that point, so a test can ``kill -9``
it there, or resume it and kill it a random moment later
(``tests/compare/test_run_folder.py``).  It does nothing when unset.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import math
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from compare.accel.lazy_dask import without_distributed_probe
from compare.core.checks import CheckKind
from compare.core.files import (
    DRAWS_FILE,
    NETCDF_ENGINE,
    RESULT_FILE,
    dumps,
    umask_mode,
    versions,
)
from compare.core.files import clean as _clean
from compare.core.registry import InputError

if TYPE_CHECKING:
    from compare.core.runner import RunResult


def predictive_summary(predictive: Any) -> dict[str, Any]:
    """Mean and variance of the posterior predictive where they exist."""
    try:
        mean = np.asarray(predictive.mean(), dtype=float)
        var = predictive.var() if hasattr(predictive, "var") else None
    except (TypeError, ValueError):
        return {"mean": None, "var": None}
    return {"mean": mean.item() if mean.size == 1 else mean, "var": var}


def describe_marginal(marginal: Any) -> dict[str, Any] | None:
    """A scipy frozen distribution as {"family", "args", "kwds"} (None if absent)."""
    if marginal is None:
        return None
    dist = getattr(marginal, "dist", None)
    if dist is None:
        return {"family": type(marginal).__name__, "args": [], "kwds": {}}
    return {
        "family": getattr(dist, "name", type(dist).__name__),
        "args": [np.asarray(a).tolist() for a in marginal.args],
        "kwds": {k: np.asarray(v).tolist() for k, v in marginal.kwds.items()},
    }


def to_document(result: RunResult) -> dict[str, Any]:
    """The public JSON document of one run (vectors in the order of ``parameters``)."""
    exact = result.exact
    post = exact.posterior
    mcmc = result.mcmc
    agreement = result.agreement
    doc = {
        "topic": result.topic,
        "verdict": result.verdict,
        "decided_by": result.decided_by,
        # Every failed check but the deciding one, the strongest failed gate first.
        "also_failed": list(result.also_failed),
        "parameters": list(result.parameters),
        "exact": {
            "mean": post.mean,
            "cov": post.cov,
            "sd": np.sqrt(np.diag(post.cov)),
            "map": post.mode,
            "map_interior": post.mode_interior,
            "mle": exact.mle,
            "marginals": [
                describe_marginal(post.marginal(i)) for i in range(len(result.parameters))
            ],
            "log_evidence": exact.log_evidence,
            "quantiles": {
                f"q{round(p * 100):02d}": [
                    None if post.marginal(i) is None else float(post.marginal(i).ppf(p))
                    for i in range(len(result.parameters))
                ]
                for p in (0.05, 0.5, 0.95)
            },
            "predictive": predictive_summary(exact.predictive),
        },
        "mcmc": {
            "mean": mcmc.mean,
            "cov": mcmc.cov,
            "sd": mcmc.sd,
            "mcse_mean": mcmc.mcse_mean,
            "ess_bulk": mcmc.ess_bulk,
            "ess_tail": mcmc.ess_tail,
            "rhat": mcmc.rhat,
            "divergences": mcmc.divergences,
            "map": mcmc.map,
            "map_distance_sd": result.map_distance_sd,
        },
        "checks": [
            {
                "name": c.name,
                "statistic": c.statistic,
                "threshold": c.threshold,
                "passed": c.passed,
                "note": c.note,
            }
            for c in result.checks
        ],
        "quantities": []
        if agreement is None
        else [
            {
                "name": q.name,
                "estimate": q.estimate,
                "expected": q.expected,
                "null_sd": q.null_sd,
                "ess": q.ess,
                "z": q.z,
                "p": q.p_value,
                "p_holm": q.p_holm,
                "df": q.df if math.isfinite(q.df) else None,
            }
            for q in agreement.quantities
        ],
        "settings": {
            "draws": result.settings.draws,
            "chains": result.settings.chains,
            "seed": result.settings.seed,
            "alpha": result.settings.alpha,
            "tune": result.settings.tune,
            "rhat_max": result.settings.rhat_max,
            "ess_min": result.settings.ess_min,
            "map_tol_sd": result.settings.map_tol_sd,
            "method": result.settings.method,
        },
        "data": {"source": result.data_source, "n": result.n},
        "power": None if result.power is None else result.power.to_dict(),
        **result.extra.sections,
        "hyperparameters": result.hyper,
        "timings": result.timings,
        "versions": versions(),
    }
    return _clean(doc)


#: Points of each exact marginal density kept for the report's overlays.
DENSITY_POINTS = 241


def exact_densities(result: RunResult):
    """Each exact marginal density on a grid spanning it and the MCMC draws.

    Returns an ``xarray.Dataset`` with ``grid`` and ``density`` of shape
    (parameter, point); rows are NaN where a marginal has no closed form.
    Discrete marginals give their probability mass at the grid's integers.
    The ``variables`` attribute names the PyMC variables whose flattened
    draws line up with ``parameter``.
    """
    import xarray as xr  # heavy: only a run being saved needs xarray; `list` does not

    from compare.core.agreement import posterior_array  # heavy: scipy and ArviZ

    post = result.exact.posterior
    d = len(result.parameters)
    grid = np.full((d, DENSITY_POINTS), np.nan)
    density = np.full((d, DENSITY_POINTS), np.nan)
    draws = None
    if result.variables and "posterior" in result.draws.children:
        draws = posterior_array(result.draws["posterior"].to_dataset(), result.variables)
        if draws.shape[-1] != d:
            draws = None
    for i in range(d):
        marginal = post.marginal(i)
        if marginal is None:
            continue
        lo, hi = (float(v) for v in marginal.ppf([0.001, 0.999]))
        if draws is not None:
            qlo, qhi = np.quantile(draws[..., i], [0.001, 0.999])
            lo, hi = min(lo, qlo), max(hi, qhi)
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
            continue
        grid[i] = np.linspace(lo, hi, DENSITY_POINTS)
        with np.errstate(all="ignore"):
            density[i] = (
                marginal.pdf(grid[i])
                if hasattr(marginal, "pdf")
                else marginal.pmf(np.round(grid[i]))
            )
    return xr.Dataset(
        {"grid": (("parameter", "point"), grid), "density": (("parameter", "point"), density)},
        coords={"parameter": list(result.parameters)},
        attrs={"variables": json.dumps(list(result.variables))},
    )


def observed_data(result: RunResult):
    """The run's data columns as a Dataset over ``obs`` (None when not kept)."""
    import xarray as xr  # heavy: only a run being saved needs xarray; `list` does not

    if not result.observed:
        return None
    return xr.Dataset(
        {
            name: (
                "obs",
                np.asarray(v) if np.asarray(v).dtype.kind in "biufb" else np.asarray(v).astype(str),
            )
            for name, v in result.observed.items()
        }
    )


# --- saving a run: the pair as one unit (see the module docstring) ------------------------
#: The files of one run, replaced together, in this order.
RUN_FILES = (DRAWS_FILE, RESULT_FILE)
#: Where a writer builds the next pair (ignored by readers, removed by the next writer).
STAGING_PREFIX = ".run-staging-"
#: The committed pair, until it is rolled forward into the folder.
COMMIT_DIR = ".run-commit"
#: Test hook: stop the writer with SIGSTOP at this point of :func:`save_run`.
TEST_PAUSE_ENV = "BAYES_COMPARE_TEST_PAUSE_AT"
#: The points of :func:`save_run` the test hook can stop at, in order.
PAUSE_POINTS = (
    "staging",
    "draws-staged",
    "result-staged",
    "committed",
    "after-draws",
    "after-result",
    "done",
)
#: Bytes per stored value (float64 / int64) and fixed netCDF/HDF5 overhead per variable
#: and per file, measured on h5netcdf 1.x files (a 2 x 300 run of a one-parameter topic: 121 kB
#: for 89 kB of arrays in 25 variables; netCDF4's files of the 15 default runs are the
#: same size to 1%).
VALUE_BYTES = 8
VARIABLE_OVERHEAD_BYTES = 1_500
FILE_OVERHEAD_BYTES = 16_384
#: nutpie keeps ~19 sampler statistics per draw (step size, depth, energy, ...).
SAMPLE_STATS_PER_DRAW = 19
#: Room kept beyond the estimate: the JSON document, HDF5 growth, the file system.
ROOM_MARGIN_BYTES = 256 * 1024
ROOM_MARGIN_SHARE = 0.25


class WriteError(InputError):
    """A run could not be written (no space, no permission); the folder is unchanged.

    An :class:`~compare.core.registry.InputError`, so the CLI reports it as one line
    with exit code 3: the fix (free space, another ``--out``) is the user's.
    """


def _pause(point: str) -> None:
    """The test hook: stop this process at ``point`` when the environment asks."""
    if os.environ.get(TEST_PAUSE_ENV) == point:
        os.kill(os.getpid(), signal.SIGSTOP)


def estimate_run_bytes(*, chains: int, draws: int, n_values: int = 1, n_variables: int = 1) -> int:
    """Rough size in bytes of a run's ``draws.nc``, known before sampling.

    ``chains * draws * (n_values + SAMPLE_STATS_PER_DRAW)`` values of 8 bytes,
    plus HDF5 overhead per variable and per file.  ``n_values`` is the number of
    scalar parameter values per draw (1 is a lower bound when the model is not
    built yet: the sampler statistics dominate small models).
    """
    values = chains * draws * (n_values + SAMPLE_STATS_PER_DRAW)
    variables = n_variables + SAMPLE_STATS_PER_DRAW + 4
    return VALUE_BYTES * values + VARIABLE_OVERHEAD_BYTES * variables + FILE_OVERHEAD_BYTES


def _existing(path: str | Path) -> Path:
    """``path`` or its nearest existing ancestor (where a new folder would be created)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _mb(nbytes: float) -> str:
    return f"{nbytes / 1e6:.2f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.0f} kB"


def check_room(out_dir: str | Path, nbytes: int) -> None:
    """Refuse, before any work, to write ``nbytes`` where they do not fit.

    Parameters
    ----------
    out_dir : path
        The run folder (it need not exist yet: its nearest existing parent is
        measured).
    nbytes : int
        The size to be written, e.g. from :func:`estimate_run_bytes`; a margin
        of ``ROOM_MARGIN_SHARE`` plus ``ROOM_MARGIN_BYTES`` is added.

    Raises
    ------
    WriteError
        One line naming the folder, the space needed and free, and the fix.
    """
    needed = int(nbytes * (1 + ROOM_MARGIN_SHARE)) + ROOM_MARGIN_BYTES
    try:
        free = shutil.disk_usage(_existing(out_dir)).free
    except OSError:
        return  # nothing to measure (e.g. a permission problem): the write will say
    if free < needed:
        raise WriteError(
            f"--out {str(out_dir)!r}: the run needs about {_mb(needed)} free there, "
            f"{_mb(free)} is free; free some space or choose another --out"
        )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _folder_lock(run_dir: Path, *, exclusive: bool = True) -> Iterator[None]:
    """An advisory ``flock`` on the run folder itself (no lock file is left behind).

    On a file system without ``flock`` (some network mounts) the protocol still
    holds for one writer at a time; the lock only keeps concurrent writers apart.
    """
    fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except OSError as e:
            if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
        yield
    finally:
        os.close(fd)  # releases the lock


def _roll_forward(run_dir: Path) -> bool:
    """Finish a committed journal (idempotent); True if there was one."""
    commit = run_dir / COMMIT_DIR
    if not commit.is_dir():
        return False
    for name in RUN_FILES:
        if (commit / name).exists():
            os.replace(commit / name, run_dir / name)
            _pause("after-draws" if name == DRAWS_FILE else "after-result")
    shutil.rmtree(commit)
    _fsync_dir(run_dir)
    return True


def _clean_stale(run_dir: Path) -> list[Path]:
    """Remove what killed writers left: staging folders and old ``.draws.nc.*.tmp`` files.

    Called with the folder's exclusive lock held, so nothing removed here is
    being written.  Returns what was removed.
    """
    removed = []
    for entry in run_dir.iterdir():
        name = entry.name
        if entry.is_dir() and name.startswith(STAGING_PREFIX):
            shutil.rmtree(entry, ignore_errors=True)
        elif (
            entry.is_file()
            and name.endswith(".tmp")
            and any(name.startswith(f".{f}.") for f in RUN_FILES)
        ):
            entry.unlink(missing_ok=True)
        else:
            continue
        removed.append(entry)
    return removed


def recover_run(run_dir: str | Path) -> bool:
    """Bring ``run_dir`` to a single run after a killed writer; True if it did anything.

    Rolls a committed journal (``.run-commit``) forward into the folder; the
    uncommitted leftovers (staging folders, temporary files) are removed by the
    next :func:`save_run`, which holds the folder's lock.  A folder without a
    journal is left untouched, so this is cheap to call before every read.
    """
    run_dir = Path(run_dir)
    if not (run_dir / COMMIT_DIR).is_dir():
        return False
    with _folder_lock(run_dir):
        return _roll_forward(run_dir)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _draw_groups(result: RunResult) -> dict[str, Any]:
    """The netCDF groups of :func:`save_draws`, as a DataTree dict."""
    tree = result.draws
    groups = {}
    for name in ("posterior", "sample_stats"):
        if name in tree.children:
            ds = tree[name].to_dataset()
            keep = [v for v in ds.data_vars if ds[v].dtype.kind in "biuf"]
            groups[f"/{name}"] = ds[keep]
    groups["/exact"] = exact_densities(result)
    observed = observed_data(result)
    if observed is not None:
        groups["/observed_data"] = observed
    return groups


def _groups_bytes(groups: dict[str, Any]) -> int:
    """The size a DataTree dict will take as netCDF, from its arrays and variable count."""
    values = sum(int(ds.nbytes) for ds in groups.values())
    variables = sum(len(ds.variables) for ds in groups.values())
    return values + VARIABLE_OVERHEAD_BYTES * variables + FILE_OVERHEAD_BYTES


def _write_draws(groups: dict[str, Any], path: Path) -> None:
    import xarray as xr  # heavy: only a run being saved needs xarray; `list` does not

    with without_distributed_probe():  # no 0.3 s import of distributed (see module)
        xr.DataTree.from_dict(groups).to_netcdf(path, engine=NETCDF_ENGINE)
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def save_draws(result: RunResult, path: str | Path) -> None:
    """Keep the draws, sampler statistics, data and exact densities as netCDF.

    Groups: ``/posterior`` and ``/sample_stats`` (numeric variables),
    ``/observed_data`` (the data columns, when small enough) and ``/exact``
    (:func:`exact_densities`), so every report figure can be redrawn without
    sampling.  Written atomically, alone; :func:`save_run` writes it together
    with ``result.json``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        _write_draws(_draw_groups(result), Path(tmp))
        os.chmod(tmp, umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_run(result: RunResult, out_dir: str | Path, *, run_key: str | None = None) -> Path:
    """Write ``draws.nc`` and ``result.json`` under ``out_dir`` as one unit; return the JSON path.

    See the module docstring for the protocol: a reader sees the old run or the
    new one, whenever the writer is killed.  Other files in ``out_dir`` (report
    pages, figures, sensitivity and SBC results) are left alone.  The saved
    document is :func:`to_document` plus ``files`` (``{"draws.nc": {"sha256",
    "bytes"}}``), which only a saved ``result.json`` has, and ``run_key`` when
    given (:mod:`compare.outputs.run_cache`: what the run depends on, so that
    an unchanged run is reused).

    Raises
    ------
    WriteError
        When the draws do not fit on the disk (checked before writing) or the
        write fails (``OSError``); the folder then holds the old run, if any,
        and no temporary file.
    """
    out_dir = Path(out_dir)
    groups = _draw_groups(result)
    check_room(out_dir, _groups_bytes(groups))

    def stage(staging: Path) -> None:
        draws = staging / DRAWS_FILE
        _write_draws(groups, draws)
        _pause("draws-staged")
        doc = to_document(result)
        doc["files"] = {DRAWS_FILE: {"sha256": _sha256(draws), "bytes": draws.stat().st_size}}
        if run_key is not None:
            doc["run_key"] = run_key
        with open(staging / RESULT_FILE, "w") as fh:
            fh.write(dumps(doc))
            fh.flush()
            os.fsync(fh.fileno())

    _commit(out_dir, stage)
    return out_dir / RESULT_FILE


def run_files(out_dir: str | Path) -> dict[str, bytes]:
    """The bytes of a saved run's files (``draws.nc``, ``result.json``).

    What a unit that ran on a Dask worker sends back, so that the command
    writes the run where it was asked, with no shared file system
    (:func:`save_run_files`).
    """
    out_dir = Path(out_dir)
    with _folder_lock(out_dir, exclusive=False):
        return {name: (out_dir / name).read_bytes() for name in RUN_FILES}


def save_run_files(out_dir: str | Path, files: dict[str, bytes]) -> Path:
    """Write a run read by :func:`run_files` elsewhere under ``out_dir``, as :func:`save_run` does.

    The draws are checked against the digest ``result.json`` records before
    anything is written.

    Raises
    ------
    WriteError
        When the files are not one consistent run, do not fit on the disk, or
        the write fails; the folder then holds the old run, if any.
    """
    out_dir = Path(out_dir)
    try:
        doc = json.loads(files[RESULT_FILE])
        recorded = doc["files"][DRAWS_FILE]["sha256"]
        draws = files[DRAWS_FILE]
    except (KeyError, TypeError, ValueError):
        raise WriteError(
            f"--out {str(out_dir)!r}: the run sent back by the worker is not a saved run "
            f"(files {sorted(files)}); run it again"
        ) from None
    if set(files) != set(RUN_FILES) or hashlib.sha256(draws).hexdigest() != recorded:
        raise WriteError(
            f"--out {str(out_dir)!r}: the run sent back by the worker does not match "
            "its own digest; nothing was written; run it again"
        )
    check_room(out_dir, sum(len(b) for b in files.values()))

    def stage(staging: Path) -> None:
        for name in RUN_FILES:
            with open(staging / name, "wb") as fh:
                fh.write(files[name])
                fh.flush()
                os.fsync(fh.fileno())
            if name == DRAWS_FILE:
                _pause("draws-staged")

    _commit(out_dir, stage)
    return out_dir / RESULT_FILE


def _commit(out_dir: Path, stage: Callable[[Path], None]) -> None:
    """The protocol of the module docstring: ``stage`` fills a staging folder, then one rename."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WriteError(
            f"--out {str(out_dir)!r}: cannot create the folder "
            f"({e.strerror or e}); choose another --out"
        ) from None
    with _folder_lock(out_dir):
        _roll_forward(out_dir)  # a run committed by a killed writer is the old run
        _clean_stale(out_dir)
        _pause("staging")
        staging = None
        try:
            staging = Path(tempfile.mkdtemp(dir=out_dir, prefix=STAGING_PREFIX))
            stage(staging)
            for name in RUN_FILES:
                os.chmod(staging / name, umask_mode())
            _pause("result-staged")
            _fsync_dir(staging)
            os.rename(staging, out_dir / COMMIT_DIR)  # the commit point
        except OSError as e:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            raise WriteError(
                f"--out {str(out_dir)!r}: writing the run failed ({e.strerror or e}); "
                "nothing was changed there; free some space or choose another --out"
            ) from None
        except BaseException:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            raise
        _fsync_dir(out_dir)
        _pause("committed")
        _roll_forward(out_dir)
        _pause("done")


# --- reading runs folders: one loader for the report and the summary ---------------------
#: Keys every reader of a run document relies on.
REQUIRED_KEYS = (
    "topic",
    "verdict",
    "parameters",
    "exact",
    "mcmc",
    "checks",
    "settings",
    "data",
    "timings",
)


class RunFolderError(InputError):
    """A saved run that cannot be used; ``path`` names the file at fault."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


@dataclass(frozen=True)
class SkippedRun:
    """A run left out of a report or summary: the file at fault and why."""

    path: Path
    reason: str

    @property
    def line(self) -> str:
        """The one-line warning: ``skipped <file>: <reason>``."""
        return f"skipped {self.path}: {self.reason}"


@dataclass(frozen=True)
class LoadedRun:
    """A run folder whose ``result.json`` parsed and whose draws match it."""

    directory: Path
    doc: dict[str, Any]


def _read_pair(result: Path, draws: Path, *, need_draws: bool) -> dict[str, Any]:
    """The document at ``result``, checked against ``draws`` (see :func:`load_run`)."""
    try:
        text = result.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunFolderError(result, "missing; rerun the topic") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RunFolderError(result, f"unreadable ({e}); rerun the topic") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise RunFolderError(
            result,
            f"not valid JSON, truncated or damaged ({e.msg} at "
            f"line {e.lineno} column {e.colno}); rerun the topic",
        ) from None
    if not isinstance(doc, dict):
        raise RunFolderError(
            result, f"expected a JSON object, got {type(doc).__name__}; rerun the topic"
        )
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    if missing:
        raise RunFolderError(
            result, f"not a bayes-compare run document (no {', '.join(missing)}); rerun the topic"
        )
    record = (doc.get("files") or {}).get(DRAWS_FILE)
    if draws.is_file() and record:
        if draws.stat().st_size != record.get("bytes") or _sha256(draws) != record.get("sha256"):
            raise RunFolderError(
                draws,
                f"does not belong to {RESULT_FILE} beside it (its "
                "SHA-256 differs from the one recorded there: written by "
                "another run, or damaged); rerun the topic",
            )
    elif need_draws and not draws.is_file():
        raise RunFolderError(draws, "missing; rerun the topic")
    return doc


def load_run(run_dir: str | Path, *, need_draws: bool = True) -> LoadedRun:
    """Read one run folder, finishing an interrupted save first.

    Parameters
    ----------
    run_dir : path
        A folder written by :func:`save_run`.
    need_draws : bool
        Require ``draws.nc`` (the report draws from it; the summary does not).
        When present it must match the SHA-256 recorded in ``result.json``
        (documents saved before the record are not checked).

    Raises
    ------
    RunFolderError
        Naming the file and the reason: missing, not JSON (truncated?),
        missing keys, draws that belong to another run.
    """
    run_dir = Path(run_dir)
    result, draws = run_dir / RESULT_FILE, run_dir / DRAWS_FILE
    for _ in range(3):  # a writer killed while we waited for the lock leaves a journal
        try:
            recover_run(run_dir)
        except OSError as e:
            raise RunFolderError(
                run_dir / COMMIT_DIR,
                f"an interrupted save could not be finished ({e.strerror or e}); rerun the topic",
            ) from None
        try:
            with _folder_lock(run_dir, exclusive=False):  # no writer replaces the pair now
                if (run_dir / COMMIT_DIR).is_dir():
                    continue
                return LoadedRun(
                    directory=run_dir, doc=_read_pair(result, draws, need_draws=need_draws)
                )
        except FileNotFoundError:  # the folder itself
            raise RunFolderError(result, "missing; rerun the topic") from None
        except OSError as e:
            raise RunFolderError(run_dir, f"cannot be read ({e.strerror or e})") from None
    raise RunFolderError(run_dir / COMMIT_DIR, "a save kept being interrupted; rerun the topic")


def load_runs(
    run_dirs: Iterable[str | Path],
    *,
    need_draws: bool = True,
    warn: Callable[[str], None] | None = None,
) -> tuple[list[LoadedRun], list[SkippedRun]]:
    """Load each folder with :func:`load_run`; the unusable ones are skipped, not fatal.

    ``warn`` gets one line per skipped run (``skipped <file>: <reason>``).
    """
    loaded, skipped = [], []
    for run_dir in run_dirs:
        try:
            loaded.append(load_run(run_dir, need_draws=need_draws))
        except RunFolderError as e:
            skip = SkippedRun(path=e.path, reason=e.reason)
            skipped.append(skip)
            if warn is not None:
                warn(skip.line)
    return loaded, skipped


def run_dirs_under(runs: str | Path) -> list[Path]:
    """The run folders directly under ``runs``: those holding a document or a journal."""
    runs = Path(runs)
    if not runs.is_dir():
        return []
    return sorted(
        d
        for d in runs.iterdir()
        if d.is_dir() and ((d / RESULT_FILE).exists() or (d / COMMIT_DIR).is_dir())
    )


def settings_text(settings: dict[str, Any]) -> str:
    """``2 chains x 500 draws (+1000 warm-up), seed 1, alpha 0.01`` from a document's settings."""

    def get(key):
        return settings.get(key, "?")

    alpha = settings.get("alpha")
    return (
        f"{get('chains')} chains x {get('draws')} draws (+{get('tune')} warm-up), "
        f"seed {get('seed')}, alpha {alpha:g}"
        if isinstance(alpha, (int, float))
        else f"{get('chains')} chains x {get('draws')} draws (+{get('tune')} warm-up), "
        f"seed {get('seed')}, alpha {alpha}"
    )


def common_settings(docs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The settings every document shares, or None when they differ between runs."""
    if not docs:
        return None
    first = docs[0].get("settings")
    return first if all(d.get("settings") == first for d in docs[1:]) else None


#: How each sampler setting is shown, in this order.
_SETTING_FORMATS = (
    ("chains", "{} chains"),
    ("draws", "{} draws"),
    ("tune", "{} warm-up"),
    ("seed", "seed {}"),
    ("alpha", "alpha {:g}"),
    ("rhat_max", "R-hat < {:g}"),
    ("ess_min", "ESS > {:g}"),
    ("map_tol_sd", "MAP tolerance {:g} sd"),
)


def describe_settings(settings: dict[str, Any]) -> str:
    """``2 chains, 300 draws, seed 1`` for the settings given (any subset, known order first)."""
    parts = []
    for key, form in _SETTING_FORMATS:
        if key in settings:
            try:
                parts.append(form.format(settings[key]))
            except (TypeError, ValueError):
                parts.append(f"{key} {settings[key]}")
    parts += [f"{k} {v}" for k, v in settings.items() if k not in dict(_SETTING_FORMATS)]
    return ", ".join(parts)


def split_settings(docs: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The settings shared by every run, and for each run those that differ between runs.

    Returns ``(common, per_run)``: ``per_run[i]`` holds run ``i``'s value of each
    setting not equal in all runs (all empty when the runs agree).
    """
    all_settings = [d.get("settings") or {} for d in docs]
    keys = list(dict.fromkeys(k for s in all_settings for k in s))
    differ = [k for k in keys if len({json.dumps(s.get(k)) for s in all_settings}) > 1]
    common = {k: all_settings[0][k] for k in keys if k not in differ}
    return common, [{k: s.get(k) for k in differ} for s in all_settings]


def _fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


_CORE_CHECKS = {
    CheckKind.RHAT,
    CheckKind.ESS_BULK,
    CheckKind.ESS_TAIL,
    CheckKind.DIVERGENCES,
    CheckKind.AGREEMENT,
    CheckKind.MAP,
}


def _other_checks(checks: list[dict[str, Any]]) -> str:
    """Topic-specific checks (predictive, evidence, ...) as 'name ok/FAIL'."""
    marks = {True: "ok", False: "FAIL", None: "n/a"}
    return (
        ", ".join(
            f"{c['name']} {marks[c['passed']]}" for c in checks if c["name"] not in _CORE_CHECKS
        )
        or "-"
    )


def summary_markdown(docs: Iterable[dict[str, Any]], *, skipped: Sequence[SkippedRun] = ()) -> str:
    """One row per run: verdict, max |z|, worst R-hat, min ESS, divergences, time.

    The sampler settings are one line when every run shares them, else a
    column of the table.  Each skipped run (:func:`load_runs`) is a line
    ``skipped: <file>: <reason>`` below the table.
    """
    docs_seen = list(docs)
    common = common_settings(docs_seen)
    per_run = common is None and bool(docs_seen)
    shared, differing = split_settings(docs_seen)
    lines = [
        "# bayes-compare summary",
        "",
        "| topic | data | n | verdict | decided by | max abs z | threshold | worst R-hat "
        "| min ESS (bulk/tail) | divergences | MAP dist (sd) | other checks | time (s) |"
        + (" settings that differ |" if per_run else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if per_run else ""),
    ]
    for doc, own in zip(docs_seen, differing):
        checks = {c["name"]: c for c in doc["checks"]}
        mcmc = doc["mcmc"]
        ess = min([v for v in mcmc["ess_bulk"] + mcmc["ess_tail"] if v is not None], default=None)
        agreement = checks.get("agreement", {})
        lines.append(
            f"| {doc['topic']} | {doc['data']['source']} | {doc['data']['n']} "
            f"| **{doc['verdict']}** | {doc.get('decided_by', '')} "
            f"| {_fmt(agreement.get('statistic'), '.2f')} "
            f"| {_fmt(agreement.get('threshold'), '.2f')} "
            f"| {_fmt(checks.get('rhat', {}).get('statistic'), '.4f')} | {_fmt(ess, '.0f')} "
            f"| {mcmc['divergences']} | {_fmt(checks.get('map', {}).get('statistic'), '.1e')} "
            f"| {_other_checks(doc['checks'])} | {_fmt(doc['timings'].get('total'), '.2f')} |"
            + (f" {describe_settings(own)} |" if per_run else "")
        )
    if docs_seen:
        versions_seen = docs_seen[0].get("versions", {})
        settings_line = (
            f"Settings differ between runs (see the last column); shared: "
            f"{describe_settings(shared) or 'none'}."
            if common is None
            else f"Settings: {settings_text(common)}."
        )
        lines += [
            "",
            settings_line
            + " Versions: "
            + ", ".join(f"{k} {v}" for k, v in versions_seen.items())
            + ".",
        ]
    if skipped:
        lines += [
            "",
            f"{len(skipped)} saved run(s) could not be read and are not in the table:",
            "",
        ]
        lines += [f"- skipped: {s.path}: {s.reason}" for s in skipped]
    return "\n".join(lines) + "\n"
