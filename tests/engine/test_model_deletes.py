"""Deletes in the model-driven engine, serving the demo's model file (whose ``deletions``
setting marks large deletes): a delete that fits one transaction is one; a larger one marks its
node, removes its edges in steps and leaves no dangling edge; a delete interrupted after its
mark is invisible to readers and finished at the next start; an edge added concurrently is
refused or deleted, never left dangling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.errors import EdgewiseError
from graph.items import Ref
from graph.sample_items import build_items
from graph.table import Item, Table
from graph.writes import deletes
from graph.writes.writer import Writer
from model import ModelError, load_model
from server.engine import Engine, engine_for
from server.errors import code_of
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT, gql
from tests.table_state import SerialDynamoDB, demo_table, problems, scan

MODEL = str(resources.files("models") / "demo" / "model.yaml")
AT = "2026-01-15T09:00:00.000Z"
Items = dict[tuple[str, str], Item]


@pytest.fixture(scope="module")
def engine() -> Engine:
    engine = engine_for(MODEL)
    assert engine.layout == DEMO_LAYOUT  # the demo's table, read through the model
    return engine


def writer_for(table: Table, engine: Engine) -> Writer:
    assert engine.codec is not None
    return Writer(table, engine.codec)


def ref(writer: Writer, type_name: str, node_id: str) -> Ref:
    found = writer.codec.by_id(writer.model.types[type_name], node_id)
    assert found is not None
    return found


def traces_of(items: Items, key: str) -> list[tuple[str, str]]:
    """Every item that is, points at, belongs to or claims for ``key`` (tickets belong to their
    author: OPENED `owns` them)."""
    return [
        k
        for k, item in items.items()
        if key in k or key in (item.get("owner"), item.get("user"), item.get("author"))
    ]


async def busy_demo(writer: Writer) -> None:
    """Add to the demo data: alice joins amazon and opens three tickets, bob opens one,
    microsoft gets two offices."""
    await writer.add_edge(
        writer.model.edges["HAS_MEMBER"],
        ref(writer, "Organization", "amazon"),
        ref(writer, "User", "alice"),
        {"role": "MEMBER"},
    )
    for user, ticket in [("alice", "t0"), ("alice", "t1"), ("alice", "t2"), ("bob", "tb")]:
        await open_ticket(writer, user, ticket)
    for city in ("Redmond", "Seattle"):
        await add_office(writer, "microsoft", city)


async def open_ticket(writer: Writer, user: str, ticket: str) -> None:
    ticket_type = writer.model.types["Ticket"]
    fields = {"id": ticket, "title": ticket, "status": "OPEN", "authorId": f"USER#{user}"}
    await writer.create(ticket_type, fields)
    await writer.add_edge(
        writer.model.edges["OPENED"], ref(writer, "User", user), ref(writer, "Ticket", ticket), {}
    )


async def add_office(writer: Writer, org: str, city: str) -> None:
    office = {"organizationId": org, "country": "US", "state": "WA", "city": city, "zip": "1"}
    await writer.create(writer.model.types["Office"], office | {"id": city.lower()})


def app_client(table: Table) -> httpx.AsyncClient:
    app = create_app(Settings(model=MODEL), table=table)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://edgewise")


@pytest.fixture
async def busy(demo: Table, engine: Engine) -> AsyncIterator[httpx.AsyncClient]:
    writer = writer_for(demo, engine)
    await busy_demo(writer)
    assert problems(await scan(demo)) == []
    async with app_client(demo) as client:
        yield client


@pytest.mark.parametrize(
    ("mutation", "key", "check", "expected"),
    [
        (
            "deleteUser",
            "USER#alice",
            """{ group(id: "group1") { members { totalCount edges { node { id } } } }
                 userByEmail(email: "alice@example.com") { id } }""",
            {
                "group": {"members": {"totalCount": 1, "edges": [{"node": {"id": "USER#bob"}}]}},
                "userByEmail": None,
            },
        ),
        (
            "deleteGroup",
            "GROUP#group1",
            '{ user(id: "bob") { groups { totalCount edges { cursor } } } }',
            {"user": {"groups": {"totalCount": 0, "edges": []}}},
        ),
        (
            "deleteProduct",
            "PRODUCT#prod2",
            '{ group(id: "group1") { subscriptions { totalCount edges { node { id } } } } }',
            {
                "group": {
                    "subscriptions": {"totalCount": 1, "edges": [{"node": {"id": "PRODUCT#prod1"}}]}
                }
            },
        ),
        (
            "deleteOrganization",
            "ORG#microsoft",
            '{ user(id: "billgates") { organization { id } } }',
            {"user": {"organization": None}},
        ),
    ],
)
async def test_a_delete_that_fits_is_one_transaction_and_leaves_no_dangling_edge(
    busy: httpx.AsyncClient,
    demo: Table,
    engine: Engine,
    mutation: str,
    key: str,
    check: str,
    expected: dict[str, Any],
) -> None:
    assert engine.codec is not None
    before = await scan(demo)
    assert len(traces_of(before, key)) >= 3
    body = await gql(busy, f'mutation {{ {mutation}(id: "{key}") {{ id }} }}')
    assert body["data"] == {mutation: {"id": key}}, body
    operations = body["extensions"]["dynamodb"]["operations"]
    writes = {op: n for op, n in operations.items() if op not in ("GetItem", "Query")}
    assert writes == {"TransactWriteItems": 1}  # no mark: it all fits one transaction
    after = await scan(demo)
    assert problems(after) == []
    assert traces_of(after, key) == []
    assert set(before) - set(after) == set(traces_of(before, key))  # nothing else went
    read = await gql(busy, check)
    assert read == {"data": expected, "extensions": read["extensions"]}


def hub_sample(type_name: str, node_id: str) -> dict[str, list[dict[str, Any]]]:
    """``node_id`` with about ten edges of every kind it can have (and offices for an org),
    as sample data."""
    hub: dict[str, Any] = {"type": type_name, "id": node_id, "name": "Hub"}
    if type_name == "User":
        hub["email"] = "Hub@Example.com"
    nodes = [hub] + [
        {"type": t, "id": f"hub{t.lower()}{i}", "name": "N"}
        for t in ("User", "Group", "Product")
        for i in range(6)
    ]
    member = {"role": "MEMBER"}
    if type_name == "User":
        nodes.append({"type": "Organization", "id": "hubamazon", "name": "Hub Amazon"})
        nodes += [
            {
                "type": "Ticket",
                "id": f"ht{i}",
                "title": "t",
                "status": "OPEN",
                "authorId": f"USER#{node_id}",
            }
            for i in "012"
        ]
        edges = [
            {"label": "MEMBER_OF", "from": node_id, "to": f"hubgroup{i}", **member}
            for i in range(6)
        ]
        edges.append({"label": "HAS_MEMBER", "from": "hubamazon", "to": node_id, **member})
        edges += [{"label": "OPENED", "from": node_id, "to": f"ht{i}"} for i in "012"]
    elif type_name == "Group":
        edges = [
            {"label": "MEMBER_OF", "from": f"hubuser{i}", "to": node_id, **member} for i in range(6)
        ]
        edges += [
            {"label": "SUBSCRIBES_TO", "from": node_id, "to": f"hubproduct{i}", "plan": "p"}
            | {"status": "ACTIVE"}
            for i in range(4)
        ]
    else:
        edges = [
            {"label": "HAS_MEMBER", "from": node_id, "to": f"hubuser{i}", **member}
            for i in range(6)
        ]
        nodes += [
            {"type": "Office", "organizationId": node_id, "id": city.lower(), "city": city}
            | {"country": "US", "state": "WA", "zip": "1"}
            for city in "ABCD"
        ]
    return {"nodes": nodes, "edges": edges}


async def create_hub(writer: Writer, type_name: str, node_id: str) -> Ref:
    """Write the hub's items in one go (built as the mutations build them, counters included)."""
    await writer.table.batch_write(build_items(writer, hub_sample(type_name, node_id), AT))
    return ref(writer, type_name, node_id)


