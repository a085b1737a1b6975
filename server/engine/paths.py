"""Transitive path fields (``path:`` in the model file, compiled in :mod:`model.paths`): follow
edge fields hop by hop from a node, keep the last edges the field's ``where`` lets through, and
answer the nodes reached, one object per node reached, or whether one given node is reached.

Each hop is one wave: every node the hop starts from lists its edges at once (one Query each,
through the request's loaders, so a listing another field or an access check reads is read
once). A root lookup starts the first hop in its own wave. The existence test lists every hop
but the last, then reads the last hop's edge items by key (one BatchGetItem), the node looked
for being known. What the principal may not read is left out of a list, as a connection does.
Nothing here names a type of a particular model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from graph.items import Ref
from graph.keys import ItemKey
from graph.reads import Listing
from graph.table import Item
from graph.writes.replicas import clock_key, holds, pending, replica_listing
from model import EdgeType, Field
from model.values import Hop, Walk
from server.engine.context import Info, ModelContext
from server.engine.fields import Resolvers
from server.engine.listings import Lister

__all__ = ["PathField", "path_resolvers"]

Reached = dict[ItemKey, Ref]
Through = dict[ItemKey, dict[int, dict[ItemKey, Ref]]]  # node -> hop -> the nodes it came by


class PathField:
    """The resolver of one path field and the loads it starts in a root lookup's wave."""

    def __init__(self, resolvers: Resolvers, field: Field) -> None:
        assert field.walk is not None
        self.walk: Walk = field.walk
        self.codec = resolvers.codec
        model = resolvers.model
        self.steps: list[tuple[Hop, EdgeType | None, Lister | None]] = []
        self.refs: dict[int, Callable[[Ref, Item | None], list[Ref]]] = {}
        self.existing: set[int] = set()  # hops over a map's keys: a key with no item is none
        self.stored_only = resolvers._stored_only
        for i, hop in enumerate(self.walk.hops):
            if hop.ref:  # the nodes a reference field's value names
                owner = model.types[hop.start]
                ref = owner.fields[hop.field]
                self.refs[i] = resolvers.codec.targets_in(ref, owner)
                if ref.keys_of and not model.types[ref.target or ""].implicit:
                    self.existing.add(i)
                self.steps.append((hop, None, None))
                continue
            edge = model.edges[hop.edge]
            lister = resolvers.forward(edge) if hop.far == "to" else resolvers.reverse(edge)
            self.steps.append((hop, edge, lister))
        self.target = model.types[self.walk.target]

    @staticmethod
    def _listing(lister: Lister | None, ref: Ref, ctx: ModelContext) -> Listing:
        assert lister is not None
        return lister(ref, {"first": 0}, ctx).key.listing

    def start(self, ctx: ModelContext, ref: Ref, **args: Any) -> list[Awaitable[Any]]:
        """The first hop's read, for a root lookup to start with its own."""
        if self.walk.replica is not None:
            replicas = self._replicas(ref, args)
            return [ctx.reads.items.load(clock_key(ref)), ctx.reads.alls.load(replicas)]
        if self.steps[0][0].ref:
            return [ctx.reads.items.load(ref.key)]
        if self.walk.answer == "exists" and len(self.steps) == 1:
            key = self._edge_key(ref, args)
            return [] if key is None else [ctx.reads.items.load(key)]
        return [ctx.reads.alls.load(self._listing(self.steps[0][2], ref, ctx))]

    def resolve(self, ref: Ref, info: Info, **args: Any) -> Awaitable[Any]:
        if self.walk.replica is not None:
            return self._replicated(info.context, ref, args)
        if self.walk.answer == "exists":
            return self._exists(info.context, ref, args)
        return self._list(info.context, ref)

    # ---- walking ---------------------------------------------------------------------------

    async def _reach(
        self, ctx: ModelContext, start: Ref, hops: int, now: datetime, track: bool
    ) -> tuple[Reached, Through]:
        """The nodes the first ``hops`` hops reach from ``start``, each once, in the order first
        reached, and (``track``) the nodes of every earlier hop each is reached through."""
        where, last = self.walk.where, len(self.steps) - 1
        level: Reached = {start.key: start}
        through: Through = {start.key: {}}
        for i, (hop, edge, lister) in enumerate(self.steps[:hops]):
            nodes = list(level.values())
            if hop.ref:  # each node's item names the nodes of this hop
                found = await ctx.reads.items.load_many([n.key for n in nodes])
                fars = [self.refs[i](n, item) for n, item in zip(nodes, found, strict=True)]
                if i in self.existing:  # read now (the next hop reads them anyway)
                    items = await asyncio.gather(
                        *(ctx.reads.items.load_many([r.key for r in refs]) for refs in fars)
                    )
                    fars = list(map(self.stored_only, fars, items))
            else:
                listings = [self._listing(lister, n, ctx) for n in nodes]
                pages = await ctx.reads.alls.load_many(listings)
                fars = [
                    self._ends(edge, hop, items, now, where if i == last else None)
                    for items in pages
                ]
            reached: Reached = {}
            reached_through: Through = {}
            for node, ends in zip(nodes, fars, strict=True):
                came = through.get(node.key, {})
                if track and i > 0:
                    came = {**came, i - 1: {node.key: node}}
                for far in ends:
                    if far.key not in reached:
                        reached[far.key] = far
                        reached_through[far.key] = {}
                    if track:
                        into = reached_through[far.key]
                        for index, refs in came.items():
                            into.setdefault(index, {}).update(refs)
            level, through = reached, reached_through
        return level, through

    def _ends(
        self, edge: EdgeType | None, hop: Hop, items: list[Item], now: datetime, test: Any
    ) -> list[Ref]:
        """The far ends of a listing's ``edge`` items that ``test`` (the path's filter, on its
        last hop) lets through."""
        assert edge is not None
        codec = self.codec
        return [
            codec.end(edge, item, hop.far)
            for item in items
            if codec.edge_type(item) is edge and (test is None or test.holds(item, now))
        ]

    async def _list(self, ctx: ModelContext, ref: Ref) -> list[Any]:
        objects = self.walk.answer == "objects"
        reached, through = await self._reach(ctx, ref, len(self.steps), datetime.now(UTC), objects)
        return await self._answer(ctx, reached, through)

    async def _answer(self, ctx: ModelContext, reached: Reached, through: Through) -> list[Any]:
        """The nodes reached, or one object per node reached (filled from the nodes of each
        hop it is reached through), leaving out what the principal may not read."""
        walk = self.walk
        objects = walk.answer == "objects"
        last = len(self.steps) - 1
        if not objects:
            nodes = list(reached.values())
            return nodes if ctx.scope is None else await self._readable(ctx, nodes)
        ends = [name for name, index in walk.fills if index == last]
        lists = [(name, index) for name, index in walk.fills if index != last]
        rows = [
            (far, {name: list(through[key].get(index, {}).values()) for name, index in lists})
            for key, far in reached.items()
        ]
        scope = ctx.scope
        if scope is not None:
            # what the principal may not read is left out: a node reached, or one it comes by
            refs: Reached = {}
            for far, vias in rows:
                for r in (far, *(r for via in vias.values() for r in via)):
                    refs.setdefault(r.key, r)
            verdicts = await asyncio.gather(*(scope.can_read(r) for r in refs.values()))
            readable = {key for key, ok in zip(refs, verdicts, strict=True) if ok}
            rows = [
                (far, {name: [r for r in via if r.key in readable] for name, via in vias.items()})
                for far, vias in rows
                if far.key in readable
            ]
        return [{**dict.fromkeys(ends, far), **vias} for far, vias in rows]

    @staticmethod
    async def _readable(ctx: ModelContext, nodes: list[Ref]) -> list[Ref]:
        scope = ctx.scope
        assert scope is not None
        verdicts = await asyncio.gather(*(scope.can_read(n) for n in nodes))
        return [n for n, ok in zip(nodes, verdicts, strict=True) if ok]

    # ---- from a replica --------------------------------------------------------------------

    def _replicas(self, start: Ref, args: dict[str, Any]) -> Listing:
        """The Query of ``start``'s replica items (of the one end an existence test names)."""
        replica = self.walk.replica
        assert replica is not None
        to = None
        if self.walk.answer == "exists":
            assert self.walk.argument is not None
            target = self.codec.by_id(self.target, str(args[self.walk.argument]))
            to = None if target is None else self.codec.id_of(target)
        return replica_listing(self.codec, replica, start, to)

    async def _replicated(self, ctx: ModelContext, ref: Ref, args: dict[str, Any]) -> Any:
        """The field read from its replica: one Query of the start's partition, the start's
        item (or its clock's) read beside it; a start whose replicas are being written is
        walked instead."""
        replica = self.walk.replica
        assert replica is not None
        if self.walk.answer == "exists":
            assert self.walk.argument is not None
            if self.codec.by_id(self.target, str(args[self.walk.argument])) is None:
                return False  # names no node of the end type (also checks the argument)
        item, items = await asyncio.gather(
            ctx.reads.items.load(clock_key(ref)), ctx.reads.alls.load(self._replicas(ref, args))
        )
        if pending(item):
            return await (
                self._exists(ctx, ref, args)
                if self.walk.answer == "exists"
                else self._list(ctx, ref)
            )
        now, where = datetime.now(UTC), self.walk.where
        codec = self.codec
        rows: dict[ItemKey, tuple[Ref, dict[int, dict[ItemKey, Ref]]]] = {}
        types = [h.type for h in replica.hops]
        for found in items:
            if not holds(codec, replica, found) or (
                where is not None and not where.holds(found, now)
            ):
                continue
            values = replica.sk.parse(str(found[codec.layout.sk]))
            assert values is not None  # holds() parsed it
            far = codec.ref(self.target, {"id": values["to"]})
            _, vias = rows.setdefault(far.key, (far, {}))
            for k, name in enumerate(replica.vias):
                via = codec.ref(self.codec.model.types[types[k]], {"id": values[name]})
                vias.setdefault(k, {})[via.key] = via
        if self.walk.answer == "exists":
            return bool(rows)
        return await self._answer(
            ctx,
            {key: far for key, (far, _) in rows.items()},
            {key: vias for key, (_, vias) in rows.items()},
        )

    # ---- existence -------------------------------------------------------------------------

    def _edge_key(self, near: Ref, args: dict[str, Any]) -> ItemKey | None:
        """The key of the last hop's edge item from ``near`` to the node the argument names;
        None when it names no node of the path's end type (another type's global id)."""
        assert self.walk.argument is not None
        target = self.codec.by_id(self.target, str(args[self.walk.argument]))
        if target is None:
            return None
        hop, edge, _ = self.steps[-1]
        assert edge is not None  # the last hop follows an edge (_exists)
        if hop.far == "to":
            return self.codec.edge_key(edge, near.key, target.key)
        return self.codec.edge_key(edge, target.key, near.key)

    async def _exists(self, ctx: ModelContext, ref: Ref, args: dict[str, Any]) -> bool:
        if self.steps[-1][0].ref:  # a reference names the last nodes: reach them all
            assert self.walk.argument is not None
            target = self.codec.by_id(self.target, str(args[self.walk.argument]))
            if target is None:
                return False
            reached, _ = await self._reach(ctx, ref, len(self.steps), datetime.now(UTC), False)
            return target.key in reached
        if self._edge_key(ref, args) is None:  # also checks the argument (BAD_USER_INPUT)
            return False
        now = datetime.now(UTC)
        before, _ = await self._reach(ctx, ref, len(self.steps) - 1, now, False)
        keys = [key for n in before.values() if (key := self._edge_key(n, args)) is not None]
        found = await ctx.reads.items.load_many(keys) if keys else []
        edge, where = self.steps[-1][1], self.walk.where
        return any(
            item is not None
            and self.codec.edge_type(item) is edge
            and (where is None or where.holds(item, now))
            for item in found
        )


def path_resolvers(
    resolvers: Resolvers, field: Field
) -> tuple[Callable[..., Awaitable[Any]], Callable[..., list[Awaitable[Any]]]]:
    """A path field's resolver and its first loads (see :func:`server.engine.plan.start`)."""
    path = PathField(resolvers, field)
    return path.resolve, path.start
