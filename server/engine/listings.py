"""Listings: what each connection-like field reads, as a *lister* (node, arguments,
context) -> :class:`Conn` (child collections, edges in both directions, access patterns), and
a page's items as edges (:func:`edges_of`). The access rules (:mod:`server.engine.access`), the
planned prefetch (:mod:`server.engine.plan`) and the resolvers (:mod:`server.engine.fields`)
build on them; this module imports none of those."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import Any

from graph.errors import BadUserInput, EdgewiseError
from graph.items import Codec, Ref
from graph.reads import (
    UNKNOWN,
    Branch,
    Listing,
    Page,
    PageKey,
    narrowed,
    positions,
    typed_branch,
)
from graph.table import Item, Layout
from model import EdgeType, Field, KeyValueError, Model, NodeType, Query, Template
from model.types import SHARD
from model.values import KINDS, Comparison, Kind, Where, compared
from server.engine.context import ModelContext

__all__ = [
    "DEFAULT_FIRST",
    "MAX_FIRST",
    "Conn",
    "EdgeValue",
    "ItemNeeded",
    "Lister",
    "Listings",
    "check_first",
    "edges_for",
    "edges_of",
    "from_copies",
]

DEFAULT_FIRST = 20
MAX_FIRST = 100


@dataclass(slots=True)
class Conn:
    """A connection's page request and how to read its items: as nodes of ``node`` (or as the
    end of an edge that touches one), or as edges of ``edge`` whose far end is ``far``."""

    key: PageKey
    owner: Ref | None = None
    counter: str | None = None  # the owner's attribute counting the whole connection
    node: NodeType | None = None
    edge: EdgeType | None = None
    far: str = "to"
    types: tuple[str, ...] = ()  # a union's: the node types listed, instead of ``node``

    @property
    def listed(self) -> tuple[str, ...]:
        """The names of the node types a node listing answers."""
        return self.types or ((self.node.name,) if self.node is not None else ())


@dataclass(slots=True)
class EdgeValue:
    item: Item
    at: str | Sequence[str]  # the edge's cursor, or its page's cursors it is ``index`` of
    node: Ref
    index: int = 0

    @property
    def cursor(self) -> str:
        at = self.at
        return at if isinstance(at, str) else at[self.index]


Lister = Callable[[Ref, dict[str, Any], ModelContext], Conn]


def check_first(first: int | None, name: str = "first") -> int:
    first = DEFAULT_FIRST if first is None else first
    if not 0 <= first <= MAX_FIRST:
        raise BadUserInput(f"{name} must be between 0 and {MAX_FIRST}, got {first}")
    return first


def _render(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except KeyValueError as exc:
        raise BadUserInput(f"invalid argument: {exc}") from None


class Listings:
    """The listers of one model's connection-like fields."""

    def __init__(self, model: Model, codec: Codec) -> None:
        self.model = model
        self.codec = codec
        self.enums = frozenset(model.enums)
        # node listings leave out a node being deleted (graph.writes.deletes)
        self.unmarked = model.deletions.attribute if model.deletions is not None else None

    def parent_of(self, ref: Ref) -> Ref:
        """A child's parent, from the child's key (no read)."""
        assert ref.type.parent is not None
        parent = self.model.types[ref.type.parent.type]
        values = self.codec.key_values(ref.type, ref.key) or {}
        link = ref.type.parent.link
        return self.codec.ref(parent, {theirs: values[mine] for mine, theirs in link})

    # ---- listers: what a connection reads ---------------------------------------------------

    def children(self, child: NodeType) -> Lister:
        assert child.parent is not None
        parent = child.parent
        forward = parent.order == "asc"
        keep = self.codec.keeps_nodes(child)
        exact = _exact(child.sk.runs, (child,))

        def conn(ref: Ref, args: dict[str, Any], ctx: ModelContext) -> Conn:
            values = self.codec.key_values(ref.type, ref.key) or {}
            link = {mine: values[theirs] for mine, theirs in parent.link}
            given = _coarse_to_fine(parent.arguments, args)
            partition = _render(lambda: child.pk.format(link))
            branch = _branch(partition, child.sk, link | given, None, None)
            listing = Listing(
                None,
                (branch,),
                forward,
                unmarked=self.unmarked,
                keep=keep,
                where=exact(given, None),
            )
            _typed(self.codec.layout, listing)
            whole = branch.prefix == child.sk.literal_prefix and branch.low is None
            counter = child.parent_counter if whole else None  # a filter is counted by Query
            return Conn(_page(listing, args), ref, counter, node=child)

        return conn

    def forward(self, edge: EdgeType) -> Lister:
        counter = edge.counter("from")
        forward = edge.forward is None or edge.forward.order == "asc"
        edges_at = self.codec.edges_at

        def conn(ref: Ref, args: dict[str, Any], ctx: ModelContext) -> Conn:
            listing = edges_at(edge, ref.key, "from", forward=forward)
            assert listing is not None
            return Conn(_page(listing, args), ref, counter, edge=edge, far="to")

        return conn

    def reverse(self, edge: EdgeType) -> Lister:
        assert edge.reverse is not None and edge.reverse.index is not None
        index = edge.reverse.index
        counter = edge.counter("to")
        label = self.model.label_attribute
        # an edge between nodes of one type: the node's own item shares the reverse partition
        only = (label, edge.label) if label and edge.source == edge.target else None
        forward = edge.reverse.order == "asc"
        edges_at = self.codec.edges_at

        def conn(ref: Ref, args: dict[str, Any], ctx: ModelContext) -> Conn:
            listing = _render(lambda: edges_at(edge, ref.key, "to", index, forward))
            assert listing is not None
            listing = listing._replace(only=only)
            return Conn(_page(listing, args), ref, counter, edge=edge, far="from")

        return conn

    def query(self, query: Query) -> Lister:
        results = tuple(self.model.types[t] for t in query.types or (query.type,))
        result = results[0]
        union = query.types if query.union else ()
        enums = self.model.enums
        index_name = query.index.name
        forward = query.order == "asc"
        keep = self.codec.keeps_nodes(*results, sources=query.index.pk == self.model.sort_key)
        bounds = query.between or ()
        needed = set(query.partition.placeholders) - {SHARD}  # an `on:` owner may fill them
        runs = query.partition.runs | (query.sort.runs if query.sort is not None else frozenset())
        exact = _exact(runs, results)

        def conn(ref: Ref | None, args: dict[str, Any], ctx: ModelContext) -> Conn:
            values: dict[str, Any] = dict(args)
            if ref is not None:
                owner = self.codec.key_values(ref.type, ref.key) or {}
                values |= owner | _stored_values(ref, needed - owner.keys() - args.keys(), ctx)
            partitions: list[dict[str, Any]] = [values]
            if SHARD in query.partition.placeholders:
                partitions = [values | {SHARD: s} for s in range(query.shards or 1)]
            equal = _coarse_to_fine(query.equal, args)
            missing = next((a for a, v in equal.items() if v is None), None)
            finer = [a for a in (*query.fan_out, *bounds) if args.get(a) is not None]
            if missing is not None and finer:
                raise BadUserInput(f"filtering by {finer[0]} needs {missing} too")
            sorts: list[dict[str, Any]] = [equal]
            for name in query.fan_out if missing is None else ():
                given = args.get(name)
                every = enums[_enum_of(result, name)].values()
                options = [given] if given is not None else list(every)
                sorts = [s | {name: o} for s in sorts for o in options]
            low = high = None
            if query.between is not None:
                low, high = (args.get(query.between[0]), args.get(query.between[1]))
            branches = []
            for p_values in partitions:
                partition = _render(partial(query.partition.format, p_values))
                for s_values in sorts:
                    branches.append(
                        _branch(partition, query.sort, s_values, low, high, query.exclusive)
                    )
            where = query.where.bound(args) if query.where is not None else None
            where = exact(values | equal, where)
            listing = Listing(
                index_name, tuple(branches), forward, unmarked=self.unmarked, keep=keep, where=where
            )
            _typed(self.codec.layout, listing)
            return Conn(_page(listing, args), ref, node=None if union else result, types=union)

        return conn


