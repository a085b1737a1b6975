"""Writes that keep the graph consistent: each mutation is one TransactWriteItems.

Invariants: an edge exists only between two existing nodes; each node item counts its edges
(``model.counter``) in the same transaction that adds or removes one; an email belongs to at
most one user (an ``EMAIL#<lowercased>`` item written with the user).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import BadUserInput, Conflict, EdgewiseError, NotFound
from .keys import ItemKey, NodeKey, NodeType
from .model import (
    EDGE_TYPES,
    OPENED,
    EdgeType,
    counter,
    counters_of,
    edge_item,
    email_item,
    email_key,
    node_item,
    now_iso,
)
from .table import Item, Table
from .tx import LIVE, MAX_ACTIONS, Tx, fail

__all__ = [
    "add_edge",
    "create_node",
    "delete_node",
    "remove_edge",
    "resume_deletions",
    "update_edge",
    "update_node",
]

ATTEMPTS = 5
DELETING = "DELETING"


class Raced(Conflict):
    """What was read changed before the write; the caller reads again."""

    def __init__(self, what: object = "the node") -> None:
        super().__init__(f"{what} changed concurrently; try again")


def _email_conflict(email: str) -> Conflict:
    return Conflict(f"the email {email!r} is already used by another user")


def check_email(email: str) -> str:
    local, at, domain = email.partition("@")
    if not (at and local and "." in domain) or len(email) > 254 or any(c.isspace() for c in email):
        raise BadUserInput(f"invalid email {email[:260]!r}: expected name@domain.tld")
    return email


async def create_node(table: Table, key: NodeKey, fields: Mapping[str, Any]) -> Item:
    """Put a new node; an existing id is CONFLICT. A user's email is claimed in the same write."""
    item = node_item(key, fields)
    tx = Tx(table)
    tx.put(item, "attribute_not_exists(PK)", fail(Conflict(f"{key} already exists")))
    if email := item.get("email"):
        tx.put(
            email_item(check_email(email), key),
            "attribute_not_exists(PK)",
            fail(_email_conflict(email)),
        )
    await tx.commit()
    return item


async def update_node(
    table: Table, key: NodeKey, changes: Mapping[str, Any], expected_version: int | None = None
) -> Item:
    """Set fields (``None`` removes one) and bump ``version``; returns the new item.

    A stale ``expected_version`` is CONFLICT. Without one, a concurrent change is retried.
    """
    for _ in range(ATTEMPTS):
        old = await table.get_item(key.item)
        if old is None or old.get("deleting"):
            raise NotFound(f"{key} does not exist")
        version = int(old["version"])
        if expected_version is not None and expected_version != version:
            raise Conflict(f"{key} is at version {version}, not {expected_version}")
        new = {k: v for k, v in old.items() if changes.get(k, v) is not None}
        new |= {k: v for k, v in changes.items() if v is not None}
        new |= {"version": version + 1, "updatedAt": now_iso()}
        tx = Tx(table)
        sets = [k for k in changes if changes[k] is not None] + ["version", "updatedAt"]
        removes = [k for k in changes if changes[k] is None and k in old]
        names = {f"#a{i}": name for i, name in enumerate(sets + removes)}
        values = {f":a{i}": new[name] for i, name in enumerate(sets)} | {":v": version}
        expression = "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(sets)))
        if removes:
            expression += " REMOVE " + ", ".join(f"#a{len(sets) + i}" for i in range(len(removes)))
        tx.update(
            key.item,
            expression,
            names=names | {"#version": "version"},
            values=values,
            condition="#version = :v AND attribute_not_exists(deleting)",
            on_fail=lambda _old: Raced(key),
        )
        _move_email(tx, key, old.get("email"), new.get("email"))
        try:
            await tx.commit()
        except Raced:
            if expected_version is not None:
                raise Conflict(f"{key} was updated concurrently; read it again") from None
            continue
        return new
    raise Raced(key)


def _move_email(tx: Tx, user: NodeKey, old: str | None, new: str | None) -> None:
    if (old or "").lower() == (new or "").lower():
        return
    if old:
        tx.delete(email_key(old))
    if new:
        tx.put(
            email_item(check_email(new), user),
            "attribute_not_exists(PK)",
            fail(_email_conflict(new)),
        )


def _missing(key: NodeKey) -> Any:
    return fail(NotFound(f"{key} does not exist"))


