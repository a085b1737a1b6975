"""The bench's data held in memory, indexed like the table and its ``inverted`` index."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.demo import DEMO_LAYOUT
from graph.keys import ItemKey
from graph.table import Item

__all__ = ["Memory"]


class Memory:
    """Items by key, and each partition of the table (by ``PK``) and of ``inverted`` (by
    ``SK``) sorted by its range key, as DynamoDB keeps them."""

    def __init__(self, items: Iterable[Item]) -> None:
        self.items: dict[ItemKey, Item] = {}
        self.partitions: dict[tuple[str | None, str], list[Item]] = {}
        for item in items:
            self.items[ItemKey(item["PK"], item["SK"])] = item
        for index in (None, "inverted"):
            hash_attr, range_attr = DEMO_LAYOUT.keys(index)
            for item in self.items.values():
                self.partitions.setdefault((index, item[hash_attr]), []).append(item)
            for (ix, _), members in self.partitions.items():
                if ix == index:
                    members.sort(key=lambda i, r=range_attr: i[r])  # type: ignore[misc]

    def get(self, key: ItemKey) -> Item | None:
        return self.items.get(key)

    def query(
        self,
        partition: str,
        prefix: str | None,
        *,
        index: str | None = None,
        limit: int | None = None,
        forward: bool = True,
        after: Any = None,
    ) -> list[Item]:
        """The items a Query page returns (``after`` is a range-key value to start past)."""
        range_attr = DEMO_LAYOUT.keys(index)[1]
        members = self.partitions.get((index, partition), [])
        if not forward:
            members = members[::-1]
        found = [
            i
            for i in members
            if (prefix is None or i[range_attr].startswith(prefix))
            and (after is None or (i[range_attr] > after if forward else i[range_attr] < after))
        ]
        return found if limit is None else found[:limit]
