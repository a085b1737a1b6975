"""Tickets: a node per ticket, listed by status on ``gsi2`` sharded over N partitions.

``GSI2PK = TICKET#<status>#<shard>`` (shard = crc32 of the id mod N) spreads a hot status over
N partitions; ``GSI2SK = <createdAt>#<id>`` orders each shard by time. A listing queries every
shard at once and merges them newest first; its cursor holds each shard's position.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import heapq
import json
import os
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .errors import BadUserInput, Conflict, NotFound
from .keys import NodeKey, NodeType, new_id, validate_id
from .model import OPENED, counter, edge_item, node_item, now_iso
from .table import Item, Table, from_dynamo
from .tx import LIVE, Tx, fail

__all__ = [
    "SHARDS",
    "TicketListing",
    "TicketPage",
    "close_ticket",
    "count_tickets",
    "list_tickets",
    "open_ticket",
]

SHARDS = int(os.environ.get("EDGEWISE_TICKET_SHARDS", "8"))


def _index_keys(ticket_id: str, status: str, created: str, shards: int) -> dict[str, str]:
    shard = zlib.crc32(ticket_id.encode()) % shards
    return {"GSI2PK": f"TICKET#{status}#{shard}", "GSI2SK": f"{created}#{ticket_id}"}


async def open_ticket(table: Table, user: NodeKey, title: str, shards: int = SHARDS) -> Item:
    """Create an OPEN ticket and the user's OPENED edge to it, in one transaction."""
    if not title.strip() or len(title) > 500:
        raise BadUserInput("a ticket title is 1 to 500 characters")
    key = NodeKey(NodeType.TICKET, new_id())
    at = now_iso()
    fields = {
        "title": title,
        "status": "OPEN",
        "author": str(user),
        counter(OPENED, incoming=True): 1,
    }
    item = node_item(key, fields, at) | _index_keys(key.id, "OPEN", at, shards)
    # The ids are new, so a failed condition means an earlier attempt of this very transaction
    # applied (DynamoDB dedupes a retry by its ClientRequestToken; moto does not).
    again = fail(Conflict(f"{key} was already opened by an earlier attempt of this request"))
    tx = Tx(table)
    tx.put(item, "attribute_not_exists(PK)", again)
    tx.put(edge_item(OPENED, user, key, {}), "attribute_not_exists(PK)", again)
    tx.count(
        user.item, counter(OPENED, incoming=False), 1, fail(NotFound(f"{user} does not exist"))
    )
    await tx.commit()
    return item


async def close_ticket(table: Table, key: NodeKey, shards: int = SHARDS) -> Item:
    """Set CLOSED and move the ticket to the CLOSED index partition in the same update."""
    old = await table.get_item(key.item)
    if old is None or old.get("deleting"):
        raise NotFound(f"{key} does not exist")
    if old["status"] == "CLOSED":
        return old
    index = _index_keys(key.id, "CLOSED", old["createdAt"], shards)
    tx = Tx(table)
    tx.update(
        key.item,
        "SET #s = :s, GSI2PK = :pk, GSI2SK = :sk, updatedAt = :at ADD version :one",
        names={"#s": "status"},
        values={
            ":s": "CLOSED",
            ":pk": index["GSI2PK"],
            ":sk": index["GSI2SK"],
            ":at": now_iso(),
            ":one": 1,
        },
        condition=LIVE,
        on_fail=fail(NotFound(f"{key} does not exist")),
    )
    await tx.commit()
    item = await table.get_item(key.item)
    if item is None:
        raise NotFound(f"{key} does not exist")
    return item


@dataclass(frozen=True)
class TicketListing:
    """``tickets(status:, createdAfter:, createdBefore:, after:)`` as a loader key."""

    status: str
    after: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    shards: int = SHARDS

    def bounds(self) -> tuple[str | None, str | None]:
        """GSI2SK bounds, both exclusive: '~' sorts after any id, so ``<after>#~`` is past every
        ticket created at ``after``, and ``<before>`` is before every one created at it."""
        low = f"{_iso(self.created_after)}#~" if self.created_after else None
        high = _iso(self.created_before) if self.created_before else None
        return low, high


