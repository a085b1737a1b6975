"""Sending a write: the conditioned actions every write is made of, and their commit.

A write that changes one item is one PutItem/UpdateItem/DeleteItem with a condition; more than
one item is one TransactWriteItems. Each action carries what a failed condition means
(NOT_FOUND, CONFLICT). A failed condition whose item is already exactly what this write meant to
leave is taken as success: a retry whose first attempt applied (single-item writes have no
client token). A request sent with an Idempotency-Key writes its record
(:mod:`graph.writes.idempotency`) in its first transaction, so there a one-item write is a
two-item transaction. A write whose replicas change commits them with it
(:meth:`Committer.commit_delta`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from graph.errors import BadUserInput, EdgewiseError, Unavailable
from graph.items import Codec, Ref
from graph.keys import ItemKey
from graph.marks import unmarked
from graph.reads import Reads
from graph.table import Failure, Item, Table, to_dynamo
from graph.writes import idempotency
from graph.writes.items import Items
from graph.writes.pending import commit_pending
from graph.writes.replicas import Delta, Upkeep
from graph.writes.transaction import MAX_ACTIONS, Action
from model import EdgeType, Model, NodeType
from model.types import RECORD_EXPIRES

__all__ = ["ATTEMPTS", "Change", "Committer", "Missing", "always"]

ATTEMPTS = 5  # a write whose reads went stale meanwhile reads again this often
Change = tuple[EdgeType, Ref, Ref, "Item | None"]  # an edge item changed: None when removed


class Missing(EdgewiseError):
    """The item a delete was conditioned on is gone: the write answers that there was none."""


def always(error: EdgewiseError) -> Failure:
    """A failed condition's meaning whatever the item holds."""
    return lambda _old: error


def _value(v: Any) -> dict[str, Any]:
    value: dict[str, Any] = to_dynamo({"v": v})["v"]
    return value


