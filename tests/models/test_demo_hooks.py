"""The demo model's hooks (models/demo/hooks.py) over moto on the demo data: the answers, the
items written and the DynamoDB costs of today's demo (tests/http/test_tickets_offices.py,
test_mutations.py, test_read_path.py), and the same error codes.

Each hook runs as the engine runs it: in a fresh request context (its own trace), a field hook
after its node's lookup, which starts the hook's ``prefetch`` loads in its own wave."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from graph.errors import EdgewiseError
from graph.items import Codec, Ref
from graph.keys import NodeKey, NodeType
from graph.reads import Branch, Listing, PageKey
from graph.table import Table
from model import load_model
from models.demo import hooks
from server.auth import ADMIN, Principal
from server.engine.context import ModelContext
from tests.helpers import gql
from tests.table_state import problems, scan

CODEC = Codec(load_model("demo"))
BOB = Principal(NodeKey(NodeType.USER, "bob"), False)
ALICE = Principal(NodeKey(NodeType.USER, "alice"), False)


def context(table: Table, principal: Principal = ADMIN) -> ModelContext:
    """One request's context: its own loaders and trace."""
    return ModelContext.for_request(None, table, CODEC, principal)


def node(ctx: ModelContext, type_name: str, raw: str) -> Ref:
    ref = ctx.codec.by_id(ctx.codec.model.types[type_name], raw)
    assert ref is not None
    return ref


async def field(
    ctx: ModelContext, hook: Callable[..., Awaitable[Any]], ref: Ref, **arguments: Any
) -> Any:
    """A field hook as the engine calls it: the lookup reads the node and starts the hook's
    prefetch in one wave; then the hook."""
    for load in hook.prefetch(ctx, ref, **arguments):  # type: ignore[attr-defined]
        load.add_done_callback(lambda f: f.cancelled() or f.exception())
    if await ctx.item(ref) is None:
        return None
    return await hook(ctx, ref, **arguments)


async def code_of(running: Awaitable[Any]) -> str:
    with pytest.raises(EdgewiseError) as raised:
        await running
    return raised.value.code


def cost(ctx: ModelContext) -> tuple[dict[str, int], int]:
    return dict(ctx.table.trace.operations), ctx.table.trace.rounds


def demo_cost(body: dict[str, Any]) -> tuple[dict[str, int], int]:
    trace = body["extensions"]["dynamodb"]
    return trace["operations"], trace["rounds"]


