"""Resolvers, one per kind of field (not per type): stored values, key fields, references,
parents, child collections, edges in both directions, access patterns, first/sum. A node is a
lazy :class:`graph.items.Ref`; a field reads what it needs through the request's loaders, and
reads nothing when its value is in the key or the item is already in hand.

Every connection-like field has one *lister* (node, arguments, context) -> :class:`Conn`, used
both by its resolver and by the planned prefetch (:mod:`server.engine.plan`), which starts a root
lookup's selected loads in the lookup's own wave and reads the levels below."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from graphql import GraphQLObjectType

from graph.errors import EdgewiseError, NotFound
from graph.items import Codec, Ref
from graph.keys import ItemKey
from graph.marks import is_marked
from graph.reads import UNKNOWN, Page
from graph.table import Item
from model import Field, NodeType, TypeRef
from server.engine import plan as planned
from server.engine.context import Info, ModelContext
from server.engine.listings import (
    DEFAULT_FIRST,
    MAX_FIRST,
    Conn,
    EdgeValue,
    ItemNeeded,
    Lister,
    Listings,
    _node,
    _render,
    check_first,
    edges_for,
    edges_of,
    from_copies,
)
from server.engine.scalars import WrongType, to_graphql

__all__ = [
    "DEFAULT_FIRST",
    "MAX_FIRST",
    "Conn",
    "EdgeValue",
    "Lister",
    "Resolvers",
    "check_first",
    "lookup",
    "lookup_args",
    "lookup_node",
]  # Conn, EdgeValue, Lister, check_first and the limits: server.engine.listings

log = logging.getLogger("edgewise")


class Resolvers(Listings):
    """Resolver factories over one model."""

    # ---- values ----------------------------------------------------------------------------

    def _convert(self, field: Field, ref: Ref, value: Any) -> Any:
        try:
            return to_graphql(field.type, value, self.enums, self.model.objects, field.entries)
        except WrongType as exc:
            log.error(
                "item %s=%r %s=%r: attribute %r of %s.%s %s",
                self.codec.layout.pk,
                ref.key.pk,
                self.codec.layout.sk,
                ref.key.sk,
                field.attribute,
                ref.type.name,
                field.name,
                exc,
            )
            raise

    def value(self, field: Field) -> Callable[..., Any]:
        attribute = field.attribute

        async def later(ref: Ref, info: Info) -> Any:
            item = await info.context.item(ref)
            if item is None:
                return missing(ref)
            return self._convert(field, ref, item.get(attribute))

        def missing(ref: Ref) -> None:
            if ref.type.implicit:  # nothing stored under its own key: its fields are null
                return None
            raise NotFound(f"{ref.key.pk} does not exist")

        def resolve(ref: Ref, info: Info) -> Any:
            item = ref.item
            if item is None:
                item = info.context.known(ref)
                if item is UNKNOWN:
                    return later(ref, info)
                if item is None:
                    return missing(ref)
                ref.item = item
            return self._convert(field, ref, item.get(attribute))

        return resolve

    def hook(self, field: Field) -> Callable[..., Any]:
        """A field the model's Python function answers: ``await hook(context, ref, **args)``."""
        function = load_hook(field.hook or "")

        def resolve(ref: Ref, info: Info, **args: Any) -> Any:
            return function(info.context, ref, **args)

        return resolve

    def key_value(self, field: Field) -> Callable[..., Any]:
        """A key placeholder: its own attribute when the node's item is in hand and has one
        (a key may hold a cased or formatted copy), else parsed from the key, so it costs no
        read; under ``keyCasing`` the item is read, since the key holds a cased copy, and so
        is it for a placeholder the key alone does not give (``NodeType.unparsed``). With
        ``from: key``, parsed from the key whatever the item holds."""
        name, attribute = field.name, field.attribute
        convert = {"Int": int, "Float": float}.get(field.type.name, str)
        cased = self.model.key_casing != "none"  # the key holds a cased copy: read the item

        async def later(ref: Ref, info: Info) -> Any:
            ref.item = await info.context.item(ref)
            return resolve(ref, info)

        def resolve(ref: Ref, info: Info) -> Any:
            item = ref.item
            if item is None:
                known = info.context.known(ref)
                if known is UNKNOWN and (cased or name in ref.type.unparsed):
                    return later(ref, info)
                item = None if known is UNKNOWN else known
            if item is not None and item.get(attribute) is not None:
                return self._convert(field, ref, item[attribute])
            return parse(ref, item)

        def parse(ref: Ref, item: Any) -> Any:
            values = self.codec.key_values(ref.type, ref.key) or {}
            raw = values.get(name)
            if raw is None and item is not None:  # a located node: its item's key holds it
                raw = (self.codec.key_values(ref.type, self.codec.item_key(item)) or {}).get(name)
            try:
                return None if raw is None else convert(raw)
            except ValueError:
                return self._convert(field, ref, (item or {}).get(attribute))

        if field.from_key:  # `from: key`: the attribute of that name holds something else
            return lambda ref, info: parse(ref, None)
        return resolve

    async def by_unique(
        self, node: NodeType, field: Field, _root: Any, info: Info, **args: Any
    ) -> Ref | None:
        """The node holding a unique value: its claim item, then the node (two reads)."""
        unique = field.unique
        assert unique is not None
        value = args[field.name]
        text = str(value).lower() if unique.case_insensitive else str(value)
        claim = _render(lambda: unique.key.format({field.name: text}))
        found = await info.context.reads.items.load(ItemKey(claim, claim))
        owner = found.get(unique.owner) if found else None
        ref = Ref(node, ItemKey(owner, owner)) if isinstance(owner, str) else None
        scope = info.context.scope
        if scope is not None:  # finding a node by a value is reading that value
            await scope.check_field(node.name, field.name, ref)
        return await lookup(info, ref)

    def global_id(self, ref: Ref, info: Info) -> str:
        return self.codec.global_id(ref)

    def reference(self, field: Field, owner: NodeType) -> Callable[..., Any]:
        """The node (or, over a list, the nodes) the field's value names: lazy when non-null,
        read when nullable (to answer null for a missing node) in the same wave as its own
        fields."""
        source_value = self.reference_source(field, owner)
        to_target = self.codec.to_target(field)
        implicit = self.model.types[field.target or ""].implicit
        nullable = not field.type.non_null and not field.type.list and not implicit
        existing = field.keys_of and not implicit  # a key with no item is left out

        def resolve(ref: Ref, info: Info) -> Any:
            """At once when the value and (for a nullable reference) the node are in memory."""
            ctx: ModelContext = info.context
            value = source_value(ref, info)
            if asyncio.iscoroutine(value):
                return later(ref, info, value)
            found = to_target(value)
            if found is None:
                return None
            if isinstance(found, list):
                if existing:
                    items = [ctx.known(r) for r in found]
                    if any(i is UNKNOWN for i in items):
                        return later(ref, info, value)
                    found = self._stored_only(found, items)
                return found if ctx.scope is None else readable(found, ctx)
            if nullable:
                item = ctx.known(found)
                if item is UNKNOWN:
                    return later(ref, info, value)
                found.item = item
                if item is None or is_marked(self.model, item):
                    return None
            if ctx.scope is not None and not ctx.scope.decided(found):
                return later(ref, info, value)  # not yet decided, or denied: says why
            return found

        async def readable(found: list[Ref], ctx: ModelContext) -> list[Ref]:
            assert ctx.scope is not None
            return [await ctx.scope.checked(r) for r in found]

        async def later(ref: Ref, info: Info, value: Any) -> Any:
            if asyncio.iscoroutine(value):
                value = await value
            found = to_target(value)
            if found is None:
                return None
            scope = info.context.scope
            if isinstance(found, list):
                if existing:
                    items = await info.context.reads.items.load_many([r.key for r in found])
                    found = self._stored_only(found, items)
                return found if scope is None else await readable(found, info.context)
            if scope is not None:
                scope.can_read(found)  # started beside the read below
            if nullable:
                item = await info.context.item(found)
                if item is None or is_marked(self.model, item):
                    return None
            return found if scope is None else await scope.checked(found)

        return resolve

    def _stored_only(self, found: list[Ref], items: list[Item | None]) -> list[Ref]:
        """The nodes whose item exists (of their type, and is not being deleted), each with
        its item."""
        kept = []
        for ref, item in zip(found, items, strict=True):
            item = self.codec.own(ref.type, item)
            if item is not None and not is_marked(self.model, item):
                ref.item = item
                kept.append(ref)
        return kept

    def reference_source(self, field: Field, owner: NodeType) -> Callable[..., Any]:
        """The value a reference names its node by, or a coroutine when the owner's item is
        still to read; a composite key's placeholders as a dict."""
        if not field.link:
            source = owner.fields[field.source or ""]
            if field.keys_of and source.entries is not None:  # its map as stored: the keys
                source = replace(source, type=TypeRef("JSON"), entries=None)
            return self._stored(source)
        parts = [(mine, self._stored(owner.fields[name])) for mine, name in field.link]

        def values(ref: Ref, info: Info) -> Any:
            out = {}
            for placeholder, get in parts:
                value = get(ref, info)
                if asyncio.iscoroutine(value):
                    value.close()
                    return later(ref, info)
                out[placeholder] = value
            return out

        async def later(ref: Ref, info: Info) -> Any:
            await info.context.item(ref)  # then every part is in memory
            return values(ref, info)

        return values

    def _stored(self, source: Field) -> Callable[..., Any]:
        return self.key_value(source) if source.kind == "key" else self.value(source)

    def reference_target(self, field: Field, owner: NodeType) -> Callable[[Ref, Info], Any]:
        """The referenced node (or nodes) from an item in memory (for the planned prefetch),
        or None."""
        source_value = self.reference_source(field, owner)
        to_target = self.codec.to_target(field)

        def find(ref: Ref, info: Info) -> Ref | list[Ref] | None:
            try:
                value = source_value(ref, info)
            except (EdgewiseError, WrongType):
                return None
            if value is None or asyncio.iscoroutine(value):
                if asyncio.iscoroutine(value):
                    value.close()
                return None
            try:
                return to_target(value)
            except EdgewiseError:
                return None

        return find

    def parent(self, node: NodeType) -> Callable[..., Any]:
        assert node.parent is not None

        def resolve(ref: Ref, info: Info) -> Any:
            found = self.parent_of(ref)
            scope = info.context.scope
            return found if scope is None or scope.decided(found) else scope.checked(found)

        return resolve

    # ---- connection fields -----------------------------------------------------------------

    def connection(self, lister: Lister) -> Callable[..., Any]:
        async def later(ref: Ref, info: Info, args: dict[str, Any]) -> Conn:
            await info.context.item(ref)
            return lister(ref, args, info.context)

        def resolve(ref: Ref, info: Info, **args: Any) -> Any:
            try:
                return lister(ref, args, info.context)
            except ItemNeeded:  # an `on:` pattern's placeholder is a stored field
                return later(ref, info, args)

        return resolve

    def root_connection(self, lister: Lister) -> Callable[..., Any]:
        """An access pattern at the root: its connection, with what its selection reads."""

        async def resolve(_root: Any, info: Info, **args: Any) -> Conn:
            ctx: ModelContext = info.context
            conn = lister(None, args, ctx)  # type: ignore[arg-type]
            step = planned.root_step(info)
            if step is not None:
                await planned.prefetch(info, [], conn, step)
            return conn

        return resolve

    def one(self, lister: Lister) -> Callable[..., Any]:
        """At most one edge: its far end, or null."""

        async def later(conn: Conn, info: Info) -> Ref | None:
            edges = await self.page_edges(conn, info)
            if edges and info.context.scope is not None:
                await info.context.scope.check(edges[0].node)
            return edges[0].node if edges else None

        def resolve(ref: Ref, info: Info) -> Any:
            ctx: ModelContext = info.context
            conn = lister(ref, {"first": 1}, ctx)
            page = ctx.reads.known_page(conn.key)
            if page is UNKNOWN:
                return later(conn, info)
            edges = edges_of(conn, page, ctx)
            if edges and ctx.scope is not None and not ctx.scope.decided(edges[0].node):
                return later(conn, info)  # not yet decided, or denied: says why
            return edges[0].node if edges else None

        return resolve

    def first(self, field: Field, lister: Lister) -> Callable[..., Any]:
        return self.one(lister)

    def sum(self, field: Field, lister: Lister, summed: Field) -> Callable[..., Any]:
        async def resolve(ref: Ref, info: Info) -> Any:
            conn = lister(ref, {"first": 0}, info.context)
            items = await info.context.reads.alls.load(conn.key.listing)
            total: Any = 0
            for item in items:
                node = _node(conn, item, info.context)
                if node is not None:
                    value = self._convert(summed, node, item.get(summed.attribute))
                    total += value or 0
            return total

        return resolve

    async def page(self, conn: Conn, info: Info) -> Page:
        page: Page = await info.context.reads.pages.load(conn.key)
        return page

    def edges(self, conn: Conn, info: Info) -> Any:
        """The page's edges, less those whose node the caller may not read: at once when the
        page is in memory (the planned prefetch read it), else read with what is below."""
        ctx: ModelContext = info.context
        wanted = _node_selection(info)
        edges = ctx.edges.get((conn.key, wanted))
        if edges is None:
            page = ctx.reads.known_page(conn.key)
            if page is UNKNOWN:
                return self._edges(conn, info)
            edges = edges_for(conn, page, wanted, ctx)
        scope = ctx.scope
        if scope is None:
            return edges
        verdicts = [scope.decided(e.node) for e in edges]
        if None in verdicts:  # some not decided yet
            return self._edges(conn, info)
        return [e for e, readable in zip(edges, verdicts, strict=True) if readable]

    async def _edges(self, conn: Conn, info: Info) -> list[EdgeValue]:
        edges = await self.page_edges(conn, info)
        from_copies(conn, edges, _node_selection(info), info.context)
        scope = info.context.scope
        if scope is not None:
            edges = await scope.visible(edges)
        below = planned.below_edges(info)
        if below is not None and edges:
            await planned.prefetch(info, [(e.node, below.of(e.node)) for e in edges])
        return edges

    async def page_edges(self, conn: Conn, info: Info) -> list[EdgeValue]:
        return edges_of(conn, await self.page(conn, info), info.context)

    def page_info(self, conn: Conn, info: Info) -> Any:
        page = info.context.reads.known_page(conn.key)
        if page is UNKNOWN:
            return self._page_info(conn, info)
        return _page_info(page)

    async def _page_info(self, conn: Conn, info: Info) -> dict[str, Any]:
        return _page_info(await self.page(conn, info))

    def total_count(self, conn: Conn, info: Info) -> Any:
        reads = info.context.reads
        if conn.counter is not None and conn.owner is not None:
            item = info.context.known(conn.owner)
            if item is not UNKNOWN:
                return int((item or {}).get(conn.counter, 0))
        else:
            count = reads.known_count(conn.key.listing)
            if count is not UNKNOWN:
                return count
        return self._total_count(conn, info)

    async def _total_count(self, conn: Conn, info: Info) -> int:
        if conn.counter is not None and conn.owner is not None:
            item = await info.context.item(conn.owner)
            return int((item or {}).get(conn.counter, 0))
        count: int = await info.context.reads.counts.load(conn.key.listing)
        return count

    def edge_field(self, field: Field) -> Callable[..., Any]:
        attribute = field.attribute

        def resolve(edge: EdgeValue, info: Info) -> Any:
            return self._convert(field, edge.node, edge.item.get(attribute))

        return resolve


