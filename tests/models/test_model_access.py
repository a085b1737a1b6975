"""Access rules in a model file: the demo's rules (models/demo/model.yaml, ``access``) served by
the engine on the demo data answer as the hand-written demo does (tests/http/test_authorization.py,
ported where the engine's schema has the fields); the checks' cost in DynamoDB reads; and one
broken ``access`` section per kind of mistake."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
import yaml
from starlette.applications import Starlette

from graph.client import Endpoint, create_table, open_client
from graph.embedded import EmbeddedDynamoDB
from graph.mutate import Writer, build_items
from graph.table import Table
from model import ModelError, model_path, parse_model
from server.app import create_app
from server.auth import Authenticator
from server.engine import engine_for
from server.settings import Settings
from tests.models.test_model_file import GOOD
from tests.table_state import scan
from tests.tokens import SECRET, asgi, bearer, hs256

DEMO_MODEL = str(model_path("demo"))
ENGINE = engine_for(DEMO_MODEL)

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

ROOT_FIELDS = {
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


def app_for(table: Table) -> Starlette:
    return create_app(
        Settings(model=DEMO_MODEL), table=table, authenticator=Authenticator(secret=SECRET)
    )


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


async def seed(table: Table) -> dict[str, str]:
    """The demo data, a user with no edges and one ticket each for alice, bob and billgates
    (their OPENED edges and counters included); the tickets' global ids by author."""
    sample = yaml.safe_load((model_path("demo").parent / "sample.yaml").read_text())
    sample["nodes"].append({"type": "User", "id": "loner", "name": "Loner"})
    tickets = {}
    for user in TICKET_AUTHORS:
        ticket = f"t-{user}"
        sample["nodes"].append(
            {
                "type": "Ticket",
                "id": ticket,
                "title": f"{user}'s ticket",
                "status": "OPEN",
                "authorId": f"USER#{user}",
            }
        )
        sample["edges"].append({"label": "OPENED", "from": user, "to": ticket})
        tickets[user] = f"TICKET#{ticket}"
    assert ENGINE.codec is not None
    await table.batch_write(build_items(Writer(table, ENGINE.codec), sample, sample["time"]))
    return tickets


async def demo_table(client: Any) -> Table:
    await create_table(client, ENGINE.table_name, layout=ENGINE.layout)
    return Table(client, ENGINE.table_name, layout=ENGINE.layout)


@dataclass
class World:
    table: Table
    app: Starlette
    tickets: dict[str, str]  # author -> global ticket id

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
    ) -> dict[str, Any]:
        async with asgi(self.app) as client:
            return await post(client, principal, self.resolve(query), variables, trace)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world() -> AsyncIterator[World]:
    """The seeded demo on a moto server of this module's own (read-only: tests that write use
    the function-scoped ``served`` table)."""
    with EmbeddedDynamoDB() as server:
        async with open_client(Endpoint(server.url)) as client:
            table = await demo_table(client)
            tickets = await seed(table)
            yield World(table, app_for(table), tickets)


