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

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from model import Model, NodeType

from .errors import Conflict, NotFound
from .expressions import Expr
from .items import Ref
from .keys import ItemKey
from .reads import Branch, Listing, Reads
from .replicas import Moved
from .table import Failure, Item
from .transaction import MAX_ACTIONS, Action

if TYPE_CHECKING:
    from .mutate import Writer, _Removal

__all__ = ["delete_node", "finish_deletion", "is_marked", "resume_deletions", "unmarked"]

ATTEMPTS = 5


def is_marked(model: Model, item: Mapping[str, Any] | None) -> bool:
    """Whether ``item`` is a node being deleted (read as gone)."""
    deletions = model.deletions
    return deletions is not None and item is not None and bool(item.get(deletions.attribute))


def unmarked(model: Model, expr: Expr) -> str:
    """The condition (`` AND …``) that an item is not being deleted; empty without a
    ``deletions`` setting."""
    if model.deletions is None:
        return ""
    return f" AND attribute_not_exists({expr.name(model.deletions.attribute)})"


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


def _cost(removals: list[_Removal]) -> int:
    return len(removals) + len({r.far for r in removals if r.far is not None})


def _pack(
    writer: Writer, removals: list[_Removal], room: int
) -> tuple[list[Action], list[_Removal]]:
    """Conditioned deletes of as many removals as fit in ``room`` actions, with one counter
    update per far node; and the rest."""
    deltas: dict[ItemKey, dict[str, int]] = {}
    actions: list[Action] = []
    taken = 0
    for removal in removals:
        cost = 1 + (removal.far is not None and removal.far not in deltas)
        if taken + len(deltas) + cost > room:
            break
        taken += 1
        # conditioned, so a concurrent run removing the same item cancels this batch (and it
        # reads again) instead of both decrementing the far end's counter
        actions.append(_delete(writer, removal.key, writer.layout.pk))
        if removal.far is not None and removal.counter is not None:
            counts = deltas.setdefault(removal.far, {})
            counts[removal.counter] = counts.get(removal.counter, 0) - 1
    for far, counts in deltas.items():
        update = writer._update(far, {}, adds=counts)
        update.condition = f"attribute_exists({update.expr.name(writer.layout.pk)})"
        update.on_fail = _raced(far.pk)
        actions.append(update)
    return actions, removals[taken:]


def _delete(writer: Writer, key: ItemKey, must_have: str) -> Action:
    """A Delete of an item that must still have ``must_have``; else it is read again."""
    action = Action("Delete", key, {"Key": writer.layout.key(key)})
    action.condition = f"attribute_exists({action.expr.name(must_have)})"
    action.on_fail = _raced(key.sk)
    return action


def _raced(what: str) -> Failure:
    return lambda _old: _Raced(what)


def _unchanged(
    writer: Writer, action: Action, node: NodeType, old: Item, counters: bool = True
) -> None:
    """Condition ``action`` on the node existing unmarked at its version, with ``counters`` as
    read (no edge or child added or removed meanwhile)."""
    model, e = writer.model, action.expr
    parts = [f"attribute_exists({e.name(writer.layout.pk)}){unmarked(model, e)}"]
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
    action.on_fail = lambda current: gone if current is None else _Raced(action.key.pk)


async def delete_node(
    writer: Writer, node: NodeType, key: ItemKey, max_actions: int = MAX_ACTIONS
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
        old = await writer.table.get_item(key)
        if old is None:
            raise NotFound(f"{node.name} {writer._describe(node, key)} does not exist")
        if is_marked(model, old):
            await finish_deletion(writer, node, key, max_actions)
            return
        removals = await writer._related(node, key)
        along = writer._claims(node, key, writer.values_of(node, old), {})
        if node.parent_counter is not None:
            parent = writer._parent_key(node, key)
            along.append(writer._update(parent, {}, adds={node.parent_counter: -1}))
        room = max_actions - 1 - len(along)
        if not contended and _counted(model, node) and _cost(removals) <= room:
            try:
                taken, delta, rest = await writer._take(removals, room, _cost)
                if not rest:
                    delete = _delete(writer, key, writer.layout.pk)
                    _unchanged(writer, delete, node, old)
                    batch, _ = _pack(writer, taken, room)
                    await writer._commit_delta([delete, *along, *batch], delta)
                    return
            except (_Raced, Moved):
                contended = True  # edges come and go: mark it, which they cannot race
                continue
        sets = {deletions.attribute: True, deletions.index.pk: deletions.partition}
        if deletions.index.sk is not None:
            sets[deletions.index.sk] = writer.codec.global_id(Ref(node, key))
        mark = writer._update(key, sets)
        _unchanged(writer, mark, node, old, counters=False)  # what follows reads them afresh
        try:
            await writer._commit([mark, *along])
        except _Raced:
            continue
        await finish_deletion(writer, node, key, max_actions)
        return
    raise Conflict(f"{node.name} {key.pk} keeps changing concurrently; try again")


async def finish_deletion(
    writer: Writer, node: NodeType, key: ItemKey, max_actions: int = MAX_ACTIONS
) -> None:
    """Remove a marked node's children and edges batch by batch, then the node. Safe to run
    again, and concurrently with another run."""
    while removals := await writer._related(node, key):
        while removals:
            try:
                taken, delta, removals = await writer._take(removals, max_actions, _cost)
                batch, _ = _pack(writer, taken, max_actions)
                await writer._commit_delta(batch, delta)
            except (_Raced, Moved):
                break  # another run removed one of these first, or a path moved: read again
    deletions = writer.model.deletions
    assert deletions is not None
    last = _delete(writer, key, deletions.attribute)
    with contextlib.suppress(_Raced):  # another run deleted it first
        await writer._commit([last])


async def resume_deletions(writer: Writer) -> int:
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
