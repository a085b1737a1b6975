"""Transitive access: user -> MEMBER_OF -> group -> SUBSCRIBES_TO -> product."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from .keys import ItemKey, NodeKey
from .loaders import Loaders
from .model import MEMBER_OF, SUBSCRIBES_TO, Edges, grants_access

__all__ = ["has_access", "products_of"]


async def _groups(loaders: Loaders, user: NodeKey) -> list[NodeKey]:
    edges = Edges(user, MEMBER_OF)
    return [edges.far_end(item) for item in await loaders.all_edges.load(edges)]


async def products_of(loaders: Loaders, user: NodeKey) -> dict[NodeKey, list[NodeKey]]:
    """Each product the user can use, once, with every group it comes through (two waves)."""
    groups = await _groups(loaders, user)
    per_group = await asyncio.gather(
        *(loaders.all_edges.load(Edges(g, SUBSCRIBES_TO)) for g in groups)
    )
    now = datetime.now(UTC)
    access: dict[NodeKey, list[NodeKey]] = {}
    for group, subscriptions in zip(groups, per_group, strict=True):
        for item in subscriptions:
            if grants_access(item, now):
                access.setdefault(NodeKey.parse(item["SK"]), []).append(group)
    return access


async def has_access(loaders: Loaders, user: NodeKey, product: NodeKey) -> bool:
    """The user's groups (one Query), then the group->product edges by key (one BatchGetItem)."""
    groups = await _groups(loaders, user)
    edges = await loaders.items.load_many([ItemKey(str(g), str(product)) for g in groups])
    now = datetime.now(UTC)
    return any(edge is not None and grants_access(edge, now) for edge in edges)
