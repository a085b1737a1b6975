"""Reading a table for ``edgewise infer``: DescribeTable and a bounded, parallel, sampled Scan.
Only reads: nothing here writes to the table."""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graph.errors import EdgewiseError
from graph.table import Layout, Table

__all__ = ["UNKEYED", "Sample", "describe", "sample", "segments_for"]

MIN_SEGMENTS = 16
MAX_SEGMENTS = 1_000_000  # DynamoDB's limit on TotalSegments
PARALLEL = 8  # segments read at once
PAGE = 100
# The layout of a table read before its model exists: the sampler keys no item (DescribeTable and
# Scan only, the items kept as DynamoDB JSON), so it names no key.
UNKEYED = Layout("", "")

_HINTS = {
    "ResourceNotFoundException": "no such table at this endpoint; check --table and --dynamodb "
    "(and the region: AWS_REGION)",
    "AccessDeniedException": "access denied; `edgewise infer` needs dynamodb:DescribeTable and "
    "dynamodb:Scan on the table",
    "UnrecognizedClientException": "the credentials were refused; check the AWS credentials",
}


@dataclass(frozen=True)
class Sample:
    items: list[dict[str, Any]]  # DynamoDB JSON, as Scan returns them
    complete: bool  # every segment was read to its end: the sample is the whole table
    units: float  # read capacity units the Scan consumed
    segments: int = 0  # TotalSegments of the parallel Scan


def _explain(table: Table, operation: str, exc: EdgewiseError) -> EdgewiseError:
    hint = _HINTS.get(exc.code)
    if hint is None:
        return exc
    return EdgewiseError(f"{operation} on table {table.name!r} failed: {hint}")


async def describe(table: Table) -> dict[str, Any]:
    """DescribeTable's ``Table``: key schema, attribute types, indexes, approximate count."""
    try:
        return await table.describe()
    except EdgewiseError as exc:
        raise _explain(table, "DescribeTable", exc) from exc


def segments_for(limit: int, item_count: int | None) -> tuple[int, int]:
    """(TotalSegments, items read at most per segment) for a sample of ``limit`` items of a table
    of about ``item_count`` items: at least 16 segments, each read for at most 1/16 of the sample,
    and so many that a segment holds about half of that on average (so most segments are read
    whole and the sample is whole partitions from all over the key space)."""
    cap = max(1, -(-limit // MIN_SEGMENTS))
    wanted = -(-2 * (item_count or 0) // cap)
    return max(MIN_SEGMENTS, min(MAX_SEGMENTS, wanted)), cap


async def sample(
    table: Table,
    limit: int,
    item_count: int | None = None,
    parallel: int = PARALLEL,
    seed: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> Sample:
    """Up to ``limit`` items from a parallel Scan spread over the key space: the table is cut into
    many segments (:func:`segments_for`, from DescribeTable's approximate ``item_count``), which
    are read in a random order (``seed`` makes it repeatable), ``parallel`` at a time, each for
    at most a small share of the sample, until ``limit`` items are in (so a large table is never
    read whole, and no part of the key space fills the sample alone). Eventually consistent reads
    (half the units of strong ones); throttled calls are retried within the table's deadline."""
    total, cap = segments_for(limit, item_count)
    order = list(range(total))
    random.Random(seed).shuffle(order)
    # (segment, where to resume): a segment cut at its share goes back to the end of the queue,
    # read again only once every segment had its share
    queue: deque[tuple[int, dict[str, Any] | None]] = deque((s, None) for s in order)
    items: list[dict[str, Any]] = []
    units = 0.0
    ended = 0

    async def read(segment: int, start: dict[str, Any] | None) -> None:
        nonlocal units, ended
        params: dict[str, Any] = {
            "TableName": table.name,
            "Segment": segment,
            "TotalSegments": total,
            "ReturnConsumedCapacity": "TOTAL",
        }
        if start is not None:
            params["ExclusiveStartKey"] = start
        taken = 0
        while len(items) < limit:
            if taken >= cap:
                queue.append((segment, params["ExclusiveStartKey"]))
                return
            params["Limit"] = max(1, min(PAGE, cap - taken, limit - len(items)))
            try:
                response = await table.call("Scan", table.client.control.scan, dict(params))
            except EdgewiseError as exc:
                raise _explain(table, "Scan", exc) from exc
            units += float(response.get("ConsumedCapacity", {}).get("CapacityUnits", 0))
            page_items = response.get("Items", [])
            got = page_items[: max(0, limit - len(items))]
            items.extend(got)
            taken += len(got)
            if progress is not None:
                progress(len(got))
            if len(got) < len(page_items):
                return  # the limit cut this page: the segment holds more
            if not response.get("LastEvaluatedKey"):
                ended += 1
                return
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    async def worker() -> None:
        while queue and len(items) < limit:
            await read(*queue.popleft())

    tasks = [asyncio.create_task(worker()) for _ in range(max(1, min(parallel, total)))]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return Sample(items, ended == total, units, total)
