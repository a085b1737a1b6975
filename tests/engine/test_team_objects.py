"""Stored objects (MODELS.md, "Items decide their type; stored objects"): map attributes, lists
of maps and maps of maps written with boto3 as a team's tool writes them (seed 001's first
strategy, "a complex attribute": `MailingAddresses` as a map of maps), served as typed objects
and compared with a brute force over the items written; written back through generated inputs,
validated, and refused past DynamoDB's 400 KB item limit before anything is written."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.errors import BadUserInput
from graph.table import Table
from graph.writes.writer import Writer
from server.engine import engine_for
from tests.conftest import TeamTable
from tests.helpers import LEAN, gql

# Seed 001's customers as the article stores them, with a map, a list of maps, nested maps and
# sets beside them; `Store` and its edge show stored objects on an edge.
CUSTOMERS = """
table: {name: customers, partitionKey: PK, sortKey: SK}
types:
  Customer:
    key: "CUSTOMER#{id}"
    fields:
      firstName: {type: String!, attribute: FirstName}
      lastName: {type: String, attribute: LastName}
      mailingAddresses: {type: "[MailingAddress!]", attribute: MailingAddresses, entries: label}
      billing: {type: Address, attribute: Billing}
      history: {type: "[Address!]", attribute: History}
      tags: {type: "[String!]", attribute: Tags}
      scores: {type: "[Int!]", attribute: Scores}
  Store:
    key: "STORE#{id}"
    fields: {name: String!}
edges:
  SHIPS_FROM:
    from: Customer
    to: Store
    fields: {note: String, returnTo: {type: Address, attribute: ReturnTo}}
    forward: stores
objects:
  MailingAddress:
    stored: true
    fields:
      label: String!
      street: {type: String!, attribute: StreetAddress}
      postalCode: {type: String, attribute: PostalCode}
      country: {type: String!, attribute: Country}
  Address:
    stored: true
    fields:
      street: {type: String!, attribute: StreetAddress}
      postalCode: {type: String, attribute: PostalCode}
      country: {type: String!, attribute: Country}
      geo: {type: Geo, attribute: Geo}
  Geo:
    stored: true
    fields: {lat: Float!, lng: Float!}
