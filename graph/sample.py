"""Reading a table for ``edgewise infer``: DescribeTable and a bounded, parallel, sampled Scan.
Only reads: nothing here writes to the table."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import EdgewiseError, error_code
from .table import Table

__all__ = ["Sample", "describe", "sample"]

SEGMENTS = 4
PAGE = 100

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


def _explain(table: Table, operation: str, exc: EdgewiseError) -> EdgewiseError:
    cause = exc.__cause__
    hint = _HINTS.get(error_code(cause)) if cause is not None else None
    if hint is None:
        return exc
    return EdgewiseError(f"{operation} on table {table.name!r} failed: {hint}")


async def describe(table: Table) -> dict[str, Any]:
    """DescribeTable's ``Table``: key schema, attribute types, indexes, approximate count."""
    try:
        return await table.describe()
    except EdgewiseError as exc:
        raise _explain(table, "DescribeTable", exc) from exc


async def sample(
    table: Table,
    limit: int,
    segments: int = SEGMENTS,
    page: int = PAGE,
    progress: Callable[[int], object] | None = None,
) -> Sample:
    """Up to ``limit`` items from a parallel Scan: ``segments`` segments read together, pages of
    at most ``page`` items, stopping as soon as ``limit`` items are in (so a large table is never
    read whole). Eventually consistent reads (half the units of strong ones); throttled calls
    are retried within the table's deadline."""
    items: list[dict[str, Any]] = []
    units = 0.0
    ended = [False] * segments

    async def read(segment: int) -> None:
        nonlocal units
        params: dict[str, Any] = {
            "TableName": table.name,
            "Segment": segment,
            "TotalSegments": segments,
            "ReturnConsumedCapacity": "TOTAL",
        }
        while len(items) < limit:
            params["Limit"] = max(1, min(page, share, limit - len(items)))
            try:
                response = await table.call("Scan", **params)
            except EdgewiseError as exc:
                raise _explain(table, "Scan", exc) from exc
            units += float(response.get("ConsumedCapacity", {}).get("CapacityUnits", 0))
            page_items = response.get("Items", [])
            got = page_items[: max(0, limit - len(items))]
            items.extend(got)
            if progress is not None:
                progress(len(got))
            if len(got) < len(page_items):
                return  # the limit cut this page: the segment holds more
            if not response.get("LastEvaluatedKey"):
                ended[segment] = True
                return
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    share = -(-limit // segments)  # each segment's first pages: a sample spread over all
    tasks = [asyncio.create_task(read(s)) for s in range(segments)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return Sample(items, all(ended), units)