async def add_edge(
    table: Table,
    edge: EdgeType,
    source: NodeKey,
    target: NodeKey,
    fields: Mapping[str, Any],
    *,
    single_source: bool = False,
) -> Item:
    """Put an edge and count it at both ends. The counter updates are conditioned on each end
    being live, so they are the endpoints' existence checks (DynamoDB allows one action per item
    in a transaction, so a separate ConditionCheck could not sit beside them). A repeated edge is
    CONFLICT: remove it first to change it. ``single_source``: the target may have only one such
    incoming edge (a user belongs to one organization)."""
    item = edge_item(edge, source, target, fields)
    tx = Tx(table)
    already = Conflict(f"{source} already has a {edge.label} edge to {target}")
    tx.put(item, "attribute_not_exists(PK)", fail(already))
    tx.count(source.item, counter(edge, incoming=False), 1, _missing(source))
    incoming = counter(edge, incoming=True)
    if not single_source:
        tx.count(target.item, incoming, 1, _missing(target))
    else:

        def taken(old: Item | None) -> EdgewiseError:
            if old is None or old.get("deleting"):
                return NotFound(f"{target} does not exist")
            return Conflict(f"{target} already has an incoming {edge.label} edge")

        tx.update(
            target.item,
            "ADD #c :one",
            names={"#c": incoming},
            values={":one": 1, ":zero": 0},
            condition=f"{LIVE} AND (attribute_not_exists(#c) OR #c = :zero)",
            on_fail=taken,
        )
    await tx.commit()
    return item


async def remove_edge(table: Table, edge: EdgeType, source: NodeKey, target: NodeKey) -> bool:
    """Delete an edge and uncount it; ``False`` when there was no such edge."""
    tx = Tx(table)
    tx.delete(ItemKey(str(source), str(target)), "attribute_exists(PK)", fail(Raced("edge")))
    tx.count(source.item, counter(edge, incoming=False), -1, None)
    tx.count(target.item, counter(edge, incoming=True), -1, None)
    try:
        await tx.commit()
    except Raced:
        return False
    return True


async def update_edge(
    table: Table, edge: EdgeType, source: NodeKey, target: NodeKey, changes: Mapping[str, Any]
) -> Item:
    """Set fields of an existing edge; NOT_FOUND when there is none. Returns the edge."""
    key = ItemKey(str(source), str(target))
    names = {f"#a{i}": name for i, name in enumerate(changes)}
    tx = Tx(table)
    tx.update(
        key,
        "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(changes))),
        names=names,
        values={f":a{i}": v for i, v in enumerate(changes.values())},
        condition="attribute_exists(PK)",
        on_fail=fail(NotFound(f"{source} has no {edge.label} edge to {target}")),
    )
    await tx.commit()
    item = await table.get_item(key)
    if item is None:
        raise NotFound(f"{source} has no {edge.label} edge to {target}")
    return item


# ---- deletes -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Removal:
    """One item to delete because its node goes, and the counter to decrement at its far end."""

    key: ItemKey
    far: ItemKey | None = None
    counter: str = ""


def _removals(node: NodeKey, own: list[Item], incoming: list[Item]) -> list[_Removal]:
    removals = []
    for item in own:  # the node's partition: outgoing edges and owned items (offices)
        edge = EDGE_TYPES.get(item.get("edge", ""))
        key = ItemKey(item["PK"], item["SK"])
        if edge is OPENED:  # a user's tickets go with the user
            removals += [_Removal(key), _Removal(ItemKey(item["SK"], item["SK"]))]
        elif edge is not None:
            far = ItemKey(item["SK"], item["SK"])
            removals.append(_Removal(key, far, counter(edge, incoming=True)))
        else:
            removals.append(_Removal(key))
    for item in incoming:
        edge = EDGE_TYPES[item["edge"]]
        removals.append(
            _Removal(
                ItemKey(item["PK"], item["SK"]),
                ItemKey(item["PK"], item["PK"]),
                counter(edge, incoming=False),
            )
        )
    return removals


