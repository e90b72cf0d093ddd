"""``bayes-compare worker start|stop|status``: the local worker that keeps models warm.

A new process pays ~2.6 s of imports and a compile (or a load from the disk
cache, ~2.4 s) before it samples a small model in ~0.1 s. The local worker
pays them once: it is a Dask ``LocalCluster`` on 127.0.0.1 whose worker
processes keep PyMC imported and every model they compiled in memory
(:data:`compare.core.sampling.CACHE`). While it runs, ``run``, ``run --all``
and ``report`` send it their topics (``--no-worker`` computes in the command's
own process), and write what comes back where they were asked.

- **Started and stopped explicitly**: ``worker start`` returns once the
  worker is warm; ``worker stop`` ends it. It also ends itself after
  ``--idle-minutes`` without a task (30 by default).
- **Only for its owner**: it listens on 127.0.0.1 only, and every connection
  is mutually authenticated with TLS credentials made at start and kept in
  its file (:func:`compare.core.cluster.worker_file`, mode 0600). It serves no
  web page: Dask's dashboard (whose info pages list the scheduler's logs and the
  tasks' errors, with paths and data values, to any account that can reach the
  port) only with ``worker start --dashboard``, which says who can read it.
- **Never stale**: it records the fingerprint of the code and packages it
  loaded (:func:`fingerprint`); a command whose own differs (the code was
  edited, a package upgraded) computes in its own process and says so.
- **Same draws**: a model kept warm samples the same draws for a seed as one
  compiled afresh; the tests compare the two runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from compare.accel.cache_root import make_folder
from compare.core.cluster import LocalWorker, local_cluster, read_worker, worker_file, write_worker
from compare.core.files import versions
from compare.interfaces.cli_common import BadInput, app, err, make_console
from compare.outputs.run_cache import package_sources

#: Seconds ``worker start`` waits for the worker to be warm.
START_TIMEOUT = 180.0
#: Seconds ``worker stop`` waits for it to end before killing it.
STOP_TIMEOUT = 30.0
#: Seconds a command waits for a local worker to answer before computing itself.
CONNECT_TIMEOUT = 2.0

worker_app = typer.Typer(help="the local worker that keeps models warm (docs/commands.md#worker)")
app.add_typer(worker_app, name="worker")


def fingerprint() -> str:
    """SHA-256 of this process's code, package versions and interpreter."""
    hasher = hashlib.sha256()
    hasher.update(package_sources().encode())
    hasher.update(json.dumps(versions(), sort_keys=True).encode())
    hasher.update(f"{sys.executable}\n{sys.version}".encode())
    return hasher.hexdigest()


def _log_file(path: Path) -> Path:
    return path.with_suffix(".log")


def _warm() -> int:
    """Run on each worker process at start: the imports a run needs, paid once."""
    import compare.core.runner  # heavy: ArviZ, SciPy; the point of warming
    import compare.core.sampling  # heavy: PyMC, nutpie; the point of warming
    import compare.outputs.document  # noqa: F401  # heavy: xarray, netCDF4; the point of warming

    return os.getpid()


def _models_in_memory() -> int:
    from compare.core.sampling import CACHE  # heavy: PyMC, imported by _warm already

    return len(CACHE._models)


def serve(path: Path, workers: int, idle_seconds: float, dashboard: bool = False) -> None:
    """The worker's own process: start the cluster, describe it in ``path``, wait, clean up."""
    import dask  # heavy: Dask only in the worker's own process
    from distributed import Client  # heavy: Dask only in the worker's process
    from distributed.security import Security  # heavy: Dask (and cryptography)

    security = Security.temporary()
    dask.config.set(
        {"distributed.scheduler.idle-timeout": f"{idle_seconds}s" if idle_seconds > 0 else None}
    )
    stop = False

    def on_signal(signum: int, frame: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    cluster = local_cluster(
        workers=workers, dashboard=dashboard, scheduler_port=0, security=security
    )
    try:
        with Client(cluster) as client:
            client.run(_warm)
        write_worker(
            path,
            LocalWorker(
                address=cluster.scheduler_address,
                pid=os.getpid(),
                workers=workers,
                code=fingerprint(),
                started=time.time(),
                idle_timeout=idle_seconds,
                tls={
                    "ca": security.tls_ca_file,
                    "cert": security.tls_client_cert,
                    "key": security.tls_client_key,
                },
                dashboard=cluster.dashboard_link if dashboard else None,
            ),
        )
        scheduler = cluster.scheduler
        while not stop and str(getattr(scheduler, "status", "")) not in (
            "Status.closing",
            "Status.closed",
        ):
            time.sleep(0.5)
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text())["pid"] == os.getpid():
                path.unlink()
        with contextlib.suppress(Exception):  # already closed by the idle timeout
            cluster.close(timeout=10)


def client_for_commands() -> tuple[Any, LocalWorker] | None:
    """(client, worker) of the running local worker a command may use, else None.

    None when no worker runs, when it does not answer within
    :data:`CONNECT_TIMEOUT`, or when it loaded other code or packages than
    this process (then one line on stderr says so and how to restart it).
    """
    found = read_worker()
    if found is None:
        return None
    if found.code != fingerprint():
        err.print(
            f"note: the local worker (pid {found.pid}) runs other code or packages than "
            "this command (edited or upgraded since it started), so this runs here; "
            "restart it: bayes-compare worker stop && bayes-compare worker start"
        )
        return None
    from distributed import Client  # heavy: Dask only when a local worker runs

    try:
        client = Client(found.address, security=found.security(), timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError):
        err.print(
            f"note: the local worker (pid {found.pid}) did not answer within "
            f"{CONNECT_TIMEOUT:g} s, so this runs here"
        )
        return None
    return client, found