@pytest.fixture
async def served(dynamodb: EmbeddedDynamoDB) -> AsyncIterator[tuple[Table, httpx.AsyncClient]]:
    """A fresh seeded demo table on the session's moto server, and a client of the engine."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        table = await demo_table(client)
        await seed(table)
        async with asgi(app_for(table)) as http:
            yield table, http


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


def forbidden_paths(body: dict[str, Any]) -> list[list[Any]]:
    """The paths of the errors, all of which must be FORBIDDEN."""
    assert set(codes(body)) <= {"FORBIDDEN"}, body["errors"]
    return [e["path"] for e in body.get("errors", [])]


module_loop = pytest.mark.asyncio(loop_scope="module")


# ---- root fields ---------------------------------------------------------------------------


# `node(id:)` resolves as the typed lookups do, and `nodes` below asks every target of every
# principal through it: two principals suffice here
ROOTS = [(p, "typed") for p in PRINCIPALS] + [(BOB, "node"), (BILL, "node")]


@module_loop
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("principal", "path"), ROOTS)
async def test_root_field(world: World, principal: str, path: str, target: str) -> None:
    gid: str = world.resolve(target)
    kind, _, bare = gid.partition("#")
    field = ROOT_FIELDS[kind] if path == "typed" else "node"
    variables = {"id": bare if path == "typed" else gid}
    body = await world.ask(principal, f"query($id: ID!) {{ {field}(id: $id) {{ id }} }}", variables)
    if target in READABLE[principal]:
        assert body == {"data": {field: {"id": gid}}}
    else:
        assert body["data"] == {field: None}
        assert forbidden_paths(body) == [[field]]


@module_loop
@pytest.mark.parametrize("principal", PRINCIPALS)
async def test_nodes_answers_each_id_on_its_own(world: World, principal: str) -> None:
    ids = [world.resolve(t) for t in TARGETS]
    body = await world.ask(
        principal, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": ids}
    )
    readable = [t in READABLE[principal] for t in TARGETS]
    assert body["data"]["nodes"] == [
        {"id": i} if ok else None for i, ok in zip(ids, readable, strict=True)
    ]
    expected = [["nodes", n] for n, ok in enumerate(readable) if not ok]
    assert sorted(forbidden_paths(body)) == sorted(expected)


@module_loop
@pytest.mark.parametrize("principal", PRINCIPALS)
async def test_nodes_of_readable_ids_and_a_missing_one(world: World, principal: str) -> None:
    ids = [world.resolve(t) for t in TARGETS if t in READABLE[principal]]
    ids.append("USER#nobody")  # a missing node is null, with no error
    body = await world.ask(
        principal, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": ids}
    )
    assert body == {"data": {"nodes": [{"id": i} for i in ids[:-1]] + [None]}}


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


GROUPS = '{ user(id: "%s") { groups { edges { node { id } } } } }'
MEMBERS = '{ group(id: "%s") { members { edges { node { id } } } } }'
SUBSCRIPTIONS = '{ group(id: "%s") { subscriptions { edges { node { id } } } } }'
SUBSCRIBERS = '{ product(id: "%s") { subscribers { edges { node { id } } } } }'
ORG_MEMBERS = '{ organization(id: "%s") { members { edges { node { id } } } } }'
ORG_OF = '{ user(id: "%s") { organization { id } } }'
TICKETS = '{ user(id: "%s") { tickets { edges { node { id } } } } }'
BY_EMAIL = '{ userByEmail(email: "%s") { id } }'
OFFICES = '{ organization(id: "%s") { offices { edges { node { id } } } } }'
G1, G2, P1, P2, P3 = (
    "GROUP#group1",
    "GROUP#group2",
    "PRODUCT#prod1",
    "PRODUCT#prod2",
    "PRODUCT#prod3",
)

# (principal, query, every id of the answer in document order, the FORBIDDEN paths); the
# hand-written demo's table less `products` and `ticket.author`, which the engine lacks yet
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
    # user.tickets: only one's own
    (ALICE, TICKETS % "alice", ["ticket:alice"], []),
    (BOB, TICKETS % "alice", [], []),
    (ADMIN, TICKETS % "bob", ["ticket:bob"], []),
    (SATYA, TICKETS % "billgates", [], []),
    # userByEmail (case-insensitive): only one's own
    (BOB, BY_EMAIL % "alice@example.com", [], [["userByEmail"]]),
    (ALICE, BY_EMAIL % "BOB@Example.com", [], [["userByEmail"]]),
    (ALICE, BY_EMAIL % "ALICE@example.com", ["USER#alice"], []),
    (BILL, BY_EMAIL % "alice@example.com", [], [["userByEmail"]]),
    (BILL, BY_EMAIL % "nobody@example.com", [], [["userByEmail"]]),
    (ADMIN, BY_EMAIL % "nobody@example.com", [], []),
    # offices (a child type with no rule of its own): as readable as their organization
    (ALICE, OFFICES % "microsoft", [], [["organization"]]),
]


@module_loop
@pytest.mark.parametrize(
    ("principal", "query", "expected", "forbidden"),
    NESTED,
    ids=[f"{p}: {q}" for p, q, _, _ in NESTED],
)
async def test_nested_field(
    world: World, principal: str, query: str, expected: list[str], forbidden: list[list[Any]]
) -> None:
    body = await world.ask(principal, query)
    assert ids_in_order(body["data"]) == world.resolve(expected)
    assert forbidden_paths(body) == forbidden
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
    body = await world.ask(principal, "{ tickets(status: OPEN) { edges { node { id } } } }")
    assert "errors" not in body
    expected = {world.tickets[u] for u in TICKET_AUTHORS if f"ticket:{u}" in READABLE[principal]}
    assert set(ids(body["data"]["tickets"])) == expected


@module_loop
async def test_total_count_still_counts_every_edge(world: World) -> None:
    """As in the hand-written demo: edges to unreadable nodes are left out, ``totalCount`` is
    the whole count."""
    query = '{ user(id: "alice") { groups { totalCount edges { node { id } } } } }'
    groups = (await world.ask(BOB, query))["data"]["user"]["groups"]
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
        groups { edges { node { id subscriptions { edges { node { id subscribers { edges { node {
        id } } } } } } } } } tickets { edges { node { id } } } } } } } } }""",
    """query($me: ID!) { user(id: $me) { id groups { edges { node { id subscriptions { edges {
        node { id subscribers { edges { node { id members { edges { node { id organization {
        id } } } } } } } } } } } } } } }""",
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
    assert seen <= {world.resolve(t) for t in READABLE[principal]}


