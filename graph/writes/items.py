"""The items a write leaves, built from field values through the model: a node's (key, type,
version, timestamps, index attributes), an edge's (copies of its ends' fields), a unique
field's claim. Nothing here reads or writes the table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from graph.items import Codec, Ref, shard_of
from graph.keys import ItemKey
from graph.table import Item, Layout
from model import EdgeType, Field, Model, NodeType
from model.types import SHARD

__all__ = ["Items", "describe", "now_iso"]


def now_iso() -> str:
    """Now, as the timestamps of written items hold it (UTC, milliseconds, ``Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def describe(node: NodeType, key: ItemKey) -> str:
    """A node's key as an error message names it."""
    return key.pk if node.single else f"{key.pk} / {key.sk}"


@dataclass(frozen=True)
class Items:
    """The item builders of one model on a table of ``layout``."""

    codec: Codec
    layout: Layout

    @property
    def model(self) -> Model:
        return self.codec.model

    def node_item(self, node: NodeType, values: Mapping[str, Any], at: str | None) -> Item:
        """A node's item for its field values (GraphQL names; key placeholders included)."""
        model = self.model
        key = self.codec.key(node, values)
        item: Item = {self.layout.pk: key.pk, self.layout.sk: key.sk}
        if model.type_attribute:
            item[model.type_attribute] = node.type_value
        if model.version_attribute:
            item[model.version_attribute] = 1
        if model.timestamps and at:
            item |= dict.fromkeys(model.stamps, at)
            stamped = {n: at for n, f in node.fields.items() if f.kind == "stamp"}
            values = stamped | dict(values)
        if model.store_key_fields and "id" in node.key_fields:
            item["id"] = values["id"]
        for name, f in node.fields.items():
            stored = f.kind == "value" or (
                f.kind == "key" and (model.store_key_fields or name in node.declared)
            )
            if f.from_key or name in node.read_only:
                continue  # the key alone; or an attribute an earlier field writes
            if stored and values.get(name) is not None:
                item[f.attribute] = values[name]
        item |= self.index_attributes(
            node.indexes, {k: v for k, v in values.items() if v is not None}, node.ident
        )
        return item

    def index_attributes(
        self, writes: Iterable[Any], values: Mapping[str, Any], ident: str = "id"
    ) -> Item:
        """The index key attributes for ``values``; an index whose templates lack a value is
        left out (a sparse index). A shard is of the ``ident`` value (a node's id, or its
        key's one placeholder), else of the edge's ``from``."""
        out: Item = {}
        for write in writes:
            filled = dict(values)
            if write.shards is not None:
                filled[SHARD] = shard_of(
                    str(values.get(ident, values.get("from", ""))), write.shards
                )
            needed = set(write.pk.placeholders) | set(write.sk.placeholders if write.sk else ())
            if not write.partial and any(filled.get(n) is None for n in needed):
                continue
            codec = self.codec
            pk = codec.format(write.pk, filled, write.partial)
            out[write.index.pk] = codec.typed(write.index.pk, pk)
            if write.sk is not None and write.index.sk is not None:
                sk = codec.format(write.sk, filled, write.partial)
                out[write.index.sk] = codec.typed(write.index.sk, sk)
        return out

    def edge_item(
        self,
        edge: EdgeType,
        source: Ref,
        target: Ref,
        fields: Mapping[str, Any],
        ends: Mapping[str, Mapping[str, Any]],
    ) -> Item:
        """An edge item; ``ends`` holds each end's field values for copies."""
        key = self.codec.edge_key(edge, source.key, target.key)
        item: Item = {self.layout.pk: key.pk, self.layout.sk: key.sk}
        if self.model.label_attribute:
            item[self.model.label_attribute] = edge.label
        values = dict(fields)
        for name, f in edge.fields.items():
            if f.kind == "copy":
                values[name] = ends[f.end or ""].get(f.source or "")
            if values.get(name) is not None:
                item[f.attribute] = values[name]
        ids = {"from": self.codec.id_of(source), "to": self.codec.id_of(target)}
        item |= self.index_attributes(edge.indexes, {**values, **ids})
        return item

    def values_of(self, node: NodeType, item: Mapping[str, Any]) -> dict[str, Any]:
        """Field values (GraphQL names) of a stored item, key placeholders included: a
        placeholder's own attribute as written where the item has one (the key may hold a cased
        or formatted copy: `alice`, `0007`), else the key's text (a number as its field's)."""
        values: dict[str, Any] = dict(self.codec.key_values(node, self.codec.item_key(item)) or {})
        for name, f in node.fields.items():
            own = f.kind == "key" and not f.from_key  # `from: key`: the attribute is another's
            if (f.kind in ("value", "stamp") or own) and f.attribute in item:
                values[name] = item[f.attribute]
            elif f.kind == "key" and isinstance(values.get(name), str):
                values[name] = _number(f, values[name])
        if "id" in node.key_fields and "id" not in values and "id" in item:
            values["id"] = item["id"]  # in a run, stored by storeKeyFields
        return values

    def owned(self, node: NodeType, attribute: str) -> bool:
        """Whether the model writes ``attribute`` for ``node``'s type (so a value removed from
        the fields is removed from the item)."""
        owned = {f.attribute for f in node.fields.values() if not f.from_key}
        owned |= {w.index.pk for w in node.indexes} | {
            w.index.sk for w in node.indexes if w.index.sk
        }
        return attribute in owned

    def parent_key(self, node: NodeType, key: ItemKey) -> ItemKey:
        """The key of the parent of the child ``node`` at ``key``."""
        assert node.parent is not None
        values = self.codec.key_values(node, key) or {}
        link = {theirs: values[mine] for mine, theirs in node.parent.link}
        return self.codec.key(self.model.types[node.parent.type], link)

    def claim_key(self, field: Field, value: Any) -> ItemKey:
        """The key of the item claiming a unique field's value."""
        assert field.unique is not None
        text = str(value).lower() if field.unique.case_insensitive else str(value)
        claim = self.codec.format(field.unique.key, {field.name: text})
        return ItemKey(claim, claim)

    def claim_item(self, field: Field, value: Any, owner: ItemKey) -> Item:
        """The item claiming a unique field's value for its node (``owner``: the node's key)."""
        unique = field.unique
        assert unique is not None
        claim = self.claim_key(field, value)
        item: Item = {self.layout.pk: claim.pk, self.layout.sk: claim.sk, unique.owner: owner.pk}
        if unique.type_value is not None and self.model.type_attribute:
            item[self.model.type_attribute] = unique.type_value
        return item


def _number(field: Field, text: str) -> Any:
    """A key placeholder's text as its Int or Float field stores it (the text itself where it
    is no number, or the field is of another type)."""
    try:
        if field.type.name == "Int":
            return int(text)
        if field.type.name == "Float":
            return Decimal(text)
    except (ValueError, ArithmeticError):
        pass
    return text
