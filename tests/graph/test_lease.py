"""The lease item (graph.lease) on moto: one holder at a time, renewal, takeover after expiry,
release."""

from __future__ import annotations

import asyncio

import pytest

from graph.lease import Lease, LeaseHeld
from graph.table import Table


async def test_a_second_process_waits_while_the_lease_is_held(table: Table) -> None:
    first, second = Lease(table, "relay-1", ttl=10), Lease(table, "relay-2", ttl=10)
    await first.acquire()
    with pytest.raises(LeaseHeld) as held:
        await second.acquire()
    assert held.value.holder == "relay-1"
    await first.acquire()  # the holder renews


async def test_the_lease_is_taken_over_once_it_expired(table: Table) -> None:
    first, second = Lease(table, "relay-1", ttl=0.3), Lease(table, "relay-2", ttl=0.3)
    await first.acquire()
    await asyncio.sleep(0.4)  # the holder stopped renewing
    await second.acquire()
    with pytest.raises(LeaseHeld):
        await first.acquire()


async def test_a_released_lease_is_taken_at_once(table: Table) -> None:
    first, second = Lease(table, "relay-1", ttl=60), Lease(table, "relay-2", ttl=60)
    await first.acquire()
    await first.release()
    await second.acquire()
    await first.release()  # not the holder any more: changes nothing
    with pytest.raises(LeaseHeld):
        await first.acquire()
    assert first.is_lease(first.key)
