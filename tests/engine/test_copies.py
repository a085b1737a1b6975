"""Copies of an end's fields on edge items (``copyOf``), on a model written only here: kept in
sync when the end changes (every edge item, also past one transaction's 100 items), and read
instead of the node when a selection under an edge asks for nothing else (one round less)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.keys import ItemKey
from graph.table import Item, Table
from model import ModelError, parse_model
from server.engine import engine_for
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.helpers import gql
from tests.tokens import SECRET, asgi, bearer, hs256

Serve = Callable[[str], Awaitable[httpx.AsyncClient]]

FLEET = """
table:
  name: fleet
  partitionKey: pk
  sortKey: sk
  typeAttribute: kind
  indexes:
    byTarget: {partitionKey: sk, sortKey: pk}
types:
  Sailor:
    key: "S#{id}"
    fields: {name: String!, rank: Int}
  Ship:
    key: "SH#{id}"
    fields: {name: String!, port: String, tonnage: Int!}
edges:
  SERVES_ON:
    from: Sailor
    to: Ship
    fields:
      since: Date
      shipName: {copyOf: to.name}
      port: {copyOf: to.port, type: String}
      sailorName: {copyOf: from.name}
    forward: ships
    reverse: {field: crew, index: byTarget}
"""

CREW = 120  # sailors on the big ship: more edges than one transaction holds


def sample(crew: int = 2) -> str:
    lines = [
        "nodes:",
        "  - {type: Ship, id: ark, name: Ark, port: Haifa, tonnage: 900}",
        "  - {type: Ship, id: big, name: Big, tonnage: 5000}",
        "  - {type: Sailor, id: ann, name: Ann, rank: 2}",
    ]
    lines += [f"  - {{type: Sailor, id: s{i}, name: S{i}}}" for i in range(crew)]
    lines += ["edges:", "  - {label: SERVES_ON, from: ann, to: ark, since: '2026-01-01'}"]
    lines += ["  - {label: SERVES_ON, from: ann, to: big}"]
    lines += [f"  - {{label: SERVES_ON, from: s{i}, to: big}}" for i in range(crew)]
    return "\n".join(lines) + "\n"


@pytest.fixture
async def http(model_http: Serve, tmp_path: Path) -> httpx.AsyncClient:
    (tmp_path / "fleet.yaml").write_text(FLEET)
    (tmp_path / "sample.yaml").write_text(sample())
    return await model_http(str(tmp_path / "fleet.yaml"))


@pytest.fixture
async def crowded(model_http: Serve, tmp_path: Path) -> httpx.AsyncClient:
    """The fleet with CREW sailors more on Big."""
    (tmp_path / "fleet.yaml").write_text(FLEET)
    (tmp_path / "sample.yaml").write_text(sample(CREW))
    return await model_http(str(tmp_path / "fleet.yaml"))


def _trace(body: dict[str, Any]) -> tuple[dict[str, int], int]:
    assert "errors" not in body, body
    trace = body["extensions"]["dynamodb"]
    return trace["operations"], trace["rounds"]


SHIPS = '{ sailor(id: "ann") { ships { edges { since node { %s } } } } }'


async def test_copied_fields_are_answered_from_the_edges_without_reading_the_nodes(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(http, SHIPS % "id __typename name port")
    edges = body["data"]["sailor"]["ships"]["edges"]
    assert [(e["since"], e["node"]) for e in edges] == [
        ("2026-01-01", {"id": "SH#ark", "__typename": "Ship", "name": "Ark", "port": "Haifa"}),
        (None, {"id": "SH#big", "__typename": "Ship", "name": "Big", "port": None}),
    ]
    # Big has no port: its edge has no copy, so that node alone is read
    floor = _trace(await gql(http, '{ sailor(id: "ann") { ships { edges { since } } } }'))
    assert floor == ({"BatchGetItem": 1, "Query": 1}, 1)  # the sailor and its edges
    assert _trace(await gql(http, SHIPS % "id name")) == floor

    # a fragment over copies only: still no read of the ships
    fragment = (
        '{ sailor(id: "ann") { ships { edges { node { ...S } } } } } fragment S on Ship { name }'
    )
    assert _trace(await gql(http, fragment)) == floor


async def test_an_access_pattern_over_edge_items_answers_from_their_copies(
    model_http: Serve,
) -> None:
    """order-entry's Employee.orders lists SOLD_BY edges, which copy the order's status and
    date: selecting only those reads no order."""
    http = await model_http("order-entry")
    query = '{ employee(id: "e1") { orders(status: OPEN) { edges { node { id %s } } } } }'
    floor = _trace(await gql(http, query.replace("node { id %s }", "cursor")))
    body = await gql(http, query % "status date")
    nodes = [e["node"] for e in body["data"]["employee"]["orders"]["edges"]]
    assert nodes and all(n["status"] == "OPEN" for n in nodes)
    assert _trace(body) == floor and floor[1] == 1
    full = await gql(http, query % "status date total")
    assert [{k: n[k] for k in ("id", "status", "date")} for n in _nodes(full)] == nodes
    operations, rounds = _trace(full)
    assert operations["BatchGetItem"] == floor[0]["BatchGetItem"] + 1 and rounds == 2


def _nodes(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["node"] for e in body["data"]["employee"]["orders"]["edges"]]


async def test_a_field_that_is_not_copied_reads_the_nodes(http: httpx.AsyncClient) -> None:
    body = await gql(http, SHIPS % "name tonnage")
    assert [e["node"] for e in body["data"]["sailor"]["ships"]["edges"]] == [
        {"name": "Ark", "tonnage": 900},
        {"name": "Big", "tonnage": 5000},
    ]
    read = ({"BatchGetItem": 2, "Query": 1}, 2)  # the sailor and its edges, then the ships
    assert _trace(body) == read
    # a copy that is null (no attribute on the edge) is read from the node too
    assert _trace(await gql(http, SHIPS % "port")) == read


async def test_reverse_edges_answer_from_copies_of_their_from_end(
    http: httpx.AsyncClient,
) -> None:
    query = '{ ship(id: "ark") { crew { edges { node { name } } } } }'
    body = await gql(http, query)
    assert [e["node"]["name"] for e in body["data"]["ship"]["crew"]["edges"]] == ["Ann"]
    assert _trace(body) == ({"BatchGetItem": 1, "Query": 1}, 1)
    body = await gql(http, query.replace("name", "name rank"))
    assert [e["node"] for e in body["data"]["ship"]["crew"]["edges"]] == [
        {"name": "Ann", "rank": 2}
    ]
    assert _trace(body) == ({"BatchGetItem": 2, "Query": 1}, 2)


ACCESS = """
access:
  principal: Sailor
  read:
    Sailor: [self, ships.crew]
    Ship: [ships]
