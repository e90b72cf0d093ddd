"""What a process's shared state looks like, to show that using bayes-compare as a
library leaves it as it was (``tests/compare/test_guest.py``).

:func:`snapshot` records what a package could change that another package or the
user owns: the environment, the garbage collector, signal handlers, the import
machinery, warning filters, logging, the BLAS thread counts, the global random
states, PyTensor's and xarray's options, the loaded modules, and every attribute of
a third-party module or class (and of the dicts they hold) whose value is an object
of ours (a patch). :func:`differences` lists what changed between two snapshots, in
words. The snapshot is plain JSON, so two processes can be compared (a pytest run
with the plugin and one without).

Run as a script, ``python tests/process_state.py OUT.json`` writes a snapshot.
"""

from __future__ import annotations

import functools
import gc
import json
import logging
import os
import signal
import sys
import threading
import types
import warnings
from typing import Any

#: The packages of bayes-compare: objects of theirs found in another package's module
#: or class are patches.
OWN = ("compare", "analytic", "pymc_models")
#: Variables that say where a process runs (pytest sets this one per test phase).
VOLATILE_ENV = frozenset({"PYTEST_CURRENT_TEST", "STATE_OUT"})


#: The modules a topic file is loaded as (``compare.topics.user``): the user's own code.
TOPIC_FILE_MODULES = "bayes_compare_topic_"


def _own_name(name: str | None) -> bool:
    if not name:
        return False
    return str(name).split(".")[0] in OWN or str(name).startswith(TOPIC_FILE_MODULES)


def _owner(value: Any) -> str | None:
    """The module an object was defined in: a function's or class's own, else its type's.

    Read without ``getattr`` on the object (a property or ``__getattr__`` of another
    package's object could do anything): a function's ``__wrapped__`` from its dict.
    """
    if isinstance(value, functools.partial):
        value = value.func
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__func__
    if isinstance(value, types.FunctionType):
        wrapped = value.__dict__.get("__wrapped__")
        if wrapped is not None and _own_name(_owner(wrapped)):
            return _owner(wrapped)
        return value.__module__
    if isinstance(value, type):
        return value.__module__
    if isinstance(value, types.ModuleType):
        return value.__name__
    return type(value).__module__


def _describe(value: Any) -> str:
    """A description that holds across processes: what the object is, not where."""
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', '?')}"
    if isinstance(value, (int, float, str, bool, type(None))):
        return repr(value)
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _patches() -> list[str]:
    """``module.attr``, ``module.Class.attr`` and ``module.attr[key]`` holding objects of ours."""
    found = []
    for name, module in list(sys.modules.items()):
        if module is None or _own_name(name) or not isinstance(module, types.ModuleType):
            continue
        if type(module) is not types.ModuleType and not _own_name(type(module).__module__):
            continue  # a lazy stub (lazy_loader's): reading its namespace would import it
        if _own_name(type(module).__module__):  # a stand-in module of ours under another name
            found.append(f"sys.modules[{name!r}] is a {type(module).__qualname__} of ours")
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for attr, value in items:
            if isinstance(value, types.ModuleType):
                continue
            if _own_name(_owner(value)):
                found.append(f"{name}.{attr} = {_describe(value)}")
            elif type(value) is dict and len(value) < 10_000:  # a subclass may compute its items
                for key, item in list(value.items()):
                    if not isinstance(item, types.ModuleType) and _own_name(_owner(item)):
                        found.append(f"{name}.{attr}[{key!r}] = {_describe(item)}")
            elif isinstance(value, type) and value.__module__ == name:
                for cattr, cvalue in list(vars(value).items()):
                    if _own_name(_owner(cvalue)):
                        found.append(f"{name}.{value.__qualname__}.{cattr} = {_describe(cvalue)}")
    return sorted(found)


def _signals() -> dict[str, str]:
    handlers = {}
    for sig in signal.valid_signals():
        try:
            handler = signal.getsignal(sig)
        except (OSError, ValueError):
            continue
        try:
            label = signal.Signals(sig).name
        except ValueError:  # a real-time signal: no name
            label = f"SIG{int(sig)}"
        handlers[label] = _describe(handler)
    return handlers


def _blas_threads() -> list[list[Any]]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return sorted(
        [info.get("internal_api"), info.get("filepath"), info.get("num_threads")]
        for info in threadpool_info()
    )


def _loggers() -> dict[str, list[Any]]:
    found = {}
    manager = logging.Logger.manager
    for name, logger in [("root", logging.getLogger()), *manager.loggerDict.items()]:
        if isinstance(logger, logging.Logger):
            found[name] = [
                logger.level,
                logger.propagate,
                logger.disabled,
                sorted(type(h).__qualname__ for h in logger.handlers),
            ]
    return found


def _pytensor_config() -> dict[str, str]:
    pytensor = sys.modules.get("pytensor")
    if pytensor is None:
        return {}
    config = pytensor.config
    found = {}
    for param in getattr(config, "_config_var_dict", {}).values():
        name = getattr(param, "name", None) or getattr(param, "fullname", None)
        if name is None or not hasattr(param, "val"):  # never read: not computed yet
            continue
        found[name] = repr(param.val)
    return found


