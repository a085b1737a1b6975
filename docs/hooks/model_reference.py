"""MkDocs hook: the model format reference, generated at build time.

The page ``docs/models/reference.md`` holds the marker below; this hook replaces it with one
section per object of the model file's JSON Schema (``edgewise model-schema``, which pydantic
builds from ``model/spec.py``) and one table row per key, its description taken from the spec.
So a key is documented once, where it is declared; the build fails when a key has no description,
and so does ``tests/model/test_model_reference.py``, which also checks that every key has its row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

__all__ = [
    "MARKER",
    "Key",
    "Section",
    "model_schema",
    "on_page_markdown",
    "render",
    "sections",
    "undocumented",
]

MARKER = "<!-- model-reference -->"

Schema = dict[str, Any]


def model_schema() -> Schema:
    """The JSON Schema of model files, as ``edgewise model-schema`` prints it."""
    out = subprocess.run(
        [sys.executable, "-m", "server", "model-schema"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    schema: Schema = json.loads(out)
    return schema


class Key:
    """One key of one object of the format: a row of the reference."""

    def __init__(self, name: str, schema: Schema, required: bool) -> None:
        self.name = name
        self.schema = schema
        self.required = required

    @property
    def description(self) -> str:
        return str(self.schema.get("description", "")).strip()


class Section:
    """One object of the format (the file itself, or a ``$defs`` entry) and where it is used."""

    def __init__(self, name: str, schema: Schema) -> None:
        self.name = name
        self.schema = schema
        self.paths: list[str] = []

    @property
    def anchor(self) -> str:
        return "file" if self.name == "" else self.name.lower()

    @property
    def title(self) -> str:
        return "The file" if self.name == "" else f"`{self.paths[0]}`"

    @property
    def description(self) -> str:
        return " ".join(str(self.schema.get("description", "")).split())

    @property
    def keys(self) -> list[Key]:
        required = set(self.schema.get("required", ()))
        return [
            Key(name, schema, name in required)
            for name, schema in self.schema.get("properties", {}).items()
        ]


def _ref(schema: Schema) -> str | None:
    ref = schema.get("$ref")
    return str(ref).rsplit("/", 1)[-1] if ref else None


def _children(schema: Schema, path: str) -> Iterator[tuple[str, Schema]]:
    """The sub-schemas of a key's schema, with the file path each one stands at."""
    for branch in schema.get("anyOf", ()):
        yield from _children(branch, path)
    if "$ref" in schema:
        yield path, schema
    for sub in schema.get("patternProperties", {}).values():
        yield from _children(sub, path + ".<name>")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from _children(extra, path + ".<name>")
    if isinstance(schema.get("items"), dict):
        yield from _children(schema["items"], path + "[]")


def sections(schema: Schema) -> list[Section]:
    """The file, then every object it can hold, in the order a reader meets them."""
    defs: dict[str, Schema] = schema.get("$defs", {})
    found: dict[str, Section] = {"": Section("", schema)}

    def walk(section: Section, prefix: str) -> None:
        for key in section.keys:
            for path, sub in _children(key.schema, prefix + key.name):
                name = _ref(sub)
                if name is None:
                    continue
                first = name not in found
                if first:
                    found[name] = Section(name, defs[name])
                if path not in found[name].paths:
                    found[name].paths.append(path)
                if first:
                    walk(found[name], path + ".")

    walk(found[""], "")
    return list(found.values())


def _name(section_name: str) -> str:
    return section_name.removesuffix("Spec") or section_name


def type_text(schema: Schema) -> str:
    """A key's type in words: `string`, `list of …`, a link to the object's section."""
    name = _ref(schema)
    if name:
        return f"[{_name(name)}](#{name.lower()})"
    if "anyOf" in schema:
        kinds = [type_text(s) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds)
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type")
    if kind == "array":
        if "prefixItems" in schema:
            return "[" + ", ".join(type_text(s) for s in schema["prefixItems"]) + "]"
        return "list of " + type_text(schema.get("items", {}))
    if kind == "object":
        values = list(schema.get("patternProperties", {}).values())
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            values.append(extra)
        if not values:
            return "mapping"
        names = schema.get("propertyNames", {}).get("enum")
        key = " or ".join(f"`{n}`" for n in names) if names else "name"
        return f"map of {key} to {type_text(values[0])}"
    if kind == "string":
        return "name" if schema.get("pattern") else "string"
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"integer {low} to {high}"
        return "integer" if low is None else f"integer ≥ {low}"
    return str(kind or "any")


def _default(key: Key) -> str:
    if key.required:
        return "required"
    if "default" not in key.schema or key.schema["default"] in (None, {}, []):
        return ""
    return f"`{json.dumps(key.schema['default'])}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def undocumented(schema: Schema) -> list[str]:
    """The objects and keys of the format that have no description (`TypeSpec.names`)."""
    missing: list[str] = []
    for section in sections(schema):
        if not section.description:
            missing.append(section.name or "the file")
        missing += [
            f"{section.name or 'the file'}.{k.name}" for k in section.keys if not k.description
        ]
    return missing


def render(schema: Schema) -> str:
    """The reference's markdown: a section per object, a row per key."""
    out: list[str] = []
    for section in sections(schema):
        out.append(f"## {section.title} {{ #{section.anchor} }}\n")
        if len(section.paths) > 1:
            also = ", ".join(f"`{p}`" for p in section.paths[1:])
            out.append(f"Also at {also}.\n")
        if section.description:
            out.append(section.description + "\n")
        out.append("| key | type | default | meaning |")
        out.append("|---|---|---|---|")
        for key in section.keys:
            out.append(
                f"| `{key.name}` | {_cell(type_text(key.schema))} | {_default(key)} "
                f"| {_cell(key.description)} |"
            )
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: object, config: object, files: object) -> str:
    """MkDocs event: fill the marker of the reference page."""
    if MARKER not in markdown:
        return markdown
    schema = model_schema()
    missing = undocumented(schema)
    if missing:
        raise ValueError(
            "the model format has keys without a description (add one in model/spec.py): "
            + ", ".join(missing)
        )
    return markdown.replace(MARKER, render(schema))
