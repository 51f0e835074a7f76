"""The package's shape: every module under 400 lines, no import circles (imports inside functions
counted), and the front end (trace/, ir/, fusion/) importing nothing from backends/."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "autofuse"
FRONT_END = ("autofuse.trace", "autofuse.ir", "autofuse.fusion")
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str) -> set:
    """The autofuse modules `name` imports anywhere in its text (a `from package import name`
    counts as the submodule where one exists, else as the package)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                       for alias in node.names]
        else:
            continue
        found |= {t for t in targets if t in MODULES and t != name}
    return found


GRAPH = {name: imports(name) for name in MODULES}


def _is_ancestor(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def test_every_module_is_under_400_lines():
    long = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    assert {name: n for name, n in long.items() if n >= MAX_LINES} == {}


def test_no_import_circles():
    """A module's package __init__ runs before the module, so an import of an ancestor package
    is not an edge that can close a circle; every other import is."""
    edges = {name: {t for t in targets if not _is_ancestor(t, name)}
             for name, targets in GRAPH.items()}
    circles, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                circles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    assert circles == []


@pytest.mark.parametrize("front", FRONT_END)
def test_the_front_end_imports_no_backend(front):
    offenders = {name: sorted(t for t in targets if t.startswith("autofuse.backends"))
                 for name, targets in GRAPH.items() if name == front or name.startswith(front + ".")}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_walk_sees_imports_inside_functions():
    """(the checks above are only as good as this walk)"""
    assert "autofuse.backends" in GRAPH["autofuse.stages"]          # inside build()
    assert "autofuse.backends.cuda.writer" in GRAPH["autofuse.backends.cuda"]
