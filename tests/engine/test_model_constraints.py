"""What a model file says about writes, on a model written only here: a unique field's claim
item (its owner attribute and type value), field constraints (`length`, `format: email`,
non-null) checked on every mutation, and `one: true` edge ends (conditioned on the counter in the
same transaction when the edge is counted, else read first). Also the demo's sample data."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.dynamo.client import Endpoint, client_config, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.items import Codec
from graph.table import RetryPolicy, Table
from model import load_model
from models.demo.generate import demo_items
from server.engine import DEMO, Engine, engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT, gql
from tests.table_state import SerialDynamoDB, scan

Serve = Callable[[str], Awaitable[httpx.AsyncClient]]

CLUBS = """
table:
  name: clubs
  typeAttribute: kind
  versionAttribute: version
  indexes:
    inverted: {partitionKey: SK, sortKey: PK}
enums:
  Role: [CHAIR, MEMBER]
types:
  Person:
    key: "P#{id}"
    fields:
      name: {type: String!, length: [1, 10]}
      email:
        type: String
        format: email
        unique: {key: "MAIL#{email}", caseInsensitive: true, owner: person, typeValue: MAIL}
  Club:
    key: "C#{id}"
    fields:
      name: String!
edges:
  JOINED:
    from: Club
    to: Person
    fields:
      role: {type: Role!, default: MEMBER}
      nickname: {type: String, length: [1, 5]}
    forward: members
    reverse: {field: club, index: inverted, one: true}
    count: counter
  MENTORS:
    from: Club
    to: Person
    forward: mentees
    reverse: {field: mentorClub, index: inverted, one: true}
  HEADS:
    from: Person
    to: Club
    forward: {field: heads, one: true}
    reverse: {field: chairs, index: inverted}
    count: counter
"""

SAMPLE = """
nodes:
  - {type: Person, id: ann, name: Ann, email: ann@example.com}
  - {type: Person, id: bo, name: Bo}
  - {type: Club, id: chess, name: Chess}
  - {type: Club, id: go, name: Go}
  - {type: Club, id: c0, name: C0}
  - {type: Club, id: c1, name: C1}
  - {type: Club, id: c2, name: C2}
  - {type: Club, id: c3, name: C3}