"""
TABLE: dict[str, Any] = {
    "TableName": "customers",
    "KeySchema": [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ],
    "AttributeDefinitions": [
        {"AttributeName": "PK", "AttributeType": "S"},
        {"AttributeName": "SK", "AttributeType": "S"},
    ],
}


def _customer(name: str, **attributes: Any) -> dict[str, Any]:
    return {"PK": f"CUSTOMER#{name}", "SK": f"CUSTOMER#{name}", **attributes}


ITEMS: list[dict[str, Any]] = [
    # the seed's two items, exactly as the article has them
    _customer(
        "alexdebrie",
        FirstName="Alex",
        LastName="DeBrie",
        MailingAddresses={
            "Home": {
                "StreetAddress": "1122 1st Avenue",
                "PostalCode": "90210",
                "Country": "UnitedStates",
            },
            "Business": {
                "StreetAddress": "555 Broadway",
                "PostalCode": "90211",
                "Country": "UnitedStates",
            },
        },
    ),
    _customer(
        "jeffbezos",
        FirstName="Jeff",
        LastName="Bezos",
        MailingAddresses={
            "Home": {
                "StreetAddress": "123 Spruce Drive",
                "PostalCode": "69361",
                "Country": "UnitedStates",
            }
        },
    ),
    # keys whose byte-wise order is not the order of a case-blind or locale sort; an address
    # without a postal code; a nested map; a list of maps; sets (SS, NS) and a list (L) of numbers
    _customer(
        "zoe",
        FirstName="Zoë",
        MailingAddresses={
            "home": {"StreetAddress": "1 Rue", "Country": "France"},
            "Zürich": {"StreetAddress": "2 Gasse", "PostalCode": "8001", "Country": "CH"},
            "Zed": {"StreetAddress": "3 Lane", "PostalCode": "1", "Country": "UK"},
            "Ärger": {"StreetAddress": "4 Weg", "Country": "DE"},
            "Home": {"StreetAddress": "5 Road", "Country": "FR"},
        },
        Billing={
            "StreetAddress": "6 Quai",
            "Country": "France",
            "Geo": {"lat": Decimal("48.85"), "lng": Decimal("2.35")},
        },
        History=[
            {"StreetAddress": "7 Old Street", "PostalCode": "75001", "Country": "France"},
            {"StreetAddress": "8 Older Street", "Country": "Belgium"},
        ],
        Tags={"vip", "Early", "ärger", "b2b"},
        Scores={Decimal(10), Decimal(9), Decimal(100)},
    ),
    _customer("sam", FirstName="Sam", History=[], MailingAddresses={}, Scores=[3, 1, 2]),
    _customer("nobody", FirstName="No", Billing={"StreetAddress": "9 Way", "Country": "NZ"}),
]


def _address(stored: dict[str, Any]) -> dict[str, Any]:
    geo = stored.get("Geo")
    return {
        "street": stored.get("StreetAddress"),
        "postalCode": stored.get("PostalCode"),
        "country": stored.get("Country"),
        "geo": None if geo is None else {"lat": float(geo["lat"]), "lng": float(geo["lng"])},
    }


def _expected(item: dict[str, Any]) -> dict[str, Any]:
    """A customer's answer worked out from its item by DynamoDB's rules: map keys and set
    elements in byte-wise order, a missing attribute null, a map's missing key a null field."""
    entries = item.get("MailingAddresses")
    history = item.get("History")
    billing = item.get("Billing")
    tags, scores = item.get("Tags"), item.get("Scores")
    return {
        "id": item["PK"],
        "firstName": item["FirstName"],
        "lastName": item.get("LastName"),
        "mailingAddresses": None
        if entries is None
        else [
            {"label": label, **{k: v for k, v in _address(entries[label]).items() if k != "geo"}}
            for label in sorted(entries, key=lambda k: k.encode())
        ],
        "billing": None if billing is None else _address(billing),
        "history": None if history is None else [_address(a) for a in history],
        "tags": None if tags is None else sorted(tags, key=lambda t: t.encode()),
        "scores": None
        if scores is None
        else [int(s) for s in (sorted(scores) if isinstance(scores, set) else scores)],
    }


ADDRESS = "street postalCode country geo { lat lng }"
SELECTION = (
    "id firstName lastName mailingAddresses { label street postalCode country } "
    f"billing {{ {ADDRESS} }} history {{ {ADDRESS} }} tags scores"
)


async def test_map_list_and_map_of_maps_answer_as_stored(team_http: TeamTable) -> None:
    http = await team_http(CUSTOMERS, TABLE, ITEMS)
    ids = [item["PK"] for item in ITEMS]
    body = await gql(
        http,
        f"query($ids: [ID!]!) {{ nodes(ids: $ids) {{ ... on Customer {{ {SELECTION} }} }} }}",
        {"ids": ids},
    )
    assert "errors" not in body, body
    assert body["data"]["nodes"] == [_expected(item) for item in ITEMS]
    trace = body["extensions"]["dynamodb"]
    assert trace["operations"] == {"BatchGetItem": 1} and trace["rounds"] == 1, trace
    zoe = body["data"]["nodes"][2]
    assert [a["label"] for a in zoe["mailingAddresses"]] == [
        "Home",
        "Zed",
        "Zürich",
        "home",
        "Ärger",
    ]
    assert zoe["tags"] == ["Early", "b2b", "vip", "ärger"] and zoe["scores"] == [9, 10, 100]
    # the seed's own question: a customer with its addresses is one read, in one round
    seed = await gql(
        http, '{ customer(id: "alexdebrie") { firstName mailingAddresses { label street } } }'
    )
    assert seed["data"]["customer"]["mailingAddresses"] == [
        {"label": "Business", "street": "555 Broadway"},
        {"label": "Home", "street": "1122 1st Avenue"},
    ]
    trace = seed["extensions"]["dynamodb"]
    assert trace["requests"] == 1 and trace["rounds"] == 1, trace


