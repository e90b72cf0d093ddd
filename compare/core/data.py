"""Reading a data column from a CSV file, with errors that point at the line.

Format: a header line naming the columns, then one observation per line.  A
file with one column needs no ``--column``.  Every cell is checked against
the topic's data kind before any maths runs, so a bad cell is reported as
``file, line N, column 'c': 'value' is ...; fix``, never as a NaN later on.
"""

from __future__ import annotations

import codecs
import csv
import importlib.util
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from compare.core.registry import BuiltinData, InputError, Topic

MISSING = {"", "na", "nan", "null", "none"}

#: Files already found to be UTF-8 text, by (path, size, modification time): a run
#: reads the header several times, and a large file is scanned once.
_TEXT_OK: set[tuple[str, int, int]] = set()


def _is_file(path: Path) -> bool:
    """``path.is_file()``, with an OS refusal (e.g. a name too long) as InputError."""
    try:
        return path.is_file()
    except OSError as err:
        raise InputError(
            f"data file {str(path)[:80]!r}: {err.strerror or err}; give a CSV path or builtin:NAME"
        ) from None


def check_text_file(path: str | Path, *, chunk_bytes: int = 1 << 20) -> None:
    """Raise InputError unless the file at ``path`` is UTF-8 text without NUL bytes.

    The one strict check every CSV reader calls before parsing (the CSV
    module would otherwise raise ``UnicodeDecodeError`` deep inside a read, or
    ``csv.Error`` on a NUL).  The message names the file, the line, the
    offending byte and its position in the line.  One pass in 1 MiB blocks:
    bounded memory, about 1 GB/s.
    """
    path = Path(path)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key in _TEXT_OK:
        return
    newlines = 0  # newlines before ``buf``
    line_start = 0  # file offset where the current line starts
    base = 0  # file offset of ``buf[0]``
    pending = b""
    with path.open("rb") as fh:
        while True:
            chunk = fh.read(chunk_bytes)
            final = not chunk
            buf = pending + chunk
            nul = buf.find(b"\x00")
            try:
                _, consumed = codecs.utf_8_decode(
                    buf[:nul] if nul >= 0 else buf, "strict", final or nul >= 0
                )
                bad = nul if nul >= 0 else None
            except UnicodeDecodeError as e:
                bad = e.start
                consumed = e.start
            if bad is not None:
                before = buf[:bad]
                line = newlines + before.count(b"\n") + 1
                last = before.rfind(b"\n")
                start = base + last + 1 if last >= 0 else line_start
                column = base + bad - start + 1
                byte = buf[bad]
                what = "a NUL byte (0x00)" if byte == 0 else f"byte 0x{byte:02x}"
                raise InputError(
                    f"{path}, line {line}, byte {column} of the line: {what} is "
                    "not UTF-8 text; save the file as UTF-8 text (e.g. "
                    f"iconv -f latin1 -t utf-8 {path.name} > fixed.csv)"
                )
            done = buf[:consumed]
            count = done.count(b"\n")
            if count:
                line_start = base + done.rfind(b"\n") + 1
            newlines += count
            base += consumed
            pending = buf[consumed:]
            if final:
                break
    _TEXT_OK.add(key)


def _csv_rows(fh: Iterable[str], path: Path) -> Iterator[list[str]]:
    """``csv.reader`` rows, with a CSV syntax problem reported as InputError."""
    reader = csv.reader(fh)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise InputError(
                f"{path}, line {reader.line_num}: not a readable CSV line ({err}); fix that line"
            ) from None
        yield row


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
    if not _is_file(path):
        raise InputError(
            f"data file {str(path)!r} does not exist; give a CSV path "
            "or builtin:NAME (see `bayes-compare describe TOPIC`)"
        )
    check_text_file(path)
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = list(_csv_rows(fh, path))
    # Drop fully blank lines but keep line numbers right.
    numbered = [(i + 1, row) for i, row in enumerate(rows) if any(c.strip() for c in row)]
    if not numbered:
        raise InputError(f"{path} is empty; it needs a header line and at least one data line")
    header_line, header = numbered[0]
    header = [h.strip() for h in header]
    if all(_is_number(h) for h in header):
        raise InputError(
            f"{path}, line {header_line}: the first line must name the columns "
            f"(e.g. 'x'), got {','.join(header)!r}; add a header line"
        )
    if column is None:
        if len(header) != 1:
            raise InputError(
                f"{path} has columns {', '.join(header)}; choose one with --column NAME"
            )
        column = header[0]
    if column not in header:
        raise InputError(f"{path} has no column {column!r}; its columns are: {', '.join(header)}")
    j = header.index(column)
    cells, lines = [], []
    for line, row in numbered[1:]:
        if j >= len(row):
            raise InputError(
                f"{path}, line {line}: the row has {len(row)} field(s), "
                f"so column {column!r} is missing; fix that line"
            )
        cells.append(row[j].strip())
        lines.append(line)
    if not cells:
        raise InputError(
            f"{path} has a header but no data lines in column {column!r}; "
            "a run needs at least one observation"
        )
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
                raise InputError(
                    f"{where.format(line=line)}: missing label; fill it in or remove that line"
                )
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
        raise InputError(
            f"{where}: {shown} is not a count (an integer >= 0); "
            "Poisson data must be whole numbers >= 0"
        )
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


