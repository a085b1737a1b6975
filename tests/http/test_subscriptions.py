"""Subscriptions as live queries over a real server (uvicorn) and the shared moto server's
stream: writes by boto3 or by mutations seen, deletes answered null, nothing sent for writes
that change no answer, auth and access rules, the cost of idle and multiplexed subscriptions,
and both transports (graphql-transport-ws and graphql-sse)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import boto3
import httpx
import pytest
from starlette.applications import Starlette
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from server.http.app import create_app
from server.http.auth import Authenticator
from server.live.queries import Hub
from server.settings import Settings
from tests.http.node import run_node
from tests.served import serve
from tests.tokens import SECRET, bearer, hs256

PROTOCOL = "graphql-transport-ws"
QUIET = 0.6  # seconds in which no message must come (stream polls and 50 ms coalescing)


@asynccontextmanager
async def served(app: Starlette) -> AsyncIterator[tuple[str, Starlette]]:
    async with serve(app) as url:
        yield url, app


@pytest.fixture
async def live(demo: Table) -> AsyncIterator[tuple[str, Starlette]]:
    """The app over real HTTP (its lifespan runs the hub), every request acting as admin."""
    async with served(create_app(table=demo)) as pair:
        yield pair


@pytest.fixture
async def secured(demo: Table) -> AsyncIterator[tuple[str, Starlette]]:
    """The same, with tokens required to say who asks (HS256)."""
    app = create_app(Settings(production=True), demo, Authenticator(secret=SECRET))
    async with served(app) as pair:
        yield pair


@pytest.fixture
def boto(dynamodb: EmbeddedDynamoDB) -> Any:
    """A plain boto3 client on the same moto server: another program writing to the table."""
    return boto3.client(
        "dynamodb",
        endpoint_url=dynamodb.url,
        region_name="us-east-1",
        aws_access_key_id="other",
        aws_secret_access_key="other",
    )


@asynccontextmanager
async def socket(url: str, token: str | None = None) -> AsyncIterator[ClientConnection]:
    """A graphql-transport-ws connection, acknowledged."""
    ws_url = url.replace("http://", "ws://") + "/graphql"
    async with connect(ws_url, subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        payload = {"authorization": f"Bearer {token}"} if token else {}
        await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        ack = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert ack["type"] == "connection_ack"
        yield ws


async def subscribe(ws: ClientConnection, op_id: str, query: str, **variables: Any) -> None:
    payload = {"query": query, "variables": variables}
    await ws.send(json.dumps({"type": "subscribe", "id": op_id, "payload": payload}))


async def receive(ws: ClientConnection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 5))
    return message


async def silent(ws: ClientConnection, seconds: float = QUIET) -> bool:
    try:
        await asyncio.wait_for(ws.recv(), seconds)
    except TimeoutError:
        return True
    return False


async def post(url: str, query: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{url}/graphql", json={"query": query}, headers=headers)
    body: dict[str, Any] = response.json()
    return body


def hub_of(app: Starlette) -> Hub:
    hub: Hub | None = app.state.live
    assert hub is not None
    return hub


USER_NAME = 'subscription { user(id: "alice") { name } }'
GROUP_MEMBERS = (
    'subscription { group(id: "group1") { members { edges { node { id } } totalCount } } }'
)


async def rename(boto: Any, key: str, name: str) -> None:
    """A write straight into the table, as another program makes it: the node's name set."""
    await asyncio.to_thread(
        boto.update_item,
        TableName="graph",
        Key={"PK": {"S": key}, "SK": {"S": key}},
        UpdateExpression="SET #n = :n",
        ExpressionAttributeNames={"#n": "name"},
        ExpressionAttributeValues={":n": {"S": name}},
    )


async def test_a_boto3_write_straight_into_the_table_is_seen_by_a_subscriber(
    live: tuple[str, Starlette], boto: Any
) -> None:
    url, _app = live
    async with socket(url) as ws:
        await subscribe(ws, "1", USER_NAME)
        first = await receive(ws)
        assert first == {
            "type": "next",
            "id": "1",
            "payload": {"data": {"user": {"name": "Alice"}}},
        }
        await rename(boto, "USER#alice", "Alicia")
        changed = await receive(ws)
        assert changed["payload"] == {"data": {"user": {"name": "Alicia"}}}


async def test_a_mutation_is_seen_by_a_subscriber_to_a_listing(live: tuple[str, Starlette]) -> None:
    url, _app = live
    async with socket(url) as ws:
        await subscribe(ws, "m", GROUP_MEMBERS)
        first = (await receive(ws))["payload"]["data"]["group"]["members"]
        assert first["totalCount"] == 2
        added = await post(
            url, 'mutation { addGroupMember(userId: "billgates", groupId: "group1") { cursor } }'
        )
        assert "errors" not in added
        members = (await receive(ws))["payload"]["data"]["group"]["members"]
        assert members["totalCount"] == 3
        assert "USER#billgates" in {e["node"]["id"] for e in members["edges"]}


