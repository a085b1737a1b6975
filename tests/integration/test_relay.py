"""Subscriptions across machines: ``edgewise relay`` (one reader of the stream, holding the
lease) publishing to a real Redis (Debian's ``redis-server``), and two servers taking their
changes from it with ``--pubsub``; a second relay waiting, then taking over."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest

from graph.dynamo.client import Endpoint
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from server.http.app import create_app
from server.live.relay import Relay, opened_relay
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT
from tests.http.test_subscriptions import hub_of, post, receive, served, socket, subscribe

NAME = 'subscription { user(id: "alice") { name } }'


@contextlib.asynccontextmanager
async def running(
    dynamodb: EmbeddedDynamoDB, redis_url: str, ttl: float = 1.5
) -> AsyncIterator[tuple[Relay, asyncio.Task[None]]]:
    async with opened_relay(Endpoint(dynamodb.url), "graph", DEMO_LAYOUT, redis_url, ttl) as relay:
        task = asyncio.create_task(relay.run())
        try:
            yield relay, task
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _positioned(relay: Relay) -> None:
    """Wait until ``relay`` holds the lease and its stream reader is positioned."""
    for _ in range(300):
        if relay.reader is not None and relay.reader.ready.is_set():
            return
        await asyncio.sleep(0.05)
    pytest.fail("the relay did not start reading the stream in 15 s")


async def test_subscribers_of_two_servers_see_a_write_through_the_relay(
    demo: Table, dynamodb: EmbeddedDynamoDB, redis_url: str
) -> None:
    async with AsyncExitStack() as stack:
        relay, _task = await stack.enter_async_context(running(dynamodb, redis_url))
        await _positioned(relay)
        apps = [create_app(Settings(pubsub=redis_url), table=demo) for _ in range(2)]
        urls = [(await stack.enter_async_context(served(app)))[0] for app in apps]
        sockets_ = [await stack.enter_async_context(socket(url)) for url in urls]
        for ws in sockets_:
            await subscribe(ws, "1", NAME)
            assert (await receive(ws))["payload"] == {"data": {"user": {"name": "Alice"}}}
        await asyncio.sleep(0.2)  # the extra read after subscribing to new channels
        updated = await post(
            urls[0], 'mutation { updateUser(input: {id: "alice", name: "R"}) { id } }'
        )
        assert "errors" not in updated
        for ws in sockets_:
            assert (await receive(ws))["payload"] == {"data": {"user": {"name": "R"}}}
        hub = hub_of(apps[1])
        assert hub.pubsub is not None and hub.reader is None  # no stream read by the server
        watched = set(hub.pubsub._counts)
        assert any('"USER#alice","USER#alice"' in channel for channel in watched)
        assert not any('"all"' in channel for channel in watched)
        assert relay.published >= 1
        # the relay beats every renewal interval (ttl / 3 here), and says so
        assert hub.pubsub.every == 0.5 and hub.pubsub.down is None


async def test_a_second_relay_waits_then_takes_over(
    demo: Table, dynamodb: EmbeddedDynamoDB, redis_url: str
) -> None:
    async with AsyncExitStack() as stack:
        first, first_task = await stack.enter_async_context(running(dynamodb, redis_url))
        await _positioned(first)
        second, _ = await stack.enter_async_context(running(dynamodb, redis_url))
        await asyncio.sleep(1.0)
        assert first.holding and not second.holding  # the second waits
        app = create_app(Settings(pubsub=redis_url), table=demo)
        url, _app = await stack.enter_async_context(served(app))
        ws = await stack.enter_async_context(socket(url))
        await subscribe(ws, "1", NAME)
        await receive(ws)
        first_task.cancel()  # a clean stop releases the lease
        with contextlib.suppress(asyncio.CancelledError):
            await first_task
        await _positioned(second)
        assert second.holding
        updated = await post(url, 'mutation { updateUser(input: {id: "alice", name: "T"}) { id } }')
        assert "errors" not in updated
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "T"}}}


async def test_edgewise_relay_holds_the_lease_and_releases_it_on_sigterm(
    demo: Table, dynamodb: EmbeddedDynamoDB, redis_url: str
) -> None:
    lease = {"PK": {"S": "EDGEWISE#lease#stream"}, "SK": {"S": "EDGEWISE#lease#stream"}}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "relay",
        "--dynamodb",
        dynamodb.url,
        "--pubsub",
        redis_url,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        for _ in range(200):
            held = await demo.client.get_item(dict(TableName="graph", Key=lease))
            if "Item" in held:
                break
            await asyncio.sleep(0.05)
        assert "Item" in held, "the relay did not take the lease"
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(15):
            _, stderr = await process.communicate()
        assert process.returncode == 0, stderr.decode()
        assert "holds the stream lease" in stderr.decode()
        released = await demo.client.get_item(dict(TableName="graph", Key=lease))
        assert released["Item"]["expires"] == {"N": "0"}  # expired: the next relay takes it
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_a_relay_taking_over_resumes_where_the_last_one_stopped(
    demo: Table, dynamodb: EmbeddedDynamoDB, redis_url: str
) -> None:
    async with AsyncExitStack() as stack:
        app = create_app(Settings(pubsub=redis_url), table=demo)
        url, _app = await stack.enter_async_context(served(app))
        first, first_task = await stack.enter_async_context(running(dynamodb, redis_url))
        await _positioned(first)
        ws = await stack.enter_async_context(socket(url))
        await subscribe(ws, "1", NAME)
        await receive(ws)
        await asyncio.sleep(0.2)  # the extra read after subscribing to new channels
        await post(url, 'mutation { updateUser(input: {id: "alice", name: "U1"}) { id } }')
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "U1"}}}
        await asyncio.sleep(1.0)  # a renewal keeps what the relay published in the lease
        first_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first_task
        # written while no relay reads the stream
        await post(url, 'mutation { updateUser(input: {id: "alice", name: "U2"}) { id } }')
        second, _ = await stack.enter_async_context(running(dynamodb, redis_url))
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "U2"}}}
        assert second.holding


async def test_a_relay_that_lost_its_lease_waits_and_takes_it_again(
    demo: Table, dynamodb: EmbeddedDynamoDB, redis_url: str
) -> None:
    async with running(dynamodb, redis_url) as (relay, task):
        await _positioned(relay)
        # another relay took the lease, as when this one stalled past its expiry
        await demo.client.put_item(
            dict(
                TableName="graph",
                Item={
                    "PK": {"S": "EDGEWISE#lease#stream"},
                    "SK": {"S": "EDGEWISE#lease#stream"},
                    "owner": {"S": "another"},
                    "expires": {"N": f"{time.time() + 2:.3f}"},
                },
            )
        )
        for _ in range(100):
            if not relay.holding:
                break
            await asyncio.sleep(0.05)
        assert not relay.holding and not task.done()  # it stopped reading and waits
        for _ in range(100):
            if relay.holding:
                break
            await asyncio.sleep(0.05)
        assert relay.holding and not task.done()  # the other's lease expired: taken again