class Committer:
    """One model's writes through one table (a request's view): the actions they are made of
    and their commit. What :mod:`graph.writes`' modules share; :class:`Writer
    <graph.writes.writer.Writer>` adds the writes of nodes and edges."""

    def __init__(self, table: Table, codec: Codec) -> None:
        self.table = table
        self.codec = codec
        self.model: Model = codec.model
        self.layout = table.layout
        self.items = Items(codec, table.layout)
        self.upkeep = Upkeep(codec, table) if self.model.replicas else None

    # ---- actions ---------------------------------------------------------------------------

    def put_action(self, item: Item, condition: str | None, on_fail: Failure | None) -> Action:
        """A Put of ``item``; ``condition`` may name the partition key as ``{pk}``."""
        action = Action("Put", self.layout.item_key(item), {"Item": to_dynamo(item)}, leaves=item)
        if condition:
            action.condition = condition.format(pk=action.expr.name(self.layout.pk))
            action.on_fail = on_fail
        return action

    def update_action(
        self,
        key: ItemKey,
        sets: Mapping[str, Any],
        removes: Iterable[str] = (),
        adds: Mapping[str, int] | None = None,
    ) -> Action:
        """An Update (no condition) setting, removing and adding to attributes."""
        action = Action("Update", key, {"Key": self.layout.key(key)})
        e = action.expr
        parts = []
        if sets:
            parts.append("SET " + ", ".join(f"{e.name(k)} = {e.value(v)}" for k, v in sets.items()))
        removes = list(removes)
        if removes:
            parts.append("REMOVE " + ", ".join(e.name(k) for k in removes))
        if adds:
            parts.append("ADD " + ", ".join(f"{e.name(k)} {e.value(v)}" for k, v in adds.items()))
        action.body["UpdateExpression"] = " ".join(parts)
        return action

    def exists_action(
        self,
        key: ItemKey,
        on_fail: Failure | None,
        kind: str = "ConditionCheck",
        version: int | None = None,
        adds: Mapping[str, int] | None = None,
        node: NodeType | None = None,
    ) -> Action:
        """An action on an item that must exist, not being deleted (at ``version``), an item
        of ``node``'s type when given: a ConditionCheck, a Delete, or with ``adds`` an Update
        of counters, which is then the existence check."""
        if adds:
            action = self.update_action(key, {}, adds=adds)
        else:
            action = Action(kind, key, {"Key": self.layout.key(key)})
        action.condition = f"attribute_exists({action.expr.name(self.layout.pk)})"
        action.condition += unmarked(self.model, action.expr)  # a node being deleted is gone
        if node is not None:  # another type's item at that key is none of this one
            action.condition += self.codec.of_type(node, action.expr)
        if version is not None and self.model.version_attribute:
            action.condition += (
                f" AND {action.expr.name(self.model.version_attribute)} = "
                f"{action.expr.value(version)}"
            )
        action.on_fail = on_fail
        return action

    def params(self, action: Action) -> dict[str, Any]:
        """An action's parameters of a single-item call (no ``TableName``)."""
        params = dict(action.body)
        if action.condition:
            params["ConditionExpression"] = action.condition
        params |= action.expr.params(_value)
        return params

    async def edges_at(self, edge: EdgeType, key: ItemKey, end: str) -> list[Item]:
        """Every ``edge`` item whose ``end`` is the node at ``key``."""
        listing = self.codec.edges_at(edge, key, end)
        return [] if listing is None else await Reads(self.table).alls.load(listing)

    # ---- commits ---------------------------------------------------------------------------

    @property
    def room(self) -> int:
        """Actions the next transaction may hold: one less while it must carry the request's
        idempotency record."""
        state = idempotency.current()
        return MAX_ACTIONS - (1 if state is not None and not state.written else 0)

    async def commit(self, actions: list[Action]) -> None:
        """Commit ``actions`` (nothing when there are none): one single-item call for one
        action, else one transaction; a keyed request's first carries its record."""
        if not actions:
            return
        state = idempotency.current()
        if state is not None:
            await self._commit_keyed(state, actions)
            return
        if len(actions) == 1 and actions[0].kind != "ConditionCheck":
            await self._commit_one(actions[0])
            return
        await self.transact(actions)

    async def transact(self, actions: list[Action], token: str | None = None) -> None:
        """Commit ``actions`` as one TransactWriteItems (``token``: its ClientRequestToken);
        BAD_USER_INPUT when they are more than one transaction holds."""
        if len(actions) > MAX_ACTIONS:
            raise BadUserInput(
                f"this write needs {len(actions)} items changed at once; "
                f"a transaction holds at most {MAX_ACTIONS}"
            )
        body = []
        for action in actions:
            params = self.params(action) | {"TableName": self.table.name}
            if action.condition and action.on_fail is not None:
                params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            body.append({action.kind: params})
        await self.table.transact_write(body, [a.on_fail for a in actions], token)

    async def _commit_keyed(self, state: idempotency.Keyed, actions: list[Action]) -> None:
        """A commit of a request sent with an Idempotency-Key: its first carries the record
        (see :mod:`graph.writes.idempotency`), a one-item write then being a two-item transaction;
        every transaction's client token derives from the key. Once another request holds the
        key, nothing more is written."""
        if state.lost:
            raise idempotency.Taken()
        if state.written:
            if len(actions) == 1 and actions[0].kind != "ConditionCheck":
                await self._commit_one(actions[0])
            else:
                await self.transact(actions, state.token())
            return
        item = state.item(self.layout.pk, self.layout.sk, time.time())
        record = Action("Put", state.key, {"Item": to_dynamo(item)}, on_fail=state.failure)
        e = record.expr
        record.condition = (
            f"attribute_not_exists({e.name(self.layout.pk)}) OR "
            f"{e.name(RECORD_EXPIRES)} < {e.value(int(time.time()))}"
        )
        try:
            await self.transact([record, *actions], state.token())
        except idempotency.Applied:
            pass  # an earlier attempt of this transaction applied; its answer was lost
        except Unavailable:  # sent, maybe applied: the record tells
            found = await self.table.get_item(state.key)
            if found is None or found.get("owner") != state.owner:
                raise
        state.written = True

    async def _commit_one(self, action: Action) -> None:
        operation = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem"}
        await self.table.write(
            operation[action.kind], self.params(action), action.on_fail, action.leaves
        )

    async def commit_changes(self, actions: list[Action], changes: list[Change]) -> None:
        """Commit ``actions`` with the replicas' part of the edge ``changes`` (edge, from, to,
        the edge item as left: None when removed); :class:`~graph.writes.replicas.Moved` when a
        path changed between the reads and the commit (read again)."""
        delta = Delta()
        if self.upkeep is not None:
            for change in changes:
                delta.merge(await self.upkeep.change(*change))
        await self.commit_delta(actions, delta)

    async def commit_delta(self, actions: list[Action], delta: Delta) -> None:
        """Commit ``actions`` with the replicas' ``delta``: in one transaction when it fits,
        else by the pending protocol (:mod:`graph.writes.pending`)."""
        upkeep = self.upkeep
        if upkeep is None:
            await self.commit(actions)
        elif delta.size(actions) <= self.room:
            await self.commit(upkeep.fold(actions, delta))
        else:
            await commit_pending(upkeep, self.transact, self.commit, actions, delta)
