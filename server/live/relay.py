"""``edgewise relay``: the one reader of a table's stream, publishing each changed key to Redis
pub/sub for every ``serve --pubsub`` (:mod:`server.live.pubsub`).

A relay holds the table's stream lease (:mod:`graph.lease`) while it reads: a second relay
waits, trying every ``ttl / 3`` seconds, and takes over when the holder stops renewing (it
crashed) or releases the lease (a clean stop). The holder keeps in the lease, at each renewal,
the last sequence number it published of each shard: its successor resumes after them (a
record published twice is harmless: servers read the answer again), and reads from ``LATEST``
only when there is none. It also publishes a heartbeat, which the servers' ``/readyz`` listens
for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from graph.dynamo.client import Endpoint, client_config, open_client, open_streams_client
from graph.dynamo.streams import StreamReader
from graph.lease import Lease, LeaseHeld
from graph.table import Layout, RetryPolicy, Table
from server.live.pubsub import HEARTBEAT, beat, open_redis, publish_changes, redis_call

__all__ = ["Relay", "run_relay"]

log = logging.getLogger("edgewise.relay")


class _LostLease(Exception):
    pass


@dataclass
class Relay:
    """Reads ``table``'s stream while holding its lease and publishes on ``redis``."""

    table: Table
    streams: Any  # an aioboto3 dynamodbstreams client
    redis: Any  # a redis.asyncio client
    owner: str
    ttl: float = 10.0
    published: int = 0
    holding: bool = False
    reader: StreamReader | None = None  # while holding the lease
    checkpoint: dict[str, str] = field(default_factory=dict)  # shard id to the last published

    async def run(self) -> None:
        """Wait for the lease, read and publish while holding it; until cancelled (then the
        lease is released, so another relay takes over at once)."""
        lease = Lease(self.table, self.owner, ttl=self.ttl)
        waiting_for: str | None = None
        try:
            while True:
                try:
                    previous = await lease.state()  # where the last holder stopped
                    await lease.acquire(previous)
                except LeaseHeld as held:
                    if held.holder != waiting_for:
                        waiting_for = held.holder
                        log.info("waiting: relay %s holds the stream lease", held.holder)
                    await asyncio.sleep(lease.renew_every)
                    continue
                waiting_for = None
                log.info("relay %s holds the stream lease of %r", self.owner, self.table.name)
                self.holding = True
                try:
                    self.checkpoint = previous
                    await self._hold(lease)
                except* _LostLease:  # raised in _hold's task group: back to waiting
                    log.warning("relay %s lost the stream lease", self.owner)
                finally:
                    self.holding = False
        finally:
            # awaited here (not shielded and left running), so it ends before the clients close
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5):
                    await lease.release()

    async def _hold(self, lease: Lease) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self._renew(lease))
            group.create_task(self._publish())

    async def _renew(self, lease: Lease) -> None:
        every = min(HEARTBEAT, lease.renew_every)
        renewed = asyncio.get_running_loop().time()
        while True:  # the first beat at once: servers starting now know the relay's interval
            pipeline = self.redis.pipeline(transaction=False)
            beat(pipeline, self.table.name, self.owner, every)
            await redis_call(pipeline.execute())
            await asyncio.sleep(every)
            now = asyncio.get_running_loop().time()
            if now - renewed >= lease.renew_every:
                try:
                    await lease.acquire(self.checkpoint)
                except LeaseHeld:
                    raise _LostLease from None
                renewed = now

    async def _publish(self) -> None:
        layout: Layout = self.table.layout
        reader = self.reader = StreamReader(
            self.streams, self.table.describe, layout, start_after=dict(self.checkpoint)
        )
        async for keys in reader.changes():
            pipeline = self.redis.pipeline(transaction=False)
            self.published += publish_changes(pipeline, self.table.name, layout, keys)
            await redis_call(pipeline.execute())
            self.checkpoint = reader.positions  # published: a successor resumes after it


@asynccontextmanager
async def opened_relay(
    endpoint: Endpoint, table: str, layout: Layout, pubsub: str, ttl: float = 10.0
) -> AsyncIterator[Relay]:
    """A relay with its clients open (DynamoDB, DynamoDB Streams, Redis)."""
    config = client_config()
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(open_client(endpoint, config))
        streams = await stack.enter_async_context(open_streams_client(endpoint, config))
        redis = open_redis(pubsub)
        stack.push_async_callback(redis.aclose)
        owner = f"{uuid.uuid4().hex[:12]}"
        yield Relay(Table(client, table, RetryPolicy(), layout=layout), streams, redis, owner, ttl)


async def run_relay(
    endpoint: Endpoint, table: str, layout: Layout, pubsub: str, ttl: float = 10.0
) -> None:
    """``edgewise relay``: run until cancelled."""
    async with opened_relay(endpoint, table, layout, pubsub, ttl) as relay:
        await relay.run()
