"""``bayes-compare doctor``: the versions, each accelerator on or off and why, the cache.

The accelerators (:mod:`compare.accel`) make bayes-compare fast by reaching
into other packages; each runs only with the package versions it was verified
with. After an upgrade of numba, llvmlite, nutpie or PyTensor a run may be
slower, never wrong: this command says which accelerator is off and why
(an unverified version, ``BAYES_COMPARE_ACCEL=0``, a switch of its own, the
cache folder refused), so that the slowness has a name.
"""

from __future__ import annotations

import json
import platform
import sys
from typing import Annotated, Any

import typer
from rich.table import Table

from compare import accel
from compare.accel.cache_root import ENV as CACHE_ENV
from compare.accel.cache_root import cache_root
from compare.interfaces.cli_common import app, make_console

#: The packages whose versions the report shows (those the accelerators reach into
#: first, then the rest of the modelling stack).
PACKAGES = (
    "bayes-compare",
    "pymc",
    "pytensor",
    "nutpie",
    "numba",
    "llvmlite",
    "numpy",
    "scipy",
    "xarray",
    "arviz-base",
    "dask",
    "jax",
)


def report() -> dict[str, Any]:
    """What ``doctor --json`` prints (a public document: extend, never rename)."""
    from compare.accel.compiled_cache import cache_dir  # heavy: NumPy, for the folder's check

    folder = cache_dir()
    usable = None
    if folder is not None:
        from compare.accel.cache_store import usable_folder  # light

        usable = usable_folder(folder, make=False)  # a look: doctor makes nothing
    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "versions": {name: accel.installed(name) for name in PACKAGES},
        "accel_setting": accel.setting(),
        "accelerators": [
            {
                "name": s.name,
                "kind": s.kind,
                "on": s.on,
                "reason": s.reason,
                "summary": s.summary,
                "verified": s.verified,
            }
            for s in accel.status()
        ],
        "cache": {
            "root": None if cache_root() is None else str(cache_root()),
            "compiled": None if folder is None else str(folder),
            "usable": usable,
        },
    }


@app.command()
def doctor(
    json_out: Annotated[bool, typer.Option("--json", help="one JSON document on stdout")] = False,
) -> None:
    """The installed versions, each accelerator on or off (and why), the cache folder."""
    doc = report()
    if json_out:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    out = make_console()
    versions = ", ".join(f"{k} {v or 'not installed'}" for k, v in doc["versions"].items())
    out.print(f"python {doc['python']} ({doc['executable']})", markup=False, soft_wrap=True)
    out.print(versions, markup=False, soft_wrap=True)
    table = Table(title=f"accelerators ({accel.ENV}={'1' if doc['accel_setting'] else '0'})")
    for column in ("accelerator", "kind", "state", "why", "verified with"):
        table.add_column(column)
    for row in doc["accelerators"]:
        table.add_row(
            row["name"], row["kind"], "on" if row["on"] else "OFF", row["reason"], row["verified"]
        )
    out.print(table)
    cache = doc["cache"]
    if cache["compiled"] is None:
        out.print(f"compiled-model cache: off ({CACHE_ENV})", markup=False)
    else:
        state = "usable" if cache["usable"] else "NOT usable (see the note above)"
        out.print(f"compiled-model cache: {cache['compiled']} ({state})", markup=False)
