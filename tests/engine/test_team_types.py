"""Items decide their type (MODELS.md, "Items decide their type; stored objects"): tables where
a type attribute, not the key, tells types apart, constant sort templates, and fields read from
the key. Each table is written with boto3 straight into moto, in the layout the other tool
writes, then served; answers are compared with a brute force over the items written, and each
shape's cost read from the trace."""

from __future__ import annotations

import base64
import json
from typing import Any

from boto3.dynamodb.types import Binary

from tests.conftest import TeamTable
from tests.engine.test_team_tables import _table
from tests.helpers import cost, gql


def _codes(body: dict[str, Any]) -> set[str]:
    return {e["extensions"]["code"] for e in body.get("errors", [])}


# ---- two types, one key template: a boto3 table whose `entity_type` says which ---------------

# Alex DeBrie's GitHub design as a team writes it by hand with boto3: users and organizations
# share `ACCOUNT#<name>` keys, an `entity_type` attribute says which an item is; memberships
# live in their organization's partition; a user stars organizations (edge items, listed in
# reverse on an inverted index); GSI1 lists every account by name.
ACCOUNTS = """
table:
  name: accounts
  partitionKey: PK
  sortKey: SK
  typeAttribute: entity_type
  indexes:
    inverted: {partitionKey: SK, sortKey: PK}
    GSI1: {partitionKey: GSI1PK, sortKey: GSI1SK}
types:
  User:
    key: "ACCOUNT#{id}"
    typeValue: user
    fields:
      name: String!
      email: String!
      favoriteId: String
      favorite: {type: Organization, ref: favoriteId}
      starredOwners: {type: "[User!]!", path: [starred, owner]}
    indexes: {GSI1: {pk: "ACCOUNTS", sk: "{name}"}}
  Organization:
    key: "ACCOUNT#{id}"
    typeValue: organization
    fields:
      name: String!
      plan: String!
      ownerId: String!
      owner: {type: User!, ref: ownerId}
    indexes: {GSI1: {pk: "ACCOUNTS", sk: "{name}"}}
  Membership:
    key: {pk: "ACCOUNT#{organizationId}", sk: "MEMBERSHIP#{userId}"}
    typeValue: membership
    parent: {type: Organization, field: organization, collection: memberships}
    fields:
      role: String!
      member: {type: User, ref: userId}
edges:
  STARS:
    from: User
    to: Organization
    forward: starred
    reverse: {field: stargazers, index: inverted}
queries:
  accounts:
    types: [User, Organization]
    union: Account
    index: GSI1
    partition: "ACCOUNTS"
  users:
    type: User
    index: GSI1
    partition: "ACCOUNTS"
"""
ACCOUNTS_TABLE = _table(
    "accounts", "PK", "SK", ("inverted", "SK", "PK"), ("GSI1", "GSI1PK", "GSI1SK")
)


def _account(kind: str, name: str, **attributes: Any) -> dict[str, Any]:
    key = f"ACCOUNT#{name}"
    item = {"PK": key, "SK": key, "entity_type": kind, "name": name}
    return item | {"GSI1PK": "ACCOUNTS", "GSI1SK": name} | attributes


ACCOUNTS_ITEMS: list[dict[str, Any]] = [
    _account("user", "alice", email="alice@example.com", favoriteId="acme"),
    _account("user", "bob", email="bob@example.com", favoriteId="carol"),  # a user, not an org
    _account("user", "carol", email="carol@example.com", ownerId="bob"),  # an ownerId of its own
    _account("organization", "acme", plan="pro", ownerId="alice"),
    _account("organization", "globex", plan="free", ownerId="bob"),
    _account("organization", "initech", plan="free", ownerId="carol"),
    _account("team", "devs"),  # a type the model does not declare, in GSI1's partition
    {"PK": "ACCOUNT#acme", "SK": "MEMBERSHIP#alice", "entity_type": "membership", "role": "owner"},
    {"PK": "ACCOUNT#acme", "SK": "MEMBERSHIP#bob", "entity_type": "membership", "role": "member"},
    {"PK": "ACCOUNT#acme", "SK": "MEMBERSHIP#carol", "entity_type": "invitation", "role": "x"},
    {"PK": "ACCOUNT#acme", "SK": "MEMBERSHIP#globex", "entity_type": "membership", "role": "peer"},
    {"PK": "ACCOUNT#bob", "SK": "MEMBERSHIP#alice", "entity_type": "membership", "role": "odd"},
    {"PK": "ACCOUNT#alice", "SK": "ACCOUNT#acme", "entity_type": "STARS"},
    {"PK": "ACCOUNT#alice", "SK": "ACCOUNT#carol", "entity_type": "STARS"},  # carol: a user
    {"PK": "ACCOUNT#alice", "SK": "ACCOUNT#initech", "entity_type": "STARS"},
    {"PK": "ACCOUNT#bob", "SK": "ACCOUNT#acme", "entity_type": "STARS"},
]


