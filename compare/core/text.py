"""Text shared by every page and table: numbers for a cell, and the HTML templates."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def fmt(value: Any, spec: str = ".4g") -> str:
    """A number for a table cell; n/a for missing, text kept as text."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(value)
    if isinstance(value, (float, np.floating)):
        return "n/a" if not math.isfinite(value) else format(value, spec)
    if isinstance(value, (list, tuple)):
        if len(value) > 8:
            return f"[{', '.join(fmt(v, spec) for v in value[:8])}, ... ({len(value)} values)]"
        return "[" + ", ".join(fmt(v, spec) for v in value) + "]"
    return str(value)


def template_env():
    """The Jinja2 environment of ``compare/templates`` (autoescaped, strict, with ``fmt``)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("compare", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = fmt
    return env
