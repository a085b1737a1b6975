"""The engine names no model: nothing in graph/, model/ or server/ imports the shipped models
(a model file names its hooks and its sample generator), and the demo's hooks import only the
public hooks module, ``server.hooks``. The modules of graph/writes share only public names."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imported(path: Path) -> set[str]:
    """The modules a file imports (absolute names; relative imports left out)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


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
