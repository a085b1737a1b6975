"""Operating subscriptions: a table without a stream (no Subscription type, and a log line
saying so), ``--no-subscriptions``, the metrics, ``/readyz`` when the stream reader is down, the
per-connection limit, persisted queries over WebSocket, and a listing of an index keyed by other
attributes (``tickets``, on ``gsi2``) kept live."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from graph.dynamo.client import table_definition
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT
from tests.http.test_subscriptions import hub_of, post, receive, served, socket, subscribe
from tests.tokens import SECRET, bearer, hs256

SUBSCRIPTION_TYPE = "{ __schema { subscriptionType { name } } }"


async def test_a_table_without_a_stream_serves_no_subscription_type_and_says_so(
    table: Table, caplog: pytest.LogCaptureFixture
) -> None:
    definition = table_definition("plain", DEMO_LAYOUT)
    del definition["StreamSpecification"]
    await table.client.control.create_table(definition)
    plain = Table(table.client, "plain", layout=DEMO_LAYOUT)
    with caplog.at_level(logging.WARNING, "edgewise"):
        async with served(create_app(table=plain)) as (url, app):
            body = await post(url, SUBSCRIPTION_TYPE)
            assert app.state.live is None
    assert body == {"data": {"__schema": {"subscriptionType": None}}}
    assert any("has no stream" in r.getMessage() for r in caplog.records)


async def test_no_subscriptions_turns_them_off(demo: Table) -> None:
    app = create_app(Settings(subscriptions=False), table=demo)
    async with served(app) as (url, _app), socket(url) as ws:
        assert (await post(url, SUBSCRIPTION_TYPE))["data"]["__schema"] == {
            "subscriptionType": None
        }
        await subscribe(ws, "1", 'subscription { user(id: "alice") { name } }')
        refused = await receive(ws)
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def _sample(metrics: str, name: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


async def test_metrics_count_subscriptions_messages_and_stream_records(demo: Table) -> None:
    async with served(create_app(table=demo)) as (url, _app), httpx.AsyncClient() as client:
        async with socket(url) as ws:
            await subscribe(ws, "1", 'subscription { user(id: "alice") { name } }')
            await receive(ws)
            await post(url, 'mutation { updateUser(input: {id: "alice", name: "M"}) { id } }')
            await receive(ws)
            metrics = (await client.get(f"{url}/metrics")).text
            gauge = 'edgewise_subscriptions{transport="graphql-transport-ws"}'
            assert _sample(metrics, gauge) == 1
            assert _sample(metrics, "edgewise_subscription_messages_total") == 2
            assert _sample(metrics, "edgewise_stream_records_total") >= 1
        for _ in range(50):  # the socket's operations end once it closed
            metrics = (await client.get(f"{url}/metrics")).text
            if _sample(metrics, gauge) == 0:
                break
            await asyncio.sleep(0.05)
        assert _sample(metrics, gauge) == 0


async def test_readyz_reports_the_stream_reader_down(
    demo: Table, dynamodb: EmbeddedDynamoDB
) -> None:
    async with served(create_app(table=demo)) as (url, app), httpx.AsyncClient() as client:
        async with socket(url) as ws:
            await subscribe(ws, "1", 'subscription { user(id: "alice") { name } }')
            await receive(ws)
            assert (await client.get(f"{url}/readyz")).status_code == 200
            dynamodb.reset()  # the table, and its stream, are gone; a table without one
            definition = table_definition("graph", DEMO_LAYOUT)
            del definition["StreamSpecification"]
            await demo.client.control.create_table(definition)
            for _ in range(100):
                ready = await client.get(f"{url}/readyz")
                if "stream reader" in ready.text:
                    break
                await asyncio.sleep(0.1)
        assert ready.status_code == 503
        assert "stream reader is down" in ready.text
        assert hub_of(app).down


async def test_operations_per_connection_are_limited(demo: Table) -> None:
    app = create_app(Settings(subscriptions_per_connection=2), table=demo)
    async with served(app) as (url, _app), socket(url) as ws:
        for n in range(3):
            await subscribe(ws, str(n), f'subscription {{ user(id: "alice") {{ n{n}: name }} }}')
        messages = [await receive(ws) for _ in range(3)]
    refused = [m for m in messages if m["type"] == "error"]
    assert [m["id"] for m in refused] == ["2"]
    assert sorted(m["id"] for m in messages if m["type"] == "next") == ["0", "1"]


async def test_persisted_queries_over_websocket(demo: Table) -> None:
    query = 'subscription { user(id: "bob") { name } }'
    digest = hashlib.sha256(query.encode()).hexdigest()
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": digest}}
    async with served(create_app(table=demo)) as (url, _app), socket(url) as ws:
        hashed: dict[str, Any] = {"extensions": extensions}
        await ws.send(json.dumps({"type": "subscribe", "id": "1", "payload": hashed}))
        missing = await receive(ws)
        assert missing["type"] == "error"
        assert missing["payload"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
        full = {"query": query, "extensions": extensions}
        await ws.send(json.dumps({"type": "subscribe", "id": "2", "payload": full}))
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "Bob"}}}
        await ws.send(json.dumps({"type": "subscribe", "id": "3", "payload": hashed}))
        assert (await receive(ws))["payload"] == {"data": {"user": {"name": "Bob"}}}


async def test_a_listing_of_an_index_keyed_by_other_attributes_stays_live(demo: Table) -> None:
    tickets = "subscription { tickets(status: OPEN) { totalCount edges { node { title } } } }"
    async with served(create_app(table=demo)) as (url, _app), socket(url) as ws:
        await subscribe(ws, "t", tickets)
        before = (await receive(ws))["payload"]["data"]["tickets"]
        opened = await post(url, 'mutation { openTicket(userId: "bob", title: "Live") { id } }')
        assert "errors" not in opened
        after = (await receive(ws))["payload"]["data"]["tickets"]
    assert after["totalCount"] == before["totalCount"] + 1
    assert "Live" in {e["node"]["title"] for e in after["edges"]}


async def test_a_log_line_as_each_subscription_starts_and_stops_without_variables(
    demo: Table, caplog: pytest.LogCaptureFixture
) -> None:
    query = "subscription Watch($id: ID!) { user(id: $id) { name } }"
    with caplog.at_level(logging.INFO, "edgewise.subscriptions"):
        async with served(create_app(table=demo)) as (url, _app):
            async with socket(url) as ws:
                await subscribe(ws, "1", query, id="secret-variable-alice")
                await receive(ws)
            for _ in range(50):
                if any("stopped" in r.getMessage() for r in caplog.records):
                    break
                await asyncio.sleep(0.05)
    lines = [r for r in caplog.records if r.name == "edgewise.subscriptions"]
    assert [r.getMessage().split(" (")[0] for r in lines] == [
        "subscription Watch started",
        "subscription Watch stopped",
    ]
    assert all(getattr(r, "transport", None) == "graphql-transport-ws" for r in lines)
    assert "secret-variable" not in caplog.text


async def test_subscriptions_per_server_are_limited(demo: Table) -> None:
    app = create_app(Settings(subscriptions_max=1), table=demo)
    async with served(app) as (url, _app), socket(url) as ws:
        await subscribe(ws, "1", 'subscription { user(id: "alice") { name } }')
        assert (await receive(ws))["type"] == "next"
        await subscribe(ws, "2", 'subscription { user(id: "bob") { name } }')
        refused = await receive(ws)
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == "UNAVAILABLE"


async def test_server_sent_events_need_a_token_in_production(demo: Table) -> None:
    app = create_app(Settings(production=True), demo, Authenticator(secret=SECRET))
    query = {"query": 'subscription { user(id: "alice") { name } }'}
    events = {"Accept": "text/event-stream"}
    async with served(app) as (url, _app), httpx.AsyncClient(timeout=10) as client:
        refused = await client.post(f"{url}/graphql", json=query, headers=events)
        assert refused.status_code == 401
        async with client.stream(
            "POST", f"{url}/graphql", json=query, headers=events | bearer(hs256("alice"))
        ) as response:
            assert response.status_code == 200
            lines = response.aiter_lines()
            assert await anext(lines) == "event: next"
            assert json.loads((await anext(lines)).removeprefix("data: ")) == {
                "data": {"user": {"name": "Alice"}}
            }


async def test_a_socket_without_the_subprotocol_is_closed_4406(demo: Table) -> None:
    async with served(create_app(table=demo)) as (url, _app):
        ws_url = url.replace("http://", "ws://") + "/graphql"
        async with connect(ws_url) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4406


async def test_a_socket_is_closed_4403_when_its_token_expires(demo: Table) -> None:
    app = create_app(Settings(production=True), demo, Authenticator(secret=SECRET))
    # the token is made once the server runs: expired 57 s ago, still accepted within the
    # minute of leeway for 2 or 3 seconds
    async with served(app) as (url, _app), socket(url, hs256("alice", ttl=-57)) as ws:
        await subscribe(ws, "1", 'subscription { user(id: "alice") { name } }')
        assert (await receive(ws))["type"] == "next"
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403


async def test_an_event_stream_completes_when_its_token_expires(demo: Table) -> None:
    app = create_app(Settings(production=True), demo, Authenticator(secret=SECRET))
    query = {"query": 'subscription { user(id: "alice") { name } }'}
    async with served(app) as (url, app_), httpx.AsyncClient(timeout=10) as client:
        headers = {"Accept": "text/event-stream"} | bearer(hs256("alice", ttl=-57))
        response = await client.post(f"{url}/graphql", json=query, headers=headers)
        assert response.text.startswith("event: next\n")
        assert response.text.endswith("event: complete\ndata: \n\n")
        for _ in range(50):  # the subscription ended with the stream
            if not hub_of(app_).subscribers:
                break
            await asyncio.sleep(0.05)
        assert hub_of(app_).subscribers == 0