async def test_a_map_without_a_non_null_field_fails_that_object_only(team_http: TeamTable) -> None:
    broken = _customer("broken", FirstName="B", Billing={"Country": "NZ"}, History=[{}])
    http = await team_http(CUSTOMERS, TABLE, [*ITEMS, broken])
    body = await gql(
        http,
        '{ customer(id: "broken") { firstName billing { street country } history { street } } }',
    )
    # street is String!: the map that lacks it answers null with an error at its place, as a
    # missing non-null attribute of a node does; the customer's other fields are answered
    assert body["data"]["customer"] == {"firstName": "B", "billing": None, "history": None}
    assert [e["path"] for e in body["errors"]] == [
        ["customer", "billing", "street"],
        ["customer", "history", 0, "street"],
    ]


async def test_an_attribute_of_another_shape_fails_that_field_only(team_http: TeamTable) -> None:
    odd = _customer(
        "odd",
        FirstName="O",
        Billing="a string",
        History={"StreetAddress": "a map, not a list"},
        MailingAddresses={"Home": "a string, not a map"},
        Tags="a string",
    )
    http = await team_http(CUSTOMERS, TABLE, [*ITEMS, odd])
    body = await gql(
        http,
        '{ customer(id: "odd") { firstName billing { country } history { country } '
        "mailingAddresses { label } tags } }",
    )
    assert body["data"]["customer"] == {
        "firstName": "O",
        "billing": None,
        "history": None,
        "mailingAddresses": None,
        "tags": None,
    }
    assert sorted(e["path"][-1] for e in body["errors"]) == [
        "billing",
        "history",
        "mailingAddresses",
        "tags",
    ]
    assert {e["extensions"]["code"] for e in body["errors"]} == {"INTERNAL_SERVER_ERROR"}


def _key(name: str, kind: str = "CUSTOMER") -> dict[str, Any]:
    return {"PK": {"S": f"{kind}#{name}"}, "SK": {"S": f"{kind}#{name}"}}