@pytest.mark.parametrize(
    ("type_name", "node_id"),
    [("User", "hubuser"), ("Group", "hubgroup"), ("Organization", "huborg")],
)
async def test_a_large_delete_in_several_steps_leaves_no_dangling_edge(
    demo: Table, engine: Engine, type_name: str, node_id: str
) -> None:
    writer = writer_for(demo, engine)
    node = await create_hub(writer, type_name, node_id)
    key = node.key.pk
    before = await scan(demo)
    assert len(traces_of(before, key)) >= 10
    assert problems(before) == []

    table = demo.for_request()  # a fresh trace
    await deletes.delete_node(writer_for(table, engine), node.type, node.key, max_actions=4)
    after = await scan(demo)
    assert problems(after) == []
    assert traces_of(after, key) == []
    assert set(before) - set(after) == set(traces_of(before, key))
    operations = table.trace.operations
    # the mark (an UpdateItem, or a transaction with the email claim's delete), at least three
    # batches of at most four actions, and the node's own delete
    writes = sum(operations[op] for op in ("TransactWriteItems", "UpdateItem", "DeleteItem"))
    assert writes >= 5 and operations["UpdateItem"] <= 1
    assert operations["PutItem"] + operations["BatchWriteItem"] == 0
    assert await deletes.resume_deletions(writer) == 0


