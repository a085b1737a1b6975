"""Key shapes of tables as teams have them (MODELS.md, "Items decide their type; stored
objects"): implicit parents, parents keyed by more than their id, adjacent placeholders backed
by attributes, references over a map's keys. Each table is written with boto3 straight into moto
(not through Edgewise), served, and each answer compared with a brute force over the items
written; each cost is read from the trace."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.dynamo.client import Endpoint, client_config, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import RetryPolicy, Table
from graph.writes import pending
from graph.writes.replicas import CLOCK, PENDING
from model.types import CLOCK_SK
from server.cli.main import main
from server.engine import engine_for
from server.http.app import create_app
from server.settings import Settings
from tests.conftest import TeamTable, team_boto3
from tests.engine.test_team_tables import _table
from tests.helpers import LEAN, cost, gql
from tests.table_state import SerialDynamoDB, scan

# ---- an implicit parent: devices that exist only as the partition of their logs ------------
# (AWS's IoT design: the device id as partition key, `<date>#<state>` as sort key.)
DEVICES = """
table:
  name: devices
  partitionKey: PK
  sortKey: SK
types:
  Device: {key: "DEVICE#{id}", implicit: true}
  Log:
    key: {pk: "DEVICE#{deviceId}", sk: "{date}#{state}"}
    parent: {type: Device, field: device, collection: logs, order: desc}
    fields: {date: String!, state: String!, message: String}
"""
DEVICES_TABLE = _table("devices", "PK", "SK")
DEVICE_LOGS = [
    ("d1", "2024-01-01", "OK", "booted"),
    ("d1", "2024-01-02", "WARN", "hot"),
    ("d1", "2024-01-02", "OK", "cooled"),
    ("d1", "2024-01-03", "OK", None),
    ("d2", "2024-01-01", "FAIL", "no signal"),
]
DEVICES_ITEMS: list[dict[str, Any]] = [
    {"PK": f"DEVICE#{d}", "SK": f"{date}#{state}", **({"message": m} if m else {})}
    for d, date, state, m in DEVICE_LOGS
]


def _logs(device: str, date: str | None = None) -> list[tuple[str, str, str | None]]:
    """The brute force: a device's logs, newest first (by sort key), of one date if given."""
    rows = [(dt, st, m) for d, dt, st, m in DEVICE_LOGS if d == device and date in (None, dt)]
    return sorted(rows, key=lambda r: f"{r[0]}#{r[1]}", reverse=True)


async def test_an_implicit_type_is_a_parent_whose_collection_reads_its_partition(
    team_http: TeamTable,
) -> None:
    http = await team_http(DEVICES, DEVICES_TABLE, DEVICES_ITEMS)
    query = """query($d: ID!, $date: String) { device(id: $d) { id
      logs(date: $date) { totalCount edges { node { date state message device { id } } } } } }"""
    for device, date in [("d1", None), ("d1", "2024-01-02"), ("d2", None), ("d9", None)]:
        body = await gql(http, query, {"d": device, "date": date})
        assert "errors" not in body, body
        found = body["data"]["device"]
        assert found["id"] == f"DEVICE#{device}"  # a node with nothing under it still answers
        logs = [
            (e["node"]["date"], e["node"]["state"], e["node"]["message"])
            for e in found["logs"]["edges"]
        ]
        assert logs == _logs(device, date)
        assert found["logs"]["totalCount"] == len(logs)
        assert {e["node"]["device"]["id"] for e in found["logs"]["edges"]} <= {f"DEVICE#{device}"}
    body = await gql(http, '{ device(id: "d1") { logs(first: 2) { edges { node { date } } } } }')
    # no read of the device itself: one Query of its partition, in one round
    assert cost(body) == ({"Query": 1}, 1)


async def test_a_child_of_an_implicit_parent_is_created_without_a_parent_item(
    team_http: TeamTable,
) -> None:
    http = await team_http(DEVICES, DEVICES_TABLE, DEVICES_ITEMS)
    body = await gql(
        http,
        'mutation { createLog(input: {deviceId: "d7", date: "2024-02-01", state: "OK"}) '
        "{ id date device { id logs { totalCount } } } }",
    )
    assert "errors" not in body, body
    assert body["data"]["createLog"]["device"] == {"id": "DEVICE#d7", "logs": {"totalCount": 1}}