def _node(conn: Conn, item: Item, ctx: ModelContext) -> Ref:
    """The node a kept item of a node listing answers: the item itself, or an edge's end."""
    whole = ctx.codec.layout.complete(conn.key.listing.index)  # else: its fields read the item
    return ctx.codec.listed(item, conn.listed, whole)


def edges_of(conn: Conn, page: Page, ctx: ModelContext) -> list[EdgeValue]:
    """A page's edges, each with its node (its item attached when this request has read it).
    The page holds only the listing's own items (edges of its label, nodes of its type)."""
    codec = ctx.codec
    out = []
    cursors = page.cursors
    for index, item in enumerate(page.items):
        if conn.edge is not None:
            node = codec.end(conn.edge, item, conn.far)
        else:
            node = _node(conn, item, ctx)
        if node.item is None:
            known = ctx.known(node)
            if known is not UNKNOWN and known is not None:
                node.item = known
        out.append(EdgeValue(item, cursors, node, index))
    return out


def edges_for(
    conn: Conn, page: Page, wanted: frozenset[str] | None, ctx: ModelContext
) -> list[EdgeValue]:
    """A page's edges for a selection of ``wanted`` fields under ``node``, made once per
    request (the planned prefetch makes them, the ``edges`` field answers them)."""
    key = (conn.key, wanted)
    edges = ctx.edges.get(key)
    if edges is None:
        edges = ctx.edges[key] = edges_of(conn, page, ctx)
        from_copies(conn, edges, wanted, ctx)
    return edges


