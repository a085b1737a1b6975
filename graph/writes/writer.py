"""Generic writes through a model: items built from field values (key, type, version, index
attributes, copies), and the create/update/delete and edge mutations.

A write that changes one item is one PutItem/UpdateItem/DeleteItem with a condition; more than
one item is one TransactWriteItems. Each carries what a failed condition means (NOT_FOUND,
CONFLICT). A failed condition whose item is already exactly what this write meant to leave is
taken as success: a retry whose first attempt applied (single-item writes have no client token).
A request sent with an Idempotency-Key writes its record (:mod:`graph.writes.idempotency`) in its
first transaction, so there a one-item write is a two-item transaction.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from graph.errors import BadUserInput, Conflict, EdgewiseError, NotFound, Unavailable
from graph.items import Codec, Ref, shard_of
from graph.keys import ItemKey, new_id
from graph.marks import is_marked, unmarked
from graph.reads import Branch, Listing, Reads
from graph.table import Failure, Item, Table, from_dynamo, to_dynamo
from graph.writes import idempotency
from graph.writes.constraints import check_values
from graph.writes.pending import commit_pending
from graph.writes.replicas import Delta, Moved, Upkeep, clock_of
from graph.writes.transaction import MAX_ACTIONS, Action
from model import EdgeType, Field, KeyValueError, Model, NodeType
from model.types import RECORD_EXPIRES, SHARD

__all__ = ["Writer"]

ATTEMPTS = 5  # an update without expectedVersion re-reads a node changed meanwhile this often
Change = tuple[EdgeType, Ref, Ref, "Item | None"]  # an edge item changed: None when removed


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _value(v: Any) -> dict[str, Any]:
    value: dict[str, Any] = to_dynamo({"v": v})["v"]
    return value


class Writer:
    """Writes of one model's items through one table (a request's view)."""

    def __init__(self, table: Table, codec: Codec) -> None:
        self.table = table
        self.codec = codec
        self.model: Model = codec.model
        self.layout = table.layout
        self.upkeep = Upkeep(codec, table) if self.model.replicas else None

    # ---- items -----------------------------------------------------------------------------

    def node_item(self, node: NodeType, values: Mapping[str, Any], at: str | None) -> Item:
        """A node's item for its field values (GraphQL names; key placeholders included)."""
        model = self.model
        key = self.codec.key(node, values)
        item: Item = {self.layout.pk: key.pk, self.layout.sk: key.sk}
        if model.type_attribute:
            item[model.type_attribute] = node.type_value
        if model.version_attribute:
            item[model.version_attribute] = 1
        if model.timestamps and at:
            item |= dict.fromkeys(model.stamps, at)
            stamped = {n: at for n, f in node.fields.items() if f.kind == "stamp"}
            values = stamped | dict(values)
        if model.store_key_fields and "id" in node.key_fields:
            item["id"] = values["id"]
        for name, f in node.fields.items():
            stored = f.kind == "value" or (
                f.kind == "key" and (model.store_key_fields or name in node.declared)
            )
            if stored and values.get(name) is not None:
                item[f.attribute] = values[name]
        item |= self.index_attributes(
            node.indexes, {k: v for k, v in values.items() if v is not None}
        )
        return item

    def index_attributes(self, writes: Iterable[Any], values: Mapping[str, Any]) -> Item:
        """The index key attributes for ``values``; an index whose templates lack a value is
        left out (a sparse index)."""
        out: Item = {}
        for write in writes:
            filled = dict(values)
            if write.shards is not None:
                filled[SHARD] = shard_of(
                    str(values.get("id", values.get("from", ""))), write.shards
                )
            needed = set(write.pk.placeholders) | set(write.sk.placeholders if write.sk else ())
            if not write.partial and any(filled.get(n) is None for n in needed):
                continue
            codec = self.codec
            pk = codec.format(write.pk, filled, write.partial)
            out[write.index.pk] = codec.typed(write.index.pk, pk)
            if write.sk is not None and write.index.sk is not None:
                sk = codec.format(write.sk, filled, write.partial)
                out[write.index.sk] = codec.typed(write.index.sk, sk)
        return out

    def edge_item(
        self,
        edge: EdgeType,
        source: Ref,
        target: Ref,
        fields: Mapping[str, Any],
        ends: Mapping[str, Mapping[str, Any]],
    ) -> Item:
        """An edge item; ``ends`` holds each end's field values for copies."""
        key = self.codec.edge_key(edge, source.key, target.key)
        item: Item = {self.layout.pk: key.pk, self.layout.sk: key.sk}
        if self.model.label_attribute:
            item[self.model.label_attribute] = edge.label
        values = dict(fields)
        for name, f in edge.fields.items():
            if f.kind == "copy":
                values[name] = ends[f.end or ""].get(f.source or "")
            if values.get(name) is not None:
                item[f.attribute] = values[name]
        ids = {"from": self.codec.id_of(source), "to": self.codec.id_of(target)}
        item |= self.index_attributes(edge.indexes, {**values, **ids})
        return item

    def values_of(self, node: NodeType, item: Mapping[str, Any]) -> dict[str, Any]:
        """Field values (GraphQL names) of a stored item, key placeholders included."""
        values: dict[str, Any] = dict(self.codec.key_values(node, self.codec.item_key(item)) or {})
        for name, f in node.fields.items():
            if f.kind in ("value", "stamp") and f.attribute in item:
                values[name] = item[f.attribute]
        return values

    # ---- sending ---------------------------------------------------------------------------

    @property
    def room(self) -> int:
        """Actions the next transaction may hold: one less while it must carry the request's
        idempotency record."""
        state = idempotency.current()
        return MAX_ACTIONS - (1 if state is not None and not state.written else 0)

    def _params(self, action: Action) -> dict[str, Any]:
        params = dict(action.body)
        if action.condition:
            params["ConditionExpression"] = action.condition
        params |= action.expr.params(_value)
        return params

    async def _commit(self, actions: list[Action]) -> None:
        if not actions:
            return
        state = idempotency.current()
        if state is not None:
            await self._commit_keyed(state, actions)
            return
        if len(actions) == 1 and actions[0].kind != "ConditionCheck":
            await self._commit_one(actions[0])
            return
        await self._transact(actions)

    async def _transact(self, actions: list[Action], token: str | None = None) -> None:
        if len(actions) > MAX_ACTIONS:
            raise BadUserInput(
                f"this write needs {len(actions)} items changed at once; "
                f"a transaction holds at most {MAX_ACTIONS}"
            )
        body = []
        for action in actions:
            params = self._params(action) | {"TableName": self.table.name}
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
                await self._transact(actions, state.token())
            return
        item = state.item(self.layout.pk, self.layout.sk, time.time())
        record = Action("Put", state.key, {"Item": to_dynamo(item)}, on_fail=state.failure)
        e = record.expr
        record.condition = (
            f"attribute_not_exists({e.name(self.layout.pk)}) OR "
            f"{e.name(RECORD_EXPIRES)} < {e.value(int(time.time()))}"
        )
        try:
            await self._transact([record, *actions], state.token())
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
            operation[action.kind], self._params(action), action.on_fail, action.leaves
        )

    def _put(self, item: Item, condition: str | None, on_fail: Failure | None) -> Action:
        action = Action("Put", self.layout.item_key(item), {"Item": to_dynamo(item)}, leaves=item)
        if condition:
            action.condition = condition.format(pk=action.expr.name(self.layout.pk))
            action.on_fail = on_fail
        return action

    def _exists(
        self,
        key: ItemKey,
        on_fail: Failure | None,
        kind: str = "ConditionCheck",
        version: int | None = None,
        adds: Mapping[str, int] | None = None,
    ) -> Action:
        """An action on an item that must exist (at ``version``): a ConditionCheck, a Delete,
        or with ``adds`` an Update of counters, which is then the existence check."""
        if adds:
            action = self._update(key, {}, adds=adds)
        else:
            action = Action(kind, key, {"Key": self.layout.key(key)})
        action.condition = f"attribute_exists({action.expr.name(self.layout.pk)})"
        action.condition += unmarked(self.model, action.expr)  # a node being deleted is gone
        if version is not None and self.model.version_attribute:
            action.condition += (
                f" AND {action.expr.name(self.model.version_attribute)} = "
                f"{action.expr.value(version)}"
            )
        action.on_fail = on_fail
        return action

    def _update(
        self,
        key: ItemKey,
        sets: Mapping[str, Any],
        removes: Iterable[str] = (),
        adds: Mapping[str, int] | None = None,
    ) -> Action:
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

    # ---- nodes -----------------------------------------------------------------------------

    async def create(self, node: NodeType, values: Mapping[str, Any]) -> Item:
        """Put a new node; an existing key is CONFLICT. A child's parent must exist."""
        check_values(node.fields, values)
        values = dict(values)
        if "id" in node.key_fields and values.get("id") is None:
            values["id"] = new_id()
        item = self.node_item(node, values, now_iso())
        key = self.layout.item_key(item)

        taken = Conflict(f"{node.name} {self._describe(node, key)} already exists")
        actions = [self._put(item, "attribute_not_exists({pk})", lambda _old: taken)]
        actions += self._claims(node, key, {}, values)
        if node.parent is not None:
            parent_key = self._parent_key(node, key)
            missing = NotFound(f"{node.parent.type} {parent_key.pk} does not exist")
            counter = node.parent_counter
            adds = {counter: 1} if counter else None
            actions.append(self._exists(parent_key, lambda _o: missing, adds=adds))
        if self.upkeep is not None and self.upkeep.names(node):  # it may start a replica
            await self._commit_delta(
                actions, await self.upkeep.change_ref(Ref(node, key), None, item)
            )
            return item
        await self._commit(actions)
        return item

    def _parent_key(self, node: NodeType, key: ItemKey) -> ItemKey:
        assert node.parent is not None
        values = self.codec.key_values(node, key) or {}
        link = {theirs: values[mine] for mine, theirs in node.parent.link}
        return self.codec.key(self.model.types[node.parent.type], link)

    def _claim_key(self, field: Field, value: Any) -> ItemKey:
        assert field.unique is not None
        text = str(value).lower() if field.unique.case_insensitive else str(value)
        claim = self.codec.format(field.unique.key, {field.name: text})
        return ItemKey(claim, claim)

    def claim_item(self, field: Field, value: Any, owner: ItemKey) -> Item:
        """The item claiming a unique field's value for its node (``owner``: the node's key)."""
        unique = field.unique
        assert unique is not None
        claim = self._claim_key(field, value)
        item: Item = {self.layout.pk: claim.pk, self.layout.sk: claim.sk, unique.owner: owner.pk}
        if unique.type_value is not None and self.model.type_attribute:
            item[self.model.type_attribute] = unique.type_value
        return item

    def _claims(
        self, node: NodeType, key: ItemKey, before: Mapping[str, Any], after: Mapping[str, Any]
    ) -> list[Action]:
        """Claim items of unique fields whose value changes: the new one put (CONFLICT when
        another node holds it), the old one deleted."""
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
                actions.append(_delete(self, self._claim_key(unique, old)))
            if new is not None:
                item = self.claim_item(unique, new, key)
                taken = Conflict(f"the {name} {new!r} is already used by another {node.name}")
                actions.append(self._put(item, "attribute_not_exists({pk})", _always(taken)))
        return actions

    def _describe(self, node: NodeType, key: ItemKey) -> str:
        return key.pk if node.single else f"{key.pk} / {key.sk}"

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
        check_values(node.fields, changes)
        for _ in range(ATTEMPTS - 1):
            try:
                return await self._update_once(node, key, changes, expected, read=read)
            except (_Changed, Moved):
                read = None
                continue
        return await self._update_once(node, key, changes, expected, last=True)

    async def _update_once(
        self,
        node: NodeType,
        key: ItemKey,
        changes: Mapping[str, Any],
        expected: int | None,
        last: bool = False,
        read: Item | None = None,
    ) -> Item:
        version_attr = self.model.version_attribute
        old = read if read is not None else await self.table.get_item(key)
        if old is None or is_marked(self.model, old):
            raise NotFound(f"{node.name} {self._describe(node, key)} does not exist")
        version = int(old.get(version_attr, 0)) if version_attr else None
        if expected is not None and version is not None and expected != version:
            raise Conflict(f"{node.name} {key.pk} is at version {version}, not {expected}")
        before = self.values_of(node, old)
        after = {k: v for k, v in before.items()} | dict(changes)
        new = self.node_item(node, after, None)
        created, modified = self.model.stamps
        if created in old:
            new[created] = old[created]
        if self.model.timestamps:
            new[modified] = now_iso()
        if version_attr:
            new[version_attr] = (version or 0) + 1
        for attr, value in old.items():  # attributes the model does not know stay as they are
            if attr not in new and not self._owned(node, attr):
                new[attr] = value
        sets = {
            k: v
            for k, v in new.items()
            if old.get(k) != v and k not in (self.layout.pk, self.layout.sk)
        }
        removes = [k for k in old if k not in new]
        action = self._update(key, sets, removes)
        cond = f"attribute_exists({action.expr.name(self.layout.pk)})"
        cond += unmarked(self.model, action.expr)
        if version_attr:
            cond += f" AND {action.expr.name(version_attr)} = {action.expr.value(version)}"
        action.condition = cond

        def stale(current: Item | None) -> EdgewiseError:
            if current is None or is_marked(self.model, current):
                return NotFound(f"{node.name} {key.pk} does not exist")
            message = f"{node.name} {key.pk} was changed concurrently; read it again"
            return Conflict(message) if expected is not None or last else _Changed(message)

        action.on_fail = stale
        action.leaves = new
        actions = [action, *self._claims(node, key, before, after)]
        copies = await self._copies(node, key, before, after)
        if self.upkeep is not None and self.upkeep.names(node):
            delta = await self.upkeep.change_ref(Ref(node, key), old, new)
            if delta.bumps:  # a replicated reference changed
                await self._commit_delta(actions + copies, delta)
                return new
        if len(actions) + len(copies) > self.room and copies:  # the rest in further writes
            room = max(self.room - len(actions), 0)
            await self._commit(actions + copies[:room])
            await self._refresh(node, key, before, after, copies[room:])
            return new
        await self._commit(actions + copies)
        return new

    def _owned(self, node: NodeType, attr: str) -> bool:
        """Attributes the model writes for this type (so a removed value is removed)."""
        owned = {f.attribute for f in node.fields.values()}
        owned |= {w.index.pk for w in node.indexes} | {
            w.index.sk for w in node.indexes if w.index.sk
        }
        return attr in owned

    async def _copies(
        self, node: NodeType, key: ItemKey, before: Mapping[str, Any], after: Mapping[str, Any]
    ) -> list[Action]:
        """Updates of the edges that copy a changed field of this node: the copies and the
        index attributes built from them (a copy that became null is removed), each on the
        condition that the edge still exists (a removed edge is not written back)."""
        actions: list[Action] = []
        for edge in self.model.edges.values():
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
                for item in await self._edges_at(edge, key, end):
                    source = self.codec.end(edge, item, "from")
                    target = self.codec.end(edge, item, "to")
                    plain = {
                        n: item.get(f.attribute) for n, f in edge.fields.items() if f.kind != "copy"
                    }
                    kept = {  # the other end's copies stay as they are
                        f.source or "": item.get(f.attribute)
                        for f in edge.fields.values()
                        if f.kind == "copy" and f.end == other
                    }
                    fresh = self.edge_item(edge, source, target, plain, {end: after, other: kept})
                    sets = {k: v for k, v in fresh.items() if item.get(k) != v}
                    removes = [a for a in owned if a in item and a not in fresh]
                    if sets or removes:
                        edge_key = self.layout.item_key(item)
                        action = self._update(edge_key, sets, removes)
                        action.condition = f"attribute_exists({action.expr.name(self.layout.pk)})"
                        gone = f"{edge.label} edge {edge_key.pk} / {edge_key.sk} was removed"
                        action.on_fail = _always(_Changed(f"{gone} concurrently; try again"))
                        actions.append(action)
        return actions

    async def _refresh(
        self,
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
        for _ in range(ATTEMPTS):
            try:
                start = 0
                while start < len(updates):
                    check, size = self._holds(node, key, after), self.room - 1
                    await self._commit([check, *updates[start : start + size]])
                    start += size
                return
            except _Superseded:
                return
            except _Changed:
                updates = await self._copies(node, key, before, after)
        raise Conflict(f"the edges of {node.name} {key.pk} keep changing; update it again")

    def _holds(self, node: NodeType, key: ItemKey, after: Mapping[str, Any]) -> Action:
        """A check that the node exists and holds ``after``'s values of its copied fields."""
        action = self._exists(key, _always(_Superseded()))
        e = action.expr
        for edge in self.model.edges.values():
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
                    f"attribute_not_exists({name})"
                    if value is None
                    else f"{name} = {e.value(value)}"
                )
                action.condition = f"{action.condition} AND {test}"
        return action

    async def _edges_at(self, edge: EdgeType, key: ItemKey, end: str) -> list[Item]:
        """Every ``edge`` item whose ``end`` is the node at ``key``."""
        listing = self.codec.edges_at(edge, key, end)
        return [] if listing is None else await Reads(self.table).alls.load(listing)

    # ---- edges -----------------------------------------------------------------------------

    async def add_edge(
        self, edge: EdgeType, source: Ref, target: Ref, fields: Mapping[str, Any]
    ) -> Item:
        """Put an edge; both ends must exist (checked in the same transaction), a repeated edge
        is CONFLICT, and so is a second edge at an end that is ``one``: conditioned on that
        end's counter in the same transaction when the edge is counted, else read first."""
        check_values(edge.fields, fields)
        for attempt in range(ATTEMPTS):
            item, actions = await self._adding(edge, source, target, fields)
            try:
                await self._commit_changes(actions, [(edge, source, target, item)])
                return item
            except Moved:
                if attempt == ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    async def _adding(
        self, edge: EdgeType, source: Ref, target: Ref, fields: Mapping[str, Any]
    ) -> tuple[Item, list[Action]]:
        copies = {f.end for f in edge.fields.values() if f.kind == "copy"}
        ends: dict[str, dict[str, Any]] = {"from": {}, "to": {}}
        versions: dict[str, int | None] = {"from": None, "to": None}
        if copies:
            for end, ref in (("from", source), ("to", target)):
                if end in copies:
                    old = await self.table.get_item(ref.key)
                    if old is None or is_marked(self.model, old):
                        raise NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
                    ends[end] = self.values_of(ref.type, old)
                    version_attr = self.model.version_attribute
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
                and await self._edges_at(edge, ref.key, end)
            ):
                raise _one_taken(ref, edge, side.field)
        item = self.edge_item(edge, source, target, fields, ends)

        repeated = Conflict(f"{source.key.pk} already has a {edge.label} edge to {target.key.pk}")
        actions = [self._put(item, "attribute_not_exists({pk})", lambda _old: repeated)]
        for end, ref in (("from", source), ("to", target)):
            if ref.type.implicit:
                continue  # no item of its own: it exists once the edge does
            counter = edge.counter(end)
            action = self._exists(
                ref.key,
                _gone_or_changed(ref, self.model),
                version=versions[end],
                adds={counter: 1} if counter else None,
            )
            side = ones[end]
            if counter and side is not None and side.one:  # none yet, or all removed
                name = action.expr.name(counter)
                action.condition = (
                    f"{action.condition} AND "
                    f"(attribute_not_exists({name}) OR {name} = {action.expr.value(0)})"
                )
                action.on_fail = _counted_one(ref, edge, side.field, counter, self.model)
            actions.append(action)
        return item, actions

    async def remove_edge(self, edge: EdgeType, source: Ref, target: Ref) -> bool:
        """Delete an edge; False when there was none."""
        key = self.codec.edge_key(edge, source.key, target.key)
        for attempt in range(ATTEMPTS):
            actions = [self._exists(key, lambda _old: _Missing(), "Delete")]
            for end, ref in (("from", source), ("to", target)):
                counter = edge.counter(end)
                if counter:
                    actions.append(self._update(ref.key, {}, adds={counter: -1}))
            try:
                await self._commit_changes(actions, [(edge, source, target, None)])
            except _Missing:
                return False
            except Moved:
                if attempt == ATTEMPTS - 1:
                    raise
                continue
            return True
        raise AssertionError("unreachable")

    async def _commit_changes(self, actions: list[Action], changes: list[Change]) -> None:
        """Commit ``actions`` with the replicas' part of the edge ``changes`` (edge, from, to,
        the edge item as left: None when removed); :class:`Moved` when a path changed between
        the reads and the commit (read again)."""
        delta = Delta()
        if self.upkeep is not None:
            for change in changes:
                delta.merge(await self.upkeep.change(*change))
        await self._commit_delta(actions, delta)

    async def _commit_delta(self, actions: list[Action], delta: Delta) -> None:
        """Commit ``actions`` with the replicas' ``delta``: in one transaction when it fits,
        else by the pending protocol (:mod:`graph.writes.pending`)."""
        upkeep = self.upkeep
        if upkeep is None:
            await self._commit(actions)
        elif upkeep.size(actions, delta) <= self.room:
            await self._commit(upkeep.fold(actions, delta))
        else:
            await commit_pending(upkeep, self._transact, self._commit, actions, delta)

    # ---- building blocks for hooks ---------------------------------------------------------

    async def insert(
        self, items: Iterable[Item], counts: Iterable[tuple[Ref, Mapping[str, int]]] = ()
    ) -> None:
        """Put new items (CONFLICT when a key is taken) and add to counters of existing nodes
        (NOT_FOUND when one is missing), in one write: a node with the edge that reaches it, a
        child counted on its parent."""
        items, counts = list(items), list(counts)
        changes: list[Change] = []
        for item in items:
            edge = self.codec.edge_type(item)
            if edge is not None:
                ends = (self.codec.end(edge, item, "from"), self.codec.end(edge, item, "to"))
                changes.append((edge, *ends, item))
        for attempt in range(ATTEMPTS):
            actions = []
            for item in items:
                key = self.layout.item_key(item)
                taken = Conflict(f"{key.pk} / {key.sk} already exists")
                actions.append(self._put(item, "attribute_not_exists({pk})", _always(taken)))
            for ref, adds in counts:
                actions.append(
                    self._exists(ref.key, _gone_or_changed(ref, self.model), adds=dict(adds))
                )
            try:
                await self._commit_changes(actions, changes)
                return
            except Moved:
                if attempt == ATTEMPTS - 1:
                    raise

    async def update_edge(
        self, edge: EdgeType, source: Ref, target: Ref, changes: Mapping[str, Any]
    ) -> Item:
        """Set fields of an existing edge (GraphQL names; ``None`` removes one) in one
        UpdateItem; NOT_FOUND when there is no such edge. Returns the edge as it now is."""
        for write in edge.indexes:
            used = set(write.pk.placeholders) | set(write.sk.placeholders if write.sk else ())
            if used & set(changes):
                raise ValueError(f"{edge.label}'s index keys use {sorted(used & set(changes))}")
        key = self.codec.edge_key(edge, source.key, target.key)
        attributes = {edge.fields[name].attribute: value for name, value in changes.items()}
        sets = {a: v for a, v in attributes.items() if v is not None}
        action = self._update(key, sets, [a for a, v in attributes.items() if v is None])
        action.condition = f"attribute_exists({action.expr.name(self.layout.pk)})"
        missing = NotFound(f"{source.key.pk} has no {edge.label} edge to {target.key.pk}")
        if self.upkeep is not None and self.upkeep.copied(edge, set(attributes)):
            return await self._update_copied(edge, source, target, attributes, missing)
        state = idempotency.current()
        if state is not None and not state.written:  # with the record: a transaction
            action.on_fail = _always(missing)
            await self._commit([action])
            item = await self.table.get_item(key)
            if item is None:
                raise missing
            return item
        params = self._params(action) | {"ReturnValues": "ALL_NEW"}
        response = await self.table.write("UpdateItem", params, _always(missing))
        return from_dynamo(response["Attributes"])

    async def _update_copied(
        self,
        edge: EdgeType,
        source: Ref,
        target: Ref,
        attributes: Mapping[str, Any],
        missing: NotFound,
    ) -> Item:
        """:meth:`update_edge` of fields a replica copies: the edge read first, then its
        update and the replicas in one transaction, conditioned on the edge as read."""
        assert self.upkeep is not None
        key = self.codec.edge_key(edge, source.key, target.key)
        sets = {a: v for a, v in attributes.items() if v is not None}
        removes = [a for a, v in attributes.items() if v is None]
        for attempt in range(ATTEMPTS):
            old = await self.table.get_item(key)
            if old is None:
                raise missing
            after = {k: v for k, v in old.items() if k not in removes} | sets
            action = self._update(key, sets, removes)
            action.condition = f"attribute_exists({action.expr.name(self.layout.pk)})"
            action.on_fail = _always(missing)
            delta = await self.upkeep.change(edge, source, target, after, added=False)
            delta.clocks.setdefault(key, clock_of(old))  # no other change of it in between
            delta.bumps.add(key)
            try:
                await self._commit_delta([action], delta)
            except Moved:
                if attempt == ATTEMPTS - 1:
                    raise
                continue
            return after
        raise AssertionError("unreachable")

    async def find_child(
        self, node: NodeType, parent: Ref, values: Mapping[str, Any]
    ) -> Item | None:
        """The first ``node`` item in ``parent``'s partition whose key values include
        ``values`` (a child named by part of its key, e.g. its id without its location): one
        Query under the sort-key prefix ``values`` fix, following its pages."""
        assert node.parent is not None
        theirs = self.codec.key_values(parent.type, parent.key) or {}
        link = {mine: theirs[their] for mine, their in node.parent.link}
        partition = self.codec.format(node.pk, link)
        try:
            prefix = node.sk.prefix(values)
        except KeyValueError:
            return None  # a value no key of this type can hold
        listing = Listing(None, (Branch(partition, prefix),))
        for item in await Reads(self.table).alls.load(listing):
            found = self.codec.key_values(node, self.layout.item_key(item))
            if (
                found is not None
                and self.codec.node_type(item) is node
                and all(found.get(k) == str(v) for k, v in values.items())
            ):
                return item
        return None

    async def delete_child(self, node: NodeType, key: ItemKey) -> bool:
        """Delete a child that has no children or edges of its own and uncount it on its parent,
        in one transaction; False when it is already gone."""
        actions = [self._exists(key, lambda _old: _Missing(), "Delete")]
        if node.parent_counter is not None:
            parent = self._parent_key(node, key)
            actions.append(self._update(parent, {}, adds={node.parent_counter: -1}))
        try:
            await self._commit(actions)
        except _Missing:
            return False
        return True


