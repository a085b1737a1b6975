"""Replica changes too large for one transaction: MODELS.md's pending protocol.

A change whose replicas would not fit in its own TransactWriteItems (100 actions) goes in steps:

1. a *job* item is written (partition :data:`JOBS`), held by this process under a lease;
2. each start whose replicas change is *marked* (``edgewisePending`` + 1) and listed on the
   job in the same transaction, up to 99 starts a transaction: from then on a read of it walks
   its path instead of its replicas, and the job lists exactly the starts it marked; then the
   starts' clocks are read;
3. the change commits (its edge, the counters, the clocks of the nodes it read), with the job
   renewed, conditioned on the job still being held: the job exists before the change does, so
   a crash after the commit leaves the job that finishes it;
4. the replicas are written, on the condition that each start's clock is the one read after
   marking it, and advancing it (every write of a start's replicas does); then the marks are
   cleared, on the condition that the clock is the one the job's writes left: a start whose
   replicas another write wrote meanwhile is compared with its path again and written
   (:meth:`graph.writes.replicas.Upkeep.recompute`) before its mark is cleared; the job drops
   each start in the transaction that clears it, then is deleted.

Step 4 is the work that follows the change (:mod:`graph.writes.background`): the write answers
once its change committed, and the rest goes on in the background when the request's deadline
is near. A change that failed clears its marks (it wrote nothing); a change whose commit has
no known outcome (DynamoDB failed to answer) has each start it marked compared with its path.
Work left by a crash is taken over once its lease has run out (:func:`resume_replicas`: at the
server's start and every minute, and by ``edgewise rebuild``): each start still listed is
compared with its path, written and cleared. A mark is cleared once, by whoever holds the job:
the job loses the start in the same transaction.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from graph.errors import Conflict, EdgewiseError, Unavailable
from graph.items import Ref
from graph.keys import ItemKey
from graph.reads import Branch, Listing, Reads
from graph.table import Item, Table, to_dynamo
from graph.writes import background
from graph.writes.replicas import (
    ABSENT,
    CLOCK,
    PENDING,
    Delta,
    Moved,
    Upkeep,
    add_to,
    clock_key,
    clock_of,
    on_clock,
)
from graph.writes.transaction import Action, transact
from model.types import CLOCK_SK, JOB_PREFIX

__all__ = ["JOBS", "LEASE", "Job", "commit_pending", "resume_replicas"]

JOBS = JOB_PREFIX + "jobs"  # the partition of the job items
LEASE = 60.0  # seconds a job is held without a write renewing it
AT_ONCE = 16  # starts compared at once when settling them one by one
Commit = Callable[[list[Action]], Awaitable[None]]


class Lost(Conflict):
    """Another process took this job over (its lease ran out): it finishes the work."""

    def __init__(self) -> None:
        super().__init__("the replicas' work was taken over by another process")


class Job:
    """One job item, held by this process; its transactions go through ``upkeep``'s table."""

    def __init__(self, upkeep: Upkeep, sk: str | None = None, owner: str | None = None) -> None:
        self.upkeep = upkeep
        self.layout = upkeep.layout
        self.key = ItemKey(JOBS, sk or uuid.uuid4().hex)
        self.owner = owner or uuid.uuid4().hex

    def on(self, table: Table) -> Job:
        """This job, its transactions sent through ``table`` (another view)."""
        return Job(Upkeep(self.upkeep.codec, table), self.key.sk, self.owner)

    async def send(self, actions: list[Action]) -> None:
        await transact(self.upkeep.table, actions)

    def _action(self, kind: str) -> Action:
        return Action(kind, self.key, {"Key": self.layout.key(self.key)})

    def _held(self, action: Action, extra: str = "") -> Action:
        e = action.expr
        action.condition = f"{e.name('owner')} = {e.value(self.owner)}{extra}"
        action.on_fail = lambda _old: Lost()
        return action

    async def create(self) -> None:
        item: Item = {
            self.layout.pk: self.key.pk,
            self.layout.sk: self.key.sk,
            "owner": self.owner,
            "until": _until(),
        }
        await self.send([Action("Put", self.key, {"Item": to_dynamo(item)})])

    def renew(self, add: list[str] | None = None) -> Action:
        """An action of any of the job's transactions: held, the lease renewed (and ``add``
        listed: the starts the same transaction marks)."""
        action = self._action("Update")
        e = action.expr
        action.body["UpdateExpression"] = f"SET {e.name('until')} = {e.value(_until())}"
        if add:
            action.body["UpdateExpression"] += f" ADD {e.name('starts')} {e.value(set(add))}"
        return self._held(action)

    def drop(self, starts: list[str]) -> Action:
        """Held, these starts still listed, and dropped (their marks are being cleared)."""
        action = self._action("Update")
        e = action.expr
        name, values = e.name("starts"), e.value(set(starts))
        action.body["UpdateExpression"] = (
            f"SET {e.name('until')} = {e.value(_until())} DELETE {name} {values}"
        )
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

    async def listed(self) -> list[tuple[Ref, str]]:
        """The starts the job still lists (its item read again), as refs and global ids;
        Lost when another process holds it."""
        item = await self.upkeep.table.get_item(self.key)
        if item is None or item.get("owner") != self.owner:
            raise Lost()
        return _starts(self.upkeep, item)


