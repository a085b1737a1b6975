"""The mutations end to end over ASGI on the demo data, checked against the table itself:
return shapes, ids, error codes, no trace left by a failure, unique emails, optimistic locking
and counters."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from graph.dynamo.boto import translate
from graph.table import Table
from models.demo.generate import build
from server.http.app import create_app
from tests.helpers import gql
from tests.table_state import edges, problems, scan

ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


def ok(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body["errors"]
    data: dict[str, Any] = body["data"]
    return data


@pytest.fixture
async def racing(serial: Table) -> AsyncIterator[httpx.AsyncClient]:
    """The app over ASGI, on the ``serial`` table."""
    transport = httpx.ASGITransport(app=create_app(table=serial))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


# ---- node mutations ----------------------------------------------------------------------------

# (GraphQL type, key prefix, optional field, its value)
NODES = [
    ("User", "USER", "email", "new@example.com"),
    ("Group", "GROUP", "description", "a group"),
    ("Product", "PRODUCT", "description", "a product"),
    ("Organization", "ORG", "plan", "Free"),
]


def create(type_name: str, field: str) -> str:
    return f"""mutation($input: Create{type_name}Input!) {{
        create{type_name}(input: $input) {{ __typename id name {field} version }} }}"""


def update(type_name: str, field: str) -> str:
    return f"""mutation($input: Update{type_name}Input!) {{
        update{type_name}(input: $input) {{ __typename id name {field} version }} }}"""


@pytest.mark.parametrize(("type_name", "prefix", "field", "value"), NODES)
async def test_create_returns_the_node_and_writes_it_with_a_given_or_generated_id(
    http: httpx.AsyncClient, demo: Table, type_name: str, prefix: str, field: str, value: str
) -> None:
    body = await gql(
        http, create(type_name, field), {"input": {"id": "n-1", "name": "New", field: value}}
    )
    node = ok(body)[f"create{type_name}"]
    assert node == {
        "__typename": type_name,
        "id": f"{prefix}#n-1",
        "name": "New",
        field: value,
        "version": 1,
    }
    # one item is one PutItem with a condition; a user with an email also claims it: two items
    create_operation = "TransactWriteItems" if field == "email" else "PutItem"
    assert body["extensions"]["dynamodb"]["operations"] == {create_operation: 1}
    items = await scan(demo)
    item = items[f"{prefix}#n-1", f"{prefix}#n-1"]
    assert (item["type"], item["name"], item[field], item["version"]) == (prefix, "New", value, 1)
    assert item["createdAt"] == item["updatedAt"]
    assert problems(items) == []

    ids = []
    for i in range(3):
        body = await gql(http, create(type_name, field), {"input": {"name": f"N{i}"}})
        ids.append(ok(body)[f"create{type_name}"]["id"])
    bare = [i.removeprefix(f"{prefix}#") for i in ids]
    assert all(ULID.fullmatch(b) for b in bare), bare
    assert bare == sorted(bare) and len(set(bare)) == 3  # sorted by creation
    query = "query($ids: [ID!]!) { nodes(ids: $ids) { id } }"
    expected = [{"id": i} for i in [f"{prefix}#n-1", *ids]]
    assert ok(await gql(http, query, {"ids": [f"{prefix}#n-1", *ids]}))["nodes"] == expected


@pytest.mark.parametrize(
    ("type_name", "prefix", "field", "value", "global_id"),
    [(*node, i % 2 == 1) for i, node in enumerate(NODES)],
)
async def test_update_changes_fields_bumps_version_and_null_clears(
    http: httpx.AsyncClient,
    demo: Table,
    type_name: str,
    prefix: str,
    field: str,
    value: str,
    global_id: bool,
) -> None:
    await gql(http, create(type_name, field), {"input": {"id": "n1", "name": "A", field: value}})
    raw_id = f"{prefix}#n1" if global_id else "n1"
    body = await gql(http, update(type_name, field), {"input": {"id": raw_id, "name": "B"}})
    assert ok(body)[f"update{type_name}"] == {
        "__typename": type_name,
        "id": f"{prefix}#n1",
        "name": "B",
        field: value,  # left out: unchanged
        "version": 2,
    }
    assert body["extensions"]["dynamodb"]["operations"].get("UpdateItem") == 1
    body = await gql(
        http, update(type_name, field), {"input": {"id": raw_id, field: None, "expectedVersion": 2}}
    )
    assert ok(body)[f"update{type_name}"][field] is None
    items = await scan(demo)
    item = items[f"{prefix}#n1", f"{prefix}#n1"]
    assert field not in item
    assert (item["name"], item["version"]) == ("B", 3)
    assert item["updatedAt"] > item["createdAt"]
    assert problems(items) == []


@pytest.mark.parametrize(
    ("mutation", "key", "global_id"),
    [
        ("deleteUser", "USER#alice", False),
        ("deleteGroup", "GROUP#group1", True),
        ("deleteProduct", "PRODUCT#prod2", False),
        ("deleteOrganization", "ORG#microsoft", True),
    ],
)
async def test_delete_returns_the_global_id_and_the_node_is_gone(
    http: httpx.AsyncClient, demo: Table, mutation: str, key: str, global_id: bool
) -> None:
    raw_id = key if global_id else key.partition("#")[2]
    body = await gql(http, f"mutation($id: ID!) {{ {mutation}(id: $id) {{ id }} }}", {"id": raw_id})
    assert ok(body)[mutation] == {"id": key}
    assert body["extensions"]["dynamodb"]["operations"].get("TransactWriteItems") == 1
    items = await scan(demo)
    assert [k for k in items if key in k] == []
    assert problems(items) == []
    read = await gql(http, "query($id: ID!) { node(id: $id) { id } }", {"id": key})
    assert read["data"]["node"] is None


# ---- edge mutations ----------------------------------------------------------------------------


@pytest.mark.parametrize(("user", "group"), [("bob", "GROUP#group2"), ("USER#bob", "group2")])
async def test_add_group_member_returns_the_edge_and_counts_it(
    http: httpx.AsyncClient, demo: Table, user: str, group: str
) -> None:
    body = await gql(
        http,
        """mutation($u: ID!, $g: ID!) { addGroupMember(userId: $u, groupId: $g, role: OWNER) {
            __typename cursor role since node { id name members { totalCount } } } }""",
        {"u": user, "g": group},
    )
    edge = ok(body)["addGroupMember"]
    assert edge["__typename"] == "UserGroupEdge"
    assert edge["role"] == "OWNER"
    assert edge["node"] == {"id": "GROUP#group2", "name": "Group 2", "members": {"totalCount": 2}}
    assert body["extensions"]["dynamodb"]["operations"].get("TransactWriteItems") == 1
    items = await scan(demo)
    stored = items["USER#bob", "GROUP#group2"]
    assert (stored["edge"], stored["role"]) == ("MEMBER_OF", "OWNER")
    assert edge["since"].startswith(stored["since"][:19])
    assert items["USER#bob", "USER#bob"]["n_MEMBER_OF"] == 2
    assert items["GROUP#group2", "GROUP#group2"]["n_MEMBER_OF_in"] == 2
    assert problems(items) == []
    read = await gql(http, '{ user(id: "bob") { groups { edges { cursor node { id } } } } }')
    cursors = {e["node"]["id"]: e["cursor"] for e in read["data"]["user"]["groups"]["edges"]}
    assert cursors["GROUP#group2"] == edge["cursor"]  # the same position as on the read path
    body = await gql(
        http,
        'mutation { addGroupMember(userId: "billgates", groupId: "group1") { role node { id } } }',
    )
    assert ok(body)["addGroupMember"] == {"role": "MEMBER", "node": {"id": "GROUP#group1"}}
    assert (await scan(demo))["USER#billgates", "GROUP#group1"]["role"] == "MEMBER"


async def test_subscribe_group_returns_the_edge_and_grants_access(
    http: httpx.AsyncClient, demo: Table
) -> None:
    body = await gql(
        http,
        """mutation { subscribeGroup(groupId: "GROUP#group1", productId: "prod3", plan: "gold",
            validUntil: "2999-01-01T00:00:00Z") {
            __typename cursor plan status validUntil node { id subscribers { totalCount } } } }""",
    )
    edge = ok(body)["subscribeGroup"]
    assert edge["__typename"] == "GroupSubscriptionEdge"
    assert (edge["plan"], edge["status"]) == ("gold", "ACTIVE")
    assert edge["validUntil"].startswith("2999-01-01T00:00:00")
    assert edge["node"] == {"id": "PRODUCT#prod3", "subscribers": {"totalCount": 2}}
    assert isinstance(edge["cursor"], str) and edge["cursor"]
    items = await scan(demo)
    assert items["GROUP#group1", "PRODUCT#prod3"]["status"] == "ACTIVE"
    assert problems(items) == []
    access = await gql(http, '{ user(id: "bob") { hasAccess(productId: "prod3") } }')
    assert access["data"]["user"]["hasAccess"] is True
    body = await gql(
        http,
        'mutation { subscribeGroup(groupId: "group2", productId: "prod1", plan: "basic") '
        "{ plan status validUntil node { id } } }",
    )
    assert ok(body)["subscribeGroup"] == {
        "plan": "basic",
        "status": "ACTIVE",
        "validUntil": None,
        "node": {"id": "PRODUCT#prod1"},
    }
    assert "validUntil" not in (await scan(demo))["GROUP#group2", "PRODUCT#prod1"]


async def test_cancel_subscription_returns_the_canceled_edge_and_revokes_access(
    http: httpx.AsyncClient, demo: Table
) -> None:
    before = await scan(demo)
    body = await gql(
        http,
        'mutation { cancelSubscription(groupId: "group1", productId: "PRODUCT#prod1") '
        "{ __typename cursor plan status validUntil node { id } } }",
    )
    edge = ok(body)["cancelSubscription"]
    assert edge["__typename"] == "GroupSubscriptionEdge"
    assert (edge["plan"], edge["status"], edge["node"]) == (
        "standard",
        "CANCELED",
        {"id": "PRODUCT#prod1"},
    )
    after = await scan(demo)
    assert after["GROUP#group1", "PRODUCT#prod1"]["status"] == "CANCELED"
    # the edge stays, so no counter moves
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {("GROUP#group1", "PRODUCT#prod1")}
    access = await gql(http, '{ user(id: "bob") { hasAccess(productId: "prod1") } }')
    assert access["data"]["user"]["hasAccess"] is False


async def test_add_organization_member_returns_the_edge(
    http: httpx.AsyncClient, demo: Table
) -> None:
    body = await gql(
        http,
        """mutation { addOrganizationMember(organizationId: "ORG#amazon", userId: "alice",
            role: ADMIN) { __typename cursor role joinedAt node { id organization { id } } } }""",
    )
    edge = ok(body)["addOrganizationMember"]
    assert edge["__typename"] == "OrganizationMemberEdge"
    assert edge["role"] == "ADMIN" and edge["joinedAt"]
    assert edge["node"] == {"id": "USER#alice", "organization": {"id": "ORG#amazon"}}
    items = await scan(demo)
    assert items["ORG#amazon", "USER#alice"]["edge"] == "HAS_MEMBER"
    assert items["ORG#amazon", "ORG#amazon"]["n_HAS_MEMBER"] == 2
    assert items["USER#alice", "USER#alice"]["n_HAS_MEMBER_in"] == 1
    assert problems(items) == []
    default = await gql(
        http, 'mutation { addOrganizationMember(organizationId: "amazon", userId: "bob") { role } }'
    )
    assert ok(default)["addOrganizationMember"] == {"role": "MEMBER"}


@pytest.mark.parametrize(
    ("mutation", "args", "edge"),
    [
        ("removeGroupMember", 'userId: "bob", groupId: "group1"', ("USER#bob", "GROUP#group1")),
        (
            "removeGroupMember",
            'userId: "USER#alice", groupId: "GROUP#group2"',
            ("USER#alice", "GROUP#group2"),
        ),
        (
            "removeOrganizationMember",
            'organizationId: "microsoft", userId: "USER#billgates"',
            ("ORG#microsoft", "USER#billgates"),
        ),
    ],
)
async def test_remove_edge_is_true_then_false_and_uncounts(
    http: httpx.AsyncClient, demo: Table, mutation: str, args: str, edge: tuple[str, str]
) -> None:
    before = await scan(demo)
    assert ok(await gql(http, f"mutation {{ {mutation}({args}) }}"))[mutation] is True
    after = await scan(demo)
    assert edge not in after
    assert set(before) - set(after) == {edge}
    source, target = (after[k, k] for k in edge)
    old_source, old_target = (before[k, k] for k in edge)
    label = before[edge]["edge"]
    assert source[f"n_{label}"] == old_source[f"n_{label}"] - 1
    assert target[f"n_{label}_in"] == old_target[f"n_{label}_in"] - 1
    assert problems(after) == []
    assert ok(await gql(http, f"mutation {{ {mutation}({args}) }}"))[mutation] is False
    assert await scan(demo) == after


async def test_a_user_who_left_an_organization_may_join_another(
    http: httpx.AsyncClient, demo: Table
) -> None:
    join = (
        'mutation { addOrganizationMember(organizationId: "amazon", userId: "billgates") { role } }'
    )
    assert codes(await gql(http, join)) == ["CONFLICT"]
    leave = (
        'mutation { removeOrganizationMember(organizationId: "microsoft", userId: "billgates") }'
    )
    assert ok(await gql(http, leave))["removeOrganizationMember"] is True
    assert ok(await gql(http, join))["addOrganizationMember"] == {"role": "MEMBER"}
    body = await gql(http, '{ user(id: "billgates") { organization { id } } }')
    assert body["data"]["user"]["organization"] == {"id": "ORG#amazon"}
    assert problems(await scan(demo)) == []


async def test_of_concurrent_joins_of_one_user_to_several_organizations_one_wins(
    racing: httpx.AsyncClient, serial: Table
) -> None:
    orgs = [f"org{i}" for i in range(5)]
    await serial.batch_write(
        build({"nodes": [{"type": "Organization", "id": o, "name": o} for o in orgs]})
    )
    join = 'mutation($o: ID!) { addOrganizationMember(organizationId: $o, userId: "bob") { role } }'
    bodies = await asyncio.gather(*(gql(racing, join, {"o": o}) for o in orgs))
    assert sorted(c for b in bodies for c in codes(b)) == ["CONFLICT"] * 4
    items = await scan(serial)
    assert len([k for k in edges(items, "HAS_MEMBER") if k[1] == "USER#bob"]) == 1
    assert items["USER#bob", "USER#bob"]["n_HAS_MEMBER_in"] == 1
    assert problems(items) == []


async def test_a_removed_member_may_be_added_back_with_another_role(
    http: httpx.AsyncClient, demo: Table
) -> None:
    add = 'mutation { addGroupMember(userId: "bob", groupId: "group1", role: OWNER) { role } }'
    assert codes(await gql(http, add)) == ["CONFLICT"]
    remove = 'mutation { removeGroupMember(userId: "bob", groupId: "group1") }'
    assert ok(await gql(http, remove))["removeGroupMember"] is True
    assert ok(await gql(http, add))["addGroupMember"] == {"role": "OWNER"}
    items = await scan(demo)
    assert items["USER#bob", "GROUP#group1"]["role"] == "OWNER"
    assert items["GROUP#group1", "GROUP#group1"]["n_MEMBER_OF_in"] == 2
    assert problems(items) == []


# ---- failures ----------------------------------------------------------------------------------

# Failing mutations by theme, each with its code. Every case runs on the same demo table: as
# none may write anything, each starts from the same state (checked by scanning around each).
FAILURES = {
    "create": [
        ('createUser(input: {id: "alice", name: "X"}) { id }', "CONFLICT"),
        ('createGroup(input: {id: "group1", name: "X"}) { id }', "CONFLICT"),
        ('createGroup(input: {id: "GROUP#group2", name: "X"}) { id }', "CONFLICT"),
        ('createGroup(input: {id: "", name: "X"}) { id }', "BAD_USER_INPUT"),
        ('createProduct(input: {id: "prod1", name: "X"}) { id }', "CONFLICT"),
        ('createOrganization(input: {id: "amazon", name: "X"}) { id }', "CONFLICT"),
        ('createUser(input: {id: "carol", name: "C", email: "ALICE@Example.com"}) { id }',
         "CONFLICT"),
        ('createUser(input: {id: "bad id", name: "X"}) { id }', "BAD_USER_INPUT"),
        ('createUser(input: {id: "x/y", name: "X"}) { id }', "BAD_USER_INPUT"),
        (f'createGroup(input: {{id: "{"g" * 129}", name: "X"}}) {{ id }}', "BAD_USER_INPUT"),
        ('createUser(input: {id: "carol", name: "C", email: "not-an-email"}) { id }',
         "BAD_USER_INPUT"),
        ('createUser(input: {id: "carol", name: "C", email: "a b@x.io"}) { id }',
         "BAD_USER_INPUT"),
        ('createUser(input: {id: "carol", name: "  "}) { id }', "BAD_USER_INPUT"),
        ('createProduct(input: {id: "p9", name: ""}) { id }', "BAD_USER_INPUT"),
        ('createOrganization(input: {id: "o9"}) { id }', "BAD_USER_INPUT"),
    ],
    "update": [
        ('updateUser(input: {id: "nobody", name: "X"}) { id }', "NOT_FOUND"),
        ('updateGroup(input: {id: "USER#alice", name: "X"}) { id }', "NOT_FOUND"),
        ('updateUser(input: {id: "GROUP#group1", name: "X"}) { id }', "NOT_FOUND"),
        ('updateUser(input: {id: "al ice", name: "X"}) { id }', "BAD_USER_INPUT"),
        ('updateGroup(input: {id: "group1", name: null}) { id }', "BAD_USER_INPUT"),
        ('updateProduct(input: {id: "prod1", name: ""}) { id }', "BAD_USER_INPUT"),
        ('updateOrganization(input: {id: "amazon", name: " "}) { id }', "BAD_USER_INPUT"),
        ('updateUser(input: {id: "alice", name: "X", expectedVersion: 2}) { id }', "CONFLICT"),
        ('updateUser(input: {id: "alice", name: "X", expectedVersion: 0}) { id }', "CONFLICT"),
        ('updateOrganization(input: {id: "amazon", expectedVersion: 5}) { id }', "CONFLICT"),
        ('updateUser(input: {id: "bob", email: "Alice@EXAMPLE.com"}) { id }', "CONFLICT"),
        ('updateUser(input: {id: "bob", email: "bob-at-example"}) { id }', "BAD_USER_INPUT"),
    ],
    "delete": [
        ('deleteUser(id: "nobody") { id }', "NOT_FOUND"),
        ('deleteGroup(id: "nogroup") { id }', "NOT_FOUND"),
        ('deleteProduct(id: "noprod") { id }', "NOT_FOUND"),
        ('deleteOrganization(id: "noorg") { id }', "NOT_FOUND"),
        ('deleteGroup(id: "USER#alice") { id }', "NOT_FOUND"),
        ('deleteUser(id: "GROUP#group1") { id }', "NOT_FOUND"),
        ('deleteProduct(id: "WIDGET#prod1") { id }', "NOT_FOUND"),
        ('deleteUser(id: "a!") { id }', "BAD_USER_INPUT"),
        ('deleteOrganization(id: "") { id }', "BAD_USER_INPUT"),
    ],
    "membership": [
        ('addGroupMember(userId: "nobody", groupId: "group1") { role }', "NOT_FOUND"),
        ('addGroupMember(userId: "billgates", groupId: "nogroup") { role }', "NOT_FOUND"),
        ('addGroupMember(userId: "GROUP#group1", groupId: "group2") { role }', "NOT_FOUND"),
        ('addGroupMember(userId: "billgates", groupId: "PRODUCT#prod1") { role }', "NOT_FOUND"),
        ('addGroupMember(userId: "alice", groupId: "group1") { role }', "CONFLICT"),
        ('addGroupMember(userId: "bob", groupId: "GROUP#group1", role: OWNER) { role }',
         "CONFLICT"),
        ('addGroupMember(userId: "bill gates", groupId: "group1") { role }', "BAD_USER_INPUT"),
        ('addGroupMember(userId: "billgates", groupId: "group1", role: ADMIN) { role }',
         "BAD_USER_INPUT"),
        ('addOrganizationMember(organizationId: "amazon", userId: "billgates") { role }',
         "CONFLICT"),
        ('addOrganizationMember(organizationId: "microsoft", userId: "billgates") { role }',
         "CONFLICT"),
        ('addOrganizationMember(organizationId: "noorg", userId: "alice") { role }', "NOT_FOUND"),
        ('addOrganizationMember(organizationId: "amazon", userId: "nobody") { role }',
         "NOT_FOUND"),
        ('addOrganizationMember(organizationId: "USER#alice", userId: "bob") { role }',
         "NOT_FOUND"),
        ('removeGroupMember(userId: "GROUP#group1", groupId: "group1")', "NOT_FOUND"),
        ('removeOrganizationMember(organizationId: "o!", userId: "alice")', "BAD_USER_INPUT"),
    ],
    "subscription": [
        ('subscribeGroup(groupId: "group1", productId: "noprod", plan: "x") { plan }',
         "NOT_FOUND"),
        ('subscribeGroup(groupId: "nogroup", productId: "prod1", plan: "x") { plan }',
         "NOT_FOUND"),
        ('subscribeGroup(groupId: "group1", productId: "prod1", plan: "x") { plan }', "CONFLICT"),
        ('subscribeGroup(groupId: "group1", productId: "prod3", plan: "") { plan }',
         "BAD_USER_INPUT"),
        ('subscribeGroup(groupId: "group1", productId: "prod3", plan: "x", validUntil: "soon") '
         "{ plan }", "BAD_USER_INPUT"),
        ('cancelSubscription(groupId: "group1", productId: "prod3") { status }', "NOT_FOUND"),
        ('cancelSubscription(groupId: "nogroup", productId: "prod1") { status }', "NOT_FOUND"),
        ('cancelSubscription(groupId: "group1", productId: "USER#prod1") { status }',
         "NOT_FOUND"),
    ],
    "tickets and offices": [
        ('openTicket(userId: "nobody", title: "t") { id }', "NOT_FOUND"),
        ('openTicket(userId: "GROUP#group1", title: "t") { id }', "NOT_FOUND"),
        ('openTicket(userId: "alice", title: "") { id }', "BAD_USER_INPUT"),
        ('openTicket(userId: "alice", title: "   ") { id }', "BAD_USER_INPUT"),
        ('closeTicket(id: "noticket") { id }', "NOT_FOUND"),
        ('closeTicket(id: "USER#alice") { id }', "NOT_FOUND"),
        ('addOffice(organizationId: "noorg", country: "US", state: "WA", city: "S", zip: "1") '
         "{ cursor }", "NOT_FOUND"),
        ('addOffice(organizationId: "GROUP#group1", country: "US", state: "WA", city: "S", '
         'zip: "1") { cursor }', "NOT_FOUND"),
        ('addOffice(organizationId: "amazon", country: "U#S", state: "WA", city: "S", zip: "1") '
         "{ cursor }", "BAD_USER_INPUT"),
        ('addOffice(organizationId: "amazon", country: "US", state: "", city: "S", zip: "1") '
         "{ cursor }", "BAD_USER_INPUT"),
        ('removeOffice(organizationId: "a b", officeId: "x")', "BAD_USER_INPUT"),
    ],
}  # fmt: skip


@pytest.mark.parametrize("theme", FAILURES)
async def test_a_failed_mutation_has_its_code_and_leaves_the_table_exactly_as_it_was(
    http: httpx.AsyncClient, demo: Table, theme: str
) -> None:
    wrong = []
    before = await scan(demo)
    for mutation, code in FAILURES[theme]:
        body = await gql(http, f"mutation {{ {mutation} }}")
        if codes(body) != [code] or body.get("data") is not None:
            wrong.append(f"{mutation}: expected {code}, got {body}")
        after = await scan(demo)
        if after != before:
            changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
            wrong.append(f"{mutation}: changed {sorted(changed)}")
            before = after
    assert wrong == []


async def test_removing_what_is_not_there_is_false_and_writes_nothing(
    http: httpx.AsyncClient, demo: Table
) -> None:
    before = await scan(demo)
    for mutation in [
        'removeGroupMember(userId: "billgates", groupId: "group1")',
        'removeGroupMember(userId: "nobody", groupId: "group1")',
        'removeGroupMember(userId: "alice", groupId: "nogroup")',
        'removeOrganizationMember(organizationId: "amazon", userId: "billgates")',
        'removeOrganizationMember(organizationId: "noorg", userId: "alice")',
        'removeOffice(organizationId: "amazon", officeId: "nooffice")',
        'removeOffice(organizationId: "noorg", officeId: "nooffice")',
    ]:
        body = await gql(http, f"mutation {{ {mutation} }}")
        assert ok(body) == {mutation.partition("(")[0]: False}, mutation
        assert await scan(demo) == before, mutation


async def test_get_never_runs_a_mutation(http: httpx.AsyncClient, demo: Table) -> None:
    before = await scan(demo)
    response = await http.get(
        "/graphql", params={"query": 'mutation { deleteUser(id: "alice") { id } }'}
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert await scan(demo) == before


# ---- unique email ------------------------------------------------------------------------------

CREATE_USER = "mutation($input: CreateUserInput!) { createUser(input: $input) { id email } }"
UPDATE_USER = "mutation($input: UpdateUserInput!) { updateUser(input: $input) { id email } }"
BY_EMAIL = "query($e: String!) { userByEmail(email: $e) { id } }"


async def owner(http: httpx.AsyncClient, email: str) -> str | None:
    user = ok(await gql(http, BY_EMAIL, {"e": email}))["userByEmail"]
    return None if user is None else str(user["id"])


async def test_create_claims_the_lowercased_email_in_the_same_transaction(
    http: httpx.AsyncClient, demo: Table
) -> None:
    body = await gql(
        http, CREATE_USER, {"input": {"id": "carol", "name": "C", "email": "Carol@Example.COM"}}
    )
    assert ok(body)["createUser"] == {"id": "USER#carol", "email": "Carol@Example.COM"}
    assert body["extensions"]["dynamodb"]["operations"] == {"TransactWriteItems": 1}
    items = await scan(demo)
    claim = items["EMAIL#carol@example.com", "EMAIL#carol@example.com"]
    assert claim["user"] == "USER#carol"
    assert problems(items) == []
    for spelling in ("carol@example.com", "CAROL@EXAMPLE.COM", "Carol@Example.COM"):
        assert await owner(http, spelling) == "USER#carol"
    assert await owner(http, "nobody@example.com") is None
    taken = await gql(
        http, CREATE_USER, {"input": {"id": "dave", "name": "D", "email": "cArOl@example.com"}}
    )
    assert codes(taken) == ["CONFLICT"]
    # changing only the case keeps the claim
    body = await gql(http, UPDATE_USER, {"input": {"id": "carol", "email": "carol@example.com"}})
    assert ok(body)["updateUser"]["email"] == "carol@example.com"
    items = await scan(demo)
    assert items["EMAIL#carol@example.com", "EMAIL#carol@example.com"]["user"] == "USER#carol"
    assert problems(items) == []
    assert await owner(http, "CAROL@example.com") == "USER#carol"


async def test_changing_the_email_moves_the_claim(http: httpx.AsyncClient, demo: Table) -> None:
    body = await gql(http, UPDATE_USER, {"input": {"id": "alice", "email": "Alice2@Example.com"}})
    assert ok(body)["updateUser"] == {"id": "USER#alice", "email": "Alice2@Example.com"}
    items = await scan(demo)
    assert ("EMAIL#alice@example.com", "EMAIL#alice@example.com") not in items
    assert items["EMAIL#alice2@example.com", "EMAIL#alice2@example.com"]["user"] == "USER#alice"
    assert problems(items) == []
    assert await owner(http, "ALICE@example.com") is None
    assert await owner(http, "alice2@EXAMPLE.com") == "USER#alice"
    # the old address is free, the new one is taken
    free = await gql(
        http, CREATE_USER, {"input": {"id": "carol", "name": "C", "email": "alice@example.com"}}
    )
    assert ok(free)["createUser"]["id"] == "USER#carol"
    taken = await gql(http, UPDATE_USER, {"input": {"id": "bob", "email": "ALICE2@example.com"}})
    assert codes(taken) == ["CONFLICT"]
    assert await owner(http, "alice@example.com") == "USER#carol"
    assert problems(await scan(demo)) == []


async def test_clearing_the_email_frees_it(http: httpx.AsyncClient, demo: Table) -> None:
    body = await gql(http, UPDATE_USER, {"input": {"id": "alice", "email": None}})
    assert ok(body)["updateUser"] == {"id": "USER#alice", "email": None}
    items = await scan(demo)
    assert ("EMAIL#alice@example.com", "EMAIL#alice@example.com") not in items
    assert "email" not in items["USER#alice", "USER#alice"]
    assert problems(items) == []
    taken = await gql(http, UPDATE_USER, {"input": {"id": "bob", "email": "Alice@example.com"}})
    assert ok(taken)["updateUser"]["email"] == "Alice@example.com"
    assert await owner(http, "alice@example.com") == "USER#bob"


async def test_deleting_the_user_frees_the_email(http: httpx.AsyncClient, demo: Table) -> None:
    assert await owner(http, "bob@example.com") == "USER#bob"
    ok(await gql(http, 'mutation { deleteUser(id: "bob") { id } }'))
    assert await owner(http, "bob@example.com") is None
    items = await scan(demo)
    assert not [k for k in items if k[0].startswith("EMAIL#bob")]
    body = await gql(
        http, CREATE_USER, {"input": {"id": "bob2", "name": "B", "email": "BOB@example.com"}}
    )
    assert ok(body)["createUser"]["id"] == "USER#bob2"
    assert await owner(http, "bob@example.com") == "USER#bob2"


async def test_of_concurrent_claims_of_one_email_exactly_one_wins(
    racing: httpx.AsyncClient, serial: Table
) -> None:
    spellings = ["same@example.com", "SAME@example.com", "Same@Example.com", "same@EXAMPLE.COM"]
    bodies = await asyncio.gather(
        *(
            gql(racing, CREATE_USER, {"input": {"id": f"twin{i}", "name": "T", "email": email}})
            for i, email in enumerate(spellings)
        )
    )
    winners = [b["data"]["createUser"]["id"] for b in bodies if "errors" not in b]
    assert len(winners) == 1
    assert sorted(c for b in bodies for c in codes(b)) == ["CONFLICT"] * 3
    items = await scan(serial)
    assert [k for k in items if k[0].startswith("USER#twin")] == [(winners[0], winners[0])]
    assert items["EMAIL#same@example.com", "EMAIL#same@example.com"]["user"] == winners[0]
    assert problems(items) == []


# ---- optimistic locking ------------------------------------------------------------------------

VERSIONED = """mutation($input: UpdateUserInput!) { updateUser(input: $input) { name version } }"""


async def test_version_goes_up_by_one_on_every_update(http: httpx.AsyncClient, demo: Table) -> None:
    versions = []
    for i in range(3):
        body = await gql(http, VERSIONED, {"input": {"id": "bob", "name": f"Bob {i}"}})
        versions.append(ok(body)["updateUser"]["version"])
    body = await gql(http, VERSIONED, {"input": {"id": "bob", "name": "B", "expectedVersion": 4}})
    versions.append(ok(body)["updateUser"]["version"])
    assert versions == [2, 3, 4, 5]
    assert (await scan(demo))["USER#bob", "USER#bob"]["version"] == 5
    stale = await gql(http, VERSIONED, {"input": {"id": "bob", "name": "X", "expectedVersion": 4}})
    assert codes(stale) == ["CONFLICT"]


async def test_of_ten_concurrent_updates_at_one_version_exactly_one_wins(
    racing: httpx.AsyncClient, serial: Table
) -> None:
    bodies = await asyncio.gather(
        *(
            gql(
                racing, VERSIONED, {"input": {"id": "alice", "name": f"A{i}", "expectedVersion": 1}}
            )
            for i in range(10)
        )
    )
    winners = [b["data"]["updateUser"] for b in bodies if "errors" not in b]
    assert len(winners) == 1
    assert sorted(c for b in bodies for c in codes(b)) == ["CONFLICT"] * 9
    alice = (await scan(serial))["USER#alice", "USER#alice"]
    assert alice["version"] == 2 == winners[0]["version"]
    assert alice["name"] == winners[0]["name"]


# ---- counters ----------------------------------------------------------------------------------


async def test_forty_concurrent_joins_all_land_and_the_count_agrees(
    racing: httpx.AsyncClient, serial: Table
) -> None:
    users = [f"joiner{i}" for i in range(40)]
    nodes = [{"type": "Group", "id": "crowd", "name": "Crowd"}]
    nodes += [{"type": "User", "id": u, "name": u} for u in users]
    await serial.batch_write(build({"nodes": nodes}))
    add = 'mutation($u: ID!) { addGroupMember(userId: $u, groupId: "crowd") { node { id } } }'
    bodies = await asyncio.gather(*(gql(racing, add, {"u": u}) for u in users))
    assert [codes(b) for b in bodies] == [[]] * 40
    body = await gql(
        racing,
        '{ group(id: "crowd") { members(first: 100) { totalCount edges { node { id } } } } }',
    )
    members = ok(body)["group"]["members"]
    assert members["totalCount"] == 40
    assert {e["node"]["id"] for e in members["edges"]} == {f"USER#{u}" for u in users}
    queried, last, _ = await serial.query(
        IndexName="inverted",
        KeyConditionExpression="SK = :g AND begins_with(PK, :u)",
        ExpressionAttributeValues={":g": {"S": "GROUP#crowd"}, ":u": {"S": "USER#"}},
    )
    assert (len(queried), last) == (40, None)
    items = await scan(serial)
    assert items["GROUP#crowd", "GROUP#crowd"]["n_MEMBER_OF_in"] == 40
    assert len(edges(items, "MEMBER_OF")) == 3 + 40
    assert problems(items) == []

    removed = await asyncio.gather(
        *(
            gql(racing, 'mutation($u: ID!) { removeGroupMember(userId: $u, groupId: "crowd") }',
                {"u": u})
            for u in users[:15]
        )
    )  # fmt: skip
    assert [ok(b)["removeGroupMember"] for b in removed] == [True] * 15
    count = await gql(racing, '{ group(id: "crowd") { members { totalCount } } }')
    assert ok(count)["group"]["members"]["totalCount"] == 25
    assert problems(await scan(serial)) == []


# Connections whose totalCount is a counter on the node item: (query, node field, count)
COUNTED = [
    ('{ group(id: "group1") { members { totalCount } } }', "group", "members", 2),
    ('{ group(id: "group2") { subscriptions { totalCount } } }', "group", "subscriptions", 2),
    ('{ user(id: "alice") { groups { totalCount } } }', "user", "groups", 2),
    ('{ product(id: "prod2") { subscribers { totalCount } } }', "product", "subscribers", 2),
    ('{ organization(id: "microsoft") { members { totalCount } } }', "organization", "members", 2),
    ('{ user(id: "alice") { tickets { totalCount } } }', "user", "tickets", 0),
    ('{ organization(id: "amazon") { offices { totalCount } } }', "organization", "offices", 0),
]


async def test_total_count_reads_the_counter_on_the_node_item_and_costs_no_query(
    http: httpx.AsyncClient, demo: Table
) -> None:
    for query, node, field, expected in COUNTED:
        body = await gql(http, query)
        assert ok(body)[node][field]["totalCount"] == expected, query
        # no Query: only the node item is read
        assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}, query
    # the counter is what is read: change it behind the API's back
    await demo.client.update_item(
        dict(
            TableName=demo.name,
            Key={"PK": {"S": "GROUP#group1"}, "SK": {"S": "GROUP#group1"}},
            UpdateExpression="SET n_MEMBER_OF_in = :n",
            ExpressionAttributeValues={":n": {"N": "7"}},
        )
    )
    body = await gql(http, COUNTED[0][0])
    assert ok(body)["group"]["members"]["totalCount"] == 7


async def test_total_count_follows_adds_and_removes(http: httpx.AsyncClient, demo: Table) -> None:
    count = '{ product(id: "prod3") { subscribers { totalCount } } }'
    for group in ("group1", "nogroup"):  # the failed add counts nothing
        await gql(
            http,
            f'mutation {{ subscribeGroup(groupId: "{group}", productId: "prod3", plan: "p") '
            "{ plan } }",
        )
    assert ok(await gql(http, count))["product"]["subscribers"]["totalCount"] == 2
    await gql(http, 'mutation { deleteGroup(id: "group2") { id } }')
    assert ok(await gql(http, count))["product"]["subscribers"]["totalCount"] == 1
    assert problems(await scan(demo)) == []


# ---- transactions ------------------------------------------------------------------------------


async def test_a_retried_transaction_reuses_its_client_request_token(
    demo: Table, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection lost, then a transaction conflict: both retried with the same token, so
    DynamoDB applies a commit whose answer was lost only once. The next write has its own."""
    tokens: list[str] = []
    send = Table._send
    conflict = ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
            "CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "None"}],
            "ResponseMetadata": {"HTTPStatusCode": 400},  # type: ignore[typeddict-item]
        },
        "TransactWriteItems",
    )

    async def flaky(
        self: Table, operation: str, call: Any, params: dict[str, Any]
    ) -> dict[str, Any]:
        if operation == "TransactWriteItems":  # failing as the botocore client fails
            tokens.append(params["ClientRequestToken"])
            if len(tokens) == 1:
                lost = EndpointConnectionError(endpoint_url="http://dynamodb")
                raise translate(lost) from lost
            if len(tokens) == 2:
                raise translate(conflict) from conflict
        return await send(self, operation, call, params)

    monkeypatch.setattr(Table, "_send", flaky)
    create = "mutation($i: CreateUserInput!) { createUser(input: $i) { id } }"
    for user in ("carol", "dave"):  # a user and its email claim: one transaction each
        variables = {"i": {"id": user, "name": user, "email": f"{user}@example.com"}}
        assert ok(await gql(http, create, variables))["createUser"] == {"id": f"USER#{user}"}
    assert len(tokens) == 4
    assert tokens[0] == tokens[1] == tokens[2] != tokens[3]
    items = await scan(demo)
    assert items["USER#carol", "USER#carol"]["version"] == 1
    assert problems(items) == []
