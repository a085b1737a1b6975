"""Authorization along graph edges: what a non-admin user may read, decided from the graph
itself through the request's loaders (so no read is repeated, and a check costs at most a wave).

A user may read: themselves; the groups they are MEMBER_OF and those groups' members; the products
those groups subscribe to; their organization and its members; the tickets they opened.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from graph.errors import Forbidden
from graph.keys import ItemKey, NodeKey, NodeType
from graph.loaders import Loaders, PageRequest
from graph.model import HAS_MEMBER, MEMBER_OF, Edges

from .auth import Principal

__all__ = ["Scope"]


class Scope:
    """The readable part of the graph for one principal, computed lazily once per request."""

    def __init__(self, principal: Principal, loaders: Loaders) -> None:
        self.principal = principal
        self.loaders = loaders
        self._tasks: dict[str, asyncio.Task[Any]] = {}

    def _once(self, name: str, compute: Callable[[], Awaitable[Any]]) -> Awaitable[Any]:
        if name not in self._tasks:
            self._tasks[name] = asyncio.ensure_future(compute())
        return self._tasks[name]

    async def _far_ends(self, edges: Edges) -> set[NodeKey]:
        return {edges.far_end(item) for item in await self.loaders.all_edges.load(edges)}

    def groups(self) -> Awaitable[set[NodeKey]]:
        me = self.me
        assert me is not None
        return self._once("groups", lambda: self._far_ends(Edges(me, MEMBER_OF)))

    def organization(self) -> Awaitable[NodeKey | None]:
        me = self.me
        assert me is not None

        async def compute() -> NodeKey | None:
            edges = Edges(me, HAS_MEMBER, reverse=True)
            page = await self.loaders.pages.load(PageRequest(edges, 1))
            return edges.far_end(page.items[0]) if page.items else None

        return self._once("organization", compute)

    @property
    def me(self) -> NodeKey | None:
        return self.principal.user

    async def can_read(self, key: NodeKey) -> bool:
        """Whether the principal may read ``key``. Beyond their own MEMBER_OF edges and
        organization (one Query each, once a request), the answer is whether one edge exists,
        read by key through the items loader: batched with the request's other reads, and
        usually already primed by the connection pages the request loaded."""
        if self.principal.admin or key == self.me:
            return True
        if self.me is None:
            return False
        if key.type is NodeType.TICKET:
            item = await self.loaders.node(key)
            return item is not None and item.get("author") == str(self.me)
        groups, organization = await asyncio.gather(self.groups(), self.organization())
        if key.type is NodeType.GROUP:
            return key in groups
        if key.type is NodeType.ORG:
            return key == organization
        if key.type is NodeType.USER:  # a fellow member of a group, or of the organization
            edges = [ItemKey(str(key), str(g)) for g in groups]
            edges += [ItemKey(str(organization), str(key))] if organization else []
        elif key.type is NodeType.PRODUCT:  # a subscription of one of the groups
            edges = [ItemKey(str(g), str(key)) for g in groups]
        else:
            return False
        found = await self.loaders.items.load_many(edges) if edges else []
        return any(item is not None for item in found)

    async def readable(self, keys: Iterable[NodeKey]) -> list[bool]:
        return list(await asyncio.gather(*(self.can_read(k) for k in keys)))

    async def check(self, key: NodeKey) -> None:
        if not await self.can_read(key):
            raise Forbidden(f"you may not read {key}")

    def require_admin(self, action: str) -> None:
        if not self.principal.admin:
            raise Forbidden(f"only an admin may {action}")

    def require_self(self, user: NodeKey, action: str) -> None:
        if not self.principal.admin and user != self.me:
            raise Forbidden(f"you may {action} only for yourself")