def _page_info(page: Page) -> dict[str, Any]:
    cursors = page.cursors
    return {
        "hasNextPage": page.has_next,
        "hasPreviousPage": page.has_previous,
        "startCursor": cursors[0] if cursors else None,
        "endCursor": cursors[-1] if cursors else None,
    }


def exposed(fields: dict[str, Any], names: tuple[str, ...] | None) -> dict[str, Any]:
    """The fields ``names`` lists, in its order; every field without a list."""
    return fields if names is None else {name: fields[name] for name in names}


def load_hook(dotted: str) -> Callable[..., Any]:
    """The function ``package.module:function`` (checked when the model was compiled)."""
    module, _, name = dotted.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


# ---- root lookups ---------------------------------------------------------------------------


def _node_selection(info: Info) -> frozenset[str] | None:
    """The fields selected under ``node`` by the ``edges`` being resolved (fragments and
    directives applied), or None when no ``node`` is selected."""
    below = planned.below_edges(info)
    return None if below is None else below.names


async def lookup(info: Info, ref: Ref | None) -> Ref | None:
    """The node at ``ref``, or None when it does not exist; its selected connections load in
    the same wave as its item."""
    if ref is None:
        return None
    object_type = info.schema.get_type(ref.type.name)
    assert isinstance(object_type, GraphQLObjectType)
    chosen = planned.selection(info, object_type, info.field_nodes)
    existence = planned.start(info, ref, chosen)  # in the same wave as the node's item
    scope = info.context.scope
    if scope is not None:
        scope.can_read(ref)  # started now: its reads join this wave
    if existence is not None:
        await existence
    if not ref.type.implicit:  # an implicit node is answered from its key, with no read
        item = await info.context.item(ref)
        if item is None or is_marked(info.context.codec.model, item):
            return None
    if scope is not None and await scope.hides(ref):
        return None
    await planned.prefetch(info, [(ref, chosen)])
    return ref


async def lookup_node(info: Info, ref: Ref | None) -> Ref | None:
    """``node(id:)``: :func:`lookup` of the node a global id names. A one-template key that
    another type's items can have too (the type attribute alone tells them apart) is read
    first, and its item says which type it is (a node of no type, or of a type that is not
    a Node, is null)."""
    codec = info.context.codec
    if ref is not None and ref.type.single and codec.shared(ref.type):
        item = await info.context.reads.items.load(ref.key)
        found = codec.node_type(item) if item is not None else None
        if found is None or not (found.single and found.node):
            return None
        if codec.key_values(found, ref.key) is None:
            return None
        ref = Ref(found, ref.key, item)
    return await lookup(info, ref)


def lookup_args(codec: Codec, node: NodeType, args: dict[str, Any]) -> Ref | None:
    if node.id_keyed:
        return codec.by_id(node, str(args["id"]))
    return codec.ref(node, args)