@module_loop
async def test_the_admin_walk_sees_what_bob_does_not(world: World) -> None:
    bob = collect_ids((await world.ask(BOB, WALKS[0], {"me": "bob"}))["data"])
    admin = collect_ids((await world.ask(ADMIN, WALKS[0], {"me": "bob"}))["data"])
    assert admin - bob == {"GROUP#group2", "PRODUCT#prod3"}


async def test_a_co_member_in_another_organization_hides_it(
    served: tuple[Table, httpx.AsyncClient],
) -> None:
    """alice may read bob (group1) but not bob's organization once he joins amazon."""
    _, client = served
    add = (
        'mutation { addOrganizationMember(organizationId: "amazon", userId: "bob", role: MEMBER) '
        "{ role } }"
    )
    assert (await post(client, ADMIN, add))["data"] == {"addOrganizationMember": {"role": "MEMBER"}}
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


async def test_offices_are_as_readable_as_their_organization(
    served: tuple[Table, httpx.AsyncClient],
) -> None:
    table, client = served
    location = {"country": "US", "state": "WA", "city": "Redmond", "zip": "98052"}
    sample = {"nodes": [{"type": "Office", "organizationId": "microsoft", "id": "o1", **location}]}
    assert ENGINE.codec is not None
    await table.batch_write(build_items(Writer(table, ENGINE.codec), sample, "2024-01-15"))
    office = "o1"
    query = '{ organization(id: "microsoft") { offices { edges { node { id city } } } } }'

    body = await post(client, BILL, query)
    assert body == {
        "data": {
            "organization": {"offices": {"edges": [{"node": {"id": office, "city": "Redmond"}}]}}
        }
    }
    assert await post(client, SATYA, query) == body
    denied = await post(client, ALICE, query)
    assert denied["data"] == {"organization": None}
    assert forbidden_paths(denied) == [["organization"]]


# ---- mutations -----------------------------------------------------------------------------


