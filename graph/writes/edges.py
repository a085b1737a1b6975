"""Writes of edges: add, remove and update one, with the counters at its ends and the replicas
through it; and the insert of new items (a node with the edge that reaches it) with counters of
existing nodes, for hooks. A write that read a replicated path reads again when the path moved
before its commit (:class:`~graph.writes.replicas.Moved`), with backoff, until the deadline."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from graph.errors import BadUserInput, Conflict, EdgewiseError, NotFound
from graph.items import Codec, Ref
from graph.marks import is_marked
from graph.table import Failure, Item, from_dynamo
from graph.writes import idempotency
from graph.writes.commit import Change, Committer, Missing, always
from graph.writes.constraints import check_size, check_values
from graph.writes.replicas import Moved, clock_of
from graph.writes.transaction import Action
from model import EdgeType

__all__ = ["add_edge", "insert", "remove_edge", "update_edge"]


async def add_edge(
    writer: Committer, edge: EdgeType, source: Ref, target: Ref, fields: Mapping[str, Any]
) -> Item:
    """Put an edge, its ends checked (and counted) in the same transaction; an end that is
    ``one`` is conditioned on its counter when the edge is counted, else read first."""
    check_values(edge.fields, fields)
    if _onto_an_end(writer, edge, source, target):
        raise BadUserInput(
            f"a {edge.label} edge cannot join {source.key.pk} to itself: its item would be "
            "keyed like the node's own"
        )
    async with writer.table.retries() as retries:
        while True:
            item, actions = await _adding(writer, edge, source, target, fields)
            try:
                await writer.commit_changes(actions, [(edge, source, target, item)])
                return item
            except Moved:
                if not await retries.again():
                    raise


async def _adding(
    writer: Committer, edge: EdgeType, source: Ref, target: Ref, fields: Mapping[str, Any]
) -> tuple[Item, list[Action]]:
    model = writer.model
    copies = {f.end for f in edge.fields.values() if f.kind == "copy"}
    ends: dict[str, dict[str, Any]] = {"from": {}, "to": {}}
    versions: dict[str, int | None] = {"from": None, "to": None}
    if copies:
        for end, ref in (("from", source), ("to", target)):
            if end in copies:
                old = writer.codec.own(ref.type, await writer.table.get_item(ref.key))
                if old is None or is_marked(model, old):
                    raise NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
                ends[end] = writer.items.values_of(ref.type, old)
                version_attr = model.version_attribute
                versions[end] = (
                    int(old[version_attr]) if version_attr and version_attr in old else None
                )
    ones = {"from": edge.forward, "to": edge.reverse}
    for end, ref in (("from", source), ("to", target)):
        side = ones[end]
        if (
            side is not None
            and side.one
            and edge.counter(end) is None
            and await writer.edges_at(edge, ref.key, end)
        ):
            raise _one_taken(ref, edge, side.field)
    item = writer.items.edge_item(edge, source, target, fields, ends)
    check_size(f"{edge.label} edge {source.key.pk} / {target.key.pk}", item, edge.fields)

    repeated = Conflict(f"{source.key.pk} already has a {edge.label} edge to {target.key.pk}")
    actions = [writer.put_action(item, "attribute_not_exists({pk})", lambda _old: repeated)]
    for end, ref in (("from", source), ("to", target)):
        if ref.type.implicit:
            continue  # no item of its own: it exists once the edge does
        counter = edge.counter(end)
        action = writer.exists_action(
            ref.key,
            _gone_or_changed(ref, writer.codec),
            version=versions[end],
            adds={counter: 1} if counter else None,
            node=ref.type,
        )
        side = ones[end]
        if counter and side is not None and side.one:  # none yet, or all removed
            name = action.expr.name(counter)
            action.condition = (
                f"{action.condition} AND "
                f"(attribute_not_exists({name}) OR {name} = {action.expr.value(0)})"
            )
            action.on_fail = _counted_one(ref, edge, side.field, counter, writer.codec)
        actions.append(action)
    return item, actions


def _onto_an_end(writer: Committer, edge: EdgeType, source: Ref, target: Ref) -> bool:
    """Whether the edge's item would have the key of one of its ends' (a node joined to itself,
    its key one template)."""
    key = writer.codec.edge_key(edge, source.key, target.key)
    return key in (source.key, target.key)


async def remove_edge(writer: Committer, edge: EdgeType, source: Ref, target: Ref) -> bool:
    """Delete an edge and uncount it at its ends; False when there was none."""
    if _onto_an_end(writer, edge, source, target):
        return False  # none can be added, and that key is a node's own item
    key = writer.codec.edge_key(edge, source.key, target.key)
    async with writer.table.retries() as retries:
        while True:
            actions = [writer.exists_action(key, lambda _old: Missing(), "Delete")]
            for end, ref in (("from", source), ("to", target)):
                counter = edge.counter(end)
                if counter:
                    actions.append(writer.update_action(ref.key, {}, adds={counter: -1}))
            try:
                await writer.commit_changes(actions, [(edge, source, target, None)])
            except Missing:
                return False
            except Moved:
                if not await retries.again():
                    raise
                continue
            return True


async def insert(
    writer: Committer,
    items: Iterable[Item],
    counts: Iterable[tuple[Ref, Mapping[str, int]]] = (),
) -> None:
    """Put new items, each conditioned on its key being free, and add to counters of existing
    nodes, in one write with the replicas of the edges among the items."""
    items, counts = list(items), list(counts)
    codec = writer.codec
    changes: list[Change] = []
    for item in items:
        node, edge = codec.node_type(item), codec.edge_type(item)
        key = writer.layout.item_key(item)
        fields = node.fields if node is not None else edge.fields if edge is not None else {}
        check_size(f"{key.pk} / {key.sk}", item, fields)
        if edge is not None:
            ends = (codec.end(edge, item, "from"), codec.end(edge, item, "to"))
            changes.append((edge, *ends, item))
    async with writer.table.retries() as retries:
        while True:
            actions = []
            for item in items:
                key = writer.layout.item_key(item)
                taken = Conflict(f"{key.pk} / {key.sk} already exists")
                actions.append(writer.put_action(item, "attribute_not_exists({pk})", always(taken)))
            for ref, adds in counts:
                failure = _gone_or_changed(ref, writer.codec)
                actions.append(
                    writer.exists_action(ref.key, failure, adds=dict(adds), node=ref.type)
                )
            try:
                await writer.commit_changes(actions, changes)
                return
            except Moved:
                if not await retries.again():
                    raise


async def update_edge(
    writer: Committer, edge: EdgeType, source: Ref, target: Ref, changes: Mapping[str, Any]
) -> Item:
    """Set fields of an existing edge in one UpdateItem returning it (a transaction and a read
    while a keyed request's record is still to be written); a field a replica copies is
    :func:`_update_copied`."""
    for write in edge.indexes:
        used = set(write.pk.placeholders) | set(write.sk.placeholders if write.sk else ())
        if used & set(changes):
            raise ValueError(f"{edge.label}'s index keys use {sorted(used & set(changes))}")
    key = writer.codec.edge_key(edge, source.key, target.key)
    attributes = {edge.fields[name].attribute: value for name, value in changes.items()}
    sets = {a: v for a, v in attributes.items() if v is not None}
    # the edge is not read: what it will hold at least, its key and the values set
    least = {writer.layout.pk: key.pk, writer.layout.sk: key.sk} | sets
    check_size(f"{edge.label} edge {key.pk} / {key.sk}", least, edge.fields)
    action = writer.update_action(key, sets, [a for a, v in attributes.items() if v is None])
    action.condition = f"attribute_exists({action.expr.name(writer.layout.pk)})"
    missing = NotFound(f"{source.key.pk} has no {edge.label} edge to {target.key.pk}")
    if writer.upkeep is not None and writer.upkeep.copied(edge, set(attributes)):
        return await _update_copied(writer, edge, source, target, attributes, missing)
    state = idempotency.current()
    if state is not None and not state.written:  # with the record: a transaction
        action.on_fail = always(missing)
        await writer.commit([action])
        item = await writer.table.get_item(key)
        if item is None:
            raise missing
        return item
    params = writer.params(action) | {"ReturnValues": "ALL_NEW"}
    response = await writer.table.write("UpdateItem", params, always(missing))
    return from_dynamo(response["Attributes"])


async def _update_copied(
    writer: Committer,
    edge: EdgeType,
    source: Ref,
    target: Ref,
    attributes: Mapping[str, Any],
    missing: NotFound,
) -> Item:
    """:func:`update_edge` of fields a replica copies: the edge read first, then its update and
    the replicas in one transaction, conditioned on the edge as read."""
    upkeep = writer.upkeep
    assert upkeep is not None
    key = writer.codec.edge_key(edge, source.key, target.key)
    sets = {a: v for a, v in attributes.items() if v is not None}
    removes = [a for a, v in attributes.items() if v is None]
    async with writer.table.retries() as retries:
        while True:
            old = await writer.table.get_item(key)
            if old is None:
                raise missing
            after = {k: v for k, v in old.items() if k not in removes} | sets
            action = writer.update_action(key, sets, removes)
            action.condition = f"attribute_exists({action.expr.name(writer.layout.pk)})"
            action.on_fail = always(missing)
            delta = await upkeep.change(edge, source, target, after, added=False)
            delta.clocks.setdefault(key, clock_of(old))  # no other change of it in between
            delta.bumps.add(key)
            try:
                await writer.commit_delta([action], delta)
            except Moved:
                if not await retries.again():
                    raise
                continue
            return after


def _gone(ref: Ref, codec: Codec, old: Item | None) -> bool:
    """Whether ``old`` is no node of ``ref``'s type: none, being deleted, or another type's."""
    return old is None or is_marked(codec.model, old) or codec.own(ref.type, old) is None


def _gone_or_changed(ref: Ref, codec: Codec) -> Failure:
    def failure(old: Item | None) -> EdgewiseError:
        if _gone(ref, codec, old):
            return NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
        return Conflict(f"{ref.type.name} {ref.key.pk} changed concurrently; try again")

    return failure


def _one_taken(ref: Ref, edge: EdgeType, field: str) -> Conflict:
    return Conflict(
        f"{ref.key.pk} already has a {edge.label} edge and its {ref.type.name}.{field} is one; "
        "remove that edge first"
    )


def _counted_one(ref: Ref, edge: EdgeType, field: str, counter: str, codec: Codec) -> Failure:
    def failure(old: Item | None) -> EdgewiseError:
        if old is None or _gone(ref, codec, old):
            return NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
        if int(old.get(counter, 0)) > 0:
            return _one_taken(ref, edge, field)
        return Conflict(f"{ref.type.name} {ref.key.pk} changed concurrently; try again")

    return failure
