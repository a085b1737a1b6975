"""Offices: items in their organization's partition under a composite sort key
``OFFICE#<country>#<state>#<city>#<zip>#<id>``, so each location filter is a key prefix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .errors import BadUserInput, NotFound
from .keys import ItemKey, NodeKey, new_id
from .model import OFFICE_COUNTER
from .table import Item, Table
from .tx import Tx, fail

__all__ = ["LEVELS", "Offices", "add_office", "office_prefix", "remove_office"]

LEVELS = ("country", "state", "city", "zip")


@dataclass(frozen=True)
class Offices:
    """An organization's offices under a location prefix (a ``loaders.Slice``); only the
    unfiltered list has a counter on the organization item."""

    node: NodeKey
    prefix: str = "OFFICE#"
    index: None = None

    @property
    def counter(self) -> str | None:
        return OFFICE_COUNTER if self.prefix == "OFFICE#" else None


def _part(level: str, value: str) -> str:
    if not value or len(value) > 64 or "#" in value:
        raise BadUserInput(f"{level} must be 1 to 64 characters without '#', got {value[:70]!r}")
    return value


def office_prefix(filters: Mapping[str, str | None]) -> str:
    """The sort-key prefix for location filters; a finer level needs every coarser one."""
    parts = []
    for i, level in enumerate(LEVELS):
        value = filters.get(level)
        if value is None:
            finer = [f for f in LEVELS[i + 1 :] if filters.get(f) is not None]
            if finer:
                raise BadUserInput(f"filtering by {finer[0]} needs {level} too")
            break
        parts.append(_part(level, value) + "#")
    return "OFFICE#" + "".join(parts)


async def add_office(
    table: Table, org: NodeKey, location: Mapping[str, str], address: str | None
) -> Item:
    """Put an office in the organization's partition and count it there."""
    office_id = new_id()
    path = "#".join(_part(level, location[level]) for level in LEVELS)
    item: Item = {"PK": str(org), "SK": f"OFFICE#{path}#{office_id}", "type": "OFFICE"}
    item |= {"id": office_id, **{level: location[level] for level in LEVELS}}
    if address is not None:
        item["address"] = address
    tx = Tx(table)
    tx.put(item, "attribute_not_exists(PK)")
    tx.count(org.item, OFFICE_COUNTER, 1, fail(NotFound(f"{org} does not exist")))
    await tx.commit()
    return item


async def remove_office(table: Table, org: NodeKey, office_id: str) -> bool:
    """Delete an office by id; ``False`` when the organization has no such office."""
    offices = await table.query_all(str(org), "OFFICE#")
    match = next((o for o in offices if o["id"] == office_id), None)
    if match is None:
        return False
    gone = NotFound(f"office {office_id} was removed concurrently")
    tx = Tx(table)
    tx.delete(ItemKey(match["PK"], match["SK"]), "attribute_exists(PK)", fail(gone))
    tx.count(org.item, OFFICE_COUNTER, -1, None)
    try:
        await tx.commit()
    except NotFound:
        return False
    return True
