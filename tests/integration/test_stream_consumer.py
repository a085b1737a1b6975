"""The SAM template's stream consumer (``server.live.stream_consumer.handler``, ``edgewise relay``
as a Lambda function) invoked in process with DynamoDB Streams events as Lambda delivers them,
publishing to a real ``redis-server`` that a server run with ``--pubsub`` listens to: a
subscriber sees the change; a batch delivered again (Lambda retries) or a record out of order
changes no answer; the scheduled heartbeat keeps ``/readyz`` up as long as it announces, and
no longer."""

from __future__ import annotations

import asyncio
import socket as socket_module
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest
import redis

from graph.table import Table
from server.http.app import create_app
from server.live import stream_consumer
from server.live.pubsub import relay_channel
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT
from tests.http.test_subscriptions import hub_of, receive, served, silent, socket, subscribe

NAME = 'subscription { user(id: "alice") { name } }'
ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/graph/stream/2026-11-26T12:00:00.000"
ALICE = {"PK": {"S": "USER#alice"}, "SK": {"S": "USER#alice"}}
BOB = {"PK": {"S": "USER#bob"}, "SK": {"S": "USER#bob"}}
HEARTBEAT = {"edgewise": "heartbeat", "every": 60}  # the template's scheduled rule's Input

Invoke = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def record(keys: dict[str, Any], sequence: int, name: str = "MODIFY") -> dict[str, Any]:
    """One of the ``Records`` of the event Lambda's event source mapping delivers."""
    return {
        "eventID": uuid.uuid4().hex,
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": {
            "ApproximateCreationDateTime": int(time.time()),
            "Keys": keys,
            "SequenceNumber": f"{sequence:021d}",
            "SizeBytes": 60,
            "StreamViewType": "KEYS_ONLY",
        },
        "eventSourceARN": ARN,
    }


@pytest.fixture
def consumer(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Invoke]:
    """The Lambda entry point, configured by the environment the template gives it, invoked
    in a thread (Lambda runs it outside any event loop)."""
    monkeypatch.setenv("EDGEWISE_PUBSUB", redis_url)
    monkeypatch.setenv("EDGEWISE_TABLE", "graph")
    monkeypatch.setattr(stream_consumer, "_consumer", None)

    async def invoke(event: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(stream_consumer.handler, event, None)

    yield invoke
    if stream_consumer._consumer is not None:
        stream_consumer._consumer.close()


async def rename(demo: Table, name: str) -> None:
    """A write straight into the table: no relay reads the stream, so only the consumer's
    publishing can tell the server."""
    await demo.client.update_item(
        dict(
            TableName="graph",
            Key=ALICE,
            UpdateExpression="SET #n = :n",
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={":n": {"S": name}},
        )
    )


async def test_a_stream_batch_reaches_a_subscriber_and_its_retries_change_nothing(
    demo: Table, redis_url: str, consumer: Invoke
) -> None:
    async with AsyncExitStack() as stack:
        app = create_app(Settings(pubsub=redis_url), table=demo)
        url, _app = await stack.enter_async_context(served(app))
        ws = await stack.enter_async_context(socket(url))
        await subscribe(ws, "1", NAME)
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "Alice"}}}
        await asyncio.sleep(0.2)  # the extra read after subscribing to new channels
        await rename(demo, "Alicia")
        assert await silent(ws)  # nothing has published the change yet
        batch = {"Records": [record(ALICE, 100), record(BOB, 101, "INSERT")]}
        assert await consumer(batch) == {"published": 2}
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "Alicia"}}}

        hub = hub_of(app)
        executions = hub.executions
        assert await consumer(batch) == {"published": 2}  # Lambda retrying the same batch
        assert await consumer(batch) == {"published": 2}
        assert await silent(ws)  # the answer was read again and had not changed
        assert hub.executions > executions

        await rename(demo, "Alix")
        late = {"Records": [record(ALICE, 102), record(ALICE, 100), record(ALICE, 102)]}
        assert await consumer(late) == {"published": 1}
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "Alix"}}}
        assert await silent(ws)


async def test_an_idle_consumer_heartbeat_keeps_readyz_up_for_its_announced_interval(
    demo: Table, redis_url: str, consumer: Invoke
) -> None:
    with redis.Redis.from_url(redis_url) as plain:
        plain.delete(relay_channel("graph"))  # no beat of an earlier test
    # the scheduled rule invoked the consumer before this server started
    assert await consumer(HEARTBEAT) == {"heartbeat": 60.0}
    async with AsyncExitStack() as stack:
        app = create_app(Settings(pubsub=redis_url), table=demo)
        url, _app = await stack.enter_async_context(served(app))
        http = await stack.enter_async_context(httpx.AsyncClient(base_url=url))
        ws = await stack.enter_async_context(socket(url))
        await subscribe(ws, "1", NAME)  # starts the pub/sub listener
        await receive(ws)
        changes = hub_of(app).pubsub
        assert changes is not None
        assert (await http.get("/readyz")).status_code == 200
        assert changes.every == 60.0  # learnt from the beat kept in Redis

        changes.heard -= 30  # 30 s without a beat: a relay's would be down, this one is not
        assert (await http.get("/readyz")).status_code == 200
        changes.heard -= 100  # 130 s: two beats missed and more
        down = await http.get("/readyz")
        assert down.status_code == 503
        assert "announced every 60 s" in down.text

        assert await consumer(HEARTBEAT) == {"heartbeat": 60.0}  # the next scheduled beat
        for _ in range(50):
            if (await http.get("/readyz")).status_code == 200:
                break
            await asyncio.sleep(0.1)
        assert (await http.get("/readyz")).status_code == 200


async def test_a_server_starting_after_the_last_beat_expired_is_not_ready(
    demo: Table, redis_url: str, consumer: Invoke
) -> None:
    with redis.Redis.from_url(redis_url) as plain:
        plain.delete(relay_channel("graph"))
        assert await consumer(HEARTBEAT) == {"heartbeat": 60.0}
        assert 0 < plain.pttl(relay_channel("graph")) <= 123_000  # kept as long as it vouches
        plain.pexpire(relay_channel("graph"), 4_000)  # as if sent 119 s ago
    async with AsyncExitStack() as stack:
        app = create_app(Settings(pubsub=redis_url), table=demo)
        url, _app = await stack.enter_async_context(served(app))
        http = await stack.enter_async_context(httpx.AsyncClient(base_url=url))
        ws = await stack.enter_async_context(socket(url))
        await subscribe(ws, "1", NAME)
        await receive(ws)
        changes = hub_of(app).pubsub
        assert changes is not None and changes.every == 60.0
        assert (await http.get("/readyz")).status_code == 200
        for _ in range(60):
            down = await http.get("/readyz")
            if down.status_code == 503:
                break
            await asyncio.sleep(0.1)
        assert down.status_code == 503, down.text
        assert time.monotonic() - changes.heard > 122


def test_a_batch_that_cannot_be_published_fails_the_invocation_for_lambda_to_retry() -> None:
    with socket_module.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    consumer = stream_consumer.Consumer(f"redis://127.0.0.1:{port}/0", "graph", DEMO_LAYOUT)
    try:
        with pytest.raises(redis.ConnectionError):
            consumer({"Records": [record(ALICE, 100)]})
    finally:
        consumer.close()
