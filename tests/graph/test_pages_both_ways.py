"""Pages read forward and backward (``graph.reads``) against a brute force over the same items:
one Query or several merged (shards in partitions of their own, or enum values as sort-key
prefixes of one partition), sort keys tied across branches, in either order, with every pair of
cursors bounding a page. Both ways give the same items in the same order with the same cursors,
hasNextPage/hasPreviousPage exact in the direction read, and a backward page is the forward
page's Queries with ScanIndexForward reversed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.reads import Branch, Listing, Page, PageKey, Reads
from graph.table import Table
from tests.helpers import DEMO_LAYOUT, LEAN

SORTS = st.text(alphabet="abc", min_size=1, max_size=2)  # few values: ties across branches


class Recording(Table):
    """A table that records each Query's direction."""

    directions: list[bool]

    async def query(self, **params: Any) -> Any:
        self.directions.append(params["ScanIndexForward"])
        return await super().query(**params)


def listing(shape: str, count: int, forward: bool) -> Listing:
    if shape == "shards":  # a partition each, as write shards are
        branches = tuple(Branch(f"P#{i}") for i in range(count))
    else:  # one partition, a sort-key prefix each, as a fanned-out enum is
        branches = tuple(Branch("P", f"{i}#", strip=2) for i in range(count))
    return Listing(None, branches, forward)


def sk(shape: str, branch: int, sort: str) -> tuple[str, str]:
    return (f"P#{branch}", sort) if shape == "shards" else ("P", f"{branch}#{sort}")


def expected(shape: str, rows: list[tuple[int, str]], forward: bool) -> list[tuple[str, str]]:
    """The listing's order: by sort key (less its branch's prefix), then by branch; or the
    reverse of that."""
    ordered = sorted(set(rows), key=lambda r: (r[1], r[0]), reverse=not forward)
    return [sk(shape, branch, sort) for branch, sort in ordered]


async def walk(
    table: Recording, shape: str, count: int, forward: bool, size: int
) -> tuple[list[Any], list[Any], list[Any]]:
    """Every page forward, then backward; and pages bounded by pairs of cursors."""
    listed = listing(shape, count, forward)

    async def page(key: PageKey) -> Page:
        return await Reads(table).pages.load(key)

    ahead: list[tuple[tuple[str, str], str]] = []
    after = None
    while True:
        found = await page(PageKey(listed, size, after))
        assert not found.has_previous
        ahead += [((i["PK"], i["SK"]), c) for i, c in zip(found.items, found.cursors, strict=True)]
        if not found.has_next:
            break
        assert len(found.items) == size
        after = found.cursors[-1]
    back: list[tuple[tuple[str, str], str]] = []
    before = None
    table.directions.clear()
    while True:
        found = await page(PageKey(listed, size, None, before, backward=True))
        assert not found.has_next
        edges = [((i["PK"], i["SK"]), c) for i, c in zip(found.items, found.cursors, strict=True)]
        back = edges + back
        if not found.has_previous:
            break
        assert len(found.items) == size
        before = found.cursors[0]
    reversed_reads = list(table.directions)
    bounded = []
    cursors = [c for _, c in ahead]
    for a in range(-1, len(cursors)):
        for b in range(a + 1, len(cursors) + 1):
            low = cursors[a] if a >= 0 else None
            high = cursors[b] if b < len(cursors) else None
            for backward in (False, True):
                key = PageKey(listed, size, low, high, backward)
                found = await page(key)
                keys = [(i["PK"], i["SK"]) for i in found.items]
                more = found.has_previous if backward else found.has_next
                bounded.append(((a, b, backward), keys, more, list(found.cursors)))
    return [ahead, back, bounded], reversed_reads, cursors


@pytest.mark.parametrize("shape", ["shards", "prefixes"])
def test_pages_both_ways_match_a_brute_force(dynamodb: EmbeddedDynamoDB, shape: str) -> None:
    @given(
        rows=st.lists(st.tuples(st.integers(0, 2), SORTS), min_size=0, max_size=9),
        forward=st.booleans(),
        size=st.integers(1, 4),
    )
    @settings(
        max_examples=6,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    def both(rows: list[tuple[int, str]], forward: bool, size: int) -> None:
        dynamodb.reset()

        async def run() -> Any:
            async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
                await create_table(client.control, "graph", layout=DEMO_LAYOUT)
                table = Recording(client, "graph", layout=DEMO_LAYOUT)
                table.directions = []
                keys = {sk(shape, b, s) for b, s in rows}
                if keys:
                    await table.batch_write([{"PK": pk, "SK": sort} for pk, sort in keys])
                return await walk(table, shape, 3, forward, size)

        (ahead, back, bounded), directions, cursors = asyncio.run(run())
        order = expected(shape, rows, forward)
        assert [k for k, _ in ahead] == order
        assert back == ahead  # the same items, the same cursors
        assert set(directions) <= {not forward}  # every backward Query turned round
        for (a, b, backward), keys, more, page_cursors in bounded:
            between = order[a + 1 : b]
            wanted = between[-size:] if backward else between[:size]
            assert keys == wanted, (a, b, backward)
            assert more is (len(between) > size)
            inside = cursors[a + 1 : b]
            assert page_cursors == (inside[-size:] if backward else inside[:size])

    both()
