"""nutpie's trace as a DataTree, one ``xr.Dataset`` per group.

Why
---
``nutpie.sample`` turns its arrow trace into a DataTree with arviz-base's
``from_dict``, which builds one ``DataArray`` per variable (deep-copying every
coordinate for each) and then merges them into a Dataset, and fills the warm-up
groups' arrays even when they are not kept. For a beta-binomial run that was 22
of the run's 75 CPU-ms (100 runs of the null study, one BLAS thread, 2026-12-05):
the largest single part of a warm run, larger than the sampling.

What
----
:func:`arrow_to_tree` takes the arguments of nutpie's ``_arrow_to_arviz`` and
returns the same DataTree: the same groups, variables (in the same order),
dims, coordinates, dtypes, values and attributes; only the ``created_at``
time differs. It builds each group as one Dataset of the variables' arrays,
filled by nutpie's own ``_add_arrow_data``, and skips the warm-up groups when
``save_warmup`` is off. Arguments it was not written for (unconstrained draws
kept, a keyword a later nutpie adds) go to nutpie's own function.

It replaces nutpie's function only inside :func:`faster_conversion`, which
``compiled_cache.sample`` enters, and only in a process of ours
(:func:`compare.accel.enable`) with a verified nutpie: the wrapper installed in
nutpie's module reads a thread-local switch, so nutpie's own ``nutpie.sample`` in
another thread converts as nutpie does. In a user's process (``compare.check``)
nothing is installed and nutpie converts its trace itself.
``tests/compare/accel/test_nutpie_trace.py`` compares the two on real traces.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from compare.accel import active

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "nutpie-trace"

#: The keywords of nutpie's ``_arrow_to_arviz`` (nutpie 0.16) that are handled here.
KNOWN = {
    "skip_vars",
    "reparameterized_names",
    "keep_unconstrained_draw",
    "coords",
    "save_warmup",
    "attrs",
}

_LOCAL = threading.local()
_INSTALL = threading.Lock()


def arrow_to_tree(draw_batches: Any, stat_batches: Any, **kwargs: Any) -> Any:
    """nutpie's ``_arrow_to_arviz(draw_batches, stat_batches, **kwargs)``, the same tree.

    ``draw_batches`` and ``stat_batches`` hold one arrow record batch per chain
    (warm-up rows first, marked by the stats' ``tuning`` column).
    """
    module = sys.modules["nutpie.sample"]
    original = getattr(module, "_original_arrow_to_arviz", module._arrow_to_arviz)
    if set(kwargs) - KNOWN or (
        kwargs.get("keep_unconstrained_draw") and kwargs.get("reparameterized_names")
    ):
        return original(draw_batches, stat_batches, **kwargs)

    import xarray as xr  # heavy: only when a trace is converted
    from arviz_base import rcParams  # heavy: only when a trace is converted
    from arviz_base.base import make_attrs  # heavy: only when a trace is converted

    save_warmup = kwargs.get("save_warmup")
    if save_warmup is None:
        save_warmup = rcParams["data.save_warmup"]
    skip_vars = kwargs.get("skip_vars") or []
    coords = kwargs.get("coords") or {}
    attrs = kwargs.get("attrs") or {}
    add = module._add_arrow_data

    n_chains = len(draw_batches)
    tuning = [int(stat.column("tuning").to_numpy().sum()) for stat in stat_batches]
    longest_tuning = max(tuning)
    longest_posterior = max(d.num_rows - t for d, t in zip(draw_batches, tuning, strict=True))
    # nutpie's order of groups and of the filling (draws, then stats; chain by chain).
    groups: dict[str, dict[str, np.ndarray]] = {
        "posterior": {},
        "sample_stats": {},
        "warmup_posterior": {},
        "warmup_sample_stats": {},
    }
    dims: dict[str, list[str]] = {}
    for batches, kind, skip in (
        (draw_batches, "posterior", []),
        (stat_batches, "sample_stats", skip_vars),
    ):
        for chain, batch in enumerate(batches):
            n_tuning = tuning[chain]
            if save_warmup:
                warm = batch.slice(0, n_tuning)
                add(groups[f"warmup_{kind}"], longest_tuning, warm, chain, n_chains, dims, skip)
            rest = batch.slice(n_tuning, batch.num_rows - n_tuning)
            add(groups[kind], longest_posterior, rest, chain, n_chains, dims, skip)
    for name in kwargs.get("reparameterized_names") or ():
        groups["posterior"].pop(name, None)
        groups["warmup_posterior"].pop(name, None)

    origin = rcParams["data.index_origin"]
    sample_dims = list(rcParams["data.sample_dims"])
    datasets = {}
    for group, data in groups.items():
        if "warmup" in group and not save_warmup:
            continue
        data_vars: dict[str, tuple[list[str], np.ndarray]] = {}
        used: dict[str, Any] = {}  # each dim's coordinate, in order of first use
        for name, values in data.items():
            given = list(dims.get(name, []))
            var_dims = [d for d in sample_dims if d not in given] + given
            unnamed = 0
            for axis, length in enumerate(values.shape):
                # arviz-base's generate_dims_coords: "<name>_dim_<i>" for unnamed axes.
                if axis >= len(var_dims) or var_dims[axis] is None:
                    default = f"{name}_dim_{unnamed}"
                    unnamed += 1
                    if axis >= len(var_dims):
                        var_dims.append(default)
                    else:
                        var_dims[axis] = default
                dim = var_dims[axis]
                if dim not in used:
                    used[dim] = coords[dim] if dim in coords else np.arange(origin, length + origin)
            data_vars[name] = (var_dims, values)
        # nutpie's stats "chain" and "draw" repeat the coordinates: from_dict's merge
        # keeps the coordinates, and so does this.
        for name in [n for n in data_vars if n in used]:
            del data_vars[name]
        datasets[group] = xr.Dataset(
            data_vars,
            coords=used,
            attrs=make_attrs(attrs=attrs.get(group), sample_dims=sample_dims),
        )
    tree = xr.DataTree.from_dict(datasets)
    if "/" in attrs:
        tree.attrs = attrs["/"]
    return tree


@contextlib.contextmanager
def faster_conversion() -> Iterator[None]:
    """Inside, this thread's ``nutpie.sample`` converts its trace with :func:`arrow_to_tree`
    (in a process of ours; elsewhere, nothing changes)."""
    if not active(NAME):
        yield
        return
    _install()
    before = getattr(_LOCAL, "on", False)
    _LOCAL.on = True
    try:
        yield
    finally:
        _LOCAL.on = before


def _install() -> None:
    """Put the switching wrapper in nutpie's module, once."""
    import nutpie  # noqa: F401  # heavy: only when sampling (loads nutpie.sample)

    module: Any = sys.modules["nutpie.sample"]
    with _INSTALL:
        if hasattr(module, "_original_arrow_to_arviz"):
            return
        original = module._arrow_to_arviz

        def switching(draw_batches: Any, stat_batches: Any, **kwargs: Any) -> Any:
            if getattr(_LOCAL, "on", False):
                return arrow_to_tree(draw_batches, stat_batches, **kwargs)
            return original(draw_batches, stat_batches, **kwargs)

        module._original_arrow_to_arviz = original
        module._arrow_to_arviz = switching