def natural_sort(labels: Iterable[Any]) -> list[str]:
    """Sort labels numerically when they all are numbers, else as text."""
    labels = list(labels)
    if all(_is_number(s) for s in labels):
        return sorted(labels, key=lambda s: (float(s), s))
    return sorted(labels)


# --- tables: a target column and feature columns (regression topics) ---------
@dataclass(frozen=True, eq=False)
class Table:
    """Numeric columns of a data set: the target and the inputs, in order.

    Attributes
    ----------
    x : array of shape (n, p)
        Input columns, in the order of ``features``.
    y : array of shape (n,)
        The target column.
    features : tuple of str
    target : str
    source : str
    """

    x: np.ndarray
    y: np.ndarray
    features: tuple[str, ...]
    target: str
    source: str

    @property
    def n(self) -> int:
        return int(self.y.size)


def _select(
    header: list[str], target: str | None, features: tuple[str, ...] | None, where: str
) -> tuple[str, tuple[str, ...]]:
    """Check the target and feature names against a header; default features = the rest."""
    target = target or "y"
    if target not in header:
        raise InputError(
            f"{where} has no target column {target!r}; its columns are: "
            f"{', '.join(header)}; name the target with --target NAME"
        )
    if features is None:
        features = tuple(h for h in header if h != target)
    dupes = sorted({f for f in features if features.count(f) > 1})
    if dupes:
        raise InputError(
            f"--features names {', '.join(dupes)} more than once; list each input column once"
        )
    missing = [f for f in features if f not in header]
    if missing:
        raise InputError(
            f"{where} has no column(s) {', '.join(map(repr, missing))}; its "
            f"columns are: {', '.join(header)}"
        )
    if target in features:
        raise InputError(f"the target {target!r} cannot also be a feature; drop it from --features")
    if not features:
        raise InputError(
            f"{where} has no input columns besides the target {target!r}; add "
            "one, or use --features"
        )
    return target, tuple(features)


def read_table(
    path: str | Path, *, target: str | None = None, features: tuple[str, ...] | None = None
) -> Table:
    """Read the target and feature columns of a CSV file, checking every cell."""
    _, target, features = table_columns(path, target=target, features=features)
    chunks = list(iter_table(path, target=target, features=features))
    x = np.concatenate([c[0] for c in chunks])
    y = np.concatenate([c[1] for c in chunks])
    return Table(x=x, y=y, features=features, target=target, source=str(path))


def table_columns(
    path: str | Path, *, target: str | None = None, features: tuple[str, ...] | None = None
) -> tuple[list[str], str, tuple[str, ...]]:
    """The header, and the checked target and feature names (default: all other columns)."""
    path = Path(path)
    header = _header(path)
    target, features = _select(header, target, features, str(path))
    return header, target, features


