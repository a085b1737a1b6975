"""Replicas of a path (``materialize:``, compiled in :mod:`model.replicas`), kept exact on every
write Edgewise makes.

A change of an edge on a replicated path (added, removed, a copied field changed) changes the
replicas of every instance of the path through that edge, in the change's own transaction. The
instances are found by walking from the edge's ends, backward to the starts and forward to the
ends, every listing strongly consistent where DynamoDB allows it (the table and its local
indexes; a global index cannot be).

Concurrent changes are ordered by a clock on each node of the path (:data:`CLOCK`; a node with
no item of its own, of an implicit type, keeps it in one small item of its partition,
:func:`clock_key`): a change
reads the clock of every node whose edges it lists before it lists them, and commits only if
those clocks are unchanged; it advances the clock of both ends of its edge and of every start
whose replicas it writes. So of two changes that could each miss the other's edge (a user
joining a group while the group subscribes to a product: seed 000's race), the second to commit
finds a clock moved, reads again, and writes the replica the first could not see. A listing
from a global index, which DynamoDB updates after the write, is checked against the node's
digest of its incoming edges (:func:`digest_attribute`, moved by each edge's own transaction)
and read again until the index has caught up.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from graph.errors import BadUserInput, Conflict, EdgewiseError, Unavailable
from graph.items import Codec, Ref
from graph.keys import ItemKey
from graph.reads import Branch, Listing, Reads
from graph.table import Failure, Item, Table, to_dynamo
from graph.writes.transaction import MAX_ACTIONS, Action
from model import EdgeType, Field, KeyValueError, Model, NodeType
from model.types import CLOCK_SK
from model.values import Replica

__all__ = [
    "ABSENT",
    "CLOCK",
    "PENDING",
    "Commit",
    "Delta",
    "Difference",
    "Moved",
    "Upkeep",
    "clock_key",
    "clock_of",
    "differences",
    "digest_attribute",
    "edge_hash",
    "holds",
    "joined",
    "on_clock",
    "pending",
    "replica_item",
    "replica_listing",
]

ATTEMPTS = 5
Difference = tuple[str, ItemKey, "Item | None"]  # missing|stale|extra, the key, the item wanted
Commit = Callable[[list[Action]], Awaitable[None]]
LAG_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)  # seconds between reads of a lagging index
CLOCK = "edgewiseClock"  # on each node of a replicated path: advanced by every change through it
PENDING = "edgewisePending"  # on a start: changes whose replicas are being written (read it walked)
ABSENT = object()  # a clock read from a node that has no item


class Moved(Conflict):
    """A node whose edges a write listed changed before the write committed: read again."""

    def __init__(self) -> None:
        super().__init__("the graph changed concurrently along a replicated path; try again")


def pending(item: Item | None) -> bool:
    """Whether a start's replicas are being written: its path is to be walked, not read."""
    return item is not None and int(item.get(PENDING) or 0) > 0


def clock_key(ref: Ref) -> ItemKey:
    """Where a node's clock (and, on a start, its pending mark) lives: its own item, or, for
    a node with no item (an implicit type), the item of sort key :data:`model.types.CLOCK_SK`
    in its partition, which the first change through it creates."""
    return ItemKey(ref.key.pk, CLOCK_SK) if ref.type.implicit else ref.key


def clock_of(item: Item | None) -> Any:
    """The clock a node's item holds: its number, None without one, ABSENT without an item."""
    if item is None:
        return ABSENT
    value = item.get(CLOCK)
    return None if value is None else int(value)


