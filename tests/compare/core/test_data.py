"""CSV reading and column checks (the messages are tested end to end in test_cli)."""

from __future__ import annotations

import numpy as np
import pytest

from compare.core.data import check_array, natural_sort, parse_column, read_column
from compare.core.registry import InputError


def test_reads_named_column_skipping_blank_lines_and_bom(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("\ufeffid,x\n1,2.5\n\n2,-1e3\n", encoding="utf-8")
    col = read_column(path, "x")
    assert col.cells == ("2.5", "-1e3") and col.lines == (2, 4)
    np.testing.assert_array_equal(parse_column(col, "reals"), [2.5, -1000.0])


def test_short_row_names_its_line(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,x\n1,2\n3\n")
    with pytest.raises(InputError, match="line 3: the row has 1 field"):
        read_column(path, "x")


def test_labels_keep_text_and_reject_missing(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("c\nred\n blue \n")
    assert list(parse_column(read_column(path, None), "labels")) == ["red", "blue"]
    path.write_text("c\nred\nNA\n")
    with pytest.raises(InputError, match=r"line 3.*missing label"):
        parse_column(read_column(path, None), "labels")


def test_natural_sort():
    assert natural_sort(["10", "9", "1.5"]) == ["1.5", "9", "10"]
    assert natural_sort(["b", "a", "10"]) == ["10", "a", "b"]


@pytest.mark.parametrize(
    "values, kind, word",
    [
        ([0.0, 2.0], "binary", "not 0 or 1"),
        ([1.0, 0.5], "counts", "not a count"),
        ([1.0, -0.5], "nonnegative", "negative"),
        ([1.0, np.nan], "reals", "not a finite number"),
        ([], "reals", "no observations"),
        ([[1.0]], "reals", "one column"),
    ],
)
def test_array_checks(values, kind, word):
    with pytest.raises(InputError, match=word):
        check_array(np.array(values), kind, "data")


def test_builtin_diabetes_is_scikit_learns_without_importing_it():
    """builtin:diabetes reads scikit-learn's bundled files itself: the same numbers as
    load_diabetes(scaled=False), standardised, and no scikit-learn import (1.7 s)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from compare.topics import get_topic\n"
        "get_topic('linear-regression').builtin_data('diabetes').load()\n"
        "print('sklearn' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    )
    assert proc.stdout.strip().splitlines()[-1] == "False"

    from sklearn.datasets import load_diabetes

    from compare.topics import get_topic

    table = get_topic("linear-regression").builtin_data("diabetes").load()
    sk = load_diabetes(scaled=False)
    x = (sk.data - sk.data.mean(axis=0)) / sk.data.std(axis=0)
    y = (sk.target - sk.target.mean()) / sk.target.std()
    assert table.features == tuple(sk.feature_names)
    np.testing.assert_array_equal(table.x, x)
    np.testing.assert_array_equal(table.y, y)
