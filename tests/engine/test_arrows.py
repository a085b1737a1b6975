"""Inside server/engine, imports point one way, down this list (listings → access → plan →
resolvers → field kinds → schema → execute), with no import circle: not at module level, not
under TYPE_CHECKING, not deferred into a function."""

from __future__ import annotations

import ast
from pathlib import Path

import server.engine

ENGINE = Path(server.engine.__file__).parent

# lowest first: a module imports only modules before it
ORDER = [
    "scalars",
    "context",
    "listings",
    "kinds",  # value classes: the origin each schema field carries
    "access",
    "plan",
    "fields",  # the resolvers
    "paths",
    "mutations",
    "federation",  # a subgraph's root fields
    "schema",  # builds the fields by kind
    "compiled",
    "records",
    "executor",
    "__init__",
]


def _imports(path: Path) -> set[str]:
    """The server.engine modules ``path`` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module == "server.engine":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("server.engine."):
                found.add(node.module.removeprefix("server.engine."))
        elif isinstance(node, ast.Import):
            found |= {
                a.name.removeprefix("server.engine.")
                for a in node.names
                if a.name.startswith("server.engine.")
            }
    return found


def test_every_engine_module_is_placed() -> None:
    assert sorted(p.stem for p in ENGINE.glob("*.py")) == sorted(ORDER)


def test_engine_imports_point_one_way() -> None:
    wrong = [
        f"{path.stem} imports {name}"
        for path in ENGINE.glob("*.py")
        for name in _imports(path)
        if ORDER.index(name) >= ORDER.index(path.stem)
    ]
    assert wrong == []


def test_every_engine_module_is_under_800_lines() -> None:
    long = {p.stem: n for p in ENGINE.glob("*.py") if (n := len(p.read_text().splitlines())) >= 800}
    assert long == {}