@dataclass
class Delta:
    """What a change does to the replicas: items to put and to delete, the clocks it read
    (each write is conditioned on them) and the nodes whose clock it advances."""

    puts: dict[ItemKey, Item] = field(default_factory=dict)
    deletes: set[ItemKey] = field(default_factory=set)
    clocks: dict[ItemKey, Any] = field(default_factory=dict)
    bumps: set[ItemKey] = field(default_factory=set)
    starts: set[ItemKey] = field(default_factory=set)  # whose replicas it writes
    adds: dict[ItemKey, dict[str, int]] = field(default_factory=dict)  # digests moved
    read: dict[ItemKey, Item | None] = field(default_factory=dict)  # node items as read

    def merge(self, other: Delta) -> Delta:
        """Both changes' replicas in one write (each clock as first read)."""
        for key in other.deletes:
            self.puts.pop(key, None)
        self.deletes |= other.deletes
        self.puts |= other.puts
        for key, clock in other.clocks.items():
            self.clocks.setdefault(key, clock)
        self.bumps |= other.bumps
        self.starts |= other.starts
        for key, adds in other.adds.items():
            mine = self.adds.setdefault(key, {})
            for attribute, value in adds.items():
                mine[attribute] = mine.get(attribute, 0) + value
        for key, item in other.read.items():
            self.read.setdefault(key, item)
        return self

    def size(self, actions: list[Action] | None = None) -> int:
        """How many actions :meth:`Upkeep.fold` makes of ``actions`` and this delta: one per
        item the delta writes or conditions on, none where an action is already on it."""
        actions = actions or []
        touched = self.clocks.keys() | self.bumps | self.adds.keys() | self.puts.keys()
        return len(actions) + len((touched | self.deletes) - {a.key for a in actions})


class Upkeep:
    """The replicas of one model, kept through one writer."""

    def __init__(self, codec: Codec, table: Table) -> None:
        self.model: Model = codec.model
        self.codec = codec
        self.table = table
        self.layout = table.layout
        self.hops: dict[str, list[tuple[Replica, int]]] = defaultdict(list)
        self.refs: dict[str, list[tuple[Replica, Field]]] = defaultdict(list)  # by owner type
        for replica in self.model.replicas:
            for i, hop in enumerate(replica.hops):
                if hop.ref:  # the last hop (model.replicas)
                    field = self.model.types[hop.start].fields[hop.field]
                    self.refs[hop.start].append((replica, field))
                else:
                    self.hops[hop.edge].append((replica, i))
        self._types = {r.type_value: r for r in self.model.replicas}
        # the edges listed from their `to` end (a global index, eventually consistent), whose
        # targets keep a digest of them: a hop read backward, or a hop along a reverse edge
        self.digested = {
            hop.edge
            for replica in self.model.replicas
            for i, hop in enumerate(replica.hops)
            if not hop.ref and (hop.far == "from" or i < len(replica.hops) - 1)
        }

    def replicated(self, edge: EdgeType) -> bool:
        return edge.label in self.hops

    def copied(self, edge: EdgeType, attributes: set[str]) -> bool:
        """Whether changing ``attributes`` of an ``edge`` item changes a replica."""
        return any(
            i == len(r.hops) - 1 and attributes & {a for _, a in r.copies}
            for r, i in self.hops.get(edge.label, ())
        )

    def is_replica(self, item: Item) -> bool:
        """Whether ``item`` is a replica item (of any path of the model)."""
        attribute = self.model.type_attribute
        if attribute is not None and attribute in item:
            return str(item[attribute]) in self._types
        key = self.codec.item_key(item)
        return any(
            r.pk.parse(key.pk) is not None and r.sk.parse(key.sk) is not None
            for r in self.model.replicas
        )

    # ---- a change --------------------------------------------------------------------------

    async def change(
        self, edge: EdgeType, source: Ref, target: Ref, after: Item | None, added: bool = True
    ) -> Delta:
        """The replicas' part of changing the ``edge`` item from ``source`` to ``target``:
        ``after`` is the item as the change leaves it (None: removed; else ``added``, or
        changed in place)."""
        delta = Delta()
        if not self.replicated(edge):
            return delta
        changed = self.codec.edge_key(edge, source.key, target.key)
        reads = Reads(self.table, consistent=True)
        for replica, i in self.hops[edge.label]:
            hop = replica.hops[i]
            near, far = (source, target) if hop.far == "to" else (target, source)
            starts = await self._backward(reads, delta, replica, i, near, changed, after)
            ends = await self._forward(reads, delta, replica, i, far, changed, after)
            for prefix in starts:
                delta.bumps.add(clock_key(prefix[0]))
                delta.starts.add(clock_key(prefix[0]))
                for suffix, last in ends:
                    item = self.item(replica, (*prefix, *suffix), last)
                    key = self.codec.item_key(item)
                    if after is None:
                        delta.deletes.add(key)
                    else:
                        delta.puts[key] = item
        if (after is None or added) and edge.label in self.digested:
            # the target's digest of its incoming edges moves where it is known (present as
            # read): one absent is unknown (edges written by another program) and stays so
            attribute = digest_attribute(edge)
            known = (await self._items(delta, [target]))[target.key]
            if known is not None and attribute in known:
                step = edge_hash(source.key) * (-1 if after is None else 1)
                delta.adds[clock_key(target)] = {attribute: step}
        delta.bumps |= {clock_key(source), clock_key(target)}
        return delta

    def digests(self, node: NodeType) -> dict[str, int]:
        """The digests a new node of type ``node`` starts with (it has no incoming edge yet,
        so they are known: zero)."""
        return {
            digest_attribute(self.model.edges[label]): 0
            for label in sorted(self.digested)
            if self.model.edges[label].target == node.name
        }

    def names(self, node: NodeType) -> bool:
        """Whether a reference field of ``node`` is the last hop of a replicated path."""
        return node.name in self.refs

    async def change_ref(self, owner: Ref, before: Item | None, after: Item | None) -> Delta:
        """The replicas' part of changing the item of ``owner``, whose reference field is the
        last hop of a replicated path: the instances through the nodes it named go, those
        through the nodes it names come (``None``: no item)."""
        delta = Delta()
        reads = Reads(self.table, consistent=True)
        for replica, reference in self.refs.get(owner.type.name, ()):
            targets = self.codec.targets_in(reference, owner.type)
            old = {t.key: t for t in targets(owner, before)}
            new = {t.key: t for t in targets(owner, after)}
            if old.keys() == new.keys():
                continue
            i = len(replica.hops) - 1
            starts = await self._backward(reads, delta, replica, i, owner, ItemKey("", ""), None)
            for prefix in starts:
                delta.bumps.add(clock_key(prefix[0]))
                delta.starts.add(clock_key(prefix[0]))
                for key, target in old.items():
                    if key not in new:
                        gone = self.item(replica, (*prefix, target), None)
                        delta.deletes.add(self.codec.item_key(gone))
                for target in new.values():
                    item = self.item(replica, (*prefix, target), None)
                    delta.puts[self.codec.item_key(item)] = item
            delta.bumps.add(clock_key(owner))
        return delta

    async def _backward(
        self,
        reads: Reads,
        delta: Delta,
        replica: Replica,
        i: int,
        near: Ref,
        changed: ItemKey,
        after: Item | None,
    ) -> list[tuple[Ref, ...]]:
        """Every instance of the path's first ``i`` hops that ends at ``near``, as its nodes."""
        paths: list[tuple[Ref, ...]] = [(near,)]
        for j in range(i - 1, -1, -1):
            hop = replica.hops[j]
            edge = self.model.edges[hop.edge]
            back = "from" if hop.far == "to" else "to"
            listed = await self._edges(reads, delta, edge, [p[0] for p in paths], hop.far)
            paths = [
                (self.codec.end(edge, item, back), *p)
                for p in paths
                for item in _adjusted(
                    self.codec, edge, listed[p[0].key], changed, after, p[0], hop.far
                )
            ]
        return paths

    async def _forward(
        self,
        reads: Reads,
        delta: Delta,
        replica: Replica,
        i: int,
        far: Ref,
        changed: ItemKey,
        after: Item | None,
    ) -> list[tuple[tuple[Ref, ...], Item | None]]:
        """Every instance of the path's hops after ``i`` that starts at ``far``, as its nodes,
        with the last hop's edge item (``after`` itself when the change is the last hop)."""
        paths: list[tuple[tuple[Ref, ...], Item | None]] = [((far,), after)]
        for j in range(i + 1, len(replica.hops)):
            hop = replica.hops[j]
            if hop.ref:  # the last hop: the nodes the owner's item names
                owners = await self._items(delta, [p[-1] for p, _ in paths])
                targets = self.codec.targets_in(
                    self.model.types[hop.start].fields[hop.field], self.model.types[hop.start]
                )
                paths = [
                    ((*p, target), None)
                    for p, _ in paths
                    for target in targets(p[-1], owners[p[-1].key])
                ]
                continue
            edge = self.model.edges[hop.edge]
            near = "from" if hop.far == "to" else "to"
            listed = await self._edges(reads, delta, edge, [p[-1] for p, _ in paths], near)
            paths = [
                ((*p, self.codec.end(edge, item, hop.far)), item)
                for p, _ in paths
                for item in _adjusted(
                    self.codec, edge, listed[p[-1].key], changed, after, p[-1], near
                )
            ]
        return paths

    async def _edges(
        self, reads: Reads, delta: Delta, edge: EdgeType, nodes: list[Ref], end: str
    ) -> dict[ItemKey, list[Item]]:
        """The ``edge`` items at each node's ``end``, each node's clock read first. A listing
        from a global index (the ``to`` end) is checked against the node's digest of its
        incoming edges and read again until the index has caught up."""
        clocks = {n.key: clock_key(n) for n in nodes}
        distinct = list(clocks)
        await self._items(delta, nodes)
        listings = []
        for key in distinct:
            listing = self.codec.edges_at(edge, key, end)
            assert listing is not None  # check-model refuses a replica it cannot list
            listings.append(listing)
        pages = await reads.alls.load_many(listings)
        if end == "to":
            pages = [
                await self._caught_up(delta, edge, clocks[key], listing, items)
                for key, listing, items in zip(distinct, listings, pages, strict=True)
            ]
        return dict(zip(distinct, pages, strict=True))

    async def _items(self, delta: Delta, nodes: list[Ref]) -> dict[ItemKey, Item | None]:
        """The nodes' items (a node with no item: its clock's), each read once per change
        (strongly consistent), and its clock with it: the change commits only if it is
        unchanged."""
        keys = {n.key: clock_key(n) for n in nodes}
        unread = list(dict.fromkeys(k for k in keys.values() if k not in delta.read))
        if unread:
            found = await self.table.get_many(unread, consistent=True)
            for key in unread:
                delta.read[key] = found.get(key)
                delta.clocks.setdefault(key, clock_of(found.get(key)))
        return {n.key: delta.read[keys[n.key]] for n in nodes}

    async def _caught_up(
        self, delta: Delta, edge: EdgeType, key: ItemKey, listing: Listing, items: list[Item]
    ) -> list[Item]:
        """``items`` once their digest is the node's (an index is eventually consistent: an
        edge written a moment ago may not be in it yet); a node with no digest (edges written
        before its replica was declared) is taken as listed."""
        attribute = digest_attribute(edge)
        for wait in LAG_WAITS:
            node = delta.read.get(key)
            expected = None if node is None else node.get(attribute)
            listed = sum(edge_hash(self.codec.end(edge, i, "from").key) for i in items)
            if expected is None or int(expected) == listed:
                return items
            await asyncio.sleep(wait)
            node = delta.read[key] = await self.table.get_item(key)
            delta.clocks[key] = clock_of(node)
            items = await Reads(self.table, consistent=True).alls.load(listing)
        raise Unavailable(
            f"the index {listing.index} has not caught up with the {edge.label} edges of "
            f"{key.pk}; try again"
        )

    def item(self, replica: Replica, nodes: tuple[Ref, ...], last: Item | None) -> Item:
        return replica_item(self.codec, replica, nodes, last)

    # ---- a start's replicas, compared with its path ----------------------------------------

    def holds(self, replica: Replica, item: Item) -> bool:
        """Whether ``item`` is one of ``replica``'s items."""
        return holds(self.codec, replica, item)

    def start_of(self, replica: Replica, key: ItemKey) -> Ref | None:
        """The start node whose partition holds a replica item."""
        values = replica.pk.parse(key.pk)
        if values is None:
            return None
        return self.codec.ref(self.model.types[replica.start], {"id": values["from"]})

    async def desired(self, replica: Replica, start: Ref) -> dict[ItemKey, Item]:
        """The replica items ``start``'s path calls for, walked with consistent reads."""
        reads = Reads(self.table, consistent=True)
        walked = await self._forward(reads, Delta(), replica, -1, start, ItemKey("", ""), None)
        items = (self.item(replica, nodes, last) for nodes, last in walked)
        return {self.codec.item_key(item): item for item in items}

    async def stored(self, replica: Replica, start: Ref) -> dict[ItemKey, Item]:
        """The replica items in ``start``'s partition (a consistent Query)."""
        listing = replica_listing(self.codec, replica, start)
        items = await Reads(self.table, consistent=True).alls.load(listing)
        return {self.codec.item_key(i): i for i in items if self.holds(replica, i)}

    async def recompute(
        self,
        start: Ref,
        replicas: list[Replica],
        commit: Commit | None,
        last: Callable[[Any], list[Action]] | None = None,
    ) -> list[Difference]:
        """Compare ``start``'s replicas with its path and (``commit``) write the difference, in
        transactions conditioned on the start's clock as read before the walk, so a change made
        meanwhile makes it compare again; ``last(clock)`` gives the last transaction's check of
        the clock instead (a pending mark cleared). Returns the differences found."""
        clocked = clock_key(start)
        for _ in range(ATTEMPTS):
            item = await self.table.get_item(clocked)
            found: list[Difference] = []
            # none, or another type's; an implicit start is always there (``item``: its clock)
            gone = not start.type.implicit and self.codec.own(start.type, item) is None
            for replica in replicas:
                desired = {} if gone else await self.desired(replica, start)
                stored = await self.stored(replica, start)
                found += differences(self.model, replica, desired, stored)
            if commit is None or not (found or last):
                return found
            writes = [self._write(d) for d in found]
            chunks = [writes[at : at + MAX_ACTIONS - 2] for at in range(0, len(writes), 98)]
            try:
                for i, chunk in enumerate(chunks or [[]]):
                    clock = clock_of(item)
                    if last is not None and i >= len(chunks) - 1:
                        checks = last(clock)
                    else:
                        check = Action("ConditionCheck", clocked, {"Key": self.layout.key(clocked)})
                        on_clock(check, self.layout.pk, clock)
                        checks = [check]
                    await commit([*checks, *chunk])
            except Moved:
                continue
            return found
        raise Conflict(f"{start.key.pk} keeps changing concurrently; try again")

    def _write(self, difference: Difference) -> Action:
        _, key, item = difference
        if item is None:
            return Action("Delete", key, {"Key": self.layout.key(key)})
        return Action("Put", key, {"Item": to_dynamo(item)}, leaves=item)

    async def rebuild(
        self,
        replicas: list[Replica],
        items: list[Item],
        commit: Commit | None,
        progress: Callable[[int], object] | None = None,
    ) -> list[Difference]:
        """Every difference between the replicas and their paths: found in ``items`` (the table
        read whole), then each start that differs compared again with consistent reads and
        (``commit``) written."""
        graph = [i for i in items if not self.is_replica(i)]
        wanted = joined(self.codec, graph)
        found: list[Difference] = []
        for replica in replicas:
            desired = {k: i for k, i in wanted.items() if self.holds(replica, i)}
            stored = {self.codec.item_key(i): i for i in items if self.holds(replica, i)}
            starts: dict[ItemKey, Ref] = {}
            for _, key, _ in differences(self.model, replica, desired, stored):
                start = self.start_of(replica, key)
                if start is not None:
                    starts.setdefault(start.key, start)
            for start in starts.values():
                found += await self.recompute(start, [replica], commit)
                if progress is not None:
                    progress(1)
        return found

    # ---- into a transaction ----------------------------------------------------------------

    def fold(self, actions: list[Action], delta: Delta) -> list[Action]:
        """``actions`` with the delta's clocks as conditions and advances (on an action already
        on that item, or a new one) and its replica items put and deleted."""
        layout = self.layout
        by_key = {a.key: a for a in actions}
        for key in dict.fromkeys([*delta.clocks, *delta.bumps]):
            action = by_key.get(key)
            if action is None:
                action = by_key[key] = Action("ConditionCheck", key, {"Key": layout.key(key)})
                if key in delta.bumps and key.sk != CLOCK_SK:  # never onto a node that is gone
                    action.condition = f"attribute_exists({action.expr.name(layout.pk)})"
                    action.on_fail = _always_moved
                actions.append(action)
            if key in delta.clocks:
                on_clock(action, layout.pk, delta.clocks[key])
            if key in delta.bumps:
                _add(action, CLOCK, 1)
        for key, adds in delta.adds.items():
            action = by_key.get(key)
            if action is None:
                action = by_key[key] = Action("ConditionCheck", key, {"Key": layout.key(key)})
                if key.sk != CLOCK_SK:  # a clock's item is made by the first change
                    action.condition = f"attribute_exists({action.expr.name(layout.pk)})"
                    action.on_fail = _always_moved
                actions.append(action)
            for attribute, value in adds.items():
                _add(action, attribute, value)
        for key, item in delta.puts.items():
            if key not in by_key:
                actions.append(Action("Put", key, {"Item": to_dynamo(item)}, leaves=item))
        for key in delta.deletes - set(delta.puts):
            if key not in by_key:
                actions.append(Action("Delete", key, {"Key": layout.key(key)}))
        return actions


def holds(codec: Codec, replica: Replica, item: Item) -> bool:
    """Whether ``item`` is one of ``replica``'s items (its type value, its keys)."""
    attribute = codec.model.type_attribute
    if attribute is not None and str(item.get(attribute)) != replica.type_value:
        return False
    key = codec.item_key(item)
    return replica.pk.parse(key.pk) is not None and replica.sk.parse(key.sk) is not None


def replica_listing(codec: Codec, replica: Replica, start: Ref, to: str | None = None) -> Listing:
    """The Query of ``start``'s replica items (of the end whose id is ``to``, when given)."""
    partition = replica.pk.format({"from": codec.id_of(start)})
    prefix = replica.sk.prefix({"to": to}) if to is not None else replica.sk.literal_prefix
    return Listing(None, (Branch(partition, prefix),))


def replica_item(codec: Codec, replica: Replica, nodes: tuple[Ref, ...], last: Item | None) -> Item:
    """The replica item of one instance of the path (``nodes`` from start to end; ``last``: the
    last hop's edge item, whose copied fields it keeps)."""
    ids = tuple(codec.id_of(n) for n in nodes)
    values = replica.key_values(ids)
    try:
        pk, sk = replica.pk.format(values), replica.sk.format(values)
    except KeyValueError as exc:
        raise BadUserInput(f"the replica {replica.name} cannot hold this path: {exc}") from exc
    layout, model = codec.layout, codec.model
    item: Item = {layout.pk: pk, layout.sk: sk}
    if model.type_attribute is not None:
        item[model.type_attribute] = replica.type_value
    for _, attribute in replica.copies:
        if last is not None and last.get(attribute) is not None:
            item[attribute] = last[attribute]
    return item


def joined(codec: Codec, items: Iterable[Item]) -> dict[ItemKey, Item]:
    """Every replica item the model's paths call for among ``items`` (a whole graph: sample
    data, a table read whole), joined in memory: one per instance of each path from a node
    that has its item, or (of an implicit type) that an edge has at one end."""
    model = codec.model
    if not model.replicas:
        return {}
    nodes: dict[ItemKey, Ref] = {}
    edges: dict[tuple[str, str, ItemKey], list[Item]] = defaultdict(list)
    for item in items:
        node = codec.node_type(item)
        if node is not None:
            nodes[codec.item_key(item)] = Ref(node, codec.item_key(item), item)
            continue
        edge = codec.edge_type(item)
        if edge is not None:
            for end in ("from", "to"):
                ref = codec.end(edge, item, end)
                edges[(edge.label, end, ref.key)].append(item)
                if ref.type.implicit:  # it exists while an edge is keyed under it
                    nodes.setdefault(ref.key, ref)
    out: dict[ItemKey, Item] = {}
    for replica in model.replicas:
        paths: list[tuple[tuple[Ref, ...], Item | None]] = [
            ((ref,), None) for ref in nodes.values() if ref.type.name == replica.start
        ]
        for hop in replica.hops:
            if hop.ref:
                owner = model.types[hop.start]
                targets = codec.targets_in(owner.fields[hop.field], owner)
                paths = [
                    ((*path, target), None)
                    for path, _ in paths
                    for target in targets(path[-1], _item_of(nodes, path[-1]))
                ]
                continue
            edge = model.edges[hop.edge]
            near = "from" if hop.far == "to" else "to"
            paths = [
                ((*path, codec.end(edge, item, hop.far)), item)
                for path, _ in paths
                for item in edges[(edge.label, near, path[-1].key)]
            ]
        for path, last in paths:
            item = replica_item(codec, replica, path, last)
            out[codec.item_key(item)] = item
    return out


def differences(
    model: Model, replica: Replica, desired: dict[ItemKey, Item], stored: dict[ItemKey, Item]
) -> list[Difference]:
    """``missing``, ``stale`` (a copied field or the type differs) and ``extra`` replica items,
    in key order."""
    owned = [a for _, a in replica.copies]
    if model.type_attribute is not None:
        owned.append(model.type_attribute)
    found: list[Difference] = []
    for key, item in desired.items():
        old = stored.get(key)
        if old is None:
            found.append(("missing", key, item))
        elif any(old.get(a) != item.get(a) for a in owned):
            found.append(("stale", key, item))
    found += [("extra", key, None) for key in stored if key not in desired]
    return sorted(found, key=lambda d: (str(d[1].pk), str(d[1].sk)))


def _item_of(nodes: dict[ItemKey, Ref], ref: Ref) -> Item | None:
    found = nodes.get(ref.key)
    return None if found is None else found.item


def _adjusted(
    codec: Codec,
    edge: EdgeType,
    items: list[Item],
    changed: ItemKey,
    after: Item | None,
    node: Ref,
    end: str,
) -> list[Item]:
    """A listing of ``edge`` items at ``node`` as the change leaves it: the changed edge as it
    will be (a path may follow one edge type twice)."""
    kept = [item for item in items if codec.item_key(item) != changed]
    if (
        after is not None
        and codec.edge_type(after) is edge
        and codec.end(edge, after, end).key == node.key
    ):
        kept.append(after)
    return kept


def _always_moved(_old: Item | None) -> EdgewiseError:
    return Moved()


def on_clock(action: Action, pk: str, clock: Any) -> None:
    e = action.expr
    if clock is ABSENT:
        test = f"attribute_not_exists({e.name(pk)})"
    elif clock is None:
        test = f"attribute_exists({e.name(pk)}) AND attribute_not_exists({e.name(CLOCK)})"
    else:
        test = f"{e.name(CLOCK)} = {e.value(clock)}"
    action.condition = f"{action.condition} AND {test}" if action.condition else test
    action.on_fail = _moved_or(action.on_fail, clock)


def _moved_or(failure: Failure | None, clock: Any) -> Failure:
    def fail(old: Item | None) -> EdgewiseError:
        if clock_of(old) != clock or failure is None:
            return Moved()
        return failure(old)

    return fail


def _add(action: Action, attribute: str, value: int) -> None:
    """Add ``value`` to a number attribute of the item the action writes: ``ADD`` in an Update
    (a ConditionCheck becomes one), the sum in a Put; nothing on a Delete."""
    if action.kind == "Delete":
        return
    if action.kind == "Put":
        assert action.leaves is not None
        item = action.leaves
        item[attribute] = int(item.get(attribute) or 0) + value
        action.body["Item"] = to_dynamo(item)
        return
    e = action.expr
    clause = f"{e.name(attribute)} {e.value(value)}"
    if action.kind == "ConditionCheck":
        action.kind = "Update"
        action.body["UpdateExpression"] = f"ADD {clause}"
        return
    expression = action.body.get("UpdateExpression", "")
    joined = (
        f"{expression}, {clause}" if " ADD " in f" {expression}" else f"{expression} ADD {clause}"
    )
    action.body["UpdateExpression"] = joined.strip()


def digest_attribute(edge: EdgeType) -> str:
    """The attribute of a node summing a hash of the source of each ``edge`` it is the target
    of: what an eventually consistent index listing them is checked against."""
    return f"edgewiseIn{edge.label}"


def edge_hash(key: ItemKey) -> int:
    """The hash of an edge's source that its target's digest sums (64 bits of BLAKE2b)."""
    digest = hashlib.blake2b(f"{key.pk}\x00{key.sk}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")