# (principal, mutation field, its arguments and selection): the demo's table, less the
# mutations the engine's schema lacks yet (openTicket, closeTicket, cancelSubscription, offices)
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
    (BOB, "addGroupMember", '(userId: "bob", groupId: "group2", role: MEMBER) { cursor }'),
    (BOB, "addGroupMember", '(userId: "jeffbezos", groupId: "group1", role: OWNER) { cursor }'),
    (BOB, "removeGroupMember", '(userId: "alice", groupId: "group1")'),
    (BOB, "removeGroupMember", '(userId: "bob", groupId: "group1")'),
    (
        BOB,
        "subscribeGroup",
        '(groupId: "group1", productId: "prod3", plan: "free") { cursor }',
    ),
    (
        BOB,
        "addOrganizationMember",
        '(organizationId: "microsoft", userId: "bob", role: MEMBER) { cursor }',
    ),
    (BOB, "openTicket", '(userId: "alice", title: "Mine") { id }'),
    (SATYA, "updateOrganization", '(input: {id: "microsoft", plan: "Free"}) { id }'),
    (
        SATYA,
        "addOrganizationMember",
        '(organizationId: "microsoft", userId: "jeffbezos", role: ADMIN) { role }',
    ),
    (SATYA, "removeOrganizationMember", '(organizationId: "microsoft", userId: "billgates")'),
    (SATYA, "updateUser", '(input: {id: "billgates", name: "Bill"}) { id }'),
    (LONER, "createUser", '(input: {name: "Friend"}) { id }'),
    (LONER, "addGroupMember", '(userId: "loner", groupId: "group1", role: MEMBER) { cursor }'),
    (
        LONER,
        "addOrganizationMember",
        '(organizationId: "amazon", userId: "loner", role: MEMBER) { role }',
    ),
]


@module_loop
@pytest.mark.parametrize(
    ("principal", "field", "rest"),
    FORBIDDEN_MUTATIONS,
    ids=[f"{p}: {f}{r}" for p, f, r in FORBIDDEN_MUTATIONS],
)
async def test_forbidden_mutation_changes_nothing(
    world: World, principal: str, field: str, rest: str
) -> None:
    before = await scan(world.table)
    body = await world.ask(principal, f"mutation {{ {field}{rest} }}")
    assert body["data"] is None
    assert forbidden_paths(body) == [[field]]
    assert await scan(world.table) == before


@pytest.mark.parametrize("user_id", ["bob", "USER#bob"])
async def test_a_user_may_update_their_own_name_and_email(
    served: tuple[Table, httpx.AsyncClient], user_id: str
) -> None:
    table, client = served
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
    items = await scan(table)
    assert items["USER#bob", "USER#bob"]["email"] == "robert@example.com"


ADMIN_SEQUENCE = [
    'createUser(input: {id: "carol", name: "Carol", email: "carol@example.com"}) { id }',
    'updateUser(input: {id: "alice", name: "Alice A."}) { name }',
    'createGroup(input: {id: "group3", name: "Group 3"}) { id }',
    'addGroupMember(userId: "carol", groupId: "group3", role: OWNER) { role }',
    'createProduct(input: {id: "prod4", name: "Product 4"}) { id }',
    'subscribeGroup(groupId: "group3", productId: "prod4", plan: "pro") { status }',
    'createOrganization(input: {id: "acme", name: "Acme"}) { id }',
    'addOrganizationMember(organizationId: "acme", userId: "carol", role: ADMIN) { role }',
    'removeOrganizationMember(organizationId: "acme", userId: "carol")',
    'removeGroupMember(userId: "carol", groupId: "group3")',
    'deleteOrganization(id: "acme") { id }',
    'deleteUser(id: "carol") { id }',
]


async def test_the_admin_may_make_every_mutation(served: tuple[Table, httpx.AsyncClient]) -> None:
    _, client = served
    for mutation in ADMIN_SEQUENCE:
        body = await post(client, ADMIN, f"mutation {{ {mutation} }}")
        assert "errors" not in body, (mutation, body["errors"])


async def test_without_a_token_nothing_runs(served: tuple[Table, httpx.AsyncClient]) -> None:
    _, client = served
    response = await client.post("/graphql", json={"query": '{ user(id: "alice") { id } }'})
    assert response.status_code == 401
    assert codes(response.json()) == ["UNAUTHENTICATED"]


# ---- the checks' cost ----------------------------------------------------------------------


