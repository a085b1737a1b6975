"""Replica changes too large for one transaction: MODELS.md's pending protocol.

A change whose replicas would not fit in its own TransactWriteItems (100 actions) goes in steps:

1. a *job* item is written (partition :data:`JOBS`) listing the starts whose replicas change,
   held by this process under a lease;
2. each start is *marked* (``edgewisePending`` + 1, its clock advanced), in transactions of up to
   :data:`BATCH` starts: from then on a read of it walks its path instead of its replicas;
3. the change commits (its edge, the counters, the clocks of the nodes it read), conditioned on
   the job still being held;
4. the replicas are written, in idempotent transactions that each renew the lease;
5. each mark is cleared (``edgewisePending`` - 1, the start dropped from the job) on the
   condition that the start's clock is still the one read after marking it. A start changed
   meanwhile by another write (which may have overwritten these replicas, or been overwritten)
   is compared with its path again and written (:meth:`graph.writes.replicas.Upkeep.recompute`)
   before its mark is cleared; then the job is deleted.

A failed change clears its marks the same way (its replicas are compared, nothing of it was
written). Work left by a crash is taken over once its lease has run out
(:func:`resume_replicas`, at the next start of the server and by ``edgewise rebuild``): each
start still listed is compared with its path, written and cleared. A mark is cleared once, by
whoever holds the job: the job loses the start in the same transaction.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from typing import Any

from graph.errors import Conflict, EdgewiseError
from graph.items import Ref
from graph.keys import ItemKey
from graph.reads import Branch, Listing, Reads
from graph.table import Item, to_dynamo
from graph.writes.replicas import (
    ABSENT,
    CLOCK,
    PENDING,
    Commit,
    Delta,
    Moved,
    Upkeep,
    clock_key,
    clock_of,
    on_clock,
)
from graph.writes.transaction import MAX_ACTIONS, Action
from model.types import CLOCK_SK, JOB_PREFIX

__all__ = ["BATCH", "JOBS", "LEASE", "commit_pending", "resume_replicas"]

JOBS = JOB_PREFIX + "jobs"  # the partition of the job items
LEASE = 60.0  # seconds a job is held without a write renewing it
AT_ONCE = 16  # starts compared at once when settling them one by one
BATCH = MAX_ACTIONS - 2  # starts a marking or clearing transaction holds (and the job)


class Lost(Conflict):
    """Another process took this job over (its lease ran out): it finishes the work."""

    def __init__(self) -> None:
        super().__init__("the replicas' work was taken over by another process")


class Job:
    """One job item, held by this process."""

    def __init__(self, upkeep: Upkeep, send: Commit, sk: str | None = None) -> None:
        self.upkeep = upkeep
        self.send = send
        self.layout = upkeep.layout
        self.key = ItemKey(JOBS, sk or uuid.uuid4().hex)
        self.owner = uuid.uuid4().hex

    def _action(self, kind: str) -> Action:
        return Action(kind, self.key, {"Key": self.layout.key(self.key)})

    def _held(self, action: Action, extra: str = "") -> Action:
        e = action.expr
        action.condition = f"{e.name('owner')} = {e.value(self.owner)}{extra}"
        action.on_fail = lambda _old: Lost()
        return action

    async def create(self, starts: list[str]) -> None:
        item: Item = {
            self.layout.pk: self.key.pk,
            self.layout.sk: self.key.sk,
            "owner": self.owner,
            "until": int(time.time() + LEASE),
            "starts": set(starts),
        }
        action = Action("Put", self.key, {"Item": to_dynamo(item)})
        await self.send([action])

    def renew(self) -> Action:
        """An action of any of the job's transactions: held, the lease renewed."""
        action = self._action("Update")
        e = action.expr
        action.body["UpdateExpression"] = f"SET {e.name('until')} = {e.value(_until())}"
        return self._held(action)

    def drop(self, starts: list[str]) -> Action:
        """Held, these starts still listed, and dropped (their marks are being cleared)."""
        action = self._action("Update")
        e = action.expr
        name, values = e.name("starts"), e.value(set(starts))
        action.body["UpdateExpression"] = f"DELETE {name} {values}"
        tests = "".join(f" AND contains({name}, {e.value(s)})" for s in starts)
        return self._held(action, tests)

    async def delete(self) -> None:
        action = self._action("Delete")
        await self.send(
            [self._held(action, f" AND attribute_not_exists({action.expr.name('starts')})")]
        )

    async def take(self, item: Item) -> bool:
        """Take over a job whose lease has run out; False when another process holds it."""
        action = self._action("Update")
        e = action.expr
        owner, until = e.name("owner"), e.name("until")
        action.body["UpdateExpression"] = (
            f"SET {owner} = {e.value(self.owner)}, {until} = {e.value(_until())}"
        )
        action.condition = f"{e.name('until')} = {e.value(int(item['until']))}"
        action.on_fail = lambda _old: Lost()
        try:
            await self.send([action])
        except Lost:
            return False
        return True


def _until() -> int:
    return int(time.time() + LEASE)


def _mark(layout: Any, key: ItemKey, step: int) -> Action:
    """A start's mark moved by ``step``: + 1 (its clock advanced too, the start must exist,
    unless the mark lives in its clock's item: :func:`graph.writes.replicas.clock_key`) or
    - 1."""
    action = Action("Update", key, {"Key": layout.key(key)})
    e = action.expr
    if step > 0:
        action.body["UpdateExpression"] = (
            f"ADD {e.name(PENDING)} {e.value(1)}, {e.name(CLOCK)} {e.value(1)}"
        )
        if key.sk != CLOCK_SK:
            action.condition = f"attribute_exists({e.name(layout.pk)})"
            action.on_fail = lambda _old: Moved()
    else:
        action.body["UpdateExpression"] = f"ADD {e.name(PENDING)} {e.value(-1)}"
    return action


