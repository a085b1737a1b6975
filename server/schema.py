"""The one strawberry schema: the Query root, and error codes on every error."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, cast

import strawberry
from graphql import GraphQLError
from graphql.validation import NoSchemaIntrospectionCustomRule
from strawberry.extensions import AddValidationRules, ParserCache, ValidationCache
from strawberry.types import ExecutionContext

from graph.errors import EdgewiseError, Forbidden
from graph.keys import NodeKey, NodeType, parse_global_id, parse_id
from graph.loaders import PageRequest
from graph.model import email_key
from graph.tickets import TicketListing

from .context import Info
from .mutations import Mutation
from .types import NODE_CLASSES, Group, Node, Organization, Product, Ticket, User
from .types.base import check_first, prefetch
from .types.nodes import AFTER, FIRST, TicketConnection, TicketStatus

__all__ = ["Query", "Schema", "format_error", "log_unexpected", "production_schema", "schema"]

log = logging.getLogger("edgewise")

ID_HELP = "A bare id (`alice`) or a global id of this type (`USER#alice`)."


async def lookup(info: Info, key: NodeKey | None) -> Any:
    """The node at ``key`` or ``None``; its selected edges start loading in the same wave."""
    if key is None or key.type not in NODE_CLASSES:
        return None
    node = NODE_CLASSES[key.type](key=key)
    prefetch(node, info)
    item, allowed = await asyncio.gather(
        info.context.loaders.node(key), info.context.scope.can_read(key)
    )
    if item is None or item.get("deleting"):
        return None
    if not allowed:
        raise Forbidden(f"you may not read {key}")
    return node


@strawberry.type(description="Reads. Every read of a request is batched through its loaders.")
class Query:
    @strawberry.field(description="Any node by its global id (`USER#alice`).")
    async def node(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="A global id.")],
    ) -> Node | None:
        result: Node | None = await lookup(info, parse_global_id(id))
        return result

    @strawberry.field(description="Nodes by global id, in order; null where there is none.")
    def nodes(
        self,
        info: Info,
        ids: Annotated[list[strawberry.ID], strawberry.argument(description="Global ids.")],
    ) -> list[Node | None]:
        keys = [parse_global_id(i) for i in ids]
        # awaitables, not a gather: each item resolves, or fails with its own error, alone
        return cast(list[Node | None], [lookup(info, key) for key in keys])

    @strawberry.field(description="A user by id.")
    async def user(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description=ID_HELP)]
    ) -> User | None:
        result: User | None = await lookup(info, parse_id(id, NodeType.USER))
        return result

    @strawberry.field(description="A group by id.")
    async def group(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description=ID_HELP)]
    ) -> Group | None:
        result: Group | None = await lookup(info, parse_id(id, NodeType.GROUP))
        return result

    @strawberry.field(description="A product by id.")
    async def product(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description=ID_HELP)]
    ) -> Product | None:
        result: Product | None = await lookup(info, parse_id(id, NodeType.PRODUCT))
        return result

    @strawberry.field(description="An organization by id.")
    async def organization(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description=ID_HELP)]
    ) -> Organization | None:
        result: Organization | None = await lookup(info, parse_id(id, NodeType.ORG))
        return result

    @strawberry.field(description="A ticket by id.")
    async def ticket(
        self, info: Info, id: Annotated[strawberry.ID, strawberry.argument(description=ID_HELP)]
    ) -> Ticket | None:
        result: Ticket | None = await lookup(info, parse_id(id, NodeType.TICKET))
        return result

    @strawberry.field(
        description="The user with this email, compared case-insensitively. A non-admin may "
        "look up only their own email (emails are private)."
    )
    async def user_by_email(
        self, info: Info, email: Annotated[str, strawberry.argument(description="An email.")]
    ) -> User | None:
        claim = await info.context.loaders.items.load(email_key(email))
        user = NodeKey.parse(claim["user"]) if claim else None
        scope = info.context.scope
        if not scope.principal.admin and user != scope.me:
            raise Forbidden("only admins may look up another user's email")
        result: User | None = await lookup(info, user)
        return result

    @strawberry.field(
        description="Tickets of one status, newest first, from every shard of the index at once."
    )
    def tickets(
        self,
        status: Annotated[TicketStatus, strawberry.argument(description="OPEN or CLOSED.")],
        created_after: Annotated[
            datetime | None, strawberry.argument(description="Only tickets opened after this.")
        ] = strawberry.UNSET,
        created_before: Annotated[
            datetime | None, strawberry.argument(description="Only tickets opened before this.")
        ] = strawberry.UNSET,
        first: Annotated[int | None, strawberry.argument(description=FIRST)] = strawberry.UNSET,
        after: Annotated[str | None, strawberry.argument(description=AFTER)] = strawberry.UNSET,
    ) -> TicketConnection:
        listing = TicketListing(
            status.value,
            None if after is strawberry.UNSET else after,
            None if created_after is strawberry.UNSET else created_after,
            None if created_before is strawberry.UNSET else created_before,
        )
        return TicketConnection(request=PageRequest(listing, check_first(first)))


def format_error(error: GraphQLError) -> dict[str, Any]:
    """The error as sent: always with ``extensions.code``; unexpected errors masked."""
    original = error.original_error
    if original is None or isinstance(original, GraphQLError):
        code = "BAD_USER_INPUT"  # parse, validation and variable errors
    elif isinstance(original, EdgewiseError):
        code = original.code
    else:
        code = "INTERNAL_SERVER_ERROR"
    formatted: dict[str, Any] = dict(error.formatted)
    if code == "INTERNAL_SERVER_ERROR":
        formatted["message"] = "Internal server error"
    formatted["extensions"] = {**formatted.get("extensions", {}), "code": code}
    return formatted


def log_unexpected(errors: Iterable[GraphQLError]) -> None:
    """Log only what the client cannot be told: errors that are not ours on purpose."""
    for error in errors:
        original = error.original_error
        if (
            original is not None
            and not isinstance(original, GraphQLError)
            and (
                not isinstance(original, EdgewiseError) or original.code == "INTERNAL_SERVER_ERROR"
            )
        ):
            log.error("unexpected error at %s", error.path, exc_info=original)


class Schema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        log_unexpected(errors)


# Parsing and validating a repeated query text is cached (module-level LRU caches shared by
# every request): most of a small query's CPU otherwise.
CACHES = [lambda: ParserCache(maxsize=512), lambda: ValidationCache(maxsize=512)]
schema = Schema(
    query=Query, mutation=Mutation, types=list(NODE_CLASSES.values()), extensions=CACHES
)
production_schema = Schema(
    query=Query,
    mutation=Mutation,
    types=list(NODE_CLASSES.values()),
    extensions=[lambda: AddValidationRules([NoSchemaIntrospectionCustomRule]), *CACHES],
)
