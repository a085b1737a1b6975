"""Deletes too large for one transaction, for a model with a ``deletions`` setting
(:class:`model.types.Deletions`).

When the node, its unique claims, its children, its edges in both directions and the counters
at their far ends fit one transaction, the delete is one, conditioned on the node's version and
counters being as read (so no edge or child was added meanwhile). Otherwise the node is first
*marked*: its mark attribute set and its item listed on the deletions index, its unique claims
freed. From then on readers treat it as gone and no edge or child can be added to it (every
write that needs a live node checks :func:`unmarked`). Then its children and edges are removed
in idempotent transactions (each delete conditioned on the item still being there, so two runs
never decrement a far-end counter twice), then the node item. :func:`resume_deletions` finishes
every delete left part-way (a crash, a timeout), at the next start of the server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from graph.errors import Conflict, EdgewiseError, NotFound
from graph.items import Ref
from graph.keys import ItemKey
from graph.marks import is_marked, unmarked
from graph.reads import Branch, Listing, Reads
from graph.table import Failure, Item
from graph.writes.commit import ATTEMPTS, Committer
from graph.writes.items import describe
from graph.writes.nodes import claims
from graph.writes.replicas import Delta, Moved
from graph.writes.transaction import MAX_ACTIONS, Action
from model import EdgeType, Model, NodeType

__all__ = [
    "delete",
    "delete_node",
    "finish_deletion",
    "related",
    "resume_deletions",
    "take",
]


class _Raced(Conflict):
    """What was read changed before the write: read again."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} changed concurrently; try again")


def _counted(model: Model, node: NodeType) -> bool:
    """Whether every edge and child a node of this type can have is counted on its item, so a
    condition on its counters sees one added concurrently."""
    edges = all(
        e.count == "counter" for e in model.edges.values() if node.name in (e.source, e.target)
    )
    return edges and all(
        t.parent.count == "counter"
        for t in model.types.values()
        if t.parent is not None and t.parent.type == node.name
    )


def _pack(
    writer: Committer, removals: list[_Removal], room: int, conditioned: bool = True
) -> tuple[list[Action], list[_Removal]]:
    """Deletes of as many removals as fit in ``room`` actions, with one counter update per far
    node; and the rest. ``conditioned`` (the marked delete's steps): each on the item still
    being there, so a concurrent run removing the same item cancels this batch (and it reads
    again) instead of both decrementing the far end's counter."""
    deltas: dict[ItemKey, dict[str, int]] = {}
    actions: list[Action] = []
    taken = 0
    for removal in removals:
        cost = 1 + (removal.far is not None and removal.far not in deltas)
        if taken + len(deltas) + cost > room:
            break
        taken += 1
        if conditioned:
            actions.append(_delete(writer, removal.key, writer.layout.pk))
        else:
            actions.append(Action("Delete", removal.key, {"Key": writer.layout.key(removal.key)}))
        if removal.far is not None and removal.counter is not None:
            counts = deltas.setdefault(removal.far, {})
            counts[removal.counter] = counts.get(removal.counter, 0) - 1
    for far, counts in deltas.items():
        update = writer.update_action(far, {}, adds=counts)
        if conditioned:
            update.condition = f"attribute_exists({update.expr.name(writer.layout.pk)})"
            update.on_fail = _raced(far.pk)
        actions.append(update)
    return actions, removals[taken:]


def _delete(writer: Committer, key: ItemKey, must_have: str) -> Action:
    """A Delete of an item that must still have ``must_have``; else it is read again."""
    action = Action("Delete", key, {"Key": writer.layout.key(key)})
    action.condition = f"attribute_exists({action.expr.name(must_have)})"
    action.on_fail = _raced(key.sk)
    return action


def _raced(what: str) -> Failure:
    return lambda _old: _Raced(what)


def _unchanged(
    writer: Committer, action: Action, node: NodeType, old: Item, counters: bool = True
) -> None:
    """Condition ``action`` on the node existing unmarked at its version, with ``counters`` as
    read (no edge or child added or removed meanwhile)."""
    model, e = writer.model, action.expr
    parts = [
        f"attribute_exists({e.name(writer.layout.pk)}){unmarked(model, e)}"
        + writer.codec.of_type(node, e)
    ]
    version = model.version_attribute
    if version is not None and version in old:
        parts.append(f"{e.name(version)} = {e.value(old[version])}")
    for counter in node.counters(model) if counters else ():
        name = e.name(counter)
        parts.append(
            f"{name} = {e.value(old[counter])}"
            if counter in old
            else f"attribute_not_exists({name})"
        )
    action.condition = " AND ".join(parts)
    gone = NotFound(f"{node.name} {action.key.pk} does not exist")
    codec = writer.codec
    action.on_fail = lambda current: (
        gone if codec.own(node, current) is None else _Raced(action.key.pk)
    )


