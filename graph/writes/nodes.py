"""Writes of nodes: create, update (its version, index attributes, and the copies of its fields
on its edges), a child found and deleted by part of its key, and the claims of unique fields.
The delete of a node with its edges is :mod:`graph.writes.deletes`'."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graph.errors import BadUserInput, Conflict, EdgewiseError, NotFound
from graph.items import Ref
from graph.keys import ItemKey, Located, new_id
from graph.marks import is_marked, unmarked
from graph.reads import Branch, Listing, Reads
from graph.table import Item, Table
from graph.writes import background
from graph.writes.commit import Committer, Missing, always
from graph.writes.constraints import check_size, check_values
from graph.writes.items import describe, now_iso
from graph.writes.replicas import Moved
from graph.writes.transaction import Action
from model import KeyValueError, NodeType

__all__ = ["claims", "create", "delete_child", "find_child", "update"]


class _Changed(Conflict):
    """An update's node changed between its read and its write: read it again."""


class _Superseded(EdgewiseError):
    """A later update changed the copied values: it refreshes the copies."""


async def create(writer: Committer, node: NodeType, values: Mapping[str, Any]) -> Item:
    """Put a new node with its claims, conditioned on its key being free; a child's parent is
    checked (and counted) in the same transaction. Returns the item."""
    check_values(node.fields, values)
    values = dict(values)
    if "id" in node.key_fields and values.get("id") is None:
        values["id"] = new_id()
    item = writer.items.node_item(node, values, now_iso())
    if writer.upkeep is not None:  # no incoming edge yet: its digests are known, zero
        item |= writer.upkeep.digests(node)
    key = writer.layout.item_key(item)
    check_size(f"{node.name} {describe(node, key)}", item, node.fields)

    taken = Conflict(f"{node.name} {describe(node, key)} already exists")
    actions = [writer.put_action(item, "attribute_not_exists({pk})", lambda _old: taken)]
    actions += claims(writer, node, key, {}, values)
    parent = writer.model.types[node.parent.type] if node.parent is not None else None
    if parent is not None and not parent.implicit:  # an implicit parent has no item to check
        parent_key = writer.items.parent_key(node, key)
        missing = NotFound(f"{parent.name} {parent_key.pk} does not exist")
        if type(parent_key.sk) is Located:  # known by its partition: its item's key
            found = await Reads(writer.table, consistent=True).items.load(parent_key)
            if found is None:
                raise missing
            parent_key = writer.layout.item_key(found)
        counter = node.parent_counter
        adds = {counter: 1} if counter else None
        actions.append(writer.exists_action(parent_key, lambda _o: missing, adds=adds, node=parent))
    actions += targets_exist(writer, node, key, actions, item)
    if writer.upkeep is not None and writer.upkeep.names(node):  # it may start a replica
        delta = await writer.upkeep.change_ref(Ref(node, key), None, item)
        await writer.commit_delta(actions, delta)
        return item
    await writer.commit(actions)
    return item


def targets_exist(
    writer: Committer,
    node: NodeType,
    key: ItemKey,
    actions: list[Action],
    item: Item,
    old: Item | None = None,
) -> list[Action]:
    """A check, in the write's transaction, that each node a non-null reference of ``item``
    names (newly: not named by ``old``) exists as its type: a write never leaves a
    ``Product!`` reference that every read would fail on. Not checked: the node itself, an
    item another action of the transaction writes, a target with no item of its own."""
    checks: list[Action] = []
    taken = {action.key for action in actions} | {key}
    for name, field in node.fields.items():
        if field.target is None or field.type.list or not field.type.non_null:
            continue
        targets = writer.codec.targets_in(field, node)
        before = {r.key for r in targets(Ref(node, key), old)} if old is not None else set()
        for ref in targets(Ref(node, key), item):
            if ref.key in before or ref.key in taken or ref.type.implicit:
                continue
            if type(ref.key.sk) is Located:  # known by its partition only: read where found
                continue
            taken.add(ref.key)
            missing = NotFound(
                f"{name}: {ref.type.name} {describe(ref.type, ref.key)} does not exist"
            )
            checks.append(writer.exists_action(ref.key, always(missing), node=ref.type))
    return checks


def claims(
    writer: Committer,
    node: NodeType,
    key: ItemKey,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
) -> list[Action]:
    """The actions on the claim items of ``node``'s unique fields whose value changes from
    ``before`` to ``after``: the new claim put (CONFLICT when another node holds it), the old
    one deleted."""
    actions = []
    for name, unique in node.fields.items():
        if unique.unique is None:
            continue
        old, new = before.get(name), after.get(name)
        same = (
            (str(old).lower() == str(new).lower())
            if unique.unique.case_insensitive and old is not None and new is not None
            else old == new
        )
        if same:
            continue
        if old is not None:
            claim = writer.items.claim_key(unique, old)
            actions.append(Action("Delete", claim, {"Key": writer.layout.key(claim)}))
        if new is not None:
            item = writer.items.claim_item(unique, new, key)
            taken = Conflict(f"the {name} {new!r} is already used by another {node.name}")
            actions.append(writer.put_action(item, "attribute_not_exists({pk})", always(taken)))
    return actions


