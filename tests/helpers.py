"""Helpers shared by the HTTP tests."""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

import httpx

from graph.table import Layout

# The data-plane client the tests open: lean (the default) unless EDGEWISE_CLIENT=botocore, which
# `make test` sets for its second run of the data-plane suites.
LEAN = os.environ.get("EDGEWISE_CLIENT", "lean").strip().lower() != "botocore"

N = 45  # the length of long_lists' lists
AT = "2024-01-15T09:%02d:00.000Z"  # long_lists' times, a minute apart

# The engine under the ``dynamodb`` fixture: moto unless EDGEWISE_TEST_ENGINE=local, which puts
# DynamoDB Local in its place (`make test` sets it for its run of the suites that talk to DynamoDB).
ENGINE = os.environ.get("EDGEWISE_TEST_ENGINE", "moto").strip().lower()
if ENGINE not in ("moto", "local"):
    raise ValueError(f"EDGEWISE_TEST_ENGINE={ENGINE!r}: use moto or local")
LOCAL = ENGINE == "local"

# The demo's table as CONTRACT.md has it (the demo model must agree: tests/engine checks it).
DEMO_LAYOUT = Layout("PK", "SK", {"inverted": ("SK", "PK"), "gsi2": ("GSI2PK", "GSI2SK")})


async def gql(
    client: httpx.AsyncClient, query: str, variables: dict[str, Any] | None = None
) -> dict[str, Any]:
    """POST a query with tracing on; returns the JSON body (asserting HTTP 200)."""
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Edgewise-Trace": "1"},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def cost(body: dict[str, Any]) -> tuple[dict[str, int], int]:
    """(operations, rounds) of a traced answer (``gql``'s)."""
    trace = body["extensions"]["dynamodb"]
    return trace["operations"], trace["rounds"]


def _identity(node: dict[str, Any]) -> str:
    """A node's id, or what its selection answers (a type that is not a Node)."""
    found = node.get("id")
    return found if isinstance(found, str) else json.dumps(node, sort_keys=True)


class Paged(NamedTuple):
    edges: list[tuple[str, str]]  # (node id, cursor), in the connection's order
    forward: list[tuple[int, int]]  # each forward page's (requests, rounds), from the start
    backward: list[tuple[int, int]]  # each backward page's, from the end