async def test_a_deleted_node_is_answered_null(live: tuple[str, Starlette]) -> None:
    url, _app = live
    async with socket(url) as ws:
        await subscribe(ws, "d", 'subscription { product(id: "prod3") { name } }')
        assert (await receive(ws))["payload"]["data"]["product"] is not None
        deleted = await post(url, 'mutation { deleteProduct(id: "prod3") { id } }')
        assert "errors" not in deleted
        assert (await receive(ws))["payload"] == {"data": {"product": None}}


async def test_no_message_for_an_unrelated_or_a_no_op_write(
    live: tuple[str, Starlette], boto: Any
) -> None:
    url, _app = live
    async with socket(url) as ws:
        await subscribe(ws, "1", USER_NAME)
        await receive(ws)
        await rename(boto, "USER#bob", "Robert")
        item = await asyncio.to_thread(
            boto.get_item,
            TableName="graph",
            Key={"PK": {"S": "USER#alice"}, "SK": {"S": "USER#alice"}},
        )
        await asyncio.to_thread(boto.put_item, TableName="graph", Item=item["Item"])  # no-op
        assert await silent(ws)


async def test_an_idle_subscription_makes_no_read(live: tuple[str, Starlette], boto: Any) -> None:
    url, app = live
    hub = hub_of(app)
    async with socket(url) as ws:
        await subscribe(ws, "1", USER_NAME)
        await receive(ws)
        requests, executions = hub.requests, hub.executions
        assert requests > 0 and executions == 1
        await rename(boto, "PRODUCT#prod1", "Renamed")
        assert await silent(ws)
        assert (hub.requests, hub.executions) == (requests, executions)


async def test_identical_subscriptions_share_one_execution_per_change(
    live: tuple[str, Starlette],
) -> None:
    url, app = live
    hub = hub_of(app)
    count = 5
    async with socket(url) as ws:
        for n in range(count):
            await subscribe(ws, str(n), USER_NAME)
        firsts = [await receive(ws) for _ in range(count)]
        assert {m["id"] for m in firsts} == {str(n) for n in range(count)}
        assert hub.executions == 1
        assert len(hub.lives) == 1
        before = hub.requests
        updated = await post(url, 'mutation { updateUser(input: {id: "alice", name: "A"}) { id } }')
        assert "errors" not in updated
        answers = [await receive(ws) for _ in range(count)]
        assert all(m["payload"] == {"data": {"user": {"name": "A"}}} for m in answers)
        assert hub.executions == 2
        assert hub.requests - before == 1  # one BatchGetItem for all five


async def test_distinct_live_queries_of_one_change_share_one_read_by_key(
    live: tuple[str, Starlette],
) -> None:
    url, app = live
    hub = hub_of(app)
    count = 5
    async with socket(url) as ws:
        for n in range(count):  # distinct documents: one live query, one execution each
            await subscribe(ws, str(n), f'subscription {{ user(id: "alice") {{ name a{n}: id }} }}')
        [await receive(ws) for _ in range(count)]
        assert len(hub.lives) == count
        before, executions = hub.requests, hub.executions
        updated = await post(url, 'mutation { updateUser(input: {id: "alice", name: "S"}) { id } }')
        assert "errors" not in updated
        answers = {m["id"]: m["payload"] for m in [await receive(ws) for _ in range(count)]}
        assert answers == {
            str(n): {"data": {"user": {"name": "S", f"a{n}": "USER#alice"}}} for n in range(count)
        }
        assert hub.executions - executions == count
        assert hub.requests - before == 1  # their GetItems of alice: one BatchGetItem


async def test_live_queries_of_two_principals_share_reads_but_not_answers(
    secured: tuple[str, Starlette],
) -> None:
    url, app = secured
    hub = hub_of(app)
    bill = 'subscription { user(id: "billgates") { name } }'
    async with socket(url, hs256("alice")) as alice, socket(url, hs256("billgates")) as himself:
        await subscribe(alice, "1", bill)
        await subscribe(himself, "1", bill)
        assert (await receive(alice))["payload"] == {"data": {"user": None}}
        assert (await receive(himself))["payload"] == {"data": {"user": {"name": "Bill Gates"}}}
        before = hub._gets.requests
        await hub.table.client.update_item(
            dict(  # a write straight into the table
                TableName="graph",
                Key={"PK": {"S": "USER#billgates"}, "SK": {"S": "USER#billgates"}},
                UpdateExpression="SET #n = :n",
                ExpressionAttributeNames={"#n": "name"},
                ExpressionAttributeValues={":n": {"S": "William"}},
            )
        )
        assert (await receive(himself))["payload"] == {"data": {"user": {"name": "William"}}}
        assert await silent(alice)  # still null for her: the shared item was hers to check
        # billgates's item read once for both (alice's access check reads his edges after):
        # two BatchGetItems, three if each read alone
        assert hub._gets.requests - before == 2