def _of(kind: str) -> dict[str, dict[str, Any]]:
    """The items of one type value, by name: what the brute force answers from."""
    return {
        i["name"]: i for i in ACCOUNTS_ITEMS if i.get("entity_type") == kind and i["PK"] == i["SK"]
    }


async def test_a_lookup_answers_only_an_item_of_its_own_type(team_http: TeamTable) -> None:
    """The issue's three observations, each failing before: `node(id:)` on an organization
    answered `User`, `organization(id:)` on a user answered the user, `user(id:)` on an
    organization answered INTERNAL_SERVER_ERROR."""
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    body = await gql(
        http,
        '{ org: node(id: "ACCOUNT#acme") { __typename id ... on Organization { plan } } '
        'user: node(id: "ACCOUNT#alice") { __typename ... on User { email } } '
        'team: node(id: "ACCOUNT#devs") { id } '
        'orgAsUser: user(id: "acme") { name email } '
        'userAsOrg: organization(id: "alice") { name plan } '
        'byGlobalId: user(id: "ACCOUNT#globex") { name } '
        'realOrg: organization(id: "ACCOUNT#globex") { name plan } '
        'nodes(ids: ["ACCOUNT#bob", "ACCOUNT#initech", "ACCOUNT#nobody"]) { __typename id } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    assert data["org"] == {"__typename": "Organization", "id": "ACCOUNT#acme", "plan": "pro"}
    assert data["user"] == {"__typename": "User", "email": "alice@example.com"}
    assert data["team"] is None  # a type the model does not declare: no node
    assert data["orgAsUser"] is None and data["userAsOrg"] is None and data["byGlobalId"] is None
    assert data["realOrg"] == {"name": "globex", "plan": "free"}
    assert data["nodes"] == [
        {"__typename": "User", "id": "ACCOUNT#bob"},
        {"__typename": "Organization", "id": "ACCOUNT#initech"},
        None,
    ]
    # one read per distinct key, all in one round
    assert cost(body) == ({"BatchGetItem": 1}, 1)


async def test_a_reference_or_a_parent_of_another_type_is_missing(team_http: TeamTable) -> None:
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    body = await gql(
        http,
        '{ alice: user(id: "alice") { favorite { name plan } } '
        'bob: user(id: "bob") { favorite { name plan } } '
        'acme: organization(id: "acme") { owner { name email } } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    assert data["alice"]["favorite"] == {"name": "acme", "plan": "pro"}
    assert data["bob"]["favorite"] is None  # carol is a user: no organization of that id
    assert data["acme"]["owner"] == {"name": "alice", "email": "alice@example.com"}
    # a membership kept in a user's partition names that user as its organization: NOT_FOUND,
    # never the user's fields
    odd = await gql(
        http,
        '{ membership(organizationId: "bob", userId: "alice") { role '
        "organization { name plan } } }",
    )
    assert _codes(odd) == {"NOT_FOUND"}, odd
    assert "bob@example.com" not in json.dumps(odd) and odd["data"]["membership"] is None


async def test_listings_answer_and_count_only_items_of_their_types(team_http: TeamTable) -> None:
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    body = await gql(
        http,
        "{ accounts { totalCount edges { node { __typename "
        "... on User { name email } ... on Organization { name plan } } } } "
        "users(first: 2) { totalCount edges { node { name } } pageInfo { hasNextPage } } "
        'acme: organization(id: "acme") { memberships { totalCount edges { node { role '
        "member { name } } } } stargazers { totalCount edges { node { name } } } } "
        'alice: user(id: "alice") { starred { totalCount edges { node { id } } } } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    users, orgs = _of("user"), _of("organization")
    # the brute force: GSI1's ACCOUNTS partition in name order, items of the listed type values
    expected = sorted([*users.values(), *orgs.values()], key=lambda i: i["GSI1SK"])
    assert [e["node"]["name"] for e in data["accounts"]["edges"]] == [i["name"] for i in expected]
    assert [e["node"]["__typename"] for e in data["accounts"]["edges"]] == [
        "User" if i["entity_type"] == "user" else "Organization" for i in expected
    ]
    assert data["accounts"]["totalCount"] == len(expected)  # the `team` item is not counted
    assert data["users"] == {
        "totalCount": len(users),
        "edges": [{"node": {"name": n}} for n in sorted(users)[:2]],
        "pageInfo": {"hasNextPage": True},
    }
    members = [
        i
        for i in ACCOUNTS_ITEMS
        if i["PK"] == "ACCOUNT#acme"
        and i["SK"].startswith("MEMBERSHIP#")
        and i["entity_type"] == "membership"
    ]
    acme = data["acme"]
    assert acme["memberships"]["totalCount"] == len(members) == 3  # not the invitation
    # the member ref: globex is an organization, so no user
    assert [(e["node"]["role"], e["node"]["member"]) for e in acme["memberships"]["edges"]] == [
        ("owner", {"name": "alice"}),
        ("member", {"name": "bob"}),
        ("peer", None),
    ]
    stars = sorted(
        i["PK"] for i in ACCOUNTS_ITEMS if i["SK"] == "ACCOUNT#acme" and i["PK"] != i["SK"]
    )
    assert [e["node"]["name"] for e in acme["stargazers"]["edges"]] == [
        p.removeprefix("ACCOUNT#") for p in stars
    ]
    assert acme["stargazers"]["totalCount"] == len(stars)  # not the organization's own item
    starred = data["alice"]["starred"]
    # the edges themselves, whatever their far end holds; the user's own item is no edge
    assert [e["node"]["id"] for e in starred["edges"]] == [
        "ACCOUNT#acme",
        "ACCOUNT#carol",
        "ACCOUNT#initech",
    ]
    assert starred["totalCount"] == 3


async def test_an_edge_or_a_path_to_another_type_never_answers_its_data(
    team_http: TeamTable,
) -> None:
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    body = await gql(http, '{ user(id: "alice") { starred { edges { node { name plan } } } } }')
    # carol is a user: the STARS edge to her names no organization, which is NOT_FOUND
    assert _codes(body) == {"NOT_FOUND"}, body
    assert "carol@example.com" not in json.dumps(body)
    # a path over the starred organizations to their owners: carol's own `ownerId` (she is a
    # user) names nobody, so only acme's and initech's owners are reached
    path = await gql(http, '{ user(id: "alice") { starredOwners { name } } }')
    assert "errors" not in path, path
    assert [u["name"] for u in path["data"]["user"]["starredOwners"]] == ["alice", "carol"]


async def test_writes_check_the_type_and_write_its_value(
    team_http: TeamTable, team_client: Any
) -> None:
    http = await team_http(ACCOUNTS, ACCOUNTS_TABLE, ACCOUNTS_ITEMS)
    for mutation in (
        'updateUser(input: {id: "acme", email: "x@y.z"}) { name }',
        'updateOrganization(input: {id: "alice", plan: "pro"}) { name }',
        'deleteUser(id: "acme") { id }',
        'deleteOrganization(id: "bob") { id }',
        'addStars(userId: "acme", organizationId: "globex") { node { name } }',
        'addStars(userId: "bob", organizationId: "carol") { node { name } }',
        'createMembership(input: {organizationId: "alice", userId: "bob", role: "x"}) { role }',
    ):
        body = await gql(http, f"mutation {{ {mutation} }}")
        assert _codes(body) == {"NOT_FOUND"}, (mutation, body)
    scan = team_client.scan(TableName="accounts")["Items"]
    assert len(scan) == len(ACCOUNTS_ITEMS)  # nothing written, nothing deleted
    acme = team_client.get_item(
        TableName="accounts", Key={"PK": {"S": "ACCOUNT#acme"}, "SK": {"S": "ACCOUNT#acme"}}
    )["Item"]
    assert "email" not in acme and acme["entity_type"] == {"S": "organization"}
    taken = await gql(
        http, 'mutation { createUser(input: {id: "acme", name: "acme", email: "a@b.c"}) { id } }'
    )
    assert _codes(taken) == {"CONFLICT"}  # the key is an organization's
    created = await gql(
        http,
        'mutation { createUser(input: {id: "dave", name: "dave", email: "d@e.f"}) { id } '
        'createMembership(input: {organizationId: "globex", userId: "dave", role: "member"}) '
        "{ role } }",
    )
    assert "errors" not in created, created
    dave = team_client.get_item(
        TableName="accounts", Key={"PK": {"S": "ACCOUNT#dave"}, "SK": {"S": "ACCOUNT#dave"}}
    )["Item"]
    assert dave["entity_type"] == {"S": "user"} and dave["GSI1SK"] == {"S": "dave"}
    membership = team_client.get_item(
        TableName="accounts",
        Key={"PK": {"S": "ACCOUNT#globex"}, "SK": {"S": "MEMBERSHIP#dave"}},
    )["Item"]
    assert membership["entity_type"] == {"S": "membership"}
    found = await gql(http, '{ node(id: "ACCOUNT#dave") { __typename } }')
    assert found["data"]["node"] == {"__typename": "User"}


# ---- unprefixed keys told apart by `_et`: dynamodb-toolbox's layout ---------------------------

# dynamodb-toolbox names each entity in `_et` and keeps `_ct`/`_md`; here a customer's orders
# and addresses share the customer's partition under bare ids, which only `_et` tells apart.
TOOLBOX = """
table:
  name: toolbox-orders
  partitionKey: pk
  sortKey: sk
  typeAttribute: _et
types:
  Order:
    key: {pk: "{customerId}", sk: "{orderId}"}
    fields: {total: Float!, created: {type: DateTime!, attribute: _ct}}
  Address:
    key: {pk: "{customerId}", sk: "{label}"}
    fields: {street: String!}
queries:
  ordersOf: {type: Order, partition: "{customerId}"}
  addressesOf: {type: Address, partition: "{customerId}"}
"""
TOOLBOX_ITEMS: list[dict[str, Any]] = [
    *[
        {
            "pk": "c1",
            "sk": f"{n:04d}",
            "_et": "Order",
            "total": n * 10,
            "_ct": f"2024-01-{n + 1:02d}T00:00:00.000Z",
            "_md": f"2024-01-{n + 1:02d}T00:00:00.000Z",
        }
        for n in range(1, 8)
    ],
    {"pk": "c1", "sk": "0005x", "_et": "Address", "street": "5 Main St"},
    {"pk": "c1", "sk": "home", "_et": "Address", "street": "1 Elm St"},
    {"pk": "c1", "sk": "work", "_et": "Address", "street": "9 Oak Ave"},
    {"pk": "c1", "sk": "0003a", "_et": "Coupon"},  # another entity of the same service
    {"pk": "c2", "sk": "0001", "_et": "Order", "total": 5, "_ct": "2024-02-01T00:00:00.000Z"},
]


async def test_unprefixed_keys_are_told_apart_by_the_type_attribute(
    team_http: TeamTable,
) -> None:
    http = await team_http(TOOLBOX, _table("toolbox-orders", "pk", "sk"), TOOLBOX_ITEMS)
    body = await gql(
        http,
        '{ ordersOf(customerId: "c1", first: 3) { totalCount edges { node { id orderId total } } '
        "pageInfo { hasNextPage } } "
        'addressesOf(customerId: "c1") { totalCount edges { node { label street } } } '
        'order(customerId: "c1", orderId: "home") { total } '
        'address(customerId: "c1", label: "0002") { street } '
        'realAddress: address(customerId: "c1", label: "work") { street } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    orders = sorted(
        (i for i in TOOLBOX_ITEMS if i["pk"] == "c1" and i["_et"] == "Order"), key=lambda i: i["sk"]
    )
    addresses = sorted(
        (i for i in TOOLBOX_ITEMS if i["pk"] == "c1" and i["_et"] == "Address"),
        key=lambda i: i["sk"],
    )
    assert data["ordersOf"]["totalCount"] == len(orders) == 7
    assert [e["node"]["orderId"] for e in data["ordersOf"]["edges"]] == [
        i["sk"] for i in orders[:3]
    ]
    assert data["ordersOf"]["pageInfo"]["hasNextPage"] is True
    assert data["addressesOf"] == {
        "totalCount": len(addresses),
        "edges": [{"node": {"label": i["sk"], "street": i["street"]}} for i in addresses],
    }
    assert data["order"] is None and data["address"] is None
    assert data["realAddress"] == {"street": "9 Oak Ave"}
    # an order's opaque global id at an address's key finds nothing
    order_id = data["ordersOf"]["edges"][0]["node"]["id"]
    kind, pk, _ = json.loads(base64.urlsafe_b64decode(order_id + "=" * (-len(order_id) % 4)))
    forged = base64.urlsafe_b64encode(json.dumps([kind, pk, "home"]).encode()).decode()
    found = await gql(http, f'{{ node(id: "{forged.rstrip("=")}") {{ id }} }}')
    assert found["data"]["node"] is None, found
    # every page of a listing read past the addresses among the orders, none short
    query = """query($after: String) { ordersOf(customerId: "c1", first: 2, after: $after) {
      edges { node { orderId } } pageInfo { hasNextPage endCursor } } }"""
    seen, after = [], None
    while True:
        page = (await gql(http, query, {"after": after}))["data"]["ordersOf"]
        assert len(page["edges"]) == 2 or not page["pageInfo"]["hasNextPage"]
        seen += [e["node"]["orderId"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [i["sk"] for i in orders]


# ---- a constant sort template is a prefix ----------------------------------------------------

# A boto3 table keeping an order's shipments and items in its partition (`o#<id>`): a sort
# template without a placeholder (`sh#`) selects every shipment, as begins_with.
SHIPMENTS = """
table:
  name: shipments
  partitionKey: PK
  sortKey: SK
  indexes:
    GSI1: {partitionKey: GSI1PK, sortKey: GSI1SK}
types:
  Order:
    key: "o#{id}"
    fields: {status: String!}
  Shipment:
    key: {pk: "o#{orderId}", sk: "sh#{id}"}
    fields: {carrier: String!}
    indexes: {GSI1: {pk: "CARRIER#{carrier}", sk: "sh#"}}
  Item:
    key: {pk: "o#{orderId}", sk: "it#{id}"}
    fields: {sku: String!}
queries:
  shipmentsOfOrder: {type: Shipment, partition: "o#{orderId}", sort: {template: "sh#"}}
  shipments: {on: Order, type: Shipment, partition: "o#{id}", sort: {template: "sh#"}}
  byCarrier: {type: Shipment, index: GSI1, partition: "CARRIER#{carrier}", sort: {template: "sh#"}}
"""
SHIPMENT_ITEMS: list[dict[str, Any]] = [
    {"PK": "o#1", "SK": "o#1", "status": "OPEN"},
    *[
        {
            "PK": "o#1",
            "SK": f"sh#{n:03d}",
            "carrier": "ups" if n % 2 else "dhl",
            "GSI1PK": f"CARRIER#{'ups' if n % 2 else 'dhl'}",
            "GSI1SK": "sh#",
        }
        for n in range(64)
    ],
    *[{"PK": "o#1", "SK": f"it#{n}", "sku": f"sku-{n}"} for n in range(5)],
    {"PK": "o#2", "SK": "sh#x", "carrier": "ups"},
]


async def test_a_sort_template_without_a_placeholder_is_a_prefix(
    team_http: TeamTable, team_client: Any
) -> None:
    """Failed before: `sh#` was sent as the whole sort key, so totalCount was 0 of 64."""
    http = await team_http(
        SHIPMENTS, _table("shipments", "PK", "SK", ("GSI1", "GSI1PK", "GSI1SK")), SHIPMENT_ITEMS
    )
    body = await gql(
        http,
        '{ shipmentsOfOrder(orderId: "1", first: 5) { totalCount edges { node { id carrier } } } '
        'order(id: "1") { shipments(first: 100) { totalCount edges { node { carrier } } } } '
        'byCarrier(carrier: "ups", first: 100) { totalCount } }',
    )
    assert "errors" not in body, body
    data = body["data"]
    shipped = sorted(
        (i for i in SHIPMENT_ITEMS if i["PK"] == "o#1" and i["SK"].startswith("sh#")),
        key=lambda i: i["SK"],
    )
    assert data["shipmentsOfOrder"]["totalCount"] == len(shipped) == 64
    assert [e["node"]["carrier"] for e in data["shipmentsOfOrder"]["edges"]] == [
        i["carrier"] for i in shipped[:5]
    ]
    assert data["order"]["shipments"]["totalCount"] == 64
    assert len(data["order"]["shipments"]["edges"]) == 64
    assert data["byCarrier"]["totalCount"] == sum(1 for i in shipped if i["carrier"] == "ups")
    # one round: the order and every Query at once
    assert cost(body) == ({"Query": 4, "BatchGetItem": 1}, 1)
    # as a value a type writes (an index's sort key), the template is written as it stands
    created = await gql(
        http, 'mutation { createShipment(input: {orderId: "3", id: "a", carrier: "fedex"}) { id } }'
    )
    assert "errors" not in created, created
    item = team_client.get_item(
        TableName="shipments", Key={"PK": {"S": "o#3"}, "SK": {"S": "sh#a"}}
    )["Item"]
    assert item["GSI1SK"] == {"S": "sh#"} and item["GSI1PK"] == {"S": "CARRIER#fedex"}


# ---- `from: key`: a key field whose attribute holds another value ----------------------------

# The AWS Database Encryption SDK's layout: key attributes stay plaintext (signed), other
# attributes are encrypted to binary, and the item carries its header and footer. The team also
# keeps the username as an encrypted attribute of the same name.
ENCRYPTED = """
table:
  name: customers
  partitionKey: pk
  sortKey: sk
  typeAttribute: kind
types:
  Customer:
    key: {pk: "CUSTOMER#{username}", sk: "CUSTOMER#{username}"}
    fields:
      username: {type: String!, from: key}
      email: String
      contact: {type: String, attribute: email}
"""
SECRET = Binary(b"\x01\x02ciphertext")
ENCRYPTED_ITEMS: list[dict[str, Any]] = [
    {
        "pk": "CUSTOMER#alice",
        "sk": "CUSTOMER#alice",
        "kind": "Customer",
        "username": SECRET,
        "email": "alice@example.com",
        "aws_dbe_head": Binary(b"head"),
        "aws_dbe_foot": Binary(b"foot"),
    }
]


async def test_a_field_from_the_key_ignores_the_attribute_of_its_name(
    team_http: TeamTable, team_client: Any
) -> None:
    """Failed before: `from` was refused, and without it `username` read the binary attribute
    (INTERNAL_SERVER_ERROR)."""
    http = await team_http(ENCRYPTED, _table("customers", "pk", "sk"), ENCRYPTED_ITEMS)
    body = await gql(http, '{ customer(username: "alice") { username email contact } }')
    assert body["data"]["customer"] == {
        "username": "alice",
        "email": "alice@example.com",
        "contact": "alice@example.com",
    }, body
    updated = await gql(
        http,
        'mutation { updateCustomer(input: {username: "alice", email: "a@b.c"}) '
        "{ username contact } }",
    )
    assert updated["data"]["updateCustomer"] == {"username": "alice", "contact": "a@b.c"}, updated
    item = team_client.get_item(
        TableName="customers",
        Key={"pk": {"S": "CUSTOMER#alice"}, "sk": {"S": "CUSTOMER#alice"}},
    )["Item"]
    assert item["username"] == {"B": b"\x01\x02ciphertext"}  # left alone
    assert item["email"] == {"S": "a@b.c"} and "aws_dbe_head" in item
    created = await gql(
        http,
        'mutation { createCustomer(input: {username: "bob", email: "bob@example.com"}) '
        "{ username } }",
    )
    assert created["data"]["createCustomer"] == {"username": "bob"}, created
    bob = team_client.get_item(
        TableName="customers", Key={"pk": {"S": "CUSTOMER#bob"}, "sk": {"S": "CUSTOMER#bob"}}
    )["Item"]
    assert "username" not in bob and bob["email"] == {"S": "bob@example.com"}
    # two fields read `email`: the inputs write it through the first declared only
    inputs = await gql(
        http,
        '{ create: __type(name: "CreateCustomerInput") { inputFields { name } } '
        'update: __type(name: "UpdateCustomerInput") { inputFields { name } } }',
    )
    for kind in ("create", "update"):
        names = {f["name"] for f in inputs["data"][kind]["inputFields"]}
        assert {"username", "email"} <= names and "contact" not in names