# ---- a parent keyed by more than its id: an order's item carries its customer in its sort
# key, its shipments share its partition ----------------------------------------------------
ORDERS = """
table:
  name: orders
  partitionKey: PK
  sortKey: SK
types:
  Order:
    key: {pk: "o#{id}", sk: "c#{customerId}"}
    fields: {total: Float}
  Shipment:
    key: {pk: "o#{orderId}", sk: "sh#{id}"}
    parent: {type: Order, field: order, collection: shipments}
    fields: {carrier: String}
"""
ORDERS_TABLE = _table("orders", "PK", "SK")
ORDERS_ITEMS: list[dict[str, Any]] = [
    {"PK": "o#1", "SK": "c#alice", "total": 10},
    {"PK": "o#1", "SK": "sh#s1", "carrier": "UPS"},
    {"PK": "o#1", "SK": "sh#s2", "carrier": "DHL"},
    {"PK": "o#2", "SK": "c#bob", "total": 7},
    {"PK": "o#2", "SK": "sh#s3", "carrier": "UPS"},
    {"PK": "o#3", "SK": "c#xavier", "total": 1},  # a data error: two orders in one partition
    {"PK": "o#3", "SK": "c#yves", "total": 2},
]


def _order(order_id: str) -> dict[str, Any] | None:
    """The brute force: the first item of the partition whose sort key begins with `c#`, and
    the partition's `sh#` items."""
    own = sorted(
        (i for i in ORDERS_ITEMS if i["PK"] == f"o#{order_id}" and i["SK"].startswith("c#")),
        key=lambda i: i["SK"],
    )
    if not own:
        return None
    shipments = sorted(
        (i for i in ORDERS_ITEMS if i["PK"] == f"o#{order_id}" and i["SK"].startswith("sh#")),
        key=lambda i: i["SK"],
    )
    return {
        "customerId": own[0]["SK"][2:],
        "total": own[0]["total"],
        "shipments": [(i["SK"][3:], i["carrier"]) for i in shipments],
    }


ORDER = """query($id: ID!) { order(id: $id) { id customerId total
  shipments { totalCount edges { node { id carrier order { id customerId } } } } } }"""


async def test_a_parent_keyed_by_more_than_its_id_is_found_by_its_partition(
    team_http: TeamTable, caplog: pytest.LogCaptureFixture
) -> None:
    http = await team_http(ORDERS, ORDERS_TABLE, ORDERS_ITEMS)
    for order_id in ("1", "2", "3", "404"):
        with caplog.at_level(logging.ERROR, logger="edgewise"):
            body = await gql(http, ORDER, {"id": order_id})
        assert "errors" not in body, body
        found, wanted = body["data"]["order"], _order(order_id)
        if wanted is None:
            assert found is None
            continue
        assert (found["customerId"], found["total"]) == (wanted["customerId"], wanted["total"])
        shipments = found["shipments"]
        assert [(e["node"]["carrier"]) for e in shipments["edges"]] == [
            c for _, c in wanted["shipments"]
        ]
        assert shipments["totalCount"] == len(wanted["shipments"])
        # the child's parent is the same node, by the same global id
        assert all(
            e["node"]["order"] == {"id": found["id"], "customerId": found["customerId"]}
            for e in shipments["edges"]
        )
        again = await gql(
            http,
            "query($id: ID!) { node(id: $id) { ... on Order { total } } }",
            {"id": found["id"]},
        )
        assert again["data"]["node"] == {"total": wanted["total"]}
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("SK='c#xavier'" in m and "SK='c#yves'" in m for m in errors), errors


async def test_a_lookup_of_a_located_parent_reads_its_children_in_the_same_round(
    team_http: TeamTable,
) -> None:
    http = await team_http(ORDERS, ORDERS_TABLE, ORDERS_ITEMS)
    body = await gql(http, '{ order(id: "1") { total shipments { edges { node { carrier } } } } }')
    assert "errors" not in body, body
    # the order's Query (its partition, `c#`) and its shipments' Query, together
    assert cost(body) == ({"Query": 2}, 1)
    alone = await gql(http, '{ order(id: "1") { id customerId } }')
    assert cost(alone) == ({"Query": 1}, 1)


