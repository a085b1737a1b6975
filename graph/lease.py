"""A lease held in the table itself: one item naming its holder and when the lease expires, so
that exactly one process does a job (reading the table's stream: DynamoDB Streams allows about
two readers per shard) and another takes over when the holder stops renewing.

Every take and renewal is one conditional PutItem: it succeeds when there is no lease, when the
caller holds it already, or when it has expired. The holder renews every ``ttl / 3`` seconds; a
waiting process tries every as often, so it takes over at most ``ttl`` plus that after the
holder's last renewal. Expiry compares wall clocks: keep ``ttl`` well above the machines' skew.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from graph.errors import Conflict
from graph.keys import ItemKey
from graph.table import Item, Table, to_dynamo

__all__ = ["LEASE_PREFIX", "Lease", "LeaseHeld"]

LEASE_PREFIX = "EDGEWISE#lease#"  # key values no Edgewise node or edge has


class LeaseHeld(Conflict):
    """Another process holds the lease, and it has not expired."""

    def __init__(self, holder: str | None, expires: float | None) -> None:
        super().__init__(f"the lease is held by {holder} until {expires}")
        self.holder = holder
        self.expires = expires


@dataclass
class Lease:
    """The lease ``name`` in ``table`` for ``owner`` (unique per process)."""

    table: Table
    owner: str
    name: str = "stream"
    ttl: float = 10.0

    @property
    def key(self) -> ItemKey:
        value = LEASE_PREFIX + self.name
        return ItemKey(value, value)

    @property
    def renew_every(self) -> float:
        return self.ttl / 3

    async def acquire(self, state: dict[str, str] | None = None) -> None:
        """Take the lease, or renew it, keeping ``state`` in it (the holder's progress, for
        whoever holds it next); :class:`LeaseHeld` when another process holds it."""
        layout = self.table.layout
        now = time.time()
        item: Item = {
            layout.pk: self.key.pk,
            layout.sk: self.key.sk,
            "owner": self.owner,
            "expires": Decimal(f"{now + self.ttl:.3f}"),
        }
        if state:
            item["state"] = dict(state)
        params: dict[str, Any] = {
            "Item": to_dynamo(item),
            "ConditionExpression": "attribute_not_exists(#pk) OR #owner = :me OR #expires < :now",
            "ExpressionAttributeNames": {
                "#pk": layout.pk,
                "#owner": "owner",
                "#expires": "expires",
            },
            "ExpressionAttributeValues": {
                ":me": {"S": self.owner},
                ":now": {"N": f"{now:.3f}"},
            },
        }
        await self.table.write("PutItem", params, on_fail=_held, leaves=item)

    async def state(self) -> dict[str, str]:
        """The ``state`` the last holder kept in the lease (empty without one)."""
        item = await self.table.get_item(self.key)
        kept = (item or {}).get("state")
        return {str(k): str(v) for k, v in kept.items()} if isinstance(kept, dict) else {}

    async def release(self) -> None:
        """Give the lease up (if this process still holds it), so another takes it at once;
        its ``state`` stays for the next holder."""
        params: dict[str, Any] = {
            "Key": self.table.layout.key(self.key),
            "UpdateExpression": "SET #expires = :past",
            "ConditionExpression": "#owner = :me",
            "ExpressionAttributeNames": {"#owner": "owner", "#expires": "expires"},
            "ExpressionAttributeValues": {":me": {"S": self.owner}, ":past": {"N": "0"}},
        }
        with contextlib.suppress(LeaseHeld):
            await self.table.write("UpdateItem", params, on_fail=_held)

    def is_lease(self, key: ItemKey) -> bool:
        """Whether ``key`` is a lease item's (a change to it concerns no answer)."""
        return key.pk.startswith(LEASE_PREFIX)


def _held(old: Item | None) -> LeaseHeld:
    if old is None:
        return LeaseHeld(None, None)
    expires = old.get("expires")
    return LeaseHeld(old.get("owner"), float(expires) if expires is not None else None)
