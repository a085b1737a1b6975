"""The engine names no model: nothing in graph/, model/ or server/ imports the shipped models
(a model file names its hooks and its sample generator), and the demo's hooks import only the
public hooks module, ``server.hooks``."""

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
