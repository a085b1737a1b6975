"""The demo model's hooks (models/demo/hooks.py), served by the engine from the demo model file
over ASGI on the demo data: the answers, the items written, the DynamoDB costs and the error
codes the hand-written demo had (which they replaced)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from graph.items import Codec
from graph.mutate import Writer
from graph.table import Table
from model import load_model
from model.load import model_path
from server.app import create_app
from server.auth import Authenticator
from server.settings import Settings
from tests.helpers import gql
from tests.table_state import problems, scan
from tests.tokens import SECRET, bearer, hs256

MODEL = str(model_path("demo"))  # a path, so the engine (not the hand-written demo) serves it
ADMIN, BOB, ALICE = "root", "bob", "alice"  # who asks: a token made for each request

PRODUCTS = "query($u: ID!) { user(id: $u) { products { product { id name } via { id } } } }"
ACCESS = "query($u: ID!, $p: ID!) { node(id: $u) { ... on User { hasAccess(productId: $p) } } }"
OPEN = """mutation($u: ID!, $t: String!) { openTicket(userId: $u, title: $t) {
    __typename id title status createdAt author { id name } } }"""
CLOSE = "mutation($id: ID!) { closeTicket(id: $id) { id title status createdAt author { id } } }"
LISTED = "query($s: TicketStatus!) { tickets(status: $s) { totalCount edges { node { id } } } }"
ADD_OFFICE = """mutation($o: ID!, $c: String!, $s: String!, $t: String!, $z: String!,
    $a: String) { addOffice(organizationId: $o, country: $c, state: $s, city: $t, zip: $z,
    address: $a) { __typename cursor node { id country state city zip address } } }"""
OFFICES = """query($o: ID!, $c: String) { organization(id: $o) { offices(country: $c) {
    totalCount edges { cursor node { id } } } } }"""
REMOVE_OFFICE = "mutation($o: ID!, $id: ID!) { removeOffice(organizationId: $o, officeId: $id) }"
CANCEL = """mutation { cancelSubscription(groupId: "group1", productId: "PRODUCT#prod1") {
    __typename cursor plan status validUntil node { id } } }"""


@pytest.fixture
async def engine(demo: Table) -> AsyncIterator[httpx.AsyncClient]:
    """The engine serving the demo model file on the demo table; a JWT says who asks."""
    app = create_app(Settings(model=MODEL), table=demo, authenticator=Authenticator(secret=SECRET))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
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


def cost(body: dict[str, Any]) -> tuple[dict[str, int], int]:
    trace = body["extensions"]["dynamodb"]
    return trace["operations"], trace["rounds"]


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


async def test_open_ticket_writes_the_node_the_edge_and_the_sharded_index_keys(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    body = await as_(engine, ADMIN, OPEN, u="USER#alice", t="Printer on fire")
    ticket = ok(body)["openTicket"]
    assert cost(body)[0].get("TransactWriteItems") == 1
    assert ticket["__typename"] == "Ticket"
    assert (ticket["title"], ticket["status"]) == ("Printer on fire", "OPEN")
    assert ticket["author"] == {"id": "USER#alice", "name": "Alice"}
    key = ticket["id"]
    assert re.fullmatch(r"TICKET#[0-9A-HJKMNP-TV-Z]{26}", key)
    items = await scan(demo)
    item = items[key, key]
    at = item["createdAt"]
    assert ticket["createdAt"].startswith(at[:19])
    assert re.fullmatch(r"TICKET#OPEN#[0-7]", item["GSI2PK"])
    assert item == {  # exactly the demo's ticket
        "PK": key,
        "SK": key,
        "type": "TICKET",
        "version": 1,
        "createdAt": at,
        "updatedAt": at,
        "title": "Printer on fire",
        "status": "OPEN",
        "author": "USER#alice",
        "n_OPENED_in": 1,
        "GSI2PK": item["GSI2PK"],
        "GSI2SK": f"{at}#{key.removeprefix('TICKET#')}",
    }
    assert items["USER#alice", key] == {"PK": "USER#alice", "SK": key, "edge": "OPENED"}
    assert items["USER#alice", "USER#alice"]["n_OPENED"] == 1
    assert problems(items) == []
    read = await as_(
        engine, ADMIN, "query($id: ID!) { ticket(id: $id) { title author { name } } }", id=key
    )
    assert ok(read)["ticket"] == {"title": "Printer on fire", "author": {"name": "Alice"}}


async def test_shards_spread_tickets_over_the_eight_partitions(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    for i in range(12):
        ok(await as_(engine, ADMIN, OPEN, u="bob", t=f"t{i}"))
    items = await scan(demo)
    shards = {item["GSI2PK"] for item in items.values() if item.get("type") == "TICKET"}
    assert shards <= {f"TICKET#OPEN#{i}" for i in range(8)}
    assert len(shards) >= 3  # a hash of the id, not one hot partition
    assert items["USER#bob", "USER#bob"]["n_OPENED"] == 12
    assert ok(await as_(engine, ADMIN, LISTED, s="OPEN"))["tickets"]["totalCount"] == 12


async def test_close_ticket_moves_it_to_the_closed_partition_of_the_same_item(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    ticket = ok(await as_(engine, ADMIN, OPEN, u="bob", t="Broken"))["openTicket"]
    before = await scan(demo)
    body = await as_(engine, ADMIN, CLOSE, id=ticket["id"].removeprefix("TICKET#"))
    closed = ok(body)["closeTicket"]
    assert closed == {
        "id": ticket["id"],
        "title": "Broken",
        "status": "CLOSED",
        "createdAt": ticket["createdAt"],
        "author": {"id": "USER#bob"},
    }
    assert cost(body) == ({"GetItem": 1, "UpdateItem": 1}, 2)
    after = await scan(demo)
    assert after.keys() == before.keys()  # the same item, moved on the index
    old, new = before[ticket["id"], ticket["id"]], after[ticket["id"], ticket["id"]]
    assert new["GSI2PK"] == old["GSI2PK"].replace("#OPEN#", "#CLOSED#")
    assert {k for k in new if new[k] != old.get(k)} == {"status", "GSI2PK", "version", "updatedAt"}
    assert new["version"] == 2
    assert ok(await as_(engine, ADMIN, LISTED, s="OPEN"))["tickets"]["totalCount"] == 0
    listed = ok(await as_(engine, ADMIN, LISTED, s="CLOSED"))["tickets"]
    assert listed == {"totalCount": 1, "edges": [{"node": {"id": ticket["id"]}}]}

    again = await as_(engine, ADMIN, CLOSE, id=ticket["id"])  # closing a closed ticket: a no-op
    assert ok(again)["closeTicket"] == closed
    assert cost(again) == ({"GetItem": 1}, 1)
    assert await scan(demo) == after
    assert problems(after) == []


async def test_users_open_and_close_only_their_own_tickets(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    before = await scan(demo)
    body = await as_(engine, BOB, OPEN, u="alice", t="On her behalf")
    assert (codes(body), body["data"]) == (["FORBIDDEN"], None)
    assert await scan(demo) == before
    mine = ok(await as_(engine, BOB, OPEN, u="bob", t="Mine"))["openTicket"]
    assert mine["author"]["id"] == "USER#bob"
    assert codes(await as_(engine, ALICE, CLOSE, id=mine["id"])) == ["FORBIDDEN"]
    assert ok(await as_(engine, BOB, CLOSE, id=mine["id"]))["closeTicket"]["status"] == "CLOSED"


# ---- offices -------------------------------------------------------------------------------

LOCATIONS = [
    ("US", "WA", "Redmond", "98052"),
    ("US", "WA", "Seattle", "98101"),
    ("USA", "WA", "Redmond", "98052"),
]


async def add_offices(engine: httpx.AsyncClient) -> list[dict[str, Any]]:
    added = []
    for i, (country, state, city, zip_) in enumerate(LOCATIONS):
        variables = {"o": "microsoft", "c": country, "s": state, "t": city, "z": zip_}
        body = await as_(engine, ADMIN, ADD_OFFICE, **variables, a=f"{i} Main St")
        assert cost(body) == ({"TransactWriteItems": 1}, 1)
        added.append(ok(body)["addOffice"])
    location = {"c": "US", "s": "WA", "t": "Seattle", "z": "98109", "a": None}
    ok(await as_(engine, ADMIN, ADD_OFFICE, o="ORG#amazon", **location))
    return added


async def test_add_office_stores_it_under_the_composite_key_and_counts_it(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    offices = await add_offices(engine)
    edge = offices[0]
    assert edge["__typename"] == "OfficeEdge"
    node = edge["node"]
    assert node == {
        "id": node["id"],
        "country": "US",
        "state": "WA",
        "city": "Redmond",
        "zip": "98052",
        "address": "0 Main St",
    }
    items = await scan(demo)
    key = ("ORG#microsoft", f"OFFICE#US#WA#Redmond#98052#{node['id']}")
    assert items[key] == {  # exactly the demo's office
        "PK": key[0],
        "SK": key[1],
        "type": "OFFICE",
        "id": node["id"],
        "country": "US",
        "state": "WA",
        "city": "Redmond",
        "zip": "98052",
        "address": "0 Main St",
    }
    assert items["ORG#microsoft", "ORG#microsoft"]["n_OFFICE"] == len(LOCATIONS)
    assert items["ORG#amazon", "ORG#amazon"]["n_OFFICE"] == 1
    assert len({o["node"]["id"] for o in offices}) == len(LOCATIONS)
    assert problems(items) == []
    # each returned cursor is the one the organization's offices list it with
    listed = ok(await as_(engine, ADMIN, OFFICES, o="microsoft"))["organization"]["offices"]
    assert listed["totalCount"] == len(LOCATIONS)
    assert {(e["cursor"], e["node"]["id"]) for e in listed["edges"]} == {
        (o["cursor"], o["node"]["id"]) for o in offices
    }


async def test_remove_office_is_true_then_false_and_uncounts(
    demo: Table, engine: httpx.AsyncClient
) -> None:
    office = (await add_offices(engine))[1]["node"]["id"]
    before = await scan(demo)
    # another organization's office is not there
    assert ok(await as_(engine, ADMIN, REMOVE_OFFICE, o="amazon", id=office)) == {
        "removeOffice": False
    }
    assert await scan(demo) == before
    body = await as_(engine, ADMIN, REMOVE_OFFICE, o="ORG#microsoft", id=office)
    assert ok(body) == {"removeOffice": True}
    assert cost(body) == ({"Query": 1, "TransactWriteItems": 1}, 2)
    after = await scan(demo)
    assert set(before) - set(after) == {("ORG#microsoft", f"OFFICE#US#WA#Seattle#98101#{office}")}
    assert after["ORG#microsoft", "ORG#microsoft"]["n_OFFICE"] == len(LOCATIONS) - 1
    assert problems(after) == []
    for org in ("microsoft", "noorg"):
        body = await as_(engine, ADMIN, REMOVE_OFFICE, o=org, id=office)
        assert ok(body) == {"removeOffice": False}
    assert await scan(demo) == after
    listed = ok(await as_(engine, ADMIN, OFFICES, o="microsoft", c="US"))["organization"]
    assert listed["offices"]["totalCount"] == 1


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
