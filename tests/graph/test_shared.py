"""Reads by key shared by concurrent readers (graph.shared) on moto: the keys asked in one turn
of the event loop go out as one BatchGetItem, each reader gets its own copies of only what it
asked for, and a failed read fails each reader that shared it."""

from __future__ import annotations

import asyncio

from graph.errors import EdgewiseError
from graph.keys import ItemKey
from graph.shared import SharedGets, SharingTable
from graph.table import Table
from tests.helpers import DEMO_LAYOUT

ALICE = ItemKey("USER#alice", "USER#alice")
BOB = ItemKey("USER#bob", "USER#bob")
NOBODY = ItemKey("USER#nobody", "USER#nobody")


async def test_reads_of_one_turn_share_one_batch_and_each_reader_gets_its_own_copies(
    demo: Table,
) -> None:
    gets = SharedGets(demo)
    sharing = SharingTable(demo, gets)
    one, other = sharing.for_request(), sharing.for_request()
    first, second = await asyncio.gather(
        one.get_many([ALICE]), other.get_many([ALICE, BOB, NOBODY])
    )
    assert gets.requests == 1
    assert set(first) == {ALICE} and set(second) == {ALICE, BOB}
    assert first[ALICE] == second[ALICE] and first[ALICE] is not second[ALICE]
    assert first[ALICE]["name"] == "Alice"
    assert one.trace.requests == other.trace.requests == 0  # counted once, by the sharer
    await one.get_many([BOB])  # a later turn: a batch of its own
    assert gets.requests == 2


async def test_a_failed_shared_read_fails_each_of_its_readers_and_not_the_next(
    demo: Table,
) -> None:
    gets = SharedGets(Table(demo.client, "no-such-table", layout=DEMO_LAYOUT))
    results = await asyncio.gather(
        gets.get_many([ALICE]), gets.get_many([BOB]), return_exceptions=True
    )
    assert [type(r) for r in results] == [type(results[0])] * 2
    assert isinstance(results[0], EdgewiseError)
    gets.table = demo
    assert set(await gets.get_many([ALICE])) == {ALICE}
    await gets.close()