async def delete_node(
    writer: Committer, node: NodeType, key: ItemKey, max_actions: int = MAX_ACTIONS
) -> None:
    """Delete a node with its unique claims, children and edges (see the module); NOT_FOUND
    when there is none. Deleting a marked node finishes its delete."""
    model = writer.model
    deletions = model.deletions
    assert deletions is not None
    if max_actions < 2:
        raise ValueError("max_actions: a transaction must hold an edge and its far-end counter")
    contended = False
    for _ in range(ATTEMPTS):
        old = writer.codec.own(node, await writer.table.get_item(key))  # another type's: none
        if old is None:
            raise NotFound(f"{node.name} {describe(node, key)} does not exist")
        if is_marked(model, old):
            await finish_deletion(writer, node, key, max_actions)
            return
        removals = await related(writer, node, key)
        along = claims(writer, node, key, writer.items.values_of(node, old), {})
        if node.parent_counter is not None:
            parent = writer.items.parent_key(node, key)
            along.append(writer.update_action(parent, {}, adds={node.parent_counter: -1}))
        room = max_actions - 1 - len(along)
        if not contended and _counted(model, node) and _cost(removals) <= room:
            try:
                taken, delta, rest = await take(writer, removals, room, _cost)
                if not rest:
                    delete = _delete(writer, key, writer.layout.pk)
                    _unchanged(writer, delete, node, old)
                    batch, _ = _pack(writer, taken, room)
                    await writer.commit_delta([delete, *along, *batch], delta)
                    return
            except (_Raced, Moved):
                contended = True  # edges come and go: mark it, which they cannot race
                continue
        sets = {deletions.attribute: True, deletions.index.pk: deletions.partition}
        if deletions.index.sk is not None:
            sets[deletions.index.sk] = writer.codec.global_id(Ref(node, key))
        mark = writer.update_action(key, sets)
        _unchanged(writer, mark, node, old, counters=False)  # what follows reads them afresh
        try:
            await writer.commit([mark, *along])
        except _Raced:
            continue
        await finish_deletion(writer, node, key, max_actions)
        return
    raise Conflict(f"{node.name} {key.pk} keeps changing concurrently; try again")


async def finish_deletion(
    writer: Committer, node: NodeType, key: ItemKey, max_actions: int = MAX_ACTIONS
) -> None:
    """Remove a marked node's children and edges batch by batch, then the node. Safe to run
    again, and concurrently with another run."""
    while removals := await related(writer, node, key):
        while removals:
            try:
                taken, delta, removals = await take(writer, removals, max_actions, _cost)
                batch, _ = _pack(writer, taken, max_actions)
                await writer.commit_delta(batch, delta)
            except (_Raced, Moved):
                break  # another run removed one of these first, or a path moved: read again
    deletions = writer.model.deletions
    assert deletions is not None
    last = _delete(writer, key, deletions.attribute)
    with contextlib.suppress(_Raced):  # another run deleted it first
        await writer.commit([last])


async def resume_deletions(writer: Committer) -> int:
    """Finish every delete left part-way; returns how many (0 without a ``deletions``
    setting)."""
    deletions = writer.model.deletions
    if deletions is None:
        return 0
    listing = Listing(deletions.index.name, (Branch(deletions.partition),))
    finished = 0
    for item in await Reads(writer.table).alls.load(listing):
        node = writer.codec.node_type(item)
        if node is None or not is_marked(writer.model, item):
            continue
        await finish_deletion(writer, node, writer.codec.item_key(item))
        finished += 1
    return finished


@dataclass(frozen=True)
class _Removal:
    """An item that goes with a deleted node, the counter it holds at its far end, and for an
    edge, what it is (a replica may go with it)."""

    key: ItemKey
    far: ItemKey | None = None
    counter: str | None = None
    change: tuple[EdgeType, Ref, Ref] | None = None


def _cost(removals: list[_Removal]) -> int:
    return len(removals) + len({r.far for r in removals if r.far is not None})


