"""Correct under DynamoDB faults: the app's client goes through the fault proxy (tests/faults.py) to
moto over real HTTP, and the answers and the table are checked against fault-free ones.

- Reads: at 30 % throttling plus 50 % partial batches, and at 20 % 5xx (seeded), 100 runs of a
  mixed set of queries answer exactly what they answer without faults.
- Writes: under throttling, 5xx, partial batches and dropped connections, each mutation either
  applies fully or fails with UNAVAILABLE, never partially. A twin table gets the same
  mutations without faults; after each step the two tables must hold the same graph.
- A TransactWriteItems whose commit applied but whose response was lost is retried with the same
  ClientRequestToken. DynamoDB would answer the retry as the first commit; moto does not dedupe
  tokens, so there the retry's own conditions decide. Either way the table stays consistent.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from graph.dynamo.client import Endpoint, client_config, create_table, open_client
from graph.table import Item, RetryPolicy, Table
from models.demo.generate import build, demo_items, generated_items
from server.http.app import create_app
from tests.faults import READS, FaultProxy, Faults
from tests.helpers import DEMO_LAYOUT, LEAN
from tests.table_state import scan

RUNS = int(os.environ.get("EDGEWISE_FAULT_RUNS", 40))  # runs of every read query (100: longer)
FAST = RetryPolicy(base_delay=0.001, max_delay=0.02, deadline=10)
TIMESTAMPS = frozenset({"createdAt", "updatedAt", "since", "joinedAt"})

CHAIN = """{ user(id: "alice") { name groups { totalCount edges { role node { id name
  subscriptions { totalCount edges { plan status node { id name } } } } } } } }"""
PRODUCTS = """{ alice: user(id: "alice") { products { product { id name } via { id name } } }
  bob: user(id: "bob") { products { product { id } via { id } } }
  u7: user(id: "u7") { products { product { id name } via { id } } } }"""
ACCESS = """{ alice: user(id: "alice") { p1: hasAccess(productId: "prod1")
    p3: hasAccess(productId: "prod3") x: hasAccess(productId: "p1") }
  bob: user(id: "bob") { p1: hasAccess(productId: "prod1") p3: hasAccess(productId: "prod3") }
  u3: user(id: "u3") { a: hasAccess(productId: "p0") b: hasAccess(productId: "p4") } }"""
MEMBERS = """{ g1: group(id: "g1") { members(first: 10) { totalCount
    pageInfo { hasNextPage endCursor } edges { cursor role node { id name } } } }
  group1: group(id: "group1") { members { totalCount edges { role node { name } } } }
  prod2: product(id: "prod2") { subscribers { totalCount edges { node { id } } } } }"""
ORG = """{ organization(id: "microsoft") { name plan members { totalCount
  edges { role node { id name organization { id } } } } } }"""
TICKETS = """{ tickets(status: OPEN) { totalCount edges { node { id title status
  author { id name } } } } }"""


def nodes_query() -> str:
    """``nodes`` of 150 global ids: users, groups, products, an organization, missing ones."""
    ids = [f"USER#n{i}" for i in range(120)] + [f"USER#u{i}" for i in range(10)]
    ids += [f"GROUP#g{i}" for i in range(4)] + [f"PRODUCT#p{i}" for i in range(4)]
    ids += ["USER#alice", "ORG#amazon", "GROUP#group2", "PRODUCT#prod3"]
    ids += [f"USER#missing{i}" for i in range(8)]
    assert len(ids) == 150
    listed = ", ".join(f'"{i}"' for i in ids)
    return f"""{{ nodes(ids: [{listed}]) {{ id ... on User {{ name }}
      ... on Organization {{ plan }} }} }}"""


QUERIES = {  # ORG and TICKETS (16 Queries each) run 10 times, not RUNS, to keep the suite short
    "chain": CHAIN,
    "products": PRODUCTS,
    "access": ACCESS,
    "members": MEMBERS,
    "nodes": nodes_query(),
}
FEWER = {"org": ORG, "tickets": TICKETS}


async def post(client: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    response = await client.post("/graphql", json={"query": query, "variables": variables})
    body: dict[str, Any] = response.json()
    body["status"] = response.status_code
    return body


def app_client(table: Table) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(table=table))
    return httpx.AsyncClient(transport=transport, base_url="http://edgewise", timeout=60.0)


@dataclass
class World:
    clean: Table  # straight to moto
    proxy: FaultProxy
    faulty: Table  # through the proxy


@pytest.fixture
async def world(table: Table, dynamodb: Any) -> AsyncIterator[World]:
    """The demo data, written without faults; the faulty table reaches it through the proxy."""
    await table.batch_write(demo_items())
    async with FaultProxy(dynamodb.url) as proxy:
        config = client_config(connect_timeout=1.0, read_timeout=2.0)
        async with open_client(Endpoint(proxy.url), config, lean=LEAN) as client:
            yield World(table, proxy, Table(client, table.name, FAST, layout=DEMO_LAYOUT))


async def add_read_data(table: Table) -> None:
    """A generated graph (24 users in 4 groups subscribing to 4 products), 120 more users and a
    few tickets, written without faults. (Small: moto reads an index by scanning the table.)"""
    extra = build(
        {"nodes": [{"type": "User", "id": f"n{i}", "name": f"N {i}"} for i in range(120)]}
    )
    await table.batch_write([*generated_items(24, 4, 4, 3, 2, seed=3), *extra])
    async with app_client(table) as clean_app:
        for i in range(6):
            user = ["alice", "bob", "u1"][i % 3]
            q = "mutation($u: ID!, $t: String!) { openTicket(userId: $u, title: $t) { id } }"
            opened = await post(clean_app, q, u=user, t=f"ticket {i}")
            if i % 3 == 0:
                ticket = opened["data"]["openTicket"]["id"]
                closed = await post(
                    clean_app, "mutation($t: ID!) { closeTicket(id: $t) { id } }", t=ticket
                )
                assert "errors" not in closed, closed


async def test_the_proxy_answers_part_of_a_batch_with_a_valid_crc32(world: World) -> None:
    """botocore checks x-amz-crc32: a rewritten body with a stale one would raise here."""
    keys = [{"PK": {"S": k}, "SK": {"S": k}} for k in ("USER#alice", "USER#bob", "GROUP#group1")]
    world.proxy.inject("BatchGetItem", "partial")
    raw = world.faulty.client
    first = await raw.batch_get_item({"RequestItems": {"graph": {"Keys": keys}}})
    got = first["Responses"]["graph"]
    held = first["UnprocessedKeys"]["graph"]["Keys"]
    assert 1 <= len(held) <= 2 and len(got) + len(held) == 3
    assert int(first["ResponseMetadata"]["HTTPHeaders"]["x-amz-crc32"]) > 0
    world.proxy.inject("BatchWriteItem", "partial")
    puts = [{"PutRequest": {"Item": {"PK": {"S": f"X#{i}"}, "SK": {"S": "x"}}}} for i in range(4)]
    written = await raw.batch_write_item({"RequestItems": {"graph": puts}})
    left = written["UnprocessedItems"]["graph"]
    stored = {pk for pk, _ in await graph_of(world.clean) if pk.startswith("X#")}
    assert 1 <= len(left) <= 3 and len(stored) + len(left) == 4  # only what was forwarded
    assert not stored & {item["PutRequest"]["Item"]["PK"]["S"] for item in left}


async def test_an_answer_whose_crc32_does_not_match_is_retried(world: World) -> None:
    world.proxy.inject("GetItem", "bad_crc32")
    key = {"PK": {"S": "USER#alice"}, "SK": {"S": "USER#alice"}}
    params = {"TableName": "graph", "Key": key}
    item = await world.faulty.call("GetItem", world.faulty.client.get_item, params)
    assert item["Item"]["name"] == {"S": "Alice"}
    assert world.proxy.stats["calls:GetItem"] == 2  # the corrupted answer, then a good one


async def run_reads(world: World, faults: Faults) -> tuple[int, float]:
    """RUNS runs of every query (each run's queries concurrently) under ``faults``; each answer
    must equal the fault-free one. Returns the GraphQL requests sent and the seconds taken."""
    await add_read_data(world.clean)
    world.proxy.replay = True  # the table does not change: identical reads answered from memory
    async with app_client(world.faulty) as client:
        world.proxy.faults = Faults()
        expected = {name: await post(client, q) for name, q in (QUERIES | FEWER).items()}
        for name, body in expected.items():
            assert body["status"] == 200 and "errors" not in body, (name, body)
        world.proxy.faults = faults
        world.proxy.stats.clear()
        started = time.monotonic()
        sent = 0
        for run in range(RUNS):
            queries = QUERIES | (FEWER if run % 10 == 0 else {})
            answers = await asyncio.gather(*(post(client, q) for q in queries.values()))
            for name, answer in zip(queries, answers, strict=True):
                assert answer == expected[name], (run, name, answer)
            sent += len(queries)
        return sent, time.monotonic() - started


async def test_reads_are_exact_under_throttling_and_partial_batches(world: World) -> None:
    faults = Faults(seed=30, operations=READS, throttle=0.3, partial=0.5)
    requests, seconds = await run_reads(world, faults)
    stats = world.proxy.stats
    print(f"{requests} requests in {seconds:.1f}s; proxy: {dict(sorted(stats.items()))}")
    assert stats["throttle"] > 0.25 * stats["calls"]
    assert stats["partial:BatchGetItem"] > 0.4 * (
        stats["calls:BatchGetItem"] - stats["throttle:BatchGetItem"]
    )


async def test_reads_are_exact_under_server_errors(world: World) -> None:
    requests, seconds = await run_reads(world, Faults(seed=20, operations=READS, server_error=0.2))
    stats = world.proxy.stats
    print(f"{requests} requests in {seconds:.1f}s; proxy: {dict(sorted(stats.items()))}")
    assert stats["server_error"] > 0.15 * stats["calls"]


# ---- writes ------------------------------------------------------------------------------------


async def graph_of(table: Table) -> dict[tuple[str, str], Item]:
    """Every item (strongly consistent Scan through a clean client), timestamps left out."""
    items = await scan(table)
    return {
        key: {k: v for k, v in item.items() if k not in TIMESTAMPS} for key, item in items.items()
    }


def steps(i: int) -> list[tuple[str, dict[str, Any]]]:
    """The life of user m<i>: each step one mutation (and what it answers)."""
    user = f"m{i}"
    return [
        (
            "mutation($id: ID!, $n: String!, $e: String!) {"
            " createUser(input: {id: $id, name: $n, email: $e}) { id name email version } }",
            {"id": user, "n": f"M {i}", "e": f"{user}@example.com"},
        ),
        (
            'mutation($u: ID!) { addGroupMember(userId: $u, groupId: "group1", role: OWNER)'
            " { role node { id name } } }",
            {"u": user},
        ),
        (
            'mutation($u: ID!) { addOrganizationMember(organizationId: "amazon", userId: $u)'
            " { role node { id name } } }",
            {"u": user},
        ),
        (
            'mutation($id: ID!, $e: String!) { updateUser(input: {id: $id, name: "Renamed",'
            " email: $e}) { id name email version } }",
            {"id": user, "e": f"{user}.new@Example.com"},
        ),
        (
            'mutation($u: ID!) { removeGroupMember(userId: $u, groupId: "group1") }',
            {"u": user},
        ),
        (
            'mutation { subscribeGroup(groupId: "group2", productId: "prod1", plan: "Pro")'
            " { plan status node { id } } }",
            {},
        ),
        (
            'mutation { cancelSubscription(groupId: "group2", productId: "prod1") { status } }',
            {},
        ),
        (
            'mutation { removeGroupMember(userId: "bob", groupId: "group1") }'
            if i % 2 == 0
            else 'mutation { addGroupMember(userId: "bob", groupId: "group1") { role } }',
            {},
        ),
        ("mutation($id: ID!) { deleteUser(id: $id) { id } }", {"id": user}),
    ]


def codes(body: dict[str, Any]) -> set[str]:
    return {e["extensions"]["code"] for e in body.get("errors", [])}


@pytest.fixture
async def twin(world: World) -> Table:
    """A second table holding the same items, to receive the same mutations without faults."""
    await create_table(world.clean.client.control, "twin", layout=DEMO_LAYOUT)
    twin = Table(world.clean.client, "twin", layout=DEMO_LAYOUT)
    await twin.batch_write(list((await graph_of(world.clean)).values()))
    assert await graph_of(twin) == await graph_of(world.clean)
    return twin


async def test_mutations_apply_fully_or_fail_unavailable_under_faults(
    world: World, twin: Table
) -> None:
    # attempts=3 so that some mutations do run out of attempts
    faulty = Table(
        world.faulty.client, world.faulty.name, RetryPolicy(3, 0.001, 0.01, 10), layout=DEMO_LAYOUT
    )
    # No dropped connections here: see test_a_transaction_whose_connection_drops_is_unavailable
    world.proxy.faults = Faults(seed=7, throttle=0.25, server_error=0.2, partial=0.5, latency=0.002)
    outcomes = {"answered": 0, "ok": 0, "unavailable": 0, "unavailable but applied": 0}
    async with app_client(faulty) as client, app_client(twin) as reference:
        after = await graph_of(world.clean)
        for i in range(6):
            for query, variables in steps(i):
                before = after
                answer = await post(client, query, **variables)
                after = await graph_of(world.clean)
                if "UNAVAILABLE" in codes(answer):
                    assert answer["status"] == 503 or answer.get("data") is not None, answer
                    if after == before:
                        outcomes["unavailable"] += 1
                        continue
                    outcomes["unavailable but applied"] += 1  # the answer's own reads failed
                    expected = await post(reference, query, **variables)
                else:
                    outcomes["answered"] += 1
                    outcomes["ok"] += "errors" not in answer
                    expected = await post(reference, query, **variables)
                    assert answer == expected, (query, variables)
                assert after == await graph_of(twin), (query, variables, answer)
    print(f"outcomes: {outcomes}; proxy: {dict(sorted(world.proxy.stats.items()))}")
    assert outcomes["ok"] > 20 and outcomes["unavailable"] > 0, outcomes


def strip_versions(items: dict[tuple[str, str], Item]) -> dict[tuple[str, str], Item]:
    return {key: {k: v for k, v in item.items() if k != "version"} for key, item in items.items()}


VERSION: Any = object()  # stands for the node's current version in each table
TX = "TransactWriteItems"
# (mutation, variables, what it answers when its first commit's answer is lost, the write):
# a mutation of several items is one TransactWriteItems; of one item, one UpdateItem with a
# condition (issue 10), whose retry recognises its own first attempt
LOST = [
    (steps(0)[0], {"ok", "CONFLICT"}, TX),  # createUser
    (steps(0)[1], {"ok", "CONFLICT"}, TX),  # addGroupMember
    (steps(0)[3], {"ok"}, TX),  # updateUser without expectedVersion (the email claim moves)
    (
        (
            'mutation($v: Int!) { updateUser(input: {id: "m0", name: "Again",'
            " expectedVersion: $v}) { name } }",
            {"v": VERSION},
        ),
        {"ok", "CONFLICT"},
        "UpdateItem",
    ),
    (steps(0)[4], {"ok", "false"}, TX),  # removeGroupMember
    (steps(0)[8], {"ok", "NOT_FOUND"}, TX),  # deleteUser
]


async def with_version(table: Table, variables: dict[str, Any]) -> dict[str, Any]:
    """``variables`` with VERSION replaced by m0's version in ``table``."""
    if VERSION not in variables.values():
        return variables
    item = (await graph_of(table))["USER#m0", "USER#m0"]
    return {k: int(item["version"]) if v is VERSION else v for k, v in variables.items()}


def outcome(answer: dict[str, Any]) -> str:
    if answer.get("errors"):
        return ",".join(sorted(codes(answer)))
    value = next(iter(answer["data"].values()))
    return "false" if value is False else "ok"


async def test_a_commit_whose_answer_is_lost_is_retried_with_its_token(
    world: World, twin: Table
) -> None:
    """The proxy forwards a TransactWriteItems and drops the connection before answering: the
    commit applied, the client saw a connection error and retried with the same token. On
    DynamoDB the retry answers as the first commit did; moto does not dedupe tokens, so the
    retry's own conditions decide (a create finds its node: CONFLICT; an update without
    expectedVersion re-reads and applies again, one version higher). Either way the graph is the
    one the mutation makes once. A one-item write (an UpdateItem) has no token: its retry fails
    its condition and recognises that its own first attempt applied."""
    seen = []
    offsets: dict[tuple[str, str], int] = {}  # version in the faulty table - version in the twin
    async with app_client(world.faulty) as client, app_client(twin) as reference:
        for (query, variables), allowed, write in LOST:
            sent = len(world.proxy.tokens)
            world.proxy.inject(write, "drop_after")
            answer = await post(client, query, **await with_version(world.clean, variables))
            expected = await post(reference, query, **await with_version(twin, variables))
            assert outcome(expected) == "ok", expected
            tokens = world.proxy.tokens[sent:]
            if write == TX:
                assert len(tokens) >= 2 and tokens[0] == tokens[1], tokens  # retried, same token
            after, wanted = await graph_of(world.clean), await graph_of(twin)
            assert strip_versions(after) == strip_versions(wanted), (query, answer)
            now = {
                key: int(item["version"]) - int(wanted[key]["version"])
                for key, item in after.items()
                if "version" in item
            }
            bumps = {
                key: n - offsets.get(key, 0) for key, n in now.items() if n != offsets.get(key, 0)
            }
            offsets = now
            name = query.split("{")[1].split("(")[0].strip()
            seen.append((name, outcome(answer), {k[0]: n for k, n in bumps.items()}))
            assert outcome(answer) in allowed, (query, answer)
            # an update applied a second time, one version higher; nothing else differs
            assert all(n == 1 for n in bumps.values()) and (not bumps or name == "updateUser")
    dropped = Counter(write for _, _, write in LOST)
    assert {w: world.proxy.stats[f"drop_after:{w}"] for w in dropped} == dict(dropped)
    print("lost commits:", seen)


async def test_a_transaction_whose_connection_drops_is_unavailable(
    world: World, twin: Table
) -> None:
    """Every attempt of a TransactWriteItems loses its connection before reaching DynamoDB: the
    mutation fails with UNAVAILABLE and the table is unchanged."""
    attempts = 3
    faulty = Table(
        world.faulty.client,
        world.faulty.name,
        RetryPolicy(attempts, 0.001, 0.01, 10),
        layout=DEMO_LAYOUT,
    )
    async with app_client(faulty) as client:
        before = await graph_of(world.clean)
        world.proxy.inject("TransactWriteItems", "drop", attempts)
        answer = await post(client, *steps(0)[0][:1], **steps(0)[0][1])
        assert await graph_of(world.clean) == before
        assert world.proxy.stats["drop:TransactWriteItems"] == attempts
        assert codes(answer) == {"UNAVAILABLE"}, answer
        assert answer["status"] == 503
