"""Model files: parse, validate, compile into frozen values, and the JSON Schema of the format.
No I/O beyond reading the file."""

from .load import SHIPPED, ModelError, json_schema, load_model, model_path, parse_model
from .templates import Bounds, KeyValueError, Template
from .types import EdgeType, Field, Index, IndexWrite, Model, NodeType, Query, TypeRef

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