async def both_ways(
    client: httpx.AsyncClient,
    query: str,
    path: tuple[str, ...],
    size: int,
    variables: dict[str, Any] | None = None,
    costs: bool = True,
) -> Paged:
    """Page the connection at ``path`` of ``query`` (which takes ``$first``, ``$after``,
    ``$last`` and ``$before`` and selects ``totalCount``, ``pageInfo { hasNextPage
    hasPreviousPage startCursor endCursor }`` and ``edges { cursor node { id } }``, or other
    fields where the node has no id) forward to its end and backward to its start, ``size``
    edges a page, and check what the Relay spec
    and CONTRACT.md promise: the same edges in the same order with the same cursors both ways,
    pageInfo exact in the direction paged (and false the other way), ``totalCount`` the same
    on every page; each backward page after the first (read before a cursor) costing the
    rounds of the forward page of the same rank (read after one), and the whole walk back no
    more requests than the walk forward (``costs=False``: the listing reads past items it does
    not answer, so what a page costs depends on where they lie and its rounds on timing). The
    caller compares the first pages (``first: n`` against ``last: n``)."""

    async def page(**arguments: Any) -> tuple[dict[str, Any], tuple[int, int]]:
        body = await gql(client, query, {**(variables or {}), **arguments})
        assert "errors" not in body, body["errors"]
        found: Any = body["data"]
        for name in path:
            found = found[name]
        info = found["pageInfo"]
        edges = found["edges"]
        cursors = [e["cursor"] for e in edges]
        assert (info["startCursor"], info["endCursor"]) == (
            (cursors[0], cursors[-1]) if cursors else (None, None)
        )
        trace = body["extensions"]["dynamodb"]
        return found, (trace["requests"], trace["rounds"])

    forward: list[tuple[str, str]] = []
    forward_costs: list[tuple[int, int]] = []
    totals = set()
    after = None
    while True:
        found, cost = await page(first=size, after=after)
        edges = [(_identity(e["node"]), e["cursor"]) for e in found["edges"]]
        forward += edges
        forward_costs.append(cost)
        totals.add(found["totalCount"])
        assert found["pageInfo"]["hasPreviousPage"] is False
        assert after is None or edges, "hasNextPage was true before an empty page"
        if not found["pageInfo"]["hasNextPage"]:
            break
        assert len(edges) == size
        after = found["pageInfo"]["endCursor"]
    backward: list[tuple[str, str]] = []
    back_costs: list[tuple[int, int]] = []
    before = None
    while True:
        found, cost = await page(last=size, before=before)
        edges = [(_identity(e["node"]), e["cursor"]) for e in found["edges"]]
        backward = edges + backward
        back_costs.append(cost)
        totals.add(found["totalCount"])
        assert found["pageInfo"]["hasNextPage"] is False
        assert before is None or edges, "hasPreviousPage was true before an empty page"
        if not found["pageInfo"]["hasPreviousPage"]:
            break
        assert len(edges) == size
        before = found["pageInfo"]["startCursor"]
    assert backward == forward
    assert len(totals) == 1 and totals == {len(forward)}
    assert len(back_costs) == len(forward_costs)
    if costs:  # page by page the same rounds; in all no more requests (a shard with nothing
        # before a cursor is not queried)
        assert [r for _, r in back_costs[1:]] == [r for _, r in forward_costs[1:]], (
            forward_costs,
            back_costs,
        )
        assert sum(r for r, _ in back_costs) <= sum(r for r, _ in forward_costs)
    return Paged(forward, forward_costs, back_costs)


def long_lists() -> dict[str, Any]:
    """Demo sample data (``models.demo.generate.build`` makes it items) of 45-edge lists:
    alice in 45 groups; group g00 with 45 members; product p with 45 subscribers; 45 tickets
    alice opened, a minute apart; 45 offices of one organization in three countries."""
    nodes: list[dict[str, Any]] = [
        {"type": "User", "id": "alice", "name": "Alice"},
        {"type": "Product", "id": "p", "name": "P"},
        {"type": "Organization", "id": "acme", "name": "Acme"},
    ]
    edges: list[dict[str, Any]] = []
    for i in range(N):
        nodes.append({"type": "Group", "id": f"g{i:02}", "name": f"Group {i}"})
        edges.append(
            {
                "label": "MEMBER_OF",
                "from": "alice",
                "to": f"g{i:02}",
                "role": "OWNER",
                "since": AT % 0,
            }
        )
        edges.append({"label": "SUBSCRIBES_TO", "from": f"g{i:02}", "to": "p", "plan": "pro"})
        if i:
            nodes.append({"type": "User", "id": f"u{i:02}", "name": f"User {i}"})
            edges.append(
                {
                    "label": "MEMBER_OF",
                    "from": f"u{i:02}",
                    "to": "g00",
                    "role": "MEMBER",
                    "since": AT % 0,
                }
            )
        nodes.append(
            {
                "type": "Ticket",
                "id": f"t{i:02}",
                "title": f"Ticket {i}",
                "status": "OPEN",
                "authorId": "alice",
                "createdAt": AT % i,
            }
        )
        edges.append({"label": "OPENED", "from": "alice", "to": f"t{i:02}"})
        country = ("DE", "FR", "US")[i % 3]
        nodes.append(
            {
                "type": "Office",
                "organizationId": "acme",
                "id": f"o{i:02}",
                "country": country,
                "state": f"S{i % 2}",
                "city": f"C{i % 5}",
                "zip": f"{i:05}",
            }
        )
    return {"time": AT % 0, "nodes": nodes, "edges": edges}
