"""Relay connections paged both ways on the demo model (CONTRACT.md, the connection paragraph):
``last``/``before`` on edges in both directions, children narrowed by a filter, and the
tickets merged from eight shards, each backward page read by Queries turned round, on moto
and dynalite, with the same cursors, pageInfo exact, and the forward page's cost."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from graph.table import Table
from models.demo.generate import build
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import N, both_ways, gql, long_lists

BETWEEN = ("2024-01-15T09:03:30.000Z", "2024-01-15T09:39:30.000Z")  # between tickets' times
PAGE = "totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }"
ARGS = "first: $first, after: $after, last: $last, before: $before"
VARIABLES = "$first: Int, $after: String, $last: Int, $before: String"


@pytest.fixture
def table(compatible_table: Table) -> Table:
    return compatible_table


@pytest.fixture
async def http(table: Table, backend: str) -> AsyncIterator[httpx.AsyncClient]:
    await table.batch_write(build(long_lists()))
    app = create_app(Settings(read_only=backend == "dynalite"), table=table)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as client:
        yield client


def on(root: str, field: str, arguments: str = "") -> tuple[str, tuple[str, ...]]:
    """A query of the connection ``field`` of ``root`` (a lookup), and its path."""
    lookup = root.split("(")[0]
    query = (
        f"query({VARIABLES}) {{ {root} {{ {field}({arguments}{ARGS}) {{ {PAGE} "
        "edges { cursor node { id } } } } }"
    )
    return query, (lookup, field)


CONNECTIONS = {
    "edges, forward": on('user(id: "alice")', "groups"),
    "edges, reverse on an index": on('group(id: "g00")', "members"),
    "edges, reverse of another label": on('product(id: "p")', "subscribers"),
    "edges, forward, newest first": on('user(id: "alice")', "tickets"),
    "children, the whole partition": on('organization(id: "acme")', "offices"),
    "children, narrowed by a filter": on('organization(id: "acme")', "offices", 'country: "FR", '),
    "an access pattern merged from eight shards, newest first": (
        f"query({VARIABLES}) {{ tickets(status: OPEN, {ARGS}) {{ {PAGE} "
        "edges { cursor node { id } } } }",
        ("tickets",),
    ),
    "the same between two times (bounds on each shard)": (
        f"query({VARIABLES}) {{ tickets(status: OPEN, createdAfter: "
        f'"{BETWEEN[0]}", createdBefore: "{BETWEEN[1]}", {ARGS}) {{ {PAGE} '
        "edges { cursor node { id } } } }",
        ("tickets",),
    ),
}


@pytest.mark.parametrize("size", [4, 45])
@pytest.mark.parametrize("connection", list(CONNECTIONS), ids=list(CONNECTIONS))
async def test_a_connection_pages_both_ways_alike(
    http: httpx.AsyncClient, connection: str, size: int
) -> None:
    query, path = CONNECTIONS[connection]
    paged = await both_ways(http, query, path, size)
    expected = {"children, narrowed by a filter": 15, "the same between two times": 36}  # 4-39
    assert len(paged.edges) == next((n for k, n in expected.items() if connection.startswith(k)), N)
    if connection == "children, the whole partition" and size < N:
        # the organization's item and its first offices are one Query of its partition read
        # from the page's end: ORG#acme sorts after OFFICE#…, so the last page finds it there
        # and the first page reads it in a round of its own (tests/engine/test_orders.py)
        assert (paged.forward[0], paged.backward[0]) == ((2, 2), (1, 1))
    else:  # the first page and the last: the same Queries, turned round
        assert paged.backward[0] == paged.forward[0]


async def test_eight_shards_merge_both_ways_one_edge_a_page(http: httpx.AsyncClient) -> None:
    query, path = CONNECTIONS["an access pattern merged from eight shards, newest first"]
    paged = await both_ways(http, query, path, 1)
    assert [node for node, _ in paged.edges] == [f"TICKET#t{i:02}" for i in reversed(range(N))]
    assert paged.backward[0] == paged.forward[0] == (16, 1)  # 8 pages and 8 counts, one round
    assert paged.backward[-1][0] < 16  # before the oldest tickets, most shards hold nothing


INFO = "pageInfo { hasNextPage hasPreviousPage startCursor endCursor }"
TICKETS = (
    f"query({VARIABLES}) {{ tickets(status: OPEN, {ARGS}) {{ {INFO} "
    "edges { cursor node { id } } } }"
)
GROUPS = (
    f'query({VARIABLES}) {{ user(id: "alice") {{ groups({ARGS}) {{ {INFO} '
    "edges { cursor node { id } } } } }"
)


async def cursors(http: httpx.AsyncClient, query: str) -> tuple[list[str], list[str]]:
    body = await gql(http, query, {"first": 100})
    found = body["data"].get("tickets") or body["data"]["user"]["groups"]
    return [e["node"]["id"] for e in found["edges"]], [e["cursor"] for e in found["edges"]]


@pytest.mark.parametrize("query", [TICKETS, GROUPS], ids=["eight shards", "one Query"])
async def test_both_cursors_bound_the_page_as_the_relay_spec_applies_them(
    http: httpx.AsyncClient, query: str
) -> None:
    ids, at = await cursors(http, query)

    async def page(**variables: Any) -> tuple[list[str], dict[str, Any]]:
        body = await gql(http, query, variables)
        assert "errors" not in body, body["errors"]
        found = body["data"].get("tickets") or body["data"]["user"]["groups"]
        return [e["node"]["id"] for e in found["edges"]], found["pageInfo"]

    # between the 6th and the 21st edge: the first 3, the last 3, and all 14 when fewer fit
    got, info = await page(after=at[5], before=at[20], first=3)
    assert got == ids[6:9] and info["hasNextPage"] is True and info["hasPreviousPage"] is False
    got, info = await page(after=at[5], before=at[20], last=3)
    assert got == ids[17:20] and info["hasPreviousPage"] is True and info["hasNextPage"] is False
    got, info = await page(after=at[5], before=at[20], first=50)
    assert got == ids[6:20] and info["hasNextPage"] is False
    got, info = await page(after=at[5], before=at[20], last=50)
    assert got == ids[6:20] and info["hasPreviousPage"] is False
    got, info = await page(after=at[5], before=at[6], last=5)
    assert got == [] and info == {
        "hasNextPage": False,
        "hasPreviousPage": False,
        "startCursor": None,
        "endCursor": None,
    }
    # before alone pages forward from the start (first defaults to 20), up to the cursor
    got, info = await page(before=at[3])
    assert got == ids[:3] and info["hasNextPage"] is False
    # last: 0 says whether anything comes before, and reads nothing else
    got, info = await page(last=0, before=at[1])
    assert got == [] and info["hasPreviousPage"] is True
    got, info = await page(last=0, before=at[0])
    assert got == [] and info["hasPreviousPage"] is False


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("first: 2, last: 2", "not both"),
        ("last: 101", "last must be between 0 and 100, got 101"),
        ("last: -1", "last must be between 0 and 100, got -1"),
        ('last: 2, before: "%%%"', "invalid cursor"),
        ('last: 2, before: "WyJHUk9VUCNnIiwiVVNFUiN1Il0"', "another connection"),
    ],
)
async def test_bad_backward_arguments_are_bad_user_input(
    http: httpx.AsyncClient, arguments: str, message: str
) -> None:
    body = await gql(http, f'{{ user(id: "alice") {{ groups({arguments}) {{ totalCount }} }} }}')
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert message in error["message"]
    assert body["data"] == {"user": None}