async def update(
    writer: Committer,
    node: NodeType,
    key: ItemKey,
    changes: Mapping[str, Any],
    expected: int | None = None,
    read: Item | None = None,
) -> Item:
    """Read the node (or take ``read``), then write it conditioned on its version as read; a
    change made meanwhile, without ``expected``, makes it read again, with backoff, until the
    deadline (then CONFLICT). Returns the item as written."""
    check_values(node.fields, changes)
    async with writer.table.retries() as retries:
        while True:
            try:
                return await _update_once(writer, node, key, changes, expected, read=read)
            except (_Changed, Moved):
                read = None
                if not await retries.again():
                    raise


async def _update_once(
    writer: Committer,
    node: NodeType,
    key: ItemKey,
    changes: Mapping[str, Any],
    expected: int | None,
    read: Item | None = None,
) -> Item:
    model, layout = writer.model, writer.layout
    version_attr = model.version_attribute
    old = read if read is not None else await writer.table.get_item(key)
    old = writer.codec.own(node, old)  # another type's item: none of this one
    if old is None or is_marked(model, old):
        raise NotFound(f"{node.name} {describe(node, key)} does not exist")
    version = int(old.get(version_attr, 0)) if version_attr else None
    if expected is not None and version is not None and expected != version:
        raise Conflict(f"{node.name} {key.pk} is at version {version}, not {expected}")
    before = writer.items.values_of(node, old)
    after = {k: v for k, v in before.items()} | dict(changes)
    for name, value in changes.items():  # a set (SS, NS) stays a set, as its writer made it
        if isinstance(before.get(name), set) and isinstance(value, list):
            if not value and node.fields[name].type.non_null:
                raise BadUserInput(f"{name} is a set, which DynamoDB cannot hold empty")
            after[name] = set(value) or None
    new = writer.items.node_item(node, after, None)
    created, modified = model.stamps
    if created in old:
        new[created] = old[created]
    if model.timestamps:
        new[modified] = now_iso()
    if version_attr:
        new[version_attr] = (version or 0) + 1
    for attr, value in old.items():  # attributes the model does not know stay as they are
        if attr not in new and not writer.items.owned(node, attr):
            new[attr] = value
    check_size(f"{node.name} {describe(node, key)}", new, node.fields)
    sets = {k: v for k, v in new.items() if old.get(k) != v and k not in (layout.pk, layout.sk)}
    removes = [k for k in old if k not in new]
    if not sets and not removes:  # nothing to write (no version, no stamp): the read was all
        return new
    action = writer.update_action(key, sets, removes)
    cond = f"attribute_exists({action.expr.name(layout.pk)})"
    cond += unmarked(model, action.expr)
    cond += writer.codec.of_type(node, action.expr)
    if version_attr:
        cond += f" AND {action.expr.name(version_attr)} = {action.expr.value(version)}"
    action.condition = cond

    def stale(current: Item | None) -> EdgewiseError:
        if current is None or is_marked(model, current) or writer.codec.own(node, current) is None:
            return NotFound(f"{node.name} {key.pk} does not exist")
        message = f"{node.name} {key.pk} was changed concurrently; read it again"
        return Conflict(message) if expected is not None else _Changed(message)

    action.on_fail = stale
    action.leaves = new
    actions = [action, *claims(writer, node, key, before, after)]
    actions += targets_exist(writer, node, key, actions, new, old)
    copies = await _copies(writer, node, key, before, after)
    if writer.upkeep is not None and writer.upkeep.names(node):
        delta = await writer.upkeep.change_ref(Ref(node, key), old, new)
        if delta.bumps:  # a replicated reference changed
            await writer.commit_delta(actions + copies, delta)
            return new
    if len(actions) + len(copies) > writer.room and copies:  # the rest in further writes
        room = max(writer.room - len(actions), 0)
        await writer.commit(actions + copies[:room])
        rest = copies[room:]

        async def refresh(view: Table, attempt: int) -> None:
            again = Committer(view, writer.codec)
            updates = await _copies(again, node, key, before, after) if attempt else rest
            await _refresh(again, node, key, before, after, updates)

        what = f"the copies of {node.name} {key.pk}'s fields past one transaction"
        await background.follow(writer.table, refresh, what)
        return new
    await writer.commit(actions + copies)
    return new


