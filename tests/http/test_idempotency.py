"""Safe retries: a mutation sent with ``Idempotency-Key`` applies once, whatever is retried
(the HTTP answer lost, DynamoDB's answer lost, duplicates racing), and its record stays out of
the graph's reads in every model. Counts come from the trace and from the table itself."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.bulk import dump
from graph.dynamo.client import Endpoint, client_config, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import RetryPolicy, Table, from_dynamo
from model.infer import infer, table_info
from model.types import RECORD_EXPIRES, RECORD_PREFIX
from models.demo.generate import build
from server.engine import engine_for
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.faults import FaultProxy
from tests.helpers import DEMO_LAYOUT, LEAN
from tests.table_state import scan
from tests.tokens import SECRET, bearer, hs256

CREATE = "mutation($name: String!) { createUser(input: {name: $name}) { id name version } }"
DAY = 24 * 3600


def keyed(key: str = "k-1", trace: bool = True) -> dict[str, str]:
    return {"Idempotency-Key": key, **({"Edgewise-Trace": "1"} if trace else {})}


async def send(
    client: httpx.AsyncClient,
    query: str = CREATE,
    variables: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    extensions: dict[str, Any] | None = None,
) -> httpx.Response:
    body: dict[str, Any] = {"query": query, "variables": variables or {"name": "Carol"}}
    if extensions is not None:
        body["extensions"] = extensions
    return await client.post("/graphql", json=body, headers=keyed() if headers is None else headers)


def operations(response: httpx.Response) -> dict[str, int]:
    found: dict[str, int] = response.json()["extensions"]["dynamodb"]["operations"]
    return found


def untraced(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    body.pop("extensions", None)
    return body


def codes(response: httpx.Response) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors", [])]


async def users(table: Table) -> list[str]:
    return sorted(pk for pk, sk in await scan(table) if pk == sk and pk.startswith("USER#"))


async def records(table: Table) -> list[dict[str, Any]]:
    return [item for (pk, _), item in (await scan(table)).items() if pk.startswith(RECORD_PREFIX)]


@pytest.fixture
async def app(demo: Table) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(table=demo))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


# ---- one request, its repeat -------------------------------------------------------------


async def test_a_keyed_write_of_one_item_is_a_transaction_with_its_record(
    app: httpx.AsyncClient, demo: Table
) -> None:
    base = len(await users(demo))
    plain = await send(app, headers={"Edgewise-Trace": "1"})
    assert operations(plain) == {"PutItem": 1}  # without a key nothing changes
    assert await records(demo) == []
    first = await send(app)
    assert first.status_code == 200 and "errors" not in first.json(), first.text
    # the record read first, written with the user, then given the answer
    assert operations(first) == {"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 1}
    assert first.json()["extensions"]["dynamodb"]["rounds"] == 3
    [record] = await records(demo)
    assert record["PK"] == record["SK"]
    assert DAY - 60 < int(record[RECORD_EXPIRES]) - time.time() <= DAY
    assert json.loads(record["answer"]) == untraced(first)
    assert len(await users(demo)) == base + 2  # two Carols


async def test_a_repeat_answers_the_recorded_answer_and_writes_nothing(
    app: httpx.AsyncClient, demo: Table
) -> None:
    first = await send(app)
    before = await scan(demo)
    again = await send(app)
    assert again.status_code == 200
    assert untraced(again) == untraced(first)
    assert operations(again) == {"GetItem": 1}
    assert await scan(demo) == before


async def test_the_key_may_come_in_the_extensions(app: httpx.AsyncClient, demo: Table) -> None:
    base = len(await users(demo))
    first = await send(app, headers={}, extensions={"idempotencyKey": "from-body"})
    again = await send(app, headers={}, extensions={"idempotencyKey": "from-body"})
    assert again.json() == first.json()
    assert len(await records(demo)) == 1
    assert len(await users(demo)) == base + 1


async def test_the_same_key_with_another_request_is_422_and_writes_nothing(
    app: httpx.AsyncClient, demo: Table
) -> None:
    await send(app)
    before = await scan(demo)
    for variables, query in [({"name": "Dave"}, CREATE), ({"name": "Carol"}, CREATE + " ")]:
        other = await send(app, query, variables)
        assert other.status_code == 422, other.text
        assert codes(other) == ["BAD_USER_INPUT"]
        assert operations(other) == {"GetItem": 1}
    assert await scan(demo) == before


@pytest.mark.parametrize("key", ["", "x" * 256, "with space", "é"])
async def test_a_malformed_key_is_refused_before_anything_runs(
    app: httpx.AsyncClient, demo: Table, key: str
) -> None:
    before = await scan(demo)
    response = await send(app, headers={}, extensions={"idempotencyKey": key})
    assert response.status_code == 200  # application/json: a request error keeps 200
    assert codes(response) == ["BAD_USER_INPUT"] and "data" not in response.json()
    assert await scan(demo) == before


async def test_a_key_on_a_query_changes_nothing(app: httpx.AsyncClient, demo: Table) -> None:
    response = await send(app, '{ user(id: "alice") { name } }', {})
    assert operations(response) == {"BatchGetItem": 1}
    assert await records(demo) == []


async def test_a_mutation_that_writes_nothing_leaves_no_record(
    app: httpx.AsyncClient, demo: Table
) -> None:
    query = 'mutation { deleteUser(id: "nobody") { id } }'
    for _ in range(2):
        response = await send(app, query, {})
        assert codes(response) == ["NOT_FOUND"]
    assert await records(demo) == []


async def test_each_write_of_a_keyed_request_applies_once(
    app: httpx.AsyncClient, demo: Table
) -> None:
    """Two root fields: the record goes with the first write, the answer covers both."""
    query = """mutation { a: createUser(input: {id: "c1", name: "C1"}) { id }
      b: updateUser(input: {id: "alice", name: "Alicia"}) { name version } }"""
    first = await send(app, query, {})
    assert untraced(first) == {
        "data": {"a": {"id": "USER#c1"}, "b": {"name": "Alicia", "version": 2}}
    }
    again = await send(app, query, {})
    assert untraced(again) == untraced(first)
    assert (await scan(demo))["USER#alice", "USER#alice"]["version"] == 2


async def test_a_keyed_write_of_a_full_transaction_makes_room_for_the_record(
    app: httpx.AsyncClient, demo: Table
) -> None:
    """Deleting a user with an email and 49 groups is exactly 100 actions: one transaction
    without a key; with one, the record takes a place, so the edges go first in a transaction
    of their own (carrying the record) and the user last."""
    groups = [{"type": "Group", "id": f"h{i}", "name": f"H{i}"} for i in range(49)]
    edges = [{"label": "MEMBER_OF", "from": "hub", "to": f"h{i}"} for i in range(49)]
    hub = {"type": "User", "id": "hub", "name": "Hub", "email": "hub@example.com"}
    await demo.batch_write(build({"nodes": [hub, *groups], "edges": edges}))
    twin = {**hub, "id": "hub2", "email": "hub2@example.com"}
    await demo.batch_write(
        build({"nodes": [twin], "edges": [{**e, "from": "hub2"} for e in edges]})
    )
    plain = await send(
        app, 'mutation { deleteUser(id: "hub2") { id } }', {}, {"Edgewise-Trace": "1"}
    )
    assert operations(plain)["TransactWriteItems"] == 1, plain.text
    response = await send(app, 'mutation { deleteUser(id: "hub") { id } }', {})
    assert untraced(response) == {"data": {"deleteUser": {"id": "USER#hub"}}}
    assert operations(response)["TransactWriteItems"] == 2
    items = await scan(demo)
    assert not [k for k in items if "hub" in k[0] or "hub" in k[1]]
    assert all(int(items[f"GROUP#h{i}", f"GROUP#h{i}"].get("members", 0)) == 0 for i in range(49))


async def test_a_hooks_one_item_update_is_a_transaction_with_the_record(
    app: httpx.AsyncClient, demo: Table
) -> None:
    """cancelSubscription (a model hook: one UpdateItem returning the edge) with a key: the
    update and the record in one transaction, then the edge read back."""
    query = """mutation { cancelSubscription(groupId: "group1", productId: "prod1") {
      status node { id } } }"""
    first = await send(app, query, {})
    assert untraced(first) == {
        "data": {"cancelSubscription": {"status": "CANCELED", "node": {"id": "PRODUCT#prod1"}}}
    }
    assert operations(first) == {"GetItem": 2, "TransactWriteItems": 1, "UpdateItem": 1}
    again = await send(app, query, {})
    assert untraced(again) == untraced(first) and operations(again) == {"GetItem": 1}
    assert len(await records(demo)) == 1


async def test_an_expired_record_is_absent_and_the_mutation_applies_again(demo: Table) -> None:
    base = len(await users(demo))
    transport = httpx.ASGITransport(app=create_app(Settings(idempotency_ttl=1), table=demo))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        first = await send(client)
        [record] = await records(demo)
        await asyncio.sleep(max(0.0, int(record[RECORD_EXPIRES]) + 1.05 - time.time()))
        again = await send(client)  # the record is still there (TTL deletes lazily)
    assert again.status_code == 200 and "errors" not in again.json(), again.text
    assert operations(again) == {"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 1}
    assert again.json()["data"]["createUser"]["id"] != first.json()["data"]["createUser"]["id"]
    assert len(await users(demo)) == base + 2
    [rewritten] = await records(demo)
    assert rewritten["owner"] != record["owner"]


# ---- lost answers ----------------------------------------------------------------------------


@pytest.fixture
async def proxied(demo: Table, dynamodb: EmbeddedDynamoDB) -> AsyncIterator[FaultProxy]:
    async with FaultProxy(dynamodb.url) as proxy:
        yield proxy


def through(proxy: FaultProxy, client: Any, attempts: int = 4) -> Table:
    return Table(client, "graph", RetryPolicy(attempts, 0.001, 0.02, 10), layout=DEMO_LAYOUT)


async def test_a_retry_after_a_lost_answer_applies_once(demo: Table, proxied: FaultProxy) -> None:
    """DynamoDB applies the transaction and the proxy drops its answer: the table retries with
    the same token. DynamoDB (and DynamoDB Local, where `make test` runs this) answers the retry
    as the first commit; moto does not dedupe it, so the retry fails on the record, which is
    this request's own: applied either way. (Without a key the retry fails on the new user:
    CONFLICT.) The client then loses the HTTP answer too and retries: the recorded answer, no
    write."""
    config = client_config(connect_timeout=1.0, read_timeout=2.0)
    async with open_client(Endpoint(proxied.url), config, lean=LEAN) as client:
        app = create_app(table=through(proxied, client))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
            query = 'mutation { createUser(input: {id: "carol", name: "Carol"}) { id name } }'
            proxied.inject("TransactWriteItems", "drop_after")
            first = await send(http, query, {})
            assert proxied.stats["drop_after:TransactWriteItems"] == 1
            assert operations(first)["TransactWriteItems"] == 2  # the lost one and its retry
            lost, retried = proxied.tokens[-2:]
            assert lost == retried and len(lost) == 36  # the key's token, reused by the retry
            assert untraced(first) == {
                "data": {"createUser": {"id": "USER#carol", "name": "Carol"}}
            }
            again = await send(http, query, {})
    assert untraced(again) == untraced(first)
    assert operations(again) == {"GetItem": 1}
    assert (await users(demo)).count("USER#carol") == 1
    assert len(await records(demo)) == 1


async def test_a_write_applied_with_no_attempt_left_is_found_by_its_record(
    demo: Table, proxied: FaultProxy
) -> None:
    """One attempt only: the transaction's answer is lost and not retried; the record, read
    back, says it applied, so the request answers as applied rather than UNAVAILABLE."""
    base = len(await users(demo))
    async with open_client(Endpoint(proxied.url), lean=LEAN) as client:
        app = create_app(table=through(proxied, client, attempts=1))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
            proxied.inject("TransactWriteItems", "drop_after")
            first = await send(http)
    assert first.status_code == 200 and "errors" not in first.json(), first.text
    assert operations(first) == {"GetItem": 2, "TransactWriteItems": 1, "UpdateItem": 1}
    assert len(await users(demo)) == base + 1


async def test_a_request_that_failed_after_its_write_is_never_applied_again(
    demo: Table, proxied: FaultProxy
) -> None:
    """The answer cannot be recorded (UpdateItem fails): while the first request's lease runs
    a retry is 409 with Retry-After, after it 409 saying it applied; nothing is written again."""
    base = len(await users(demo))
    async with open_client(Endpoint(proxied.url), lean=LEAN) as client:
        app = create_app(table=through(proxied, client, attempts=1))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
            proxied.inject("UpdateItem", "server_error")
            first = await send(http)
            assert first.status_code == 200 and "errors" not in first.json()
            running = await send(http)
            assert (running.status_code, codes(running)) == (409, ["CONFLICT"])
            assert 1 <= int(running.headers["Retry-After"]) <= 10 + 6
            [record] = await records(demo)
            await demo.write(  # the first request's lease ran out
                "UpdateItem",
                {
                    "Key": {"PK": {"S": record["PK"]}, "SK": {"S": record["SK"]}},
                    "UpdateExpression": "SET #u = :u",
                    "ExpressionAttributeNames": {"#u": "until"},
                    "ExpressionAttributeValues": {":u": {"N": str(int(time.time()) - 1)}},
                },
            )
            lost = await send(http)
    assert (lost.status_code, codes(lost)) == (409, ["CONFLICT"])
    assert "Retry-After" not in lost.headers
    assert "applied" in lost.json()["errors"][0]["message"]
    assert operations(running) == operations(lost) == {"GetItem": 1}
    assert len(await users(demo)) == base + 1


# ---- racing duplicates -----------------------------------------------------------------------


RACING = {
    "createUser": CREATE,
    "updateUser": 'mutation { updateUser(input: {id: "bob", name: "Robert"}) { version } }',
    # a duplicate that reads after the first applied fails before its commit (a stale version):
    # it is answered by the record, not with its own CONFLICT
    "expectedVersion": """mutation { updateUser(input: {id: "bob", name: "Robert",
      expectedVersion: 1}) { version } }""",
}


@pytest.mark.parametrize("mutation", list(RACING))
async def test_concurrent_duplicates_apply_once(serial: Table, mutation: str) -> None:
    query = RACING[mutation]
    variables = {"name": "Carol"} if mutation == "createUser" else {}
    base = len(await users(serial))
    transport = httpx.ASGITransport(app=create_app(table=serial))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
        answers = await asyncio.gather(*(send(http, query, variables) for _ in range(4)))
        answers = [*answers, await send(http, query, variables)]  # a repeat once all ended
    applied = [a for a in answers if a.status_code == 200]
    assert applied, [a.text for a in answers]
    assert all(untraced(a) == untraced(applied[0]) for a in applied)
    assert "errors" not in applied[0].json()
    for other in answers:
        if other.status_code != 200:
            assert (other.status_code, codes(other)) == (409, ["CONFLICT"]), other.text
            assert int(other.headers["Retry-After"]) >= 1
    items = await scan(serial)
    assert answers[-1].status_code == 200  # by then the answer is recorded
    if mutation == "createUser":
        assert len(await users(serial)) == base + 1
    else:
        assert items["USER#bob", "USER#bob"]["version"] == 2
    assert len(await records(serial)) == 1


# ---- every model -----------------------------------------------------------------------------

MODELS = {  # a create of each model, and the type its record must not be taken for
    "demo": 'mutation { createUser(input: {name: "Carol"}) { id name } }',
    "orders": 'mutation { createOrder(input: {total: 12.5, status: "NEW"}) { id total } }',
    "order-entry": 'mutation { createWarehouse(input: {name: "North"}) { id name } }',
}


@pytest.fixture
async def model_table(dynamodb: EmbeddedDynamoDB) -> AsyncIterator[Any]:
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:

        async def make(model: str) -> tuple[Table, httpx.AsyncClient]:
            engine = engine_for(model)
            await create_table(client.control, engine.table_name, layout=engine.layout)
            table = Table(client, engine.table_name, layout=engine.layout)
            await table.batch_write(engine.sample_items(table))
            app = create_app(Settings(model=model), table=table)
            transport = httpx.ASGITransport(app=app)
            return table, httpx.AsyncClient(transport=transport, base_url="http://edgewise")

        yield make


@pytest.mark.parametrize("model", list(MODELS))
async def test_every_model_keeps_its_record_out_of_the_graph(
    model_table: Any, model: str, tmp_path: Path
) -> None:
    table, http = await model_table(model)
    engine = engine_for(model)
    async with http:
        first = await send(http, MODELS[model], {})
        again = await send(http, MODELS[model], {})
    assert "errors" not in first.json(), first.text
    assert untraced(again) == untraced(first) and operations(again) == {"GetItem": 1}
    items = await scan(table)
    pk, sk = table.layout.pk, table.layout.sk
    [record] = [i for (p, _), i in items.items() if p.startswith(RECORD_PREFIX)]
    assert record[pk] == record[sk]  # the model's own key attribute names
    assert engine.codec.node_type(record) is None and engine.codec.edge_type(record) is None
    assert len(items) == len(engine.sample_items(table)) + 2  # the new node and the record
    # dump leaves it out, and so does inference from a scan
    count = await dump(table, tmp_path / "dump.jsonl")
    lines = (tmp_path / "dump.jsonl").read_text().splitlines()
    assert count == len(lines) == len(items) - 1
    assert not any(RECORD_PREFIX in line for line in lines)
    described = (await table.client.control.describe_table(dict(TableName=table.name)))["Table"]
    raw = (await table.client.control.scan(dict(TableName=table.name)))["Items"]
    assert RECORD_PREFIX not in infer(table_info(described), raw, complete=True).text
    assert [from_dynamo(i) for i in raw if RECORD_PREFIX in str(i)] == [record]


async def test_create_table_enables_ttl_on_the_record_expiry(table: Table) -> None:
    described = await table.client.control.describe_time_to_live(dict(TableName=table.name))
    ttl = described["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", RECORD_EXPIRES)
    assert (
        await create_table(table.client.control, table.name, layout=DEMO_LAYOUT) is False
    )  # again: unchanged


async def test_a_key_is_the_principals_own(demo: Table) -> None:
    """Two principals sending the same key and request are two requests; each repeat of one's
    own is that one's answer."""
    app = create_app(table=demo, authenticator=Authenticator(secret=SECRET))
    transport = httpx.ASGITransport(app=app)
    base = len(await users(demo))
    answers = {}
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        for who in ("root1", "root2", "root1", "root2"):
            token = bearer(hs256(who, roles=["admin"]))
            response = await send(client, headers={**keyed(), **token})
            assert "errors" not in response.json(), response.text
            answers.setdefault(who, []).append(untraced(response))
    assert answers["root1"][0] == answers["root1"][1] != answers["root2"][0]
    assert answers["root2"][0] == answers["root2"][1]
    assert len(await users(demo)) == base + 2
    assert len(await records(demo)) == 2