UNREAD = ("Limit", "ReturnConsumedCapacity")  # Query parameters that do not change what is read


class RecordingClient:
    """Forwards to the real aioboto3 client and records what each call reads: a Query as its
    index, key condition and start; a BatchGetItem as each of its keys."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.reads: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        async def call(**params: Any) -> Any:
            if name == "query":
                read = {k: v for k, v in params.items() if k not in UNREAD}
                self.reads.append(json.dumps(read, sort_keys=True, default=str))
            elif name == "batch_get_item":
                for table, request in params["RequestItems"].items():
                    for key in request["Keys"]:
                        self.reads.append(json.dumps([table, key], sort_keys=True))
            return await method(**params)

        return call


async def traced(table: Table, principal: str, query: str) -> tuple[dict[str, Any], list[str]]:
    """The request's trace, and the DynamoDB requests it sent (as comparable strings)."""
    recorder = RecordingClient(table.client)
    app = app_for(Table(recorder, table.name, layout=ENGINE.layout))
    async with asgi(app) as client:
        body = await post(client, principal, query, trace=True)
    assert "errors" not in body, body["errors"]
    return body["extensions"]["dynamodb"], recorder.reads


CHECKED_QUERIES = [
    '{ group(id: "group1") { name members { edges { node { name } } } } }',
    '{ user(id: "alice") { name groups { edges { node { name members { edges { node { name } } } }'
    " } } } }",
    '{ product(id: "prod2") { name subscribers { edges { node { name } } } } }',
    '{ user(id: "bob") { name groups { edges { node { name subscriptions { edges { node { name } }'
    " } } } } } }",
    '{ organization(id: "microsoft") { name members { edges { node { name organization { name } } }'
    " } } }",
]
CHECKERS = [(BOB, q) for q in CHECKED_QUERIES[:4]] + [(BILL, CHECKED_QUERIES[4])]


@module_loop
@pytest.mark.parametrize(("principal", "query"), CHECKERS)
async def test_checks_add_at_most_one_round_and_repeat_no_read(
    world: World, principal: str, query: str
) -> None:
    admin, _ = await traced(world.table, ADMIN, query)
    user, reads = await traced(world.table, principal, query)
    assert user["rounds"] <= admin["rounds"] + 1, (user, admin)
    assert not [read for read in set(reads) if reads.count(read) > 1]


@module_loop
async def test_group1_members_and_names_as_bob_and_as_admin_read_the_same_items(
    world: World,
) -> None:
    admin, _ = await traced(world.table, ADMIN, CHECKED_QUERIES[0])
    bob, _ = await traced(world.table, BOB, CHECKED_QUERIES[0])
    # bob's checks add only Queries of his own edges: no item is fetched twice
    assert bob["operations"]["BatchGetItem"] == admin["operations"]["BatchGetItem"]
    assert (admin["rounds"], bob["rounds"]) == (2, 2)
    # bob's groups and organization, the second not waited for: alice is a fellow group member
    assert bob["operations"]["Query"] <= admin["operations"]["Query"] + 2


@module_loop
async def test_a_readable_field_costs_no_read(world: World) -> None:
    admin, _ = await traced(world.table, ADMIN, '{ user(id: "bob") { name email } }')
    bob, _ = await traced(world.table, BOB, '{ user(id: "bob") { name email } }')
    assert bob == admin  # `self`: decided from the token alone


# ---- broken access sections ----------------------------------------------------------------

ACCESS = """\
access:
  principal: Author
  read:
    Author: [self]
    Book: [books, books.authors.books]
  fields:
    Author.name: [self]
  mutations:
    updateAuthor: {input.id: [self]}
    addWrote: {authorId: [self], bookId: [books]}
"""


def test_a_good_access_section_compiles() -> None:
    model = parse_model(GOOD + ACCESS)
    assert model.access is not None
    assert [p.text for p in model.access.read["Book"]] == ["books", "books.authors.books"]
    assert [g.argument for g in model.access.mutations["addWrote"]] == [("authorId",), ("bookId",)]