@dataclass(frozen=True)
class TicketPage:
    items: list[Item]
    cursors: list[str]  # after each item
    has_next: bool


def _iso(moment: datetime) -> str:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _encode(positions: list[str | None]) -> str:
    return base64.urlsafe_b64encode(json.dumps(positions).encode()).decode().rstrip("=")


def _decode(cursor: str, shards: int) -> list[str | None]:
    try:
        positions = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not (isinstance(positions, list) and len(positions) == shards):
            raise ValueError
        for position in positions:
            if position is not None:
                created, _, ticket = str(position).rpartition("#")
                if not created:
                    raise ValueError
                validate_id(ticket)
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError, BadUserInput):
        raise BadUserInput(
            f"invalid cursor {cursor[:60]!r}: pass a cursor from `tickets`"
        ) from None
    return positions


def _shard_query(table: Table, listing: TicketListing, shard: int) -> dict[str, Any]:
    partition = f"TICKET#{listing.status}#{shard}"
    low, high = listing.bounds()
    condition, values = "GSI2PK = :h", {":h": {"S": partition}}
    if low and high:
        condition += " AND GSI2SK BETWEEN :lo AND :hi"
    elif low:
        condition += " AND GSI2SK > :lo"
    elif high:
        condition += " AND GSI2SK < :hi"
    values |= {":lo": {"S": low}} if low else {}
    values |= {":hi": {"S": high}} if high else {}
    return {
        "TableName": table.name,
        "IndexName": "gsi2",
        "KeyConditionExpression": condition,
        "ExpressionAttributeValues": values,
        "ScanIndexForward": False,
        "ReturnConsumedCapacity": "TOTAL",
    }


def _empty(listing: TicketListing) -> bool:
    low, high = listing.bounds()
    return bool(low and high and low >= high)


async def count_tickets(table: Table, listing: TicketListing) -> int:
    """How many tickets match, over every shard at once (Select=COUNT)."""
    if _empty(listing):
        return 0

    async def shard(i: int) -> int:
        params, total = _shard_query(table, listing, i) | {"Select": "COUNT"}, 0
        while True:
            response = await table.call("Query", **params)
            total += int(response.get("Count", 0))
            if "LastEvaluatedKey" not in response:
                return total
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    return sum(await asyncio.gather(*(shard(i) for i in range(listing.shards))))


async def list_tickets(table: Table, listing: TicketListing, first: int) -> TicketPage:
    """Tickets of one status, newest first: every shard queried at once, then merged."""
    shards = listing.shards
    positions: list[str | None] = (
        _decode(listing.after, shards) if listing.after is not None else [None] * shards
    )
    if _empty(listing):
        return TicketPage([], [], False)

    async def shard(i: int) -> tuple[list[Item], bool]:
        partition = f"TICKET#{listing.status}#{i}"
        params = _shard_query(table, listing, i) | {"Limit": first + 1}
        if position := positions[i]:
            pk = position.rsplit("#", 1)[1]
            key = {
                "GSI2PK": partition,
                "GSI2SK": position,
                "PK": f"TICKET#{pk}",
                "SK": f"TICKET#{pk}",
            }
            params["ExclusiveStartKey"] = {k: {"S": v} for k, v in key.items()}
        response = await table.call("Query", **params)
        return [from_dynamo(r) for r in response.get("Items", [])], "LastEvaluatedKey" in response

    results = await asyncio.gather(*(shard(i) for i in range(shards)))
    merged = heapq.merge(
        *([(i, item) for item in items] for i, (items, _more) in enumerate(results)),
        key=lambda pair: pair[1]["GSI2SK"],
        reverse=True,
    )
    taken: list[Item] = []
    cursors: list[str] = []
    consumed = [0] * shards
    for i, item in merged:
        if len(taken) == first:
            break
        taken.append(item)
        consumed[i] += 1
        positions[i] = item["GSI2SK"]
        cursors.append(_encode(positions))
    has_next = any(consumed[i] < len(items) or more for i, (items, more) in enumerate(results))
    return TicketPage(taken, cursors, has_next)
