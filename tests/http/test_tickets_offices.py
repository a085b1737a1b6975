"""Tickets on the sharded gsi2 index and offices under a composite sort key, over ASGI."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import Any

import httpx
import pytest

from graph.table import Table
from tests.helpers import gql
from tests.table_state import problems, scan

OPEN = """mutation($u: ID!, $t: String!) { openTicket(userId: $u, title: $t) {
    __typename id title status createdAt author { id name } } }"""
CLOSE = "mutation($id: ID!) { closeTicket(id: $id) { id title status createdAt author { id } } }"
LIST = """query($s: TicketStatus!, $first: Int, $after: String, $a: DateTime, $b: DateTime) {
    tickets(status: $s, first: $first, after: $after, createdAfter: $a, createdBefore: $b) {
        pageInfo { hasNextPage endCursor } edges { cursor node { id createdAt } } } }"""
COUNT = """query($s: TicketStatus!, $a: DateTime, $b: DateTime) {
    tickets(status: $s, createdAfter: $a, createdBefore: $b) { totalCount } }"""


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


def ok(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body["errors"]
    data: dict[str, Any] = body["data"]
    return data


async def open_ticket(http: httpx.AsyncClient, user: str, title: str) -> dict[str, Any]:
    ticket: dict[str, Any] = ok(await gql(http, OPEN, {"u": user, "t": title}))["openTicket"]
    return ticket


async def list_all(
    http: httpx.AsyncClient, status: str, first: int, **bounds: str
) -> tuple[list[str], int]:
    """Every ticket id of a listing, page by page; and the listing's totalCount."""
    ids: list[str] = []
    after = None
    for _ in range(50):
        variables = {"s": status, "first": first, "after": after, **bounds}
        page = ok(await gql(http, LIST, variables))["tickets"]
        ids += [e["node"]["id"] for e in page["edges"]]
        assert len(page["edges"]) <= first
        if not page["pageInfo"]["hasNextPage"]:
            total = ok(await gql(http, COUNT, {"s": status, **bounds}))["tickets"]["totalCount"]
            return ids, total
        assert len(page["edges"]) == first
        after = page["pageInfo"]["endCursor"]
    raise AssertionError("the listing does not end")


# ---- tickets -----------------------------------------------------------------------------------


async def test_open_ticket_writes_the_node_the_edge_and_the_sharded_index_keys(
    http: httpx.AsyncClient, demo: Table
) -> None:
    body = await gql(http, OPEN, {"u": "USER#alice", "t": "Printer on fire"})
    ticket = ok(body)["openTicket"]
    assert body["extensions"]["dynamodb"]["operations"].get("TransactWriteItems") == 1
    assert ticket["__typename"] == "Ticket"
    assert (ticket["title"], ticket["status"]) == ("Printer on fire", "OPEN")
    assert ticket["author"] == {"id": "USER#alice", "name": "Alice"}
    key = ticket["id"]
    assert re.fullmatch(r"TICKET#[0-9A-HJKMNP-TV-Z]{26}", key)
    items = await scan(demo)
    item = items[key, key]
    assert (item["type"], item["status"], item["author"]) == ("TICKET", "OPEN", "USER#alice")
    shard = re.fullmatch(r"TICKET#OPEN#([0-9]+)", item["GSI2PK"])
    assert shard is not None and 0 <= int(shard[1]) < 8
    assert item["GSI2SK"] == f"{item['createdAt']}#{key.removeprefix('TICKET#')}"
    assert ticket["createdAt"].startswith(item["createdAt"][:19])
    assert items["USER#alice", key]["edge"] == "OPENED"
    assert items["USER#alice", "USER#alice"]["n_OPENED"] == 1
    assert problems(items) == []
    read = await gql(
        http, "query($id: ID!) { ticket(id: $id) { title author { name } } }", {"id": key}
    )
    assert read["data"]["ticket"] == {"title": "Printer on fire", "author": {"name": "Alice"}}


