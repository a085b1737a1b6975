"""`edgewise infer` and `import-model` draft the shapes of MODELS.md's "Items decide their type;
stored objects": types split by a type attribute's values in each tool's convention, stored
objects for maps whose entries share a shape, implicit parents told by the type attribute,
number keys with a type attribute; and a status attribute is never taken for the type
attribute. Each table is written with boto3 in the layout the other tool writes, drafted,
checked, served, and every type's `node(id:)` and every listing compared with a brute force
over the items."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from graph.dynamo.embedded import EmbeddedDynamoDB
from model import load_model
from server.cli.main import main
from tests.helpers import cost, gql
from tests.model.team_tables import expected, lookups, served, served_nodes, write_table
from tests.model.test_infer_designs import _round_trip

STAMP = "2026-01-01T00:00:00.000Z"


def _ask(dynamodb: EmbeddedDynamoDB, tmp_path: Path, table: str, query: str) -> dict[str, Any]:
    """One query of the draft `_round_trip` wrote, traced."""

    async def ask() -> dict[str, Any]:
        async with served(dynamodb, tmp_path / f"{table}.yaml", table) as http:
            return await gql(http, query)

    body = asyncio.run(ask())
    assert "errors" not in body, body
    return body


def _accounts(
    attribute: str, values: tuple[str, str, str], extra: dict[str, Any], keys: tuple[str, str]
) -> list[dict[str, Any]]:
    """Alex DeBrie's GitHub design as each tool writes it: users and organizations share
    `ACCOUNT#<name>` keys, `attribute` says which an item is; memberships live in their
    organization's partition (`MEMBERSHIP#<user>`)."""
    pk, sk = keys
    user, organization, membership = values
    items: list[dict[str, Any]] = []
    for u in ("alice", "bob", "carol"):
        key = f"ACCOUNT#{u}"
        items.append({pk: key, sk: key, attribute: user, "name": u.title(), "email": f"{u}@x.io"})
    for o, plan in (("acme", "pro"), ("globex", "free")):
        key = f"ACCOUNT#{o}"
        items.append({pk: key, sk: key, attribute: organization, "name": o.title(), "plan": plan})
    for o, u, role in (
        ("acme", "alice", "admin"),
        ("acme", "bob", "member"),
        ("globex", "carol", "admin"),
    ):
        items.append(
            {
                pk: f"ACCOUNT#{o}",
                sk: f"MEMBERSHIP#{u}",
                attribute: membership,
                "role": role,
                "userId": u,
            }
        )
    return [i | extra for i in items]


# (attribute, its values for a user, an organization and a membership, attributes the tool adds
# to every item, key attribute names, the types drafted)
CONVENTIONS = {
    "boto3 entity_type": (
        "entity_type",
        ("user", "organization", "membership"),
        {},
        ("PK", "SK"),
        ("User", "Organization", "Membership"),
    ),
    "_type": (
        "_type",
        ("User", "Organization", "Membership"),
        {},
        ("PK", "SK"),
        ("User", "Organization", "Membership"),
    ),
    "ElectroDB __edb_e__": (
        "__edb_e__",
        ("user", "organization", "membership"),
        {"__edb_v__": "1"},
        ("pk", "sk"),
        ("User", "Organization", "Membership"),
    ),
    "dynamodb-toolbox _et": (
        "_et",
        ("User", "Organization", "Membership"),
        {"_ct": STAMP, "_md": STAMP},
        ("pk", "sk"),
        ("User", "Organization", "Membership"),
    ),
    "a short _t": ("_t", ("usr", "org", "mbr"), {}, ("PK", "SK"), ("Usr", "Org", "Mbr")),
}


@pytest.mark.parametrize("convention", list(CONVENTIONS))
def test_two_types_on_one_key_template_are_split_by_the_type_attribute(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path, convention: str
) -> None:
    attribute, values, extra, keys, names = CONVENTIONS[convention]
    items = _accounts(attribute, values, extra, keys)
    text, types, answers = _round_trip(dynamodb, tmp_path, "accounts", items, keys)
    user, organization, _ = names
    assert types == set(names)  # 3 of 3
    assert f"typeAttribute: {attribute}" in text
    assert f'  {user}:  # a node: 3 items, pk = sk = "ACCOUNT#…", {attribute} = {values[0]}' in text
    assert f'  {organization}:  # a node: 2 items, pk = sk = "ACCOUNT#…"' in text
    assert text.count('    key: "ACCOUNT#{id}"\n') == 2  # one template, two types
    for name, value in zip(names, values, strict=True):  # typeValue where the value differs
        assert (f"    typeValue: {value}\n" in text) == (value != name)
    # the memberships' partitions are organizations' keys, not users'
    assert f"parent: {{type: {organization}, field: " in text
    assert f"2 of its 2 partitions are keys of {values[1]} items ({values[0]}: 0)" in text
    assert f"user: {{type: {user}, ref: userId}}" in text
    assert answers[organization]["__typename"] == organization


