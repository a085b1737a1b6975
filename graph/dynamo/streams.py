"""Reading a table's DynamoDB stream: the keys of the items that changed, as they change.

:class:`StreamReader` finds the stream (DescribeTable's ``LatestStreamArn``), lists its shards
(DescribeStream, page by page) and reads each with GetShardIterator and GetRecords. At start the
open shards are read from ``LATEST``: what changed before nobody was watching. A shard found
later (a child, after resharding) is read from ``TRIM_HORIZON``, and only once its parent is
drained (its iterator ran out), so an item's records come in order. An empty answer backs off
(``poll`` doubling up to ``max_poll``); an expired iterator is fetched again after the last
record read; a failing call is retried with backoff, the reader marked down meanwhile (and the
table described again: a table made anew has a new stream).

Records are never applied, only named: a consumer reads the item again, so a duplicate or an
out-of-order record costs a read and changes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from graph.errors import EdgewiseError
from graph.keys import ItemKey
from graph.table import Layout

__all__ = ["NoStream", "Shard", "StreamReader", "record_key", "stream_arn"]

log = logging.getLogger("edgewise.stream")

EXPIRED = frozenset({"ExpiredIteratorException"})
TRIMMED = frozenset({"TrimmedDataAccessException"})
GONE = frozenset({"ResourceNotFoundException"})


class NoStream(Exception):
    """The table has no stream (or the endpoint no DynamoDB Streams)."""


def error_code(exc: BaseException) -> str:
    """The DynamoDB Streams error code of a failed call of the streams client (aioboto3's, so
    botocore is loaded by then: imported here, not with the module), or ''."""
    from graph.dynamo.boto import error_code as code

    return code(exc)


def stream_arn(described: dict[str, Any]) -> str | None:
    """The ARN of a DescribeTable ``Table``'s enabled stream, or None."""
    enabled = described.get("StreamSpecification", {}).get("StreamEnabled", False)
    arn = described.get("LatestStreamArn")
    return str(arn) if enabled and arn else None


def record_key(record: dict[str, Any], layout: Layout) -> ItemKey | None:
    """The key of the item a stream record names (GetRecords' record, or one of the
    ``Records`` of the event AWS Lambda gets from the stream: the same shape), or None when it
    is not an item of ``layout``."""
    raw = record.get("dynamodb", {}).get("Keys", {})
    try:
        return ItemKey(raw[layout.pk]["S"], raw[layout.sk]["S"])
    except (KeyError, TypeError):
        return None


@dataclass
class Shard:
    """One shard as the reader follows it: ``iterator`` None until it is started, ``done``
    once GetRecords answers no next iterator (the shard closed and was read to its end)."""

    id: str
    parent: str | None
    iterator: str | None = None
    last: str | None = None  # the sequence number of the last record read
    done: bool = False
    started: bool = False


