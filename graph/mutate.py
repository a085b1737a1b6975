"""Generic writes through a model: items built from field values (key, type, version, index
attributes, copies), and the create/update/delete and edge mutations.

A write that changes one item is one PutItem/UpdateItem/DeleteItem with a condition; more than
one item is one TransactWriteItems. Each carries what a failed condition means (NOT_FOUND,
CONFLICT). A failed condition whose item is already exactly what this write meant to leave is
taken as success: a retry whose first attempt applied (single-item writes have no client token).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from model import EdgeType, Model, NodeType
from model.types import SHARD

from .errors import BadUserInput, Conflict, EdgewiseError, NotFound
from .expressions import Expr
from .items import Codec, Ref, shard_of
from .keys import ItemKey, new_id
from .reads import Branch, Listing, Reads
from .table import Failure, Item, Table, to_dynamo

__all__ = ["Writer", "build_items"]

MAX_ACTIONS = 100


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _value(v: Any) -> dict[str, Any]:
    value: dict[str, Any] = to_dynamo({"v": v})["v"]
    return value


@dataclass
class _Action:
    """One write of a transaction (or alone): Put, Update, Delete or ConditionCheck."""

    kind: str
    key: ItemKey
    body: dict[str, Any]
    expr: Expr = field(default_factory=Expr)
    condition: str | None = None
    on_fail: Failure | None = None
    leaves: Item | None = None  # the item as this write leaves it (a retry check)


class Writer:
    """Writes of one model's items through one table (a request's view)."""

    def __init__(self, table: Table, codec: Codec) -> None:
        self.table = table
        self.codec = codec
        self.model: Model = codec.model
        self.layout = table.layout

    # ---- items -----------------------------------------------------------------------------

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
            item["createdAt"] = item["updatedAt"] = at
            values = {"createdAt": at, "updatedAt": at, **values}
        if model.store_key_fields and "id" in node.key_fields:
            item["id"] = values["id"]
        for name, f in node.fields.items():
            stored = f.kind == "value" or (
                f.kind == "key" and (model.store_key_fields or name in node.declared)
            )
            if stored and values.get(name) is not None:
                item[f.attribute] = values[name]
        item |= self.index_attributes(node.indexes, self._template_values(node, values))
        return item

    @staticmethod
    def _template_values(node: NodeType, values: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in values.items() if v is not None}

    def index_attributes(self, writes: Iterable[Any], values: Mapping[str, Any]) -> Item:
        """The index key attributes for ``values``; an index whose templates lack a value is
        left out (a sparse index)."""
        out: Item = {}
        for write in writes:
            filled = dict(values)
            if write.shards is not None:
                filled[SHARD] = shard_of(
                    str(values.get("id", values.get("from", ""))), write.shards
                )
            needed = set(write.pk.placeholders) | set(write.sk.placeholders if write.sk else ())
            if any(filled.get(n) is None for n in needed):
                continue
            out[write.index.pk] = self.codec.format(write.pk, filled)
            if write.sk is not None and write.index.sk is not None:
                out[write.index.sk] = self.codec.format(write.sk, filled)
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
        ids = {"from": self._id(source), "to": self._id(target)}
        item |= self.index_attributes(edge.indexes, {**values, **ids})
        return item

    def _id(self, ref: Ref) -> str:
        return (self.codec.key_values(ref.type, ref.key) or {}).get("id", "")

    def values_of(self, node: NodeType, item: Mapping[str, Any]) -> dict[str, Any]:
        """Field values (GraphQL names) of a stored item, key placeholders included."""
        values: dict[str, Any] = dict(self.codec.key_values(node, self.codec.item_key(item)) or {})
        for name, f in node.fields.items():
            if f.kind in ("value", "stamp") and f.attribute in item:
                values[name] = item[f.attribute]
        return values

    # ---- sending ---------------------------------------------------------------------------

    def _params(self, action: _Action) -> dict[str, Any]:
        params = dict(action.body)
        if action.condition:
            params["ConditionExpression"] = action.condition
        params |= action.expr.params(_value)
        return params

    async def _commit(self, actions: list[_Action]) -> None:
        if not actions:
            return
        if len(actions) == 1 and actions[0].kind != "ConditionCheck":
            action = actions[0]
            operation = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem"}
            await self.table.write(
                operation[action.kind], self._params(action), action.on_fail, action.leaves
            )
            return
        if len(actions) > MAX_ACTIONS:
            raise BadUserInput(
                f"this write needs {len(actions)} items changed at once; "
                f"a transaction holds at most {MAX_ACTIONS}"
            )
        body = []
        for action in actions:
            params = self._params(action) | {"TableName": self.table.name}
            if action.condition and action.on_fail is not None:
                params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            body.append({action.kind: params})
        await self.table.transact_write(body, [a.on_fail for a in actions])

    def _put(self, item: Item, condition: str | None, on_fail: Failure | None) -> _Action:
        action = _Action("Put", self.layout.item_key(item), {"Item": to_dynamo(item)}, leaves=item)
        if condition:
            action.condition = condition.format(pk=action.expr.name(self.layout.pk))
            action.on_fail = on_fail
        return action

    def _exists(
        self,
        key: ItemKey,
        on_fail: Failure | None,
        kind: str = "ConditionCheck",
        version: int | None = None,
    ) -> _Action:
        action = _Action(kind, key, {"Key": self.layout.key(key)})
        action.condition = f"attribute_exists({action.expr.name(self.layout.pk)})"
        if version is not None and self.model.version_attribute:
            action.condition += (
                f" AND {action.expr.name(self.model.version_attribute)} = "
                f"{action.expr.value(version)}"
            )
        action.on_fail = on_fail
        return action

    def _update(
        self,
        key: ItemKey,
        sets: Mapping[str, Any],
        removes: Iterable[str] = (),
        adds: Mapping[str, int] | None = None,
    ) -> _Action:
        action = _Action("Update", key, {"Key": self.layout.key(key)})
        e = action.expr
        parts = []
        if sets:
            parts.append("SET " + ", ".join(f"{e.name(k)} = {e.value(v)}" for k, v in sets.items()))
        removes = list(removes)
        if removes:
            parts.append("REMOVE " + ", ".join(e.name(k) for k in removes))
        if adds:
            parts.append("ADD " + ", ".join(f"{e.name(k)} {e.value(v)}" for k, v in adds.items()))
        action.body["UpdateExpression"] = " ".join(parts)
        return action

    # ---- nodes -----------------------------------------------------------------------------

    async def create(self, node: NodeType, values: Mapping[str, Any]) -> Item:
        """Put a new node; an existing key is CONFLICT. A child's parent must exist."""
        values = dict(values)
        if "id" in node.key_fields and values.get("id") is None:
            values["id"] = new_id()
        item = self.node_item(node, values, now_iso())
        key = self.layout.item_key(item)

        taken = Conflict(f"{node.name} {self._describe(node, key)} already exists")
        actions = [self._put(item, "attribute_not_exists({pk})", lambda _old: taken)]
        if node.parent is not None:
            parent = self.model.types[node.parent.type]
            link = {theirs: values[mine] for mine, theirs in node.parent.link}
            parent_key = self.codec.key(parent, link)
            missing = NotFound(f"{parent.name} {parent_key.pk} does not exist")
            actions.append(self._exists(parent_key, lambda _o: missing))
        await self._commit(actions)
        return item

    def _describe(self, node: NodeType, key: ItemKey) -> str:
        return key.pk if node.single else f"{key.pk} / {key.sk}"

    async def update(
        self, node: NodeType, key: ItemKey, changes: Mapping[str, Any], expected: int | None = None
    ) -> Item:
        """Set fields (``None`` removes one), refresh index attributes and the copies on edges,
        and bump the version. A stale ``expected`` version is CONFLICT."""
        version_attr = self.model.version_attribute
        old = await self.table.get_item(key)
        if old is None:
            raise NotFound(f"{node.name} {self._describe(node, key)} does not exist")
        version = int(old.get(version_attr, 0)) if version_attr else None
        if expected is not None and version is not None and expected != version:
            raise Conflict(f"{node.name} {key.pk} is at version {version}, not {expected}")
        before = self.values_of(node, old)
        after = {k: v for k, v in before.items()} | dict(changes)
        new = self.node_item(node, after, None)
        for attr in ("createdAt",):
            if attr in old:
                new[attr] = old[attr]
        if self.model.timestamps:
            new["updatedAt"] = now_iso()
        if version_attr:
            new[version_attr] = (version or 0) + 1
        for attr, value in old.items():  # attributes the model does not know stay as they are
            if attr not in new and not self._owned(node, attr):
                new[attr] = value
        sets = {
            k: v
            for k, v in new.items()
            if old.get(k) != v and k not in (self.layout.pk, self.layout.sk)
        }
        removes = [k for k in old if k not in new]
        action = self._update(key, sets, removes)
        cond = f"attribute_exists({action.expr.name(self.layout.pk)})"
        if version_attr:
            cond += f" AND {action.expr.name(version_attr)} = {action.expr.value(version)}"
        action.condition = cond

        def stale(current: Item | None) -> EdgewiseError:
            if current is None:
                return NotFound(f"{node.name} {key.pk} does not exist")
            return Conflict(f"{node.name} {key.pk} was changed concurrently; read it again")

        action.on_fail = stale
        action.leaves = new
        actions = [action] + await self._copies(node, key, before, after)
        await self._commit(actions)
        return new

    def _owned(self, node: NodeType, attr: str) -> bool:
        """Attributes the model writes for this type (so a removed value is removed)."""
        owned = {f.attribute for f in node.fields.values()}
        owned |= {w.index.pk for w in node.indexes} | {
            w.index.sk for w in node.indexes if w.index.sk
        }
        return attr in owned

    async def _copies(
        self, node: NodeType, key: ItemKey, before: Mapping[str, Any], after: Mapping[str, Any]
    ) -> list[_Action]:
        """Updates of the edges that copy a changed field of this node."""
        actions: list[_Action] = []
        for edge in self.model.edges.values():
            for end in ("from", "to"):
                if (edge.source if end == "from" else edge.target) != node.name:
                    continue
                copies = {n: f for n, f in edge.fields.items() if f.kind == "copy" and f.end == end}
                if not any(
                    before.get(f.source or "") != after.get(f.source or "") for f in copies.values()
                ):
                    continue
                for item in await self._edges_at(edge, key, end):
                    source = self.codec.end(edge, item, "from")
                    target = self.codec.end(edge, item, "to")
                    plain = {
                        n: item.get(f.attribute) for n, f in edge.fields.items() if f.kind != "copy"
                    }
                    ends = {end: after, ("to" if end == "from" else "from"): {}}
                    fresh = self.edge_item(edge, source, target, plain, ends)
                    sets = {k: v for k, v in fresh.items() if item.get(k) != v}
                    if sets:
                        actions.append(self._update(self.layout.item_key(item), sets))
        return actions

    async def _edges_at(self, edge: EdgeType, key: ItemKey, end: str) -> list[Item]:
        """Every ``edge`` item whose ``end`` is the node at ``key``."""
        listing = self._edge_listing(edge, key, end)
        if listing is None:
            return []
        items = await Reads(self.table).alls.load(listing)
        return [i for i in items if self.codec.edge_type(i) is edge]

    def _edge_listing(self, edge: EdgeType, key: ItemKey, end: str) -> Listing | None:
        types = self.model.types
        if end == "from":
            return Listing(None, (Branch(key.pk, types[edge.target].pk.literal_prefix),))
        source_prefix = types[edge.source].pk.literal_prefix
        for name, index in self.model.indexes.items():
            if index.pk == self.layout.sk:  # an inverted index: every incoming edge
                return Listing(name, (Branch(key.sk, source_prefix),))
        node_id = (self.codec.key_values(types[edge.target], key) or {}).get("id")
        for write in edge.indexes:
            if set(write.pk.placeholders) <= {"to"} and write.index.name is not None:
                partition = self.codec.format(write.pk, {"to": node_id})
                prefix = write.sk.prefix({}) if write.sk else ""
                return Listing(write.index.name, (Branch(partition, prefix),))
        return None

    async def delete(self, node: NodeType, key: ItemKey) -> None:
        """Delete a node, its children and its edges in both directions: one transaction when
        it fits, else the edges and children in batches and the node last."""
        old = await self.table.get_item(key)
        if old is None:
            raise NotFound(f"{node.name} {self._describe(node, key)} does not exist")
        version_attr = self.model.version_attribute
        version = int(old[version_attr]) if version_attr and version_attr in old else None
        related = await self._related(node, key)
        gone = NotFound(f"{node.name} {key.pk} does not exist")

        def changed(current: Item | None) -> EdgewiseError:
            if current is None:
                return gone
            return Conflict(f"{node.name} {key.pk} was changed concurrently; read it again")

        delete = self._exists(key, changed, "Delete", version)
        if len(related) + 1 <= MAX_ACTIONS:
            await self._commit([delete] + [_delete(self, k) for k in related])
            return
        for start in range(0, len(related), MAX_ACTIONS):
            chunk = related[start : start + MAX_ACTIONS]
            await self.table.batch_write(deletes=chunk)
        await self._commit([delete])

    async def _related(self, node: NodeType, key: ItemKey) -> list[ItemKey]:
        """Keys of the node's children and of the edges at either end."""
        found: list[ItemKey] = []
        reads = Reads(self.table)
        loads = []
        if node.single:
            loads.append(reads.alls.load(Listing(None, (Branch(key.pk),))))
        for edge in self.model.edges.values():
            if edge.target == node.name:
                listing = self._edge_listing(edge, key, "to")
                if listing is not None:
                    loads.append(reads.alls.load(listing))
        for items in await asyncio.gather(*loads):
            for item in items:
                item_key = self.layout.item_key(item)
                if item_key == key or item_key in found:
                    continue
                kind = self.codec.node_type(item)
                found_edge = self.codec.edge_type(item) if kind is None else None
                child = (
                    kind is not None and kind.parent is not None and kind.parent.type == node.name
                )
                if child or (
                    found_edge is not None and node.name in (found_edge.source, found_edge.target)
                ):
                    found.append(item_key)
        return found

    # ---- edges -----------------------------------------------------------------------------

    async def add_edge(
        self, edge: EdgeType, source: Ref, target: Ref, fields: Mapping[str, Any]
    ) -> Item:
        """Put an edge; both ends must exist (checked in the same transaction), a repeated edge
        is CONFLICT."""
        copies = {f.end for f in edge.fields.values() if f.kind == "copy"}
        ends: dict[str, dict[str, Any]] = {"from": {}, "to": {}}
        versions: dict[str, int | None] = {"from": None, "to": None}
        if copies:
            for end, ref in (("from", source), ("to", target)):
                if end in copies:
                    old = await self.table.get_item(ref.key)
                    if old is None:
                        raise NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
                    ends[end] = self.values_of(ref.type, old)
                    version_attr = self.model.version_attribute
                    versions[end] = (
                        int(old[version_attr]) if version_attr and version_attr in old else None
                    )
        if edge.forward is not None and edge.forward.one:
            existing = await self._edges_at(edge, source.key, "from")
            if existing:
                raise Conflict(f"{source.key.pk} already has a {edge.label} edge")
        item = self.edge_item(edge, source, target, fields, ends)

        repeated = Conflict(f"{source.key.pk} already has a {edge.label} edge to {target.key.pk}")
        actions = [self._put(item, "attribute_not_exists({pk})", lambda _old: repeated)]
        for end, ref in (("from", source), ("to", target)):
            if end == "to" and ref.key == source.key:
                continue
            actions.append(self._exists(ref.key, _gone_or_changed(ref), version=versions[end]))
        await self._commit(actions)
        return item

    async def remove_edge(self, edge: EdgeType, source: Ref, target: Ref) -> bool:
        """Delete an edge; False when there was none."""
        key = self.codec.edge_key(edge, source.key, target.key)
        action = self._exists(key, lambda _old: _Missing(), "Delete")
        try:
            await self._commit([action])
        except _Missing:
            return False
        return True


