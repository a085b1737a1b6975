"""Live queries: subscriptions answered at once and again whenever what their answer read
changes, driven by the table's stream.

A :class:`Hub` keeps one :class:`LiveQuery` per distinct (query, variables, principal): every
subscriber to the same one shares its executions (multiplexing), and a new subscriber gets its
last answer without a read. An execution is the same query's, under the subscriber's principal
(access rules, limits and all), with a :class:`graph.watch.Watched` recording what it read: the
keys it read, the partitions it listed. The stream names changed keys; the hub finds the live
queries whose answer read them (an index from key and from partition to live queries), and runs
each again after :data:`COALESCE` seconds, so the changes of that window cost one execution. The
new answer is sent only when it differs from the last one sent. Executions running at the
same time (those one change started) keep their own loaders, principals and answers, but their
reads by key made in the same turn of the event loop go out together (:mod:`graph.shared`):
1,000 distinct live queries over one changed item cost one BatchGetItem, not 1,000. Nothing is
applied from a stream record: duplicates and records out of order cost at most a read and
change nothing. An idle live query (nothing it read changed) makes no read at all.

The stream reader (:mod:`graph.dynamo.streams`) starts with the first subscription, and every
subscription's first answer waits until the reader is positioned, so no change between the two
is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from graphql import OperationType

from graph.dynamo.streams import StreamReader
from graph.keys import ItemKey
from graph.shared import SharedGets, SharingTable
from graph.table import Table
from graph.watch import Partition, Watched, partitions_of
from server.engine.executor import ModelSchema
from server.errors import format_errors
from server.http.auth import Principal
from server.http.prepare import Prepared
from server.live.pubsub import RedisChanges, channels_watched

__all__ = ["COALESCE", "Hub", "LiveQuery", "Subscription", "answer_of"]

log = logging.getLogger("edgewise.live")

COALESCE = 0.05  # seconds: the changes of this window cost one execution
READY_TIMEOUT = 10.0  # seconds a first answer waits for the stream reader
INTERNAL = {"message": "Internal server error", "extensions": {"code": "INTERNAL_SERVER_ERROR"}}


def answer_of(result: Any, production: bool) -> dict[str, Any]:
    """An ExecutionResult as sent: ``data`` and the formatted ``errors``."""
    payload: dict[str, Any] = {}
    if result.errors:
        payload["errors"] = format_errors(result.errors, production)
    payload["data"] = result.data
    return payload


class Subscription:
    """One subscriber's answers, as an async iterator; :meth:`close` ends it."""

    def __init__(self, hub: Hub, live: LiveQuery) -> None:
        self.hub = hub
        self.live = live
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.closed = False

    def send(self, payload: dict[str, Any]) -> None:
        self.queue.put_nowait(payload)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.hub._leave(self)
            self.queue.put_nowait(None)

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._answers()

    async def _answers(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            payload = await self.queue.get()
            if payload is None:
                return
            yield payload


@dataclass(eq=False)
class LiveQuery:
    """One distinct live query and its subscribers."""

    key: tuple[str, str, str | None, Principal]
    prepared: Prepared
    principal: Principal
    subscribers: set[Subscription] = field(default_factory=set)
    watched: Watched = field(default_factory=Watched)
    last: dict[str, Any] | None = None
    answered: bool = False
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task[None] | None = None
    again: bool = False
    channels: set[str] = field(default_factory=set)  # with pub/sub: the channels it needs


class Hub:
    """The live queries of one app. ``open_streams`` opens a ``dynamodbstreams`` client for
    the table's endpoint; ``make_context`` is the engine's context factory."""

    def __init__(
        self,
        schema: ModelSchema,
        table: Table,
        make_context: Callable[..., Any],
        open_streams: Callable[[], AbstractAsyncContextManager[Any]],
        production: bool = False,
        on_records: Callable[[int], None] | None = None,
        pubsub: RedisChanges | None = None,
    ) -> None:
        self.schema = schema
        self.table = table
        self.layout = table.layout
        self.make_context = make_context
        self.open_streams = open_streams
        self.production = production
        self.on_records = on_records
        self.pubsub = pubsub  # changes from a relay (serve --pubsub), not from the stream
        self.lives: dict[tuple[str, str, str | None, Principal], LiveQuery] = {}
        self._by_key: dict[ItemKey, set[LiveQuery]] = {}
        self._by_partition: dict[Partition, set[LiveQuery]] = {}
        self._attribute_watchers = 0  # live queries listing an index keyed by other attributes
        self.reader: StreamReader | None = None
        self._reading: asyncio.Task[None] | None = None
        self.executions = 0  # live-query executions run
        self._requests = 0  # DynamoDB requests they (and change matching) sent, but ...
        # ... their reads by key, made together by the executions running at once
        self._gets = SharedGets(table)
        self._sharing = SharingTable(table, self._gets)
        self.failure: str = ""
        self._matching: set[asyncio.Task[None]] = set()
        # changes seen while executions run (numbered), for what an answer read before the
        # hub knew it had: see _missed
        self._running: Counter[int] = Counter()  # executions running, by the change they began at
        self._seen = 0
        self._during: list[tuple[int, ItemKey]] = []
        self.subscribers = 0  # subscriptions open

    @property
    def requests(self) -> int:
        """DynamoDB requests the executions (and change matching) sent."""
        return self._requests + self._gets.requests

    # ---- the stream -----------------------------------------------------------------------

    @property
    def down(self) -> str | None:
        """Why the stream reader (or the pub/sub connection) is down, or None (also before it
        started)."""
        if self.pubsub is not None:
            return self.pubsub.down
        if self.reader is None:
            return None
        if self._reading is not None and self._reading.done():
            return self.failure or "the stream reader stopped"
        if self.reader.ready.is_set() and not self.reader.up:
            return self.reader.error
        return None

    async def _ready(self) -> None:
        """Start the stream reader (again, if it stopped) and wait until it is positioned; with
        ``pubsub``, its listener instead."""
        if self.pubsub is not None:
            if self._reading is None:
                self._reading = asyncio.create_task(self.pubsub.run(self._received))
            async with asyncio.timeout(READY_TIMEOUT):
                await self.pubsub.ready.wait()
            return
        if self.reader is None or self._reading is None or self._reading.done():
            self.failure = ""
            self.reader = StreamReader(None, self.table.describe, self.layout)
            self._reading = asyncio.create_task(self._read(self.reader))
        reading: asyncio.Future[Any] = self._reading
        waiting = asyncio.ensure_future(self.reader.ready.wait())
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                await asyncio.wait({waiting, reading}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
        if not self.reader.ready.is_set():
            raise RuntimeError(self.failure or "the stream reader stopped")

    def _received(self, keys: list[ItemKey]) -> None:
        if self.on_records is not None:
            self.on_records(len(keys))
        self.changed(keys)

    async def _read(self, reader: StreamReader) -> None:
        try:
            async with self.open_streams() as streams:
                reader.streams = streams
                async for keys in reader.changes():
                    self._received(keys)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.failure = f"{type(exc).__name__}: {exc}"
            log.error("the stream reader stopped: %s", self.failure)

    async def close(self) -> None:
        for live in list(self.lives.values()):
            for subscription in list(live.subscribers):
                subscription.close()
        for task in list(self._matching):
            task.cancel()
        if self._reading is not None:
            self._reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reading
        await self._gets.close()

    # ---- subscribing ----------------------------------------------------------------------

    async def subscribe(self, prepared: Prepared, principal: Principal) -> Subscription:
        """A subscription to ``prepared`` (a live query) for ``principal``: its first answer
        comes at once (the shared live query's last, or a new execution's)."""
        await self._ready()
        variables = json.dumps(prepared.variables or {}, sort_keys=True, separators=(",", ":"))
        key = (prepared.source, variables, prepared.operation_name, principal)
        live = self.lives.get(key)
        if live is None:
            live = self.lives[key] = LiveQuery(key, prepared, principal)
            self._schedule(live, 0.0)
        subscription = Subscription(self, live)
        live.subscribers.add(subscription)
        self.subscribers += 1
        if live.answered and live.last is not None:
            subscription.send(live.last)
        return subscription

    def _leave(self, subscription: Subscription) -> None:
        live = subscription.live
        live.subscribers.discard(subscription)
        self.subscribers -= 1
        if live.subscribers or self.lives.get(live.key) is not live:
            return
        del self.lives[live.key]
        self._unindex(live)
        if self.pubsub is not None and live.channels:
            self._background(self.pubsub.unwatch(live.channels))
        if live.timer is not None:
            live.timer.cancel()
        if live.task is not None:
            live.task.cancel()

    # ---- changes --------------------------------------------------------------------------

    def changed(self, keys: Iterable[ItemKey]) -> None:
        """Items changed: run again (after the coalescing window) each live query whose answer
        read them, listed them or listed a partition they lie in."""
        keys = list(dict.fromkeys(keys))
        if self._running:
            for key in keys:
                self._seen += 1
                self._during.append((self._seen, key))
        matched: set[LiveQuery] = set()
        for key in keys:
            matched.update(self._by_key.get(key, ()))
            for partition in partitions_of(self.layout, key):
                matched.update(self._by_partition.get(partition, ()))
        when = asyncio.get_running_loop().time() + COALESCE
        for live in matched:
            self._schedule(live, COALESCE, when)
        if self._attribute_watchers:
            self._background(self._changed_in_indexes(keys, matched))

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._matching.add(task)
        task.add_done_callback(self._matching.discard)

    async def _changed_in_indexes(self, keys: list[ItemKey], matched: set[LiveQuery]) -> None:
        """The partitions of indexes keyed by other attributes need the items: one read for
        the batch (an item gone left the partitions whose listing read its key already)."""
        view = self.table.for_request()
        try:
            items = await view.get_many(keys)
        except Exception as exc:
            log.warning("could not read changed items for index partitions: %s", exc)
            return
        finally:
            self._requests += view.trace.requests
        when = asyncio.get_running_loop().time() + COALESCE
        for key, item in items.items():
            for partition in partitions_of(self.layout, key, item):
                for live in self._by_partition.get(partition, ()):
                    if live not in matched:
                        self._schedule(live, COALESCE, when)

    def _schedule(self, live: LiveQuery, delay: float, when: float | None = None) -> None:
        """Run ``live`` again after ``delay`` seconds, or at the loop's time ``when``: the live
        queries of one change are all due at the same time, so they start in the same turn of
        the event loop and their first reads go out together."""
        if live.task is not None and not live.task.done():
            live.again = True  # running: once more after it, for what changed meanwhile
            return
        if live.timer is None:
            loop = asyncio.get_running_loop()
            when = loop.time() + delay if when is None else when
            live.timer = loop.call_at(when, self._start, live)

    def _start(self, live: LiveQuery) -> None:
        live.timer = None
        if self.lives.get(live.key) is live:
            live.task = asyncio.create_task(self._run(live))

    def _missed(self, watched: Watched, since: int) -> bool:
        """Whether a change seen since ``since`` (while the execution ran, before its reads
        were indexed) concerns what it read; for a listing of an index keyed by other
        attributes, any change (its item was not read)."""
        changed = [key for seen, key in self._during if seen > since]
        if not changed:
            return False
        if watched.needs_items(self.layout):
            return True
        return any(
            key in watched.keys
            or any(p in watched.partitions for p in partitions_of(self.layout, key))
            for key in changed
        )

    async def _run(self, live: LiveQuery) -> None:
        live.again = False
        since = self._seen
        self._running[since] += 1
        try:
            await self._execute(live, since)
        finally:
            self._running[since] -= 1
            if not self._running[since]:
                del self._running[since]
            oldest = min(self._running, default=self._seen)
            self._during = [(seen, key) for seen, key in self._during if seen > oldest]

    async def _execute(self, live: LiveQuery, since: int) -> None:
        watched = Watched()
        # each its own loaders and principal; reads by key shared with the executions that run
        # at the same time (those of the same change): one BatchGetItem for a wave of them all
        context = self.make_context(None, self._sharing, live.principal, watched)
        try:
            result = await self.schema.execute(
                live.prepared.record,
                variable_values=live.prepared.variables,
                context_value=context,
                operation_name=live.prepared.operation_name,
                allowed_operation_types=(OperationType.QUERY,),
                operation=live.prepared.operation,
            )
            answer = answer_of(result, self.production)
        except Exception:
            log.exception("a live query failed")
            answer = {"errors": [INTERNAL], "data": None}
        finally:
            context.close()
            self.executions += 1
            self._requests += context.table.trace.requests
        if self.lives.get(live.key) is not live:
            return
        self._unindex(live)
        live.watched = watched
        self._index(live)
        live.again = live.again or self._missed(watched, since)
        if self.pubsub is not None:
            # a change published before the new channels were subscribed: read once more
            live.again = await self._channels(live) or live.again
        first = not live.answered
        live.answered = True
        if first or answer != live.last:
            live.last = answer
            for subscription in list(live.subscribers):
                subscription.send(answer)
        if live.again:
            live.task = None
            self._schedule(live, COALESCE)

    async def _channels(self, live: LiveQuery) -> bool:
        """Subscribe to the channels of what ``live`` read now (and leave those it no longer
        needs); whether one was new."""
        assert self.pubsub is not None
        before = live.channels
        live.channels = channels_watched(self.table.name, self.layout, live.watched)
        new = await self.pubsub.watch(live.channels)
        await self.pubsub.unwatch(before)
        return new

    def _index(self, live: LiveQuery) -> None:
        for key in live.watched.keys:
            self._by_key.setdefault(key, set()).add(live)
        for partition in live.watched.partitions:
            self._by_partition.setdefault(partition, set()).add(live)
        if live.watched.needs_items(self.layout):
            self._attribute_watchers += 1

    def _unindex(self, live: LiveQuery) -> None:
        for key in live.watched.keys:
            found = self._by_key.get(key)
            if found is not None:
                found.discard(live)
                if not found:
                    del self._by_key[key]
        for partition in live.watched.partitions:
            found = self._by_partition.get(partition)
            if found is not None:
                found.discard(live)
                if not found:
                    del self._by_partition[partition]
        if live.watched.needs_items(self.layout):
            self._attribute_watchers -= 1
        live.watched = Watched()
