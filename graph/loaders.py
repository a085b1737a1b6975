"""Per-request dataloaders: items by key (BatchGetItem), edge pages, all edges, edge counts."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from aiodataloader import DataLoader

from .keys import ItemKey, NodeKey
from .model import Edges
from .table import Item, Table

__all__ = ["EdgePage", "Loaders", "PageRequest"]


@dataclass(frozen=True)
class PageRequest:
    edges: Edges
    first: int
    after: ItemKey | None = None


@dataclass(frozen=True)
class EdgePage:
    items: list[Item]
    has_next: bool


class Loaders:
    """Build one per request, inside its event loop: every read of the request goes through here,
    so a key is read at most once and reads made in the same tick share a batch."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.items: DataLoader[ItemKey, Item | None] = DataLoader(
            self._load_items, max_batch_size=100
        )
        self.pages: DataLoader[PageRequest, EdgePage] = DataLoader(self._load_pages)
        self.all_edges: DataLoader[Edges, list[Item]] = DataLoader(self._load_all_edges)
        self.counts: DataLoader[Edges, int] = DataLoader(self._load_counts)

    async def node(self, key: NodeKey) -> Item | None:
        item: Item | None = await self.items.load(key.item)
        return item

    async def _load_items(self, keys: list[ItemKey]) -> list[Item | None]:
        found = await self.table.get_many(keys)
        return [found.get(key) for key in keys]

    async def _page(self, request: PageRequest) -> EdgePage:
        edges = request.edges
        page = await self.table.query_page(
            str(edges.node),
            edges.prefix,
            index=edges.index,
            limit=request.first + 1,
            after=request.after,
        )
        return EdgePage(page.items[: request.first], len(page.items) > request.first)

    async def _load_pages(self, requests: list[PageRequest]) -> list[EdgePage]:
        return list(await asyncio.gather(*(self._page(r) for r in requests)))

    async def _load_all_edges(self, keys: list[Edges]) -> list[list[Item]]:
        return list(
            await asyncio.gather(
                *(self.table.query_all(str(e.node), e.prefix, index=e.index) for e in keys)
            )
        )

    async def _load_counts(self, keys: list[Edges]) -> list[int]:
        return list(
            await asyncio.gather(
                *(self.table.count(str(e.node), e.prefix, index=e.index) for e in keys)
            )
        )