async def test_a_child_of_a_located_parent_is_created_under_an_existing_parent(
    team_http: TeamTable,
) -> None:
    http = await team_http(ORDERS, ORDERS_TABLE, ORDERS_ITEMS)
    created = await gql(
        http,
        'mutation { createShipment(input: {orderId: "2", id: "s9", carrier: "FedEx"}) '
        "{ id order { customerId shipments { totalCount } } } }",
    )
    assert "errors" not in created, created
    assert created["data"]["createShipment"]["order"] == {
        "customerId": "bob",
        "shipments": {"totalCount": 2},
    }
    missing = await gql(
        http, 'mutation { createShipment(input: {orderId: "404", id: "s1"}) { id } }'
    )
    assert missing["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert (await gql(http, '{ order(id: "404") { id } }'))["data"]["order"] is None


# ---- adjacent placeholders: keys a library joins with no separator, each value also kept in
# an attribute of its own ----------------------------------------------------------------------
ACCOUNTS = """
table:
  name: accounts
  partitionKey: PK
  sortKey: SK
  storeKeyFields: true
  indexes:
    gs1: {partitionKey: gs1pk, sortKey: gs1sk}
types:
  Org:
    key: "ORG#{id}"
    fields: {title: String}
  Account:
    key: "ACCOUNT#{id}"
    fields: {name: String!, orgId: String!}
    indexes:
      gs1: {pk: "org#{orgId}", sk: "account#{name}{id}"}
  Member:
    key: {pk: "ORG#{orgId}", sk: "member#{name}{id}"}
    parent: {type: Org, field: org, collection: members}
    fields: {name: String!, role: String}
queries:
  accountsOfOrg:
    type: Account
    index: gs1
    partition: "org#{orgId}"
    sort: {template: "account#{name}{id}", arguments: [name, id]}
"""
ACCOUNTS_TABLE = _table("accounts", "PK", "SK", ("gs1", "gs1pk", "gs1sk"))
# `Acme` + `1` and `Acm` + `e1` make one index key; `account#Acme` begins four of them
ACCOUNT_ROWS = [("Acme", "1"), ("Acme", "12"), ("AcmeCorp", "2"), ("Acm", "e1"), ("Bolt", "7")]
MEMBER_ROWS = [("Ann", "1", "admin"), ("Ann", "12", None), ("Anna", "3", None), ("An", "n4", None)]
ACCOUNTS_ITEMS: list[dict[str, Any]] = [
    {"PK": "ORG#o1", "SK": "ORG#o1", "id": "o1", "title": "One"},
    *(
        {
            "PK": f"ACCOUNT#{i}",
            "SK": f"ACCOUNT#{i}",
            "id": i,
            "name": n,
            "orgId": "o1",
            "gs1pk": "org#o1",
            "gs1sk": f"account#{n}{i}",
        }
        for n, i in ACCOUNT_ROWS
    ),
    *(
        {"PK": "ORG#o1", "SK": f"member#{n}{i}", "id": i, "orgId": "o1", "name": n}
        | ({"role": r} if r else {})
        for n, i, r in MEMBER_ROWS
    ),
]


def _accounts(name: str | None, id_: str | None) -> list[tuple[str, str]]:
    """The brute force: the accounts whose attributes equal the arguments given, in the
    index's order (its sort key, then the table's key)."""
    rows = [(n, i) for n, i in ACCOUNT_ROWS if name in (None, n) and id_ in (None, i)]
    return sorted(rows, key=lambda r: (f"account#{r[0]}{r[1]}", f"ACCOUNT#{r[1]}"))


def _members(name: str | None, id_: str | None) -> list[tuple[str, str, str | None]]:
    rows = [r for r in MEMBER_ROWS if name in (None, r[0]) and id_ in (None, r[1])]
    return sorted(rows, key=lambda r: f"member#{r[0]}{r[1]}")


async def test_a_condition_on_adjacent_placeholders_keeps_the_items_whose_attributes_equal_it(
    team_http: TeamTable,
) -> None:
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    query = """query($name: String, $id: ID) { accountsOfOrg(orgId: "o1", name: $name, id: $id)
      { totalCount edges { node { id name } } } }"""
    for name, id_ in [
        (None, None),
        ("Acme", None),
        ("Acme", "1"),
        ("Acm", None),
        ("Bolt", "7"),
        ("Ac", None),
        ("Acme", "e1"),
    ]:
        body = await gql(http, query, {"name": name, "id": id_})
        assert "errors" not in body, body
        found = body["data"]["accountsOfOrg"]
        rows = [(e["node"]["name"], e["node"]["id"]) for e in found["edges"]]
        assert rows == [(n, f"ACCOUNT#{i}") for n, i in _accounts(name, id_)], (name, id_)
        assert found["totalCount"] == len(rows), (name, id_)
    body = await gql(http, query, {"name": "Acme"})
    # one Query of the index for the page and one counting it, both filtered by name
    assert cost(body) == ({"Query": 2}, 1)


async def test_a_collection_over_adjacent_placeholders_reads_their_attributes(
    team_http: TeamTable,
) -> None:
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    query = """query($name: String) { org(id: "o1") {
      members(name: $name) { totalCount edges { node { name role id org { id } } } } } }"""
    for name in (None, "Ann", "An", "Anna", "A"):
        body = await gql(http, query, {"name": name})
        assert "errors" not in body, body
        members = body["data"]["org"]["members"]
        rows = [(e["node"]["name"], e["node"]["role"]) for e in members["edges"]]
        assert rows == [(n, r) for n, _, r in _members(name, None)], name
        assert members["totalCount"] == len(rows)
    lookup = await gql(http, '{ member(orgId: "o1", name: "Ann", id: "12") { name id } }')
    assert lookup["data"]["member"]["name"] == "Ann"


async def test_writes_build_the_key_of_adjacent_placeholders(team_http: TeamTable) -> None:
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    created = await gql(
        http,
        'mutation { createAccount(input: {id: "9", name: "Acme", orgId: "o1"}) { id name } }',
    )
    assert "errors" not in created, created
    body = await gql(http, '{ accountsOfOrg(orgId: "o1", name: "Acme") { edges { node { id } } } }')
    assert [e["node"]["id"] for e in body["data"]["accountsOfOrg"]["edges"]] == [
        "ACCOUNT#1",
        "ACCOUNT#12",
        "ACCOUNT#9",
    ]
    updated = await gql(
        http,
        'mutation { updateMember(input: {orgId: "o1", name: "Ann", id: "12", role: "owner"}) '
        "{ name role } }",
    )
    assert updated["data"]["updateMember"] == {"name": "Ann", "role": "owner"}, updated
    members = await gql(
        http, '{ org(id: "o1") { members(name: "Ann") { edges { node { role } } } } }'
    )
    assert [e["node"]["role"] for e in members["data"]["org"]["members"]["edges"]] == [
        "admin",
        "owner",
    ]


# ---- a map whose keys are ids: a user's roles keyed by organization -------------------------
PEOPLE = """
table:
  name: people
  partitionKey: PK
  sortKey: SK
types:
  Org:
    key: "ORG#{id}"
    fields: {name: String!}
  User:
    key: "USER#{id}"
    fields:
      organizationRoles: {type: JSON, attribute: OrganizationRoles}
      organizations: {type: "[Org!]!", ref: {keysOf: organizationRoles}}
"""
PEOPLE_TABLE = _table("people", "PK", "SK")
ROLES = {
    "u1": {
        "org2": "admin",
        "org10": "member",
        "org1": "member",
        "Org0": "guest",
        "ørg": "x",
        "org9": "gone",
    },
    "u2": {},
    "u3": None,
}
ORGS = ["org1", "org2", "org10", "Org0", "ørg"]  # org9 has no item
PEOPLE_ITEMS: list[dict[str, Any]] = [
    *({"PK": f"ORG#{o}", "SK": f"ORG#{o}", "name": o.upper()} for o in ORGS),
    *(
        {"PK": f"USER#{u}", "SK": f"USER#{u}"} | ({} if r is None else {"OrganizationRoles": r})
        for u, r in ROLES.items()
    ),
]


def _organizations(user: str) -> list[str]:
    """The brute force: the map's keys in UTF-8 byte order, those with an item."""
    keys = sorted(ROLES[user] or {}, key=lambda k: k.encode())
    return [k for k in keys if k in ORGS]


async def test_a_reference_over_a_maps_keys_answers_the_nodes_in_key_order(
    team_http: TeamTable,
) -> None:
    http = await team_http(PEOPLE, PEOPLE_TABLE, PEOPLE_ITEMS)
    query = "query($u: ID!) { user(id: $u) { organizations { id name } } }"
    for user in ROLES:
        body = await gql(http, query, {"u": user})
        assert "errors" not in body, (user, body)
        found = body["data"]["user"]["organizations"]
        assert [o["id"] for o in found] == [f"ORG#{o}" for o in _organizations(user)], user
        assert [o["name"] for o in found] == [o.upper() for o in _organizations(user)]
    body = await gql(http, query, {"u": "u1"})
    # the user's item, then every organization in one BatchGetItem
    assert cost(body) == ({"BatchGetItem": 2}, 2)
    ids = await gql(http, '{ user(id: "u1") { organizations { id } } }')
    assert len(ids["data"]["user"]["organizations"]) == 5  # read to leave org9 out


# the same roles as a map of maps (`{"org2": {"Role": "admin", "Since": …}}`), typed by a stored
# object with `entries:` rather than JSON
PEOPLE_OBJECTS = PEOPLE.replace(
    "organizationRoles: {type: JSON, attribute: OrganizationRoles}",
    "organizationRoles: {type: '[Role!]', attribute: OrganizationRoles, entries: org}\n"
    '      reached: {type: "[Org!]!", path: [organizations]}',
) + (
    "objects:\n  Role:\n    stored: true\n"
    "    fields: {org: String!, role: {type: String!, attribute: Role}, since: Int}\n"
)
PEOPLE_OBJECT_ITEMS: list[dict[str, Any]] = [
    *PEOPLE_ITEMS[: len(ORGS)],
    *(
        {"PK": f"USER#{u}", "SK": f"USER#{u}"}
        | (
            {}
            if r is None
            else {"OrganizationRoles": {o: {"Role": v, "Since": 2020} for o, v in r.items()}}
        )
        for u, r in ROLES.items()
    ),
]


async def test_a_reference_over_a_stored_objects_entries_answers_their_keys_nodes(
    team_http: TeamTable,
) -> None:
    """`keysOf` over a map of maps typed by a stored object with `entries:` (refused by
    check-model before): the entries' keys, byte-wise, one wave, a key with no item left out."""
    http = await team_http(PEOPLE_OBJECTS, PEOPLE_TABLE, PEOPLE_OBJECT_ITEMS)
    query = (
        "query($u: ID!) { user(id: $u) { organizationRoles { org role } "
        "organizations { id name } } }"
    )
    for user in ROLES:
        body = await gql(http, query, {"u": user})
        assert "errors" not in body, (user, body)
        found = body["data"]["user"]
        assert [o["id"] for o in found["organizations"]] == [
            f"ORG#{o}" for o in _organizations(user)
        ], user
        assert [o["name"] for o in found["organizations"]] == [
            o.upper() for o in _organizations(user)
        ]
        roles = sorted((ROLES[user] or {}).items(), key=lambda kv: kv[0].encode())
        expected = None if ROLES[user] is None else [{"org": o, "role": r} for o, r in roles]
        assert found["organizationRoles"] == expected
    body = await gql(http, query, {"u": "u1"})
    assert cost(body) == ({"BatchGetItem": 2}, 2)  # the user's item, then every organization
    # the keys alone (no field of the objects selected): still read, to leave org9 out; a
    # path's hop over them too (it answered org9 before)
    ids = await gql(http, '{ user(id: "u1") { organizations { id } reached { id } } }')
    assert "errors" not in ids, ids
    expected = [{"id": f"ORG#{o}"} for o in _organizations("u1")]
    assert ids["data"]["user"] == {"organizations": expected, "reached": expected}
    assert cost(ids) == ({"BatchGetItem": 2}, 2)


# ---- seed 000 end to end: its own table, users with no item, `GROUPSUB#` replicas kept exact
SEED_000 = """
table:
  name: SingleTable
  partitionKey: PK
  sortKey: SK
  indexes:
    inverted: {partitionKey: SK, sortKey: PK}
types:
  User:
    key: "USER#{id}"
    implicit: true
    fields:
      products:
        type: "[ProductAccess!]!"
        path: [groups, products]
        shape: {product: products, via: groups}
        materialize:
          key: {pk: "USER#{from}", sk: "GROUPSUB#{to}|group{via}"}
          type: GroupSub
      hasAccess:
        type: Boolean!
        path: [groups, products]
        arguments: {productId: ID!}
        materialize: products
  Group:
    key: "GROUP#{id}"
    fields:
      subscriptions: {type: "[String!]!", attribute: Subscriptions}
      products: {type: "[Product!]!", ref: subscriptions}
  Product: {key: "PRODUCT#{id}", implicit: true}
  GroupSub:
    key: {pk: "USER#{userId}", sk: "GROUPSUB#{productId}|group{groupId}"}
    parent: {type: User, field: user, collection: groupSubs}
    mutations: false
edges:
  MEMBER_OF:
    from: User
    to: Group
    forward: groups
    reverse: {field: members, index: inverted}
objects:
  ProductAccess:
    fields: {product: Product!, via: "[Group!]!"}
"""
# the same table, its paths walked (no replica): what the replicas must answer alike
WALKED = SEED_000.replace(
    """        materialize:
          key: {pk: "USER#{from}", sk: "GROUPSUB#{to}|group{via}"}
          type: GroupSub
""",
    "",
).replace("        materialize: products\n", "")
SEED_000_TABLE = _table("SingleTable", "PK", "SK", ("inverted", "SK", "PK"))
# as the seed writes it: memberships, groups with their subscriptions, and the replicas
SEED_000_ITEMS: list[dict[str, Any]] = [
    {"PK": "USER#alice", "SK": "GROUP#1"},
    {"PK": "USER#alice", "SK": "GROUP#2"},
    {"PK": "USER#bob", "SK": "GROUP#1"},
    {"PK": "GROUP#1", "SK": "GROUP#1", "Subscriptions": ["prod1", "prod2"]},
    {"PK": "GROUP#2", "SK": "GROUP#2", "Subscriptions": ["prod2", "prod3"]},
    *(
        {"PK": f"USER#{user}", "SK": f"GROUPSUB#{sub}"}
        for user, sub in [
            ("alice", "prod1|group1"),
            ("alice", "prod2|group1"),
            ("alice", "prod2|group2"),
            ("alice", "prod3|group2"),
            ("bob", "prod1|group1"),
            ("bob", "prod2|group1"),
        ]
    ),
]
USERS = ("alice", "bob", "carol")
PRODUCTS = ("prod1", "prod2", "prod3", "prod4", "prod9")
# moto copies the table for each action of a transaction: wait for it as DynamoDB never makes
PATIENT = client_config(read_timeout=60.0)
PATIENCE = RetryPolicy(deadline=180.0)


class Seed:
    """Seed 000's table, served by the replicated model and by the walked one."""

    def __init__(self, table: Table, url: str, replicated: Path, walked: Path) -> None:
        self.table, self.url, self.replicated, self.walked = table, url, replicated, walked

    async def gql(
        self, query: str, variables: dict[str, Any] | None = None, *, walked: bool = False
    ) -> dict[str, Any]:
        model = self.walked if walked else self.replicated
        app = create_app(Settings(model=str(model), table="SingleTable"), table=self.table)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://seed") as client:
            return await gql(client, query, variables)

    async def drift(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """The brute force: (replicas the memberships and subscriptions call for, replicas
        stored), from the whole table."""
        items = await scan(self.table)
        members = [
            (pk[5:], sk[6:])
            for pk, sk in items
            if pk.startswith("USER#") and sk.startswith("GROUP#")
        ]
        subscribed = {
            pk[6:]: item.get("Subscriptions") or []
            for (pk, sk), item in items.items()
            if pk.startswith("GROUP#") and pk == sk
        }
        wanted = {
            (f"USER#{u}", f"GROUPSUB#{p}|group{g}")
            for u, g in members
            for p in subscribed.get(g, [])
        }
        stored = {(pk, sk) for pk, sk in items if sk.startswith("GROUPSUB#")}
        return wanted, stored

    async def check(self) -> None:
        """The replicas equal the path, and both models answer as the brute force does: every
        user's products with the groups they come by, and each hasAccess (one request per user
        and model, each product an alias)."""
        wanted, stored = await self.drift()
        assert stored == wanted
        tests = " ".join(f'{p}: hasAccess(productId: "{p}")' for p in PRODUCTS)
        products = "products { product { id } via { id } }"
        query = f"query($u: ID!) {{ user(id: $u) {{ {products} {tests} }} }}"
        for user in USERS:
            answers = [await self.gql(query, {"u": user}, walked=w) for w in (False, True)]
            reached: dict[str, set[str]] = {}
            for pk, sk in wanted:
                if pk == f"USER#{user}":
                    product, group = sk.removeprefix("GROUPSUB#").split("|group")
                    reached.setdefault(product, set()).add(f"GROUP#{group}")
            for body in answers:  # the replica in key order, the walk as first reached
                assert "errors" not in body, body
                found = body["data"]["user"]
                vias = {p["product"]["id"]: {v["id"] for v in p["via"]} for p in found["products"]}
                assert vias == {f"PRODUCT#{p}": groups for p, groups in reached.items()}
                assert {p for p in PRODUCTS if found[p]} == set(reached)


@asynccontextmanager
async def seeded(url: str, tmp_path: Path) -> AsyncIterator[Seed]:
    """Seed 000's table at ``url`` (a reset server), as the seed writes it with boto3."""
    resource = team_boto3(url, "resource")
    try:
        created = resource.create_table(BillingMode="PAY_PER_REQUEST", **SEED_000_TABLE)
        with created.batch_writer() as batch:
            for item in SEED_000_ITEMS:
                batch.put_item(Item=item)
    finally:
        resource.meta.client.close()
    replicated, walked = tmp_path / "seed000.yaml", tmp_path / "walked.yaml"
    replicated.write_text(SEED_000)
    walked.write_text(WALKED)
    layout = engine_for(str(replicated)).layout
    async with open_client(Endpoint(url), PATIENT, lean=LEAN) as client:
        table = Table(client, "SingleTable", PATIENCE, layout=layout)
        yield Seed(table, url, replicated, walked)


@pytest.fixture
async def seed(dynamodb: EmbeddedDynamoDB, tmp_path: Path) -> AsyncIterator[Seed]:
    dynamodb.reset()
    async with seeded(dynamodb.url, tmp_path) as seed:
        yield seed


async def test_seed_000s_own_table_answers_from_its_replicas_as_its_path_does(
    seed: Seed,
) -> None:
    await seed.check()
    body = await seed.gql('{ user(id: "alice") { hasAccess(productId: "prod2") } }')
    assert body["data"]["user"]["hasAccess"] is True
    # one Query of alice's partition (`GROUPSUB#prod2|group`) and her clock's item, together
    assert cost(body) == ({"BatchGetItem": 1, "Query": 1}, 1)
    walked = await seed.gql('{ user(id: "alice") { hasAccess(productId: "prod2") } }', walked=True)
    assert cost(walked) == ({"BatchGetItem": 1, "Query": 1}, 2)  # her groups, then theirs
    subs = await seed.gql(
        '{ user(id: "alice") { groupSubs { totalCount edges { node { productId groupId } } } } }'
    )
    assert subs["data"]["user"]["groupSubs"]["totalCount"] == 4


MUTATIONS = [
    'mutation { addMemberOf(userId: "carol", groupId: "2") { node { id } } }',
    'mutation { updateGroup(input: {id: "1", subscriptions: ["prod1", "prod4"]}) { id } }',
    'mutation { removeMemberOf(userId: "alice", groupId: "2") }',
    'mutation { createGroup(input: {id: "3", subscriptions: ["prod9", "prod1"]}) { id } }',
    'mutation { addMemberOf(userId: "bob", groupId: "3") { node { id } } }',
    'mutation { deleteGroup(id: "1") { id } }',
]


async def test_every_mutation_keeps_seed_000s_replicas_exact(
    seed: Seed, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for mutation in MUTATIONS:
        body = await seed.gql(mutation)
        assert "errors" not in body, (mutation, body)
        await seed.check()
    items = await scan(seed.table)
    # the users' clocks: in one item of each partition, which no listing answers
    clocks = {pk: item[CLOCK] for (pk, sk), item in items.items() if sk == CLOCK_SK}
    assert set(clocks) == {"USER#alice", "USER#bob", "USER#carol"}
    assert not any(item.get(PENDING) for item in items.values())
    carol = await seed.gql(
        '{ user(id: "carol") { groupSubs { totalCount edges { node { id } } } '
        "groups { totalCount } } }"
    )
    assert carol["data"]["user"]["groupSubs"]["totalCount"] == 2
    assert len(carol["data"]["user"]["groupSubs"]["edges"]) == 2
    args = ["--model", str(seed.replicated), "--dynamodb", seed.url]
    await asyncio.to_thread(main, ["rebuild", *args, "--dry-run"])  # exits 0: nothing differs
    assert capsys.readouterr().out == ""
    dumped = tmp_path / "dump.jsonl"
    await asyncio.to_thread(main, ["dump", str(dumped), *args])
    assert CLOCK_SK not in dumped.read_text()
    assert "GROUPSUB#" in dumped.read_text()


async def test_rebuild_repairs_seed_000s_replicas_of_users_with_no_item(
    seed: Seed, capsys: pytest.CaptureFixture[str]
) -> None:
    client = seed.table.client
    gone = {"PK": {"S": "USER#alice"}, "SK": {"S": "GROUPSUB#prod3|group2"}}
    await client.delete_item({"TableName": "SingleTable", "Key": gone})
    extra = {"PK": {"S": "USER#carol"}, "SK": {"S": "GROUPSUB#prod1|group1"}}
    await client.put_item({"TableName": "SingleTable", "Item": extra})
    args = ["rebuild", "--model", str(seed.replicated), "--dynamodb", seed.url]
    expected = "missing USER#alice GROUPSUB#prod3|group2\nextra USER#carol GROUPSUB#prod1|group1\n"
    with pytest.raises(SystemExit) as exited:
        await asyncio.to_thread(main, [*args, "--dry-run"])
    assert exited.value.code == 1
    assert capsys.readouterr().out == expected
    await asyncio.to_thread(main, args)
    assert capsys.readouterr().out == expected
    await seed.check()


MEMBERS = 101  # one more replica than a transaction holds actions


async def test_a_fan_out_past_one_transaction_marks_users_in_their_clocks_item(
    seed: Seed, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = seed.table.client
    for i in range(MEMBERS):
        item = {"PK": {"S": f"USER#m{i}"}, "SK": {"S": "GROUP#big"}}
        await client.put_item({"TableName": "SingleTable", "Item": item})
    group = {"PK": {"S": "GROUP#big"}, "SK": {"S": "GROUP#big"}, "Subscriptions": {"L": []}}
    await client.put_item({"TableName": "SingleTable", "Item": group})
    finish, seen = pending._write, []

    async def read_between(*args: Any) -> None:
        """While the replicas are unwritten, a marked member reads its path."""
        items = await scan(seed.table)
        seen.append(int(items[("USER#m7", CLOCK_SK)][PENDING]))
        assert not any(sk.startswith("GROUPSUB#prod5") for _, sk in items)
        body = await seed.gql('{ user(id: "m7") { hasAccess(productId: "prod5") } }')
        seen.append(body["data"]["user"]["hasAccess"])
        await finish(*args)

    monkeypatch.setattr(pending, "_write", read_between)
    body = await seed.gql(
        'mutation { updateGroup(input: {id: "big", subscriptions: ["prod5"]}) { id } }'
    )
    assert "errors" not in body, body
    assert seen == [1, True]
    wanted, stored = await seed.drift()
    assert stored == wanted and len(stored) == 6 + MEMBERS
    items = await scan(seed.table)
    assert not [key for key, item in items.items() if item.get(PENDING)]
    assert not [key for key in items if key[0].startswith("~replicas#")]
    read = await seed.gql('{ user(id: "m7") { hasAccess(productId: "prod5") } }')
    assert read["data"]["user"]["hasAccess"] is True
    assert cost(read)[1] == 1


ROUNDS = [  # changes sent at once: memberships racing the subscriptions of their groups
    [
        'addMemberOf(userId: "carol", groupId: "1") { node { id } }',
        'updateGroup(input: {id: "1", subscriptions: ["prod1", "prod2", "prod3"]}) { id }',
    ],
    [
        'addMemberOf(userId: "carol", groupId: "2") { node { id } }',
        'removeMemberOf(userId: "alice", groupId: "1")',
        'updateGroup(input: {id: "2", subscriptions: ["prod4"]}) { id }',
    ],
    [
        'updateGroup(input: {id: "1", subscriptions: ["prod9"]}) { id }',
        'addMemberOf(userId: "bob", groupId: "2") { node { id } }',
        'removeMemberOf(userId: "carol", groupId: "1")',
    ],
    [
        'addMemberOf(userId: "alice", groupId: "1") { node { id } }',
        'updateGroup(input: {id: "2", subscriptions: ["prod2", "prod3"]}) { id }',
        'updateGroup(input: {id: "1", subscriptions: ["prod1"]}) { id }',
    ],
]


async def test_concurrent_changes_leave_seed_000s_replicas_exact(
    serial_dynamodb: SerialDynamoDB, tmp_path: Path
) -> None:
    """On DynamoDB's isolation (a server that serves one request at a time), changes racing
    each other through a user with no item (its clock in its `~edgewise` item) leave the
    replicas equal to the path after every round (seed 000's warning)."""
    serial_dynamodb.reset()
    async with seeded(serial_dynamodb.url, tmp_path) as seed:
        for changes in ROUNDS:
            bodies = await asyncio.gather(*(seed.gql(f"mutation {{ {c} }}") for c in changes))
            for body in bodies:
                codes = {e["extensions"]["code"] for e in body.get("errors", [])}
                assert codes <= {"CONFLICT"}, body  # retried past its attempts: nothing written
            await seed.check()