def _gone_or_changed(ref: Ref) -> Failure:
    def failure(old: Item | None) -> EdgewiseError:
        if old is None:
            return NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
        return Conflict(f"{ref.type.name} {ref.key.pk} changed concurrently; try again")

    return failure


def _delete(writer: Writer, key: ItemKey) -> _Action:
    return _Action("Delete", key, {"Key": writer.layout.key(key)})


class _Missing(EdgewiseError):
    pass


def build_items(writer: Writer, sample: Mapping[str, Any], at: str) -> list[Item]:
    """Items for sample data: ``nodes`` (``type`` and field values, key placeholders included)
    and ``edges`` (``label``, ``from`` and ``to`` ids, and fields), built as the mutations build
    them (keys, index attributes, copies)."""
    model, codec = writer.model, writer.codec
    items: list[Item] = []
    values: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in sample.get("nodes", []):
        node = model.types[entry["type"]]
        fields = {k: _stored(v) for k, v in entry.items() if k != "type"}
        items.append(writer.node_item(node, fields, at))
        if "id" in fields:
            values[(node.name, str(fields["id"]))] = fields
    for entry in sample.get("edges", []):
        edge = model.edges[entry["label"]]
        source = codec.by_id(model.types[edge.source], str(entry["from"]))
        target = codec.by_id(model.types[edge.target], str(entry["to"]))
        assert source is not None and target is not None
        fields = {k: _stored(v) for k, v in entry.items() if k not in ("label", "from", "to")}
        ends = {
            "from": values.get((edge.source, str(entry["from"])), {}),
            "to": values.get((edge.target, str(entry["to"])), {}),
        }
        items.append(writer.edge_item(edge, source, target, fields, ends))
    return items


def _stored(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return [_stored(v) for v in value]
    return value