def _scan(client: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.scan(TableName="customers")["Items"]
    return sorted(items, key=lambda i: (i["PK"]["S"], i["SK"]["S"]))


async def _post(http: Any, query: str, variables: dict[str, Any] | None = None) -> Any:
    """A request whose answer may be a refusal (HTTP 400 for a document that does not
    validate)."""
    response = await http.post("/graphql", json={"query": query, "variables": variables or {}})
    return response.json()


CREATE = (
    f"mutation($input: CreateCustomerInput!) {{ createCustomer(input: $input) {{ {SELECTION} }} }}"
)
UPDATE = (
    f"mutation($input: UpdateCustomerInput!) {{ updateCustomer(input: $input) {{ {SELECTION} }} }}"
)


async def test_a_create_writes_the_layout_the_seed_reads(
    team_http: TeamTable, team_client: Any
) -> None:
    http = await team_http(CUSTOMERS, TABLE, ITEMS)
    given = {
        "id": "ann",
        "firstName": "Ann",
        "mailingAddresses": [
            {"label": "Home", "street": "1 A", "postalCode": "10001", "country": "US"},
            {"label": "Business", "street": "2 B", "postalCode": None, "country": "US"},
        ],
        "billing": {"street": "3 C", "country": "US", "geo": {"lat": 40.5, "lng": -73.25}},
        "history": [{"street": "4 D", "country": "US"}],
        "tags": ["b", "a"],
        "scores": [2, 1],
    }
    body = await gql(http, CREATE, {"input": given})
    assert "errors" not in body, body
    assert body["extensions"]["dynamodb"]["operations"] == {"PutItem": 1}  # one write
    stored = team_client.get_item(TableName="customers", Key=_key("ann"))["Item"]
    assert stored["MailingAddresses"] == {  # a map of maps, each label a key, as seed 001 has it
        "M": {
            "Home": {
                "M": {
                    "StreetAddress": {"S": "1 A"},
                    "PostalCode": {"S": "10001"},
                    "Country": {"S": "US"},
                }
            },
            "Business": {"M": {"StreetAddress": {"S": "2 B"}, "Country": {"S": "US"}}},
        }
    }
    assert stored["Billing"] == {
        "M": {
            "StreetAddress": {"S": "3 C"},
            "Country": {"S": "US"},
            "Geo": {"M": {"lat": {"N": "40.5"}, "lng": {"N": "-73.25"}}},
        }
    }
    assert stored["History"] == {
        "L": [{"M": {"StreetAddress": {"S": "4 D"}, "Country": {"S": "US"}}}]
    }
    assert stored["Tags"] == {"L": [{"S": "b"}, {"S": "a"}]}  # a list stays in its order
    assert stored["Scores"] == {"L": [{"N": "2"}, {"N": "1"}]}
    found = await gql(http, f'{{ customer(id: "ann") {{ {SELECTION} }} }}')
    assert found["data"]["customer"] == body["data"]["createCustomer"]
    assert [a["label"] for a in found["data"]["customer"]["mailingAddresses"]] == [
        "Business",
        "Home",
    ]
    assert found["data"]["customer"]["billing"]["geo"] == {"lat": 40.5, "lng": -73.25}


async def test_an_update_replaces_the_whole_attribute_and_keeps_a_set_a_set(
    team_http: TeamTable, team_client: Any
) -> None:
    http = await team_http(CUSTOMERS, TABLE, [*ITEMS, _customer("kept", FirstName="K", Other=7)])
    body = await gql(
        http,
        UPDATE,
        {
            "input": {
                "id": "zoe",
                "billing": {"street": "10 New Street", "country": "FR"},
                "mailingAddresses": [{"label": "Only", "street": "11 One Way", "country": "FR"}],
                "history": None,
                "tags": ["x", "y", "x"],
            }
        },
    )
    assert "errors" not in body, body
    trace = body["extensions"]["dynamodb"]  # the item read (for its version), then written
    assert trace["operations"] == {"GetItem": 1, "UpdateItem": 1} and trace["rounds"] == 2
    stored = team_client.get_item(TableName="customers", Key=_key("zoe"))["Item"]
    # the whole map replaced: the old Geo and the old entries are gone
    assert stored["Billing"] == {
        "M": {"StreetAddress": {"S": "10 New Street"}, "Country": {"S": "FR"}}
    }
    assert list(stored["MailingAddresses"]["M"]) == ["Only"]
    assert "History" not in stored
    assert sorted(stored["Tags"]["SS"]) == ["x", "y"]  # written by its writer as a set: kept one
    assert sorted(stored["Scores"]["NS"]) == ["10", "100", "9"]  # untouched
    assert stored["FirstName"] == {"S": "Zoë"}
    answer = body["data"]["updateCustomer"]
    assert answer["tags"] == ["x", "y"] and answer["history"] is None
    assert answer["billing"] == {
        "street": "10 New Street",
        "postalCode": None,
        "country": "FR",
        "geo": None,
    }
    # a list stays a list; an attribute the model does not know is kept
    await gql(http, 'mutation { updateCustomer(input: {id: "sam", scores: [5, 5]}) { id } }')
    assert team_client.get_item(TableName="customers", Key=_key("sam"))["Item"]["Scores"] == {
        "L": [{"N": "5"}, {"N": "5"}]
    }
    await gql(http, 'mutation { updateCustomer(input: {id: "kept", tags: ["t"]}) { id } }')
    kept = team_client.get_item(TableName="customers", Key=_key("kept"))["Item"]
    assert kept["Other"] == {"N": "7"} and kept["Tags"] == {"L": [{"S": "t"}]}


HOME = '{label: "Home", street: "1 A", country: "US"}'
TWICE = f"mailingAddresses: [{HOME}, {HOME}]"


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        (  # a required field of an input left out
            'createCustomer(input: {id: "x", firstName: "X", '
            'mailingAddresses: [{label: "Home", country: "US"}]})',
            "street",
        ),
        (  # two entries with one key: they would be one entry of the map
            f'createCustomer(input: {{id: "x", firstName: "X", {TWICE}}})',
            "mailingAddresses holds two entries with the label 'Home'",
        ),
        (
            'createCustomer(input: {id: "x", firstName: "X", '
            'mailingAddresses: [{label: "", street: "1 A", country: "US"}]})',
            "mailingAddresses holds an empty one",
        ),
        (  # a value of the wrong type, deep down
            'createCustomer(input: {id: "x", firstName: "X", '
            'billing: {street: "1 A", country: "US", geo: {lat: "north", lng: 1}}})',
            "Float cannot represent",
        ),
        (
            'updateCustomer(input: {id: "zoe", billing: {street: null, country: "US"}})',
            "non-null type 'String!'",
        ),
        ('updateCustomer(input: {id: "zoe", firstName: null})', "firstName cannot be null"),
        (
            f'updateCustomer(input: {{id: "zoe", {TWICE}}})',
            "mailingAddresses holds two entries",
        ),
        (
            'addShipsFrom(customerId: "zoe", storeId: "s1", returnTo: {street: "1 A"})',
            "country",
        ),
    ],
)
async def test_a_bad_input_is_bad_user_input_and_writes_nothing(
    team_http: TeamTable, team_client: Any, mutation: str, message: str
) -> None:
    store = {"PK": "STORE#s1", "SK": "STORE#s1", "name": "Shop"}
    http = await team_http(CUSTOMERS, TABLE, [*ITEMS, store])
    before = _scan(team_client)
    body = await _post(http, f"mutation {{ {mutation} {{ __typename }} }}")
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"], body
    assert message in body["errors"][0]["message"], body
    assert _scan(team_client) == before


