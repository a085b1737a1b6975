"""The model format reference (docs/models/reference.md): generated at build time by the MkDocs
hook docs/hooks/model_reference.py from `edgewise model-schema`, so every key of the schema has a
description and exactly one row on the page."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from model import json_schema

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "docs" / "hooks" / "model_reference.py"
PAGE = ROOT / "docs" / "models" / "reference.md"


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("model_reference_hook", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = load_hook()


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    """The schema as the hook reads it: `python -m server model-schema`."""
    printed: dict[str, Any] = hook.model_schema()
    return printed


@pytest.fixture(scope="module")
def page(schema: dict[str, Any]) -> str:
    """The reference page's markdown after the hook, as MkDocs renders it."""
    markdown = hook.on_page_markdown(PAGE.read_text(), page=None, config=None, files=None)
    assert isinstance(markdown, str)
    return markdown


def every_key(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """(object, key) for the file's own keys and every key of every object under `$defs`."""
    keys = [("", name) for name in schema["properties"]]
    for name, definition in schema["$defs"].items():
        keys += [(name, key) for key in definition.get("properties", {})]
    return keys


def test_the_hook_reads_what_edgewise_model_schema_prints(schema: dict[str, Any]) -> None:
    assert schema == json_schema()
    assert schema["$defs"], "the format's objects are under $defs"


def test_every_key_and_object_of_the_model_schema_has_a_description(
    schema: dict[str, Any],
) -> None:
    missing = [
        f"{owner or 'ModelSpec'}.{key}"
        for owner, key in every_key(schema)
        if not (schema["$defs"][owner] if owner else schema)["properties"][key].get("description")
    ]
    missing += [name for name, d in schema["$defs"].items() if not d.get("description")]
    assert missing == [], f"add a description in model/spec.py: {missing}"
    assert hook.undocumented(schema) == []


def test_the_reference_page_has_one_row_per_key_of_the_schema(
    schema: dict[str, Any], page: str
) -> None:
    assert hook.MARKER not in page
    # One section per object, each object once: "## <title> { #<anchor> }".
    anchors = re.findall(r"^## .* \{ #([a-z]+) \}$", page, flags=re.MULTILINE)
    assert sorted(anchors) == sorted(["file", *(name.lower() for name in schema["$defs"])])
    sections = dict(
        zip(anchors, re.split(r"^## .* \{ #[a-z]+ \}$", page, flags=re.MULTILINE)[1:], strict=True)
    )
    for owner, key in every_key(schema):
        rows = re.findall(
            rf"^\| `{re.escape(key)}` \|.*\|$", sections[owner.lower() or "file"], re.M
        )
        assert len(rows) == 1, f"{owner or 'the file'}.{key}: {len(rows)} rows on the page"
        description = (schema["$defs"][owner] if owner else schema)["properties"][key][
            "description"
        ]
        assert description.split()[0] in rows[0]


def test_the_reference_fails_the_build_on_a_key_without_a_description(
    schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = dict(schema, properties=dict(schema["properties"], extra={"type": "string"}))
    assert hook.undocumented(broken) == ["the file.extra"]
    monkeypatch.setattr(hook, "model_schema", lambda: broken)
    with pytest.raises(ValueError, match=r"the file\.extra"):
        hook.on_page_markdown(hook.MARKER, page=None, config=None, files=None)


def test_mkdocs_runs_the_hook_on_the_reference_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert "docs/hooks/model_reference.py" in config["hooks"]
    assert hook.MARKER in PAGE.read_text()
    nav = yaml.safe_dump(config["nav"])
    assert "models/reference.md" in nav
