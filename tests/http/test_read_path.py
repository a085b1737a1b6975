"""The read API end to end over ASGI, on the demo data, with DynamoDB costs from the trace.

Every test runs twice: on moto and on dynalite (served ``--read-only`` there, as dynalite has
no transactions), so that the read path never relies on one emulator's leniency.
"""

from __future__ import annotations

import gc
import logging
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from graph.items import Ref
from graph.reads import Page
from graph.table import Table
from server.engine.fields import EdgeValue
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT, gql

CHAIN = """{ user(id: "alice") { groups(first: 100) { edges { node {
    name subscriptions(first: 20) { edges { node { name } } } } } } } }"""


@pytest.fixture
def table(compatible_table: Table) -> Table:
    return compatible_table


@pytest.fixture
async def http(demo: Table, backend: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(read_only=backend == "dynalite"), table=demo)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


def products(body: dict[str, Any]) -> dict[str, list[str]]:
    return {
        p["product"]["id"]: [g["id"] for g in p["via"]] for p in body["data"]["user"]["products"]
    }


async def test_alice_reaches_three_products_with_prod2_via_both_groups(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(http, '{ user(id: "alice") { products { product { id } via { id } } } }')
    assert products(body) == {
        "PRODUCT#prod1": ["GROUP#group1"],
        "PRODUCT#prod2": ["GROUP#group1", "GROUP#group2"],
        "PRODUCT#prod3": ["GROUP#group2"],
    }


async def test_bob_reaches_prod1_and_prod2(http: httpx.AsyncClient) -> None:
    body = await gql(http, '{ user(id: "USER#bob") { products { product { id } via { id } } } }')
    assert products(body) == {"PRODUCT#prod1": ["GROUP#group1"], "PRODUCT#prod2": ["GROUP#group1"]}


@pytest.mark.parametrize(
    ("user", "product", "expected"),
    [
        ("alice", "prod3", True),
        ("bob", "prod3", False),
        ("bob", "PRODUCT#prod2", True),
        ("bob", "GROUP#prod2", False),
        ("nobody", "prod1", False),
    ],
)
async def test_has_access(http: httpx.AsyncClient, user: str, product: str, expected: bool) -> None:
    body = await gql(
        http,
        "query($u: ID!, $p: ID!) { node(id: $u) { ... on User { hasAccess(productId: $p) } } }",
        {"u": f"USER#{user}", "p": product},
    )
    node = body["data"]["node"]
    assert (node["hasAccess"] if node else False) is expected


async def test_has_access_costs_one_query_and_one_batch_get_of_edges(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(http, '{ user(id: "alice") { hasAccess(productId: "prod3") } }')
    assert body["data"]["user"]["hasAccess"] is True
    trace = body["extensions"]["dynamodb"]
    assert trace["operations"] == {"Query": 1, "BatchGetItem": 2}
    assert trace["rounds"] == 2


async def test_canceled_or_expired_subscriptions_grant_no_access(demo: Table) -> None:
    await demo.batch_write(
        [
            {
                "PK": "GROUP#group2",
                "SK": "PRODUCT#prod3",
                "edge": "SUBSCRIBES_TO",
                "plan": "x",
                "status": "CANCELED",
            },
            {
                "PK": "GROUP#group1",
                "SK": "PRODUCT#prod1",
                "edge": "SUBSCRIBES_TO",
                "plan": "x",
                "status": "ACTIVE",
                "validUntil": "2001-01-01T00:00:00Z",
            },
            {
                "PK": "GROUP#group1",
                "SK": "PRODUCT#prod2",
                "edge": "SUBSCRIBES_TO",
                "plan": "x",
                "status": "ACTIVE",
                "validUntil": "2999-01-01T00:00:00Z",
            },
        ]
    )
    transport = httpx.ASGITransport(app=create_app(table=demo))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        body = await gql(client, '{ user(id: "alice") { products { product { id } via { id } } } }')
        assert products(body) == {"PRODUCT#prod2": ["GROUP#group1", "GROUP#group2"]}
        body = await gql(client, '{ user(id: "alice") { hasAccess(productId: "prod1") } }')
        assert body["data"]["user"]["hasAccess"] is False


async def test_group_members_are_read_in_reverse(http: httpx.AsyncClient) -> None:
    body = await gql(
        http,
        '{ group(id: "group1") { members { totalCount edges { role since node { id name } } } } }',
    )
    members = body["data"]["group"]["members"]
    assert members["totalCount"] == 2
    assert [(e["node"]["id"], e["node"]["name"], e["role"]) for e in members["edges"]] == [
        ("USER#alice", "Alice", "OWNER"),
        ("USER#bob", "Bob", "MEMBER"),
    ]
    assert members["edges"][0]["since"] == "2024-01-15T09:00:00.000Z"  # as stored


async def test_product_subscribers_are_read_in_reverse(http: httpx.AsyncClient) -> None:
    body = await gql(
        http,
        '{ product(id: "prod2") { subscribers { edges { plan status validUntil node { id } } } } }',
    )
    edges = body["data"]["product"]["subscribers"]["edges"]
    assert [e["node"]["id"] for e in edges] == ["GROUP#group1", "GROUP#group2"]
    assert {(e["status"], e["validUntil"]) for e in edges} == {("ACTIVE", None)}


async def test_organization_members_and_reverse_organization(http: httpx.AsyncClient) -> None:
    body = await gql(
        http,
        """{ organization(id: "microsoft") { name plan members { edges { role node { name
               organization { id } } } } }
             alice: user(id: "alice") { organization { id } } }""",
    )
    org = body["data"]["organization"]
    assert (org["name"], org["plan"]) == ("Microsoft", "Enterprise")
    assert [
        (e["node"]["name"], e["role"], e["node"]["organization"]["id"])
        for e in org["members"]["edges"]
    ] == [
        ("Bill Gates", "MEMBER", "ORG#microsoft"),
        ("Satya Nadella", "ADMIN", "ORG#microsoft"),
    ]
    assert body["data"]["alice"]["organization"] is None


async def test_chain_costs_three_rounds_and_minimum_requests(http: httpx.AsyncClient) -> None:
    body = await gql(http, CHAIN)
    groups = body["data"]["user"]["groups"]["edges"]
    assert [[s["node"]["name"] for s in g["node"]["subscriptions"]["edges"]] for g in groups] == [
        ["Product 1", "Product 2"],
        ["Product 2", "Product 3"],
    ]
    trace = body["extensions"]["dynamodb"]
    # wave 1: user item + its groups; wave 2: group items + 2 subscription pages; wave 3: products
    # (the planned prefetch starts a level's reads when the whole level above is in)
    assert trace["rounds"] == 3
    assert trace["operations"] == {"BatchGetItem": 3, "Query": 3}
    assert trace["requests"] == 6


async def test_selecting_only_ids_reads_no_node_items(http: httpx.AsyncClient) -> None:
    body = await gql(http, '{ user(id: "alice") { groups { edges { node { id } } } } }')
    assert [e["node"]["id"] for e in body["data"]["user"]["groups"]["edges"]] == [
        "GROUP#group1",
        "GROUP#group2",
    ]
    # one BatchGetItem: the root's own existence check; the groups are never read
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1, "Query": 1}
    assert body["extensions"]["dynamodb"]["rounds"] == 1


async def test_a_key_is_read_once_per_request_across_fields_and_aliases(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(
        http,
        """{ a: user(id: "alice") { name } b: user(id: "USER#alice") { name email }
             node(id: "USER#alice") { ... on User { version } } }""",
    )
    assert body["data"] == {
        "a": {"name": "Alice"},
        "b": {"name": "Alice", "email": "alice@example.com"},
        "node": {"version": 1},
    }
    assert body["extensions"]["dynamodb"]["requests"] == 1


async def test_nodes_with_250_ids_is_three_batch_gets_in_one_round(
    http: httpx.AsyncClient,
) -> None:
    ids = ["USER#alice", "PRODUCT#prod1"] + [f"USER#u{i}" for i in range(248)]
    body = await gql(http, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": ids})
    found = body["data"]["nodes"]
    assert found[:2] == [{"id": "USER#alice"}, {"id": "PRODUCT#prod1"}]
    assert found[2:] == [None] * 248
    trace = body["extensions"]["dynamodb"]
    assert trace["operations"] == {"BatchGetItem": 3}
    assert trace["rounds"] == 1


async def test_pages_follow_cursors(http: httpx.AsyncClient) -> None:
    query = """query($after: String) { user(id: "alice") { groups(first: 1, after: $after) {
        totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } } } } }"""
    first = (await gql(http, query))["data"]["user"]["groups"]
    assert [e["node"]["id"] for e in first["edges"]] == ["GROUP#group1"]
    assert first["pageInfo"]["hasNextPage"] is True
    assert first["pageInfo"]["endCursor"] == first["edges"][0]["cursor"]
    second = (await gql(http, query, {"after": first["pageInfo"]["endCursor"]}))["data"]
    groups = second["user"]["groups"]
    assert [e["node"]["id"] for e in groups["edges"]] == ["GROUP#group2"]
    assert groups["pageInfo"]["hasNextPage"] is False
    assert groups["totalCount"] == 2


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ('{ user(id: "al ice") { id } }', "invalid id"),
        ('{ user(id: "alice") { groups(first: 101) { totalCount } } }', "first must be between"),
        ('{ user(id: "alice") { groups(first: -1) { totalCount } } }', "first must be between"),
        ('{ user(id: "alice") { groups(after: "%%%") { totalCount } } }', "invalid cursor"),
        (
            '{ user(id: "alice") { groups(after: "WyJHUk9VUCNnIiwiVVNFUiN1Il0") { totalCount } } }',
            "another connection",
        ),
        ('{ node(id: "alice") { id } }', "invalid global id"),
    ],
)
async def test_bad_input_is_bad_user_input(
    http: httpx.AsyncClient, query: str, message: str
) -> None:
    body = await gql(http, query)
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert message in error["message"]


@pytest.mark.parametrize(
    "query",
    [
        '{ user(id: "nobody") { id name } }',
        '{ user(id: "GROUP#group1") { id } }',
        '{ group(id: "USER#alice") { id } }',
        '{ node(id: "WIDGET#x") { id } }',
    ],
)
async def test_missing_or_wrong_type_is_null(http: httpx.AsyncClient, query: str) -> None:
    body = await gql(http, query)
    assert "errors" not in body
    assert list(body["data"].values()) == [None]


async def test_validation_errors_have_a_code_and_no_data(http: httpx.AsyncClient) -> None:
    response = await http.post("/graphql", json={"query": "{ user(id: 1) { nope } }"})
    body = response.json()
    assert "data" not in body
    assert {e["extensions"]["code"] for e in body["errors"]} == {"BAD_USER_INPUT"}


async def test_unexpected_errors_are_masked_and_logged(
    demo: Table, caplog: pytest.LogCaptureFixture
) -> None:
    await demo.batch_write(
        [
            {
                "PK": "USER#alice",
                "SK": "GROUP#group9",
                "edge": "MEMBER_OF",
                "role": "MEMBER",
                "since": "not a date",
            }
        ]
    )
    transport = httpx.ASGITransport(app=create_app(table=demo))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        with caplog.at_level(logging.ERROR, logger="edgewise"):
            body = await gql(client, '{ user(id: "alice") { groups { edges { since } } } }')
    [error] = body["errors"]
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert error["message"] == "Internal server error"
    assert "not a date" not in str(body)
    assert "not a date" in caplog.text


async def test_get_runs_queries(http: httpx.AsyncClient) -> None:
    response = await http.get("/graphql", params={"query": '{ user(id: "bob") { name } }'})
    assert response.status_code == 200
    assert response.json() == {"data": {"user": {"name": "Bob"}}}


async def test_trace_only_when_asked(http: httpx.AsyncClient) -> None:
    response = await http.post("/graphql", json={"query": '{ user(id: "bob") { name } }'})
    assert "extensions" not in response.json()


async def test_health_and_readiness(http: httpx.AsyncClient, demo: Table) -> None:
    assert (await http.get("/healthz")).status_code == 200
    assert (await http.get("/readyz")).status_code == 200
    missing = Table(demo.client, "no-such-table", layout=DEMO_LAYOUT)
    transport = httpx.ASGITransport(app=create_app(table=missing))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.get("/healthz")).status_code == 200
        response = await client.get("/readyz")
        assert response.status_code == 503
        assert "create-table" in response.text


async def test_a_request_leaves_its_reads_to_reference_counting(http: httpx.AsyncClient) -> None:
    """A request's reads are cyclic (the loaders refer back to them); the handler drops them as
    it answers, so no page, item reference or edge of it waits for the cyclic collector (whose
    passes over them cost about a quarter of a request's CPU on the real path)."""
    await gql(http, CHAIN)  # plans, caches and connections made
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        body = await gql(http, CHAIN)
        gc.collect()
        left = Counter(
            type(o).__name__ for o in gc.garbage if isinstance(o, Page | Ref | EdgeValue)
        )
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert len(body["data"]["user"]["groups"]["edges"]) == 2
    assert left == Counter()


async def test_serving_keeps_what_startup_built_out_of_the_collectors_sight(demo: Table) -> None:
    app = create_app(table=demo)
    threshold = gc.get_threshold()
    async with app.router.lifespan_context(app):
        assert gc.get_freeze_count() > 10_000  # modules, botocore's models, the schema
        assert gc.get_threshold()[0] == 10_000
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == threshold
