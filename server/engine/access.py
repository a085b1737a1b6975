"""A model's access rules, enforced per request (the file's ``access`` section, compiled in
:mod:`model.access`): which nodes, fields and mutations a principal who is not an admin may
reach, decided from the graph itself through the request's reads.

A path's hops but its last are listings: the principal's own edges (then those of the nodes
they lead to), each read once per request (a first page that held a whole listing is reused).
The last hop is decided by the edge item that would join a node found so to the node checked:
in hand when the connection page that listed the node was one of those nodes' (then the check
is decided at once, with no read and no task), else read by key through the items loader,
batched with the request's other reads. A one-hop path is answered from the principal's own
listing. So a check costs at most one wave more than the read it guards, and
repeats no read. Nothing here names a type of a particular model."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable
from typing import Any

from graphql import GraphQLField, GraphQLObjectType, GraphQLSchema

from graph.errors import BadUserInput, NotFound
from graph.items import Codec, Ref
from graph.keys import ItemKey
from graph.table import Item
from model import Model
from model.values import Access, AccessPath, Grant, Hop
from server.engine.context import Info, ModelContext, granted
from server.engine.listings import EdgeValue, Lister, Listings
from server.errors import Forbidden

__all__ = ["Rules", "Scope", "guard"]


def _done(value: bool) -> asyncio.Future[bool]:
    future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    future.set_result(value)
    return future


def _retrieved(future: asyncio.Future[Any]) -> None:
    """A done callback: the future's exception, if any, counts as seen (no warning)."""
    if not future.cancelled():
        future.exception()


def _member(reached: asyncio.Future[frozenset[ItemKey]], key: ItemKey) -> asyncio.Future[bool]:
    """Whether ``key`` is among the keys ``reached`` will hold: a future that follows it, with
    no task of its own (a level of nodes checked together waits on one listing)."""
    verdict: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def follow(done: asyncio.Future[frozenset[ItemKey]]) -> None:
        if verdict.done():
            return
        if done.cancelled():
            verdict.cancel()
        elif (error := done.exception()) is not None:
            verdict.set_exception(error)
        else:
            verdict.set_result(key in done.result())

    reached.add_done_callback(follow)
    return verdict


