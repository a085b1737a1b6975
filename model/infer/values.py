"""Attribute values, names and YAML scalars: the vocabulary shared by reading and rendering."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..compile import lower_first, upper_first
from ..templates import Template

__all__ = [
    "DATE",
    "DATETIME",
    "ID",
    "MAX_ENUM",
    "MAX_SHARDS",
    "NAME",
    "SEPARATORS",
    "SEPARATOR_CHARS",
    "STAMPS",
    "STAMP_FIELDS",
    "TOOLBOX_STAMPS",
    "UPPER",
    "VERSION_NAMES",
    "WORD",
    "WORDS",
    "Row",
    "attribute_value",
    "enum_value",
    "field_decl",
    "first_placeholder",
    "gql_name",
    "key_text",
    "label_name",
    "n_items",
    "plural",
    "type_name",
    "yaml_str",
]

SEPARATORS = ("#", "|", "/", ":", "-", "_")
SEPARATOR_CHARS = "".join(SEPARATORS)
ID = re.compile(r"^[A-Za-z0-9_.:@\-]{1,128}$")  # the alphabet of an `{id}` placeholder
WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")
WORDS = re.compile(r"^[a-z]+(?:[-_][a-z]+)*$")  # stored enum values: open, in-progress
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*!?$")
YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
VERSION_NAMES = ("version", "_version", "__version")
STAMPS = ("createdAt", "updatedAt")
TOOLBOX_STAMPS = ("_ct", "_md")  # dynamodb-toolbox's created/modified
STAMP_FIELDS = {"_ct": "created", "_md": "modified"}  # their fields' names
MAX_ENUM = 12
MAX_SHARDS = 1000


def attribute_value(raw: Mapping[str, Any]) -> tuple[str, Any]:
    [(kind, inner)] = raw.items()
    if kind == "N":
        return kind, Decimal(inner)
    return kind, inner


def key_text(kind: str, value: Any) -> str | None:
    """A scalar as it would appear inside a key."""
    if kind == "S":
        return str(value)
    if kind == "N":
        number = Decimal(value)
        return str(int(number)) if number == number.to_integral_value() else str(number)
    return None


@dataclass
class Row:
    pk: str
    sk: str
    attrs: dict[str, tuple[str, Any]]
    facet: str | None = None  # the NoSQL Workbench facet the row is a sample of

    def text(self, attribute: str) -> str | None:
        found = self.attrs.get(attribute)
        return None if found is None else key_text(*found)


def gql_name(attribute: str) -> str:
    """``order_id`` → ``orderId``, ``GSI1PK`` → ``gsi1pk``, ``hireDate`` stays."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", attribute) if p]
    if not parts:
        return "field"
    words = [p.lower() if p.isupper() else p for p in parts]
    name = lower_first(words[0]) + "".join(upper_first(w) for w in words[1:])
    return name if NAME.match(name) else f"f{name}"


def type_name(word: str) -> str:
    """``ORDER_ITEM`` / ``order-item`` / ``OrderItem`` → ``OrderItem``."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", word) if p]
    name = "".join(upper_first(p.lower() if p.isupper() or p.islower() else p) for p in parts)
    if not name or not NAME.match(name):
        name = f"T{name}"
    return name


def plural(word: str) -> str:
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    return word + "s"


def label_name(word: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", word)
    return name if NAME.match(name) else f"E_{name}"


def enum_value(stored: str) -> str:
    """The GraphQL value of a stored enum string: ``in-progress`` → ``IN_PROGRESS``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", stored).upper()


def n_items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def first_placeholder(text: str) -> str:
    names = Template.compile(text).placeholders
    return names[0] if names else ""


def yaml_str(text: str) -> str:
    """A YAML scalar: plain when safe, else double-quoted (JSON strings are YAML)."""
    if PLAIN.match(text) and text.lower() not in YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def field_decl(graphql: str, name: str, attribute: str, entries: str | None = None) -> str:
    """A field declaration: its type, or ``{type, attribute}`` when the names differ (and
    ``entries`` for a map of maps)."""
    if name == attribute and entries is None:
        return yaml_str(graphql)
    stored = f", attribute: {yaml_str(attribute)}" if name != attribute else ""
    more = f", entries: {entries}" if entries is not None else ""
    return f"{{type: {yaml_str(graphql)}{stored}{more}}}"