def _pack(tx: Tx, removals: list[_Removal], room: int) -> list[_Removal]:
    """Add as many removals as fit in ``room`` actions (one counter update per far node);
    returns the rest."""
    deltas: dict[ItemKey, dict[str, int]] = {}
    taken = 0
    for removal in removals:
        cost = 1 + (removal.far is not None and removal.far not in deltas)
        if len(deltas) + taken + cost > room:
            break
        taken += 1
        # conditioned, so a concurrent run removing the same edge cancels this batch (and it is
        # read again) instead of both decrementing the far end's counter
        tx.delete(removal.key, "attribute_exists(PK)", fail(Raced(removal.key.sk)))
        if removal.far is not None:
            counts = deltas.setdefault(removal.far, {})
            counts[removal.counter] = counts.get(removal.counter, 0) - 1
    for far, counts in deltas.items():
        names = {f"#c{i}": name for i, name in enumerate(counts)}
        tx.update(
            far,
            "ADD " + ", ".join(f"#c{i} :c{i}" for i in range(len(counts))),
            names=names,
            values={f":c{i}": delta for i, delta in enumerate(counts.values())},
            condition="attribute_exists(PK)",
            on_fail=fail(Raced(far.pk)),
        )
    return removals[taken:]


async def _edges_of(table: Table, node: NodeKey) -> list[_Removal]:
    own, incoming = await asyncio.gather(
        table.query_all(str(node), None), table.query_all(str(node), None, index="inverted")
    )
    own = [i for i in own if i["SK"] != str(node)]
    incoming = [i for i in incoming if i["PK"] != str(node) and "edge" in i]
    return _removals(node, own, incoming)


def _unchanged(names: dict[str, str], values: dict[str, Any], node: Item) -> str:
    """A condition that the node's version and edge counters are as read."""
    parts = ["#version = :version"]
    names["#version"] = "version"
    values[":version"] = node["version"]
    for i, name in enumerate(counters_of(NodeType(node["type"]))):
        names[f"#n{i}"] = name
        if name in node:
            parts.append(f"#n{i} = :n{i}")
            values[f":n{i}"] = node[name]
        else:
            parts.append(f"attribute_not_exists(#n{i})")
    return " AND ".join(parts)


async def delete_node(table: Table, key: NodeKey, max_actions: int = MAX_ACTIONS) -> None:
    """Delete a node, its email claim, every edge to or from it and what it owns.

    When that fits in one transaction it is one, conditioned on the node's counters being as
    read (so no edge was added meanwhile). Otherwise the node is first marked ``deleting``
    (reads treat it as gone, no edge can be added to it, and it is listed on ``gsi2`` under
    ``DELETING``), then its edges are removed in idempotent transactions, then the node item;
    :func:`resume_deletions` finishes a deletion interrupted part-way.
    """
    for _ in range(ATTEMPTS):
        # The node first, then its edges: an edge added after this read changes a counter, so
        # the condition below catches it (read concurrently, an edge added between the Query
        # and this read would be counted but not deleted).
        node = await table.get_item(key.item)
        if node is None:
            raise NotFound(f"{key} does not exist")
        if node.get("deleting"):
            await _finish_deletion(table, key, max_actions)
            return
        removals = await _edges_of(table, key)
        tx = Tx(table)
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        condition = _unchanged(names, values, node)
        room = max_actions - 1 - ("email" in node)
        rest = _pack(tx, removals, room)
        if not rest:
            tx.delete(key.item, condition, lambda _o: Raced(key), names=names, values=values)
            if "email" in node:
                tx.delete(email_key(node["email"]))
            try:
                await tx.commit()
            except Raced:
                continue
            return
        mark = Tx(table)
        mark.update(
            key.item,
            "SET deleting = :t, GSI2PK = :d, GSI2SK = :k",
            names=names,
            values=values | {":t": True, ":d": DELETING, ":k": str(key)},
            condition=condition,
            on_fail=lambda _o: Raced(key),
        )
        if "email" in node:
            mark.delete(email_key(node["email"]))
        try:
            await mark.commit()
        except Raced:
            continue
        await _finish_deletion(table, key, max_actions)
        return
    raise Raced(key)


async def _finish_deletion(table: Table, key: NodeKey, max_actions: int = MAX_ACTIONS) -> None:
    """Remove a marked node's edges batch by batch, then the node. Safe to run again."""
    while removals := await _edges_of(table, key):
        while removals:
            tx = Tx(table)
            rest = _pack(tx, removals, max_actions)
            try:
                await tx.commit()
            except Raced:
                break  # someone removed one of these edges first: read them again
            removals = rest
    tx = Tx(table)
    tx.delete(key.item, "attribute_exists(deleting)", fail(Raced(key)))
    with contextlib.suppress(Raced):  # another run of this job deleted it first
        await tx.commit()


async def resume_deletions(table: Table) -> int:
    """Finish every deletion left part-way (by a crash); returns how many."""
    marked = await table.query_all(DELETING, None, index="gsi2")
    for item in marked:
        await _finish_deletion(table, NodeKey.parse(item["PK"]))
    return len(marked)
