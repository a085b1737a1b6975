"""The demo model's hooks (models/demo/hooks.py), served by the engine from the demo model file
over ASGI on the demo data: the answers, the items written, the DynamoDB costs and the error
codes the hand-written demo had (which they replaced)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from graph.items import Codec
from graph.table import Table
from graph.writes.writer import Writer
from model import load_model
from model.load import model_path
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.helpers import cost, gql
from tests.table_state import scan
from tests.tokens import SECRET, bearer, hs256

MODEL = str(model_path("demo"))  # the demo, served from its file path
ADMIN, BOB, ALICE = "root", "bob", "alice"  # who asks: a token made for each request

PRODUCTS = "query($u: ID!) { user(id: $u) { products { product { id name } via { id } } } }"
ACCESS = "query($u: ID!, $p: ID!) { node(id: $u) { ... on User { hasAccess(productId: $p) } } }"
OPEN = """mutation($u: ID!, $t: String!) { openTicket(userId: $u, title: $t) {
    __typename id title status createdAt author { id name } } }"""
CLOSE = "mutation($id: ID!) { closeTicket(id: $id) { id title status createdAt author { id } } }"
CANCEL = """mutation { cancelSubscription(groupId: "group1", productId: "PRODUCT#prod1") {
    __typename cursor plan status validUntil node { id } } }"""


def serve(demo: Table, explain: bool = False) -> httpx.AsyncClient:
    settings = Settings(model=MODEL, explain_forbidden=explain)
    app = create_app(settings, table=demo, authenticator=Authenticator(secret=SECRET))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://edgewise")


@pytest.fixture
async def engine(demo: Table) -> AsyncIterator[httpx.AsyncClient]:
    """The engine serving the demo model file on the demo table; a JWT says who asks."""
    async with serve(demo) as client:
        yield client


@pytest.fixture
async def explaining(demo: Table) -> AsyncIterator[httpx.AsyncClient]:
    """The same under --explain-forbidden."""
    async with serve(demo, explain=True) as client:
        yield client


async def as_(client: httpx.AsyncClient, who: str, query: str, **variables: Any) -> dict[str, Any]:
    token = hs256(who, roles=["admin"] if who == ADMIN else [])
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={**bearer(token), "Edgewise-Trace": "1"},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def ok(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body["errors"]
    data: dict[str, Any] = body["data"]
    return data


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


# ---- products and hasAccess ----------------------------------------------------------------

READS = [
    (PRODUCTS, {"u": "alice"}),
    (PRODUCTS, {"u": "USER#bob"}),
    (PRODUCTS, {"u": "billgates"}),
    (ACCESS, {"u": "USER#alice", "p": "prod3"}),
    (ACCESS, {"u": "USER#bob", "p": "prod3"}),
    (ACCESS, {"u": "USER#bob", "p": "PRODUCT#prod2"}),
    (ACCESS, {"u": "USER#bob", "p": "GROUP#prod2"}),
    (ACCESS, {"u": "USER#nobody", "p": "prod1"}),
    (ACCESS, {"u": "USER#bob", "p": "a b"}),
]


async def test_products_and_has_access_answer_as_the_demo_does(
    http: httpx.AsyncClient, engine: httpx.AsyncClient
) -> None:
    answers = [(await gql(http, query, variables)) for query, variables in READS]
    served = [(await as_(engine, ADMIN, query, **variables)) for query, variables in READS]
    assert [a.get("data") for a in answers] == [s.get("data") for s in served]
    assert [codes(a) for a in answers] == [codes(s) for s in served]
    assert ok(served[0])["user"]["products"][1] == {
        "product": {"id": "PRODUCT#prod2", "name": "Product 2"},
        "via": [{"id": "GROUP#group1"}, {"id": "GROUP#group2"}],
    }
    assert codes(served[-1]) == ["BAD_USER_INPUT"]


async def test_products_and_has_access_cost_what_the_demo_does(
    http: httpx.AsyncClient, engine: httpx.AsyncClient
) -> None:
    queries = [
        '{ user(id: "alice") { products { product { id } via { id } } } }',
        '{ user(id: "alice") { hasAccess(productId: "prod3") } }',
    ]
    served = [cost(await as_(engine, ADMIN, query)) for query in queries]
    assert served == [cost(await gql(http, query)) for query in queries]


async def test_canceled_or_expired_subscriptions_grant_no_access(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    subscription = {"edge": "SUBSCRIBES_TO", "plan": "x"}
    await demo.batch_write(
        [
            {"PK": "GROUP#group2", "SK": "PRODUCT#prod3", **subscription, "status": "CANCELED"},
            {
                "PK": "GROUP#group1",
                "SK": "PRODUCT#prod1",
                **subscription,
                "status": "ACTIVE",
                "validUntil": "2001-01-01T00:00:00Z",
            },
            {
                "PK": "GROUP#group1",
                "SK": "PRODUCT#prod2",
                **subscription,
                "status": "ACTIVE",
                "validUntil": "2999-01-01T00:00:00Z",
            },
        ]
    )
    products = ok(await as_(engine, ADMIN, PRODUCTS, u="alice"))["user"]["products"]
    assert [(p["product"]["id"], [g["id"] for g in p["via"]]) for p in products] == [
        ("PRODUCT#prod2", ["GROUP#group1", "GROUP#group2"])
    ]
    access = await as_(engine, ADMIN, ACCESS, u="USER#alice", p="prod1")
    assert ok(access)["node"] == {"hasAccess": False}


# ---- cancelSubscription --------------------------------------------------------------------


async def test_cancel_subscription_returns_the_canceled_edge_and_revokes_access(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    before = await scan(demo)
    body = await as_(engine, ADMIN, CANCEL)
    edge = ok(body)["cancelSubscription"]
    assert cost(body) == ({"UpdateItem": 1}, 1)  # the demo: a transaction, then a GetItem
    assert edge["__typename"] == "GroupSubscriptionEdge"
    assert (edge["plan"], edge["status"], edge["validUntil"], edge["node"]) == (
        "standard",
        "CANCELED",
        None,
        {"id": "PRODUCT#prod1"},
    )
    after = await scan(demo)
    assert after["GROUP#group1", "PRODUCT#prod1"]["status"] == "CANCELED"
    # the edge stays, so no counter moves
    assert {k for k in before if before[k] != after[k]} == {("GROUP#group1", "PRODUCT#prod1")}
    access = await as_(engine, ADMIN, ACCESS, u="USER#bob", p="prod1")
    assert ok(access)["node"] == {"hasAccess": False}
    # the edge's cursor is the one the group's subscriptions list it with
    listed = await as_(
        engine,
        ADMIN,
        '{ group(id: "group1") { subscriptions { edges { cursor status node { id } } } } }',
    )
    edges = ok(listed)["group"]["subscriptions"]["edges"]
    assert {"cursor": edge["cursor"], "status": "CANCELED", "node": edge["node"]} in edges


# ---- tickets -------------------------------------------------------------------------------


@pytest.mark.parametrize("explain", [False, True])
async def test_users_open_and_close_only_their_own_tickets(
    demo: Table, engine: httpx.AsyncClient, explaining: httpx.AsyncClient, explain: bool
) -> None:
    engine = explaining if explain else engine
    before = await scan(demo)
    body = await as_(engine, BOB, OPEN, u="alice", t="On her behalf")
    assert (codes(body), body["data"]) == (["FORBIDDEN"], None)
    assert await scan(demo) == before
    mine = ok(await as_(engine, BOB, OPEN, u="bob", t="Mine"))["openTicket"]
    assert mine["author"]["id"] == "USER#bob"
    # she may not read it: as if there were none, unless the reason is explained
    refused = ["FORBIDDEN"] if explain else ["NOT_FOUND"]
    assert codes(await as_(engine, ALICE, CLOSE, id=mine["id"])) == refused
    assert ok(await as_(engine, BOB, CLOSE, id=mine["id"]))["closeTicket"]["status"] == "CLOSED"


# ---- failures ------------------------------------------------------------------------------

FAILURES = {
    "subscription": [
        (ADMIN, 'cancelSubscription(groupId: "group1", productId: "prod3") { status }',
         "NOT_FOUND"),
        (ADMIN, 'cancelSubscription(groupId: "nogroup", productId: "prod1") { status }',
         "NOT_FOUND"),
        (ADMIN, 'cancelSubscription(groupId: "group1", productId: "USER#prod1") { status }',
         "NOT_FOUND"),
        (ADMIN, 'cancelSubscription(groupId: "group 1", productId: "prod1") { status }',
         "BAD_USER_INPUT"),
        (BOB, 'cancelSubscription(groupId: "group1", productId: "prod1") { cursor }',
         "FORBIDDEN"),
    ],
    "tickets": [
        (ADMIN, 'openTicket(userId: "nobody", title: "t") { id }', "NOT_FOUND"),
        (ADMIN, 'openTicket(userId: "GROUP#group1", title: "t") { id }', "NOT_FOUND"),
        (ADMIN, 'openTicket(userId: "alice", title: "") { id }', "BAD_USER_INPUT"),
        (ADMIN, 'openTicket(userId: "alice", title: "   ") { id }', "BAD_USER_INPUT"),
        (ADMIN, f'openTicket(userId: "alice", title: "{"x" * 501}") {{ id }}', "BAD_USER_INPUT"),
        (ADMIN, 'closeTicket(id: "noticket") { id }', "NOT_FOUND"),
        (ADMIN, 'closeTicket(id: "USER#alice") { id }', "NOT_FOUND"),
        (ADMIN, 'closeTicket(id: "no ticket") { id }', "BAD_USER_INPUT"),
    ],
    "offices": [
        (ADMIN, 'addOffice(organizationId: "noorg", country: "US", state: "WA", city: "S", '
         'zip: "1") { cursor }', "NOT_FOUND"),
        (ADMIN, 'addOffice(organizationId: "GROUP#group1", country: "US", state: "WA", '
         'city: "S", zip: "1") { cursor }', "NOT_FOUND"),
        (ADMIN, 'addOffice(organizationId: "amazon", country: "U#S", state: "WA", city: "S", '
         'zip: "1") { cursor }', "BAD_USER_INPUT"),
        (ADMIN, 'addOffice(organizationId: "amazon", country: "US", state: "", city: "S", '
         'zip: "1") { cursor }', "BAD_USER_INPUT"),
        (ADMIN, f'addOffice(organizationId: "amazon", country: "US", state: "WA", '
         f'city: "{"S" * 65}", zip: "1") {{ cursor }}', "BAD_USER_INPUT"),
        (ADMIN, 'removeOffice(organizationId: "a b", officeId: "x")', "BAD_USER_INPUT"),
        (ADMIN, 'removeOffice(organizationId: "GROUP#group1", officeId: "x")', "NOT_FOUND"),
        (BOB, 'addOffice(organizationId: "microsoft", country: "US", state: "WA", city: "S", '
         'zip: "1") { cursor }', "FORBIDDEN"),
        (BOB, 'removeOffice(organizationId: "microsoft", officeId: "x")', "FORBIDDEN"),
    ],
}  # fmt: skip


@pytest.mark.parametrize("theme", FAILURES)
async def test_a_failed_mutation_has_its_code_and_leaves_the_table_exactly_as_it_was(
    demo: Table, engine: httpx.AsyncClient, theme: str
) -> None:
    before = await scan(demo)
    wrong = []
    for who, mutation, code in FAILURES[theme]:
        body = await as_(engine, who, f"mutation {{ {mutation} }}")
        if codes(body) != [code] or body.get("data") is not None:
            wrong.append(f"{mutation}: expected {code}, got {body}")
    assert wrong == []
    assert await scan(demo) == before


# ---- the Writer's building blocks beyond the demo ------------------------------------------


async def test_update_edge_refuses_a_field_an_index_key_of_the_edge_is_made_of() -> None:
    codec = Codec(load_model("order-entry"))
    writer = Writer(Table(None, "order-entry", layout=codec.layout), codec)  # no client needed
    types, sold_by = codec.model.types, codec.model.edges["SOLD_BY"]
    order, rep = codec.by_id(types["Order"], "o1"), codec.by_id(types["Employee"], "e1")
    assert order is not None and rep is not None
    with pytest.raises(ValueError, match=r"SOLD_BY's index keys use \['status'\]"):
        await writer.update_edge(sold_by, order, rep, {"status": "SHIPPED"})
    assert writer.table.trace.requests == 0  # refused before anything is sent
