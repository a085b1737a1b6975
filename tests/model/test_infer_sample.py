"""`edgewise infer --sample N`: a sample spread over the key space (many parallel-scan segments
in a random order, each read for a small share), measured on a table of 735 items of eleven
types, one of them 4 items."""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

import pytest

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.sample import Sample, sample, segments_for
from graph.table import Table
from model.infer import Draft, infer, table_info
from tests.helpers import DEMO_LAYOUT
from tests.model.team_tables import write_table

SIZES = {"CUST": 120, "ORDER": 200, "PROD": 60, "EMP": 40, "WH": 10, "REP": 30, "INV": 90}
SIZES |= {"JOB": 70, "TAG": 50, "NOTE": 61, "RARE": 4}  # 735 items, RARE# the 4-item type


def _table(seed: int) -> list[dict[str, Any]]:
    r = random.Random(seed)
    items = []
    for prefix, count in SIZES.items():
        for i in range(count):
            key = f"{prefix}#{r.getrandbits(40):x}"
            items.append({"PK": key, "SK": key, "name": f"{prefix.lower()} {i}"})
    return items


def _samples(url: str, table: str, limit: int, seeds: range) -> list[Sample]:
    async def run() -> list[Sample]:
        async with open_client(Endpoint(url)) as client:
            opened = Table(client, table, layout=DEMO_LAYOUT)
            count = (await opened.describe()).get("ItemCount")
            return [await sample(opened, limit, count, seed=s) for s in seeds]

    return asyncio.run(run())


def _seen(got: Sample) -> bool:
    return any(item["PK"]["S"].startswith("RARE#") for item in got.items)


@pytest.mark.parametrize(
    ("limit", "count", "segments", "share"),
    [(1000, 735, 24, 63), (200, 735, 114, 13), (1000, None, 16, 63), (10, 10**9, 1_000_000, 1)],
)
def test_the_scan_is_cut_into_many_small_segments(
    limit: int, count: int | None, segments: int, share: int
) -> None:
    assert segments_for(limit, count) == (segments, share)


def test_a_type_of_4_items_in_735_is_seen_by_most_samples(dynamodb: EmbeddedDynamoDB) -> None:
    dynamodb.reset()
    write_table(dynamodb.url, "spread", _table(7))
    # --sample 200 (the figure): a uniform sample of 200 sees a 4-item type with
    # probability 1 - (535/735)^4 = 0.72; the first pages of four segments saw it 0 times in
    # 10 here (moto returns a segment's items in key order, RARE# last)
    small = _samples(dynamodb.url, "spread", 200, range(10))
    assert all(len(s.items) == 200 and not s.complete for s in small)
    assert sum(map(_seen, small)) >= 6  # 8 of 10 here; 72 of 100 over five tables
    # the default sample (1000) reads a 735-item table whole
    (whole,) = _samples(dynamodb.url, "spread", 1000, range(1))
    assert (len(whole.items), whole.complete, _seen(whole)) == (735, True, True)


def test_a_draft_says_what_it_read_and_what_it_saw_too_rarely(dynamodb: EmbeddedDynamoDB) -> None:
    dynamodb.reset()
    write_table(dynamodb.url, "spread", _table(3))

    async def run() -> Draft:
        async with open_client(Endpoint(dynamodb.url)) as client:
            opened = Table(client, "spread", layout=DEMO_LAYOUT)
            described = await opened.describe()
            got = await sample(opened, 60, described.get("ItemCount"), seed=1)
            return infer(table_info(described), got.items, got.complete)

    header = asyncio.run(run()).text.split("\ntable:")[0]
    assert "from 60 items read of table 'spread' (about 735 items; a sample)" in header
    rare = next(line for line in header.splitlines() if "too rarely to trust" in line)
    counts = {m[0]: int(m[1]) for m in re.findall(r'"(\w+)#…" \((\d+) items?\)', rare)}
    assert counts and max(counts.values()) < 3, rare
    assert "ORDER" not in counts