async def interrupt(writer: Writer, monkeypatch: pytest.MonkeyPatch) -> Ref:
    """hubuser (in six groups, hubamazon's member, with three tickets and an email): its delete
    marks it, then the process dies before removing anything else."""
    node = await create_hub(writer, "User", "hubuser")
    finish = deletes.finish_deletion
    calls = []

    async def crash(*args: Any, **kwargs: Any) -> None:
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("the process died")
        await finish(*args, **kwargs)

    monkeypatch.setattr(deletes, "finish_deletion", crash)
    with pytest.raises(RuntimeError, match="the process died"):
        await deletes.delete_node(writer, node.type, node.key, max_actions=4)
    return node


@pytest.fixture
async def interrupted(
    demo: Table, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx.AsyncClient]:
    """The engine serving the demo model over a table where hubuser's delete was interrupted."""
    await interrupt(writer_for(demo, engine), monkeypatch)
    async with app_client(demo) as client:
        yield client


async def test_a_marked_node_reads_as_gone_but_traversals_stay_whole(
    interrupted: httpx.AsyncClient, demo: Table
) -> None:
    items = await scan(demo)
    node = items["USER#hubuser", "USER#hubuser"]
    assert (node["deleting"], node["GSI2PK"], node["GSI2SK"]) == (True, "DELETING", "USER#hubuser")
    assert ("EMAIL#hub@example.com", "EMAIL#hub@example.com") not in items  # freed at the mark
    assert len(traces_of(items, "USER#hubuser")) > 10  # its edges are all still there

    body = await gql(
        interrupted,
        """{ user(id: "hubuser") { id } node(id: "USER#hubuser") { id }
             nodes(ids: ["USER#hubuser", "USER#bob"]) { id }
             userByEmail(email: "hub@example.com") { id }
             group(id: "hubgroup0") { members { totalCount edges { node { id name } } } }
             organization(id: "hubamazon") { members { edges { node { id name } } } } }""",
    )
    assert "errors" not in body, body["errors"]
    data = body["data"]
    assert (data["user"], data["node"], data["userByEmail"]) == (None, None, None)
    assert data["nodes"] == [None, {"id": "USER#bob"}]
    assert data["group"]["members"] == {
        "totalCount": 1,
        "edges": [{"node": {"id": "USER#hubuser", "name": "Hub"}}],
    }
    assert {"node": {"id": "USER#hubuser", "name": "Hub"}} in data["organization"]["members"][
        "edges"
    ]


async def test_a_marked_node_takes_no_new_edge_or_change(
    interrupted: httpx.AsyncClient, demo: Table, engine: Engine
) -> None:
    writer = writer_for(demo, engine)
    await open_ticket(writer, "bob", "t9")
    before = await scan(demo)
    with pytest.raises(EdgewiseError) as raised:  # an edge type without a generated mutation
        await writer.add_edge(
            writer.model.edges["OPENED"],
            ref(writer, "User", "hubuser"),
            ref(writer, "Ticket", "t9"),
            {},
        )
    assert code_of(raised.value) == "NOT_FOUND"
    assert await scan(demo) == before
    for mutation in [
        'addGroupMember(userId: "hubuser", groupId: "group1") { role }',
        'updateUser(input: {id: "hubuser", name: "X"}) { id }',
        'addOrganizationMember(organizationId: "microsoft", userId: "USER#hubuser") { role }',
    ]:
        before = await scan(demo)
        body = await gql(interrupted, f"mutation {{ {mutation} }}")
        assert [e["extensions"]["code"] for e in body.get("errors", [])] == ["NOT_FOUND"], body
        assert await scan(demo) == before
    # a control: the rest of the graph still takes writes
    body = await gql(
        interrupted,
        'mutation { addGroupMember(userId: "bob", groupId: "hubgroup0") { role } }',
    )
    assert body["data"] == {"addGroupMember": {"role": "MEMBER"}}


