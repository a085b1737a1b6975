"""What the demo model file cannot say, as hooks the file names by dotted path
(``models.demo.hooks:open_ticket``): the ticket, office and subscription mutations that write
more than the generated ones. (A user's products and ``hasAccess`` are `path:` fields of the
file.)

A mutation hook is called as ``await hook(ctx, **arguments)``. Keys come from the model's
templates (through the codec and the Writer of :mod:`server.hooks`, the one module hooks
import); nothing here formats one."""

from __future__ import annotations

from server.hooks import (
    BadUserInput,
    EdgeType,
    EdgeValue,
    Item,
    ModelContext,
    NodeType,
    NotFound,
    Ref,
    Writer,
    cursor_of,
    is_marked,
    new_id,
    now_iso,
)

__all__ = [
    "add_office",
    "cancel_subscription",
    "close_ticket",
    "open_ticket",
    "remove_office",
]

TITLE_LIMIT = 500
LOCATION_LIMIT = 64


def _node(ctx: ModelContext, name: str) -> NodeType:
    return ctx.codec.model.types[name]


def _edge(ctx: ModelContext, label: str) -> EdgeType:
    return ctx.codec.model.edges[label]


def _find(ctx: ModelContext, type_name: str, raw: str) -> Ref:
    """The node a mutation names by a bare or global id; another type's global id is
    NOT_FOUND, a malformed id BAD_USER_INPUT."""
    ref = ctx.codec.by_id(_node(ctx, type_name), raw)
    if ref is None:
        raise NotFound(f"{raw!r} is not a {type_name} id")
    return ref


def _prime(ctx: ModelContext, ref: Ref, item: Item) -> Ref:
    ctx.reads.items.clear(ref.key).prime(ref.key, item)
    ref.item = item
    return ref


# ---- subscriptions -------------------------------------------------------------------------


async def cancel_subscription(ctx: ModelContext, groupId: str, productId: str) -> EdgeValue:
    """Set a subscription CANCELED (the edge stays, so no counter moves); NOT_FOUND if there
    is none."""
    ctx.require_admin("cancel subscription")
    group, product = _find(ctx, "Group", groupId), _find(ctx, "Product", productId)
    edge = _edge(ctx, "SUBSCRIBES_TO")
    item = await Writer(ctx.table, ctx.codec).update_edge(
        edge, group, product, {"status": "CANCELED"}
    )
    return EdgeValue(item, cursor_of(ctx.codec.layout, None, item), product)


# ---- tickets -------------------------------------------------------------------------------


async def open_ticket(ctx: ModelContext, userId: str, title: str) -> Ref:
    """An OPEN ticket, the user's OPENED edge to it and the user's count of them, in one
    transaction; NOT_FOUND if the user is missing. The model's access rules let a user open
    tickets for themselves."""
    ctx.require_admin("open a ticket for another user")  # unless the model's rules grant it
    user = _find(ctx, "User", userId)
    if not title.strip() or len(title) > TITLE_LIMIT:
        raise BadUserInput(f"a ticket title is 1 to {TITLE_LIMIT} characters")
    ticket, opened = _node(ctx, "Ticket"), _edge(ctx, "OPENED")
    writer = Writer(ctx.table, ctx.codec)
    values = {"id": new_id(), "title": title, "status": "OPEN", "authorId": user.key.pk}
    item = writer.node_item(ticket, values, now_iso())
    ref = Ref(ticket, ctx.codec.item_key(item))
    incoming, outgoing = opened.counter("to"), opened.counter("from")
    if incoming:
        item[incoming] = 1
    edge = writer.edge_item(opened, user, ref, {}, {"from": {}, "to": {}})
    await writer.insert([item, edge], [(user, {outgoing: 1})] if outgoing else [])
    return _prime(ctx, ref, item)


async def close_ticket(ctx: ModelContext, id: str) -> Ref:
    """Set CLOSED, which moves the ticket to the CLOSED partitions of its index in the same
    update; closing a closed ticket changes nothing. The model's access rules let a user close
    their own tickets."""
    ctx.require_admin("close another user's ticket")
    ticket = _node(ctx, "Ticket")
    ref = _find(ctx, "Ticket", id)
    old = await ctx.table.get_item(ref.key)
    if old is None or is_marked(ctx.codec.model, old):  # a ticket being deleted is gone
        raise NotFound(f"{ref.key.pk} does not exist")
    if old.get(ticket.fields["status"].attribute) == "CLOSED":
        return _prime(ctx, ref, old)
    writer = Writer(ctx.table, ctx.codec)
    item = await writer.update(ticket, ref.key, {"status": "CLOSED"}, read=old)
    return _prime(ctx, ref, item)


# ---- offices -------------------------------------------------------------------------------


async def add_office(
    ctx: ModelContext,
    organizationId: str,
    country: str,
    state: str,
    city: str,
    zip: str,
    address: str | None = None,
) -> EdgeValue:
    """An office in its organization's partition under its location, counted on the
    organization, in one transaction; NOT_FOUND if the organization is missing."""
    ctx.require_admin("add office")
    organization = _find(ctx, "Organization", organizationId)
    location = {"country": country, "state": state, "city": city, "zip": zip}
    for level, value in location.items():
        if not value or len(value) > LOCATION_LIMIT:
            raise BadUserInput(f"{level} must be 1 to {LOCATION_LIMIT} characters, got {value!r}")
    office = _node(ctx, "Office")
    assert office.parent is not None
    theirs = ctx.codec.key_values(organization.type, organization.key) or {}
    link = {mine: theirs[their] for mine, their in office.parent.link}
    office_id = new_id()
    values = {**link, **location, "id": office_id, "address": address}
    writer = Writer(ctx.table, ctx.codec)
    item = writer.node_item(office, values, None)  # as the demo's offices: no timestamps,
    if ctx.codec.model.version_attribute:  # no version (never updated), their id stored
        item.pop(ctx.codec.model.version_attribute, None)
    item["id"] = office_id
    counter = office.parent_counter
    await writer.insert([item], [(organization, {counter: 1})] if counter else [])
    ref = _prime(ctx, Ref(office, ctx.codec.item_key(item)), item)
    return EdgeValue(item, cursor_of(ctx.codec.layout, None, item), ref)


async def remove_office(ctx: ModelContext, organizationId: str, officeId: str) -> bool:
    """Delete an office by its id and uncount it; false when the organization has none such."""
    ctx.require_admin("remove office")
    organization = _find(ctx, "Organization", organizationId)
    office = _node(ctx, "Office")
    writer = Writer(ctx.table, ctx.codec)
    item = await writer.find_child(office, organization, {"id": officeId})
    if item is None:
        return False
    key = ctx.codec.item_key(item)
    ctx.reads.items.clear(key)
    return await writer.delete_child(office, key)
