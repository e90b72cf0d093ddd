"""Dask clusters: a new ``LocalCluster``, a user's scheduler, or the local worker.

Three places the independent units of a command (an SBC block, a topic of
``run --all``, a report's figures, a calibration replication) can run:

- a ``LocalCluster`` started for the command and closed after it
  (:func:`connect` with ``workers``);
- a user's Dask scheduler, ``--scheduler tcp://HOST:PORT`` (:func:`connect`
  with ``scheduler``). Units there never rely on a shared file system: they
  get their inputs as arguments and return their outputs as bytes, which the
  command writes here (``compare/interfaces/cli_run.py``, ``compare/outputs/report.py``);
- the **local worker** (``bayes-compare worker start``,
  ``compare/interfaces/worker.py``): a long-lived ``LocalCluster`` on
  127.0.0.1 that keeps imports and compiled models warm between commands.
  It is described by a JSON file (:func:`worker_file`, mode 0600) holding its
  address and its TLS credentials: every connection is mutually
  authenticated, so another user of the machine cannot submit code to it.

Nothing here imports Dask at module level: ``distributed`` costs ~0.5 s and a
light command must not pay it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from pathlib import Path
from typing import Any

from compare.accel.cache_root import make_folder
from compare.core.registry import InputError

#: Seconds to wait for a Dask scheduler before calling it unreachable.
CONNECT_TIMEOUT = 3.0
#: Seconds to wait for a connected scheduler to have at least one worker.
WORKER_TIMEOUT = 10.0
#: Environment variable naming the local worker's file; ``off`` ignores any local worker.
WORKER_ENV = "BAYES_COMPARE_WORKER_FILE"
_DISABLED = {"off", "0", "false", "no", "none"}
_SCHEMES = ("tcp://", "tls://", "ws://", "wss://", "inproc://")
#: Dask settings of the clusters we start.  Dask's statistical profiler samples every
#: thread's Python stack each 10 ms in every worker and on every event loop, for a
#: dashboard page we never show; our units spend their time in compiled code it cannot
#: see.  Off, `sbc beta-binomial --sims 100 --workers 2` took 16.1-16.2 CPU-s against
#: 17.3-18.2 (docs/speed.md).  The preload switches the accelerators on in each worker
#: process, a process of ours (:func:`compare.accel.dask_setup`).  No HTTP routes: the
#: scheduler's info pages list its logs and the tasks' exceptions (paths, data values)
#: to anyone who can reach the port, and nothing of ours reads them (the local worker
#: serves Dask's dashboard only with ``worker start --dashboard``).  A user's own
#: scheduler keeps its settings.
DASK_SETTINGS: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.preload": ["compare.accel"],
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
}


def local_cluster(*, workers: int | None, dashboard: bool = False, **options: Any) -> Any:
    """A new ``LocalCluster`` of ``workers`` processes, one thread each, its logs
    quiet, started with :data:`DASK_SETTINGS` (``options`` go to ``LocalCluster``).

    Everything listens on 127.0.0.1. The scheduler's HTTP server (Dask starts one
    whatever it is told) takes a free port and serves nothing, unless ``dashboard``:
    then Dask's dashboard and info pages, on port 8787 if it is free; those pages
    have no authentication, so every account on the machine can read them.

    Each ``Nanny`` keeps a copy of the settings it was made with and hands it
    to the worker processes it starts (and restarts), so the cluster's workers
    run with them; the calling process's own settings are back as they were
    after the start (a user's session that calls ``sbc`` keeps its Dask
    configuration for the clusters it starts itself).
    """
    import dask  # heavy: Dask only when a cluster starts
    from distributed import LocalCluster  # heavy: Dask only when a cluster starts

    settings = dict(DASK_SETTINGS)
    if dashboard:
        del settings["distributed.scheduler.http.routes"]  # Dask's own: the dashboard's pages
    options.setdefault("host", "127.0.0.1")
    options.setdefault("dashboard_address", "127.0.0.1:8787" if dashboard else "127.0.0.1:0")
    options.setdefault("scheduler_kwargs", {"dashboard": dashboard})
    with dask.config.set(settings):
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            silence_logs=logging.ERROR,
            **options,
        )


def check_scheduler(address: str, option: str = "--scheduler") -> None:
    """Raise :class:`InputError` unless ``address`` looks like ``tcp://HOST:PORT``."""
    if not address.startswith(_SCHEMES) or ":" not in address.split("://", 1)[1]:
        raise InputError(
            f"{option} {address!r} must look like tcp://HOST:PORT, e.g. tcp://127.0.0.1:8786"
        )