def _until() -> int:
    return int(time.time() + LEASE)


def _starts(upkeep: Upkeep, job: Item) -> list[tuple[Ref, str]]:
    found = ((upkeep.codec.from_global_id(str(s)), str(s)) for s in job.get("starts") or ())
    return [(ref, start_id) for ref, start_id in found if ref is not None]


def _mark(layout: Any, key: ItemKey) -> Action:
    """A start marked: ``edgewisePending`` + 1 (it must exist, unless the mark lives in its
    clock's item, which the first mark makes: :func:`graph.writes.replicas.clock_key`). Its
    clock stays: a mark writes no replica."""
    action = Action("Update", key, {"Key": layout.key(key)})
    e = action.expr
    action.body["UpdateExpression"] = f"ADD {e.name(PENDING)} {e.value(1)}"
    if key.sk != CLOCK_SK:
        action.condition = f"attribute_exists({e.name(layout.pk)})"
        action.on_fail = lambda _old: Moved()
    return action


def _clear(layout: Any, key: ItemKey, clock: Any) -> Action:
    """A start's mark cleared on the condition that its clock is ``clock``; only that condition
    when it has no item (its delete took the mark with it)."""
    action = Action(
        "ConditionCheck" if clock is ABSENT else "Update", key, {"Key": layout.key(key)}
    )
    if clock is not ABSENT:
        add_to(action, PENDING, -1)
    on_clock(action, layout.pk, clock)
    return action


def _release(layout: Any, key: ItemKey, item: Item | None) -> Action:
    """A start's mark cleared whatever its clock (the job wrote nothing), as ``item`` holds
    it; a start whose item is gone, or holds no mark, only checked to be so."""
    if item is None or int(item.get(PENDING) or 0) <= 0:
        return _clear(layout, key, clock_of(item) if item is not None else ABSENT)
    action = Action("Update", key, {"Key": layout.key(key)})
    add_to(action, PENDING, -1)
    e = action.expr
    action.condition = f"{e.name(PENDING)} > {e.value(0)}"
    action.on_fail = lambda _old: Moved()
    return action


async def commit_pending(
    upkeep: Upkeep, commit: Commit, actions: list[Action], delta: Delta
) -> None:
    """Commit ``actions`` (a change) whose replicas, ``delta``, do not fit in its transaction,
    by the protocol of this module. ``commit`` writes the change; the protocol's own
    transactions go through ``upkeep``'s table. Returns once the change committed and the
    replicas are written, or left to the background (:mod:`graph.writes.background`)."""
    table, layout, codec = upkeep.table, upkeep.layout, upkeep.codec
    refs = {key: _ref(upkeep, key) for key in sorted(delta.starts)}
    ids = {key: codec.global_id(ref) for key, ref in refs.items()}
    job = Job(upkeep)
    await job.create()
    keys, room = list(refs), table.max_actions - 1
    committed: bool | None = False  # None: not known
    try:
        for at in range(0, len(keys), room):
            chunk = keys[at : at + room]
            await job.send([job.renew([ids[k] for k in chunk]), *(_mark(layout, k) for k in chunk)])
        # each start's clock once marked: a write of its replicas made since (which moves it)
        # has the start compared with its path instead of written blindly
        read = await table.get_many(keys, True)
        clocks = {key: clock_of(read.get(key)) for key in keys}
        change = replace(delta, puts={}, deletes=set(), bumps=delta.bumps - delta.starts)
        folded = upkeep.fold(list(actions), change)
        committed = None
        await commit([*folded, job.renew()])
        committed = True
    except BaseException as exc:
        if (
            committed is None
            and isinstance(exc, EdgewiseError)
            and not isinstance(exc, Unavailable)
        ):
            committed = False  # refused: nothing of it was written
        if committed is False:
            what, work = "the marks of a change that failed", _undo
        else:
            what, work = "the starts of a change that may have applied", _settle_listed
        await background.follow(table, _work(job, work), what)
        raise

    async def finish(view: Table, attempt: int) -> None:
        mine = job.on(view)
        if attempt:  # tried before: what the job still lists, compared with the path
            await _settle_listed(mine)
            return
        await _write(mine, refs, ids, clocks, delta)

    await background.follow(table, finish, f"the replicas of a change through {len(keys)} starts")


def _work(job: Job, work: Callable[[Job], Awaitable[None]]) -> background.Work:
    async def run(view: Table, _attempt: int) -> None:
        await work(job.on(view))

    return run