async def test_an_item_over_400_kb_is_refused_naming_the_field_before_any_write(
    team_http: TeamTable, team_client: Any
) -> None:
    store = {"PK": "STORE#s1", "SK": "STORE#s1", "name": "Shop"}
    http = await team_http(CUSTOMERS, TABLE, [*ITEMS, store])
    before = _scan(team_client)
    long = "x" * 100_000
    refused: list[tuple[str, dict[str, Any], str]] = [
        (  # a list of maps, together over the limit
            "mutation($h: [AddressInput!]) { createCustomer(input: "
            '{id: "big", firstName: "B", history: $h}) { id } }',
            {"h": [{"street": long, "country": "US"}] * 5},
            "history is too large: it makes the item of Customer CUSTOMER#big 500,188 bytes",
        ),
        (  # a plain string
            'mutation($s: String) { createCustomer(input: {id: "big", firstName: "B", '
            "lastName: $s}) { id } }",
            {"s": "y" * 420_000},
            "lastName is too large",
        ),
        (  # an update: the item as it would be, its other attributes included
            'mutation($b: AddressInput) { updateCustomer(input: {id: "zoe", billing: $b}) { id } }',
            {"b": {"street": "z" * 410_000, "country": "FR"}},
            "billing is too large: it makes the item of Customer CUSTOMER#zoe",
        ),
        (  # an edge's own fields
            'mutation($r: AddressInput) { addShipsFrom(customerId: "zoe", storeId: "s1", '
            "returnTo: $r) { cursor } }",
            {"r": {"street": "r" * 410_000, "country": "FR"}},
            "returnTo is too large: it makes the item of SHIPS_FROM edge CUSTOMER#zoe / STORE#s1",
        ),
    ]
    for query, variables, message in refused:
        body = await gql(http, query, variables)
        assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"], body
        assert body["errors"][0]["message"].startswith(message), body["errors"][0]["message"]
        assert "over DynamoDB's limit of 400 KB (409,600 bytes)" in body["errors"][0]["message"]
        assert body["extensions"]["dynamodb"]["operations"].keys() <= {"GetItem", "BatchGetItem"}
        assert _scan(team_client) == before
    # under the limit, however large, is written as given
    body = await gql(
        http,
        "mutation($h: [AddressInput!]) { createCustomer(input: "
        '{id: "large", firstName: "L", history: $h}) { id } }',
        {"h": [{"street": long, "country": "US"}] * 3},
    )
    assert "errors" not in body, body
    item = team_client.get_item(TableName="customers", Key=_key("large"))["Item"]
    assert len(item["History"]["L"]) == 3