def _always(error: EdgewiseError) -> Failure:
    return lambda _old: error


def _gone_or_changed(ref: Ref, model: Model) -> Failure:
    def failure(old: Item | None) -> EdgewiseError:
        if old is None or is_marked(model, old):
            return NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
        return Conflict(f"{ref.type.name} {ref.key.pk} changed concurrently; try again")

    return failure


def _one_taken(ref: Ref, edge: EdgeType, field: str) -> Conflict:
    return Conflict(
        f"{ref.key.pk} already has a {edge.label} edge and its {ref.type.name}.{field} is one; "
        "remove that edge first"
    )


def _counted_one(ref: Ref, edge: EdgeType, field: str, counter: str, model: Model) -> Failure:
    def failure(old: Item | None) -> EdgewiseError:
        if old is None or is_marked(model, old):
            return NotFound(f"{ref.type.name} {ref.key.pk} does not exist")
        if int(old.get(counter, 0)) > 0:
            return _one_taken(ref, edge, field)
        return Conflict(f"{ref.type.name} {ref.key.pk} changed concurrently; try again")

    return failure


def _delete(writer: Writer, key: ItemKey) -> Action:
    return Action("Delete", key, {"Key": writer.layout.key(key)})


class _Changed(Conflict):
    """An update's node changed between its read and its write: read it again."""


class _Missing(EdgewiseError):
    pass


class _Superseded(EdgewiseError):
    """A later update changed the copied values: it refreshes the copies."""