def iter_table(
    path: str | Path, *, target: str, features: tuple[str, ...], chunk_rows: int = 100_000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(x, y)`` blocks of at most ``chunk_rows`` rows: one pass, bounded memory.

    Every cell is checked; an error names its line and column.
    """
    path = Path(path)
    header = _header(path)
    idx = [header.index(f) for f in features] + [header.index(target)]
    names = [*features, target]
    block: list[list[float]] = []
    seen_header = False
    total = 0
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for line, row in enumerate(_csv_rows(fh, path), start=1):
            if not any(c.strip() for c in row):
                continue
            if not seen_header:
                seen_header = True
                continue
            values = []
            for j, name in zip(idx, names):
                where = f"{path}, line {line}, column {name!r}"
                if j >= len(row):
                    raise InputError(
                        f"{path}, line {line}: the row has {len(row)} field(s), "
                        f"so column {name!r} is missing; fix that line"
                    )
                cell = row[j].strip()
                if cell.lower() in MISSING:
                    raise InputError(f"{where}: missing value; fill it in or remove that line")
                try:
                    value = float(cell)
                except ValueError:
                    raise InputError(
                        f"{where}: {cell!r} is not a number; fix or remove that line"
                    ) from None
                if not math.isfinite(value):
                    raise InputError(
                        f"{where}: {cell!r} is not a finite number; fix or remove that line"
                    )
                values.append(value)
            block.append(values)
            if len(block) >= chunk_rows:
                arr = np.array(block)
                total += len(block)
                block = []
                yield arr[:, :-1], arr[:, -1]
    if block:
        arr = np.array(block)
        total += len(block)
        yield arr[:, :-1], arr[:, -1]
    if total == 0:
        raise InputError(
            f"{path} has a header but no data lines; a run needs at least one observation"
        )


def _header(path: Path) -> list[str]:
    """The header of a CSV file (checked like ``read_column`` does)."""
    if not _is_file(path):
        raise InputError(
            f"data file {str(path)!r} does not exist; give a CSV path "
            "or builtin:NAME (see `bayes-compare describe TOPIC`)"
        )
    check_text_file(path)
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for row in _csv_rows(fh, path):
            if any(c.strip() for c in row):
                header = [h.strip() for h in row]
                if all(_is_number(h) for h in header):
                    raise InputError(
                        f"{path}: the first line must name the columns, got "
                        f"{','.join(header)!r}; add a header line"
                    )
                return header
    raise InputError(f"{path} is empty; it needs a header line and at least one data line")


@dataclass(frozen=True)
class StreamedTable:
    """A CSV read in chunks (one pass, bounded memory) instead of loaded whole."""

    path: str
    target: str
    features: tuple[str, ...]
    chunk_rows: int = 100_000

    @property
    def source(self) -> str:
        return self.path

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return iter_table(
            self.path, target=self.target, features=self.features, chunk_rows=self.chunk_rows
        )


def table_from_arrays(
    x: np.ndarray,
    y: np.ndarray,
    *,
    features: tuple[str, ...] | None = None,
    target: str = "y",
    source: str = "array",
) -> Table:
    """A checked Table from arrays (Python API, builtin data)."""
    x = np.asarray(x, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    y = np.asarray(y, dtype=float)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.size:
        raise InputError(
            f"{source}: inputs of shape {x.shape} do not match a target of "
            f"shape {y.shape}; give one row per observation"
        )
    if y.size == 0:
        raise InputError(f"{source}: no observations; a run needs at least one")
    features = features or tuple(f"x{j}" for j in range(x.shape[1]))
    for name, arr in ((target, y), *((f, x[:, j]) for j, f in enumerate(features))):
        bad = ~np.isfinite(arr)
        if bad.any():
            raise InputError(
                f"{source}, row {int(np.flatnonzero(bad)[0])}, column {name!r}: "
                "not a finite number; fix or remove that row"
            )
    return Table(x=x, y=y, features=tuple(features), target=target, source=source)


# --- points: numeric columns without a target (mixture topics) ---------------
@dataclass(frozen=True, eq=False)
class Points:
    """Rows of numeric features, array of shape (n, d), e.g. for a mixture model."""

    x: np.ndarray
    features: tuple[str, ...]
    source: str

    @property
    def n(self) -> int:
        return int(self.x.shape[0])


def read_points(path: str | Path, *, features: tuple[str, ...] | None = None) -> Points:
    """Read the named (default: all) numeric columns of a CSV file, checking every cell."""
    path = Path(path)
    header = _header(path)
    features = tuple(header) if features is None else tuple(features)
    dupes = sorted({f for f in features if features.count(f) > 1})
    if dupes:
        raise InputError(
            f"--features names {', '.join(dupes)} more than once; list each column once"
        )
    missing = [f for f in features if f not in header]
    if missing:
        raise InputError(
            f"{path} has no column(s) {', '.join(map(repr, missing))}; its "
            f"columns are: {', '.join(header)}"
        )
    # iter_table wants a target: read the last feature as the "target" and re-join.
    *inputs, last = features
    chunks = list(iter_table(path, target=last, features=tuple(inputs)))
    x = np.concatenate([np.column_stack([c[0], c[1]]) for c in chunks])
    return Points(x=x, features=features, source=str(path))


def points_from_array(
    x: np.ndarray, *, features: tuple[str, ...] | None = None, source: str = "array"
) -> Points:
    """Checked Points from an array of shape (n, d) or (n,)."""
    x = np.asarray(x, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise InputError(
            f"{source}: points must be an array of shape (n, d) with n, d >= 1, got shape {x.shape}"
        )
    features = features or tuple(f"x{j}" for j in range(x.shape[1]))
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise InputError(
            f"{source}, row {i}, column {features[j]!r}: not a finite number; "
            "fix or remove that row"
        )
    return Points(x=x, features=tuple(features), source=source)


#: CSV files above this size are read in chunks (sufficient statistics in one pass).
STREAM_ABOVE_BYTES = 256 * 2**20


def feature_names(features: str | None) -> tuple[str, ...] | None:
    """The column names of ``--features a,b`` (None: not given)."""
    if features is None:
        return None
    names = tuple(f.strip() for f in features.split(","))
    if not all(names):
        raise InputError(
            f"--features {features!r} has an empty column name; list the columns as a,b"
        )
    return names


def load_data(
    topic: Topic,
    data: str | None,
    column: str | None,
    target: str | None = None,
    features: str | None = None,
    stream: bool = False,
) -> tuple[Any, BuiltinData | None, str]:
    """Read a topic's data as the commands give it: ``(data, builtin data set or None, source)``.

    ``data`` is ``None`` (the first builtin set), ``builtin:NAME`` or a CSV path;
    ``features`` is the comma-separated text of ``--features``.  A table with
    words or labels in its cells is read by the topic's ``text_table`` when it
    has one.  Bad input raises :class:`InputError` naming the option.
    """
    table = topic.data_kind == "table"
    points = topic.data_kind == "points"
    if table and column is not None:
        raise InputError(
            f"{topic.name} reads a table: name the target with --target and the "
            "inputs with --features, not --column"
        )
    if points and (column is not None or target is not None):
        raise InputError(
            f"{topic.name} reads rows of numeric columns: choose them with "
            "--features a,b (default: all), not --column/--target"
        )
    if not (table or points) and (target is not None or features is not None):
        raise InputError(f"{topic.name} reads one column: use --column, not --target/--features")
    if stream and not table:
        raise InputError(
            f"--stream reads a table CSV in chunks; {topic.name} does not read "
            "a table: drop --stream"
        )
    if data is not None and data.strip() == "":
        raise InputError(f"--data {data!r} is empty; give builtin:NAME or a CSV path")
    if data is None or data.startswith("builtin:"):
        if column is not None or target is not None or features is not None or stream:
            raise InputError(
                "--column, --target, --features and --stream apply to a CSV file "
                "given with --data PATH"
            )
        ds = topic.builtin[0] if data is None else topic.builtin_data(data[len("builtin:") :])
        return ds.load(), ds, f"builtin:{ds.name}"
    names = feature_names(features)
    if points:
        loaded = read_points(data, features=names)
        return loaded, None, f"{data}:{'+'.join(loaded.features)}"
    if table:
        _, target, names = table_columns(data, target=target, features=names)
        source = f"{data}:{target}~{'+'.join(names)}"
        if stream or Path(data).stat().st_size > STREAM_ABOVE_BYTES:
            return StreamedTable(str(data), target, names), None, source
        if callable(topic.text_table):  # None or Unsupported: numbers only
            labelled = topic.text_table(data, target=target, features=names)
            if labelled is not None:  # words or labels in the cells
                return labelled, None, source
        return read_table(data, target=target, features=names), None, source
    col = read_column(data, column)
    return parse_column(col, topic.data_kind), None, f"{data}:{col.name}"


def topic_data(
    topic: Any, data: Any, column: str | None, target: str | None, features: Sequence[str] | None
) -> tuple[Any, Any, str]:
    """``(data, builtin data set or None, source)`` for the Python API: what
    :func:`load_data` reads, or arrays given in Python."""

    if data is None or isinstance(data, (str, Path)):
        feats = None if features is None else ",".join(features)
        return load_data(topic, None if data is None else str(data), column, target, feats)
    if hasattr(data, "features"):  # a compare.core.data Table or Points
        return data, None, getattr(data, "source", "array")
    if topic.data_kind == "table":
        if not (isinstance(data, tuple) and len(data) == 2):
            raise InputError(
                f"{topic.name} reads a table: pass data=(x, y) with x of shape "
                "(n, k) and y of shape (n,), a CSV path or 'builtin:NAME'"
            )
        names = None if features is None else tuple(features)
        return (
            table_from_arrays(
                np.asarray(data[0]), np.asarray(data[1]), features=names, target=target or "y"
            ),
            None,
            "array",
        )
    if topic.data_kind == "points":
        names = None if features is None else tuple(features)
        return points_from_array(np.asarray(data, dtype=float), features=names), None, "array"
    return np.asarray(data), None, "array"


def sklearn_bundled(name: str) -> Path:
    """The path of a data file scikit-learn ships (``sklearn/datasets/data/<name>``),
    found without importing scikit-learn (1.7 s of imports, more than a small run's
    sampling). Its loaders read the same files (tests/compare/core/test_data.py)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("this builtin data set ships with scikit-learn: pip install scikit-learn")
    return Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data" / name