PLAIN = """
table: {name: customers, partitionKey: PK, sortKey: SK}
types:
  Customer:
    key: "CUSTOMER#{id}"
    fields: {firstName: {type: String!, attribute: FirstName}, notes: String}
  Store:
    key: "STORE#{id}"
    fields: {name: String!}
edges:
  SHIPS_FROM: {from: Customer, to: Store, fields: {note: String}, forward: stores}
"""


async def test_a_string_over_400_kb_is_refused_in_every_write_before_it_is_sent(
    team_http: TeamTable, team_client: Any
) -> None:
    """Without stored objects too: before this check, DynamoDB's own refusal (a
    ValidationException) answered INTERNAL_SERVER_ERROR, after the write was sent."""
    store = {"PK": "STORE#s1", "SK": "STORE#s1", "name": "Shop"}
    ann = _customer("ann", FirstName="Ann")
    http = await team_http(PLAIN, TABLE, [ann, store])
    before = _scan(team_client)
    huge = {"s": "n" * 420_000}
    for query, field in [
        (
            'mutation($s: String) { createCustomer(input: {id: "big", firstName: "B", notes: $s}) '
            "{ id } }",
            "notes",
        ),
        ('mutation($s: String) { updateCustomer(input: {id: "ann", notes: $s}) { id } }', "notes"),
        (
            'mutation($s: String) { addShipsFrom(customerId: "ann", storeId: "s1", note: $s) '
            "{ cursor } }",
            "note",
        ),
    ]:
        body = await gql(http, query, huge)
        assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"], body
        assert body["errors"][0]["message"].startswith(f"{field} is too large"), body
        assert "PutItem" not in body["extensions"]["dynamodb"]["operations"]
        assert _scan(team_client) == before


async def test_the_writes_of_hooks_are_checked_too(
    dynamodb: EmbeddedDynamoDB, team_client: Any, tmp_path: Path
) -> None:
    dynamodb.reset()
    team_client.create_table(BillingMode="PAY_PER_REQUEST", **TABLE)
    path = tmp_path / "model.yaml"
    path.write_text(PLAIN)
    engine = engine_for(str(path))
    assert engine.codec is not None
    model = engine.codec.model
    big = _customer("h", FirstName="H", notes="h" * 420_000)
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        writer = Writer(Table(client, "customers", layout=engine.layout), engine.codec)
        with pytest.raises(BadUserInput, match=r"^notes is too large"):
            await writer.insert([big])
        ann = engine.codec.by_id(model.types["Customer"], "ann")
        shop = engine.codec.by_id(model.types["Store"], "s1")
        assert ann is not None and shop is not None
        edge = model.edges["SHIPS_FROM"]
        with pytest.raises(BadUserInput, match=r"^note is too large"):
            await writer.update_edge(edge, ann, shop, {"note": "n" * 420_000})
    assert _scan(team_client) == []
