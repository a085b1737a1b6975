"""The stream reader: changed keys from moto's real stream, and, from a recorded fake of the
DynamoDB Streams API, shard order across resharding, expired iterators and empty answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from botocore.exceptions import ClientError

from graph.dynamo.client import Endpoint, open_streams_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.dynamo.streams import StreamReader, stream_arn
from graph.keys import ItemKey
from graph.table import Table
from tests.helpers import DEMO_LAYOUT


def _record(pk: str, sequence: int) -> dict[str, Any]:
    keys = {"PK": {"S": pk}, "SK": {"S": pk}}
    return {"dynamodb": {"Keys": keys, "SequenceNumber": str(sequence)}}


class FakeStreams:
    """A stream whose shard A closes after two answers, and whose child B appears then;
    GetRecords on A's second iterator first answers that it expired. Records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.closed = False
        self.expired_once = False

    async def describe_stream(self, **params: Any) -> dict[str, Any]:
        self.calls.append(("DescribeStream", params))
        shards: list[dict[str, Any]] = [{"ShardId": "A", "SequenceNumberRange": {}}]
        if self.closed:
            shards[0]["SequenceNumberRange"] = {"EndingSequenceNumber": "2"}
            shards.append({"ShardId": "B", "ParentShardId": "A", "SequenceNumberRange": {}})
        return {"StreamDescription": {"Shards": shards}}

    async def get_shard_iterator(self, **params: Any) -> dict[str, Any]:
        self.calls.append(("GetShardIterator", params))
        kind = params["ShardIteratorType"]
        after = params.get("SequenceNumber")
        return {"ShardIterator": f"{params['ShardId']}:{kind}:{after}"}

    async def get_records(self, **params: Any) -> dict[str, Any]:
        self.calls.append(("GetRecords", params))
        iterator = params["ShardIterator"]
        if iterator == "A:LATEST:None":
            return {"Records": [_record("USER#1", 1)], "NextShardIterator": "A:2"}
        if iterator == "A:2" and not self.expired_once:
            self.expired_once = True
            error = {"Error": {"Code": "ExpiredIteratorException", "Message": "expired"}}
            raise ClientError(error, "GetRecords")  # type: ignore[arg-type]
        if iterator == "A:AFTER_SEQUENCE_NUMBER:1":
            self.closed = True
            return {"Records": [_record("USER#2", 2)]}  # no next iterator: A is drained
        if iterator == "B:TRIM_HORIZON:None":
            return {"Records": [_record("USER#3", 3)], "NextShardIterator": "B:empty"}
        return {"Records": [], "NextShardIterator": iterator}


async def _described() -> dict[str, Any]:
    return {"StreamSpecification": {"StreamEnabled": True}, "LatestStreamArn": "arn:stream"}


async def _take(changes: AsyncIterator[list[ItemKey]], count: int) -> list[ItemKey]:
    keys: list[ItemKey] = []
    async with asyncio.timeout(10):
        async for batch in changes:
            keys += batch
            if len(keys) >= count:
                return keys
    return keys


async def test_a_child_shard_is_read_after_its_parent_is_drained_and_expiry_is_survived() -> None:
    fake = FakeStreams()
    reader = StreamReader(fake, _described, DEMO_LAYOUT, poll=0.001, max_poll=0.002)
    changes = reader.changes()
    keys = await _take(changes, 3)
    await changes.aclose()  # type: ignore[attr-defined]
    assert [k.pk for k in keys] == ["USER#1", "USER#2", "USER#3"]
    iterators = [p for name, p in fake.calls if name == "GetShardIterator"]
    assert [(p["ShardId"], p["ShardIteratorType"]) for p in iterators] == [
        ("A", "LATEST"),
        ("A", "AFTER_SEQUENCE_NUMBER"),  # re-fetched after the last record read
        ("B", "TRIM_HORIZON"),
    ]
    assert reader.records == 3


async def test_the_reader_sees_writes_made_after_it_is_positioned(
    table: Table, dynamodb: EmbeddedDynamoDB
) -> None:
    await table.batch_write([{"PK": "USER#before", "SK": "USER#before"}])
    assert stream_arn(await table.describe()) is not None
    async with open_streams_client(Endpoint(dynamodb.url)) as streams:
        reader = StreamReader(streams, table.describe, table.layout)
        changes = reader.changes()
        first = asyncio.ensure_future(_take(changes, 2))
        await asyncio.wait_for(reader.ready.wait(), 10)
        await table.batch_write([{"PK": "USER#a", "SK": "USER#a"}])
        await table.batch_write([], [ItemKey("USER#a", "USER#a")])
        keys = await first
        await changes.aclose()  # type: ignore[attr-defined]
    assert keys == [ItemKey("USER#a", "USER#a")] * 2  # the put and the delete, not the past
