"""A model file being drafted by :mod:`tests.modelgen` and :mod:`tests.modelshapes`: the mapping,
the facts the features share (the types drafted, their key shapes, what a path may hop along),
and the small helpers every feature draws with."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

Draw = Callable[[st.SearchStrategy[Any]], Any]

SCALARS = ("String", "Int", "Float", "Boolean", "ID", "Date", "DateTime", "JSON")
TYPE_NAMES = ("Account", "Book", "Card", "Deck", "Event", "Folder")
FIELD_NAMES = ("name", "status", "date", "score", "tags", "note", "kind", "data", "amount")
# Key shapes: `single` ORDER#{id}, `named` ACCOUNT#{username}, `keyed` {pk, sk} of two ids,
# `constant` {pk: ORDER#{id}, sk: ORDER}, `located` {pk: o#{id}, sk: c#{customerId}}, `child`
# under a parent's partition.
ONE_TEMPLATE = ("single", "named")  # keyed by one template over one placeholder
PARENTS = ("single", "named", "constant", "located")  # a node known by its partition


@dataclass
class Kind:
    """A node type being drafted: its mapping in the file and what other parts may refer to."""

    name: str
    spec: dict[str, Any]
    shape: str  # see the key shapes above
    prefix: str
    key_fields: list[str]
    stored: dict[str, str] = field(default_factory=dict)  # field -> GraphQL type text
    hops: dict[str, str] = field(default_factory=dict)  # edge or ref field -> type reached
    edge_hops: dict[str, str] = field(default_factory=dict)  # edge field -> edge label

    @property
    def single(self) -> bool:
        """Keyed by one template over one placeholder (a global id that is the key)."""
        return self.shape in ONE_TEMPLATE

    @property
    def implicit(self) -> bool:
        return bool(self.spec.get("implicit"))

    @property
    def pk(self) -> str:
        key = self.spec["key"]
        return key if isinstance(key, str) else str(key["pk"])

    @property
    def ident(self) -> str:
        """The placeholder naming a node of a parent or one-template type (`id`, `username`)."""
        return placeholders(self.pk)[0]

    @property
    def end(self) -> str:
        """The argument naming this type's node as an edge's end: `bookId`, `bookUsername`."""
        return lower(self.name) + ("Id" if self.ident == "id" else upper(self.ident))


@dataclass
class Draft:
    """A model file being drafted, and the facts the features share."""

    data: dict[str, Any]
    key_type: str = "S"  # of both table keys
    indexes: dict[str, dict[str, Any]] = field(default_factory=dict)  # as written in the file
    kinds: dict[str, Kind] = field(default_factory=dict)

    @property
    def table(self) -> dict[str, Any]:
        return dict(self.data["table"])

    @property
    def typed(self) -> bool:
        """Whether the table has a type attribute (items of types sharing keys told apart)."""
        return "typeAttribute" in self.data["table"]

    def attr(self, key: str) -> str:
        value = self.data["table"][key]
        return value if isinstance(value, str) else str(value["name"])

    def section(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.data.setdefault(name, {})
        return found

    def of_shape(self, *shapes: str) -> list[Kind]:
        return [k for k in self.kinds.values() if k.shape in shapes]

    def inverted(self) -> list[str]:
        sk = self.attr("sortKey")
        return [n for n, i in self.indexes.items() if key_name(i["partitionKey"]) == sk]

    def own_gsis(self) -> list[str]:
        """Global indexes keyed by attributes of their own (that a type's entry writes)."""
        keys = {self.attr("partitionKey"), self.attr("sortKey")}
        return [
            n
            for n, i in self.indexes.items()
            if not i.get("local") and key_name(i["partitionKey"]) not in keys
        ]


def key_name(key: Any) -> str:
    return key if isinstance(key, str) else str(key["name"])


def one(draw: Draw, options: Any) -> Any:
    return draw(st.sampled_from(list(options)))


def chance(draw: Draw, p: float) -> bool:
    """True with probability ``p`` (to the percent), False as hypothesis shrinks it."""
    return bool(draw(st.integers(0, 99)) >= 100 - round(p * 100))


def placeholders(template: str) -> list[str]:
    return [p.split(":")[0] for p in re.findall(r"{([^}]*)}", template)]


def lower(name: str) -> str:
    return name[:1].lower() + name[1:]


def upper(name: str) -> str:
    return name[:1].upper() + name[1:]