async def _undo(job: Job) -> None:
    """Clear the marks of a change that wrote nothing, and delete its job."""
    try:
        listed = await job.listed()
        keys = [clock_key(ref) for ref, _ in listed]
        items = await job.upkeep.table.get_many(keys, True)
        room = job.upkeep.table.max_actions - 1
        for at in range(0, len(listed), room):
            chunk = keys[at : at + room]
            clears = [_release(job.layout, key, items.get(key)) for key in chunk]
            await job.send([job.drop([s for _, s in listed[at : at + room]]), *clears])
        await job.delete()
    except Lost:
        return
    except Moved:  # a start changed between the read and the clear: one by one, compared
        await _settle_listed(job)


async def _settle_listed(job: Job) -> None:
    """Compare each start the job still lists with its path, write it, clear its mark; then
    delete the job. Stops quietly when another process holds the job."""
    try:
        await _settle_all(job, await job.listed())
        await job.delete()
    except Lost:
        return


async def _write(
    job: Job,
    refs: dict[ItemKey, Ref],
    ids: dict[ItemKey, str],
    clocks: dict[ItemKey, Any],
    delta: Delta,
) -> None:
    """Write the starts' replicas, then clear their marks (see the module), then delete the
    job. The clears come after the replicas, a transaction later at least: a read of a start,
    whose item and replicas are read at once, would have to be answered on both sides of that
    gap to see its mark gone and its replicas not yet written."""
    upkeep, layout = job.upkeep, job.layout
    room = upkeep.table.max_actions - 1  # and the job's own action
    writes: dict[ItemKey, list[Action]] = {key: [] for key in refs}
    for action in upkeep.fold([], replace(Delta(), puts=delta.puts, deletes=delta.deletes)):
        start = upkeep.start_key(action.key)
        if start in writes:
            writes[start].append(action)
    clocks = dict(clocks)
    settled: set[ItemKey] = set()  # compared with their paths instead, after a batch failed

    async def send(head: Action, batch: list[Action]) -> None:
        try:
            await job.send([head, *batch])
        except Moved:  # a start's clock moved: the starts of the batch one by one
            touched = [k for k in dict.fromkeys(a.key for a in batch) if k in refs]
            await _settle_all(job, [(refs[k], ids[k]) for k in touched if k not in settled])
            settled.update(touched)

    try:
        batch: list[Action] = []
        for key in refs:
            items = writes[key] if clocks[key] is not ABSENT else []  # a delete took them
            while items and key not in settled:
                if room - len(batch) < 2:
                    await send(job.renew(), batch)
                    batch = []
                    continue
                part, items = items[: room - len(batch) - 1], items[room - len(batch) - 1 :]
                check = Action("ConditionCheck", key, {"Key": layout.key(key)})
                on_clock(check, layout.pk, clocks[key])
                add_to(check, CLOCK, 1)  # every write of a start's replicas advances its clock
                clocks[key] = (clocks[key] or 0) + 1
                batch += [check, *part]
        if batch:
            await send(job.renew(), batch)
        keys = [key for key in refs if key not in settled]
        for at in range(0, len(keys), room):
            chunk = [key for key in keys[at : at + room] if key not in settled]
            clears = [_clear(layout, key, clocks[key]) for key in chunk]
            if chunk:
                await send(job.drop([ids[k] for k in chunk]), clears)
        await job.delete()
    except Lost:
        return


async def settle(job: Job, start: Ref, start_id: str) -> None:
    """Compare one start's replicas with its path, write the difference and clear its mark
    (unless the job no longer lists it)."""
    upkeep = job.upkeep
    replicas = [r for r in upkeep.model.replicas if r.start == start.type.name]

    def clear(clock: Any) -> list[Action]:
        return [job.drop([start_id]), _clear(upkeep.layout, clock_key(start), clock)]

    try:
        await upkeep.recompute(start, replicas, job.send, clear)
    except Lost:
        listed = {start_id for _, start_id in await job.listed()}
        if start_id in listed:
            raise
        # cleared already (a batch applied whose answer was lost): nothing left to do


async def _settle_all(job: Job, starts: list[tuple[Ref, str]]) -> None:
    """:func:`settle` each start, :data:`AT_ONCE` at a time."""
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(start: Ref, start_id: str) -> None:
        async with gate:
            await settle(job, start, start_id)

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


async def resume_replicas(upkeep: Upkeep) -> int:
    """Finish every job whose lease has run out (a crash left it); returns how many."""
    listing = Listing(None, (Branch(JOBS),))
    finished = 0
    for item in await Reads(upkeep.table, consistent=True).alls.load(listing):
        if int(item.get("until", 0)) > time.time():
            continue  # held by a live process
        job = Job(upkeep, str(item[upkeep.layout.sk]))
        if not await job.take(item):
            continue
        try:
            await _settle_all(job, _starts(upkeep, item))
            await job.delete()
        except Lost:
            continue
        finished += 1
    return finished
