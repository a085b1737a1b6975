"""Authorization along graph edges: a matrix of principal x path x target on the demo data, the
mutations a non-admin may and may not make, and the cost of the checks in DynamoDB reads."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
from starlette.applications import Starlette

from graph.keys import ItemKey
from graph.table import Table
from models.demo.generate import build
from server.http.app import create_app
from server.http.auth import Authenticator
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT
from tests.table_state import scan
from tests.tokens import SECRET, asgi, bearer, hs256, seeded_table

ALICE, BOB, BILL, SATYA, ADMIN, LONER = (
    "alice",
    "bob",
    "billgates",
    "satyanadella",
    "admin",
    "loner",
)
PRINCIPALS = [ALICE, BOB, BILL, SATYA, ADMIN, LONER]
TICKET_AUTHORS = [ALICE, BOB, BILL]

NODES = [
    "USER#alice",
    "USER#bob",
    "USER#billgates",
    "USER#satyanadella",
    "USER#jeffbezos",
    "USER#loner",
    "GROUP#group1",
    "GROUP#group2",
    "PRODUCT#prod1",
    "PRODUCT#prod2",
    "PRODUCT#prod3",
    "ORG#microsoft",
    "ORG#amazon",
]
# "ticket:<user>" stands for the ticket that user opened, made when the module starts
TARGETS = NODES + [f"ticket:{user}" for user in TICKET_AUTHORS]

READABLE: dict[str, set[str]] = {
    ALICE: {
        "USER#alice",
        "USER#bob",
        "GROUP#group1",
        "GROUP#group2",
        "PRODUCT#prod1",
        "PRODUCT#prod2",
        "PRODUCT#prod3",
        "ticket:alice",
    },
    BOB: {"USER#alice", "USER#bob", "GROUP#group1", "PRODUCT#prod1", "PRODUCT#prod2", "ticket:bob"},
    BILL: {"USER#billgates", "USER#satyanadella", "ORG#microsoft", "ticket:billgates"},
    SATYA: {"USER#billgates", "USER#satyanadella", "ORG#microsoft"},
    LONER: {"USER#loner"},
    ADMIN: set(TARGETS),
}

ROOT_FIELDS = {  # by global id prefix
    "USER": "user",
    "GROUP": "group",
    "PRODUCT": "product",
    "ORG": "organization",
    "TICKET": "ticket",
}


def headers(principal: str, trace: bool = False) -> dict[str, str]:
    """The principal's token (the admin is a user outside the graph holding the admin role)."""
    value = hs256("root", roles=["admin"]) if principal == ADMIN else hs256(principal)
    return {**bearer(value), **({"Edgewise-Trace": "1"} if trace else {})}


@dataclass
class World:
    table: Table
    app: Starlette
    tickets: dict[str, str]  # author -> global ticket id
    explaining: Starlette  # the app under --explain-forbidden

    def resolve(self, value: Any) -> Any:
        """``value`` with every ``ticket:<user>`` replaced by that ticket's global id."""
        if isinstance(value, str):
            for user, ticket in self.tickets.items():
                value = value.replace(f"ticket:{user}", ticket)
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    async def ask(
        self,
        principal: str,
        query: str,
        variables: dict[str, Any] | None = None,
        trace: bool = False,
        explain: bool = False,
    ) -> dict[str, Any]:
        async with asgi(self.explaining if explain else self.app) as client:
            return await post(client, principal, self.resolve(query), variables, trace)


async def post(
    client: httpx.AsyncClient,
    principal: str,
    query: str,
    variables: dict[str, Any] | None = None,
    trace: bool = False,
) -> dict[str, Any]:
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables or {}},
        headers=headers(principal, trace),
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def app_for(table: Table, explain: bool = False) -> Starlette:
    settings = Settings(explain_forbidden=explain)
    return create_app(settings, table=table, authenticator=Authenticator(secret=SECRET))


OPEN = "mutation($u: ID!, $t: String!) { openTicket(userId: $u, title: $t) { id } }"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world() -> AsyncIterator[World]:
    """The demo data plus a user with no edges and one ticket each for alice, bob and
    billgates (opened by the admin), on a moto server of this module's own. Tests that write
    use the function-scoped ``demo`` table instead."""
    async with seeded_table() as table:
        await table.batch_write(build({"nodes": [{"type": "User", "id": LONER, "name": "Loner"}]}))
        app = app_for(table)
        tickets = {}
        async with asgi(app) as client:
            for user in TICKET_AUTHORS:
                body = await post(client, ADMIN, OPEN, {"u": user, "t": f"{user}'s ticket"})
                tickets[user] = body["data"]["openTicket"]["id"]
        yield World(table, app, tickets, app_for(table, explain=True))


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


