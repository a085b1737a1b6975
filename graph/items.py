"""Items of a model's table: keys formatted and parsed through the model's templates, an item's
type recognised (from the type attribute, else from its keys), ids and global ids."""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Mapping
from typing import Any

from model import EdgeType, KeyValueError, Model, NodeType, Template
from model.types import RECORD_PREFIX

from .errors import BadUserInput
from .keys import ItemKey, validate_id
from .table import Layout

__all__ = ["Codec", "Ref", "shard_of"]


def shard_of(node_id: str, shards: int) -> int:
    """``crc32(UTF-8 of the id) mod shards``: computable by any writer outside Edgewise."""
    return zlib.crc32(node_id.encode()) % shards


class Ref:
    """A node by key, with its item once read: resolvers return these, and each field loads
    what it needs (selecting only ``id`` reads nothing)."""

    __slots__ = ("item", "key", "type")

    def __init__(self, type_: NodeType, key: ItemKey, item: dict[str, Any] | None = None) -> None:
        self.type = type_
        self.key = key
        self.item = item

    def __repr__(self) -> str:
        return f"Ref({self.type.name}, {self.key.pk!r}, {self.key.sk!r})"


class Codec:
    """The model's keys and items; the only place (with ``model.templates``) that formats or
    parses a key."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.layout = Layout(
            model.partition_key,
            model.sort_key,
            {name: (index.pk, index.sk) for name, index in model.indexes.items()},
        )
        self._by_value = {t.type_value: t for t in model.types.values()}
        self._singles = [t for t in model.types.values() if t.single]

    # ---- keys ------------------------------------------------------------------------------

    @staticmethod
    def format(template: Template, values: Mapping[str, Any]) -> str:
        try:
            return template.format(values)
        except KeyValueError as exc:
            raise BadUserInput(f"invalid key value: {exc}") from None

    def key(self, node: NodeType, values: Mapping[str, Any]) -> ItemKey:
        """The key of ``node`` for its key placeholder values (validated)."""
        checked = dict(values)
        for name in node.key_fields:
            if name == "id" or node.fields[name].type.name == "ID":
                checked[name] = validate_id(str(values.get(name, "")))
        pk = self.format(node.pk, checked)
        return ItemKey(pk, pk if node.single else self.format(node.sk, checked))

    def key_values(self, node: NodeType, key: ItemKey) -> dict[str, str] | None:
        values = node.pk.parse(key.pk)
        if values is None:
            return None
        if node.single:
            return values if key.sk == key.pk else None
        rest = node.sk.parse(key.sk)
        if rest is None or any(values.get(k, v) != v for k, v in rest.items()):
            return None
        return values | rest

    def ref(self, node: NodeType, values: Mapping[str, Any]) -> Ref:
        return Ref(node, self.key(node, values))

    def by_id(self, node: NodeType, raw: str) -> Ref | None:
        """A one-template type's node from a bare id (``xyz``) or its global id
        (``ORDER#xyz``); a global id of another type finds nothing (None)."""
        parsed = node.pk.parse(raw)
        if parsed is not None:
            return Ref(node, self.key(node, parsed))
        if "#" in raw:
            return None
        return Ref(node, self.key(node, {"id": raw}))

    def edge_key(self, edge: EdgeType, source: ItemKey, target: ItemKey) -> ItemKey:
        return ItemKey(source.pk, target.sk)

    # ---- global ids ------------------------------------------------------------------------

    def global_id(self, ref: Ref) -> str:
        """The key itself for a one-template type, else an opaque, stable id."""
        if ref.type.single:
            return ref.key.pk
        raw = json.dumps([ref.type.name, ref.key.pk, ref.key.sk], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def from_global_id(self, raw: str) -> Ref | None:
        """The node a global id names, or None; malformed ids are BAD_USER_INPUT."""
        if len(raw) > 2048:
            raise BadUserInput("invalid global id: too long")
        opaque = self._opaque(raw)
        if opaque is not None:
            return opaque
        for node in self._singles:
            values = node.pk.parse(raw)
            if values is not None:
                return Ref(node, self.key(node, values))
        shapes = [n.pk for n in self._singles if n.pk.literal_prefix]
        if shapes and not any(t.literal_prefix[-1] in raw for t in shapes):
            example = shapes[0].text
            raise BadUserInput(f"invalid global id {raw[:140]!r}: expected a key such as {example}")
        return None  # the shape of a key, of a type this model does not have

    def _opaque(self, raw: str) -> Ref | None:
        try:
            value = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return None
        if not (
            isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)
        ):
            return None
        name, pk, sk = value
        node = self.model.types.get(name)
        if node is None:
            return None
        key = ItemKey(pk, sk)
        values = self.key_values(node, key)
        if values is None:
            raise BadUserInput("invalid global id: its key does not fit its type")
        return Ref(node, key)

    # ---- items -----------------------------------------------------------------------------

    def item_key(self, item: Mapping[str, Any]) -> ItemKey:
        return self.layout.item_key(item)

    def node_type(self, item: Mapping[str, Any]) -> NodeType | None:
        """The node type of an item, or None (an edge, or an item no rule explains)."""
        model = self.model
        if model.type_attribute is not None and model.type_attribute in item:
            return self._by_value.get(str(item[model.type_attribute]))
        key = self.item_key(item)
        if key.pk.startswith(RECORD_PREFIX):  # an idempotency record (graph.idempotency)
            return None
        for node in model.types.values():
            if self.key_values(node, key) is not None:
                return node
        return None

    def edge_type(self, item: Mapping[str, Any]) -> EdgeType | None:
        model = self.model
        if model.label_attribute is not None and model.label_attribute in item:
            return model.edges.get(str(item[model.label_attribute]))
        if model.type_attribute is not None and model.type_attribute in item:
            return None
        key = self.item_key(item)
        if key.pk.startswith(RECORD_PREFIX):
            return None
        for edge in model.edges.values():
            source, target = model.types[edge.source], model.types[edge.target]
            if source.pk.parse(key.pk) is not None and target.sk.parse(key.sk) is not None:
                return edge
        return None

    def end(self, edge: EdgeType, item: Mapping[str, Any], which: str) -> Ref:
        """The ``from`` or ``to`` end of an edge item."""
        if which == "from":
            pk = item[self.layout.pk]
            return Ref(self.model.types[edge.source], ItemKey.of(pk, pk))
        sk = item[self.layout.sk]
        return Ref(self.model.types[edge.target], ItemKey.of(sk, sk))