async def test_shards_spread_tickets_over_the_eight_partitions(
    http: httpx.AsyncClient, demo: Table
) -> None:
    for i in range(12):
        await open_ticket(http, "bob", f"t{i}")
    shards = {
        item["GSI2PK"] for item in (await scan(demo)).values() if item.get("type") == "TICKET"
    }
    assert shards <= {f"TICKET#OPEN#{i}" for i in range(8)}
    assert len(shards) >= 3  # a hash of the id, not one hot partition


async def test_close_ticket_moves_it_to_the_closed_partition_of_the_same_item(
    http: httpx.AsyncClient, demo: Table
) -> None:
    ticket = await open_ticket(http, "bob", "Broken")
    before = await scan(demo)
    body = await gql(http, CLOSE, {"id": ticket["id"].removeprefix("TICKET#")})
    closed = ok(body)["closeTicket"]
    assert closed == {
        "id": ticket["id"],
        "title": "Broken",
        "status": "CLOSED",
        "createdAt": ticket["createdAt"],
        "author": {"id": "USER#bob"},
    }
    assert body["extensions"]["dynamodb"]["operations"].get("TransactWriteItems", 0) <= 1
    assert body["extensions"]["dynamodb"]["operations"].get("UpdateItem", 0) <= 1
    after = await scan(demo)
    assert after.keys() == before.keys()  # the same item, moved on the index
    old, new = before[ticket["id"], ticket["id"]], after[ticket["id"], ticket["id"]]
    assert new["status"] == "CLOSED"
    assert new["GSI2PK"] == old["GSI2PK"].replace("#OPEN#", "#CLOSED#")
    assert new["GSI2SK"] == old["GSI2SK"]
    assert await list_all(http, "OPEN", 5) == ([], 0)
    assert await list_all(http, "CLOSED", 5) == ([ticket["id"]], 1)

    again = await gql(http, CLOSE, {"id": ticket["id"]})  # closing a closed ticket: a no-op
    assert ok(again)["closeTicket"] == closed
    assert await scan(demo) == after
    assert problems(after) == []


