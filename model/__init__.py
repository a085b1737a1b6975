"""Model files: parse, validate, compile into frozen values, and the JSON Schema of the format.
No I/O beyond reading the file.

The parser (:mod:`model.load`: YAML and pydantic, a fifth of a cold start) is imported when one
of its names is first used, not with the package: a process serving a model compiled ahead of
time (``edgewise build``) never imports it."""

from typing import TYPE_CHECKING, Any

from .common import SHIPPED, ModelError, model_path
from .templates import Bounds, KeyValueError, Template
from .types import EdgeType, Field, Index, IndexWrite, Model, NodeType, Query, TypeRef

if TYPE_CHECKING:
    from .load import json_schema, load_model, parse_model

__all__ = [
    "SHIPPED",
    "Bounds",
    "EdgeType",
    "Field",
    "Index",
    "IndexWrite",
    "KeyValueError",
    "Model",
    "ModelError",
    "NodeType",
    "Query",
    "Template",
    "TypeRef",
    "json_schema",
    "load_model",
    "model_path",
    "parse_model",
]

_PARSER = ("json_schema", "load_model", "parse_model")


def __getattr__(name: str) -> Any:
    if name in _PARSER:
        from . import load

        return getattr(load, name)
    raise AttributeError(f"module 'model' has no attribute {name!r}")