@worker_app.command("start")
def start(
    workers: Annotated[
        int | None,
        typer.Option(
            help="worker processes, each keeping its own models warm (default: 2, or 1 on one core)"
        ),
    ] = None,
    idle_minutes: Annotated[
        float, typer.Option(help="end after this many minutes without a task (0: never)")
    ] = 30.0,
    dashboard: Annotated[
        bool,
        typer.Option(
            "--dashboard",
            help="also serve Dask's dashboard on 127.0.0.1 (no authentication: every "
            "account on this machine can read it)",
        ),
    ] = False,
) -> None:
    """Start the local worker (127.0.0.1 only) and return once it is warm."""
    if workers is None:  # as many as `run --all` would start itself
        workers = min(2, len(os.sched_getaffinity(0)))
    if workers < 1:
        raise BadInput(f"--workers must be >= 1, got {workers}; e.g. --workers 2")
    if not idle_minutes >= 0:
        raise BadInput(f"--idle-minutes must be >= 0, got {idle_minutes}; 0 never ends it")
    path = worker_file()
    if path is None:
        raise BadInput(
            "BAYES_COMPARE_WORKER_FILE is 'off', so no local worker can be found; "
            "unset it to start one"
        )
    console = make_console()
    found = read_worker(path)
    if found is not None:
        same = "" if found.code == fingerprint() else " (other code: stop it and start again)"
        console.print(f"a local worker already runs at {found.address}, pid {found.pid}{same}")
        return
    make_folder(path.parent)
    log = _log_file(path)
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "compare.interfaces.worker",
                str(path),
                str(workers),
                str(idle_minutes * 60.0),
                "dashboard" if dashboard else "",
            ],
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this command; not killed by its Ctrl-C
        )
    deadline = time.monotonic() + START_TIMEOUT
    with err.status(f"starting the local worker ({workers} processes, importing PyMC)"):
        while time.monotonic() < deadline:
            found = read_worker(path)
            if found is not None and found.pid == proc.pid:
                break
            if proc.poll() is not None:
                tail = log.read_text(errors="replace")[-1500:]
                raise RuntimeError(f"the local worker exited at start (log {log}):\n{tail}")
            time.sleep(0.2)
        else:
            proc.terminate()
            raise RuntimeError(f"the local worker was not ready in {START_TIMEOUT:g} s (log {log})")
    ends = f"ends after {idle_minutes:g} min idle" if idle_minutes > 0 else "runs until stopped"
    console.print(
        f"local worker at {found.address}, pid {found.pid}, {workers} process"
        f"{'es' if workers > 1 else ''}; {ends}; `bayes-compare worker stop` ends it"
    )
    if found.dashboard is not None:
        console.print(
            f"dashboard at {found.dashboard}: served without authentication, so every "
            "account on this machine can read it (the scheduler's logs, the tasks' "
            "errors with their paths and data values)",
            soft_wrap=True,
        )


@worker_app.command("stop")
def stop() -> None:
    """Stop the local worker (nothing to do if none runs)."""
    console = make_console()
    path = worker_file()
    found = None if path is None else read_worker(path)
    if found is None:
        console.print("no local worker runs")
        return
    os.kill(found.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline and read_worker(path) is not None:
        time.sleep(0.2)
    if read_worker(path) is not None:  # stuck: end its whole session (its worker processes)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(found.pid, signal.SIGKILL)
        if path is not None:
            path.unlink(missing_ok=True)
    console.print(f"stopped the local worker (pid {found.pid})")


@worker_app.command("status")
def status(
    json_out: Annotated[bool, typer.Option("--json", help="one JSON document on stdout")] = False,
) -> None:
    """Whether a local worker runs: its address, processes, uptime and warm models."""
    path = worker_file()
    found = None if path is None else read_worker(path)
    doc: dict[str, Any] = {"running": found is not None, "file": str(path) if path else None}
    if found is not None:
        doc.update(
            address=found.address,
            pid=found.pid,
            workers=found.workers,
            uptime_seconds=round(time.time() - found.started, 1),
            idle_timeout_seconds=found.idle_timeout,
            same_code=found.code == fingerprint(),
            dashboard=found.dashboard,
        )
        connected = client_for_commands() if doc["same_code"] else None
        if connected is not None:
            client, _ = connected
            with client:
                doc["models_in_memory"] = sum(client.run(_models_in_memory).values())
    if json_out:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    console = make_console()
    if found is None:
        console.print("no local worker runs (`bayes-compare worker start` starts one)")
        return
    console.print(
        f"local worker at {doc['address']}, pid {doc['pid']}, {doc['workers']} process"
        f"{'es' if found.workers > 1 else ''}, up {doc['uptime_seconds']:.0f} s"
        + (f", {doc['models_in_memory']} models in memory" if "models_in_memory" in doc else "")
        + ("" if doc["same_code"] else "; runs other code: restart it")
        + (
            f"; dashboard at {found.dashboard} (no authentication: every account here can read it)"
            if found.dashboard
            else ""
        )
    )


if __name__ == "__main__":  # the worker's own process, started by `worker start`
    from compare import accel

    accel.enable()  # a process of ours (its Dask workers: the preload of local_cluster)
    serve(Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:] == ["dashboard"])