def connect(
    *,
    workers: int | None,
    scheduler: str | None,
    timeout: float = CONNECT_TIMEOUT,
    security: Any = None,
) -> tuple[Any, Any]:
    """(client, cluster or None): a new ``LocalCluster``, or an existing scheduler.

    Parameters
    ----------
    workers : int, optional
        Worker processes of a new ``LocalCluster`` (one thread each).
    scheduler : str, optional
        Address of a running scheduler; ``workers`` is then ignored.
    timeout : float
        Seconds to wait for the scheduler to answer.
    security : distributed.Security, optional
        TLS credentials (the local worker's, :meth:`LocalWorker.security`).

    Raises
    ------
    InputError
        A malformed address, no answer within ``timeout``, or a scheduler
        without workers after :data:`WORKER_TIMEOUT` seconds.
    """

    from distributed import Client  # heavy: Dask only when a cluster runs

    if scheduler is not None:
        check_scheduler(scheduler)
        try:
            client = Client(scheduler, timeout=timeout, security=security)
        except (OSError, TimeoutError) as err:
            raise InputError(
                f"--scheduler {scheduler}: no Dask scheduler answered within "
                f"{timeout:g} s ({type(err).__name__}); start one with `dask "
                "scheduler` and `dask worker ADDRESS`, or use --workers N for a "
                "local cluster"
            ) from None
        try:
            client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
        except (OSError, TimeoutError):
            client.close()
            raise InputError(
                f"--scheduler {scheduler}: the scheduler has no workers (waited "
                f"{WORKER_TIMEOUT:g} s); start some with `dask worker "
                f"{scheduler} --nthreads 1`"
            ) from None
        return client, None
    cluster = local_cluster(workers=workers)
    return Client(cluster), cluster


# --- the local worker's file ------------------------------------------------------------
def worker_file(*, environ: os._Environ[str] | dict[str, str] | None = None) -> Path | None:
    """Where the local worker describes itself; None when switched off.

    ``$BAYES_COMPARE_WORKER_FILE`` when set (``off`` ignores any local worker:
    every command then runs in its own process), else
    ``$XDG_CACHE_HOME/bayes-compare/worker.json`` (``~/.cache`` by default).
    """
    env = os.environ if environ is None else environ
    chosen = env.get(WORKER_ENV)
    if chosen is not None:
        if not chosen.strip() or chosen.strip().lower() in _DISABLED:
            return None
        return Path(chosen).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / "bayes-compare" / "worker.json"


@dataclasses.dataclass(frozen=True)
class LocalWorker:
    """What the local worker's file says: where it listens and how to prove who we are.

    Attributes
    ----------
    address : str
        ``tls://127.0.0.1:PORT`` of its scheduler.
    pid : int
        The process serving it (``bayes-compare worker serve``).
    workers : int
        Its worker processes.
    code : str
        The fingerprint of the code it loaded (:func:`compare.outputs.run_cache.package_sources`);
        a command whose code differs does not use it.
    started : float
        Unix time it started.
    idle_timeout : float
        Seconds without a task after which it shuts itself down.
    tls : dict
        PEM texts of the CA, the client certificate and its key.
    dashboard : str or None
        The URL of Dask's dashboard when it was asked for (``worker start
        --dashboard``), else None: no page is served.
    """

    address: str
    pid: int
    workers: int
    code: str
    started: float
    idle_timeout: float
    tls: dict[str, str]
    dashboard: str | None = None

    def security(self) -> Any:
        """The ``distributed.Security`` a client needs to connect."""
        from distributed.security import Security  # heavy: Dask only when a cluster runs

        return Security(
            require_encryption=True,
            tls_ca_file=self.tls["ca"],
            tls_client_cert=self.tls["cert"],
            tls_client_key=self.tls["key"],
        )

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2) + "\n"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: not ours
        return False
    return True


def read_worker(path: Path | None = None) -> LocalWorker | None:
    """The running local worker, or None (no file, unreadable, or its process is gone).

    A file left by a worker that died is removed.
    """
    path = worker_file() if path is None else path
    if path is None:
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        found = LocalWorker(**raw)
    except (OSError, ValueError, TypeError):
        return None
    if not _alive(found.pid):
        path.unlink(missing_ok=True)
        return None
    return found


def write_worker(path: Path, worker: LocalWorker) -> None:
    """Write the worker's file readable by its owner only (it holds a private key)."""
    make_folder(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(worker.to_json())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
