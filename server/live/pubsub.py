"""Changed keys over Redis pub/sub, for subscriptions across machines: ``edgewise relay``
publishes each key its table's stream names (:mod:`server.live.relay`), and each ``serve --pubsub
URL`` subscribes only to the channels of what its live queries read (:class:`RedisChanges`).

A changed key is published on the channel of the key, on the channel of each partition it lies
in that its key tells (the table's, ``inverted``'s), and on the table's ``all`` channel, which a
server subscribes to only while a live query lists an index keyed by other attributes (whose
partition a ``KEYS_ONLY`` record cannot tell; the hub reads those items itself).

Whoever publishes (``edgewise relay``, or the SAM template's stream consumer function,
:mod:`server.live.stream_consumer`) also beats: a heartbeat names its sender and the interval it
beats at (``{"relay": …, "every": 1.0}``), is published on the table's ``relay`` channel and kept
under the key of the same name for as long as it vouches for. A server reports the pub/sub down
on ``/readyz`` when it has heard none for :func:`silence` of the last announced interval (two
intervals and :data:`SLACK`: 5 s for the relay's 1 s beats, 123 s for the consumer's scheduled
60 s ones); a server that starts between two beats learns the last one from that key.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from graph.keys import ItemKey
from graph.lease import LEASE_PREFIX
from graph.table import Layout
from graph.watch import Watched, partitions_of

__all__ = [
    "SILENCE",
    "RedisChanges",
    "beat",
    "channels_of",
    "channels_watched",
    "open_redis",
    "publish_changes",
    "redis_call",
    "silence",
]

log = logging.getLogger("edgewise.pubsub")

T = TypeVar("T")

HEARTBEAT = 1.0  # seconds between the relay's heartbeats
SLACK = 3.0  # seconds a late heartbeat is allowed beyond two missed intervals


def silence(every: float) -> float:
    """Seconds without a heartbeat after which a server reports the pub/sub down, for a
    publisher that announced it beats ``every`` seconds: one beat may be missed, and the next
    may be late by :data:`SLACK`."""
    return 2 * every + SLACK


SILENCE = silence(HEARTBEAT)  # the relay's: 5 s


def _channel(table: str, *parts: str | None) -> str:
    return "edgewise:" + json.dumps([table, *parts], separators=(",", ":"))


def relay_channel(table: str) -> str:
    return _channel(table, "relay")


def channels_of(table: str, layout: Layout, key: ItemKey) -> list[str]:
    """Where the relay publishes a changed key."""
    found = [_channel(table, "key", key.pk, key.sk), _channel(table, "all")]
    found += [_channel(table, "part", index, value) for index, value in partitions_of(layout, key)]
    return found


def publish_changes(pipeline: Any, table: str, layout: Layout, keys: Iterable[ItemKey]) -> int:
    """Queue on a redis-py ``pipeline`` (asyncio's or not) the messages of changed ``keys``
    (each once; lease items left out: no answer reads them); the number of keys queued."""
    queued = 0
    for key in dict.fromkeys(keys):
        if key.pk.startswith(LEASE_PREFIX):
            continue
        message = json.dumps([key.pk, key.sk])
        for channel in channels_of(table, layout, key):
            pipeline.publish(channel, message)
        queued += 1
    return queued


def beat(pipeline: Any, table: str, sender: str, every: float) -> None:
    """Queue on a redis-py ``pipeline`` a heartbeat of ``sender``, which beats ``every``
    seconds: published, and kept for as long as it vouches for (a server starting later reads
    it)."""
    message = json.dumps({"relay": sender, "every": every})
    channel = relay_channel(table)
    pipeline.set(channel, message, px=max(1, round(silence(every) * 1000)))
    pipeline.publish(channel, message)


def _interval(message: bytes | str) -> float:
    """The interval a heartbeat announces (a bare one, from an older relay: :data:`HEARTBEAT`)."""
    try:
        every = json.loads(message)["every"]
    except (ValueError, TypeError, KeyError):
        return HEARTBEAT
    return float(every) if isinstance(every, int | float) and every > 0 else HEARTBEAT


def channels_watched(table: str, layout: Layout, watched: Watched) -> set[str]:
    """The channels that carry every change concerning what ``watched`` read."""
    own = (layout.pk, layout.sk)
    found = {_channel(table, "key", key.pk, key.sk) for key in watched.keys}
    for index, value in watched.partitions:
        if index is None or layout.keys(index)[0] in own:
            found.add(_channel(table, "part", index, value))
        else:
            found.add(_channel(table, "all"))
    return found


async def redis_call(call: Awaitable[T]) -> T:
    """Await a redis-py command, keeping a cancellation: redis-py 8.1's asyncio client can
    swallow one that arrives mid-command (the task goes on, still marked cancelling), which
    would leave a relay or a listener running after it was stopped."""
    result = await call
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
    return result


def open_redis(url: str) -> Any:
    """A ``redis.asyncio`` client for ``url`` (the ``pubsub`` extra)."""
    try:
        import redis.asyncio
    except ImportError:  # pragma: no cover - an install without the extra
        raise SystemExit(
            "--pubsub needs the redis client: pip install 'edgewise[pubsub]'"
        ) from None
    return redis.asyncio.Redis.from_url(url)


class RedisChanges:
    """A server's changes from the relay: subscribes to channels as live queries need them
    (counted, so a channel two live queries need is unsubscribed once neither does) and calls
    ``changed`` with the keys published there."""

    def __init__(self, url: str, table: str) -> None:
        self.url = url
        self.table = table
        self.ready = asyncio.Event()
        self.error = ""
        self.heard = 0.0  # time.monotonic() of the relay's last heartbeat
        self.every = HEARTBEAT  # the interval the last heartbeat announced
        self._counts: Counter[str] = Counter()
        self._redis: Any = None
        self._pubsub: Any = None

    @property
    def down(self) -> str | None:
        if not self.ready.is_set():
            return None
        if self.error:
            return f"the pub/sub connection is down: {self.error}"
        allowed = silence(self.every)
        if time.monotonic() - self.heard > allowed:
            return (
                f"no relay has published on {self.url} for {allowed:.0f} s "
                f"(its heartbeats announced every {self.every:g} s)"
            )
        return None

    async def watch(self, channels: Iterable[str]) -> bool:
        """Count ``channels`` as needed once more; True when one was new (subscribed now)."""
        new = []
        for channel in channels:
            self._counts[channel] += 1
            if self._counts[channel] == 1:
                new.append(channel)
        if new and self._pubsub is not None:
            await redis_call(self._pubsub.subscribe(*new))
        return bool(new)

    async def unwatch(self, channels: Iterable[str]) -> None:
        gone = []
        for channel in channels:
            self._counts[channel] -= 1
            if self._counts[channel] <= 0:
                del self._counts[channel]
                gone.append(channel)
        if gone and self._pubsub is not None:
            await redis_call(self._pubsub.unsubscribe(*gone))

    async def run(self, changed: Callable[[list[ItemKey]], None]) -> None:
        """Listen until cancelled, reconnecting after a failure."""
        failures = 0
        while True:
            try:
                self._redis = open_redis(self.url)
                self._pubsub = self._redis.pubsub()
                await redis_call(self._pubsub.subscribe(relay_channel(self.table), *self._counts))
                await self._last_beat()
                self.error = ""
                self.ready.set()
                failures = 0
                await self._listen(changed)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                self.error = f"{type(exc).__name__}: {exc}"
                if failures == 1:
                    log.warning("the pub/sub connection failed, retrying: %s", self.error)
                await asyncio.sleep(min(0.2 * 2**failures, 5.0))
            finally:
                await self._close()

    async def _last_beat(self) -> None:
        """Start from the heartbeat kept in Redis (when it still vouches): its interval, and
        when it was sent, told by what remains of its expiry (no clocks compared); else from
        now, with the relay's interval."""
        pipeline = self._redis.pipeline(transaction=True)
        pipeline.get(relay_channel(self.table))
        pipeline.pttl(relay_channel(self.table))
        message, remaining = await redis_call(pipeline.execute())
        now = time.monotonic()
        if message is None or remaining is None or remaining < 0:
            self.every, self.heard = HEARTBEAT, now
            return
        self.every = _interval(message)
        self.heard = now - max(0.0, silence(self.every) - remaining / 1000)

    async def _listen(self, changed: Callable[[list[ItemKey]], None]) -> None:
        heartbeat = relay_channel(self.table).encode()
        while True:
            message = await redis_call(
                self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            )
            if message is None:
                continue
            if message["channel"] == heartbeat:
                self.heard, self.every = time.monotonic(), _interval(message["data"])
                continue
            pk, sk = json.loads(message["data"])
            changed([ItemKey(pk, sk)])

    async def _close(self) -> None:
        pubsub, client = self._pubsub, self._redis
        self._pubsub = self._redis = None
        if pubsub is not None:
            await pubsub.aclose()
        if client is not None:
            await client.aclose()
