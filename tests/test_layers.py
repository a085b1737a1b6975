"""The house (DESIGN.md): imports run one way, ``model`` <- ``graph`` <- ``server``, with no
circle among the modules, not even through an import made for typing only or inside a function;
no module is over 800 lines; the modules of graph/writes share only public names; the engine
names no model (a model file names its hooks and its sample generator), and the demo's hooks
import only the public hooks module, ``server.hooks``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


PACKAGES = ("model", "graph", "server")  # each may import only those before it


def imported(path: Path) -> set[str]:
    """The modules a file imports, anywhere in it (absolute names; relative imports left out);
    ``from a import b`` names ``a.b`` when that is a module of this tree, else ``a``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if _source(submodule) is not None else node.module)
    return found


def _source(module: str) -> Path | None:
    """The file of ``module`` in this tree, or None."""
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Each module of the engine's packages, and the modules of those packages it imports."""
    modules = {
        _module(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
    }
    return {
        name: {other for other in imported(path) if other in modules and other != name}
        for name, path in modules.items()
    }


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle() -> None:
    assert _circles(_graph()) == []


def test_the_circle_finder_finds_one() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(edges) == [["a", "b", "c"]]


def test_imports_run_one_way() -> None:
    offenders = [
        f"{name} imports {other}"
        for name, others in _graph().items()
        for other in others
        if PACKAGES.index(other.split(".")[0]) > PACKAGES.index(name.split(".")[0])
    ]
    assert offenders == []


def test_no_module_is_over_800_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > 800
    }
    assert long == {}


def test_no_engine_module_imports_a_model() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for package in ("graph", "model", "server")
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in imported(path)
        if name == "models" or name.startswith("models.")
    ]
    assert offenders == []


def test_the_demo_hooks_import_only_the_hooks_module() -> None:
    ours = {"graph", "model", "server", "models"}
    used = {
        name
        for name in imported(ROOT / "models" / "demo" / "hooks.py")
        if name.split(".")[0] in ours
    }
    assert used == {"server.hooks"}


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def defined(tree: ast.Module) -> set[str]:
    """The names a module defines: its functions, classes and methods, and what it assigns
    (``self._x = ...`` included)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
    return found


def test_no_module_of_graph_writes_uses_another_modules_private_name() -> None:
    offenders = []
    for path in sorted((ROOT / "graph" / "writes").glob("*.py")):
        tree = ast.parse(path.read_text())
        own = defined(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom | ast.Import):
                names = [alias.name.rsplit(".", 1)[-1] for alias in node.names]
                used = [n for n in names if private(n)]
            elif isinstance(node, ast.Attribute) and private(node.attr):
                used = [] if node.attr in own else [node.attr]
            else:
                continue
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} uses {n}" for n in used]
    assert offenders == []