"""


async def test_access_rules_still_apply_to_nodes_answered_from_copies(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    """As sailor s0 (on Big only), Ann's ships are Big alone, whether the names come from the
    edges or from the ships; Ann sees both."""
    (tmp_path / "fleet.yaml").write_text(FLEET + ACCESS)
    (tmp_path / "sample.yaml").write_text(sample())
    engine = engine_for(str(tmp_path / "fleet.yaml"))
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        await create_table(client.control, engine.table_name, layout=engine.layout)
        table = Table(client, engine.table_name, layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
        settings = Settings(model=str(tmp_path / "fleet.yaml"))
        app = create_app(settings, table=table, authenticator=Authenticator(secret=SECRET))
        async with asgi(app) as http:

            async def ships(principal: str, selection: str) -> list[Any]:
                response = await http.post(
                    "/graphql", json={"query": SHIPS % selection}, headers=bearer(hs256(principal))
                )
                body = response.json()
                assert "errors" not in body, body
                return [e["node"] for e in body["data"]["sailor"]["ships"]["edges"]]

            assert await ships("s0", "name") == [{"name": "Big"}]
            assert await ships("s0", "name tonnage") == [{"name": "Big", "tonnage": 5000}]
            assert await ships("ann", "name") == [{"name": "Ark"}, {"name": "Big"}]


UPDATE = "mutation($input: UpdateShipInput!) { updateShip(input: $input) { name port } }"


async def _edge_item(dynamodb: EmbeddedDynamoDB, model: Path, sailor: str, ship: str) -> Item:
    """The stored SERVES_ON item, read apart from the app."""
    engine = engine_for(str(model))
    async with open_client(Endpoint(dynamodb.url)) as client:
        table = Table(client, engine.table_name, layout=engine.layout)
        item = await table.get_item(ItemKey(f"S#{sailor}", f"SH#{ship}"))
    assert item is not None
    return item


async def test_an_update_of_the_source_rewrites_every_copy(
    http: httpx.AsyncClient, dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    model = tmp_path / "fleet.yaml"
    before = await _edge_item(dynamodb, model, "ann", "ark")
    assert (before["shipName"], before["port"], before["sailorName"]) == ("Ark", "Haifa", "Ann")
    body = await gql(http, UPDATE, {"input": {"id": "ark", "name": "Ark II", "port": None}})
    assert body["data"]["updateShip"] == {"name": "Ark II", "port": None}
    after = await _edge_item(dynamodb, model, "ann", "ark")
    assert after == {k: v for k, v in before.items() if k != "port"} | {"shipName": "Ark II"}
    body = await gql(http, SHIPS % "name port")
    assert body["data"]["sailor"]["ships"]["edges"][0]["node"] == {"name": "Ark II", "port": None}
    edges = await gql(http, '{ sailor(id: "ann") { ships { edges { shipName port } } } }')
    assert edges["data"]["sailor"]["ships"]["edges"][0] == {"shipName": "Ark II", "port": None}


async def test_copies_past_one_transaction_are_written_in_more(
    crowded: httpx.AsyncClient,
) -> None:
    # CREW + 1 edges: the node and 99 edges in one transaction, the rest in a second one
    body = await gql(crowded, UPDATE, {"input": {"id": "big", "name": "Bigger", "port": "Oslo"}})
    assert "errors" not in body, body
    body = await gql(
        crowded,
        '{ ship(id: "big") { crew(first: 100) { pageInfo { endCursor } '
        "edges { shipName port } } } }",
    )
    crew = body["data"]["ship"]["crew"]
    assert len(crew["edges"]) == 100
    assert {(e["shipName"], e["port"]) for e in crew["edges"]} == {("Bigger", "Oslo")}
    after = crew["pageInfo"]["endCursor"]
    body = await gql(
        crowded,
        'query($a: String) { ship(id: "big") { crew(first: 100, after: $a) '
        "{ edges { shipName port } } } }",
        {"a": after},
    )
    rest = body["data"]["ship"]["crew"]["edges"]
    assert len(rest) == CREW + 1 - 100
    assert {(e["shipName"], e["port"]) for e in rest} == {("Bigger", "Oslo")}


async def test_an_update_of_the_from_end_rewrites_its_copies(http: httpx.AsyncClient) -> None:
    mutation = "mutation($input: UpdateSailorInput!) { updateSailor(input: $input) { name } }"
    body = await gql(http, mutation, {"input": {"id": "ann", "name": "Anne"}})
    assert body["data"]["updateSailor"] == {"name": "Anne"}
    body = await gql(http, '{ ship(id: "ark") { crew { edges { sailorName node { name } } } } }')
    assert body["data"]["ship"]["crew"]["edges"] == [
        {"sailorName": "Anne", "node": {"name": "Anne"}}
    ]
    # the other end's copies on those edges are untouched
    body = await gql(http, SHIPS % "name port")
    assert [e["node"]["name"] for e in body["data"]["sailor"]["ships"]["edges"]] == ["Ark", "Big"]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "port: {copyOf: to.port, type: String}",
            "port: {copyOf: to.port, type: Int}",
            "edges.SERVES_ON.fields.port.type (line 23): a copy has its source's type: "
            "to.port is String, not Int",
        ),
        (
            "shipName: {copyOf: to.name}",
            "shipName: {copyOf: to.title}",
            "edges.SERVES_ON.fields.shipName.copyOf (line 22): to.title is not a field of an end",
        ),
        (
            "    byTarget: {partitionKey: sk, sortKey: pk}\n",
            "    other: {partitionKey: x, sortKey: y}\n",
            "edges.SERVES_ON.fields.shipName.copyOf (line 22): to.name cannot be kept in sync: "
            "no index lists a Ship's incoming SERVES_ON edges",
        ),
    ],
)
def test_check_model_rejects_copies_it_cannot_keep(old: str, new: str, expected: str) -> None:
    assert old in FLEET
    text = FLEET.replace(old, new).replace("    reverse: {field: crew, index: byTarget}\n", "")
    with pytest.raises(ModelError) as raised:
        parse_model(text, "fleet.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines
