"""The writes the engine and the model's hooks make: one class, :class:`Writer`, whose node and
edge writes are :mod:`graph.writes.nodes`' and :mod:`graph.writes.edges`', its items
:mod:`graph.writes.items`', and their commit :mod:`graph.writes.commit`'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from graph.items import Ref
from graph.keys import ItemKey
from graph.table import Item
from graph.writes import edges, nodes
from graph.writes.commit import Committer
from model import EdgeType, Field, NodeType

__all__ = ["Writer"]


class Writer(Committer):
    """Writes of one model's items through one table (a request's view)."""

    # ---- items -----------------------------------------------------------------------------

    def node_item(self, node: NodeType, values: Mapping[str, Any], at: str | None) -> Item:
        """A node's item for its field values (GraphQL names; key placeholders included)."""
        return self.items.node_item(node, values, at)

    def index_attributes(self, writes: Iterable[Any], values: Mapping[str, Any]) -> Item:
        """The index key attributes for ``values``; an index whose templates lack a value is
        left out (a sparse index)."""
        return self.items.index_attributes(writes, values)

    def edge_item(
        self,
        edge: EdgeType,
        source: Ref,
        target: Ref,
        fields: Mapping[str, Any],
        ends: Mapping[str, Mapping[str, Any]],
    ) -> Item:
        """An edge item; ``ends`` holds each end's field values for copies."""
        return self.items.edge_item(edge, source, target, fields, ends)

    def values_of(self, node: NodeType, item: Mapping[str, Any]) -> dict[str, Any]:
        """Field values (GraphQL names) of a stored item, key placeholders included."""
        return self.items.values_of(node, item)

    def claim_item(self, field: Field, value: Any, owner: ItemKey) -> Item:
        """The item claiming a unique field's value for its node (``owner``: the node's key)."""
        return self.items.claim_item(field, value, owner)

    # ---- nodes -----------------------------------------------------------------------------

    async def create(self, node: NodeType, values: Mapping[str, Any]) -> Item:
        """Put a new node; an existing key is CONFLICT. A child's parent must exist."""
        return await nodes.create(self, node, values)

    async def update(
        self,
        node: NodeType,
        key: ItemKey,
        changes: Mapping[str, Any],
        expected: int | None = None,
        read: Item | None = None,
    ) -> Item:
        """Set fields (``None`` removes one), refresh index attributes and the copies on edges,
        and bump the version. A stale ``expected`` version is CONFLICT; without one, a change
        made concurrently is read again and the update applied over it (a few times). ``read``:
        the item as the caller just read it (strongly consistent), so the first try does not
        read it again."""
        return await nodes.update(self, node, key, changes, expected, read)

    # ---- edges -----------------------------------------------------------------------------

    async def add_edge(
        self, edge: EdgeType, source: Ref, target: Ref, fields: Mapping[str, Any]
    ) -> Item:
        """Put an edge; both ends must exist (checked in the same transaction), a repeated edge
        is CONFLICT, and so is a second edge at an end that is ``one``: conditioned on that
        end's counter in the same transaction when the edge is counted, else read first."""
        return await edges.add_edge(self, edge, source, target, fields)

    async def remove_edge(self, edge: EdgeType, source: Ref, target: Ref) -> bool:
        """Delete an edge; False when there was none."""
        return await edges.remove_edge(self, edge, source, target)

    # ---- building blocks for hooks ---------------------------------------------------------

    async def insert(
        self, items: Iterable[Item], counts: Iterable[tuple[Ref, Mapping[str, int]]] = ()
    ) -> None:
        """Put new items (CONFLICT when a key is taken) and add to counters of existing nodes
        (NOT_FOUND when one is missing), in one write: a node with the edge that reaches it, a
        child counted on its parent."""
        await edges.insert(self, items, counts)

    async def update_edge(
        self, edge: EdgeType, source: Ref, target: Ref, changes: Mapping[str, Any]
    ) -> Item:
        """Set fields of an existing edge (GraphQL names; ``None`` removes one) in one
        UpdateItem; NOT_FOUND when there is no such edge. Returns the edge as it now is."""
        return await edges.update_edge(self, edge, source, target, changes)

    async def find_child(
        self, node: NodeType, parent: Ref, values: Mapping[str, Any]
    ) -> Item | None:
        """The first ``node`` item in ``parent``'s partition whose key values include
        ``values`` (a child named by part of its key, e.g. its id without its location): one
        Query under the sort-key prefix ``values`` fix, following its pages."""
        return await nodes.find_child(self, node, parent, values)

    async def delete_child(self, node: NodeType, key: ItemKey) -> bool:
        """Delete a child that has no children or edges of its own and uncount it on its parent,
        in one transaction; False when it is already gone."""
        return await nodes.delete_child(self, node, key)
