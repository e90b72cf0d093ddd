"""`run` reuses a saved run when nothing it depends on changed (compare/outputs/run_cache.py).

What a user relies on: the second `make report` does not sample again, yet any
change (data, a hyperparameter, a setting, the seed) or `--force` does, and a
damaged folder is run again rather than trusted.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from compare.core.defaults import DEFAULT
from compare.interfaces.cli import main
from compare.outputs.run_cache import reusable, run_key
from compare.topics import get_topic

SHORT = ["--draws", "200", "--tune", "200", "--chains", "2"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``bayes-compare run ARGS`` in this process.

    The reuse is decided from the folder on disk, not from anything a process
    holds, so a new process per command (32 CPU-s for the four, most of it
    imports and model loads) checked nothing more.
    """
    code = main(["run", *args])
    printed = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, printed.out, printed.err)


def test_the_key_follows_the_content_not_the_objects() -> None:
    topic = get_topic("dirichlet-categorical")
    labels = np.array(["a", "b", "a"], dtype=object)
    hyper = {"concentration": 1.0, "categories": None}
    key = run_key(topic=topic, data=labels, hyper=hyper, settings=DEFAULT)
    # Equal labels in another object array (other pointers): the same key.
    assert key == run_key(topic=topic, data=labels.copy(), hyper=dict(hyper), settings=DEFAULT)
    changed = [
        run_key(topic=topic, data=labels[:2], hyper=hyper, settings=DEFAULT),
        run_key(topic=topic, data=labels, hyper={**hyper, "concentration": 2.0}, settings=DEFAULT),
        run_key(
            topic=topic,
            data=labels,
            hyper=hyper,
            settings=dataclasses.replace(DEFAULT, seed=DEFAULT.seed + 1),
        ),
        run_key(topic=get_topic("beta-binomial"), data=labels, hyper=hyper, settings=DEFAULT),
    ]
    assert key not in changed and len(set(changed)) == len(changed)


@pytest.mark.mcmc
def test_an_unchanged_run_is_reused_and_any_change_resamples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bb"
    first = _run(capsys, "beta-binomial", "--out", str(out), *SHORT)
    assert first.returncode in (0, 1, 2), first.stderr
    saved = (out / "result.json").read_bytes()
    doc = json.loads(saved)
    assert len(doc["run_key"]) == 64

    again = _run(capsys, "beta-binomial", "--out", str(out), *SHORT, "--json", "-")
    assert again.returncode == first.returncode
    assert "reused the saved run" in again.stderr
    assert (out / "result.json").read_bytes() == saved  # not rewritten
    printed = json.loads(again.stdout)
    assert printed["verdict"] == doc["verdict"] and "run_key" not in printed

    forced = _run(capsys, "beta-binomial", "--out", str(out), *SHORT, "--force")
    assert "reused" not in forced.stdout + forced.stderr
    assert json.loads((out / "result.json").read_bytes())["run_key"] == doc["run_key"]

    reseeded = _run(capsys, "beta-binomial", "--out", str(out), *SHORT, "--seed", "12345")
    assert "reused" not in reseeded.stdout + reseeded.stderr
    assert json.loads((out / "result.json").read_bytes())["run_key"] != doc["run_key"]


def test_a_damaged_folder_is_not_reused(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text('{"topic": "beta-binomial", "run_key": "ab')
    assert reusable(tmp_path, "ab") is None
    assert reusable(tmp_path / "absent", "ab") is None
