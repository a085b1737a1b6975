"""Apollo Federation v2 (CONTRACT.md, "Federation"): ``serve --federation`` answers
``_service { sdl }`` and ``_entities``; ``@apollo/gateway`` composes it with a second subgraph
written in ``tests/clients/gateway.mjs`` and answers queries that start in either subgraph and
cross into the other. Without the flag the schema is the one ``schema.graphql`` holds."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from graph.table import Table
from server.engine import engine_for
from server.engine.federation import subgraph_sdl
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.helpers import gql
from tests.http.node import CLIENTS, run_node
from tests.served import serve
from tests.tokens import SECRET, asgi, bearer, hs256

LINK = (
    'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", '
    'import: ["@key", "@shareable"])'
)
ENTITIES = """query($r: [_Any!]!) { _entities(representations: $r) {
    __typename ... on User { id name } ... on Group { id name } ... on Product { name } } }"""


@pytest.fixture
async def federated(demo: Table) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(federation=True), table=demo)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


async def test_service_answers_the_subgraph_sdl_export_schema_prints(
    federated: httpx.AsyncClient,
) -> None:
    body = await gql(federated, "{ _service { sdl } }")
    sdl = body["data"]["_service"]["sdl"]
    assert sdl.startswith(LINK + "\n")
    for node in ("User", "Group", "Product", "Organization", "Ticket"):
        assert f'type {node} implements Node @key(fields: "id") {{' in sdl
    assert "type PageInfo @shareable {" in sdl
    assert "type Office {" in sdl  # not a node: no key
    assert "_entities" not in sdl and "_service" not in sdl and "_Any" not in sdl
    assert sdl == subgraph_sdl(engine_for("demo").schema().graphql_schema)
    # the definitions the subgraph specification adds, seen by introspection
    body = await gql(
        federated,
        '{ __schema { directives { name } } service: __type(name: "_Service") { fields { name } }'
        ' entity: __type(name: "_Entity") { possibleTypes { name } } }',
    )
    data = body["data"]
    assert {"key", "shareable", "link"} <= {d["name"] for d in data["__schema"]["directives"]}
    assert data["service"]["fields"] == [{"name": "sdl"}]
    assert {t["name"] for t in data["entity"]["possibleTypes"]} == {
        "User",
        "Group",
        "Product",
        "Organization",
        "Ticket",
    }


async def test_production_answers_service_though_introspection_is_off(demo: Table) -> None:
    app = create_app(
        Settings(federation=True, production=True),
        table=demo,
        authenticator=Authenticator(secret=SECRET),
    )
    async with asgi(app) as client:
        headers = bearer(hs256("bob"))
        service = await client.post(
            "/graphql", json={"query": "{ _service { sdl } }"}, headers=headers
        )
        schema = await client.post(
            "/graphql", json={"query": "{ __schema { types { name } } }"}, headers=headers
        )
    assert service.json()["data"]["_service"]["sdl"].startswith(LINK)
    assert "data" not in schema.json() or schema.json()["data"] is None


async def test_without_federation_the_schema_has_no_federation_fields(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(http, "{ _service { sdl } }")
    assert "Cannot query field '_service' on type 'Query'." in body["errors"][0]["message"]
    assert "_entities" not in engine_for("demo").schema().as_str()


async def test_entities_answer_in_order_with_null_for_missing_in_one_batch_get(
    federated: httpx.AsyncClient,
) -> None:
    representations = [
        {"__typename": "User", "id": "USER#bob"},
        {"__typename": "Group", "id": "GROUP#group1"},
        {"__typename": "User", "id": "USER#nobody"},
        {"__typename": "User", "id": "GROUP#group2"},  # another type's id: nothing
        {"__typename": "Product", "id": "prod3"},  # a bare id, as user(id:) takes
        {"__typename": "User", "id": "USER#alice"},
    ]
    body = await gql(federated, ENTITIES, {"r": representations})
    assert "errors" not in body, body
    assert body["data"]["_entities"] == [
        {"__typename": "User", "id": "USER#bob", "name": "Bob"},
        {"__typename": "Group", "id": "GROUP#group1", "name": "Group 1"},
        None,
        None,
        {"__typename": "Product", "name": "Product 3"},
        {"__typename": "User", "id": "USER#alice", "name": "Alice"},
    ]
    trace = body["extensions"]["dynamodb"]
    assert (trace["operations"], trace["rounds"]) == ({"BatchGetItem": 1}, 1)


async def test_a_hundred_entities_cost_one_batch_get_in_one_round(
    federated: httpx.AsyncClient,
) -> None:
    """The figure the issue asks for: 100 representations, 1 request, 1 round."""
    representations = [{"__typename": "User", "id": f"USER#u{i}"} for i in range(98)] + [
        {"__typename": "User", "id": "USER#alice"},
        {"__typename": "Group", "id": "GROUP#group2"},
    ]
    body = await gql(federated, ENTITIES, {"r": representations})
    found = body["data"]["_entities"]
    assert found[:98] == [None] * 98
    assert [f["__typename"] for f in found[98:]] == ["User", "Group"]
    trace = body["extensions"]["dynamodb"]
    assert (trace["requests"], trace["rounds"], trace["operations"]) == (1, 1, {"BatchGetItem": 1})


@pytest.mark.parametrize(
    ("representation", "message"),
    [
        ({"__typename": "Office", "id": "o1"}, "not an entity of this subgraph"),
        ({"__typename": "User"}, "needs its id"),
        ({"__typename": "Ticket", "id": "bad id!"}, "invalid"),
        ("USER#alice", "an object with __typename and id"),
    ],
)
async def test_a_malformed_representation_is_bad_user_input_in_its_place(
    federated: httpx.AsyncClient, representation: Any, message: str
) -> None:
    good = {"__typename": "User", "id": "USER#alice"}
    body = await gql(federated, ENTITIES, {"r": [good, representation]})
    assert body["data"]["_entities"][0]["name"] == "Alice"
    assert body["data"]["_entities"][1] is None
    [error] = body["errors"]
    assert error["path"] == ["_entities", 1]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert message in error["message"]


async def test_entities_answer_an_unreadable_node_as_a_missing_one(demo: Table) -> None:
    """The demo's access rules, as bob: alice is readable (a member of his group), group2 is
    not (not his), exactly as node(id:) answers them."""
    app = create_app(
        Settings(federation=True), table=demo, authenticator=Authenticator(secret=SECRET)
    )
    representations = [
        {"__typename": "User", "id": "USER#alice"},
        {"__typename": "Group", "id": "GROUP#group2"},
        {"__typename": "Group", "id": "GROUP#group1"},
        {"__typename": "Group", "id": "GROUP#nope"},
    ]
    async with asgi(app) as client:
        response = await client.post(
            "/graphql",
            json={"query": ENTITIES, "variables": {"r": representations}},
            headers=bearer(hs256("bob")),
        )
        nodes = await client.post(
            "/graphql",
            json={"query": '{ node(id: "GROUP#group2") { id } }'},
            headers=bearer(hs256("bob")),
        )
    body = response.json()
    assert "errors" not in body, body
    assert body["data"]["_entities"] == [
        {"__typename": "User", "id": "USER#alice", "name": "Alice"},
        None,
        {"__typename": "Group", "id": "GROUP#group1", "name": "Group 1"},
        None,
    ]
    assert nodes.json() == {"data": {"node": None}}


SUPERGRAPH = [
    # starts in the reviews subgraph, crosses into Edgewise (its _entities), and back
    """{ reviews { body author { id name groups(first: 2) { totalCount
         edges { role node { name } } } reviews { body } } } }""",
    # starts in Edgewise, crosses into reviews (User.reviews), through a connection
    """{ group(id: "group1") { name members { edges { node { name reviews { body } } } } } }""",
]


async def test_apollo_gateway_composes_edgewise_with_another_subgraph(demo: Table) -> None:
    app = create_app(Settings(federation=True), table=demo)
    async with serve(app) as url:
        report = await run_node(
            "gateway.mjs",
            f"{url}/graphql",
            *(json.dumps({"query": q}) for q in SUPERGRAPH),
            folder=CLIENTS,
            seconds=120,
        )
    from_reviews, from_edgewise = report["results"]
    assert "errors" not in from_reviews, from_reviews
    alice = {
        "id": "USER#alice",
        "name": "Alice",
        "groups": {
            "totalCount": 2,
            "edges": [
                {"role": "OWNER", "node": {"name": "Group 1"}},
                {"role": "OWNER", "node": {"name": "Group 2"}},
            ],
        },
        "reviews": [{"body": "Alice's groups are well run"}, {"body": "Alice again"}],
    }
    reviews = from_reviews["data"]["reviews"]
    assert [r["body"] for r in reviews] == [
        "Alice's groups are well run",
        "Bob answers fast",
        "Alice again",
        "Nobody wrote this",
    ]
    assert reviews[0]["author"] == reviews[2]["author"] == alice
    assert reviews[1]["author"]["name"] == "Bob"
    assert reviews[3]["author"] is None  # a user Edgewise does not have
    assert "errors" not in from_edgewise, from_edgewise
    assert from_edgewise["data"]["group"] == {
        "name": "Group 1",
        "members": {
            "edges": [
                {
                    "node": {
                        "name": "Alice",
                        "reviews": [{"body": reviews[0]["body"]}, {"body": "Alice again"}],
                    }
                },
                {"node": {"name": "Bob", "reviews": [{"body": "Bob answers fast"}]}},
            ]
        },
    }
    # the gateway fetched the reviews' authors from Edgewise with one _entities call: every
    # user in one BatchGetItem, their groups' pages beside it, then the groups: two rounds
    [entities] = [c for c in report["edgewise"] if "_entities" in c["query"]]
    assert entities["dynamodb"]["rounds"] == 2
    assert entities["dynamodb"]["operations"]["BatchGetItem"] == 2
