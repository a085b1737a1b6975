"""Deletes leave no dangling edge, in one transaction or in several steps, and a deletion
interrupted after its mark is invisible to readers and finished by ``resume_deletions``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from graph import offices, tickets, writes
from graph.keys import NodeKey, NodeType
from graph.model import HAS_MEMBER, MEMBER_OF, SUBSCRIBES_TO
from graph.table import Item, Table
from server.app import create_app
from tests.helpers import gql
from tests.table_state import SerialDynamoDB, demo_table, problems, scan

USER, GROUP, PRODUCT, ORG = NodeType.USER, NodeType.GROUP, NodeType.PRODUCT, NodeType.ORG
ALICE = NodeKey(USER, "alice")


async def busy_demo(table: Table) -> None:
    """Add to the demo data: alice joins amazon and opens three tickets (one closed), bob opens
    one, microsoft gets two offices. Alice is then in two groups, an organization member, with
    tickets and an email."""
    await writes.add_edge(
        table, HAS_MEMBER, NodeKey(ORG, "amazon"), ALICE, {"role": "MEMBER"}, single_source=True
    )
    opened = [await tickets.open_ticket(table, ALICE, f"t{i}") for i in range(3)]
    await tickets.open_ticket(table, NodeKey(USER, "bob"), "bob's")
    await tickets.close_ticket(table, NodeKey.parse(opened[0]["PK"]))
    microsoft = NodeKey(ORG, "microsoft")
    for city in ("Redmond", "Seattle"):
        location = {"country": "US", "state": "WA", "city": city, "zip": "98052"}
        await offices.add_office(table, microsoft, location, None)


def traces_of(items: dict[tuple[str, str], Item], key: str) -> list[tuple[str, str]]:
    """Every item that is, points at, or belongs to ``key``."""
    return [
        k
        for k, item in items.items()
        if key in k or item.get("user") == key or item.get("author") == key
    ]


@pytest.fixture
async def busy(demo: Table) -> AsyncIterator[httpx.AsyncClient]:
    await busy_demo(demo)
    assert problems(await scan(demo)) == []
    transport = httpx.ASGITransport(app=create_app(table=demo))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


@pytest.mark.parametrize(
    ("mutation", "key", "check", "expected"),
    [
        (
            "deleteUser",
            "USER#alice",
            """{ group(id: "group1") { members { totalCount edges { node { id } } } }
                 tickets(status: OPEN) { totalCount edges { node { author { id } } } } }""",
            {
                "group": {"members": {"totalCount": 1, "edges": [{"node": {"id": "USER#bob"}}]}},
                "tickets": {"totalCount": 1, "edges": [{"node": {"author": {"id": "USER#bob"}}}]},
            },
        ),
        (
            "deleteGroup",
            "GROUP#group1",
            '{ user(id: "bob") { groups { totalCount } products { product { id } } } }',
            {"user": {"groups": {"totalCount": 0}, "products": []}},
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
async def test_a_delete_in_one_transaction_leaves_no_dangling_edge(
    busy: httpx.AsyncClient,
    demo: Table,
    mutation: str,
    key: str,
    check: str,
    expected: dict[str, Any],
) -> None:
    before = await scan(demo)
    assert len(traces_of(before, key)) >= 3
    body = await gql(busy, f'mutation {{ {mutation}(id: "{key}") {{ id }} }}')
    assert body["data"] == {mutation: {"id": key}}, body
    operations = body["extensions"]["dynamodb"]["operations"]
    assert operations["TransactWriteItems"] == 1  # it all fits in one transaction
    after = await scan(demo)
    assert problems(after) == []
    assert traces_of(after, key) == []
    # nothing else went: only the node's own items are gone
    assert set(before) - set(after) == set(traces_of(before, key))
    if key == "USER#alice":
        assert not [k for k, i in after.items() if i.get("type") == "TICKET" and key in str(i)]
        assert [i["author"] for i in after.values() if i.get("type") == "TICKET"] == ["USER#bob"]
        assert ("EMAIL#alice@example.com", "EMAIL#alice@example.com") not in after
    read = await gql(busy, check)
    assert read == {"data": expected, "extensions": read["extensions"]}


async def hub(table: Table, node: NodeKey) -> None:
    """Give ``node`` about ten edges of every kind it can have (and offices for an org)."""
    others = [
        NodeKey(t, f"hub{t.value.lower()}{i}") for t in (USER, GROUP, PRODUCT) for i in range(6)
    ]
    await table.batch_write(
        [{"PK": str(k), "SK": str(k), "type": k.type.value, "version": 1} for k in others]
    )
    users, groups, products = others[:6], others[6:12], others[12:]
    if node.type is USER:
        for group in groups:
            await writes.add_edge(table, MEMBER_OF, node, group, {"role": "MEMBER"})
        await writes.add_edge(
            table, HAS_MEMBER, NodeKey(ORG, "amazon"), node, {}, single_source=True
        )
        for i in range(3):
            await tickets.open_ticket(table, node, f"t{i}")
    elif node.type is GROUP:
        for user in users:
            await writes.add_edge(table, MEMBER_OF, user, node, {"role": "MEMBER"})
        for product in products[:4]:
            await writes.add_edge(table, SUBSCRIBES_TO, node, product, {"status": "ACTIVE"})
    else:
        for user in users:
            await writes.add_edge(table, HAS_MEMBER, node, user, {}, single_source=True)
        for city in "ABCD":
            location = {"country": "US", "state": "WA", "city": city, "zip": "1"}
            await offices.add_office(table, node, location, None)


@pytest.mark.parametrize(
    "node", [NodeKey(USER, "hubuser"), NodeKey(GROUP, "hubgroup"), NodeKey(ORG, "huborg")]
)
async def test_a_delete_in_several_steps_leaves_no_dangling_edge(
    demo: Table, node: NodeKey
) -> None:
    fields = {"name": "Hub"} | ({"email": "Hub@Example.com"} if node.type is USER else {})
    await writes.create_node(demo, node, fields)
    await hub(demo, node)
    before = await scan(demo)
    assert len(traces_of(before, str(node))) >= 10
    assert problems(before) == []

    table = demo.for_request()  # a fresh trace
    await writes.delete_node(table, node, max_actions=4)
    after = await scan(demo)
    assert problems(after) == []
    assert traces_of(after, str(node)) == []
    assert set(before) - set(after) == set(traces_of(before, str(node)))
    assert table.trace.operations["TransactWriteItems"] >= 4  # mark, batches, node
    assert await writes.resume_deletions(demo) == 0


async def interrupt(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """hubuser (in six groups, amazon's member, with three tickets and an email): its deletion
    marks it, then crashes before removing anything else."""
    node = NodeKey(USER, "hubuser")
    await writes.create_node(table, node, {"name": "Hub", "email": "hub@example.com"})
    await hub(table, node)
    finish = writes._finish_deletion
    calls = []

    async def crash(*args: Any, **kwargs: Any) -> None:
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("the process died")
        await finish(*args, **kwargs)

    monkeypatch.setattr(writes, "_finish_deletion", crash)
    with pytest.raises(RuntimeError, match="the process died"):
        await writes.delete_node(table, node, max_actions=4)


@pytest.fixture
async def interrupted(
    demo: Table, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx.AsyncClient]:
    """The app over the demo data where hubuser's deletion was interrupted."""
    await interrupt(demo, monkeypatch)
    transport = httpx.ASGITransport(app=create_app(table=demo))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


async def test_a_marked_node_reads_as_gone_but_traversals_stay_whole(
    interrupted: httpx.AsyncClient, demo: Table
) -> None:
    items = await scan(demo)
    node = items["USER#hubuser", "USER#hubuser"]
    assert node["deleting"] is True
    assert node["GSI2PK"] == "DELETING"
    assert ("EMAIL#hub@example.com", "EMAIL#hub@example.com") not in items
    assert len(traces_of(items, "USER#hubuser")) > 10  # its edges are all still there

    body = await gql(
        interrupted,
        """{ user(id: "hubuser") { id } node(id: "USER#hubuser") { id }
             userByEmail(email: "hub@example.com") { id }
             group(id: "hubgroup0") { members { totalCount edges { node { id name } } } }
             organization(id: "amazon") { members { edges { node { id name } } } } }""",
    )
    assert "errors" not in body, body["errors"]
    data = body["data"]
    assert (data["user"], data["node"], data["userByEmail"]) == (None, None, None)
    assert data["group"]["members"] == {
        "totalCount": 1,
        "edges": [{"node": {"id": "USER#hubuser", "name": "Hub"}}],
    }
    assert {"node": {"id": "USER#hubuser", "name": "Hub"}} in data["organization"]["members"][
        "edges"
    ]


async def test_a_marked_node_takes_no_new_edge_or_change(
    interrupted: httpx.AsyncClient, demo: Table
) -> None:
    for mutation in [
        'addGroupMember(userId: "hubuser", groupId: "group1") { role }',
        'updateUser(input: {id: "hubuser", name: "X"}) { id }',
        'openTicket(userId: "hubuser", title: "t") { id }',
        'addOrganizationMember(organizationId: "microsoft", userId: "USER#hubuser") { role }',
    ]:
        before = await scan(demo)
        body = await gql(interrupted, f"mutation {{ {mutation} }}")
        assert [e["extensions"]["code"] for e in body.get("errors", [])] == ["NOT_FOUND"], body
        assert await scan(demo) == before
    # a control: the rest of the graph still takes writes
    body = await gql(
        interrupted, 'mutation { addGroupMember(userId: "bob", groupId: "hubgroup0") { role } }'
    )
    assert body["data"] == {"addGroupMember": {"role": "MEMBER"}}


async def test_resume_deletions_finishes_an_interrupted_delete(
    interrupted: httpx.AsyncClient, demo: Table
) -> None:
    assert await writes.resume_deletions(demo) == 1
    items = await scan(demo)
    assert problems(items) == []
    assert traces_of(items, "USER#hubuser") == []
    assert await writes.resume_deletions(demo) == 0
    body = await gql(
        interrupted, '{ group(id: "hubgroup0") { members { totalCount edges { cursor } } } }'
    )
    assert body["data"]["group"]["members"] == {"totalCount": 0, "edges": []}
    # the email is free again
    body = await gql(
        interrupted,
        'mutation { createUser(input: {id: "hub2", name: "H", email: "HUB@example.com"}) { id } }',
    )
    assert body["data"] == {"createUser": {"id": "USER#hub2"}}


async def test_deleting_a_marked_node_again_finishes_it(
    interrupted: httpx.AsyncClient, demo: Table
) -> None:
    body = await gql(interrupted, 'mutation { deleteUser(id: "hubuser") { id } }')
    assert body["data"] == {"deleteUser": {"id": "USER#hubuser"}}, body
    items = await scan(demo)
    assert problems(items) == []
    assert traces_of(items, "USER#hubuser") == []


@pytest.fixture(scope="module")
def serial_dynamodb() -> Iterator[SerialDynamoDB]:
    with SerialDynamoDB() as server:
        yield server


async def test_two_concurrent_resumes_keep_the_counters_right(
    serial_dynamodb: SerialDynamoDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial_dynamodb.reset()
    async with demo_table(serial_dynamodb.url) as table:
        await interrupt(table, monkeypatch)
        done = await asyncio.gather(writes.resume_deletions(table), writes.resume_deletions(table))
        assert sorted(done) in ([0, 1], [1, 1])
        items = await scan(table)
        assert traces_of(items, "USER#hubuser") == []
        assert problems(items) == []