async def test_a_marked_child_is_left_out_of_listings_and_counts(
    busy: httpx.AsyncClient, demo: Table
) -> None:
    """Node listings (children, access patterns) filter marked items out in DynamoDB, so a
    filtered count agrees with the page."""
    await demo.client.update_item(
        dict(
            TableName=demo.name,
            Key={"PK": {"S": "ORG#microsoft"}, "SK": {"S": "OFFICE#US#WA#Redmond#1#redmond"}},
            UpdateExpression="SET deleting = :t",
            ExpressionAttributeValues={":t": {"BOOL": True}},
        )
    )
    body = await gql(
        busy,
        """{ organization(id: "microsoft") {
               offices(country: "US") { totalCount edges { node { city } } } } }""",
    )
    assert body["data"] == {
        "organization": {"offices": {"totalCount": 1, "edges": [{"node": {"city": "Seattle"}}]}}
    }, body


async def test_the_server_start_finishes_an_interrupted_delete(
    interrupted: httpx.AsyncClient, demo: Table, engine: Engine, dynamodb: EmbeddedDynamoDB
) -> None:
    app = create_app(Settings(model=MODEL, dynamodb=dynamodb.url, table=demo.name))
    async with app.router.lifespan_context(app):
        started = asyncio.all_tasks() - {asyncio.current_task()}
        await asyncio.wait(started, timeout=30)  # the start-up's resume runs in the background
        items = await scan(demo)
    assert engine.codec is not None
    assert problems(items) == []
    assert traces_of(items, "USER#hubuser") == []
    assert await deletes.resume_deletions(writer_for(demo, engine)) == 0
    body = await gql(
        interrupted, '{ group(id: "hubgroup0") { members { totalCount edges { cursor } } } }'
    )
    assert body["data"]["group"]["members"] == {"totalCount": 0, "edges": []}
    body = await gql(  # the email is free again
        interrupted,
        'mutation { createUser(input: {id: "hub2", name: "H", email: "HUB@example.com"}) { id } }',
    )
    assert body["data"] == {"createUser": {"id": "USER#hub2"}}


async def test_deleting_a_marked_node_again_finishes_it(
    interrupted: httpx.AsyncClient, demo: Table, engine: Engine
) -> None:
    body = await gql(interrupted, 'mutation { deleteUser(id: "hubuser") { id } }')
    assert body["data"] == {"deleteUser": {"id": "USER#hubuser"}}, body
    items = await scan(demo)
    assert engine.codec is not None
    assert problems(items) == []
    assert traces_of(items, "USER#hubuser") == []