async def delete(writer: Committer, node: NodeType, key: ItemKey) -> None:
    """Delete a node with its unique claims, its children and its edges in both directions,
    decrementing the counters at their far ends: one transaction, conditioned on the node's
    version and counters being as read, when it fits; else the children and edges first, in
    transactions of up to 100 actions, and the node last. With a ``deletions`` setting, the
    protocol of :mod:`graph.writes.deletes` (the node marked first, then removed in steps)."""
    if writer.model.deletions is not None:
        await delete_node(writer, node, key, writer.room)
        return
    old = writer.codec.own(node, await writer.table.get_item(key))  # another type's: none
    if old is None:
        raise NotFound(f"{node.name} {describe(node, key)} does not exist")
    removals = await related(writer, node, key)
    gone = NotFound(f"{node.name} {key.pk} does not exist")

    def changed(current: Item | None) -> EdgewiseError:
        if writer.codec.own(node, current) is None:
            return gone
        return Conflict(f"{node.name} {key.pk} was changed concurrently; read it again")

    version_attr = writer.model.version_attribute
    version = int(old[version_attr]) if version_attr and version_attr in old else None
    delete = writer.exists_action(key, changed, "Delete", version, node=node)
    for counter in node.counters(writer.model):  # no edge added or removed meanwhile
        name = delete.expr.name(counter)
        delete.condition = f"{delete.condition} AND " + (
            f"{name} = {delete.expr.value(old[counter])}"
            if counter in old
            else f"attribute_not_exists({name})"
        )
    last = [delete, *claims(writer, node, key, writer.items.values_of(node, old), {})]
    if node.parent_counter is not None:
        parent = writer.items.parent_key(node, key)
        last.append(writer.update_action(parent, {}, adds={node.parent_counter: -1}))
    for _ in range(ATTEMPTS):
        try:
            while True:
                taken, delta, rest = await take(writer, removals, writer.room - len(last), _cost)
                if not rest:
                    batch, _ = _pack(writer, taken, writer.room, conditioned=False)
                    await writer.commit_delta(last + batch, delta)
                    return
                taken, delta, removals = await take(writer, removals, writer.room, _cost)
                batch, _ = _pack(writer, taken, writer.room, conditioned=False)
                await writer.commit_delta(batch, delta)
        except Moved:
            removals = await related(writer, node, key)  # a path changed: read again
    raise Conflict(f"{node.name} {key.pk} keeps changing concurrently; try again")


async def related(writer: Committer, node: NodeType, key: ItemKey) -> list[_Removal]:
    """The node's children, and its edges at either end with the counter they hold at
    their far end."""
    found: dict[ItemKey, _Removal] = {}
    reads = Reads(writer.table)
    loads = []
    if node.single:
        loads.append(reads.alls.load(Listing(None, (Branch(key.pk),))))
    for edge in writer.model.edges.values():
        if edge.target == node.name:
            listing = writer.codec.edges_at(edge, key, "to")
            if listing is not None:
                loads.append(reads.alls.load(listing))
    for items in await asyncio.gather(*loads):
        for item in items:
            item_key = writer.layout.item_key(item)
            if item_key == key or item_key in found:
                continue
            kind = writer.codec.node_type(item)
            if kind is not None:
                if kind.parent is not None and kind.parent.type == node.name:
                    found[item_key] = _Removal(item_key)
                continue
            if writer.upkeep is not None and writer.upkeep.is_replica(item):
                if item_key.pk == key.pk:  # the node's own replicas
                    found[item_key] = _Removal(item_key)
                continue
            found_edge = writer.codec.edge_type(item)
            if found_edge is None or node.name not in (found_edge.source, found_edge.target):
                continue
            outgoing = item_key.pk == key.pk
            far = (
                ItemKey(item_key.sk, item_key.sk) if outgoing else ItemKey(item_key.pk, item_key.pk)
            )
            if outgoing and found_edge.owns:  # the far node goes too: no counter to keep
                found[item_key] = _Removal(item_key)
                found[far] = _Removal(far)
                continue
            counter = found_edge.counter("to" if outgoing else "from")
            ends = (
                writer.codec.end(found_edge, item, "from"),
                writer.codec.end(found_edge, item, "to"),
            )
            found[item_key] = _Removal(
                item_key, far if counter else None, counter, (found_edge, *ends)
            )
    return list(found.values())


async def take(
    writer: Committer,
    removals: list[_Removal],
    room: int,
    cost: Callable[[list[_Removal]], int],
) -> tuple[list[_Removal], Delta, list[_Removal]]:
    """As many ``removals`` as fit in ``room`` actions (``cost``: the actions removals take)
    with the replicas' part of the edges among them; that part; and the rest."""
    upkeep = writer.upkeep
    parts: list[Delta | None] = [None] * len(removals)
    if upkeep is not None:
        changes = {
            i: r.change
            for i, r in enumerate(removals)
            if r.change is not None and upkeep.replicated(r.change[0])
        }
        found = await asyncio.gather(
            *(
                upkeep.change(edge, source, target, None)
                for edge, source, target in changes.values()
            )
        )
        for i, delta in zip(changes, found, strict=True):
            parts[i] = delta
    delta = Delta()
    for taken in range(len(removals)):
        part = parts[taken]
        trial = Delta().merge(delta).merge(part) if part is not None else delta
        if cost(removals[: taken + 1]) + trial.size() > room:
            if taken == 0:  # alone too large: its replicas are written in steps
                return removals[:1], trial, removals[1:]
            return removals[:taken], delta, removals[taken:]
        delta = trial
    return removals, delta, []