# (what changes in ACCESS, the line GOOD + ACCESS reports); GOOD has 40 lines
BROKEN_ACCESS = [
    (
        "principal: Author",
        "principal: Autor",
        "access.principal (line 42): unknown type 'Autor'; did you mean 'Author'?",
    ),
    (
        "principal: Author",
        "principal: Chapter",
        "access.principal (line 42): a token's subject is an id: Chapter needs a one-template key",
    ),
    (
        "    Book: [books,",
        "    Bok: [books,",
        "access.read.Bok (line 45): unknown type 'Bok'; did you mean 'Book'?",
    ),
    (
        "[books, books.authors.books]",
        "[books, books.autors.books]",
        "access.read.Book.1 (line 45): Book has no edge field 'autors' in 'books.autors.books';"
        " did you mean 'authors'?",
    ),
    (
        "[books, books.authors.books]",
        "[books, books.title]",
        "access.read.Book.1 (line 45): Book.title is not an edge field (a path follows edges)",
    ),
    (
        "[books, books.authors.books]",
        "[books, books.authors]",
        "access.read.Book.1 (line 45): 'books.authors' ends at a Author, not a Book; end it at",
    ),
    (
        "Book: [books,",
        "Book: [self, books,",
        "access.read.Book.0 (line 45): `self` is a Author, not a Book; start from `self`'s edge",
    ),
    ("Author: [self]", "Author: []", "access.read.Author (line 44): list at least one path"),
    (
        "Author.name: [self]",
        "Author.nam: [self]",
        "access.fields.Author.nam (line 47): Author has no field 'nam'; did you mean 'name'?",
    ),
    (
        "Author.name: [self]",
        "name: [self]",
        "access.fields.name (line 47): write `Type.field` with a type of the model",
    ),
    (
        "updateAuthor: {",
        "updateAuthr: {",
        "access.mutations.updateAuthr (line 49): unknown mutation 'updateAuthr'; did you mean "
        "'updateAuthor'?",
    ),
    (
        "{input.id: [self]}",
        "{input.idd: [self]}",
        "access.mutations.updateAuthor.input.idd (line 49): updateAuthor has no id argument "
        "'input.idd'; did you mean 'input.id'?",
    ),
    (
        "bookId: [books]}",
        "bookId: [self]}",
        "access.mutations.addWrote.bookId.0 (line 50): `self` is a Author, not a Book",
    ),
    (
        "  principal: Author\n",
        "",
        "access.principal (line 41): missing required key 'principal'; add it",
    ),
    (
        "  fields:",
        "  field:",
        "access.field (line 46): unknown key 'field'; did you mean 'fields'?",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), BROKEN_ACCESS, ids=[b[2][:50] for b in BROKEN_ACCESS]
)
def test_each_access_mistake_names_its_place_and_the_fix(old: str, new: str, expected: str) -> None:
    assert old in ACCESS
    with pytest.raises(ModelError) as raised:
        parse_model(GOOD + ACCESS.replace(old, new, 1), "books.yaml")
    assert any(line.startswith(expected) for line in raised.value.lines), raised.value.lines


# ---- an unseen model's rules ---------------------------------------------------------------

SERVED_ACCESS = """\
access:
  principal: Author
  read:
    Author: [self, books.authors]
    Book: [books, books.authors.books]
  mutations:
    updateAuthor: {input.id: [self]}
    createBook: {}
"""

BOOKS_DATA = [
    'createAuthor(input: {id: "a1", name: "One"}) { id }',
    'createAuthor(input: {id: "a2", name: "Two"}) { id }',
    'createAuthor(input: {id: "a3", name: "Three"}) { id }',
    'createBook(input: {id: "b1", title: "Shared", authorId: "a3"}) { id }',
    'createBook(input: {id: "b2", title: "Co-author\'s"}) { id }',
    'createBook(input: {id: "b3", title: "Other"}) { id }',
    'addWrote(authorId: "a1", bookId: "b1") { cursor }',
    'addWrote(authorId: "a2", bookId: "b1") { cursor }',
    'addWrote(authorId: "a2", bookId: "b2") { cursor }',
    'addWrote(authorId: "a3", bookId: "b3") { cursor }',
    'createChapter(input: {bookId: "b2", number: 1}) { id }',
    'createChapter(input: {bookId: "b3", number: 1}) { id }',
]