def products_of(answer: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {p["product"].key.pk: [g.key.pk for g in p["via"]] for p in answer}


# ---- products and hasAccess ----------------------------------------------------------------


async def test_products_are_distinct_with_every_group_and_cost_what_the_demo_does(
    http: httpx.AsyncClient, demo: Table
) -> None:
    ctx = context(demo)
    alice = await field(ctx, hooks.products, node(ctx, "User", "alice"))
    assert products_of(alice) == {
        "PRODUCT#prod1": ["GROUP#group1"],
        "PRODUCT#prod2": ["GROUP#group1", "GROUP#group2"],
        "PRODUCT#prod3": ["GROUP#group2"],
    }
    assert all(p["product"].type.name == "Product" for p in alice)
    # wave 1: the user and its groups; wave 2: both groups' subscriptions
    assert cost(ctx) == ({"BatchGetItem": 1, "Query": 3}, 2)
    body = await gql(http, '{ user(id: "alice") { products { product { id } via { id } } } }')
    assert cost(ctx) == demo_cost(body)

    ctx = context(demo)
    bob = await field(ctx, hooks.products, node(ctx, "User", "USER#bob"))
    assert products_of(bob) == {
        "PRODUCT#prod1": ["GROUP#group1"],
        "PRODUCT#prod2": ["GROUP#group1"],
    }


ACCESS = [
    ("alice", "prod3", True),
    ("bob", "prod3", False),
    ("bob", "PRODUCT#prod2", True),
    ("bob", "GROUP#prod2", False),
    ("nobody", "prod1", None),  # no such user: the lookup answers null
]


async def test_has_access(demo: Table) -> None:
    answers = []
    for user, product, _ in ACCESS:
        ctx = context(demo)
        answers.append(
            await field(ctx, hooks.has_access, node(ctx, "User", user), productId=product)
        )
    assert answers == [expected for _, _, expected in ACCESS]


async def test_has_access_costs_one_query_and_one_batch_get_of_edges(
    http: httpx.AsyncClient, demo: Table
) -> None:
    ctx = context(demo)
    assert await field(ctx, hooks.has_access, node(ctx, "User", "alice"), productId="prod3")
    assert cost(ctx) == ({"Query": 1, "BatchGetItem": 2}, 2)
    body = await gql(http, '{ user(id: "alice") { hasAccess(productId: "prod3") } }')
    assert cost(ctx) == demo_cost(body)


async def test_a_malformed_product_id_is_bad_user_input(demo: Table) -> None:
    ctx = context(demo)
    alice = node(ctx, "User", "alice")
    assert await code_of(hooks.has_access(ctx, alice, productId="a b")) == "BAD_USER_INPUT"


async def test_canceled_or_expired_subscriptions_grant_no_access(demo: Table) -> None:
    subscription = {"edge": "SUBSCRIBES_TO", "plan": "x"}
    await demo.batch_write(
        [
            {"PK": "GROUP#group2", "SK": "PRODUCT#prod3", **subscription, "status": "CANCELED"},
            {
                "PK": "GROUP#group1",
                "SK": "PRODUCT#prod1",
                **subscription,
                "status": "ACTIVE",
                "validUntil": "2001-01-01T00:00:00Z",
            },
            {
                "PK": "GROUP#group1",
                "SK": "PRODUCT#prod2",
                **subscription,
                "status": "ACTIVE",
                "validUntil": "2999-01-01T00:00:00Z",
            },
        ]
    )
    ctx = context(demo)
    alice = node(ctx, "User", "alice")
    assert products_of(await field(ctx, hooks.products, alice)) == {
        "PRODUCT#prod2": ["GROUP#group1", "GROUP#group2"]
    }
    assert await field(ctx, hooks.has_access, alice, productId="prod1") is False


# ---- cancelSubscription --------------------------------------------------------------------


async def test_cancel_subscription_returns_the_canceled_edge_and_revokes_access(
    demo: Table,
) -> None:
    before = await scan(demo)
    ctx = context(demo)
    edge = await hooks.cancel_subscription(ctx, groupId="group1", productId="PRODUCT#prod1")
    assert cost(ctx) == ({"UpdateItem": 1}, 1)
    assert (edge.item["plan"], edge.item["status"]) == ("standard", "CANCELED")
    assert (edge.node.type.name, edge.node.key.pk) == ("Product", "PRODUCT#prod1")
    page = await ctx.reads.pages.load(
        PageKey(Listing(None, (Branch("GROUP#group1", "PRODUCT#"),)), 1)
    )
    assert edge.cursor == page.cursors[0]  # the cursor of the group's subscriptions
    after = await scan(demo)
    assert after["GROUP#group1", "PRODUCT#prod1"]["status"] == "CANCELED"
    # the edge stays, so no counter moves
    assert {k for k in before if before[k] != after[k]} == {("GROUP#group1", "PRODUCT#prod1")}
    ctx = context(demo)
    assert await field(ctx, hooks.has_access, node(ctx, "User", "bob"), productId="prod1") is False


# ---- tickets -------------------------------------------------------------------------------


async def test_open_ticket_writes_the_node_the_edge_and_the_sharded_index_keys(
    demo: Table,
) -> None:
    ctx = context(demo)
    ref = await hooks.open_ticket(ctx, userId="USER#alice", title="Printer on fire")
    assert cost(ctx) == ({"TransactWriteItems": 1}, 1)
    key = ref.key.pk
    assert ref.type.name == "Ticket" and ref.key.sk == key
    assert re.fullmatch(r"TICKET#[0-9A-HJKMNP-TV-Z]{26}", key)
    items = await scan(demo)
    item = items[key, key]
    assert ref.item == item  # primed: the answer needs no read
    at = item["createdAt"]
    shard = re.fullmatch(r"TICKET#OPEN#([0-9]+)", item["GSI2PK"])
    assert shard is not None and 0 <= int(shard[1]) < 8
    assert item == {
        "PK": key,
        "SK": key,
        "type": "TICKET",
        "version": 1,
        "createdAt": at,
        "updatedAt": at,
        "title": "Printer on fire",
        "status": "OPEN",
        "author": "USER#alice",
        "n_OPENED_in": 1,
        "GSI2PK": item["GSI2PK"],
        "GSI2SK": f"{at}#{key.removeprefix('TICKET#')}",
    }
    assert items["USER#alice", key] == {"PK": "USER#alice", "SK": key, "edge": "OPENED"}
    assert items["USER#alice", "USER#alice"]["n_OPENED"] == 1
    assert problems(items) == []


async def test_shards_spread_tickets_over_the_eight_partitions(demo: Table) -> None:
    for i in range(12):
        await hooks.open_ticket(context(demo), userId="bob", title=f"t{i}")
    shards = {item["GSI2PK"] for item in (await scan(demo)).values() if item.get("GSI2PK")}
    assert shards <= {f"TICKET#OPEN#{i}" for i in range(8)}
    assert len(shards) >= 3  # a hash of the id, not one hot partition
    assert (await scan(demo))["USER#bob", "USER#bob"]["n_OPENED"] == 12


async def test_close_ticket_moves_it_to_the_closed_partition_of_the_same_item(
    demo: Table,
) -> None:
    opened = await hooks.open_ticket(context(demo), userId="bob", title="Broken")
    before = await scan(demo)
    ctx = context(demo)
    closed = await hooks.close_ticket(ctx, id=opened.key.pk.removeprefix("TICKET#"))
    assert (closed.type.name, closed.key) == ("Ticket", opened.key)
    operations, _ = cost(ctx)
    assert operations.get("TransactWriteItems", 0) <= 1 and operations.get("UpdateItem", 0) <= 1
    assert operations == {"GetItem": 1, "UpdateItem": 1}
    after = await scan(demo)
    assert after.keys() == before.keys()  # the same item, moved on the index
    old, new = before[opened.key.pk, opened.key.pk], after[opened.key.pk, opened.key.pk]
    assert closed.item == new  # primed
    assert new["status"] == "CLOSED" and new["version"] == 2
    assert new["GSI2PK"] == old["GSI2PK"].replace("#OPEN#", "#CLOSED#")
    assert new["GSI2SK"] == old["GSI2SK"]
    assert {k for k in new if new[k] != old.get(k)} == {"status", "GSI2PK", "version", "updatedAt"}

    ctx = context(demo)  # closing a closed ticket: a no-op
    again = await hooks.close_ticket(ctx, id=opened.key.pk)
    assert again.item == new
    assert cost(ctx) == ({"GetItem": 1}, 1)
    assert await scan(demo) == after
    assert problems(after) == []


async def test_users_close_only_their_own_tickets(demo: Table) -> None:
    mine = await hooks.open_ticket(context(demo, BOB), userId="bob", title="Mine")
    assert mine.item is not None and mine.item["author"] == "USER#bob"
    before = await scan(demo)
    assert await code_of(hooks.close_ticket(context(demo, ALICE), id=mine.key.pk)) == "FORBIDDEN"
    assert await scan(demo) == before
    closed = await hooks.close_ticket(context(demo, BOB), id=mine.key.pk)
    assert closed.item is not None and closed.item["status"] == "CLOSED"


# ---- offices -------------------------------------------------------------------------------

LOCATIONS = [
    ("US", "WA", "Redmond", "98052"),
    ("US", "WA", "Seattle", "98101"),
    ("USA", "WA", "Redmond", "98052"),
]


async def add(table: Table, org: str, i: int, principal: Principal = ADMIN) -> Any:
    country, state, city, zip_ = LOCATIONS[i]
    return await hooks.add_office(
        context(table, principal),
        organizationId=org,
        country=country,
        state=state,
        city=city,
        zip=zip_,
        address=f"{i} Main St",
    )


async def test_add_office_stores_it_under_the_composite_key_and_counts_it(demo: Table) -> None:
    ctx = context(demo)
    edge = await hooks.add_office(
        ctx, organizationId="ORG#microsoft", country="US", state="WA", city="Redmond", zip="98052"
    )
    assert cost(ctx) == ({"TransactWriteItems": 1}, 1)
    office_id = edge.item["id"]
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", office_id)
    key = ("ORG#microsoft", f"OFFICE#US#WA#Redmond#98052#{office_id}")
    assert (edge.node.type.name, edge.node.key.pk, edge.node.key.sk) == ("Office", *key)
    items = await scan(demo)
    assert (
        items[key]
        == edge.item
        == {
            "PK": key[0],
            "SK": key[1],
            "type": "OFFICE",
            "id": office_id,
            "country": "US",
            "state": "WA",
            "city": "Redmond",
            "zip": "98052",
        }
    )
    # the cursor continues the organization's offices right after this one
    page = await context(demo).reads.pages.load(
        PageKey(Listing(None, (Branch("ORG#microsoft", "OFFICE#"),)), 1)
    )
    assert edge.cursor == page.cursors[0]
    for i in range(len(LOCATIONS)):
        await add(demo, "microsoft", i)
    await add(demo, "amazon", 1)
    items = await scan(demo)
    assert items["ORG#microsoft", "ORG#microsoft"]["n_OFFICE"] == 1 + len(LOCATIONS)
    assert items["ORG#amazon", "ORG#amazon"]["n_OFFICE"] == 1
    assert {i["address"] for k, i in items.items() if k[1].startswith("OFFICE#US#WA#Seattle")} == {
        "1 Main St"
    }
    assert problems(items) == []


async def test_remove_office_is_true_then_false_and_uncounts(demo: Table) -> None:
    offices = [await add(demo, "microsoft", i) for i in range(len(LOCATIONS))]
    office = offices[1].item["id"]
    before = await scan(demo)
    # another organization's office is not there
    ctx = context(demo)
    assert await hooks.remove_office(ctx, organizationId="amazon", officeId=office) is False
    assert await scan(demo) == before
    ctx = context(demo)
    assert await hooks.remove_office(ctx, organizationId="ORG#microsoft", officeId=office) is True
    assert cost(ctx) == ({"Query": 1, "TransactWriteItems": 1}, 2)
    after = await scan(demo)
    assert set(before) - set(after) == {("ORG#microsoft", f"OFFICE#US#WA#Seattle#98101#{office}")}
    assert after["ORG#microsoft", "ORG#microsoft"]["n_OFFICE"] == len(LOCATIONS) - 1
    assert problems(after) == []
    ctx = context(demo)
    assert await hooks.remove_office(ctx, organizationId="microsoft", officeId=office) is False
    assert await hooks.remove_office(ctx, organizationId="noorg", officeId="x") is False
    assert await scan(demo) == after


# ---- failures ------------------------------------------------------------------------------

Call = Callable[[ModelContext], Awaitable[Any]]


def call(hook: Callable[..., Awaitable[Any]], **arguments: Any) -> Call:
    return lambda ctx: hook(ctx, **arguments)


def office(org: str, country: str = "US", state: str = "WA", city: str = "S") -> Call:
    return call(
        hooks.add_office, organizationId=org, country=country, state=state, city=city, zip="1"
    )


FAILURES: dict[str, list[tuple[Principal, Call, str]]] = {
    "subscription": [
        (ADMIN, call(hooks.cancel_subscription, groupId="group1", productId="prod3"), "NOT_FOUND"),
        (ADMIN, call(hooks.cancel_subscription, groupId="nogroup", productId="prod1"), "NOT_FOUND"),
        (ADMIN, call(hooks.cancel_subscription, groupId="group1", productId="USER#prod1"),
         "NOT_FOUND"),
        (ADMIN, call(hooks.cancel_subscription, groupId="group 1", productId="prod1"),
         "BAD_USER_INPUT"),
        (BOB, call(hooks.cancel_subscription, groupId="group1", productId="prod1"), "FORBIDDEN"),
    ],
    "tickets": [
        (ADMIN, call(hooks.open_ticket, userId="nobody", title="t"), "NOT_FOUND"),
        (ADMIN, call(hooks.open_ticket, userId="GROUP#group1", title="t"), "NOT_FOUND"),
        (ADMIN, call(hooks.open_ticket, userId="alice", title=""), "BAD_USER_INPUT"),
        (ADMIN, call(hooks.open_ticket, userId="alice", title="   "), "BAD_USER_INPUT"),
        (ADMIN, call(hooks.open_ticket, userId="alice", title="x" * 501), "BAD_USER_INPUT"),
        (ADMIN, call(hooks.open_ticket, userId="a b", title="t"), "BAD_USER_INPUT"),
        (BOB, call(hooks.open_ticket, userId="alice", title="On her behalf"), "FORBIDDEN"),
        (ADMIN, call(hooks.close_ticket, id="noticket"), "NOT_FOUND"),
        (ADMIN, call(hooks.close_ticket, id="USER#alice"), "NOT_FOUND"),
        (ADMIN, call(hooks.close_ticket, id="no ticket"), "BAD_USER_INPUT"),
    ],
    "offices": [
        (ADMIN, office("noorg"), "NOT_FOUND"),
        (ADMIN, office("GROUP#group1"), "NOT_FOUND"),
        (ADMIN, office("amazon", country="U#S"), "BAD_USER_INPUT"),
        (ADMIN, office("amazon", state=""), "BAD_USER_INPUT"),
        (ADMIN, office("amazon", city="S" * 65), "BAD_USER_INPUT"),
        (ADMIN, office("a b"), "BAD_USER_INPUT"),
        (BOB, office("microsoft"), "FORBIDDEN"),
        (ADMIN, call(hooks.remove_office, organizationId="a b", officeId="x"), "BAD_USER_INPUT"),
        (ADMIN, call(hooks.remove_office, organizationId="GROUP#group1", officeId="x"),
         "NOT_FOUND"),
        (BOB, call(hooks.remove_office, organizationId="microsoft", officeId="x"), "FORBIDDEN"),
    ],
}  # fmt: skip


@pytest.mark.parametrize("theme", FAILURES)
async def test_a_failed_hook_has_its_code_and_leaves_the_table_exactly_as_it_was(
    demo: Table, theme: str
) -> None:
    before = await scan(demo)
    got = []
    for principal, run, _ in FAILURES[theme]:
        try:
            await run(context(demo, principal))
            got.append("no error")
        except EdgewiseError as exc:
            got.append(exc.code)
    assert got == [code for _, _, code in FAILURES[theme]]
    assert await scan(demo) == before
