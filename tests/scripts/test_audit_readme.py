"""scripts/audit_readme.py: the audit table, and the samplers' false-alarm row, into a README."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "audit_readme.py"
AUDIT_MD = """| topic | nutpie | pymc | advi |
|---|---|---|---|
| beta-binomial | agree | agree | 0.02 sd, x1.08 |

Samplers: the calibrated verdict.

| method | median seconds |
|---|---|
| nutpie | 1.0 |
"""


def _write(tmp_path: Path, pooled: dict | None) -> tuple[Path, Path, Path]:
    audit = tmp_path / "audit"
    audit.mkdir()
    (audit / "audit.md").write_text(AUDIT_MD)
    (audit / "audit.json").write_text(json.dumps({"done": 3, "rows": [{"seconds": 60.0}] * 3}))
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n<!-- audit-table -->\nold\n<!-- /audit-table -->\n\nafter\n")
    calibration = tmp_path / "calibration.json"
    if pooled is not None:
        calibration.write_text(json.dumps({"pooled": pooled}))
    return audit / "audit.md", readme, calibration


def _run(*args: Path) -> None:
    subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], check=True, capture_output=True)


def test_the_false_alarm_row_follows_the_matrix(tmp_path):
    pooled = {
        "nutpie": {"runs": 300, "alarms": 9, "rate": 0.03},
        "pymc": {"runs": 300, "alarms": 15, "rate": 0.05},
    }
    table, readme, calibration = _write(tmp_path, pooled)
    _run(table, readme, calibration)
    text = readme.read_text()
    assert "old" not in text and text.endswith("<!-- /audit-table -->\n\nafter\n")
    lines = text.split("\n")
    row = lines.index("| beta-binomial | agree | agree | 0.02 sd, x1.08 |") + 1
    # The columns follow the matrix's header: advi, an approximation, gets no rate.
    assert lines[row] == "| *false alarms, null (300 runs)* | 0.030 | 0.050 |  |"
    assert "False alarms: each sampler's realised rate" in text
    assert "| method | median seconds |" not in text  # the times stay in audit.md
    assert "3 cells, 3.0 minutes of run time" in text


def test_without_a_calibration_the_matrix_is_copied_alone(tmp_path):
    table, readme, calibration = _write(tmp_path, None)
    _run(table, readme, calibration)
    text = readme.read_text()
    assert "false alarms" not in text.lower()
    assert "| beta-binomial | agree | agree | 0.02 sd, x1.08 |\n\nSamplers:" in text


def test_the_note_gives_the_wall_time_once_the_audit_has_one(tmp_path):
    table, readme, calibration = _write(tmp_path, None)
    doc = json.loads((table.parent / "audit.json").read_text())
    (table.parent / "audit.json").write_text(json.dumps({**doc, "wall_seconds": 120.0}))
    _run(table, readme, calibration)
    assert "3 cells in 2.0 minutes, 3.0 minutes of run time" in readme.read_text()
