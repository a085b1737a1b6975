"""The per-request context of a model-built schema: who asks, the request's table view, its
reads, and the model's codec."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from graphql import GraphQLResolveInfo
from starlette.requests import Request

from graph.errors import Forbidden
from graph.items import Codec, Ref
from graph.reads import Reads
from graph.table import Item, Table

from ..auth import ADMIN, Principal

__all__ = ["Info", "ModelContext"]

log = logging.getLogger("edgewise")

Info = GraphQLResolveInfo[Any]


@dataclass
class ModelContext:
    request: Request | None
    table: Table
    reads: Reads
    codec: Codec
    principal: Principal = ADMIN
    skipped: set[str] = field(default_factory=set)

    @classmethod
    def for_request(
        cls, request: Request | None, table: Table, codec: Codec, principal: Principal = ADMIN
    ) -> ModelContext:
        """Reads bind the running loop: build this inside the request's task."""
        observation = getattr(getattr(request, "state", None), "observation", None)
        scoped = table.for_request(observation)  # see server.observe
        reads = Reads(scoped)
        if observation is not None:
            observation.watch(reads)
        return cls(request, scoped, reads, codec, principal)

    def require_admin(self, action: str) -> None:
        if not self.principal.admin:
            raise Forbidden(f"only an admin may {action}")

    def unexplained(self, item: Item, where: str) -> None:
        """An item a listing returned that no declaration of the model explains: skipped, and
        logged once per request and listing."""
        key = self.codec.item_key(item)
        if where not in self.skipped:
            self.skipped.add(where)
            log.warning(
                "skipped an item no type of the model explains in %s: %s=%r %s=%r",
                where,
                self.codec.layout.pk,
                key.pk,
                self.codec.layout.sk,
                key.sk,
            )

    async def item(self, ref: Ref) -> Item | None:
        if ref.item is None:
            ref.item = await self.reads.items.load(ref.key)
        return ref.item
