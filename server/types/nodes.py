"""The node types, their edges and connections. Every node is a lazy reference (its key): each
field loads what it needs through the request's loaders, so selecting only ``id`` reads nothing."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Annotated, Any

import strawberry

from graph import access
from graph.errors import Forbidden
from graph.keys import NodeKey, NodeType, parse_id
from graph.model import HAS_MEMBER, MEMBER_OF, OPENED, SUBSCRIBES_TO, Edges
from graph.offices import Offices, office_prefix
from graph.table import Item
from graph.tickets import TicketListing

from ..context import Info
from .base import (
    Connection,
    Edge,
    GroupRole,
    Node,
    OrgRole,
    SubscriptionStatus,
    connection_prefetcher,
    page_request,
    slice_request,
    stored,
    to_datetime,
)

__all__ = [
    "NODE_CLASSES",
    "Group",
    "Office",
    "OfficeEdge",
    "Organization",
    "Product",
    "Ticket",
    "TicketConnection",
    "TicketStatus",
    "User",
]


def edge_field(attribute: str, type_: Any, description: str, convert: Any = None) -> Any:
    """A field read from the edge's (or office's) own item."""

    def resolve(root: Edge | Office) -> Any:
        value = root.item.get(attribute)
        return convert(value) if convert is not None and value is not None else value

    resolve.__annotations__["return"] = type_
    return strawberry.field(resolver=resolve, description=description)


def edges_field(edge_class: type[Edge]) -> Any:
    """A connection's ``edges``: one edge object per item of the page."""

    async def resolve(root: Connection, info: Info) -> Any:
        page = await root.page(info)
        source = root.request.source
        edges = [
            edge_class(item=item, source=source, position=cursor)
            for item, cursor in zip(page.items, page.cursors, strict=True)
        ]
        scope = info.context.scope
        if scope.principal.admin or isinstance(source, Offices):
            return edges
        # edges to nodes the caller may not read are left out
        readable = await scope.readable(
            NodeKey.parse(e.item["SK"]) if isinstance(source, TicketListing) else e.far_end()
            for e in edges
        )
        return [edge for edge, ok in zip(edges, readable, strict=True) if ok]

    resolve.__annotations__["return"] = list[edge_class]  # type: ignore[valid-type]
    return strawberry.field(resolver=resolve, description="The edges of this page, in order.")


# ---- edges -------------------------------------------------------------------------------------


@strawberry.type
class Membership(Edge):
    role: GroupRole = edge_field("role", GroupRole, "The member's role in the group.", GroupRole)
    since: datetime | None = edge_field(
        "since", datetime | None, "When the user joined the group.", to_datetime
    )


@strawberry.type(description="A group the user is a member of (edge MEMBER_OF).")
class UserGroupEdge(Membership):
    @strawberry.field(description="The group.")
    def node(self) -> Group:
        return Group(key=self.far_end())


@strawberry.type(description="A member of the group (edge MEMBER_OF, read in reverse).")
class GroupMemberEdge(Membership):
    @strawberry.field(description="The member.")
    def node(self) -> User:
        return User(key=self.far_end())


@strawberry.type
class Subscription(Edge):
    plan: str = edge_field("plan", str, "The plan subscribed to.")
    status: SubscriptionStatus = edge_field(
        "status", SubscriptionStatus, "Whether the subscription grants access.", SubscriptionStatus
    )
    valid_until: datetime | None = edge_field(
        "validUntil",
        datetime | None,
        "When the subscription ends; null if it does not.",
        to_datetime,
    )


@strawberry.type(description="A product the group subscribes to (edge SUBSCRIBES_TO).")
class GroupSubscriptionEdge(Subscription):
    @strawberry.field(description="The product.")
    def node(self) -> Product:
        return Product(key=self.far_end())


@strawberry.type(description="A group subscribing to the product (SUBSCRIBES_TO in reverse).")
class ProductSubscriberEdge(Subscription):
    @strawberry.field(description="The subscribing group.")
    def node(self) -> Group:
        return Group(key=self.far_end())


@strawberry.type(description="A member of the organization (edge HAS_MEMBER).")
class OrganizationMemberEdge(Edge):
    role: OrgRole = edge_field("role", OrgRole, "The member's role in the organization.", OrgRole)
    joined_at: datetime | None = edge_field(
        "joinedAt", datetime | None, "When the user joined the organization.", to_datetime
    )

    @strawberry.field(description="The member.")
    def node(self) -> User:
        return User(key=self.far_end())


# ---- connections -------------------------------------------------------------------------------


@strawberry.type(description="The groups a user is a member of.")
class UserGroupConnection(Connection):
    edges: list[UserGroupEdge] = edges_field(UserGroupEdge)


@strawberry.type(description="The members of a group.")
class GroupMemberConnection(Connection):
    edges: list[GroupMemberEdge] = edges_field(GroupMemberEdge)


@strawberry.type(description="The products a group subscribes to.")
class GroupSubscriptionConnection(Connection):
    edges: list[GroupSubscriptionEdge] = edges_field(GroupSubscriptionEdge)


@strawberry.type(description="The groups subscribing to a product.")
class ProductSubscriberConnection(Connection):
    edges: list[ProductSubscriberEdge] = edges_field(ProductSubscriberEdge)


@strawberry.type(description="The members of an organization.")
class OrganizationMemberConnection(Connection):
    edges: list[OrganizationMemberEdge] = edges_field(OrganizationMemberEdge)


@strawberry.type(description="A ticket in a list of tickets.")
class TicketEdge(Edge):
    @strawberry.field(description="The ticket.")
    def node(self) -> Ticket:
        return Ticket(key=NodeKey.parse(self.item["SK"]))


@strawberry.type(description="Tickets, newest first.")
class TicketConnection(Connection):
    edges: list[TicketEdge] = edges_field(TicketEdge)


@strawberry.type(description="An office of an organization.")
class Office:
    item: strawberry.Private[Item]

    @strawberry.field(description="The office id (unique within its organization).")
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.item["id"])

    country: str = edge_field("country", str, "Country.")
    state: str = edge_field("state", str, "State or region.")
    city: str = edge_field("city", str, "City.")
    zip: str = edge_field("zip", str, "Postal code.")
    address: str | None = edge_field("address", str | None, "Street address.")


@strawberry.type(description="An office in a list of offices.")
class OfficeEdge(Edge):
    @strawberry.field(description="The office.")
    def node(self) -> Office:
        return Office(item=self.item)


@strawberry.type(description="An organization's offices, ordered by location.")
class OfficeConnection(Connection):
    edges: list[OfficeEdge] = edges_field(OfficeEdge)


FIRST = "How many edges to return: 0 to 100, default 20."
AFTER = "Return the edges after this cursor."


# ---- nodes -------------------------------------------------------------------------------------


@strawberry.type(description="A product the user can use, and the groups that grant it.")
class ProductAccess:
    product: Product = strawberry.field(description="The product.")
    via: list[Group] = strawberry.field(
        description="Every group of the user with an active subscription to the product."
    )


@strawberry.type(description="A person. Global id `USER#<id>`.")
class User(Node):
    name: str = stored("name", str, "Display name.")

    @strawberry.field(
        description="Email address, unique case-insensitively; only the user and admins see it."
    )
    async def email(self, info: Info) -> str | None:
        scope = info.context.scope
        if not scope.principal.admin and self.key != scope.me:
            raise Forbidden("only the user and admins may read an email")
        email: str | None = (await self.item(info)).get("email")
        return email

    created_at: datetime = stored("createdAt", datetime, "When the user was created.", to_datetime)
    version: int = stored("version", int, "Optimistic-locking version, 1 at creation.", int)

    @strawberry.field(description="The organization the user belongs to (HAS_MEMBER in reverse).")
    async def organization(self, info: Info) -> Organization | None:
        request = page_request(self.key, HAS_MEMBER, True, 1, None)
        page = await info.context.loaders.pages.load(request)
        if not page.items:
            return None
        organization = Edges(self.key, HAS_MEMBER, reverse=True).far_end(page.items[0])
        await info.context.scope.check(organization)
        return Organization(key=organization)

    @strawberry.field(description="The groups the user is a member of.")
    def groups(
        self,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> UserGroupConnection:
        return UserGroupConnection(request=page_request(self.key, MEMBER_OF, False, first, after))

    @strawberry.field(description="The tickets the user opened, newest first.")
    def tickets(
        self,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> TicketConnection:
        opened = Edges(self.key, OPENED)
        return TicketConnection(request=slice_request(opened, first, after, forward=False))

    @strawberry.field(
        description="Every product the user can use through an active subscription of one of "
        "their groups, each once, with the groups it comes through."
    )
    async def products(self, info: Info) -> list[ProductAccess]:
        granted = await access.products_of(info.context.loaders, self.key)
        scope = info.context.scope
        keys = list(granted) + [g for groups in granted.values() for g in groups]
        readable = dict(zip(keys, await scope.readable(keys), strict=True))
        return [
            ProductAccess(product=Product(key=p), via=[Group(key=g) for g in groups if readable[g]])
            for p, groups in granted.items()
            if readable[p]
        ]

    @strawberry.field(description="Whether the user can use the product (see `products`).")
    async def has_access(
        self,
        info: Info,
        product_id: Annotated[
            strawberry.ID, strawberry.argument(description="Bare or global product id.")
        ],
    ) -> bool:
        product = parse_id(product_id, NodeType.PRODUCT)
        if product is None:
            return False
        await info.context.scope.check(product)
        return await access.has_access(info.context.loaders, self.key, product)


User.prefetchers = {
    "groups": connection_prefetcher(MEMBER_OF, False),
    "tickets": lambda key, args, subfields, info: (
        [
            info.context.loaders.pages.load(
                slice_request(
                    Edges(key, OPENED), args.get("first"), args.get("after"), forward=False
                )
            )
        ]
        if subfields & {"edges", "pageInfo"}
        else []
    ),
    "organization": lambda key, args, subfields, info: [
        info.context.loaders.pages.load(page_request(key, HAS_MEMBER, True, 1, None))
    ],
    "products": lambda key, args, subfields, info: [
        info.context.loaders.all_edges.load(Edges(key, MEMBER_OF))
    ],
    "hasAccess": lambda key, args, subfields, info: [
        info.context.loaders.all_edges.load(Edges(key, MEMBER_OF))
    ],
}


@strawberry.type(description="A group of users. Global id `GROUP#<id>`.")
class Group(Node):
    name: str = stored("name", str, "Display name.")
    description: str | None = stored("description", str | None, "Free text.")
    version: int = stored("version", int, "Optimistic-locking version, 1 at creation.", int)

    @strawberry.field(description="The group's members (MEMBER_OF in reverse).")
    def members(
        self,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> GroupMemberConnection:
        return GroupMemberConnection(request=page_request(self.key, MEMBER_OF, True, first, after))

    @strawberry.field(description="The products the group subscribes to.")
    def subscriptions(
        self,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> GroupSubscriptionConnection:
        request = page_request(self.key, SUBSCRIBES_TO, False, first, after)
        return GroupSubscriptionConnection(request=request)


Group.prefetchers = {
    "members": connection_prefetcher(MEMBER_OF, True),
    "subscriptions": connection_prefetcher(SUBSCRIBES_TO, False),
}


@strawberry.type(description="A product groups subscribe to. Global id `PRODUCT#<id>`.")
class Product(Node):
    name: str = stored("name", str, "Display name.")
    description: str | None = stored("description", str | None, "Free text.")
    version: int = stored("version", int, "Optimistic-locking version, 1 at creation.", int)

    @strawberry.field(
        description="The groups subscribing to the product (SUBSCRIBES_TO in reverse)."
    )
    def subscribers(
        self,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> ProductSubscriberConnection:
        request = page_request(self.key, SUBSCRIBES_TO, True, first, after)
        return ProductSubscriberConnection(request=request)


Product.prefetchers = {"subscribers": connection_prefetcher(SUBSCRIBES_TO, True)}


@strawberry.type(description="An organization with members. Global id `ORG#<id>`.")
class Organization(Node):
    name: str = stored("name", str, "Display name.")
    plan: str | None = stored("plan", str | None, "The organization's plan.")
    version: int = stored("version", int, "Optimistic-locking version, 1 at creation.", int)

    @strawberry.field(description="The organization's members.")
    def members(
        self,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> OrganizationMemberConnection:
        request = page_request(self.key, HAS_MEMBER, False, first, after)
        return OrganizationMemberConnection(request=request)

    @strawberry.field(
        description="The organization's offices, narrowed by location: each filter needs the "
        "coarser ones (country, then state, then city, then zip)."
    )
    def offices(
        self,
        country: Annotated[
            str | None, strawberry.argument(description="Country.")
        ] = strawberry.UNSET,
        state: Annotated[
            str | None, strawberry.argument(description="State or region.")
        ] = strawberry.UNSET,
        city: Annotated[str | None, strawberry.argument(description="City.")] = strawberry.UNSET,
        zip: Annotated[
            str | None, strawberry.argument(description="Postal code.")
        ] = strawberry.UNSET,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> OfficeConnection:
        given = {"country": country, "state": state, "city": city, "zip": zip}
        location = {k: None if v is strawberry.UNSET else v for k, v in given.items()}
        offices = Offices(self.key, office_prefix(location))
        return OfficeConnection(request=slice_request(offices, first, after))


Organization.prefetchers = {"members": connection_prefetcher(HAS_MEMBER, False)}


@strawberry.enum(description="Whether a ticket is being worked on.")
class TicketStatus(enum.Enum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"


@strawberry.type(description="A support ticket a user opened. Global id `TICKET#<id>`.")
class Ticket(Node):
    title: str = stored("title", str, "What the ticket is about.")
    status: TicketStatus = stored("status", TicketStatus, "OPEN or CLOSED.", TicketStatus)
    created_at: datetime = stored("createdAt", datetime, "When it was opened.", to_datetime)

    @strawberry.field(description="The user who opened it.")
    async def author(self, info: Info) -> User:
        return User(key=NodeKey.parse((await self.item(info))["author"]))


NODE_CLASSES: dict[NodeType, type[Node]] = {
    NodeType.USER: User,
    NodeType.GROUP: Group,
    NodeType.PRODUCT: Product,
    NodeType.ORG: Organization,
    NodeType.TICKET: Ticket,
}