def _succeeded(future: asyncio.Future[Any]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


def _verdict(check: asyncio.Future[bool]) -> bool | None:
    """A check's answer if it has one (None: not decided yet, or it failed)."""
    return check.result() if _succeeded(check) else None


def _describe(paths: tuple[AccessPath, ...]) -> str:
    return ", ".join(p.text for p in paths)


class Rules:
    """A model's compiled rules and the listing each hop reads; one per served model."""

    def __init__(self, model: Model, codec: Codec, access: Access) -> None:
        self.model = model
        self.codec = codec
        self.access = access
        self.principal = model.types[access.principal]
        self.listings = Listings(model, codec)
        self.listers: dict[tuple[str, str], Lister] = {}  # (type, edge field) -> its listing
        for edge in model.edges.values():
            if edge.forward is not None:
                self.listers[(edge.source, edge.forward.field)] = self.listings.forward(edge)
            if edge.reverse is not None:
                self.listers[(edge.target, edge.reverse.field)] = self.listings.reverse(edge)

    def scope(self, context: ModelContext) -> Scope:
        return Scope(self, context)


class Scope:
    """What one principal who is not an admin may read and run, decided lazily and at most
    once per node and request."""

    def __init__(self, rules: Rules, context: ModelContext) -> None:
        self.rules = rules
        self.context = context
        subject = context.principal.subject
        self.me: Ref | None = None
        if subject is not None:  # one no key of the principal's type holds names no node
            with contextlib.suppress(BadUserInput):
                self.me = rules.codec.by_id(rules.principal, subject)
        self._reach: dict[tuple[Hop, ...], asyncio.Future[frozenset[ItemKey]]] = {}
        self._decided: dict[tuple[str, ...], asyncio.Future[bool]] = {}

    # ---- paths -----------------------------------------------------------------------------

    def _reached(self, hops: tuple[Hop, ...]) -> asyncio.Future[frozenset[ItemKey]]:
        """The keys of the nodes ``hops`` lead to from the principal's node."""
        found = self._reach.get(hops)
        if found is None:
            found = self._reach[hops] = asyncio.ensure_future(self._walk(hops))
        return found

    async def _walk(self, hops: tuple[Hop, ...]) -> frozenset[ItemKey]:
        if not hops:
            return frozenset([self.me.key]) if self.me is not None else frozenset()
        *before, hop = hops
        starts = await self._reached(tuple(before))
        codec, ctx = self.rules.codec, self.context
        lister = self.rules.listers[(hop.start, hop.field)]
        start_type = self.rules.model.types[hop.start]
        edge = self.rules.model.edges[hop.edge]
        keys = sorted(starts, key=lambda k: (k.pk, k.sk))
        listings = [lister(Ref(start_type, key), {"first": 0}, ctx).key.listing for key in keys]
        pages = await ctx.reads.alls.load_many(listings)
        out = set()
        for start, items in zip(keys, pages, strict=True):
            for item in items:
                if codec.item_key(item) != start and codec.edge_type(item) is edge:
                    out.add(codec.end(edge, item, hop.far).key)
        return frozenset(out)

    def _path(self, path: AccessPath, ref: Ref, via: Item | None = None) -> asyncio.Future[bool]:
        """Decided at once (a done future) when what it needs is in memory; ``via``: the edge
        item that listed ``ref``, if any (it decides the last hop when it is that hop's edge
        from a node reached)."""
        if not path.hops:
            return _done(self.me is not None and ref.key == self.me.key)
        if len(path.hops) == 1:
            reached = self._reached(path.hops)
            if _succeeded(reached):
                return _done(ref.key in reached.result())
            return _member(reached, ref.key)
        before = self._reached(path.hops[:-1])
        if _succeeded(before):
            last, starts = path.hops[-1], before.result()
            if via is not None and self._joins(last, ref, starts, via):
                return _done(True)
            if self._in_hand(last, ref, starts):
                return _done(True)
        return asyncio.ensure_future(self._joined(path, ref, via))

    def _joins(self, last: Hop, ref: Ref, starts: frozenset[ItemKey], item: Item) -> bool:
        """Whether edge ``item`` is ``last``'s edge from a node of ``starts`` to ``ref``."""
        codec = self.rules.codec
        if codec.edge_type(item) is not self.rules.model.edges[last.edge]:
            return False
        pk, sk = codec.item_key(item)
        if last.far == "to":
            return sk == ref.key.sk and ItemKey.of(pk, pk) in starts
        return pk == ref.key.pk and ItemKey.of(sk, sk) in starts

    @staticmethod
    def _edge_key(last: Hop, ref: Ref, start: ItemKey) -> ItemKey:
        """The key of the edge item that would join ``start`` to ``ref``: the source's
        partition key, the target's sort key."""
        if last.far == "to":
            return ItemKey.of(start.pk, ref.key.sk)
        return ItemKey.of(ref.key.pk, start.sk)

    def _in_hand(self, last: Hop, ref: Ref, starts: frozenset[ItemKey]) -> bool:
        """Whether the request already read one edge item joining ``starts`` to ``ref`` (the
        page that listed ``ref`` usually did)."""
        edge, codec, known = (
            self.rules.model.edges[last.edge],
            self.rules.codec,
            self.context.reads.known_item,
        )
        for start in starts:
            item = known(self._edge_key(last, ref, start))
            if isinstance(item, dict) and codec.edge_type(item) is edge:
                return True
        return False

    async def _joined(self, path: AccessPath, ref: Ref, via: Item | None = None) -> bool:
        """Whether the last hop's edge joins a node the hops before it reach to ``ref``: the
        edge that listed it or one in hand decides; else every candidate edge item is read by
        key."""
        *before, last = path.hops
        starts = await self._reached(tuple(before))
        if via is not None and self._joins(last, ref, starts, via):
            return True
        if self._in_hand(last, ref, starts):
            return True
        edge = self.rules.model.edges[last.edge]
        codec = self.rules.codec
        keys = [self._edge_key(last, ref, start) for start in sorted(starts)]
        found = await self.context.reads.items.load_many(keys) if keys else []
        return any(item is not None and codec.edge_type(item) is edge for item in found)

    def _any(
        self, paths: tuple[AccessPath, ...], ref: Ref, via: Item | None = None
    ) -> asyncio.Future[bool]:
        """Whether one of ``paths`` reaches ``ref``; every path's first reads start now."""
        if self.me is None:
            return _done(False)
        if any(not p.hops for p in paths) and ref.key == self.me.key:
            return _done(True)
        checks = [self._path(p, ref, via) for p in paths if p.hops]
        if not checks:
            return _done(False)
        if len(checks) == 1:
            return checks[0]
        if any(_succeeded(check) and check.result() for check in checks):
            for check in checks:  # reads another path started go on, shared by later checks
                check.add_done_callback(_retrieved)
            return _done(True)  # decided from what is in memory: no task

        async def decide() -> bool:
            """True as soon as one path reaches ``ref``: the others' reads go on, shared by
            later checks, and are not waited for."""
            pending = set(checks)
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if any(future.result() for future in done):
                    for future in pending:
                        future.add_done_callback(_retrieved)
                    return True
            return False

        return asyncio.ensure_future(decide())

    def _once(
        self, key: tuple[str, ...], decide: Callable[[], asyncio.Future[bool]]
    ) -> asyncio.Future[bool]:
        found = self._decided.get(key)
        if found is None:
            found = self._decided[key] = decide()
        return found

    # ---- nodes -----------------------------------------------------------------------------

    def can_read(self, ref: Ref, via: Item | None = None) -> asyncio.Future[bool]:
        """Whether the principal may read ``ref``; its reads start when this is called.
        ``via``: the edge item whose page listed ``ref`` (read from the table, never taken
        from the request), which may decide it without a read."""
        key = ("node", ref.type.name, ref.key.pk, ref.key.sk)
        return self._once(key, lambda: self._node(ref, via))

    def _node(self, ref: Ref, via: Item | None = None) -> asyncio.Future[bool]:
        paths = self.rules.access.read.get(ref.type.name)
        if paths is not None:
            return self._any(paths, ref, via)
        if ref.type.parent is not None:  # a child: whoever may read its parent
            return self.can_read(self.rules.listings.parent_of(ref))
        return _done(False)

    def decided(self, ref: Ref) -> bool | None:
        """Whether the principal may read ``ref``, if that is decided (None: not yet, or its
        check failed); starts the check otherwise. Lets a resolver answer without a coroutine."""
        return _verdict(self.can_read(ref))

    async def check(self, ref: Ref) -> None:
        """FORBIDDEN unless the principal may read ``ref``."""
        if not await self.can_read(ref):
            raise Forbidden(self._why(ref))

    async def checked(self, ref: Ref) -> Ref:
        await self.check(ref)
        return ref

    async def hides(self, ref: Ref) -> bool:
        """Whether a lookup of ``ref`` answers as if there were no such node: the principal may
        not read it (with ``--explain-forbidden``: FORBIDDEN with the reason instead)."""
        if await self.can_read(ref):
            return False
        if self.context.explain_forbidden:
            raise Forbidden(self._why(ref))
        return True

    def _why(self, ref: Ref) -> str:
        name = ref.type.name
        paths = self.rules.access.read.get(name)
        if paths is None and ref.type.parent is not None:
            parent = ref.type.parent.type
            return f"you may not read {self.rules.codec.global_id(ref)} nor its {parent}"
        if paths:
            rule = f"{name} is readable from your node by {_describe(paths)}"
        else:
            rule = f"only admins may read a {name}"
        return f"you may not read {self.rules.codec.global_id(ref)}: {rule} (model access.read)"

    async def visible(self, edges: list[EdgeValue]) -> list[EdgeValue]:
        """``edges`` less those to nodes the principal may not read."""
        if not edges:
            return edges
        readable = await asyncio.gather(*(self.can_read(e.node, e.item) for e in edges))
        return [edge for edge, ok in zip(edges, readable, strict=True) if ok]

    # ---- fields and mutations --------------------------------------------------------------

    def field_decided(self, type_name: str, field: str, ref: Ref) -> bool | None:
        """Whether the rule of ``type_name.field`` lets the principal read it on ``ref``, if
        that is decided (None: not yet); starts the check otherwise."""
        paths = self.rules.access.fields.get(type_name, {}).get(field)
        if paths is None:
            return True
        key = ("field", type_name, field, ref.key.pk, ref.key.sk)
        return _verdict(self._once(key, lambda: self._any(paths, ref)))

    async def check_field(self, type_name: str, field: str, ref: Ref | None) -> None:
        """FORBIDDEN unless the rule of ``type_name.field`` (if any) lets the principal read it
        on ``ref`` (None: a node that was not found, so nobody but an admin may ask)."""
        paths = self.rules.access.fields.get(type_name, {}).get(field)
        if paths is None:
            return
        if ref is not None:
            key = ("field", type_name, field, ref.key.pk, ref.key.sk)
            if await self._once(key, lambda: self._any(paths, ref)):
                return
        raise Forbidden(
            f"you may not read {type_name}.{field} here: it is readable from your node by "
            f"{_describe(paths)} (model access.fields)"
        )

    async def may_run(self, grants: tuple[Grant, ...], args: dict[str, Any]) -> str | None:
        """None when the principal may run a mutation with ``args``, else why not; NOT_FOUND
        when an argument names a node the principal may not read, as for a missing one (unless
        ``--explain-forbidden``)."""
        for grant in grants:
            value: Any = args
            for part in grant.argument:
                value = value.get(part) if isinstance(value, dict) else None
            name = ".".join(grant.argument)
            ref = None
            if value is not None:
                ref = self.rules.codec.by_id(self.rules.model.types[grant.type], str(value))
            if ref is None or not await self._any(grant.paths, ref):
                explained = self.context.explain_forbidden  # else as a missing node
                if ref is not None and not explained and not await self.can_read(ref):
                    raise NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
                paths = _describe(grant.paths)
                return f"{name} must name a {grant.type} reached from your node by {paths}"
        return None


# ---- the schema ----------------------------------------------------------------------------


def _field_guard(type_name: str, field_name: str, field: GraphQLField) -> None:
    resolve = field.resolve
    assert resolve is not None

    def guarded(root: Ref, info: Info, **args: Any) -> Any:
        scope: Scope | None = info.context.scope
        if scope is None:  # an admin, or no access rules: as unguarded
            return resolve(root, info, **args)
        if root is not None and scope.field_decided(type_name, field_name, root):
            return resolve(root, info, **args)  # granted already: at once
        return checked(scope, root, info, **args)

    async def checked(scope: Scope, root: Ref, info: Info, **args: Any) -> Any:
        await scope.check_field(type_name, field_name, root)
        result = resolve(root, info, **args)
        return await result if inspect.isawaitable(result) else result

    field.resolve = guarded


def _mutation_guard(name: str, grants: tuple[Grant, ...], field: GraphQLField) -> None:
    resolve = field.resolve
    assert resolve is not None

    async def guarded(root: Any, info: Info, **args: Any) -> Any:
        ctx: ModelContext = info.context
        if ctx.scope is None:  # an admin, or no access rules
            result = resolve(root, info, **args)
            return await result if inspect.isawaitable(result) else result
        problem = await ctx.scope.may_run(grants, args)
        if problem is not None:
            raise Forbidden(
                f"you may not run {name}: {problem}, or be an admin (model access.mutations)"
            )
        with granted():
            result = resolve(root, info, **args)
            return await result if inspect.isawaitable(result) else result

    field.resolve = guarded


def guard(schema: GraphQLSchema, access: Access) -> GraphQLSchema:
    """Wrap the resolvers of the fields and mutations ``access`` has rules for. Node reads are
    checked where nodes are resolved (:mod:`server.engine.fields`)."""
    for type_name, rules in access.fields.items():
        object_type = schema.get_type(type_name)
        assert isinstance(object_type, GraphQLObjectType)
        for field_name in rules:
            _field_guard(type_name, field_name, object_type.fields[field_name])
    mutation = schema.mutation_type
    if mutation is not None:
        for name, grants in access.mutations.items():
            if name in mutation.fields:
                _mutation_guard(name, grants, mutation.fields[name])
    return schema