# (query, what a1 gets, the FORBIDDEN paths)
BOOKS_READS: list[tuple[str, Any, list[list[Any]]]] = [
    ('{ author(id: "a2") { name } }', {"author": {"name": "Two"}}, []),  # a co-author
    ('{ author(id: "a3") { name } }', {"author": None}, [["author"]]),
    ('{ book(id: "b2") { title } }', {"book": {"title": "Co-author's"}}, []),  # three hops
    ('{ book(id: "b3") { title } }', {"book": None}, [["book"]]),
    (
        '{ book(id: "b2") { chapters { edges { node { number } } } } }',
        {"book": {"chapters": {"edges": [{"node": {"number": 1}}]}}},
        [],
    ),
    ('{ chapter(bookId: "b3", number: 1) { number } }', {"chapter": None}, [["chapter"]]),
    (
        '{ chapter(bookId: "b2", number: 1) { book { id } } }',
        {"chapter": {"book": {"id": "BOOK#b2"}}},
        [],
    ),
    (  # a reference to an author a1 may not read
        '{ book(id: "b1") { title author { id } } }',
        {"book": {"title": "Shared", "author": None}},
        [["book", "author"]],
    ),
    (
        '{ author(id: "a1") { books { edges { node { id authors { edges { node { id } } } } } } }'
        " }",
        {
            "author": {
                "books": {
                    "edges": [
                        {
                            "node": {
                                "id": "BOOK#b1",
                                "authors": {
                                    "edges": [
                                        {"node": {"id": "AUTHOR#a1"}},
                                        {"node": {"id": "AUTHOR#a2"}},
                                    ]
                                },
                            }
                        }
                    ]
                }
            }
        },
        [],
    ),
]


async def test_an_unseen_models_rules(dynamodb: EmbeddedDynamoDB, tmp_path: Any) -> None:
    """Rules over a model written only here: a three-hop path, a child type readable with its
    parent, a reference, a mutation on oneself and one any signed-in author may run."""
    path = tmp_path / "books.yaml"
    path.write_text(GOOD + SERVED_ACCESS)
    engine = engine_for(str(path))
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        await create_table(client, engine.table_name, layout=engine.layout)
        table = Table(client, engine.table_name, layout=engine.layout)
        app = create_app(
            Settings(model=str(path)), table=table, authenticator=Authenticator(secret=SECRET)
        )
        async with asgi(app) as http:
            for mutation in BOOKS_DATA:
                body = await post(http, ADMIN, f"mutation {{ {mutation} }}")
                assert "errors" not in body, (mutation, body)
            for query, data, forbidden in BOOKS_READS:
                body = await post(http, "a1", query)
                assert body["data"] == data, (query, body)
                assert forbidden_paths(body) == forbidden, query
            mine = await post(
                http, "a1", 'mutation { updateAuthor(input: {id: "a1", name: "1"}) { name } }'
            )
            assert mine == {"data": {"updateAuthor": {"name": "1"}}}
            theirs = await post(
                http, "a1", 'mutation { updateAuthor(input: {id: "a2", name: "2"}) { name } }'
            )
            assert theirs["data"] is None and forbidden_paths(theirs) == [["updateAuthor"]]
            new = await post(
                http, "a1", 'mutation { createBook(input: {id: "b9", title: "New"}) { id } }'
            )
            assert new == {"data": {"createBook": {"id": "BOOK#b9"}}}
            deleted = await post(http, "a1", 'mutation { deleteBook(id: "b2") { id } }')
            assert deleted["data"] is None and forbidden_paths(deleted) == [["deleteBook"]]
