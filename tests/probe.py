"""What a new Python process imports or does: the tests of the import-time fixes
(compare/core/_lazy_dask.py, _lazy_arviz.py) run a probe script in one."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def run_probe(script: str) -> Any:
    """Run ``script`` with ``python -c``; the JSON it printed on its last line."""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])