def _random_states() -> dict[str, str]:
    import hashlib
    import random

    states = {"random": hashlib.sha256(repr(random.getstate()).encode()).hexdigest()}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        state = numpy.random.get_state()
        states["numpy.random"] = hashlib.sha256(repr(state).encode()).hexdigest()
        states["numpy.seterr"] = repr(sorted(numpy.geterr().items()))
        states["numpy.printoptions"] = repr(sorted(numpy.get_printoptions().items()))
    return states


def _libraries() -> dict[str, str]:
    """Options of the scientific stack that a library could set for everyone."""
    found = {}
    xarray = sys.modules.get("xarray")
    if xarray is not None:
        from xarray.core.options import OPTIONS

        found["xarray.OPTIONS"] = repr(sorted(OPTIONS.items()))
    arviz_base = sys.modules.get("arviz_base")
    if arviz_base is not None:
        found["arviz_base.rcParams"] = repr(
            sorted((k, repr(v)) for k, v in arviz_base.rcParams.items())
        )
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is not None:
        backend = matplotlib.rcParams._get("backend")  # not resolved: a sentinel until used
        found["matplotlib.backend"] = backend if isinstance(backend, str) else "(not chosen yet)"
        found["matplotlib.rcParams"] = repr(
            sorted((k, repr(v)) for k, v in dict.items(matplotlib.rcParams) if k != "backend")
        )
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        found["matplotlib.pyplot"] = repr((pyplot.get_fignums(), pyplot.isinteractive()))
    llvmlite_ffi = sys.modules.get("llvmlite.binding.ffi")
    if llvmlite_ffi is not None:
        lock = getattr(llvmlite_ffi.lib, "_lock", None)
        callbacks = getattr(lock, "_cblist", [])
        found["llvmlite lock callbacks"] = repr(
            sorted(
                f"{getattr(a, '__module__', '?')}.{getattr(a, '__qualname__', '?')}"
                for a, _ in callbacks
            )
        )
    return found


def snapshot() -> dict[str, Any]:
    """This process's shared state, as plain JSON values (see the module)."""
    mask = os.umask(0)
    os.umask(mask)
    return {
        "environ": {k: v for k, v in os.environ.items() if k not in VOLATILE_ENV},
        "gc": [list(gc.get_threshold()), gc.isenabled()],
        "signals": _signals(),
        "meta_path": [
            _describe(type(f)) if not isinstance(f, type) else _describe(f) for f in sys.meta_path
        ],
        "path_hooks": [_describe(h) for h in sys.path_hooks],
        "sys": {
            "recursionlimit": sys.getrecursionlimit(),
            "switchinterval": sys.getswitchinterval(),
            "excepthook": _describe(sys.excepthook),
            "displayhook": _describe(sys.displayhook),
            "dlopenflags": sys.getdlopenflags(),
            "cwd": os.getcwd(),
            "umask": mask,
        },
        "warnings": [repr(f) for f in warnings.filters],
        "loggers": _loggers(),
        "blas_threads": _blas_threads(),
        "random": _random_states(),
        "pytensor.config": _pytensor_config(),
        "libraries": _libraries(),
        "modules": sorted(name for name in sys.modules if not _own_name(name)),
        "patches": _patches(),
        "threads": sorted(t.name for t in threading.enumerate() if t.is_alive() and not t.daemon),
    }


def differences(
    before: dict[str, Any], after: dict[str, Any], *, same_process: bool = True
) -> list[str]:
    """What changed from ``before`` to ``after``, one line each.

    ``same_process=False`` compares two processes: their global random states,
    seeded by the operating system, their working folders and their module sets (which
    depend on what the compile caches held) are not compared.

    Modules imported in between are allowed (a use imports what it needs); modules that were loaded and are gone, or objects of ours in another
    package's namespace, are not. Options that did not exist before (PyTensor's flags
    read for the first time, loggers created) are compared only where both have them.
    """
    lines = []
    env_b, env_a = before["environ"], after["environ"]
    for key in sorted(set(env_b) | set(env_a)):
        if env_b.get(key) != env_a.get(key):
            lines.append(f"os.environ[{key!r}]: {env_b.get(key)!r} -> {env_a.get(key)!r}")
    for section in ("gc", "meta_path", "path_hooks", "warnings", "blas_threads", "threads"):
        if before[section] != after[section]:
            lines.append(f"{section}: {before[section]!r} -> {after[section]!r}")
    sections = ["signals", "sys", "loggers", "pytensor.config", "libraries"]
    for section in [*sections, "random"] if same_process else sections:
        b, a = before[section], after[section]
        for key in sorted(set(b) & set(a)):
            if not same_process and (section, key) == ("sys", "cwd"):
                continue  # two processes may start in two folders
            if b[key] != a[key]:
                lines.append(f"{section}[{key!r}]: {b[key]!r} -> {a[key]!r}")
        for key in sorted(set(b) - set(a)):
            lines.append(f"{section}[{key!r}] removed")
    # Two processes may load other modules for the same work (numba imports more for a
    # compile than for a load from its cache): sys.modules is compared within a process.
    gone = sorted(set(before["modules"]) - set(after["modules"])) if same_process else []
    if gone:
        lines.append(f"modules removed from sys.modules: {gone}")
    for patch in sorted(set(after["patches"]) - set(before["patches"])):
        lines.append(f"patched: {patch}")
    return lines


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(snapshot(), out)
