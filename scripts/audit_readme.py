"""Copy the audit table (``reports/audit/audit.md``) into README.md (``make audit``).

The table (topics x methods, and its legend; not the per-method times, which
stay in ``audit.md``) goes between the markers ``<!-- audit-table -->`` and
``<!-- /audit-table -->``, with the date and machine it was measured on.
When the per-sampler null calibration (``benchmarks/sampler_calibration.py``,
``make study``) has written CALIBRATION_JSON (default
``docs/sampler_calibration.json``, kept in the repository), the table gains
its row: each sampler's realised false-alarm rate at alpha = 0.05.

Usage: python scripts/audit_readme.py AUDIT_MD README_MD [CALIBRATION_JSON]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

START, END = "<!-- audit-table -->", "<!-- /audit-table -->"
CALIBRATION = Path("docs/sampler_calibration.json")


def calibration_row(table: str, path: Path) -> str:
    """The table's row of false-alarm rates per sampler ("" when not measured)."""
    if not path.exists():
        return ""
    pooled = json.loads(path.read_text(encoding="utf-8"))["pooled"]
    methods = [c.strip() for c in table.split("\n")[0].strip("|").split("|")][1:]
    runs = max(p["runs"] for p in pooled.values())
    cells = [f"{pooled[m]['rate']:.3f}" if m in pooled else "" for m in methods]
    return f"| *false alarms, null ({runs} runs)* | " + " | ".join(cells) + " |"


def main() -> None:
    table_path, readme_path = Path(sys.argv[1]), Path(sys.argv[2])
    # The matrix and its legend; the per-method times stay in audit.md (the README is short).
    table = table_path.read_text(encoding="utf-8").strip().split("\n\n| method |")[0]
    matrix, _, legend = table.partition("\n\n")
    row = calibration_row(matrix, Path(sys.argv[3]) if len(sys.argv) > 3 else CALIBRATION)
    if row:
        legend += (
            " False alarms: each sampler's realised rate at alpha = 0.05 in the null study"
            " ([docs/audit.md](docs/audit.md#null-calibration-per-sampler))."
        )
        table = f"{matrix}\n{row}\n\n{legend}"
    audit = json.loads((table_path.parent / "audit.json").read_text(encoding="utf-8"))
    seconds = sum(r["seconds"] or 0.0 for r in audit["rows"])
    wall = audit.get("wall_seconds")
    note = (
        f"Measured by `make audit` on {time.strftime('%Y-%m-%d')}, "
        f"{len(os.sched_getaffinity(0))} cores: {audit['done']} cells"
        + (f" in {wall / 60:.1f} minutes" if wall else "")
        + f", {seconds / 60:.1f} minutes of run time summed over cells"
        " ([how long it takes](docs/audit.md#how-long-it-takes))."
    )
    readme = readme_path.read_text(encoding="utf-8")
    if START not in readme or END not in readme:
        sys.exit(f"{readme_path}: no {START} ... {END} markers")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    readme_path.write_text(f"{head}{START}\n{table}\n\n{note}\n{END}{tail}", encoding="utf-8")
    print(f"wrote the audit table into {readme_path}")


if __name__ == "__main__":
    main()
