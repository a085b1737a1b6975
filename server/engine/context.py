"""The per-request context of a model-built schema: who asks, the request's table view, its
reads, and the model's codec."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphql import GraphQLResolveInfo
from starlette.requests import Request

from graph.items import Codec, Ref
from graph.reads import Reads
from graph.table import Item, Table
from graph.watch import Watched
from server.errors import Forbidden
from server.http.auth import ADMIN, Principal

__all__ = ["AccessRules", "AccessScope", "Info", "ModelContext", "granted"]


Info = GraphQLResolveInfo[Any]

_granted: ContextVar[bool] = ContextVar("edgewise_granted", default=False)


@contextmanager
def granted() -> Iterator[None]:
    """Inside: the model's access rules granted the running mutation, so ``require_admin``
    lets it through (see :mod:`server.engine.access`)."""
    token = _granted.set(True)
    try:
        yield
    finally:
        _granted.reset(token)


class AccessScope(Protocol):
    """What a request's access rules answer (:class:`server.engine.access.Scope`)."""

    def can_read(self, ref: Ref, via: Item | None = None) -> asyncio.Future[bool]: ...

    def decided(self, ref: Ref) -> bool | None: ...

    async def check(self, ref: Ref) -> None: ...

    async def checked(self, ref: Ref) -> Ref: ...

    async def hides(self, ref: Ref) -> bool: ...

    async def visible(self, edges: list[Any]) -> list[Any]: ...

    def field_decided(self, type_name: str, field: str, ref: Ref) -> bool | None: ...

    async def check_field(self, type_name: str, field: str, ref: Ref | None) -> None: ...

    async def may_run(self, grants: tuple[Any, ...], args: dict[str, Any]) -> str | None: ...


class AccessRules(Protocol):
    """A model's access rules (:class:`server.engine.access.Rules`)."""

    def scope(self, context: ModelContext) -> AccessScope: ...


@dataclass
class ModelContext:
    request: Request | None
    table: Table
    reads: Reads
    codec: Codec
    principal: Principal = ADMIN
    scope: AccessScope | None = (
        None  # the model's access rules, for a principal who is not an admin
    )
    explain_forbidden: bool = False  # an unreadable node is FORBIDDEN, not null (development)
    # a page's edges per selection under `node`, made once (server.engine.listings.edges_for)
    edges: dict[tuple[Any, frozenset[str] | None], list[Any]] = field(default_factory=dict)
    # the planned selections of the document (server.engine.plan), by field nodes: its
    # execution record's (server.engine.records), or this request's own under @skip/@include
    planned: dict[tuple[int, ...], Any] = field(default_factory=dict)

    @classmethod
    def for_request(
        cls,
        request: Request | None,
        table: Table,
        codec: Codec,
        principal: Principal = ADMIN,
        rules: AccessRules | None = None,
        explain_forbidden: bool = False,
        watched: Watched | None = None,
    ) -> ModelContext:
        """Reads bind the running loop: build this inside the request's task. ``watched``
        records what the answer reads (a live query's: :mod:`server.live.queries`)."""
        observation = getattr(getattr(request, "state", None), "observation", None)
        scoped = table.for_request(observation)  # see server.observe.requests
        reads = Reads(scoped, watched)
        if observation is not None:
            observation.watch(reads)
        context = cls(request, scoped, reads, codec, principal)
        context.explain_forbidden = explain_forbidden
        if rules is not None and not principal.admin:  # an admin reads and does everything
            context.scope = rules.scope(context)
        return context

    def close(self) -> None:
        """The request is answered: drop its reads now rather than at the next garbage
        collection (the reads are cyclic)."""
        self.reads.close()
        self.edges.clear()

    def require_admin(self, action: str) -> None:
        if not self.principal.admin and not _granted.get():
            raise Forbidden(f"only an admin may {action}")

    async def item(self, ref: Ref) -> Item | None:
        """The node's item; None when there is none, or it is another type's (the item
        decides its type: :meth:`graph.items.Codec.own`)."""
        if ref.item is None:
            ref.item = self.codec.own(ref.type, await self.reads.items.load(ref.key))
        return ref.item

    def known(self, ref: Ref) -> Item | Any | None:
        """The node's item if this request has read it (None: there is none of its type),
        else UNKNOWN (:meth:`graph.reads.Reads.known_item`)."""
        if ref.item is not None:
            return ref.item
        return self.codec.own(ref.type, self.reads.known_item(ref.key))
