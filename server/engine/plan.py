"""The planned prefetch: before graphql-core completes a node's fields, read everything its
selection needs, one wave per level (items whose stored fields are selected, pages of the
selected connections, then the same below each page's nodes), so that every field then resolves
from memory without a coroutine, a task or a dataloader ``load`` of its own.

A :class:`Selection` (what one object's selection reads) is planned once per document, object
type and field nodes, and kept in the document's execution record
(:mod:`server.engine.records`, through the request's context); a document with
``@skip``/``@include`` is planned per request, since variables decide its fields. Reads and
their batching are the loaders' (:class:`graph.reads.Reads`): the prefetch only starts them
earlier, together, so it never costs a request or a round more than resolving field by field
would. Under access rules, each level's nodes are checked together (their checks'
reads join the wave; ``server.engine.access``), and nothing is read below a node the principal
may not read."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLField,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLUnionType,
    get_named_type,
)
from graphql.execution.collect_fields import FieldDetails, FragmentDetails, collect_subfields
from graphql.execution.values import get_argument_values

from graph.errors import EdgewiseError
from graph.items import Ref
from graph.marks import is_marked
from graph.reads import UNKNOWN, PageKey, Whole
from server.engine.context import AccessScope, Info, ModelContext
from server.engine.kinds import Kind, ModelField, origin_of
from server.engine.listings import Conn, Lister, edges_for

__all__ = [
    "Selection",
    "Step",
    "below_edges",
    "has_directives",
    "prefetch",
    "root_step",
    "selection",
    "start",
]


@dataclass(frozen=True, slots=True)
class Step:
    """A selected field that reads: a connection-like field (its kind has a ``lister``), a
    reference, or a path or hook field (its kind's ``start``); ``below`` is the selection on the
    nodes it leads to (None: nothing below reads or none is selected); ``wanted`` the field
    names selected on those nodes."""

    definition: ModelField
    node: FieldNode
    kind: Kind
    below: Selection | None = None
    wanted: frozenset[str] | None = None
    paged: bool = True  # a connection's page is selected (its edges or pageInfo)
    count: bool = False  # a connection's totalCount is selected


@dataclass(frozen=True, slots=True)
class Selection:
    """What one object's selection reads: its own item (a stored field is selected) and the
    fields that lead further (``steps``); ``walks``: its path and hook fields, which a root
    lookup starts in its own wave (:func:`start`). Under a union, ``cases`` holds the
    selection of each of its types (``... on`` fragments), which :meth:`of` picks for a
    node."""

    item: bool
    steps: tuple[Step, ...]
    names: frozenset[str]
    cases: tuple[tuple[str, Selection], ...] = ()
    walks: tuple[Step, ...] = ()

    def of(self, ref: Ref) -> Selection:
        """The selection on ``ref``, of the node's own type."""
        for name, case in self.cases:
            if name == ref.type.name:
                return case
        return self


def has_directives(document: DocumentNode) -> bool:
    def walk(node: Any) -> bool:
        if getattr(node, "directives", None):
            return True
        selection_set = getattr(node, "selection_set", None)
        return selection_set is not None and any(walk(s) for s in selection_set.selections)

    return any(walk(d) for d in document.definitions)


def _planned(info: Info, key: tuple[int, ...], build: Callable[[], Any]) -> Any:
    """``build()`` once per key in the document's planned selections (its execution record's,
    which keeps the document, so the ids that make the key stay its nodes')."""
    planned = info.context.planned
    if key in planned:
        return planned[key]
    found = planned[key] = build()
    return found


def selection(info: Info, object_type: GraphQLObjectType, nodes: list[FieldNode]) -> Selection:
    """What the fields ``nodes`` select on ``object_type`` read, planned once per document."""
    key = (1, id(object_type), *(id(n) for n in nodes))
    return _planned(info, key, lambda: _plan(info, object_type, nodes))  # type: ignore[no-any-return]


def below_edges(info: Info) -> Selection | None:
    """The selection on ``node`` under the ``edges`` field being resolved, if any."""
    edge_type = get_named_type(info.return_type)
    assert isinstance(edge_type, GraphQLObjectType)
    key = (2, id(edge_type), *(id(n) for n in info.field_nodes))
    return _planned(  # type: ignore[no-any-return]
        info, key, lambda: _below(info, edge_type, list(info.field_nodes))[0]
    )


def _collect(info: Info, object_type: GraphQLObjectType, nodes: list[FieldNode]) -> Any:
    fragments = {name: FragmentDetails(f) for name, f in info.fragments.items()}
    return collect_subfields(
        info.schema,
        fragments,
        info.variable_values,
        info.operation,
        object_type,
        [FieldDetails(n, None) for n in nodes],
    ).grouped_field_set


def _plan(info: Info, object_type: GraphQLObjectType, nodes: list[FieldNode]) -> Selection:
    item = False
    steps = []
    walks = []
    names = set()
    for details in _collect(info, object_type, nodes).values():
        node = details[0].node
        names.add(node.name.value)
        definition = object_type.fields.get(node.name.value)
        origin = origin_of(definition)
        if origin is None:
            continue
        assert isinstance(definition, ModelField)
        if origin.kind is Kind.VALUE:
            item = True
        elif origin.walks:
            walks.append(Step(definition, node, origin.kind))
        step = _step(info, definition, [d.node for d in details])
        if step is not None:
            steps.append(step)
    return Selection(item, tuple(steps), frozenset(names), walks=tuple(walks))


def _step(info: Info, definition: GraphQLField, field_nodes: list[FieldNode]) -> Step | None:
    origin = origin_of(definition)
    if origin is None or not (origin.lister or origin.target):
        return None
    assert isinstance(definition, ModelField)
    kind = origin.kind
    below: Selection | None = None
    wanted = None
    paged, count = True, False
    target = get_named_type(definition.type)
    if origin.connection:
        assert isinstance(target, GraphQLObjectType)
        selected = [d.node for group in _collect(info, target, field_nodes).values() for d in group]
        named = {n.name.value for n in selected}
        paged, count = bool(named & {"edges", "pageInfo"}), "totalCount" in named
        edges = [n for n in selected if n.name.value == "edges"]
        if edges:
            edge_type = get_named_type(target.fields["edges"].type)
            assert isinstance(edge_type, GraphQLObjectType)
            below, wanted = _below(info, edge_type, edges)
    elif kind in (Kind.ONE, Kind.FIRST, Kind.REFERENCE) and isinstance(target, GraphQLObjectType):
        below = _plan(info, target, field_nodes)
        wanted = below.names
    return Step(definition, field_nodes[0], kind, below, wanted, paged, count)


def _below(
    info: Info, edge_type: GraphQLObjectType, nodes: list[FieldNode]
) -> tuple[Selection | None, frozenset[str] | None]:
    inner = [
        d.node
        for group in _collect(info, edge_type, nodes).values()
        for d in group
        if d.node.name.value == "node"
    ]
    if not inner:
        return None, None
    node_type = get_named_type(edge_type.fields["node"].type)
    if isinstance(node_type, GraphQLUnionType):
        cases = tuple((t.name, _plan(info, t, inner)) for t in node_type.types)
        names = frozenset().union(*(case.names for _, case in cases))
        return Selection(False, (), names, cases), names
    assert isinstance(node_type, GraphQLObjectType)
    below = _plan(info, node_type, inner)
    return below, below.names


def root_step(info: Info) -> Step | None:
    """The planned reads of the root field being resolved (an access pattern)."""
    definition = info.parent_type.fields[info.field_name]
    key = (3, id(definition), *(id(n) for n in info.field_nodes))
    return _planned(  # type: ignore[no-any-return]
        info, key, lambda: _step(info, definition, list(info.field_nodes))
    )


def _lister(step: Step) -> Lister:
    lister = step.definition.origin.lister
    assert lister is not None
    return lister


def start(info: Info, ref: Ref, chosen: Selection) -> Awaitable[Any] | None:
    """The first wave of a root lookup, before its node is known to exist: start the pages of
    ``ref``'s selected connections (``chosen``) and its path and hook fields' first loads
    beside the read of its item, so that they cost no wave of their own; :func:`prefetch`
    then reads the rest, level by level, from the same loaders.

    Returns the read that also tells whether the node exists, when one is made: a node whose
    first page of children is selected is read with them, in one Query of its partition (an
    order and its items)."""
    ctx: ModelContext = info.context
    variables = info.variable_values
    for step in chosen.walks:
        first = step.definition.origin.start
        if first is None:
            continue
        with contextlib.suppress(EdgewiseError, ValueError, TypeError):
            args = get_argument_values(step.definition, step.node, variables)
            for load in first(ctx, ref, **args):
                _settle(load)
    existence = None
    for step in chosen.steps:
        if step.kind is Kind.REFERENCE:
            continue
        try:
            args = get_argument_values(step.definition, step.node, variables)
            conn = _lister(step)(ref, args, ctx)
        except (EdgewiseError, ValueError, TypeError):
            continue  # the field's own resolver reports it
        if step.kind is Kind.SUM:
            _settle(ctx.reads.alls.load(conn.key.listing))
            continue
        if step.count and conn.counter is None:  # a total counted by Query, not on the node
            _settle(ctx.reads.counts.load(conn.key.listing))
        if step.definition.origin.connection and not step.paged:
            continue
        if step.kind in (Kind.ONE, Kind.FIRST):
            conn.key = PageKey(conn.key.listing, 1, None)
        if existence is None and step.kind is Kind.CHILDREN and _whole_partition(ref, conn):
            existence = _read_with_children(ref, conn, ctx)
            continue
        _settle(ctx.reads.pages.load(conn.key))
    return existence


def _settle(future: Awaitable[Any]) -> None:
    """A read nobody awaits (its parent turned out null) must not log a lost exception."""
    if isinstance(future, asyncio.Future):
        future.add_done_callback(lambda f: f.cancelled() or f.exception())


def _whole_partition(ref: Ref, conn: Conn) -> bool:
    listing = conn.key.listing
    return (
        ref.type.single
        and conn.key.after is None
        and conn.key.before is None
        and listing.index is None
        and len(listing.branches) == 1
        and listing.branches[0].partition == ref.key.pk
        and listing.branches[0].low is None
        and conn.node is not None
        and listing.branches[0].prefix == conn.node.sk.literal_prefix
    )


def _read_with_children(ref: Ref, conn: Conn, ctx: ModelContext) -> Awaitable[Any]:
    """One Query of the node's partition: the node's item and its first children. Primes the
    item (or its absence, when the whole partition was read) and the children's page."""
    size, backward = conn.key.size, conn.key.backward
    listing = conn.key.listing
    whole = Whole(ref.key.pk, listing.forward != backward, size + 2)  # from the page's end

    async def read() -> None:
        items, complete = await ctx.reads.wholes.load(whole)
        prefix = listing.branches[0].prefix
        children = [
            i
            for i in items
            if str(i[ctx.codec.layout.sk]).startswith(prefix)
            and not is_marked(ctx.codec.model, i)
            and (listing.keep is None or listing.keep(i))
        ]
        own = next((i for i in items if ctx.codec.item_key(i) == ref.key), None)
        if own is not None or complete:
            ctx.reads.items.prime(ref.key, own)
        if complete or len(children) > size:
            page = ctx.reads.page_of(listing, children, size, backward)
            ctx.reads.pages.prime(conn.key, page)

    return asyncio.ensure_future(read())


async def prefetch(
    info: Info,
    level: list[tuple[Ref, Selection]],
    conn: Conn | None = None,
    step: Step | None = None,
) -> None:
    """Read what ``level`` (nodes and their selections) needs, and ``conn`` (a root field's
    connection, planned as ``step``), then the same for the nodes their pages and references
    lead to, one wave per level, until nothing below reads. A read that fails is left to its
    field's resolver, which reads it again and reports the error there."""
    ctx: ModelContext = info.context
    reads = ctx.reads
    variables = info.variable_values
    started = [(None, step, conn)] if conn is not None and step is not None else []
    vias: list[Any] = []  # under access rules: the edge item that listed each node of level
    arguments: dict[int, dict[str, Any] | None] = {}  # by step: the same for every node
    while level or started:
        waiting: list[Any] = []
        follow: list[tuple[Ref | None, Step, Any]] = []
        unread: list[Ref] = []
        for _, step, conn in started:
            _start(ctx, conn, step, waiting, follow)
        started = []
        for ref, chosen in level:
            need_item = chosen.item
            for step in chosen.steps:
                if step.kind is Kind.REFERENCE:
                    need_item = True  # its target's id is in this item
                    if step.below is not None:
                        follow.append((ref, step, None))
                    continue
                if id(step) not in arguments:
                    try:
                        arguments[id(step)] = get_argument_values(
                            step.definition, step.node, variables
                        )
                    except (EdgewiseError, ValueError, TypeError):
                        arguments[id(step)] = None
                args = arguments[id(step)]
                if args is None:
                    continue  # the field's own resolver reports it
                try:
                    conn = _lister(step)(ref, args, ctx)
                except (EdgewiseError, ValueError, TypeError):
                    continue  # the field's own resolver reports it
                need_item = _start(ctx, conn, step, waiting, follow, ref) or need_item
            if need_item and ref.item is None:
                waiting.append(reads.items.load(ref.key))
                unread.append(ref)
        await _settled(waiting)
        for ref in unread:  # its fields then find the item on the node itself
            known = ctx.known(ref)
            if known is not UNKNOWN:
                ref.item = known
        level, vias = [], []
        for owner, step, conn in follow:
            assert step.below is not None
            if conn is None:
                assert owner is not None
                if owner.item is None:
                    known = ctx.known(owner)
                    if known is UNKNOWN:
                        continue
                    owner.item = known
                find = step.definition.origin.target
                assert find is not None
                target = find(owner, info)
                if isinstance(target, list):  # a reference per element of a list
                    exists = step.definition.origin.exists  # read: a missing one is left out
                    level += [(t, _with_item(step.below) if exists else step.below) for t in target]
                    vias += [None] * len(target)
                elif target is not None:
                    nullable = not isinstance(step.definition.type, GraphQLNonNull)
                    nullable = nullable and not target.type.implicit  # answered from its key
                    level.append((target, _with_item(step.below) if nullable else step.below))
                    vias.append(None)
                continue
            page = reads.known_page(conn.key)
            if page is UNKNOWN:
                continue
            edges = edges_for(conn, page, step.wanted, ctx)
            level += [(e.node, step.below.of(e.node)) for e in edges]
            vias += [e.item for e in edges]
        if ctx.scope is not None and level:
            level = await _readable(ctx.scope, level, vias)


async def _readable(
    scope: AccessScope, level: list[tuple[Ref, Selection]], vias: list[Any]
) -> list[tuple[Ref, Selection]]:
    """The nodes of ``level`` the principal may read (nothing is read below the others), their
    checks started together: one wave more at most, none when what decides them is in hand
    (``vias``: the edge item that listed each node, or None)."""
    verdicts = [scope.can_read(ref, via) for (ref, _), via in zip(level, vias, strict=True)]
    if not all(v.done() for v in verdicts):
        await asyncio.wait(verdicts)
    return [chosen for chosen in level if scope.decided(chosen[0])]  # a failed check: not read


async def _settled(reads: list[Any]) -> None:
    """Wait for every read of a wave; one that fails is left to its field's resolver, which
    reads it again and reports the error there. Awaited one by one rather than gathered: they
    end together, batch by batch, so this suspends about once a batch and adds no callback to
    each."""
    for read in reads:
        if read.done():
            continue
        try:
            await read
        except asyncio.CancelledError:
            if not read.cancelled():  # this task itself is cancelled
                raise
        except Exception:
            pass


def _start(
    ctx: ModelContext,
    conn: Conn,
    step: Step,
    waiting: list[Any],
    follow: list[tuple[Ref | None, Step, Any]],
    owner: Ref | None = None,
) -> bool:
    """Start the reads of one connection-like field; True when they need the owner's item (a
    total counted on it)."""
    reads = ctx.reads
    if step.kind is Kind.SUM:
        waiting.append(reads.alls.load(conn.key.listing))
        return False
    need_item = False
    if step.count:
        if conn.counter is not None and conn.owner is not None:
            need_item = True
        else:
            waiting.append(reads.counts.load(conn.key.listing))
    if not step.paged:
        return need_item
    if step.kind in (Kind.ONE, Kind.FIRST):
        conn.key = PageKey(conn.key.listing, 1, None)
    waiting.append(reads.pages.load(conn.key))
    if step.below is not None:
        follow.append((owner, step, conn))
    return need_item


def _with_item(chosen: Selection) -> Selection:
    """A reference's target is read to learn whether it exists."""
    return chosen if chosen.item else Selection(True, chosen.steps, chosen.names)
