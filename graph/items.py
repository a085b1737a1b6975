"""Items of a model's table: keys formatted and parsed through the model's templates, an item's
type recognised (from the type attribute, else from its keys), ids and global ids."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from graph.dynamo.expressions import Expr
from graph.errors import BadUserInput
from graph.keys import ItemKey, Located
from graph.reads import UNKNOWN, Branch, Listing
from graph.table import Item, Layout
from model import EdgeType, Field, Index, KeyValueError, Model, NodeType, Template
from model.templates import overlap
from model.types import CLOCK_SK, INTERNAL

__all__ = ["Codec", "Ref", "internal", "shard_of"]

log = logging.getLogger("edgewise")


def internal(key: ItemKey) -> bool:
    """Whether ``key`` is of one of Edgewise's own items (an idempotency record, a job of
    replicas, the clock of a node with no item), never a node or an edge."""
    return key.sk == CLOCK_SK or (isinstance(key.pk, str) and key.pk.startswith(INTERNAL))


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
            model.key_types,
            frozenset(name for name, index in model.indexes.items() if index.local),
            {
                name: index.projection
                for name, index in model.indexes.items()
                if index.projection is not None
            },
        )
        self._typed = bool(model.key_types)
        self._ids = (re.compile(model.ids[0]), model.ids[1]) if model.ids else None
        self._by_value = {t.type_value: t for t in model.types.values()}
        self._singles = [t for t in model.types.values() if t.single]
        self._type = model.type_attribute
        # an item holding a label attribute of its own is an edge, never a node
        label = model.label_attribute
        self._label = label if label is not None and label != self._type else None
        self._shared = _shared(model) if self._type is not None else frozenset()
        self._keeps: dict[tuple[str, ...], Callable[[Item], bool]] = {}
        self._logged: set[str] = set()

    # ---- keys ------------------------------------------------------------------------------

    @staticmethod
    def format(template: Template, values: Mapping[str, Any], partial: bool = False) -> str:
        try:
            return template.format(values, partial)
        except KeyValueError as exc:
            raise BadUserInput(f"invalid key value: {exc}") from None

    def key(self, node: NodeType, values: Mapping[str, Any]) -> ItemKey:
        """The key of ``node`` for its key placeholder values (validated); a located type's
        (:attr:`model.NodeType.located`) without its sort key's values is known by its
        partition (:class:`graph.keys.Located`)."""
        located = node.located and any(values.get(n) is None for n in node.sk.placeholders)
        names = node.pk.placeholders if located else node.key_fields
        checked = dict(values)
        for name in names:
            if name == "id" or node.fields[name].type.name == "ID":
                checked[name] = self.valid_id(str(values.get(name, "")))
        pk = self.format(node.pk, checked)
        if located:
            sk: Any = Located(node.sk.literal_prefix, self._keeps_own(node))
            return ItemKey(self.typed(self.layout.pk, pk) if self._typed else pk, sk)
        sk = pk if node.single else self.format(node.sk, checked)
        if self._typed:
            return ItemKey(self.typed(self.layout.pk, pk), self.typed(self.layout.sk, sk))
        return ItemKey(pk, sk)

    def _keeps_own(self, node: NodeType) -> Callable[[Item], bool]:
        """Whether an item of a located node's partition is the node's own."""
        found = self._keeps.get(("own", node.name))
        if found is None:
            found = self._keeps[("own", node.name)] = lambda item: self.node_type(item) is node
        return found

    def typed(self, attribute: str | None, text: Any) -> Any:
        """A key attribute's value from its text (a number for an N key, bytes for B)."""
        try:
            return self.layout.value(attribute, text)
        except KeyValueError as exc:
            raise BadUserInput(f"invalid key value: {exc}") from None

    def valid_id(self, raw: str) -> str:
        """``raw`` if the model's ids may be it (its ``ids`` rule, else any non-empty string
        of at most 1,024 bytes; the template checks what it can hold), else BAD_USER_INPUT."""
        if self._ids is not None:
            pattern, description = self._ids
            if not pattern.fullmatch(raw):
                raise BadUserInput(f"invalid id {raw[:140]!r}: ids are {description}")
        elif not raw or len(raw.encode()) > 1024:
            raise BadUserInput(f"invalid id {raw[:140]!r}: an id is 1 to 1,024 bytes")
        return raw

    def key_values(self, node: NodeType, key: ItemKey) -> dict[str, str] | None:
        """The placeholder values of ``node``'s key (those its partition key holds, for a
        located key; none of a run's), or None when the key is not of its shape."""
        if type(key.sk) is Located:
            return node.pk.parse(self.layout.text(key.pk))
        if self._typed:
            key = ItemKey(self.layout.text(key.pk), self.layout.text(key.sk))
        values = node.pk.parse(key.pk)
        if values is None:
            return None
        if node.single:
            return values if key.sk == key.pk else None
        rest = node.sk.parse(key.sk)
        if rest is None or any(values.get(k, v) != v for k, v in rest.items()):
            return None
        return values | rest

    def id_of(self, ref: Ref) -> str:
        """A node's ``{id}`` placeholder (a one-template key's one placeholder,
        :attr:`model.NodeType.ident`), from its key ("" for a key without one)."""
        return (self.key_values(ref.type, ref.key) or {}).get(ref.type.ident, "")

    def ref(self, node: NodeType, values: Mapping[str, Any]) -> Ref:
        return Ref(node, self.key(node, values))

    def by_id(self, node: NodeType, raw: str) -> Ref | None:
        """A one-template type's node from what an argument names it by: over ``{id}``, a bare
        id (``xyz``) or its global id (``ORDER#xyz``), a global id of another type finding
        nothing (None); over another placeholder (``ACCOUNT#{username}``), its value
        (``alice``), as its field answers it."""
        if not node.id_keyed:
            return self.ref(node, {node.ident: raw})
        parsed = node.pk.parse(raw)
        if parsed is not None:
            return Ref(node, self.key(node, parsed))
        if any(other.pk.parse(raw) is not None for other in self._singles):
            return None  # another type's global id
        if self._ids is not None and "#" in raw:
            return None  # the shape of a key, of a type this model does not have
        return Ref(node, self.key(node, {"id": raw}))

    def by_value(self, node: NodeType, value: Any) -> Ref | None:
        """The node whose key's one placeholder is ``value`` (a one-template key over ``{id}``
        takes a bare or global id, None for another type's; any other key of one placeholder,
        the bare value)."""
        if node.id_keyed:
            return self.by_id(node, str(value))
        (name,) = node.key_fields
        return self.ref(node, {name: value})

    def by_key(self, node: NodeType, text: str) -> Ref | None:
        """The node whose key ``text`` is (a reference holding a whole key, ``customerID#VINET``):
        its literal text must match; None when it does not."""
        values = node.pk.parse(text)
        if values is None:
            return None
        return Ref(node, self.key(node, values))

    def edge_key(self, edge: EdgeType, source: ItemKey, target: ItemKey) -> ItemKey:
        return ItemKey(source.pk, target.sk)

    # ---- global ids ------------------------------------------------------------------------

    def global_id(self, ref: Ref) -> str:
        """The key itself for a one-template type, else an opaque, stable id."""
        pk, sk = ref.key
        if self._typed:
            pk, sk = self.layout.text(pk), self.layout.text(sk)
        if ref.type.single:
            return pk
        named = [ref.type.name, pk] if ref.type.located else [ref.type.name, pk, sk]
        raw = json.dumps(named, separators=(",", ":"))
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
            isinstance(value, list)
            and len(value) in (2, 3)
            and all(isinstance(v, str) for v in value)
        ):
            return None
        node = self.model.types.get(value[0])
        if node is None or (len(value) == 2) != node.located:
            return None
        if node.located:  # known by its partition (global_id)
            values = node.pk.parse(value[1])
            if values is None:
                raise BadUserInput("invalid global id: its key does not fit its type")
            return Ref(node, self.key(node, values))
        _, pk, sk = value
        key = ItemKey(self.typed(self.layout.pk, pk), self.typed(self.layout.sk, sk))
        values = self.key_values(node, key)
        if values is None:
            raise BadUserInput("invalid global id: its key does not fit its type")
        return Ref(node, key)

    # ---- references --------------------------------------------------------------------------

    def to_target(self, field: Field) -> Callable[[Any], Ref | list[Ref] | None]:
        """What a reference's value names: the node whose one key placeholder it is, whose
        key it holds (``holds: key``), or whose placeholders it gives (a composite key); over a
        list or set, one node per element."""
        target = self.model.types[field.target or ""]

        def one(value: Any) -> Ref | None:
            if value is None:
                return None
            if field.link:
                values = dict(value)
                return None if None in values.values() else self.ref(target, values)
            if field.holds_key:
                return self.by_key(target, str(value))
            return self.by_value(target, value)

        if not field.type.list:
            return one

        def each(value: Any) -> list[Ref] | None:
            if value is None:  # no attribute: no node (an empty list where one is promised)
                return [] if field.type.non_null else None
            if field.keys_of:  # a map: its keys, byte-wise (UTF-8 orders as code points)
                value = sorted(value) if isinstance(value, dict) else ()
            return [r for r in map(one, sorted(value) if isinstance(value, set) else value) if r]

        return each

    def targets_in(self, field: Field, owner: NodeType) -> Callable[[Ref, Item | None], list[Ref]]:
        """The nodes a reference field of ``owner`` names, from the owner's item (None: it does
        not exist, or is another type's, and names none): a path's hop along a reference."""
        to_target = self.to_target(field)

        def stored(ref: Ref, item: Item, name: str) -> Any:
            source = owner.fields[name]
            if source.kind == "key" and (source.from_key or item.get(source.attribute) is None):
                return (self.key_values(ref.type, ref.key) or {}).get(name)
            return item.get(source.attribute)

        def targets(ref: Ref, item: Item | None) -> list[Ref]:
            item = self.own(ref.type, item)  # another type's item names nothing of this one
            if item is None:
                return []
            if field.link:
                value: Any = {mine: stored(ref, item, name) for mine, name in field.link}
            else:
                value = stored(ref, item, field.source or "")
            found = to_target(value)
            return found if isinstance(found, list) else [found] if found is not None else []

        return targets

    # ---- items -----------------------------------------------------------------------------

    def item_key(self, item: Mapping[str, Any]) -> ItemKey:
        return self.layout.item_key(item)

    def node_type(self, item: Mapping[str, Any]) -> NodeType | None:
        """The node type of an item, or None (an edge, or an item no rule explains): the type
        whose value its type attribute holds; else (an item without one) the type whose key
        templates it fits, unless the templates of several fit it (types the type attribute
        alone separates: nothing says which)."""
        if self._type is not None:
            value = item.get(self._type)
            if value is not None:
                return self._by_value.get(value if type(value) is str else str(value))
            if self._label is not None and self._label in item:
                return None  # an edge item
        key = self.item_key(item)
        if internal(key):  # idempotency, jobs, clocks
            return None
        for node in self.model.types.values():
            if not node.implicit and self.key_values(node, key) is not None:
                if node.name in self._shared:
                    return None  # its key alone does not say which type
                return node
        return None

    def own(self, node: NodeType, item: Any) -> Any:
        """``item`` where it is an item of ``node``'s type, else None (an item of another type
        at that key is missing for this one); None and UNKNOWN pass through. Without a type
        attribute on the table, or on the item, its key decided: it is ``node``'s, unless
        the type attribute alone separates ``node`` from another type."""
        attribute = self._type
        if attribute is None or item is None or item is UNKNOWN:
            return item
        value = item.get(attribute)
        if value is None:
            return None if node.name in self._shared else item
        return item if value == node.type_value or str(value) == node.type_value else None

    def shared(self, node: NodeType) -> bool:
        """Whether another type's items can have the keys of ``node``'s, told apart by the type
        attribute only: a key of it names a node only with its item's type value."""
        return node.name in self._shared

    def of_type(self, node: NodeType, expr: Expr) -> str:
        """The condition (`` AND …``) that the item written is of ``node``'s type (empty
        without a type attribute): a write on another type's item is NOT_FOUND."""
        if self._type is None:
            return ""
        name, value = expr.name(self._type), expr.value(node.type_value)
        if node.name in self._shared:
            return f" AND {name} = {value}"
        return f" AND (attribute_not_exists({name}) OR {name} = {value})"

    def edge_type(self, item: Mapping[str, Any]) -> EdgeType | None:
        model = self.model
        if model.label_attribute is not None and model.label_attribute in item:
            return model.edges.get(str(item[model.label_attribute]))
        if model.type_attribute is not None and model.type_attribute in item:
            return None
        key = self.item_key(item)
        if key.pk == key.sk or key.sk == CLOCK_SK:  # a node's own item, or Edgewise's own
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

    # ---- listings --------------------------------------------------------------------------

    def keeps_edges(self, edge: EdgeType) -> Callable[[Item], bool]:
        """Whether a listed item is an ``edge`` item (one test per edge type, so listings that
        use it compare equal)."""
        found = self._keeps.get(("edge", edge.label))
        if found is None:

            def keep(item: Item) -> bool:
                found = self.edge_type(item)
                if found is None and self.node_type(item) is None:
                    self._unexplained(item, f"the {edge.label} edges")
                return found is edge

            found = self._keeps[("edge", edge.label)] = keep
        return found

    def _unexplained(self, item: Item, where: str) -> None:
        """An item a listing returned that no declaration of the model explains: skipped, and
        logged once per listing kind and process."""
        if where in self._logged or internal(self.item_key(item)):
            return
        self._logged.add(where)
        key = self.item_key(item)
        log.warning(
            "skipped an item no type of the model explains in %s: %s=%r %s=%r",
            where,
            self.layout.pk,
            key.pk,
            self.layout.sk,
            key.sk,
        )

    def keeps_nodes(self, *nodes: NodeType, sources: bool = False) -> Callable[[Item], bool]:
        """Whether a listed item answers a node of one of ``nodes`` (one type, or the several
        of a collection): a node's own item, or an edge item with such a node at one end
        (:meth:`listed`); with ``sources``, at its ``from`` end only (a partition of an index
        keyed on the table's sort key holds a node and the edges to it: those answer their
        sources, never that node again). Items of other types are never answered nor
        counted."""
        names = tuple(n.name for n in nodes)
        found = self._keeps.get(("sources" if sources else "node", *names))
        if found is None:
            where = f"a list of {' or '.join(names)}"

            def keep(item: Item) -> bool:
                found = self.node_type(item)
                if found is not None and found.name in names:
                    return True
                edge = self.edge_type(item) if found is None else None
                if edge is None and found is None:
                    self._unexplained(item, where)
                if edge is None:
                    return False
                return edge.source in names or (not sources and edge.target in names)

            found = self._keeps[("sources" if sources else "node", *names)] = keep
        return found

    def listed(self, item: Item, names: tuple[str, ...], whole: bool = True) -> Ref:
        """The node a kept item of a listing of ``names`` answers (:meth:`keeps_nodes`): the
        item's own node (the item attached when ``whole``: not read from an index projecting
        only some attributes), or the end of an edge item that is of one of those types (its
        ``from`` end when both are)."""
        found = self.node_type(item)
        if found is not None and found.name in names:
            return Ref(found, self.item_key(item), item if whole else None)
        edge = self.edge_type(item)
        assert edge is not None  # the listing kept only such items
        return self.end(edge, item, "from" if edge.source in names else "to")

    def edges_at(
        self,
        edge: EdgeType,
        key: ItemKey,
        end: str,
        index: Index | None = None,
        forward: bool = True,
    ) -> Listing | None:
        """The listing of every ``edge`` item whose ``end`` is the node at ``key``: its
        partition (``from``), else the incoming edges on ``index`` (by default the first index
        that lists them): an index whose pk is the table's sort key (read with the source's key
        prefix only where the index's sort key is the table's partition key), or one the edge
        writes with a pk of ``{to}`` alone. An index keyed on the table's sort key with another
        sort key (``Data``) holds only the items that have it, so it lists incoming edges only
        where it is named or is the edge's reverse index. None where no index lists them."""
        keep = self.keeps_edges(edge)
        types = self.model.types
        if end == "from":
            branch = Branch(key.pk, types[edge.target].pk.literal_prefix)
            return Listing(None, (branch,), forward, keep=keep)
        declared = edge.reverse.index if edge.reverse is not None else None
        candidates = [index] if index is not None else list(self.model.indexes.values())
        for candidate in candidates:
            write = next((w for w in edge.indexes if w.index == candidate), None)
            if write is not None and set(write.pk.placeholders) <= {"to"}:
                target = types[edge.target]
                node_id = (self.key_values(target, key) or {}).get(target.ident)
                partition = self.format(write.pk, {"to": node_id})
                prefix = write.sk.prefix({}) if write.sk else ""
                return Listing(candidate.name, (Branch(partition, prefix),), forward, keep=keep)
            if candidate.pk == self.layout.sk:
                inverted = candidate.sk == self.layout.pk
                if not inverted and candidate not in (index, declared):
                    continue  # holds only the items with its sort key: not every edge
                prefix = types[edge.source].pk.literal_prefix if inverted else ""
                return Listing(candidate.name, (Branch(key.sk, prefix),), forward, keep=keep)
        return None


def _shared(model: Model) -> frozenset[str]:
    """The types whose items another type's can share keys with (two types with one template,
    or unprefixed keys): the type attribute alone tells them apart."""
    items = [t for t in model.types.values() if not t.implicit]
    out: set[str] = set()
    for i, a in enumerate(items):
        for b in items[:i]:
            if overlap(a.pk, b.pk) and overlap(a.sk, b.sk):
                out |= {a.name, b.name}
    return frozenset(out)