def from_copies(
    conn: Conn, edges: list[EdgeValue], wanted: frozenset[str] | None, ctx: ModelContext
) -> None:
    """Answer each edge's node from the copies of its fields that the edge item carries
    (``copyOf``), when the selection under ``node`` (``wanted``) asks for nothing else but
    ``id``, ``__typename`` and key fields: that node is not read, one round less. An edge item
    lacking a copy (a null value, or written before the copy was declared) leaves its node
    to be read as usual. Access rules are unchanged: they are decided from edges."""
    if not edges or wanted is None or conn.types:  # a union's nodes: read as they are
        return
    node_type = edges[0].node.type
    wanted = wanted - {"id", "__typename"} - node_type.keyed
    if not wanted:
        return  # nothing to read anyway
    codec = ctx.codec
    layout = codec.layout
    found: dict[tuple[int, str], dict[str | None, Field]] = {}  # copies by edge type and end
    for value in edges:
        edge = conn.edge or codec.edge_type(value.item)
        if edge is None or value.node.item is not None:
            continue
        if conn.edge is not None:
            end = conn.far
        else:  # an access pattern listing edge items as nodes: as _node picks the end
            end = "from" if edge.source == node_type.name else "to"
        copies = found.get((id(edge), end))
        if copies is None:
            copies = found[(id(edge), end)] = {
                f.source: f for f in edge.fields.values() if f.kind == "copy" and f.end == end
            }
        if not copies:
            continue
        if not all(name in copies and copies[name].attribute in value.item for name in wanted):
            continue
        item = {layout.pk: value.node.key.pk, layout.sk: value.node.key.sk}
        for name in wanted:
            item[node_type.fields[name].attribute] = value.item[copies[name].attribute]
        value.node = Ref(node_type, value.node.key, item)


class ItemNeeded(EdgewiseError):
    """A connection's lister needs its owner's item, not yet read."""


def _stored_values(ref: Ref, names: set[str], ctx: ModelContext) -> dict[str, Any]:
    """The owner's stored fields named ``names`` (an ``on:`` pattern's placeholders beyond its
    key), from its item; ItemNeeded while the item is still to read."""
    wanted = [ref.type.fields[n] for n in names if n in ref.type.fields]
    if not wanted:
        return {}
    item = ctx.known(ref)
    if item is UNKNOWN:
        raise ItemNeeded(f"{ref.type.name}'s item is needed")
    return {f.name: (item or {}).get(f.attribute) for f in wanted}


def _exact(
    runs: frozenset[str], nodes: tuple[NodeType, ...]
) -> Callable[[dict[str, Any], Where | None], Where | None]:
    """The test that makes a key condition on a run of placeholders (``account#{name}{id}``)
    exact: a key prefix holds ``Acme`` for ``Acm`` + ``e…`` too, so the items whose own
    attributes do not equal the values given are left out, by the listing's filter (counted
    after it). Each placeholder of a run is stored in an attribute of its own (check-model)."""
    tested: list[tuple[str, str, Kind]] = []
    for name in sorted(runs):
        field = next((n.fields[name] for n in nodes if name in n.fields), None)
        attribute = field.attribute if field is not None else name  # `id` (storeKeyFields)
        type_name = field.type.name if field is not None else "ID"
        tested.append((name, attribute, KINDS.get(type_name, "string")))

    def where(values: dict[str, Any], also: Where | None = None) -> Where | None:
        tests = tuple(
            Comparison(attribute, "eq", kind, compared(kind, values[name]))
            for name, attribute, kind in tested
            if values.get(name) is not None
        )
        if not tests:
            return also
        return Where(tests + (also.tests if also else ()), also.alternatives if also else ())

    return where


def _enum_of(node: NodeType, placeholder: str) -> str:
    return node.fields[placeholder].type.name


def _coarse_to_fine(names: tuple[str, ...], args: dict[str, Any]) -> dict[str, Any]:
    """The values of optional equality arguments on leading sort-key placeholders (None where
    not given); a finer one without the coarser ones is BAD_USER_INPUT."""
    given = {a: args.get(a) for a in names}
    for coarse, finer in pairwise(names):
        if given[coarse] is None and given[finer] is not None:
            raise BadUserInput(f"filtering by {finer} needs {coarse} too")
    return given


def _typed(layout: Layout, listing: Listing) -> None:
    """A value a number or binary key cannot hold fails here, as BAD_USER_INPUT, rather than
    in the page's read."""
    if layout.types:
        for branch in listing.branches:
            typed_branch(layout, listing.index, branch)


def _page(listing: Listing, args: dict[str, Any]) -> PageKey:
    """The page asked for: ``first`` after ``after``, or ``last`` before ``before`` (read
    backward), each bounded by the other cursor when both are given; a bad cursor fails here,
    even where no page needs reading."""
    first, last = args.get("first"), args.get("last")
    after, before = args.get("after"), args.get("before")
    positions(listing, after)
    positions(listing, before)
    if last is None:
        return PageKey(listing, check_first(first), after, before)
    if first is not None:
        raise BadUserInput("pass first (paging forward) or last (backward), not both")
    return PageKey(listing, check_first(last, "last"), after, before, backward=True)


def _branch(
    partition: str,
    sort: Template | None,
    values: dict[str, Any],
    low: Any,
    high: Any,
    exclusive: bool = False,
) -> Branch:
    branch: Branch = _render(lambda: narrowed(partition, sort, values, low, high, exclusive))
    return branch
