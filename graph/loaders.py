"""Per-request dataloaders: items by key (BatchGetItem), edge pages, all edges, edge counts."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from aiodataloader import DataLoader

from .keys import ItemKey, NodeKey, encode_cursor
from .model import Edges
from .table import Item, Table
from .tickets import TicketListing, count_tickets, list_tickets

__all__ = ["EdgePage", "Loaders", "PageRequest", "Slice"]


class Slice(Protocol):
    """Items of one partition (of the table or an index) under a sort-key prefix, counted by an
    attribute of ``node``'s item (or, with no counter, by a COUNT query)."""

    @property
    def node(self) -> NodeKey: ...
    @property
    def prefix(self) -> str: ...
    @property
    def index(self) -> str | None: ...
    @property
    def counter(self) -> str | None: ...


@dataclass(frozen=True)
class PageRequest:
    source: Slice | TicketListing
    first: int
    after: ItemKey | None = None
    forward: bool = True


@dataclass(frozen=True)
class EdgePage:
    items: list[Item]
    cursors: list[str]  # the position after each item
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
        self.counts: DataLoader[Slice | TicketListing, int] = DataLoader(self._load_counts)
        self._complete: dict[Edges, list[Item]] = {}  # first pages that held every edge

    async def node(self, key: NodeKey) -> Item | None:
        item: Item | None = await self.items.load(key.item)
        return item

    def _prime(self, items: list[Item]) -> list[Item]:
        """Remember the items a Query returned, so a later read of one by key costs nothing."""
        for item in items:
            self.items.prime(ItemKey(item["PK"], item["SK"]), item)
        return items

    async def _load_items(self, keys: list[ItemKey]) -> list[Item | None]:
        found = await self.table.get_many(keys)
        return [found.get(key) for key in keys]

    async def _page(self, request: PageRequest) -> EdgePage:
        source = request.source
        if isinstance(source, TicketListing):
            tickets = await list_tickets(self.table, source, request.first)
            return EdgePage(self._prime(tickets.items), tickets.cursors, tickets.has_next)
        page = await self.table.query_page(
            str(source.node),
            source.prefix,
            index=source.index,
            limit=request.first + 1,
            after=request.after,
            forward=request.forward,
        )
        items = self._prime(page.items[: request.first])
        whole = request.after is None and request.forward and len(page.items) <= request.first
        if whole and isinstance(source, Edges):
            self._complete[source] = items
        cursors = [encode_cursor(ItemKey(i["PK"], i["SK"])) for i in items]
        return EdgePage(items, cursors, len(page.items) > request.first)

    async def _load_pages(self, requests: list[PageRequest]) -> list[EdgePage]:
        return list(await asyncio.gather(*(self._page(r) for r in requests)))

    async def _all_edges(self, edges: Edges) -> list[Item]:
        if edges in self._complete:  # a first page already read them all
            return self._complete[edges]
        items = await self.table.query_all(str(edges.node), edges.prefix, index=edges.index)
        return self._prime(items)

    async def _load_all_edges(self, keys: list[Edges]) -> list[list[Item]]:
        return list(await asyncio.gather(*(self._all_edges(e) for e in keys)))

    async def _count(self, source: Slice | TicketListing) -> int:
        if isinstance(source, TicketListing):
            return await count_tickets(self.table, source)
        return await self.table.count(str(source.node), source.prefix, index=source.index)

    async def _load_counts(self, keys: list[Slice | TicketListing]) -> list[int]:
        return list(await asyncio.gather(*(self._count(source) for source in keys)))