def test_node_of_a_shared_key_answers_the_items_type(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    attribute, values, extra, keys, _ = CONVENTIONS["boto3 entity_type"]
    items = _accounts(attribute, values, extra, keys)
    _round_trip(dynamodb, tmp_path, "accounts", items, keys)
    query = """{
      acme: node(id: "ACCOUNT#acme") {
        __typename ... on Organization { plan memberships { totalCount } }
      }
      wrong: user(id: "acme") { name }
    }"""
    body = _ask(dynamodb, tmp_path, "accounts", query)
    assert body["data"] == {
        "acme": {"__typename": "Organization", "plan": "pro", "memberships": {"totalCount": 2}},
        "wrong": None,
    }
    # the node's item and the lookup in one batch (its entity_type decides), then the count
    assert cost(body) == ({"BatchGetItem": 1, "Query": 1}, 2)


def _orders_and_tickets() -> list[dict[str, Any]]:
    """Keys that separate the types, and a status on every item: one value per key shape in
    `status` (every order OPEN, every line PENDING, every ticket CLOSED), `orderStatus` values
    shared by orders and tickets."""
    items: list[dict[str, Any]] = []
    for n in range(4):
        state = ("OPEN", "CLOSED")[n % 2]
        items.append(
            {
                "PK": f"ORDER#o{n}",
                "SK": f"ORDER#o{n}",
                "status": "OPEN",
                "orderStatus": state,
                "total": n,
            }
        )
        items.append({"PK": f"ORDER#o{n}", "SK": f"LINE#l{n}", "status": "PENDING", "qty": n + 1})
    for n in range(3):
        state = ("OPEN", "CLOSED")[n % 2]
        items.append(
            {
                "PK": f"TICKET#t{n}",
                "SK": f"TICKET#t{n}",
                "status": "CLOSED",
                "orderStatus": state,
                "title": f"t{n}",
            }
        )
    return items


def test_a_status_attribute_is_never_the_type_attribute(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "orders", _orders_and_tickets())
    assert types == {"Order", "Ticket", "Line"}  # named by their key prefixes
    assert "typeAttribute" not in text
    assert (
        "  # not the type attribute: status (CLOSED, OPEN, PENDING, one value per key shape) "
        "names a state or status; the keys already tell the types apart\n" in text
    )
    assert "      status: String!  # on all 4 items\n" in text  # a field of each type
    assert "orderStatus: OrderOrderStatus!" in text  # shared states: an enum
    body = _ask(dynamodb, tmp_path, "orders", '{ order(id: "o1") { status lines { totalCount } } }')
    assert body["data"] == {"order": {"status": "OPEN", "lines": {"totalCount": 1}}}
    assert cost(body) == ({"BatchGetItem": 1, "Query": 1}, 1)  # the order and its count, one round


def _devices() -> list[dict[str, Any]]:
    """MODELS.md's devices, which exist only as the partition of their logs and alerts; a log's
    sort key starts with its date (`2026-01-02#OFF`); `entity_type` names each item's type."""
    items: list[dict[str, Any]] = []
    for device in ("d1", "d2"):
        for day, state in ((1, "ON"), (2, "OFF"), (3, "ON")):
            date = f"2026-01-0{day}"
            items.append(
                {
                    "PK": f"DEVICE#{device}",
                    "SK": f"{date}#{state}",
                    "entity_type": "log",
                    "date": date,
                    "state": state,
                    "reading": Decimal(day),
                }
            )
        items.append(
            {
                "PK": f"DEVICE#{device}",
                "SK": f"ALERT#a{device}",
                "entity_type": "alert",
                "level": "high",
            }
        )
    items += [
        {"PK": f"USER#{u}", "SK": f"USER#{u}", "entity_type": "user", "name": u}
        for u in ("ann", "bo")
    ]
    return items


def test_an_implicit_parent_of_typed_items(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> None:
    text, types, _ = _round_trip(dynamodb, tmp_path, "devices", _devices())
    assert types == {"Device", "Log", "Alert", "User"}
    assert '    key: "DEVICE#{id}"\n    implicit: true\n' in text
    assert 'key: {pk: "DEVICE#{deviceId}", sk: "{date}#{state}"}' in text
    assert "parent: {type: Device, field: device, collection: logs, order: desc}" in text
    assert "parent: {type: Device, field: device, collection: alerts, order: asc}" in text
    assert (
        '# no item owns "DEVICE#…" and its entity_type names it a type (log): a child of an '
        "implicit type" in text
    )
    query = '{ device(id: "d1") { logs(first: 2) { totalCount edges { node { date state } } } } }'
    body = _ask(dynamodb, tmp_path, "devices", query)
    logs = body["data"]["device"]["logs"]
    assert logs["totalCount"] == 3  # newest first
    assert [e["node"] for e in logs["edges"]] == [
        {"date": "2026-01-03", "state": "ON"},
        {"date": "2026-01-02", "state": "OFF"},
    ]
    assert cost(body) == ({"Query": 2}, 1)  # no read of the device: page and count, one round


def _customers() -> list[dict[str, Any]]:
    """Seed 001's first strategy, "a complex attribute": a customer's `MailingAddresses` is a
    map of maps keyed by a label, beside a map (`Billing`, nesting `Geo`), a list of maps
    (`History`) and maps whose shapes disagree (`Prefs`: no key on every map; `Extra`: one key
    a string here and a number there)."""
    return [
        {
            "PK": "CUSTOMER#alexdebrie",
            "SK": "CUSTOMER#alexdebrie",
            "FirstName": "Alex",
            "LastName": "DeBrie",
            "MailingAddresses": {
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
            "Billing": {
                "StreetAddress": "1 A",
                "Geo": {"lat": Decimal("1.5"), "lng": Decimal("2.25")},
            },
            "History": [{"StreetAddress": "old 1", "Country": "US"}, {"StreetAddress": "old 2"}],
            "Prefs": {"theme": "dark"},
            "Extra": {"code": "a"},
        },
        {
            "PK": "CUSTOMER#jeffbezos",
            "SK": "CUSTOMER#jeffbezos",
            "FirstName": "Jeff",
            "LastName": "Bezos",
            "MailingAddresses": {
                "Home": {
                    "StreetAddress": "123 Spruce Drive",
                    "PostalCode": "69361",
                    "Country": "UnitedStates",
                }
            },
            "Billing": {
                "StreetAddress": "2 B",
                "PostalCode": "1",
                "Geo": {"lat": Decimal(3), "lng": Decimal("4.5")},
            },
            "History": [],
            "Prefs": {"lang": "en"},
            "Extra": {"code": Decimal(1)},
        },
    ]


def test_maps_of_one_shape_become_stored_objects(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, answers = _round_trip(dynamodb, tmp_path, "customers", _customers())
    assert types == {"Customer"}
    assert (
        'mailingAddresses: {type: "[MailingAddress!]!", attribute: MailingAddresses, entries: '
        "label}  # on all 2 items, guess: maps of maps whose keys vary from item to item "
        "(Business, Home): one MailingAddress per entry, in key order, its key in label" in text
    )
    assert "billing: {type: Billing!, attribute: Billing}" in text
    assert 'history: {type: "[History!]!", attribute: History}' in text
    assert (
        "prefs: {type: JSON!, attribute: Prefs}  # on all 2 items, maps whose shapes disagree "
        "(no key is on every map (lang on 1 of 2, theme on 1 of 2)): JSON" in text
    )
    assert "(code holds values of several kinds (N/S)): JSON" in text
    model = load_model(str(tmp_path / "customers.yaml"))
    mailing = model.objects["MailingAddress"]
    assert mailing.stored and list(mailing.fields) == [
        "label",
        "streetAddress",
        "postalCode",
        "country",
    ]
    assert str(mailing.fields["postalCode"].type) == "String!"
    assert str(model.objects["Billing"].fields["geo"].type) == "Geo!"
    assert str(model.objects["Geo"].fields["lat"].type) == "Float!"
    assert str(model.objects["History"].fields["country"].type) == "String"  # on 1 of 2 maps
    # the map of maps in byte-wise key order, each key in `label`
    assert [a["label"] for a in answers["Customer"]["mailingAddresses"]] == ["Business", "Home"]
    query = (
        '{ customer(id: "alexdebrie") { mailingAddresses { label streetAddress } '
        "billing { geo { lat lng } } } }"
    )
    body = _ask(dynamodb, tmp_path, "customers", query)
    assert body["data"]["customer"] == {
        "mailingAddresses": [
            {"label": "Business", "streetAddress": "555 Broadway"},
            {"label": "Home", "streetAddress": "1122 1st Avenue"},
        ],
        "billing": {"geo": {"lat": 1.5, "lng": 2.25}},
    }
    assert cost(body) == ({"BatchGetItem": 1}, 1)  # the objects come with their item


def _readings() -> list[dict[str, Any]]:
    """A boto3 table keyed by numbers (`DeviceId`, `Seq`: N): readings at fractional sequence
    numbers and notes at whole ones share each partition, told apart by `entity_type`."""
    items: list[dict[str, Any]] = []
    for device in (1, 2):
        for seq in ("1.5", "2.25", "3.5"):
            items.append(
                {
                    "DeviceId": device,
                    "Seq": Decimal(seq),
                    "entity_type": "reading",
                    "value": Decimal(seq) * 2,
                }
            )
        for whole in (10, 20):
            items.append(
                {"DeviceId": device, "Seq": whole, "entity_type": "note", "text": f"n{whole}"}
            )
    return items


def test_number_keys_split_by_the_type_attribute(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    text, types, _ = _round_trip(
        dynamodb,
        tmp_path,
        "readings",
        _readings(),
        ("DeviceId", "Seq"),
        types={"DeviceId": "N", "Seq": "N"},
    )
    assert types == {"Reading", "Note"}
    assert "  partitionKey: {name: DeviceId, type: N}\n  sortKey: {name: Seq, type: N}\n" in text
    assert text.count('key: {pk: "{deviceId}", sk: "{seq}"}') == 2
    assert "seq: {type: Float!, attribute: Seq}" in text  # a reading's fractional keys
    assert "seq: {type: Int!, attribute: Seq}" in text  # a note's whole ones
    assert "typeValue: reading" in text and "typeValue: note" in text
    query = (
        "{ readingsByDeviceId(deviceId: 1, from: 2, to: 4) { totalCount edges { node { seq } } } }"
    )
    body = _ask(dynamodb, tmp_path, "readings", query)
    answer = body["data"]["readingsByDeviceId"]
    assert [e["node"]["seq"] for e in answer["edges"]] == [2.25, 3.5]
    assert answer["totalCount"] == 2
    assert cost(body) == ({"Query": 2}, 1)  # page and count, BETWEEN 2 AND 4 on Seq


# ---- import-model: a Workbench export whose facets' rows carry a type attribute and maps ----


def _workbench(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A Workbench export: facets User and Organization share `ACCOUNT#` keys, their rows
    carrying `entity_type`; a Customer facet's rows hold `MailingAddresses`, a map of maps."""
    serialize = TypeSerializer().serialize
    items = [
        i
        for i in _accounts("entity_type", ("user", "organization", "membership"), {}, ("PK", "SK"))
    ]
    items = [i for i in items if i["entity_type"] != "membership"]
    customers = [{**c, "entity_type": "customer"} for c in _customers()]
    for c in customers:
        c.pop("Prefs"), c.pop("Extra")
    items += customers

    def facet(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
        attributes = sorted({a for r in rows for a in r} - {"PK", "SK"})
        return {
            "FacetName": name,
            "KeyAttributeAlias": {"PartitionKeyAlias": "AccountId", "SortKeyAlias": "AccountKey"},
            "TableData": [
                {
                    {"PK": "AccountId", "SK": "AccountKey"}.get(k, k): serialize(v)
                    for k, v in r.items()
                }
                for r in rows
            ],
            "NonKeyAttributes": attributes,
            "DataAccess": {"MySql": {}},
        }

    by_type = {
        "User": [i for i in items if i["entity_type"] == "user"],
        "Organization": [i for i in items if i["entity_type"] == "organization"],
        "Customer": customers,
    }
    key = {"AttributeName": "PK", "AttributeType": "S"}
    table = {
        "TableName": "Accounts",
        "KeyAttributes": {"PartitionKey": key, "SortKey": key | {"AttributeName": "SK"}},
        "NonKeyAttributes": [],
        "TableFacets": [facet(n, rows) for n, rows in by_type.items()],
        "GlobalSecondaryIndexes": [],
        "TableData": [],
        "BillingMode": "PAY_PER_REQUEST",
    }
    export = tmp_path / "accounts.json"
    export.write_text(json.dumps({"ModelName": "Accounts", "DataModel": [table]}))
    decode = TypeDeserializer().deserialize
    return export, [{k: decode(serialize(v)) for k, v in i.items()} for i in items]


def test_workbench_facets_with_a_type_attribute_and_maps(
    dynamodb: EmbeddedDynamoDB, tmp_path: Path
) -> None:
    export, items = _workbench(tmp_path)
    output = tmp_path / "accounts.yaml"
    main(["import-model", "--from", "nosql-workbench", str(export), "--output", str(output)])
    main(["check-model", str(output)])
    text = output.read_text()
    model = load_model(str(output))
    assert set(model.types) == {"User", "Organization", "Customer"}
    assert model.type_attribute == "entity_type"
    assert (
        "typeAttribute: entity_type  # guess: one value on every sample row of each facet" in text
    )
    assert (model.types["User"].type_value, model.types["Organization"].type_value) == (
        "user",
        "organization",
    )
    assert model.types["User"].pk.text == model.types["Organization"].pk.text == "ACCOUNT#{id}"
    assert model.objects["MailingAddress"].stored
    dynamodb.reset()
    write_table(dynamodb.url, "Accounts", items)
    ids = lookups(model, items)
    assert set(ids) == set(model.types)
    answers = asyncio.run(served_nodes(dynamodb, output, "Accounts", ids))
    assert answers == expected(model, ids)  # every type, every stored field and object
