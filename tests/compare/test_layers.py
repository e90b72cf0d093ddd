"""The layering of ``compare/``, read from the source (every import, including
those inside functions): no import cycle, and no layer imports one above it.

Layers, bottom to top (``docs/architecture.md``)::

    accel -> core -> topics -> studies -> outputs -> interfaces

``compare/__init__.py`` and ``compare/registry.py`` (the public names) sit on top.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("accel", "core", "topics", "studies", "outputs", "interfaces")
TOP = len(LAYERS)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / "compare").rglob("*.py"))}


def imports(path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported compare module, line) for every import statement in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [
                (a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "compare"
            ]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "compare"
        ):
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.append((sub if sub in known else node.module, node.lineno))
    return [(m, line) for m, line in found if m in known]


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    return TOP


def graph() -> dict[str, dict[str, int]]:
    known = modules()
    return {m: {t: line for t, line in imports(p, known) if t != m} for m, p in known.items()}


def test_no_upward_import() -> None:
    upward = [
        f"{m} (layer {LAYERS[layer(m)] if layer(m) < TOP else 'top'}) imports {t} "
        f"(layer {LAYERS[layer(t)] if layer(t) < TOP else 'top'}) at line {line}"
        for m, targets in graph().items()
        for t, line in targets.items()
        if layer(t) > layer(m)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_cycle() -> None:
    edges = graph()
    # Tarjan's strongly connected components: any component of more than one module is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_checker_sees_a_planted_violation(tmp_path: Path) -> None:
    """Power: an upward import inside a function is found."""
    known = {"compare.core.x": tmp_path / "x.py", "compare.interfaces.cli": tmp_path / "cli.py"}
    (tmp_path / "x.py").write_text("def f():\n    from compare.interfaces.cli import app\n")
    found = imports(tmp_path / "x.py", known)
    assert found == [("compare.interfaces.cli", 2)]
    assert layer("compare.interfaces.cli") > layer("compare.core.x")


def unexplained_lazy_imports(path: Path) -> list[int]:
    """Lines of imports inside functions (or classes) that carry no comment saying why."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(path))
    module_level = set()
    for node in tree.body:
        module_level.add(id(node))
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports are module level
            module_level.update(id(n) for n in ast.walk(node))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and id(node) not in module_level
        and not any("#" in line for line in lines[node.lineno - 1 : node.end_lineno])
    ]


def test_every_lazy_import_says_why() -> None:
    """An import inside a function keeps a heavy package (PyMC, ArviZ, matplotlib, ...)
    out of a path that does not need it, and says so (``# heavy: ...``); any other
    import belongs at the top of its module."""
    found = [
        f"{module}:{line}"
        for module, path in modules().items()
        for line in unexplained_lazy_imports(path)
    ]
    assert not found, "imports inside functions without a reason:\n" + "\n".join(found)


def test_lazy_import_checker_sees_a_planted_one(tmp_path: Path) -> None:
    """Power: an unexplained import inside a function is found, an explained one is not."""
    path = tmp_path / "m.py"
    path.write_text("def f():\n    import json\n\n\ndef g():\n    import pymc  # heavy: PyMC\n")
    assert unexplained_lazy_imports(path) == [2]