def forbidden_paths(body: dict[str, Any]) -> list[list[Any]]:
    """The paths of the errors, all of which must be FORBIDDEN."""
    assert set(codes(body)) <= {"FORBIDDEN"}, body["errors"]
    return [e["path"] for e in body.get("errors", [])]


def global_id(world: World, target: str) -> str:
    resolved: str = world.resolve(target)
    return resolved


# ---- root fields ---------------------------------------------------------------------------

module_loop = pytest.mark.asyncio(loop_scope="module")


async def ask_root(
    world: World, principal: str, path: str, target: str, explain: bool = False
) -> tuple[str, str, dict[str, Any]]:
    gid = global_id(world, target)
    prefix, _, bare = gid.partition("#")
    field = ROOT_FIELDS[prefix] if path == "typed" else "node"
    # typed fields get the bare id, node the global one
    variables = {"id": bare if path == "typed" else gid}
    query = f"query($id: ID!) {{ {field}(id: $id) {{ id }} }}"
    return gid, field, await world.ask(principal, query, variables, explain=explain)


@module_loop
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", ["typed", "node"])
@pytest.mark.parametrize("principal", PRINCIPALS)
async def test_root_field(world: World, principal: str, path: str, target: str) -> None:
    gid, field, body = await ask_root(world, principal, path, target)
    if target in READABLE[principal]:
        assert body == {"data": {field: {"id": gid}}}
    else:  # as a missing node: null, no error
        assert body == {"data": {field: None}}


UNREADABLE = [(p, t) for p in PRINCIPALS for t in TARGETS if t not in READABLE[p]]


@module_loop
@pytest.mark.parametrize("path", ["typed", "node"])
@pytest.mark.parametrize(("principal", "target"), UNREADABLE)
async def test_root_field_explained(world: World, principal: str, path: str, target: str) -> None:
    """--explain-forbidden: an unreadable node is null with FORBIDDEN and its reason."""
    _, field, body = await ask_root(world, principal, path, target, explain=True)
    assert body["data"] == {field: None}
    assert forbidden_paths(body) == [[field]]
    assert "model access.read" in body["errors"][0]["message"]


@module_loop
@pytest.mark.parametrize(
    "principal",
    PRINCIPALS,
)
@pytest.mark.parametrize("explain", [False, True])
async def test_nodes_answers_each_id_on_its_own(
    world: World, principal: str, explain: bool
) -> None:
    ids = [global_id(world, t) for t in TARGETS]
    body = await world.ask(
        principal, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": ids}, explain=explain
    )
    readable = [t in READABLE[principal] for t in TARGETS]
    assert body["data"] is not None, body["errors"]
    assert body["data"]["nodes"] == [
        {"id": i} if ok else None for i, ok in zip(ids, readable, strict=True)
    ]
    expected = [["nodes", n] for n, ok in enumerate(readable) if not ok and explain]
    assert sorted(forbidden_paths(body)) == sorted(expected)


@module_loop
@pytest.mark.parametrize("principal", PRINCIPALS)
async def test_nodes_of_readable_ids(world: World, principal: str) -> None:
    ids = [global_id(world, t) for t in TARGETS if t in READABLE[principal]]
    ids.append("USER#nobody")  # a missing node is null, with no error
    body = await world.ask(
        principal, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": ids}
    )
    assert body == {"data": {"nodes": [{"id": i} for i in ids[:-1]] + [None]}}


@module_loop
@pytest.mark.parametrize("principal", [p for p in PRINCIPALS if p != ADMIN])
@pytest.mark.parametrize("explain", [False, True])
async def test_nodes_with_an_unreadable_id_answers_as_a_missing_one(
    world: World, principal: str, explain: bool
) -> None:
    """The unreadable node is never returned; its null tells nothing (FORBIDDEN only under
    --explain-forbidden)."""
    unreadable = next(global_id(world, t) for t in TARGETS if t not in READABLE[principal])
    body = await world.ask(
        principal,
        "query($ids: [ID!]!) { nodes(ids: $ids) { id } }",
        {"ids": [unreadable]},
        explain=explain,
    )
    assert unreadable not in json.dumps(body.get("data"))
    assert codes(body) == (["FORBIDDEN"] if explain else [])