async def test_subscriptions_answer_under_their_principal_and_its_access_rules(
    secured: tuple[str, Starlette],
) -> None:
    url, _app = secured
    async with socket(url, hs256("alice")) as ws:
        await subscribe(ws, "bob", 'subscription { user(id: "bob") { name } }')
        await subscribe(ws, "bill", 'subscription { user(id: "billgates") { name } }')
        answers = {m["id"]: m["payload"] for m in [await receive(ws), await receive(ws)]}
    assert answers["bob"] == {"data": {"user": {"name": "Bob"}}}
    # as the same query answers it: null with no error, as a missing node (no existence leak)
    assert answers["bill"] == {"data": {"user": None}}
    same = await post(url, '{ user(id: "billgates") { name } }', bearer(hs256("alice")))
    assert same == answers["bill"]


async def test_a_refused_token_closes_the_socket_4403(secured: tuple[str, Starlette]) -> None:
    url, _app = secured
    ws_url = url.replace("http://", "ws://") + "/graphql"
    async with connect(ws_url, subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        init = {"type": "connection_init", "payload": {"authorization": "Bearer nope"}}
        await ws.send(json.dumps(init))
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403


@pytest.mark.parametrize(
    ("messages", "code"),
    [
        ([{"type": "subscribe", "id": "1", "payload": {"query": "{ __typename }"}}], 4401),
        ([{"type": "connection_init"}, {"type": "connection_init"}], 4429),
        ([{"type": "connection_init"}, {"type": "what"}], 4400),
    ],
    ids=["subscribe-before-ack", "second-init", "unknown-message"],
)
async def test_protocol_violations_close_with_the_protocols_codes(
    live: tuple[str, Starlette], messages: list[dict[str, Any]], code: int
) -> None:
    url, _app = live
    ws_url = url.replace("http://", "ws://") + "/graphql"
    async with connect(ws_url, subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        with pytest.raises(ConnectionClosed) as closed:
            for message in messages:
                await ws.send(json.dumps(message))
            while True:
                await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == code


async def test_a_subscription_over_server_sent_events(live: tuple[str, Starlette]) -> None:
    url, _app = live
    events: list[tuple[str, str]] = []
    async with (
        httpx.AsyncClient(timeout=10) as client,
        client.stream(
            "POST",
            f"{url}/graphql",
            json={"query": USER_NAME},
            headers={"Accept": "text/event-stream"},
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((kind, line.removeprefix("data: ")))
                if len(events) == 1:
                    renamed = 'mutation { updateUser(input: {id: "alice", name: "Al"}) { id } }'
                    await post(url, renamed)
                else:
                    break
    assert [k for k, _ in events] == ["next", "next"]
    assert json.loads(events[0][1]) == {"data": {"user": {"name": "Alice"}}}
    assert json.loads(events[1][1]) == {"data": {"user": {"name": "Al"}}}


async def test_a_query_over_server_sent_events_completes(live: tuple[str, Starlette]) -> None:
    url, _app = live
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(
            f"{url}/graphql",
            params={"query": '{ user(id: "bob") { name } }'},
            headers={"Accept": "text/event-stream"},
        )
    assert response.text == (
        'event: next\ndata: {"data":{"user":{"name":"Bob"}}}\n\nevent: complete\ndata: \n\n'
    )


async def test_a_subscription_by_plain_post_is_refused(live: tuple[str, Starlette]) -> None:
    url, _app = live
    body = await post(url, USER_NAME)
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "WebSocket" in body["errors"][0]["message"]


async def test_graphql_ws_apollo_urql_and_graphql_sse_clients_see_live_answers(
    live: tuple[str, Starlette],
) -> None:
    url, _app = live
    report = await run_node("subscriptions.mjs", f"{url}/graphql")
    names = {
        client: [answer["data"]["user"]["name"] for answer in answers]
        for client, answers in report.items()
    }
    assert names == {
        "graphqlWs": ["Alice", "Alice by graphql-ws"],
        "apollo": ["Bob", "Bob by Apollo"],
        "urql": ["Alice by graphql-ws", "Alice by urql"],
        "graphqlSse": ["Bob by Apollo", "Bob by graphql-sse"],
    }
