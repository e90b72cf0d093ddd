"""What a new Python process imports or does: the tests of the import-time fixes
(compare/accel/lazy_dask.py, lazy_arviz.py, scipy_docs.py, _blas_threads.py) run a
probe script in one."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any


def run_probe(script: str, env: Mapping[str, str] | None = None) -> Any:
    """Run ``script`` with ``python -c`` (in ``env``, else this process's environment);
    the JSON it printed on its last line."""
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env=None if env is None else dict(env),
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])