PROBES = {  # a query naming one id, as a missing and as an unreadable node would be asked
    "typed": "query($id: ID!) { user(id: $id) { id name } }",
    "node": "query($id: ID!) { node(id: $id) { id } }",
    "nodes": 'query($id: ID!) { nodes(ids: [$id, "USER#bob"]) { id } }',
    "mutation": "mutation($id: ID!) { closeTicket(id: $id) { id } }",
}


@module_loop
@pytest.mark.parametrize("probe", list(PROBES))
async def test_a_probe_gets_the_same_bytes_for_unreadable_and_missing_ids(
    world: World, probe: str
) -> None:
    """bob asks for ids that exist but he may not read and for ids that do not exist: the
    answers are byte for byte the same (the id asked aside, which a message may repeat), so he
    cannot tell which exist."""
    unreadable, missing = {
        "typed": ("billgates", "nobody"),
        "node": ("USER#billgates", "USER#nobody"),
        "nodes": ("USER#billgates", "USER#nobody"),
        "mutation": (world.tickets[ALICE], "TICKET#01HZZZZZZZZZZZZZZZZZZZZZZZ"),
    }[probe]
    answers = []
    async with asgi(world.app) as client:
        for value in (unreadable, missing):
            response = await client.post(
                "/graphql",
                json={"query": PROBES[probe], "variables": {"id": value}},
                headers=headers(BOB),
            )
            answers.append((response.status_code, response.content.replace(value.encode(), b"ID")))
    assert answers[0] == answers[1]  # but for the id asked
    if probe == "mutation":
        assert json.loads(answers[0][1])["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    else:
        assert b"errors" not in answers[0][1]
    async with asgi(world.explaining) as client:  # the development flag tells them apart
        explained = await client.post(
            "/graphql",
            json={"query": PROBES[probe], "variables": {"id": unreadable}},
            headers=headers(BOB),
        )
    assert b"FORBIDDEN" in explained.content


# ---- nested fields -------------------------------------------------------------------------


def ids(connection: dict[str, Any]) -> list[str]:
    return [edge["node"]["id"] for edge in connection["edges"]]


def ids_in_order(value: Any) -> list[str]:
    """Every ``id`` in a response, in document order."""
    if isinstance(value, dict):
        found = [value["id"]] if isinstance(value.get("id"), str) else []
        return found + [i for v in value.values() for i in ids_in_order(v)]
    if isinstance(value, list):
        return [i for v in value for i in ids_in_order(v)]
    return []


def at(data: Any, path: list[Any]) -> Any:
    for step in path:
        data = data[step]
    return data


EDGES = "edges { node { id } }"
GROUPS = '{ user(id: "%s") { groups { edges { node { id } } } } }'
MEMBERS = '{ group(id: "%s") { members { edges { node { id } } } } }'
SUBSCRIPTIONS = '{ group(id: "%s") { subscriptions { edges { node { id } } } } }'
SUBSCRIBERS = '{ product(id: "%s") { subscribers { edges { node { id } } } } }'
ORG_MEMBERS = '{ organization(id: "%s") { members { edges { node { id } } } } }'
ORG_OF = '{ user(id: "%s") { organization { id } } }'
PRODUCTS = '{ user(id: "%s") { products { product { id } via { id } } } }'
TICKETS = '{ user(id: "%s") { tickets { edges { node { id } } } } }'
AUTHOR = '{ ticket(id: "%s") { author { id } } }'
BY_EMAIL = '{ userByEmail(email: "%s") { id } }'
G1, G2, P1, P2, P3 = (
    "GROUP#group1",
    "GROUP#group2",
    "PRODUCT#prod1",
    "PRODUCT#prod2",
    "PRODUCT#prod3",
)

# (principal, query, every id of the answer in document order, the FORBIDDEN paths)
NESTED: list[tuple[str, str, list[str], list[list[Any]]]] = [
    # user.groups: bob sees only the group he shares with alice
    (ALICE, GROUPS % "alice", [G1, G2], []),
    (BOB, GROUPS % "alice", [G1], []),
    (ADMIN, GROUPS % "alice", [G1, G2], []),
    (BILL, GROUPS % "alice", [], [["user"]]),
    # group.members
    (BOB, MEMBERS % "group1", ["USER#alice", "USER#bob"], []),
    (ALICE, MEMBERS % "group2", ["USER#alice"], []),
    (BOB, MEMBERS % "group2", [], [["group"]]),
    (SATYA, MEMBERS % "group1", [], [["group"]]),
    # group.subscriptions
    (BOB, SUBSCRIPTIONS % "group1", [P1, P2], []),
    (ALICE, SUBSCRIPTIONS % "group2", [P2, P3], []),
    (LONER, SUBSCRIPTIONS % "group2", [], [["group"]]),
    # product.subscribers
    (BOB, SUBSCRIBERS % "prod2", [G1], []),
    (ALICE, SUBSCRIBERS % "prod2", [G1, G2], []),
    (ADMIN, SUBSCRIBERS % "prod2", [G1, G2], []),
    (BOB, SUBSCRIBERS % "prod3", [], [["product"]]),
    # organization.members
    (BILL, ORG_MEMBERS % "microsoft", ["USER#billgates", "USER#satyanadella"], []),
    (SATYA, ORG_MEMBERS % "microsoft", ["USER#billgates", "USER#satyanadella"], []),
    (ADMIN, ORG_MEMBERS % "amazon", ["USER#jeffbezos"], []),
    (BILL, ORG_MEMBERS % "amazon", [], [["organization"]]),
    (ALICE, ORG_MEMBERS % "microsoft", [], [["organization"]]),
    # user.organization
    (BILL, ORG_OF % "satyanadella", ["ORG#microsoft"], []),
    (SATYA, ORG_OF % "satyanadella", ["ORG#microsoft"], []),
    (ALICE, ORG_OF % "bob", [], []),  # bob has none: null, no error
    (ADMIN, ORG_OF % "jeffbezos", ["ORG#amazon"], []),
    (LONER, ORG_OF % "loner", [], []),
    (LONER, ORG_OF % "jeffbezos", [], [["user"]]),
    # user.products and the groups they come through
    (ALICE, PRODUCTS % "alice", [P1, G1, P2, G1, G2, P3, G2], []),
    (BOB, PRODUCTS % "alice", [P1, G1, P2, G1], []),
    (ADMIN, PRODUCTS % "alice", [P1, G1, P2, G1, G2, P3, G2], []),
    (BOB, PRODUCTS % "bob", [P1, G1, P2, G1], []),
    (BILL, PRODUCTS % "alice", [], [["user"]]),
    # user.tickets: only one's own
    (ALICE, TICKETS % "alice", ["ticket:alice"], []),
    (BOB, TICKETS % "alice", [], []),
    (ADMIN, TICKETS % "bob", ["ticket:bob"], []),
    (SATYA, TICKETS % "billgates", [], []),
    # ticket.author
    (ALICE, AUTHOR % "ticket:alice", ["USER#alice"], []),
    (BILL, AUTHOR % "ticket:billgates", ["USER#billgates"], []),
    (BOB, AUTHOR % "ticket:alice", [], [["ticket"]]),
    (SATYA, AUTHOR % "ticket:billgates", [], [["ticket"]]),
    # userByEmail (case-insensitive)
    (BOB, BY_EMAIL % "alice@example.com", [], [["userByEmail"]]),  # emails are private
    (ALICE, BY_EMAIL % "BOB@Example.com", [], [["userByEmail"]]),
    (ALICE, BY_EMAIL % "ALICE@example.com", ["USER#alice"], []),
    (BILL, BY_EMAIL % "alice@example.com", [], [["userByEmail"]]),
    (ADMIN, BY_EMAIL % "nobody@example.com", [], []),
]


@module_loop
@pytest.mark.parametrize(
    ("principal", "query", "expected", "forbidden"),
    NESTED,
    ids=[f"{p}: {q}" for p, q, _, _ in NESTED],
)
@pytest.mark.parametrize("explain", [False, True])
async def test_nested_field(
    world: World,
    principal: str,
    query: str,
    expected: list[str],
    forbidden: list[list[Any]],
    explain: bool,
) -> None:
    """An unreadable node looked up at the root is null with no error (FORBIDDEN under
    --explain-forbidden); a field the rules hide (``userByEmail``, a node's ``organization``)
    is FORBIDDEN either way."""
    body = await world.ask(principal, query, explain=explain)
    assert ids_in_order(body["data"]) == world.resolve(expected)
    lookups = set(ROOT_FIELDS.values())
    shown = [p for p in forbidden if explain or not (len(p) == 1 and p[0] in lookups)]
    assert forbidden_paths(body) == shown
    for path in forbidden:
        assert at(body["data"], path) is None


# (principal, user whose email is asked, the email seen, or None when FORBIDDEN)
EMAILS = [
    (ALICE, "alice", "alice@example.com"),
    (BOB, "bob", "bob@example.com"),
    (BOB, "alice", None),
    (ALICE, "bob", None),
    (ADMIN, "bob", "bob@example.com"),
    (BILL, "satyanadella", None),
]


@module_loop
@pytest.mark.parametrize(("principal", "user", "email"), EMAILS)
async def test_email_only_for_oneself_and_admins(
    world: World, principal: str, user: str, email: str | None
) -> None:
    body = await world.ask(principal, f'{{ user(id: "{user}") {{ name email }} }}')
    assert body["data"]["user"]["email"] == email
    assert body["data"]["user"]["name"]  # the rest of the user is still there
    assert forbidden_paths(body) == ([] if email else [["user", "email"]])


@module_loop
async def test_email_is_left_out_per_member(world: World) -> None:
    body = await world.ask(BOB, '{ group(id: "group1") { members { edges { node { email } } } } }')
    emails = [edge["node"]["email"] for edge in body["data"]["group"]["members"]["edges"]]
    assert emails == [None, "bob@example.com"]
    assert forbidden_paths(body) == [["group", "members", "edges", 0, "node", "email"]]


@module_loop
@pytest.mark.parametrize("principal", PRINCIPALS)
async def test_open_tickets_list_only_ones_own(world: World, principal: str) -> None:
    body = await world.ask(principal, f"{{ tickets(status: OPEN) {{ {EDGES} }} }}")
    assert "errors" not in body
    expected = {world.tickets[u] for u in TICKET_AUTHORS if f"ticket:{u}" in READABLE[principal]}
    assert set(ids(body["data"]["tickets"])) == expected


@module_loop
async def test_total_count_still_counts_every_edge(world: World) -> None:
    """Documented: edges to unreadable nodes are left out, ``totalCount`` is the whole count."""
    query = '{ user(id: "alice") { groups { totalCount edges { node { id } } } } }'
    body = await world.ask(BOB, query)
    groups = body["data"]["user"]["groups"]
    assert (groups["totalCount"], ids(groups)) == (2, ["GROUP#group1"])


def collect_ids(value: Any) -> set[str]:
    if isinstance(value, dict):
        found = {value["id"]} if isinstance(value.get("id"), str) else set()
        return found.union(*(collect_ids(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(collect_ids(v) for v in value))
    return set()


WALKS = [
    """query($me: ID!) { user(id: $me) { id groups { edges { node { id members { edges { node {
        id groups { edges { node { id subscriptions { edges { node { id } } } } } } } } } } } } }
    }""",
    """query($me: ID!) { user(id: $me) { id organization { id members { edges { node { id
        products { product { id subscribers { edges { node { id } } } } via { id } }
        tickets { edges { node { id author { id } } } } } } } } } }""",
    """query($me: ID!) { user(id: $me) { id products { product { id subscribers { edges { node {
        id members { edges { node { id organization { id } } } } } } } } } } }""",
]


@module_loop
@pytest.mark.parametrize("walk", range(len(WALKS)))
@pytest.mark.parametrize("principal", [ALICE, BOB, BILL, SATYA, LONER])
async def test_every_walk_from_oneself_stays_in_the_readable_part(
    world: World, principal: str, walk: int
) -> None:
    body = await world.ask(principal, WALKS[walk], {"me": principal})
    assert not forbidden_paths(body)  # edges are left out, no error on a nested connection
    seen = collect_ids(body["data"])
    assert f"USER#{principal}" in seen
    assert seen <= {global_id(world, t) for t in READABLE[principal]}


@module_loop
async def test_the_admin_walk_sees_what_bob_does_not(world: World) -> None:
    bob = collect_ids((await world.ask(BOB, WALKS[0], {"me": "bob"}))["data"])
    admin = collect_ids((await world.ask(ADMIN, WALKS[0], {"me": "bob"}))["data"])
    assert admin - bob == {"GROUP#group2", "PRODUCT#prod3"}


async def test_a_co_member_in_another_organization_hides_it(demo: Table) -> None:
    """alice may read bob (group1) but not bob's organization once he joins amazon."""
    app = app_for(demo)
    async with asgi(app) as client:
        add = 'mutation { addOrganizationMember(organizationId: "amazon", userId: "bob") { role } }'
        assert (await post(client, ADMIN, add))["data"] == {
            "addOrganizationMember": {"role": "MEMBER"}
        }
        query = '{ user(id: "bob") { id organization { id } } }'
        alice = await post(client, ALICE, query)
        assert alice["data"] == {"user": {"id": "USER#bob", "organization": None}}
        assert forbidden_paths(alice) == [["user", "organization"]]
        bob = await post(client, BOB, query)
        assert bob == {"data": {"user": {"id": "USER#bob", "organization": {"id": "ORG#amazon"}}}}
        members = '{ organization(id: "amazon") { members { edges { node { id } } } } }'
        assert ids((await post(client, BOB, members))["data"]["organization"]["members"]) == [
            "USER#bob",
            "USER#jeffbezos",
        ]
        jeff = await post(client, ALICE, '{ user(id: "jeffbezos") { id } }')
        assert jeff["data"] == {"user": None}


# ---- mutations -----------------------------------------------------------------------------


OFFICE = 'organizationId: "microsoft", country: "US", state: "WA", city: "Redmond", zip: "98052"'

# (principal, mutation field, its arguments and selection)
FORBIDDEN_MUTATIONS: list[tuple[str, str, str]] = [
    (BOB, "createUser", '(input: {id: "mallory", name: "Mallory"}) { id }'),
    (BOB, "updateUser", '(input: {id: "alice", name: "Hacked"}) { id }'),
    (BOB, "updateUser", '(input: {id: "USER#alice", email: "bob2@example.com"}) { id }'),
    (BOB, "deleteUser", '(id: "alice") { id }'),
    (BOB, "deleteUser", '(id: "bob") { id }'),
    (BOB, "createGroup", '(input: {id: "g3", name: "G"}) { id }'),
    (BOB, "updateGroup", '(input: {id: "group1", name: "Mine"}) { id }'),
    (BOB, "deleteGroup", '(id: "group1") { id }'),
    (BOB, "createProduct", '(input: {id: "p9", name: "P"}) { id }'),
    (BOB, "updateProduct", '(input: {id: "prod1", name: "Free"}) { id }'),
    (BOB, "deleteProduct", '(id: "prod1") { id }'),
    (BOB, "createOrganization", '(input: {id: "o9", name: "O"}) { id }'),
    (BOB, "updateOrganization", '(input: {id: "microsoft", plan: "Free"}) { id }'),
    (BOB, "deleteOrganization", '(id: "amazon") { id }'),
    (BOB, "addGroupMember", '(userId: "bob", groupId: "group2") { cursor }'),
    (BOB, "addGroupMember", '(userId: "jeffbezos", groupId: "group1") { cursor }'),
    (BOB, "removeGroupMember", '(userId: "alice", groupId: "group1")'),
    (BOB, "removeGroupMember", '(userId: "bob", groupId: "group1")'),
    (BOB, "subscribeGroup", '(groupId: "group1", productId: "prod3", plan: "free") { cursor }'),
    (BOB, "cancelSubscription", '(groupId: "group1", productId: "prod1") { cursor }'),
    (BOB, "addOrganizationMember", '(organizationId: "microsoft", userId: "bob") { cursor }'),
    (BOB, "openTicket", '(userId: "alice", title: "On her behalf") { id }'),
    (BOB, "closeTicket", '(id: "ticket:alice") { id }'),
    (BOB, "addOffice", f"({OFFICE}) {{ cursor }}"),
    (SATYA, "updateOrganization", '(input: {id: "microsoft", plan: "Free"}) { id }'),
    (SATYA, "addOrganizationMember", '(organizationId: "microsoft", userId: "jeffbezos") { role }'),
    (SATYA, "removeOrganizationMember", '(organizationId: "microsoft", userId: "billgates")'),
    (SATYA, "addOffice", f"({OFFICE}) {{ cursor }}"),
    (SATYA, "removeOffice", '(organizationId: "microsoft", officeId: "x")'),
    (SATYA, "updateUser", '(input: {id: "billgates", name: "Bill"}) { id }'),
    (SATYA, "openTicket", '(userId: "billgates", title: "For Bill") { id }'),
    (SATYA, "closeTicket", '(id: "ticket:billgates") { id }'),
    (LONER, "createUser", '(input: {name: "Friend"}) { id }'),
    (LONER, "addGroupMember", '(userId: "loner", groupId: "group1") { cursor }'),
    (LONER, "addOrganizationMember", '(organizationId: "amazon", userId: "loner") { role }'),
    (LONER, "closeTicket", '(id: "ticket:bob") { id }'),
]


@module_loop
@pytest.mark.parametrize(
    ("principal", "field", "rest"),
    FORBIDDEN_MUTATIONS,
    ids=[f"{p}: {f}{r}" for p, f, r in FORBIDDEN_MUTATIONS],
)
@pytest.mark.parametrize("explain", [False, True])
async def test_forbidden_mutation_changes_nothing(
    world: World, principal: str, field: str, rest: str, explain: bool
) -> None:
    """A mutation whose argument names a node the principal may not read answers NOT_FOUND,
    as for a missing node (FORBIDDEN under --explain-forbidden); any other is FORBIDDEN."""
    before = await scan(world.table)
    body = await world.ask(principal, f"mutation {{ {field}{rest} }}", explain=explain)
    assert body["data"] is None
    hidden = (principal, field) in UNREADABLE_ARGUMENT and not explain
    assert codes(body) == (["NOT_FOUND"] if hidden else ["FORBIDDEN"])
    if (principal, field) in UNREADABLE_ARGUMENT and explain:  # the grant's own reason
        assert f"you may not run {field}" in body["errors"][0]["message"]
    assert [e["path"] for e in body["errors"]] == [[field]]
    assert await scan(world.table) == before


# closeTicket on another's ticket: one they may not read
UNREADABLE_ARGUMENT = {(BOB, "closeTicket"), (SATYA, "closeTicket"), (LONER, "closeTicket")}


async def test_a_user_may_open_and_close_their_own_ticket(demo: Table) -> None:
    async with asgi(app_for(demo)) as client:
        opened = await post(
            client,
            BOB,
            'mutation { openTicket(userId: "bob", title: "Mine") { id author { id } } }',
        )
        ticket = opened["data"]["openTicket"]
        assert ticket["author"] == {"id": "USER#bob"}
        read = await post(client, BOB, f'{{ ticket(id: "{ticket["id"]}") {{ title status }} }}')
        assert read == {"data": {"ticket": {"title": "Mine", "status": "OPEN"}}}
        closed = await post(
            client, BOB, f'mutation {{ closeTicket(id: "{ticket["id"]}") {{ status }} }}'
        )
        assert closed == {"data": {"closeTicket": {"status": "CLOSED"}}}
        alice = await post(
            client, ALICE, f'mutation {{ closeTicket(id: "{ticket["id"]}") {{ id }} }}'
        )
        assert codes(alice) == ["NOT_FOUND"]  # she may not read it: as if there were none


@pytest.mark.parametrize("user_id", ["bob", "USER#bob"])
async def test_a_user_may_update_their_own_name_and_email(demo: Table, user_id: str) -> None:
    async with asgi(app_for(demo)) as client:
        update = (
            "mutation($id: ID!) { updateUser(input: "
            '{id: $id, name: "Robert", email: "robert@example.com"}) { id name email version } }'
        )
        body = await post(client, BOB, update, {"id": user_id})
        assert body == {
            "data": {
                "updateUser": {
                    "id": "USER#bob",
                    "name": "Robert",
                    "email": "robert@example.com",
                    "version": 2,
                }
            }
        }
        seen = await post(client, ALICE, '{ user(id: "bob") { name email } }')
        assert seen["data"] == {"user": {"name": "Robert", "email": None}}
    item = await demo.get_item(ItemKey("USER#bob", "USER#bob"))
    assert item is not None and item["email"] == "robert@example.com"


ADMIN_SEQUENCE = [
    'createUser(input: {id: "carol", name: "Carol", email: "carol@example.com"}) { id }',
    'updateUser(input: {id: "alice", name: "Alice A."}) { name }',
    'createGroup(input: {id: "group3", name: "Group 3"}) { id }',
    'updateGroup(input: {id: "group3", description: "new"}) { description }',
    'addGroupMember(userId: "carol", groupId: "group3", role: OWNER) { role }',
    'createProduct(input: {id: "prod4", name: "Product 4"}) { id }',
    'updateProduct(input: {id: "prod4", description: "d"}) { description }',
    'subscribeGroup(groupId: "group3", productId: "prod4", plan: "pro") { status }',
    'cancelSubscription(groupId: "group3", productId: "prod4") { status }',
    'createOrganization(input: {id: "acme", name: "Acme"}) { id }',
    'updateOrganization(input: {id: "acme", plan: "Gold"}) { plan }',
    'addOrganizationMember(organizationId: "acme", userId: "carol", role: ADMIN) { role }',
    f"addOffice({OFFICE.replace('microsoft', 'acme')}) {{ node {{ city }} }}",
    'removeOrganizationMember(organizationId: "acme", userId: "carol")',
    'openTicket(userId: "carol", title: "Help") { status }',
    'removeGroupMember(userId: "carol", groupId: "group3")',
    'deleteOrganization(id: "acme") { id }',
    'deleteProduct(id: "prod4") { id }',
    'deleteGroup(id: "group3") { id }',
    'deleteUser(id: "carol") { id }',
]


async def test_the_admin_may_make_every_mutation(demo: Table) -> None:
    async with asgi(app_for(demo)) as client:
        for mutation in ADMIN_SEQUENCE:
            body = await post(client, ADMIN, f"mutation {{ {mutation} }}")
            assert "errors" not in body, (mutation, body["errors"])
        ticket = await post(
            client, ALICE, 'mutation { openTicket(userId: "alice", title: "t") { id } }'
        )
        close = "mutation($id: ID!) { closeTicket(id: $id) { status } }"
        closed = await post(client, ADMIN, close, {"id": ticket["data"]["openTicket"]["id"]})
        assert closed == {"data": {"closeTicket": {"status": "CLOSED"}}}


# ---- the checks' cost ----------------------------------------------------------------------


UNREAD = ("Limit", "ReturnConsumedCapacity")  # Query parameters that do not change what is read


class RecordingClient:
    """Forwards to the real data plane and records what each call reads: a Query as its
    index, key condition and start; a BatchGetItem as each of its keys."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.reads: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        async def call(params: dict[str, Any]) -> Any:
            if name == "query":
                read = {k: v for k, v in params.items() if k not in UNREAD}
                self.reads.append(json.dumps(read, sort_keys=True, default=str))
            elif name == "batch_get_item":
                for table, request in params["RequestItems"].items():
                    for key in request["Keys"]:
                        self.reads.append(json.dumps([table, key], sort_keys=True))
            return await method(params)

        return call


async def traced(table: Table, principal: str, query: str) -> tuple[dict[str, Any], list[str]]:
    """The request's trace, and the DynamoDB requests it sent (as comparable strings)."""
    recorder = RecordingClient(table.client)
    app = app_for(Table(recorder, table.name, layout=DEMO_LAYOUT))
    async with asgi(app) as client:
        body = await post(client, principal, query, trace=True)
    assert "errors" not in body, body["errors"]
    return body["extensions"]["dynamodb"], recorder.reads


CHECKED_QUERIES = [
    '{ group(id: "group1") { name members { edges { node { name } } } } }',
    '{ user(id: "alice") { name groups { edges { node { name members { edges { node { name } } } }'
    " } } } }",
    '{ user(id: "alice") { products { product { name } via { name } } } }',
    '{ product(id: "prod2") { name subscribers { edges { node { name } } } } }',
    '{ user(id: "bob") { name groups { edges { node { name subscriptions { edges { node { name } }'
    " } } } } } }",
]


@module_loop
@pytest.mark.parametrize(
    "query",
    [
        CHECKED_QUERIES[0],
        CHECKED_QUERIES[1],
        CHECKED_QUERIES[2],
        CHECKED_QUERIES[3],
        CHECKED_QUERIES[4],
    ],
)
async def test_checks_add_at_most_one_round(world: World, query: str) -> None:
    admin, _ = await traced(world.table, ADMIN, query)
    bob, _ = await traced(world.table, BOB, query)
    assert bob["rounds"] <= admin["rounds"] + 1, (bob, admin)


@module_loop
@pytest.mark.parametrize(
    "query",
    [
        CHECKED_QUERIES[0],
        CHECKED_QUERIES[1],
        CHECKED_QUERIES[2],
        CHECKED_QUERIES[3],
        CHECKED_QUERIES[4],
    ],
)
async def test_checks_repeat_no_read(world: World, query: str) -> None:
    _, reads = await traced(world.table, BOB, query)
    assert not [read for read in set(reads) if reads.count(read) > 1]


@module_loop
async def test_group1_members_and_names_as_bob_and_as_admin_read_the_same_items(
    world: World,
) -> None:
    admin, _ = await traced(world.table, ADMIN, CHECKED_QUERIES[0])
    bob, _ = await traced(world.table, BOB, CHECKED_QUERIES[0])
    # bob's checks add only Queries of his own edges: no item is fetched twice
    assert bob["operations"]["BatchGetItem"] == admin["operations"]["BatchGetItem"]


@module_loop
async def test_a_node_listed_by_an_edge_you_reach_costs_no_read_to_check(world: World) -> None:
    """Each product here was listed by the subscription edge of one of alice's groups, which
    decides its check (products are readable by groups.subscriptions): the other group's edge to
    it is not read by key. alice's request reads exactly what an admin's reads."""
    query = (
        '{ user(id: "alice") { groups { edges { node { subscriptions { edges { node { name } } }'
        " } } } } }"
    )
    admin, admin_reads = await traced(world.table, ADMIN, query)
    alice, alice_reads = await traced(world.table, ALICE, query)
    assert sorted(alice_reads) == sorted(admin_reads)
    assert alice["operations"] == admin["operations"]