"""


@pytest.fixture
def model_file(tmp_path: Path) -> str:
    (tmp_path / "clubs.yaml").write_text(CLUBS)
    (tmp_path / "sample.yaml").write_text(SAMPLE)
    return str(tmp_path / "clubs.yaml")


@pytest.fixture
async def http(model_http: Serve, model_file: str) -> httpx.AsyncClient:
    return await model_http(model_file)


@pytest.fixture
async def table(dynamodb: EmbeddedDynamoDB, http: httpx.AsyncClient) -> AsyncIterator[Table]:
    async with open_client(Endpoint(dynamodb.url)) as client:
        yield Table(client, "clubs", layout=DEMO_LAYOUT)


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


def operations(body: dict[str, Any]) -> dict[str, int]:
    found: dict[str, int] = body["extensions"]["dynamodb"]["operations"]
    return found


async def test_a_claim_item_holds_its_owner_in_the_named_attribute_with_its_type_value(
    http: httpx.AsyncClient, table: Table, model_file: str
) -> None:
    claim = (await scan(table))["MAIL#ann@example.com", "MAIL#ann@example.com"]
    assert claim == {
        "PK": "MAIL#ann@example.com",
        "SK": "MAIL#ann@example.com",
        "kind": "MAIL",
        "person": "P#ann",
    }
    codec = Codec(load_model(model_file))
    assert codec.node_type(claim) is None and codec.edge_type(claim) is None
    found = await gql(http, '{ personByEmail(email: "ANN@Example.com") { id } }')
    assert found["data"] == {"personByEmail": {"id": "P#ann"}}
    node = await gql(http, '{ node(id: "MAIL#ann@example.com") { id } }')
    assert node["data"] == {"node": None}
    taken = await gql(
        http, 'mutation { createPerson(input: {name: "A", email: "Ann@example.COM"}) { id } }'
    )
    assert codes(taken) == ["CONFLICT"]
    moved = await gql(
        http, 'mutation { updatePerson(input: {id: "bo", email: "Bo@example.com"}) { id } }'
    )
    assert moved["data"] == {"updatePerson": {"id": "P#bo"}}
    items = await scan(table)
    assert items["MAIL#bo@example.com", "MAIL#bo@example.com"]["person"] == "P#bo"


# (mutation, what its BAD_USER_INPUT message says)
VIOLATIONS = [
    ('createPerson(input: {name: "   "}) { id }', "name must be 1 to 10 characters"),
    ('createPerson(input: {name: ""}) { id }', "name must be 1 to 10 characters"),
    ('createPerson(input: {name: "Elevenchars"}) { id }', "name must be 1 to 10 characters"),
    (
        'createPerson(input: {name: "Cy", email: "cy-at-example"}) { id }',
        "invalid email 'cy-at-example': expected name@domain.tld",
    ),
    (
        'createPerson(input: {name: "Cy", email: "c y@example.com"}) { id }',
        "invalid email 'c y@example.com': expected name@domain.tld",
    ),
    (
        f'createPerson(input: {{name: "Cy", email: "{"c" * 250}@x.io"}}) {{ id }}',
        "expected name@domain.tld",
    ),
    ('updatePerson(input: {id: "bo", name: null}) { id }', "name cannot be null"),
    ('updatePerson(input: {id: "bo", name: " "}) { id }', "name must be 1 to 10 characters"),
    ('updatePerson(input: {id: "bo", email: "bo@"}) { id }', "invalid email 'bo@'"),
    (
        'addJoined(clubId: "chess", personId: "bo", nickname: "toolong") { role }',
        "nickname must be 1 to 5 characters",
    ),
]


async def test_a_value_against_a_constraint_is_bad_user_input_and_writes_nothing(
    http: httpx.AsyncClient, table: Table
) -> None:
    wrong = []
    before = await scan(table)
    for mutation, message in VIOLATIONS:
        body = await gql(http, f"mutation {{ {mutation} }}")
        if codes(body) != ["BAD_USER_INPUT"] or message not in body["errors"][0]["message"]:
            wrong.append(f"{mutation}: expected {message!r}, got {body}")
    assert wrong == []
    assert await scan(table) == before


async def test_constraints_let_a_good_value_through(http: httpx.AsyncClient) -> None:
    body = await gql(
        http,
        'mutation { createPerson(input: {id: "cy", name: " Ten chars", '
        'email: "Cy@Example.io"}) { name email } }',
    )
    assert body["data"] == {"createPerson": {"name": " Ten chars", "email": "Cy@Example.io"}}
    body = await gql(
        http, 'mutation { addJoined(clubId: "go", personId: "cy", nickname: "c") { nickname } }'
    )
    assert body["data"] == {"addJoined": {"nickname": "c"}}


async def test_a_counted_one_end_is_conditioned_on_its_counter_in_the_same_transaction(
    http: httpx.AsyncClient, table: Table
) -> None:
    join = 'mutation($c: ID!) { addJoined(clubId: $c, personId: "bo", role: null) { role } }'
    first = await gql(http, join, {"c": "chess"})
    assert first["data"] == {"addJoined": {"role": "MEMBER"}}  # null: the default
    second = await gql(http, join, {"c": "go"})
    assert codes(second) == ["CONFLICT"]
    assert "Person.club is one" in second["errors"][0]["message"]
    assert operations(second) == {"TransactWriteItems": 1}  # no read before the write
    left = await gql(http, 'mutation { removeJoined(clubId: "chess", personId: "bo") }')
    assert left["data"] == {"removeJoined": True}
    again = await gql(http, join, {"c": "go"})
    assert again["data"] == {"addJoined": {"role": "MEMBER"}}
    club = await gql(http, '{ person(id: "bo") { club { id } } }')
    assert club["data"] == {"person": {"club": {"id": "C#go"}}}
    assert (await scan(table))["P#bo", "P#bo"]["n_JOINED_in"] == 1
    missing = await gql(http, 'mutation { addJoined(clubId: "go", personId: "nobody") { role } }')
    assert codes(missing) == ["NOT_FOUND"]

    heads = 'mutation($c: ID!) { addHeads(personId: "ann", clubId: $c) { node { id } } }'
    assert (await gql(http, heads, {"c": "chess"}))["data"] == {
        "addHeads": {"node": {"id": "C#chess"}}
    }
    twice = await gql(http, heads, {"c": "go"})
    assert codes(twice) == ["CONFLICT"]
    assert operations(twice) == {"TransactWriteItems": 1}


async def test_an_uncounted_one_end_is_read_before_the_write(http: httpx.AsyncClient) -> None:
    mentor = 'mutation($c: ID!) { addMentors(clubId: $c, personId: "bo") { node { id } } }'
    assert (await gql(http, mentor, {"c": "chess"}))["data"] == {
        "addMentors": {"node": {"id": "P#bo"}}
    }
    second = await gql(http, mentor, {"c": "go"})
    assert codes(second) == ["CONFLICT"]
    assert operations(second) == {"Query": 1}
    body = await gql(http, '{ person(id: "bo") { mentorClub { id } } }')
    assert body["data"] == {"person": {"mentorClub": {"id": "C#chess"}}}


async def test_of_concurrent_joins_to_a_counted_one_end_exactly_one_wins(
    serial_dynamodb: SerialDynamoDB, model_file: str
) -> None:
    serial_dynamodb.reset()
    engine = engine_for(model_file)
    config = client_config(read_timeout=30.0)
    async with open_client(Endpoint(serial_dynamodb.url), config) as client:
        await create_table(client.control, "clubs", layout=engine.layout)
        table = Table(client, "clubs", RetryPolicy(deadline=60.0), layout=engine.layout)
        await table.batch_write(engine.sample_items(table))
        app = create_app(Settings(model=model_file), table=table)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
            join = 'mutation($c: ID!) { addJoined(clubId: $c, personId: "bo") { role } }'
            bodies = await asyncio.gather(*(gql(http, join, {"c": f"c{i}"}) for i in range(4)))
        assert sorted(c for b in bodies for c in codes(b)) == ["CONFLICT"] * 3
        items = await scan(table)
    assert len([k for k, i in items.items() if i.get("kind") == "JOINED"]) == 1
    assert items["P#bo", "P#bo"]["n_JOINED_in"] == 1


def test_the_demo_sample_file_builds_exactly_the_demo_data() -> None:
    engine = Engine(DEMO, load_model(DEMO))
    built = engine.sample_items(Table(None, "graph", layout=engine.layout))

    def by_key(items: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
        return {(i["PK"], i["SK"]): i for i in items}

    assert by_key(built) == by_key(demo_items())
    assert len(built) == len(demo_items())
    codec = engine.codec
    assert codec is not None
    claim = by_key(built)["EMAIL#alice@example.com", "EMAIL#alice@example.com"]
    assert claim == {
        "PK": "EMAIL#alice@example.com",
        "SK": "EMAIL#alice@example.com",
        "type": "EMAIL",
        "user": "USER#alice",
    }
    assert codec.node_type(claim) is None and codec.edge_type(claim) is None
