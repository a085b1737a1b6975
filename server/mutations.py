"""The Mutation root. Each mutation is one transaction in ``graph.writes`` (or tickets/offices);
the written item primes the request's loader, so the answer needs no eventually-consistent read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import strawberry

from graph import offices, tickets, writes
from graph.errors import BadUserInput, Forbidden, NotFound
from graph.keys import ItemKey, NodeKey, NodeType, encode_cursor, new_id, parse_id
from graph.model import HAS_MEMBER, MEMBER_OF, SUBSCRIBES_TO, Edges, EdgeType, now_iso
from graph.table import Item

from .context import Info
from .types import NODE_CLASSES, Group, Organization, Product, Ticket, User
from .types.base import GroupRole, OrgRole
from .types.nodes import (
    GroupSubscriptionEdge,
    OfficeEdge,
    OrganizationMemberEdge,
    UserGroupEdge,
)

__all__ = ["Mutation"]

UNSET: Any = strawberry.UNSET
ID_HELP = "A bare id or a global id of this type."
NEW_ID = "The id to use; generated (a time-sortable ULID) when left out."
EXPECTED = "Fail with CONFLICT unless the node is at this version."


def _key(raw: str, node_type: NodeType) -> NodeKey:
    key = parse_id(raw, node_type)
    if key is None:
        raise NotFound(f"{raw!r} is not a {node_type.value} id")
    return key


def _text(name: str, value: str | None, limit: int = 200) -> str | None:
    if value is not None and (not value.strip() or len(value) > limit):
        raise BadUserInput(f"{name} must be 1 to {limit} characters")
    return value


def _prime(info: Info, key: ItemKey, item: Item) -> None:
    info.context.loaders.items.clear(key).prime(key, item)


async def _create(
    info: Info, node_type: NodeType, raw_id: str | None, fields: dict[str, Any]
) -> Any:
    info.context.scope.require_admin(f"create a {node_type.value.lower()}")
    key: NodeKey | None = NodeKey(node_type, new_id())
    if raw_id is not None and raw_id is not UNSET:
        key = parse_id(raw_id, node_type)
    if key is None:
        raise BadUserInput(f"{raw_id!r} is not a {node_type.value} id")
    fields = {k: None if v is UNSET else v for k, v in fields.items()}
    _text("name", fields["name"])
    item = await writes.create_node(info.context.table, key, fields)
    _prime(info, key.item, item)
    return NODE_CLASSES[node_type](key=key)


async def _update(
    info: Info, node_type: NodeType, raw_id: str, fields: dict[str, Any], expected: int | None
) -> Any:
    key = _key(raw_id, node_type)
    if node_type is NodeType.USER:
        info.context.scope.require_self(key, "update a user")
    else:
        info.context.scope.require_admin(f"update a {node_type.value.lower()}")
    changes = {k: v for k, v in fields.items() if v is not UNSET}
    expected = None if expected is UNSET else expected
    if "name" in changes and changes["name"] is None:
        raise BadUserInput("name cannot be null")
    _text("name", changes.get("name"))
    item = await writes.update_node(info.context.table, key, changes, expected)
    _prime(info, key.item, item)
    return NODE_CLASSES[node_type](key=key)


async def _delete(info: Info, node_type: NodeType, raw_id: str) -> DeletedNode:
    info.context.scope.require_admin(f"delete a {node_type.value.lower()}")
    key = _key(raw_id, node_type)
    await writes.delete_node(info.context.table, key)
    info.context.loaders.items.clear(key.item)
    return DeletedNode(id=strawberry.ID(str(key)))


def _edge(cls: type[Any], edge: EdgeType, item: Item) -> Any:
    source = Edges(NodeKey.parse(item["PK"]), edge)
    return cls(item=item, source=source, position=encode_cursor(ItemKey(item["PK"], item["SK"])))


@strawberry.type(description="What a delete removed.")
class DeletedNode:
    id: strawberry.ID = strawberry.field(description="The global id of the deleted node.")


def _id() -> Any:
    return strawberry.field(default=UNSET, description=NEW_ID)


def _name(create: bool) -> Any:
    if create:
        return strawberry.field(description="Display name.")
    return strawberry.field(default=UNSET, description="New display name.")


def _optional(description: str, create: bool) -> Any:
    if create:
        return strawberry.field(default=UNSET, description=description)
    return strawberry.field(default=UNSET, description=f"{description} Null clears it.")


def _expected() -> Any:
    return strawberry.field(default=UNSET, description=EXPECTED)


EMAIL = "Email address, unique case-insensitively."
DESCRIPTION = "Free text."
PLAN = "The organization's plan."


@strawberry.input(description="A new user.")
class CreateUserInput:
    id: strawberry.ID | None = _id()
    name: str = _name(True)
    email: str | None = _optional(EMAIL, True)


@strawberry.input(description="Changes to a user; fields left out stay as they are.")
class UpdateUserInput:
    id: strawberry.ID = strawberry.field(description=ID_HELP)
    name: str | None = _name(False)
    email: str | None = _optional(EMAIL, False)
    expected_version: int | None = _expected()


@strawberry.input(description="A new group.")
class CreateGroupInput:
    id: strawberry.ID | None = _id()
    name: str = _name(True)
    description: str | None = _optional(DESCRIPTION, True)


@strawberry.input(description="Changes to a group; fields left out stay as they are.")
class UpdateGroupInput:
    id: strawberry.ID = strawberry.field(description=ID_HELP)
    name: str | None = _name(False)
    description: str | None = _optional(DESCRIPTION, False)
    expected_version: int | None = _expected()


@strawberry.input(description="A new product.")
class CreateProductInput:
    id: strawberry.ID | None = _id()
    name: str = _name(True)
    description: str | None = _optional(DESCRIPTION, True)


@strawberry.input(description="Changes to a product; fields left out stay as they are.")
class UpdateProductInput:
    id: strawberry.ID = strawberry.field(description=ID_HELP)
    name: str | None = _name(False)
    description: str | None = _optional(DESCRIPTION, False)
    expected_version: int | None = _expected()


@strawberry.input(description="A new organization.")
class CreateOrganizationInput:
    id: strawberry.ID | None = _id()
    name: str = _name(True)
    plan: str | None = _optional(PLAN, True)


@strawberry.input(description="Changes to an organization; fields left out stay as they are.")
class UpdateOrganizationInput:
    id: strawberry.ID = strawberry.field(description=ID_HELP)
    name: str | None = _name(False)
    plan: str | None = _optional(PLAN, False)
    expected_version: int | None = _expected()


def _arg(description: str) -> Any:
    return strawberry.argument(description=description)


Id = Annotated[strawberry.ID, _arg(ID_HELP)]
USER, GROUP, PRODUCT, ORG = NodeType.USER, NodeType.GROUP, NodeType.PRODUCT, NodeType.ORG


@strawberry.type(description="Writes. Each applies fully or leaves no trace.")
class Mutation:
    @strawberry.mutation(description="Create a user; CONFLICT if the id or the email is taken.")
    async def create_user(
        self, info: Info, input: Annotated[CreateUserInput, _arg("The new user.")]
    ) -> User:
        fields = {"name": input.name, "email": input.email}
        user: User = await _create(info, USER, input.id, fields)
        return user

    @strawberry.mutation(description="Change a user; the email claim moves with it.")
    async def update_user(
        self, info: Info, input: Annotated[UpdateUserInput, _arg("Changes to the user.")]
    ) -> User:
        fields = {"name": input.name, "email": input.email}
        user: User = await _update(info, USER, input.id, fields, input.expected_version)
        return user

    @strawberry.mutation(description="Delete a user, its edges, its tickets and its email claim.")
    async def delete_user(self, info: Info, id: Id) -> DeletedNode:
        return await _delete(info, USER, id)

    @strawberry.mutation(description="Create a group; CONFLICT if the id is taken.")
    async def create_group(
        self, info: Info, input: Annotated[CreateGroupInput, _arg("The new group.")]
    ) -> Group:
        fields = {"name": input.name, "description": input.description}
        group: Group = await _create(info, GROUP, input.id, fields)
        return group

    @strawberry.mutation(description="Change a group.")
    async def update_group(
        self, info: Info, input: Annotated[UpdateGroupInput, _arg("Changes to the group.")]
    ) -> Group:
        fields = {"name": input.name, "description": input.description}
        group: Group = await _update(info, GROUP, input.id, fields, input.expected_version)
        return group

    @strawberry.mutation(description="Delete a group and its edges.")
    async def delete_group(self, info: Info, id: Id) -> DeletedNode:
        return await _delete(info, GROUP, id)

    @strawberry.mutation(description="Create a product; CONFLICT if the id is taken.")
    async def create_product(
        self, info: Info, input: Annotated[CreateProductInput, _arg("The new product.")]
    ) -> Product:
        fields = {"name": input.name, "description": input.description}
        product: Product = await _create(info, PRODUCT, input.id, fields)
        return product

    @strawberry.mutation(description="Change a product.")
    async def update_product(
        self, info: Info, input: Annotated[UpdateProductInput, _arg("Changes to the product.")]
    ) -> Product:
        fields = {"name": input.name, "description": input.description}
        product: Product = await _update(info, PRODUCT, input.id, fields, input.expected_version)
        return product

    @strawberry.mutation(description="Delete a product and its edges.")
    async def delete_product(self, info: Info, id: Id) -> DeletedNode:
        return await _delete(info, PRODUCT, id)

    @strawberry.mutation(description="Create an organization; CONFLICT if the id is taken.")
    async def create_organization(
        self, info: Info, input: Annotated[CreateOrganizationInput, _arg("The new organization.")]
    ) -> Organization:
        fields = {"name": input.name, "plan": input.plan}
        org: Organization = await _create(info, ORG, input.id, fields)
        return org

    @strawberry.mutation(description="Change an organization.")
    async def update_organization(
        self,
        info: Info,
        input: Annotated[UpdateOrganizationInput, _arg("Changes to the organization.")],
    ) -> Organization:
        fields = {"name": input.name, "plan": input.plan}
        org: Organization = await _update(info, ORG, input.id, fields, input.expected_version)
        return org

    @strawberry.mutation(description="Delete an organization, its memberships and its offices.")
    async def delete_organization(self, info: Info, id: Id) -> DeletedNode:
        return await _delete(info, ORG, id)

    @strawberry.mutation(
        description="Make a user a member of a group. NOT_FOUND if either is missing; CONFLICT "
        "if already a member (remove first to change the role)."
    )
    async def add_group_member(
        self,
        info: Info,
        user_id: Id,
        group_id: Id,
        role: Annotated[GroupRole | None, _arg("The member's role.")] = GroupRole.MEMBER,
    ) -> UserGroupEdge:
        info.context.scope.require_admin("add group member")
        user, group = _key(user_id, USER), _key(group_id, GROUP)
        fields = {"role": (role or GroupRole.MEMBER).value, "since": now_iso()}
        item = await writes.add_edge(info.context.table, MEMBER_OF, user, group, fields)
        edge: UserGroupEdge = _edge(UserGroupEdge, MEMBER_OF, item)
        return edge

    @strawberry.mutation(description="End a membership; false if there was none.")
    async def remove_group_member(self, info: Info, user_id: Id, group_id: Id) -> bool:
        info.context.scope.require_admin("remove group member")
        user, group = _key(user_id, USER), _key(group_id, GROUP)
        return await writes.remove_edge(info.context.table, MEMBER_OF, user, group)

    @strawberry.mutation(
        description="Subscribe a group to a product (ACTIVE). NOT_FOUND if either is missing; "
        "CONFLICT if already subscribed."
    )
    async def subscribe_group(
        self,
        info: Info,
        group_id: Id,
        product_id: Id,
        plan: Annotated[str, _arg("The plan.")],
        valid_until: Annotated[datetime | None, _arg("When it ends; never if null.")] = UNSET,
    ) -> GroupSubscriptionEdge:
        info.context.scope.require_admin("subscribe group")
        group, product = _key(group_id, GROUP), _key(product_id, PRODUCT)
        until = None
        if valid_until:
            moment = valid_until if valid_until.tzinfo else valid_until.replace(tzinfo=UTC)
            until = moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        fields = {"plan": _text("plan", plan), "status": "ACTIVE", "validUntil": until}
        item = await writes.add_edge(info.context.table, SUBSCRIBES_TO, group, product, fields)
        edge: GroupSubscriptionEdge = _edge(GroupSubscriptionEdge, SUBSCRIBES_TO, item)
        return edge

    @strawberry.mutation(description="Set a subscription CANCELED; NOT_FOUND if there is none.")
    async def cancel_subscription(
        self, info: Info, group_id: Id, product_id: Id
    ) -> GroupSubscriptionEdge:
        info.context.scope.require_admin("cancel subscription")
        group, product = _key(group_id, GROUP), _key(product_id, PRODUCT)
        changes = {"status": "CANCELED"}
        item = await writes.update_edge(info.context.table, SUBSCRIBES_TO, group, product, changes)
        edge: GroupSubscriptionEdge = _edge(GroupSubscriptionEdge, SUBSCRIBES_TO, item)
        return edge

    @strawberry.mutation(
        description="Add a user to an organization. NOT_FOUND if either is missing; CONFLICT if "
        "the user already belongs to an organization."
    )
    async def add_organization_member(
        self,
        info: Info,
        organization_id: Id,
        user_id: Id,
        role: Annotated[OrgRole | None, _arg("The member's role.")] = OrgRole.MEMBER,
    ) -> OrganizationMemberEdge:
        info.context.scope.require_admin("add organization member")
        org, user = _key(organization_id, ORG), _key(user_id, USER)
        fields = {"role": (role or OrgRole.MEMBER).value, "joinedAt": now_iso()}
        item = await writes.add_edge(
            info.context.table, HAS_MEMBER, org, user, fields, single_source=True
        )
        edge: OrganizationMemberEdge = _edge(OrganizationMemberEdge, HAS_MEMBER, item)
        return edge

    @strawberry.mutation(description="Remove a user from an organization; false if not a member.")
    async def remove_organization_member(
        self, info: Info, organization_id: Id, user_id: Id
    ) -> bool:
        info.context.scope.require_admin("remove organization member")
        org, user = _key(organization_id, ORG), _key(user_id, USER)
        return await writes.remove_edge(info.context.table, HAS_MEMBER, org, user)

    @strawberry.mutation(description="Open a ticket for a user; NOT_FOUND if the user is missing.")
    async def open_ticket(
        self, info: Info, user_id: Id, title: Annotated[str, _arg("What it is about.")]
    ) -> Ticket:
        user = _key(user_id, USER)
        info.context.scope.require_self(user, "open a ticket")
        item = await tickets.open_ticket(info.context.table, user, title)
        key = NodeKey.parse(item["PK"])
        _prime(info, key.item, item)
        return Ticket(key=key)

    @strawberry.mutation(description="Close a ticket (closing a closed one changes nothing).")
    async def close_ticket(self, info: Info, id: Id) -> Ticket:
        key = _key(id, NodeType.TICKET)
        scope = info.context.scope
        if not scope.principal.admin:
            ticket = await info.context.table.get_item(key.item)
            if ticket is None:
                raise NotFound(f"{key} does not exist")
            if ticket.get("author") != str(scope.me):
                raise Forbidden("you may close only your own tickets")
        item = await tickets.close_ticket(info.context.table, key)
        _prime(info, key.item, item)
        return Ticket(key=key)

    @strawberry.mutation(description="Add an office to an organization.")
    async def add_office(
        self,
        info: Info,
        organization_id: Id,
        country: Annotated[str, _arg("Country.")],
        state: Annotated[str, _arg("State or region.")],
        city: Annotated[str, _arg("City.")],
        zip: Annotated[str, _arg("Postal code.")],
        address: Annotated[str | None, _arg("Street address.")] = UNSET,
    ) -> OfficeEdge:
        info.context.scope.require_admin("add office")
        location = {"country": country, "state": state, "city": city, "zip": zip}
        org = _key(organization_id, ORG)
        street = None if address is UNSET else address
        item = await offices.add_office(info.context.table, org, location, street)
        position = encode_cursor(ItemKey(item["PK"], item["SK"]))
        return OfficeEdge(item=item, source=offices.Offices(org), position=position)

    @strawberry.mutation(description="Remove an office; false if the organization has none such.")
    async def remove_office(
        self,
        info: Info,
        organization_id: Id,
        office_id: Annotated[strawberry.ID, _arg("The office id.")],
    ) -> bool:
        info.context.scope.require_admin("remove office")
        org = _key(organization_id, ORG)
        return await offices.remove_office(info.context.table, org, office_id)