@pytest.fixture
async def thirty(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    """30 OPEN tickets over three users (oldest first, a few milliseconds apart), and 5 more
    CLOSED."""
    opened = []
    for i in range(35):
        user = ("alice", "bob", "jeffbezos")[i % 3]
        ticket = await open_ticket(http, user, f"t{i}")
        opened.append(
            {"id": ticket["id"], "createdAt": ticket["createdAt"], "author": f"USER#{user}"}
        )
        await asyncio.sleep(0.002)
    for ticket in opened[::7]:
        ok(await gql(http, CLOSE, {"id": ticket["id"]}))
    return [t for i, t in enumerate(opened) if i % 7]


def newest_first(tickets: list[dict[str, Any]]) -> list[str]:
    return [t["id"] for t in sorted(tickets, key=lambda t: (t["createdAt"], t["id"]), reverse=True)]


async def test_tickets_page_through_every_shard_newest_first_and_narrow_by_time(
    http: httpx.AsyncClient, thirty: list[dict[str, Any]]
) -> None:
    ids, total = await list_all(http, "OPEN", 7)
    assert len(ids) == len(set(ids)) == total == 30
    assert ids == newest_first(thirty)
    closed, total = await list_all(http, "CLOSED", 3)
    assert len(closed) == total == 5 and not set(closed) & set(ids)
    whole = ok(await gql(http, LIST, {"s": "OPEN", "first": 100}))["tickets"]
    assert [e["node"]["id"] for e in whole["edges"]] == ids
    assert whole["pageInfo"]["hasNextPage"] is False
    # each edge's cursor continues right after it
    cursor = whole["edges"][11]["cursor"]
    rest = ok(await gql(http, LIST, {"s": "OPEN", "first": 3, "after": cursor}))["tickets"]
    assert [e["node"]["id"] for e in rest["edges"]] == ids[12:15]

    ordered = sorted(thirty, key=lambda t: (t["createdAt"], t["id"]))
    low, high = ordered[8]["createdAt"], ordered[21]["createdAt"]

    def expected(after: str | None, before: str | None) -> list[str]:
        return newest_first(
            [
                t
                for t in thirty
                if (after is None or t["createdAt"] > after)
                and (before is None or t["createdAt"] < before)
            ]
        )

    for after, before in [(low, None), (None, high), (low, high), (high, low)]:
        bounds = {k: v for k, v in (("a", after), ("b", before)) if v is not None}
        ids, total = await list_all(http, "OPEN", 7, **bounds)
        want = expected(after, before)
        assert ids == want, (after, before)
        assert total == len(want), (after, before)
    assert 0 < len(expected(low, high)) < len(expected(low, None)) < 30


async def test_a_reversed_time_range_is_an_empty_connection_read_from_nowhere(
    http: httpx.AsyncClient, thirty: list[dict[str, Any]]
) -> None:
    """createdAfter above createdBefore holds no ticket (MODELS.md: the items with a < v < b),
    as SQL's BETWEEN and the range filters of list APIs answer: an empty page, not an error.
    DynamoDB refuses such a BETWEEN, so no Query is sent (moto answered it empty)."""
    ordered = sorted(t["createdAt"] for t in thirty)
    query = """query($a: DateTime, $b: DateTime) { tickets(status: OPEN, createdAfter: $a,
        createdBefore: $b) { totalCount pageInfo { hasNextPage } edges { node { id } } } }"""
    body = await gql(http, query, {"a": ordered[20], "b": ordered[5]})
    assert ok(body)["tickets"] == {
        "totalCount": 0,
        "pageInfo": {"hasNextPage": False},
        "edges": [],
    }
    assert body["extensions"]["dynamodb"]["requests"] == 0
    # equal bounds, both left out (exclusive): a valid BETWEEN whose keys the exact test drops
    equal = ok(await gql(http, query, {"a": ordered[5], "b": ordered[5]}))["tickets"]
    assert equal["totalCount"] == 0 and equal["edges"] == []


async def test_a_bad_tickets_cursor_is_bad_user_input(http: httpx.AsyncClient) -> None:
    wrong = {}
    for cursor in [
        "garbage!",
        base64.urlsafe_b64encode(b'["USER#alice","GROUP#group1"]').decode(),
        base64.urlsafe_b64encode(json.dumps([None] * 7).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps([1] * 8).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps(["x"] * 8).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps(["2024-01-01T00:00:00Z#a b"] * 8).encode()).decode(),
        "",
    ]:
        body = await gql(http, LIST, {"s": "OPEN", "after": cursor})
        if codes(body) != ["BAD_USER_INPUT"]:
            wrong[cursor] = body
    assert codes(await gql(http, LIST, {"s": "OPEN", "first": 101})) == ["BAD_USER_INPUT"]
    assert wrong == {}


async def test_user_tickets_are_newest_first_and_their_author_resolves(
    http: httpx.AsyncClient,
) -> None:
    opened = [await open_ticket(http, ("bob", "alice")[i % 4 == 0], f"t{i}") for i in range(9)]
    ok(await gql(http, CLOSE, {"id": opened[1]["id"]}))
    mine = [t["id"] for t in opened if t["author"]["id"] == "USER#bob"][::-1]
    body = await gql(
        http,
        """{ user(id: "bob") { tickets(first: 100) { totalCount
            edges { node { id status author { id name } } } } } }""",
    )
    listed = ok(body)["user"]["tickets"]
    edges = listed["edges"]
    assert listed["totalCount"] == len(mine) == 6
    assert [e["node"]["id"] for e in edges] == mine  # newest first, open or closed
    assert {e["node"]["author"]["id"] for e in edges} == {"USER#bob"}
    assert {e["node"]["author"]["name"] for e in edges} == {"Bob"}
    first = ok(await gql(http, '{ user(id: "bob") { tickets(first: 4) { edges { node { id } } '
                             "pageInfo { endCursor } } } }"))["user"]["tickets"]  # fmt: skip
    rest = await gql(
        http,
        'query($a: String) { user(id: "bob") { tickets(first: 100, after: $a) '
        "{ edges { node { id } } } } }",
        {"a": first["pageInfo"]["endCursor"]},
    )
    assert [e["node"]["id"] for e in first["edges"]] == mine[:4]
    assert [e["node"]["id"] for e in ok(rest)["user"]["tickets"]["edges"]] == mine[4:]


# ---- offices -----------------------------------------------------------------------------------

ADD_OFFICE = """mutation($o: ID!, $c: String!, $s: String!, $t: String!, $z: String!,
    $a: String) { addOffice(organizationId: $o, country: $c, state: $s, city: $t, zip: $z,
    address: $a) { __typename cursor node { id country state city zip address } } }"""
OFFICES = """query($o: ID!, $c: String, $s: String, $t: String, $z: String, $first: Int,
    $after: String) { organization(id: $o) { offices(country: $c, state: $s, city: $t, zip: $z,
    first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor }
    edges { cursor node { id city zip } } } } }"""

LOCATIONS = [
    ("US", "WA", "Redmond", "98052"),
    ("US", "WA", "Redmond", "98052"),
    ("US", "WA", "Redmond", "98053"),
    ("US", "WA", "Seattle", "98101"),
    ("US", "CA", "San Francisco", "94105"),
    ("USA", "WA", "Redmond", "98052"),  # a longer country sharing the prefix "US"
    ("IE", "Dublin", "Dublin", "D02"),
]


@pytest.fixture
async def offices(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    added = []
    for i, (country, state, city, zip_) in enumerate(LOCATIONS):
        variables = {"o": "microsoft", "c": country, "s": state, "t": city, "z": zip_}
        body = await gql(http, ADD_OFFICE, variables | {"a": f"{i} Main St"})
        added.append(ok(body)["addOffice"])
    await gql(
        http,
        ADD_OFFICE,
        {"o": "ORG#amazon", "c": "US", "s": "WA", "t": "Seattle", "z": "98109", "a": None},
    )
    return added


async def test_add_office_stores_it_under_the_composite_key_and_counts_it(
    http: httpx.AsyncClient, demo: Table, offices: list[dict[str, Any]]
) -> None:
    edge = offices[0]
    assert edge["__typename"] == "OfficeEdge" and edge["cursor"]
    node = edge["node"]
    assert (node["country"], node["state"], node["city"], node["zip"], node["address"]) == (
        "US",
        "WA",
        "Redmond",
        "98052",
        "0 Main St",
    )
    items = await scan(demo)
    key = ("ORG#microsoft", f"OFFICE#US#WA#Redmond#98052#{node['id']}")
    assert items[key]["id"] == node["id"]
    assert items["ORG#microsoft", "ORG#microsoft"]["n_OFFICE"] == len(LOCATIONS)
    assert items["ORG#amazon", "ORG#amazon"]["n_OFFICE"] == 1
    assert len({o["node"]["id"] for o in offices}) == len(LOCATIONS)
    assert problems(items) == []


FILTERS: list[tuple[dict[str, str], list[tuple[str, str, str, str]]]] = [
    ({}, LOCATIONS),
    ({"c": "US"}, LOCATIONS[:5]),
    ({"c": "US", "s": "WA"}, LOCATIONS[:4]),
    ({"c": "US", "s": "WA", "t": "Redmond"}, LOCATIONS[:3]),
    ({"c": "US", "s": "WA", "t": "Redmond", "z": "98052"}, LOCATIONS[:2]),
    ({"c": "USA"}, LOCATIONS[5:6]),
    ({"c": "IE", "s": "Dublin", "t": "Dublin", "z": "D02"}, LOCATIONS[6:]),
    ({"c": "US", "s": "W"}, []),
    ({"c": "FR"}, []),
]


async def test_offices_filters_narrow_by_key_prefix(
    http: httpx.AsyncClient, offices: list[dict[str, Any]]
) -> None:
    for filters, expected in FILTERS:
        body = await gql(http, OFFICES, {"o": "microsoft", **filters, "first": 100})
        listed = ok(body)["organization"]["offices"]
        assert listed["totalCount"] == len(expected), filters
        found = [(e["node"]["city"], e["node"]["zip"]) for e in listed["edges"]]
        assert sorted(found) == sorted((city, zip_) for _c, _s, city, zip_ in expected), filters
        queries = body["extensions"]["dynamodb"]["operations"].get("Query", 0)
        assert queries == (1 if not filters else 2), filters  # the page; with filters, a COUNT


async def test_a_filtered_total_is_counted_in_the_lookups_own_round(
    http: httpx.AsyncClient, offices: list[dict[str, Any]]
) -> None:
    query = 'query($c: String) { organization(id: "microsoft") { offices(country: $c) {'
    query += " totalCount } } }"
    body = await gql(http, query, {"c": "US"})
    assert ok(body)["organization"]["offices"]["totalCount"] == 5
    trace = body["extensions"]["dynamodb"]
    # the organization's item and the COUNT Query of its filtered offices, started together
    assert (trace["operations"], trace["rounds"]) == ({"BatchGetItem": 1, "Query": 1}, 1)


async def test_offices_page_within_a_filter(
    http: httpx.AsyncClient, offices: list[dict[str, Any]]
) -> None:
    seen = []
    after = None
    while True:
        variables = {"o": "microsoft", "c": "US", "first": 2, "after": after}
        page = ok(await gql(http, OFFICES, variables))["organization"]["offices"]
        seen += [e["node"]["id"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert sorted(seen) == sorted(o["node"]["id"] for o in offices[:5])
    assert len(seen) == len(set(seen))
    other = ok(await gql(http, OFFICES, {"o": "microsoft", "c": "IE"}))["organization"]["offices"]
    misplaced = await gql(
        http, OFFICES, {"o": "microsoft", "c": "US", "after": other["edges"][0]["cursor"]}
    )
    assert codes(misplaced) == ["BAD_USER_INPUT"]


async def test_a_finer_office_filter_without_the_coarser_is_bad_user_input(
    http: httpx.AsyncClient,
) -> None:
    for filters in [
        {"s": "WA"},
        {"t": "Redmond"},
        {"z": "98052"},
        {"c": "US", "t": "Redmond"},
        {"c": "US", "s": "WA", "z": "98052"},
        {"c": "US", "s": "W#A"},
        {"c": ""},
    ]:
        body = await gql(http, OFFICES, {"o": "microsoft", **filters})
        assert codes(body) == ["BAD_USER_INPUT"], (filters, body)


async def test_remove_office_is_true_then_false_and_uncounts(
    http: httpx.AsyncClient, demo: Table, offices: list[dict[str, Any]]
) -> None:
    office = offices[3]["node"]["id"]
    remove = "mutation($o: ID!, $id: ID!) { removeOffice(organizationId: $o, officeId: $id) }"
    # another organization's office is not there
    before = await scan(demo)
    assert ok(await gql(http, remove, {"o": "amazon", "id": office}))["removeOffice"] is False
    assert await scan(demo) == before
    assert ok(await gql(http, remove, {"o": "ORG#microsoft", "id": office}))["removeOffice"] is True
    after = await scan(demo)
    assert set(before) - set(after) == {("ORG#microsoft", f"OFFICE#US#WA#Seattle#98101#{office}")}
    assert after["ORG#microsoft", "ORG#microsoft"]["n_OFFICE"] == len(LOCATIONS) - 1
    assert problems(after) == []
    assert ok(await gql(http, remove, {"o": "microsoft", "id": office}))["removeOffice"] is False
    body = await gql(http, OFFICES, {"o": "microsoft", "c": "US", "s": "WA"})
    listed = ok(body)["organization"]["offices"]
    assert listed["totalCount"] == 3
    assert office not in {e["node"]["id"] for e in listed["edges"]}
    total = ok(await gql(http, OFFICES, {"o": "microsoft"}))["organization"]["offices"]
    assert total["totalCount"] == len(LOCATIONS) - 1
