"""Reads by key shared by concurrent readers: the re-executions of live queries after one
change (:mod:`server.live.queries`) each have their own loaders (:class:`graph.reads.Reads`: what
each answer read is recorded apart), but the keys their loaders ask for in the same turn of the
event loop are read together, with one BatchGetItem per 100 distinct keys, not one per reader.

Only items are shared, never answers: each reader gets its own copy of each item it asked for,
and applies its own principal's access rules to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from graph.keys import ItemKey
from graph.observer import Observer
from graph.table import Item, Table

__all__ = ["SharedGets", "SharingTable"]


class SharedGets:
    """Gathers the keys ``get_many`` is asked for during one turn of the event loop and reads
    them at the next with one :meth:`Table.get_many` of a fresh view of ``table`` (its own
    deadline); ``requests`` counts the DynamoDB requests sent."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.requests = 0
        self._waiting: list[tuple[list[ItemKey], asyncio.Future[dict[ItemKey, Item]]]] = []
        self._reading: set[asyncio.Task[None]] = set()

    async def get_many(self, keys: Iterable[ItemKey]) -> dict[ItemKey, Item]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[ItemKey, Item]] = loop.create_future()
        if not self._waiting:
            loop.call_soon(self._flush)
        self._waiting.append((list(keys), future))
        return await future

    def _flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        task = asyncio.create_task(self._read(waiting))
        self._reading.add(task)
        task.add_done_callback(self._reading.discard)

    async def _read(
        self, waiting: list[tuple[list[ItemKey], asyncio.Future[dict[ItemKey, Item]]]]
    ) -> None:
        view = self.table.for_request()
        try:
            found = await view.get_many(key for keys, _ in waiting for key in keys)
        except Exception as exc:
            for _, future in waiting:
                if not future.done():
                    future.set_exception(exc)
            return
        finally:
            self.requests += view.trace.requests
        for keys, future in waiting:
            if not future.done():  # not cancelled meanwhile
                future.set_result({key: dict(found[key]) for key in keys if key in found})

    async def close(self) -> None:
        for task in list(self._reading):
            task.cancel()
        await asyncio.gather(*self._reading, return_exceptions=True)


class SharingTable(Table):
    """``table`` whose views (:meth:`for_request`) read by key through ``gets``; their other
    calls (Queries) are their own."""

    def __init__(self, table: Table, gets: SharedGets) -> None:
        super().__init__(
            table.client,
            table.name,
            table.policy,
            table.trace,
            table.max_in_flight,
            table.deadline,
            layout=table.layout,
            observer=table.observer,
            max_actions=table.max_actions,
            units=table.units,
        )
        self.gets = gets

    def for_request(self, observer: Observer | None = None) -> Table:
        return SharingTable(super().for_request(observer), self.gets)

    async def get_many(
        self, keys: Iterable[ItemKey], consistent: bool = False
    ) -> dict[ItemKey, Item]:
        if consistent:  # a write's read, never shared
            return await super().get_many(keys, consistent)
        return await self.gets.get_many(keys)