async def commit_pending(
    upkeep: Upkeep, send: Commit, commit: Commit, actions: list[Action], delta: Delta
) -> None:
    """Commit ``actions`` (a change) whose replicas, ``delta``, do not fit in its transaction,
    by the protocol of this module. ``send`` writes one transaction of the protocol's own;
    ``commit`` writes the change."""
    codec = upkeep.codec
    refs = {key: _ref(upkeep, key) for key in sorted(delta.starts)}
    ids = {key: codec.global_id(ref) for key, ref in refs.items()}
    job = Job(upkeep, send)
    await job.create(list(ids.values()))
    keys = list(refs)
    for at in range(0, len(keys), BATCH):
        await send([job.renew(), *(_mark(upkeep.layout, k, +1) for k in keys[at : at + BATCH])])
    clocks = {k: clock_of(i) for k, i in (await upkeep.table.get_many(keys, True)).items()}
    change = replace(delta, puts={}, deletes=set(), bumps=delta.bumps - delta.starts)
    folded = upkeep.fold(list(actions), change)
    try:
        await commit([*folded, job.renew()])
    except BaseException:
        await _finish(upkeep, job, [], refs, ids, clocks)  # nothing of it was written
        raise
    writes = upkeep.fold([], replace(Delta(), puts=delta.puts, deletes=delta.deletes))
    await _finish(upkeep, job, writes, refs, ids, clocks)


async def _finish(
    upkeep: Upkeep,
    job: Job,
    writes: list[Action],
    refs: dict[ItemKey, Ref],
    ids: dict[ItemKey, str],
    clocks: dict[ItemKey, Any],
) -> None:
    """Write the replicas, clear the marks (comparing a start changed meanwhile again), delete
    the job. Stops quietly when another process took the job over."""
    send = job.send
    try:
        for at in range(0, len(writes), MAX_ACTIONS - 1):
            await send([job.renew(), *writes[at : at + MAX_ACTIONS - 1]])
        keys = list(refs)
        for at in range(0, len(keys), BATCH):
            chunk = keys[at : at + BATCH]
            clears = [_clear(upkeep, key, clocks.get(key, ABSENT)) for key in chunk]
            try:
                await send([job.drop([ids[k] for k in chunk]), *clears])
            except Moved:  # one of them changed meanwhile: one by one, compared again
                await _settle_all(upkeep, job, [(refs[k], ids[k]) for k in chunk])
        await job.delete()
    except Lost:
        return


def _clear(upkeep: Upkeep, key: ItemKey, clock: Any) -> Action:
    """A start's mark cleared on the condition that its clock is ``clock``; only that condition
    when it has no item (its delete took the mark with it)."""
    if clock is ABSENT:
        action = Action("ConditionCheck", key, {"Key": upkeep.layout.key(key)})
    else:
        action = _mark(upkeep.layout, key, -1)
    on_clock(action, upkeep.layout.pk, clock)
    return action


async def settle(upkeep: Upkeep, job: Job, start: Ref, start_id: str) -> None:
    """Compare one start's replicas with its path, write the difference and clear its mark
    (unless the job no longer lists it)."""
    replicas = [r for r in upkeep.model.replicas if r.start == start.type.name]

    def clear(clock: Any) -> list[Action]:
        return [job.drop([start_id]), _clear(upkeep, clock_key(start), clock)]

    await upkeep.recompute(start, replicas, job.send, clear)


async def _settle_all(upkeep: Upkeep, job: Job, starts: list[tuple[Ref, str]]) -> None:
    """:func:`settle` each start, :data:`AT_ONCE` at a time."""
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(start: Ref, start_id: str) -> None:
        async with gate:
            await settle(upkeep, job, start, start_id)

    await asyncio.gather(*(one(ref, start_id) for ref, start_id in starts))


def _ref(upkeep: Upkeep, key: ItemKey) -> Ref:
    """The start whose item, or clock's item, is at ``key``."""
    for replica in upkeep.model.replicas:
        node = upkeep.model.types[replica.start]
        if node.implicit and key.sk == CLOCK_SK:
            values = node.pk.parse(key.pk)
            if values is not None:
                return upkeep.codec.ref(node, values)
        elif upkeep.codec.key_values(node, key) is not None:
            return Ref(node, key)
    raise EdgewiseError(f"{key.pk} is no start of a replica")


async def resume_replicas(upkeep: Upkeep, send: Commit) -> int:
    """Finish every job whose lease has run out (a crash left it); returns how many."""
    listing = Listing(None, (Branch(JOBS),))
    finished = 0
    for item in await Reads(upkeep.table, consistent=True).alls.load(listing):
        if int(item.get("until", 0)) > time.time():
            continue  # held by a live process
        job = Job(upkeep, send, str(item[upkeep.layout.sk]))
        if not await job.take(item):
            continue
        starts = [(upkeep.codec.from_global_id(str(s)), str(s)) for s in item.get("starts") or ()]
        try:
            await _settle_all(upkeep, job, [(r, s) for r, s in starts if r is not None])
            await job.delete()
        except Lost:
            continue
        finished += 1
    return finished
