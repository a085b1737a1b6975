"""What an answer read, so a live query knows which changed items concern it.

:class:`graph.reads.Reads` records into a :class:`Watched` (when given one) every key it read
by key (found or not: an item created later concerns the answer too), every partition a Query
listed (of the table or an index), and the key of every item a Query returned. A changed item
concerns the answer when its key was read or listed, or when it lies in a listed partition: its
key tells the table's partition and that of an index keyed by the table's own key attributes
(``inverted``); an index keyed by other attributes (``gsi2``) needs the item's attributes
(:meth:`Watched.needs_items`), read once per batch of changes by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graph.keys import ItemKey
from graph.table import Layout

__all__ = ["Partition", "Watched", "partitions_of"]

Partition = tuple[str | None, str]  # (index, or None for the table; the partition's value)


@dataclass
class Watched:
    """Item keys and partitions one answer read."""

    keys: set[ItemKey] = field(default_factory=set)
    partitions: set[Partition] = field(default_factory=set)

    def listed(self, index: str | None, partition: str, keys: Iterable[ItemKey]) -> None:
        self.partitions.add((index, partition))
        self.keys.update(keys)

    def needs_items(self, layout: Layout) -> bool:
        """Whether a listed index partition can be told only from an item's attributes."""
        own = (layout.pk, layout.sk)
        return any(
            index is not None and layout.keys(index)[0] not in own for index, _ in self.partitions
        )


def partitions_of(
    layout: Layout, key: ItemKey, item: Mapping[str, Any] | None = None
) -> list[Partition]:
    """The partitions (of the table and of each index) an item with ``key`` lies in; an index
    keyed by other attributes only when ``item`` (its attributes) is given and has them."""
    found: list[Partition] = [(None, key.pk)]
    for index, (hash_key, _range) in layout.indexes.items():
        if hash_key == layout.pk:
            found.append((index, key.pk))
        elif hash_key == layout.sk:
            found.append((index, key.sk))
        elif item is not None and isinstance(item.get(hash_key), str):
            found.append((index, item[hash_key]))
    return found