async def _copies(
    writer: Committer,
    node: NodeType,
    key: ItemKey,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
) -> list[Action]:
    """Updates of the edges that copy a changed field of this node: the copies and the
    index attributes built from them (a copy that became null is removed), each on the
    condition that the edge still exists (a removed edge is not written back)."""
    actions: list[Action] = []
    for edge in writer.model.edges.values():
        for end in ("from", "to"):
            if (edge.source if end == "from" else edge.target) != node.name:
                continue
            copies = {n: f for n, f in edge.fields.items() if f.kind == "copy" and f.end == end}
            if not any(
                before.get(f.source or "") != after.get(f.source or "") for f in copies.values()
            ):
                continue
            other = "to" if end == "from" else "from"
            owned = {f.attribute for f in edge.fields.values() if f.kind == "copy"}
            owned |= {w.index.pk for w in edge.indexes}
            owned |= {w.index.sk for w in edge.indexes if w.index.sk}
            for item in await writer.edges_at(edge, key, end):
                source = writer.codec.end(edge, item, "from")
                target = writer.codec.end(edge, item, "to")
                plain = {
                    n: item.get(f.attribute) for n, f in edge.fields.items() if f.kind != "copy"
                }
                kept = {  # the other end's copies stay as they are
                    f.source or "": item.get(f.attribute)
                    for f in edge.fields.values()
                    if f.kind == "copy" and f.end == other
                }
                ends = {end: after, other: kept}
                fresh = writer.items.edge_item(edge, source, target, plain, ends)
                edge_key = writer.layout.item_key(item)
                check_size(f"{edge.label} edge {edge_key.pk} / {edge_key.sk}", fresh, edge.fields)
                sets = {k: v for k, v in fresh.items() if item.get(k) != v}
                removes = [a for a in owned if a in item and a not in fresh]
                if sets or removes:
                    action = writer.update_action(edge_key, sets, removes)
                    action.condition = f"attribute_exists({action.expr.name(writer.layout.pk)})"
                    gone = f"{edge.label} edge {edge_key.pk} / {edge_key.sk} was removed"
                    action.on_fail = always(_Changed(f"{gone} concurrently; try again"))
                    actions.append(action)
    return actions


async def _refresh(
    writer: Committer,
    node: NodeType,
    key: ItemKey,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    updates: list[Action],
) -> None:
    """Copies that did not fit in the update's transaction: written in further transactions
    of up to 99 edges, each checking that the node still holds the values copied. When it
    does not, a later update changed them and refreshes the copies itself: this one stops.
    An edge removed meanwhile makes it list the edges again."""
    async with writer.table.retries() as retries:
        while True:
            try:
                start = 0
                while start < len(updates):
                    check, size = _holds(writer, node, key, after), writer.room - 1
                    await writer.commit([check, *updates[start : start + size]])
                    start += size
                return
            except _Superseded:
                return
            except _Changed:
                if not await retries.again():
                    raise Conflict(
                        f"the edges of {node.name} {key.pk} keep changing; update it again"
                    ) from None
                updates = await _copies(writer, node, key, before, after)


def _holds(writer: Committer, node: NodeType, key: ItemKey, after: Mapping[str, Any]) -> Action:
    """A check that the node exists and holds ``after``'s values of its copied fields."""
    action = writer.exists_action(key, always(_Superseded()), node=node)
    e = action.expr
    for edge in writer.model.edges.values():
        for f in edge.fields.values():
            copied = node.fields.get(f.source or "")
            ends = edge.source if f.end == "from" else edge.target
            if f.kind != "copy" or ends != node.name or copied is None:
                continue
            if copied.kind != "value":  # a key field does not change; a stamp always does
                continue
            value = after.get(copied.name)
            name = e.name(copied.attribute)
            test = (
                f"attribute_not_exists({name})" if value is None else f"{name} = {e.value(value)}"
            )
            action.condition = f"{action.condition} AND {test}"
    return action


async def find_child(
    writer: Committer, node: NodeType, parent: Ref, values: Mapping[str, Any]
) -> Item | None:
    """The first ``node`` item in ``parent``'s partition whose key values include ``values``:
    one Query under the sort-key prefix ``values`` fix, following its pages."""
    assert node.parent is not None
    codec = writer.codec
    theirs = codec.key_values(parent.type, parent.key) or {}
    link = {mine: theirs[their] for mine, their in node.parent.link}
    partition = codec.format(node.pk, link)
    try:
        prefix = node.sk.prefix(values)
    except KeyValueError:
        return None  # a value no key of this type can hold
    listing = Listing(None, (Branch(partition, prefix),))
    for item in await Reads(writer.table).alls.load(listing):
        if codec.node_type(item) is not node:
            continue
        found = writer.items.values_of(node, item)  # a run's values: from their attributes
        if all(str(found.get(k)) == str(v) for k, v in values.items()):
            return item
    return None


async def delete_child(writer: Committer, node: NodeType, key: ItemKey) -> bool:
    """Delete a child, uncounted on its parent in the same transaction; False when it is
    already gone."""
    actions = [writer.exists_action(key, lambda _old: Missing(), "Delete", node=node)]
    if node.parent_counter is not None:
        parent = writer.items.parent_key(node, key)
        actions.append(writer.update_action(parent, {}, adds={node.parent_counter: -1}))
    try:
        await writer.commit(actions)
    except Missing:
        return False
    return True
