"""Figures drawn to files without touching the caller's matplotlib.

Every figure bayes-compare makes (the report's, SBC's, the sensitivity sweep's)
is a PNG file, and in a user's process (``CheckResult.to_html``, the studies'
API) the matplotlib it draws with is the user's: ``matplotlib.use("Agg")``
there would switch a notebook's inline backend off for the rest of the session.
So :func:`drawing` never chooses a backend; it draws on whichever the process
has (the command line chooses Agg for its own processes through ``MPLBACKEND``,
see ``compare.interfaces.cli.main``; a process with no display falls back to
Agg by itself), with interactive mode off (no window opens), rcParams restored
and every figure opened inside closed on the way out, failed ones too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType


@contextmanager
def drawing() -> Iterator[ModuleType]:
    """``matplotlib.pyplot`` for figures drawn to files, the caller's state as found.

    >>> with drawing() as plt:
    ...     fig, ax = plt.subplots()
    ...     _ = ax.plot([0, 1])
    ...     fig.savefig(path)  # doctest: +SKIP
    """
    import matplotlib  # heavy: matplotlib only where a figure is drawn
    import matplotlib.pyplot as plt  # heavy: as above

    before = set(plt.get_fignums())
    with matplotlib.rc_context(), plt.ioff():
        try:
            yield plt
        finally:
            for number in set(plt.get_fignums()) - before:
                plt.close(number)