async def test_two_concurrent_resumes_keep_the_counters_right(
    serial_dynamodb: SerialDynamoDB, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial_dynamodb.reset()
    async with demo_table(serial_dynamodb.url) as table:
        writer = writer_for(table, engine)
        await interrupt(writer, monkeypatch)
        done = await asyncio.gather(
            deletes.resume_deletions(writer), deletes.resume_deletions(writer_for(table, engine))
        )
        assert sorted(done) in ([0, 1], [1, 1])
        items = await scan(table)
        assert traces_of(items, "USER#hubuser") == []
        assert problems(items) == []


async def join(writer: Writer, node: Ref, group: str) -> str:
    """Add ``node`` to a new group: ``added`` or the error code."""
    await writer.table.batch_write(
        [writer.node_item(writer.model.types["Group"], {"id": group, "name": "L"}, AT)]
    )
    try:
        await writer.add_edge(
            writer.model.edges["MEMBER_OF"], node, ref(writer, "Group", group), {"role": "MEMBER"}
        )
    except EdgewiseError as exc:
        return code_of(exc)
    return "added"


async def test_an_edge_added_after_the_mark_is_refused(
    demo: Table, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = writer_for(demo, engine)
    node = await create_hub(writer, "User", "hubuser")
    finish = deletes.finish_deletion
    outcomes = []

    async def join_then_finish(*args: Any, **kwargs: Any) -> None:
        outcomes.append(await join(writer, node, "late"))
        await finish(*args, **kwargs)

    monkeypatch.setattr(deletes, "finish_deletion", join_then_finish)
    await deletes.delete_node(writer, node.type, node.key, max_actions=4)
    assert outcomes == ["NOT_FOUND"]
    items = await scan(demo)
    assert traces_of(items, "USER#hubuser") == []
    assert problems(items) == []


@pytest.mark.parametrize(("max_actions", "reads"), [(100, 2), (4, 1)])
async def test_an_edge_added_after_the_delete_read_the_edges_is_deleted_too(
    demo: Table, engine: Engine, max_actions: int, reads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one transaction (100), the node's counter changed, so the transaction's condition
    fails and the delete reads the node and its edges again (then marks it: edges come and go).
    In steps (4), the mark does not depend on the edges: the steps after it read them afresh."""
    table = demo.for_request()
    writer = writer_for(table, engine)
    node = await create_hub(writer, "User", "hubuser")
    related = deletes.related
    outcomes = []

    async def related_then_join(*args: Any) -> Any:
        found = await related(*args)
        if not outcomes:
            outcomes.append(await join(writer, node, "late"))
        return found

    monkeypatch.setattr(deletes, "related", related_then_join)
    await deletes.delete_node(writer, node.type, node.key, max_actions=max_actions)
    assert outcomes == ["added"]
    assert table.trace.operations["GetItem"] == reads
    items = await scan(demo)
    assert traces_of(items, "USER#hubuser") == []
    assert problems(items) == []


async def test_edges_added_while_a_delete_runs_are_refused_or_deleted(
    serial_dynamodb: SerialDynamoDB, engine: Engine
) -> None:
    """Writers racing a delete in steps, on a server with DynamoDB's isolation: each add fails
    with NOT_FOUND or its edge goes with the node, never dangling."""
    serial_dynamodb.reset()
    async with demo_table(serial_dynamodb.url) as table:
        writer = writer_for(table, engine)
        node = await create_hub(writer, "User", "hubuser")
        deleting = asyncio.ensure_future(
            deletes.delete_node(writer, node.type, node.key, max_actions=4)
        )
        outcomes = []
        while not deleting.done():
            outcomes.append(await join(writer_for(table, engine), node, f"late{len(outcomes)}"))
        await deleting
        assert set(outcomes) <= {"added", "NOT_FOUND"}, outcomes
        items = await scan(table)
        assert traces_of(items, "USER#hubuser") == []
        assert problems(items) == []


SMALL = """\
table:
  name: t
  indexes:
    inverted: {partitionKey: SK, sortKey: PK}
    gsi2: {partitionKey: GSI2PK, sortKey: GSI2SK}
  deletions: DELETIONS
types:
  User:
    key: "USER#{id}"
    fields: {name: String!}
"""


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "{index: gsi3, partition: DELETING}",
            "table.deletions.index (line 6): unknown index 'gsi3'; did you mean 'gsi2'?",
        ),
        (
            "{index: inverted}",
            "table.deletions.index (line 6): index inverted is keyed by the table's own key "
            "attributes, which the mark cannot change; name an index with key attributes of its "
            "own, e.g. `gsi2: {partitionKey: GSI2PK, sortKey: GSI2SK}`",
        ),
        (
            "{index: gsi2, attribute: name}",
            "table.deletions.attribute (line 6): User.name is stored in 'name'; name another "
            "attribute for the mark, e.g. `deleting`",
        ),
        ("{partition: DELETING}", "table.deletions.index (line 6): missing required key 'index'"),
    ],
)
def test_a_wrong_deletions_setting_is_one_line_naming_what_to_write(
    tmp_path: Path, setting: str, message: str
) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(SMALL.replace("DELETIONS", setting))
    with pytest.raises(ModelError) as raised:
        load_model(str(path))
    assert [line for line in raised.value.lines if line.startswith(message)], raised.value.lines


def test_the_deletions_setting_has_defaults_and_is_optional(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(SMALL.replace("DELETIONS", "{index: gsi2}"))
    deletions = load_model(str(path)).deletions
    assert deletions is not None
    assert (deletions.index.name, deletions.partition, deletions.attribute) == (
        "gsi2",
        "DELETING",
        "deleting",
    )
    path.write_text(SMALL.replace("  deletions: DELETIONS\n", ""))
    assert load_model(str(path)).deletions is None
