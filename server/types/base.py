"""The Node interface, pagination, enums and the helpers every node type shares."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime
from typing import Any, ClassVar

import strawberry
from graphql import (
    FieldNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLObjectType,
    GraphQLResolveInfo,
    SelectionSetNode,
    Undefined,
    value_from_ast,
)

from graph.errors import BadUserInput, EdgewiseError, NotFound
from graph.keys import NodeKey, decode_cursor
from graph.loaders import EdgePage, PageRequest, Slice
from graph.model import Edges, EdgeType
from graph.table import Item
from graph.tickets import TicketListing

from ..context import Info

__all__ = [
    "DEFAULT_FIRST",
    "MAX_FIRST",
    "Connection",
    "Edge",
    "GroupRole",
    "Node",
    "OrgRole",
    "PageInfo",
    "SubscriptionStatus",
    "connection_prefetcher",
    "page_request",
    "prefetch",
    "stored",
    "to_datetime",
]

DEFAULT_FIRST = 20
MAX_FIRST = 100


@strawberry.enum(description="A user's role in a group.")
class GroupRole(enum.Enum):
    OWNER = "OWNER"
    MEMBER = "MEMBER"


@strawberry.enum(description="A user's role in an organization.")
class OrgRole(enum.Enum):
    ADMIN = "ADMIN"
    MEMBER = "MEMBER"


@strawberry.enum(description="Whether a subscription grants access.")
class SubscriptionStatus(enum.Enum):
    ACTIVE = "ACTIVE"
    CANCELED = "CANCELED"


def to_datetime(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


# (node key, the field's coerced arguments, names of its selected subfields, info) -> loads
Prefetcher = Callable[[NodeKey, dict[str, Any], set[str], Info], list[Awaitable[Any]]]


@strawberry.interface(description="An object with a global id, fetchable with `node(id:)`.")
class Node:
    key: strawberry.Private[NodeKey]

    @strawberry.field(description="The global id: the node key, e.g. `USER#alice`.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(str(self.key))

    async def item(self, info: Info) -> Item:
        """The node's own item, through the request's batching loader."""
        item = await info.context.loaders.node(self.key)
        if item is None:
            raise NotFound(f"{self.key} does not exist")
        return item

    # Fields that load something other than the node item, and how to start that load early.
    prefetchers: ClassVar[dict[str, Prefetcher]] = {}


def stored(
    attribute: str, type_: Any, description: str, convert: Callable[[Any], Any] | None = None
) -> Any:
    """A field read from the node's own item."""

    async def resolve(root: Node, info: Info) -> Any:
        value = (await root.item(info)).get(attribute)
        return convert(value) if convert is not None and value is not None else value

    resolve.__annotations__["return"] = type_
    return strawberry.field(resolver=resolve, description=description)