@dataclass
class StreamReader:
    """Changed keys of ``table``'s stream, read with ``streams`` (an aioboto3
    ``dynamodbstreams`` client) after ``describe`` (DescribeTable's ``Table``) found it."""

    streams: Any
    describe: Callable[[], Any]  # an awaitable DescribeTable ``Table``
    layout: Layout
    poll: float = 0.05
    max_poll: float = 0.25  # as AWS Lambda polls a stream: 4 times a second per shard
    refresh: float = 10.0  # seconds between DescribeStream calls looking for new shards
    up: bool = False
    error: str = ""
    records: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    # where a previous reader stopped (shard id to the last sequence number it read): those
    # shards resume after it, and shards it did not know start at their beginning
    start_after: dict[str, str] = field(default_factory=dict)
    _shards: dict[str, Shard] = field(default_factory=dict)
    _arn: str | None = None

    async def _find(self) -> str:
        arn = stream_arn(await self.describe())
        if arn is None:
            raise NoStream("the table has no stream")
        if arn != self._arn:
            self._arn, self._shards = arn, {}
        return arn

    async def _list_shards(self, arn: str, at_start: bool) -> None:
        """Add the stream's shards not known yet: at start the open ones (from LATEST; closed
        ones hold only the past) or, after a previous reader, its shards after where it
        stopped and the ones it did not know from their beginning; later every new one (from
        TRIM_HORIZON)."""
        start: str | None = None
        while True:
            params: dict[str, Any] = {"StreamArn": arn}
            if start is not None:
                params["ExclusiveStartShardId"] = start
            description = (await self.streams.describe_stream(**params))["StreamDescription"]
            for raw in description.get("Shards", []):
                shard_id = raw["ShardId"]
                if shard_id in self._shards:
                    continue
                closed = "EndingSequenceNumber" in raw.get("SequenceNumberRange", {})
                shard = Shard(shard_id, raw.get("ParentShardId"))
                after = self.start_after.get(shard_id)
                if after is not None:  # resume where the previous reader stopped
                    shard.iterator = await self._resume(arn, shard_id, after)
                    shard.started, shard.last = True, after
                elif at_start and not self.start_after:
                    if closed:
                        shard.done = True
                    else:
                        shard.iterator = await self._iterator(arn, shard_id, "LATEST")
                        shard.started = True
                elif at_start and closed:
                    shard.done = True  # older than the previous reader's shards
                self._shards[shard_id] = shard
            start = description.get("LastEvaluatedShardId")
            if not start:
                return

    async def _iterator(self, arn: str, shard_id: str, kind: str, after: str | None = None) -> str:
        params: dict[str, Any] = {"StreamArn": arn, "ShardId": shard_id}
        if after is not None:
            params |= {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": after}
        else:
            params["ShardIteratorType"] = kind
        return str((await self.streams.get_shard_iterator(**params))["ShardIterator"])

    @property
    def positions(self) -> dict[str, str]:
        """Shard id to the last sequence number read, for a reader that takes over."""
        return {s.id: s.last for s in self._shards.values() if s.last is not None}

    async def _resume(self, arn: str, shard_id: str, after: str) -> str:
        try:
            return await self._iterator(arn, shard_id, "LATEST", after)
        except Exception as exc:
            if error_code(exc) not in TRIMMED:
                raise
            return await self._iterator(arn, shard_id, "TRIM_HORIZON")  # past 24 h: the oldest

    def _readable(self, shard: Shard) -> bool:
        """Not drained, and its parent (if this reader knows it) drained first."""
        if shard.done:
            return False
        parent = self._shards.get(shard.parent) if shard.parent else None
        return parent is None or parent.done

    async def _read(self, arn: str, shard: Shard) -> list[ItemKey]:
        if not shard.started:
            shard.iterator = await self._iterator(arn, shard.id, "TRIM_HORIZON")
            shard.started = True
        if shard.iterator is None:
            shard.done = True
            return []
        try:
            answer = await self.streams.get_records(ShardIterator=shard.iterator, Limit=1000)
        except Exception as exc:
            code = error_code(exc)
            if code in EXPIRED:
                shard.iterator = await self._iterator(arn, shard.id, "LATEST", shard.last)
                return []
            if code in TRIMMED:
                shard.iterator = await self._iterator(arn, shard.id, "TRIM_HORIZON")
                return []
            raise
        keys = []
        for record in answer.get("Records", []):
            key = record_key(record, self.layout)
            if key is None:
                continue  # not an item of this layout
            keys.append(key)
            shard.last = record["dynamodb"].get("SequenceNumber", shard.last)
        shard.iterator = answer.get("NextShardIterator")
        if shard.iterator is None:
            shard.done = True
        return keys

    async def changes(self) -> AsyncIterator[list[ItemKey]]:
        """The keys each round of GetRecords found changed (never an empty list); runs until
        cancelled. Raises :class:`NoStream` when the table has none at start."""
        loop = asyncio.get_running_loop()
        arn = await self._find()
        await self._list_shards(arn, at_start=True)
        self.up, self.error = True, ""
        self.ready.set()
        listed = loop.time()
        wait = self.poll
        failures = 0
        while True:
            try:
                if loop.time() - listed > self.refresh or not any(
                    not s.done for s in self._shards.values()
                ):
                    arn = await self._find()
                    await self._list_shards(arn, at_start=not self._shards)
                    listed = loop.time()
                readable = [s for s in self._shards.values() if self._readable(s)]
                found = await asyncio.gather(*(self._read(arn, s) for s in readable))
                failures = 0
                self.up, self.error = True, ""
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                self.up, self.error = False, f"{type(exc).__name__}: {exc}"
                if failures == 1:
                    log.warning("the stream reader failed, retrying: %s", self.error)
                code = exc.code if isinstance(exc, EdgewiseError) else error_code(exc)
                if code in GONE or isinstance(exc, NoStream):
                    self._arn, self._shards = None, {}
                listed = float("-inf")  # find the stream again (the table may be new)
                await asyncio.sleep(min(self.max_poll * 2**failures, 5.0))
                continue
            keys = [key for part in found for key in part]
            if keys:
                self.records += len(keys)
                wait = self.poll
                yield keys
            else:
                await asyncio.sleep(wait)
                wait = min(wait * 2, self.max_poll)
