"""Reading a data column from a CSV file, with errors that point at the line.

Format: a header line naming the columns, then one observation per line.  A
file with one column needs no ``--column``.  Every cell is checked against
the topic's data kind before any maths runs, so a bad cell is reported as
``file, line N, column 'c': 'value' is ...; fix``, never as a NaN later on.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from compare.registry import InputError

MISSING = {"", "na", "nan", "null", "none"}


@dataclass(frozen=True)
class Column:
    """Raw text cells of one CSV column and the file lines they came from."""

    name: str
    cells: tuple[str, ...]
    lines: tuple[int, ...]
    source: str


def read_column(path: str | Path, column: str | None) -> Column:
    """Read ``column`` (or the only column) of the CSV file at ``path``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file {str(path)!r} does not exist; give a CSV path "
                         "or builtin:NAME (see `bayes-compare describe TOPIC`)")
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text; save it as a UTF-8 CSV file") from None
    except csv.Error as err:
        raise InputError(f"{path} is not a readable CSV file ({err})") from None
    # Drop fully blank lines but keep line numbers right.
    numbered = [(i + 1, row) for i, row in enumerate(rows) if any(c.strip() for c in row)]
    if not numbered:
        raise InputError(f"{path} is empty; it needs a header line and at least one data line")
    header_line, header = numbered[0]
    header = [h.strip() for h in header]
    if all(_is_number(h) for h in header):
        raise InputError(f"{path}, line {header_line}: the first line must name the columns "
                         f"(e.g. 'x'), got {','.join(header)!r}; add a header line")
    if column is None:
        if len(header) != 1:
            raise InputError(f"{path} has columns {', '.join(header)}; "
                             "choose one with --column NAME")
        column = header[0]
    if column not in header:
        raise InputError(f"{path} has no column {column!r}; its columns are: {', '.join(header)}")
    j = header.index(column)
    cells, lines = [], []
    for line, row in numbered[1:]:
        if j >= len(row):
            raise InputError(f"{path}, line {line}: the row has {len(row)} field(s), "
                             f"so column {column!r} is missing; fix that line")
        cells.append(row[j].strip())
        lines.append(line)
    if not cells:
        raise InputError(f"{path} has a header but no data lines in column {column!r}; "
                         "a run needs at least one observation")
    return Column(name=column, cells=tuple(cells), lines=tuple(lines), source=str(path))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_column(column: Column, kind: str) -> np.ndarray:
    """Check every cell against ``kind`` and return the observations.

    Returns a float array for numeric kinds and an object array of strings
    for ``labels``.
    """
    where = f"{column.source}, line {{line}}, column {column.name!r}"
    if kind == "labels":
        for cell, line in zip(column.cells, column.lines):
            if cell.lower() in MISSING:
                raise InputError(f"{where.format(line=line)}: missing label; fill it in or "
                                 "remove that line")
        return np.array(column.cells, dtype=object)
    out = np.empty(len(column.cells))
    for i, (cell, line) in enumerate(zip(column.cells, column.lines)):
        here = where.format(line=line)
        if cell.lower() in MISSING:
            raise InputError(f"{here}: missing value; fill it in or remove that line")
        try:
            value = float(cell)
        except ValueError:
            raise InputError(f"{here}: {cell!r} is not a number; fix or remove that line") from None
        if not math.isfinite(value):
            raise InputError(f"{here}: {cell!r} is not a finite number; fix or remove that line")
        check_value(value, kind, here, cell)
        out[i] = value
    return out


def check_value(value: float, kind: str, where: str, shown: str) -> None:
    """Raise InputError when ``value`` lies outside the support of ``kind``."""
    if kind == "binary" and value not in (0.0, 1.0):
        raise InputError(f"{where}: {shown} is not 0 or 1; code the outcomes as 0/1")
    if kind == "counts" and (value < 0 or value != round(value)):
        raise InputError(f"{where}: {shown} is not a count (an integer >= 0); "
                         "Poisson data must be whole numbers >= 0")
    if kind == "nonnegative" and value < 0:
        raise InputError(f"{where}: {shown} is negative; this likelihood needs values >= 0")


def check_array(values: np.ndarray, kind: str, source: str) -> np.ndarray:
    """The same checks for data given as an array (Python API, simulators)."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise InputError(f"{source}: data must be one column (1-D), got shape {values.shape}")
    if values.size == 0:
        raise InputError(f"{source}: no observations; a run needs at least one")
    if kind == "labels":
        return np.array([str(v) for v in values], dtype=object)
    try:
        out = values.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{source}: data must be numbers for this topic") from None
    for i, value in enumerate(out):
        here = f"{source}, row {i}"
        if not math.isfinite(value):
            raise InputError(f"{here}: {value!r} is not a finite number; fix or remove it")
        check_value(value, kind, here, f"{value:g}")
    return out


def natural_sort(labels) -> list[str]:
    """Sort labels numerically when they all are numbers, else as text."""
    labels = list(labels)
    if all(_is_number(s) for s in labels):
        return sorted(labels, key=lambda s: (float(s), s))
    return sorted(labels)