@strawberry.type(description="Where a page of a connection ends.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="Whether more edges follow this page.")
    end_cursor: str | None = strawberry.field(
        description="Pass as `after` to get the next page; null on an empty page."
    )


def check_first(first: int | None) -> int:
    first = DEFAULT_FIRST if first is None or first is strawberry.UNSET else first
    if not 0 <= first <= MAX_FIRST:
        raise BadUserInput(f"first must be between 0 and {MAX_FIRST}, got {first}")
    return first


def slice_request(
    source: Slice, first: int | None, after: str | None, forward: bool = True
) -> PageRequest:
    """Validate connection arguments into a loader key."""
    start = None
    if after is not None and after is not strawberry.UNSET:
        start = decode_cursor(after)
        inverted = source.index == "inverted"
        partition, sort = (start.sk, start.pk) if inverted else (start.pk, start.sk)
        if partition != str(source.node) or not sort.startswith(source.prefix):
            raise BadUserInput("this cursor belongs to another connection")
    return PageRequest(source, check_first(first), start, forward)


def page_request(
    node: NodeKey, edge: EdgeType, reverse: bool, first: int | None, after: str | None
) -> PageRequest:
    """A page of ``node``'s ``edge`` edges (incoming when ``reverse``)."""
    return slice_request(Edges(node, edge, reverse), first, after)


@strawberry.type
class Edge:
    item: strawberry.Private[Item]
    source: strawberry.Private[Slice | TicketListing]
    position: strawberry.Private[str]

    def far_end(self) -> NodeKey:
        assert isinstance(self.source, Edges)
        return self.source.far_end(self.item)

    @strawberry.field(description="Opaque position of this edge; pass as `after` to continue.")
    def cursor(self) -> str:
        return self.position


@strawberry.type
class Connection:
    request: strawberry.Private[PageRequest]

    async def page(self, info: Info) -> EdgePage:
        page: EdgePage = await info.context.loaders.pages.load(self.request)
        return page

    @strawberry.field(description="Pagination state of this page.")
    async def page_info(self, info: Info) -> PageInfo:
        page = await self.page(info)
        cursor = page.cursors[-1] if page.cursors else None
        return PageInfo(has_next_page=page.has_next, end_cursor=cursor)

    @strawberry.field(description="How many edges the whole connection has, on every page.")
    async def total_count(self, info: Info) -> int:
        source = self.request.source
        if isinstance(source, TicketListing) or source.counter is None:  # counted by Queries
            return await info.context.loaders.counts.load(source)
        item = await info.context.loaders.node(source.node)  # counters live on the node item
        return int((item or {}).get(source.counter, 0))


def connection_prefetcher(edge: EdgeType, reverse: bool) -> Prefetcher:
    """Start a connection's page load before its parent resolves (unless only its
    ``totalCount`` is asked for: that comes from the node item)."""

    def start(
        key: NodeKey, args: dict[str, Any], subfields: set[str], info: Info
    ) -> list[Awaitable[Any]]:
        if not subfields & {"edges", "pageInfo"}:
            return []
        request = page_request(key, edge, reverse, args.get("first"), args.get("after"))
        return [info.context.loaders.pages.load(request)]

    return start


def _fields(
    info: GraphQLResolveInfo[Any],
    selections: SelectionSetNode | None,
    type_name: str | None,
    seen: set[str] | None = None,
) -> Iterator[FieldNode]:
    """The fields selected in a selection set, through fragments that apply to ``type_name``;
    each named fragment is visited once (a fragment spread twice adds nothing new)."""
    seen = set() if seen is None else seen
    for selection in selections.selections if selections else ():
        if isinstance(selection, FieldNode):
            yield selection
            continue
        if isinstance(selection, FragmentSpreadNode):
            if selection.name.value in seen:
                continue
            seen.add(selection.name.value)
            fragment: Any = info.fragments.get(selection.name.value)
            if fragment is None:
                continue
        else:
            fragment = selection
        condition = fragment.type_condition.name.value if fragment.type_condition else None
        if type_name is None or condition in (None, type_name, "Node"):
            yield from _fields(info, fragment.selection_set, type_name, seen)


def _arguments(definition: GraphQLField, field: FieldNode, info: Info) -> dict[str, Any]:
    """The field's arguments as given (literals coerced, variables looked up)."""
    args = {}
    for arg in field.arguments or ():
        type_ = definition.args[arg.name.value].type
        value = value_from_ast(arg.value, type_, info.variable_values)
        args[arg.name.value] = None if value is Undefined else value
    return args


def _settle(future: Awaitable[Any]) -> None:
    """A prefetch nobody awaits (its parent turned out null) must not log a lost exception."""
    if isinstance(future, asyncio.Future):
        future.add_done_callback(lambda f: f.cancelled() or f.exception())


def prefetch(node: Node, info: Info) -> None:
    """Start the loads of ``node``'s selected edge fields now, in the same wave as its own item.

    A root lookup must await the item to answer null for a missing node; without this, the
    node's edges would wait for that answer and cost a wave more. Loaders cache by key, so the
    field resolvers later await these same loads.
    """
    raw = info._raw_info
    type_name = type(node).__name__
    graphql_type = raw.schema.get_type(type_name)
    assert isinstance(graphql_type, GraphQLObjectType)
    for root in raw.field_nodes:
        for field in _fields(raw, root.selection_set, type_name):
            start = type(node).prefetchers.get(field.name.value)
            if start is None:
                continue
            try:
                args = _arguments(graphql_type.fields[field.name.value], field, info)
                subfields = {f.name.value for f in _fields(raw, field.selection_set, None)}
                loads = start(node.key, args, subfields, info)
            except (EdgewiseError, GraphQLError):
                continue  # the field resolver reports it
            for load in loads:
                _settle(load)
