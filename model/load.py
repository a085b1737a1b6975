"""Reading a model file: YAML with line numbers, validated by pydantic, then compiled. Every
mistake becomes one line ``<dotted.path> (line N): <problem>; <what to write instead>``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from . import spec as s
from .common import SHIPPED, ModelError, model_path
from .compile import Problem, compile_model, did_you_mean
from .types import Model

__all__ = ["SHIPPED", "ModelError", "json_schema", "load_model", "model_path", "parse_model"]


class _Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false, so `on:` is a key, not True."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _lines(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            key_path = (*path, key.value)
            out[key_path] = key.start_mark.line + 1
            _lines(value, key_path, out)
            out[key_path] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*path, i), out)


def _vocabulary() -> set[str]:
    words: set[str] = set()
    for cls in vars(s).values():
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            words |= {f.alias or n for n, f in cls.model_fields.items()}
    return words


def _data_path(data: Any, loc: Iterable[Any]) -> tuple[Any, ...]:
    """A pydantic error location as a path into the data (union branch tags dropped)."""
    items = list(loc)
    path: list[Any] = []
    node = data
    for i, part in enumerate(items):
        inside = isinstance(node, dict) and part in node
        inside |= isinstance(node, list) and isinstance(part, int) and part < len(node)
        if inside:
            node = node[part]
            path.append(part)
        elif i == len(items) - 1 and isinstance(part, str) and part[:1].islower():
            path.append(part)  # a missing key
    return tuple(path)


def _message(error: Any) -> str:
    kind, loc = error["type"], error["loc"]
    if kind == "extra_forbidden":
        key = str(loc[-1])  # a key of another part of the file is no suggestion for itself
        return f"unknown key {key!r}; {did_you_mean(key, _vocabulary() - {key})}"
    if kind == "missing":
        return f"missing required key {loc[-1]!r}; add it"
    return (
        f"{error['msg'][:1].lower()}{error['msg'][1:]}; got {json.dumps(error.get('input'))[:60]}"
    )


def _format(path: tuple[Any, ...], lines: dict[tuple[Any, ...], int], message: str) -> str:
    dotted = ".".join(str(p) for p in path) or "(file)"
    probe = path
    while probe not in lines and probe:
        probe = probe[:-1]
    line = lines.get(probe)
    return f"{dotted} (line {line}): {message}" if line else f"{dotted}: {message}"


def parse_model(text: str, source: str = "<model>", name: str | None = None) -> Model:
    """Parse, validate and compile a model file's text; raises :class:`ModelError`."""
    try:
        node = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"(line {mark.line + 1})" if mark else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        message = f"(file) {where}: not valid YAML: {problem}; check the indentation and brackets"
        message = message.replace(" :", ":")
        raise ModelError(source, [message]) from None
    if not isinstance(data, dict):
        raise ModelError(source, ["(file): a model file is a mapping with table, types, …"])
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _lines(node, (), lines)
    try:
        file = s.ModelSpec.model_validate(data)
    except ValidationError as exc:
        grouped: dict[tuple[Any, ...], list[str]] = {}
        for error in exc.errors():
            messages = grouped.setdefault(_data_path(data, error["loc"]), [])
            message = _message(error)
            if message not in messages:
                messages.append(message)
        out = [_format(path, lines, " or ".join(msgs)) for path, msgs in grouped.items()]
        raise ModelError(source, out) from None
    model, problems = compile_model(file, name or Path(source).stem)
    if problems:
        raise ModelError(source, [_format(p.path, lines, p.message) for p in _unique(problems)])
    return model


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


def load_model(name_or_path: str) -> Model:
    """Load a shipped model by name, or a model file by path."""
    path = model_path(name_or_path)
    name = name_or_path if name_or_path in SHIPPED else path.stem
    return parse_model(path.read_text(), str(path), name)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the file format (for editors)."""
    schema = s.ModelSpec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Edgewise model"
    return schema
