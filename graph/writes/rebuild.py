"""``edgewise rebuild``: every replica of a path compared with its path and the difference
written, at any size.

The table read whole (a parallel Scan) tells which starts differ; each is then compared again
with consistent reads and written (:meth:`graph.writes.replicas.Upkeep.recompute`), in chunks
of :data:`CHUNK` starts, :data:`AT_ONCE` at a time. After each chunk a checkpoint item (in
Edgewise's own partition ``~replicas#rebuild``, skipped by listings and ``dump``) records the
last start done, so ``--resume`` goes on from there after an interruption. A start that keeps
changing, or whose writes DynamoDB keeps failing past the retries, is tried again at the end,
then reported, never the end of the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from graph.errors import Conflict, Unavailable
from graph.items import Ref
from graph.keys import ItemKey
from graph.table import Item, Table, to_dynamo
from graph.writes.replicas import Commit, Difference, Upkeep, differences, joined
from model.types import JOB_PREFIX
from model.values import Replica

__all__ = ["AT_ONCE", "CHUNK", "Checkpoint", "Rebuilt", "rebuild"]

CHUNK = 100  # starts compared before each checkpoint
AT_ONCE = 16  # starts compared at once
CHECKPOINTS = JOB_PREFIX + "rebuild"


class Checkpoint:
    """Where a rebuild of ``name`` (a field, or every replica) got to: the last start done."""

    def __init__(self, table: Table, name: str) -> None:
        self.table = table
        self.key = ItemKey(CHECKPOINTS, name)

    async def read(self) -> str | None:
        item = await self.table.get_item(self.key)
        return None if item is None else str(item["after"])

    async def save(self, after: str) -> None:
        layout = self.table.layout
        item: Item = {layout.pk: self.key.pk, layout.sk: self.key.sk, "after": after}
        await self.table.write("PutItem", {"Item": to_dynamo(item)})

    async def clear(self) -> None:
        await self.table.write("DeleteItem", {"Key": self.table.layout.key(self.key)})


@dataclass
class Rebuilt:
    """What a rebuild found (and wrote, unless a dry run), and the starts it could not do."""

    found: list[Difference] = field(default_factory=list)
    failed: list[tuple[ItemKey, str]] = field(default_factory=list)
    after: str | None = None  # the last start the run a --resume goes on from had done


async def rebuild(
    upkeep: Upkeep,
    replicas: list[Replica],
    items: list[Item],
    commit: Commit | None,
    progress: Callable[[int], object] | None = None,
    checkpoint: Checkpoint | None = None,
    resume: bool = False,
) -> Rebuilt:
    """Every difference between ``replicas`` and their paths: found in ``items`` (the table
    read whole), then each start that differs compared again with consistent reads and
    (``commit``) written, in the order of their keys, chunk by chunk; ``checkpoint`` records
    the progress (``resume``: start after it)."""
    codec = upkeep.codec
    wanted = joined(codec, [i for i in items if not upkeep.is_replica(i)])
    starts: dict[ItemKey, tuple[Ref, list[Replica]]] = {}
    for replica in replicas:
        desired = {k: i for k, i in wanted.items() if upkeep.holds(replica, i)}
        stored = {codec.item_key(i): i for i in items if upkeep.holds(replica, i)}
        for _, key, _ in differences(upkeep.model, replica, desired, stored):
            start = upkeep.start_of(replica, key)
            if start is not None:
                _, of = starts.setdefault(start.key, (start, []))
                if replica not in of:
                    of.append(replica)
    order = sorted(starts, key=_place)
    done = Rebuilt()
    after = await checkpoint.read() if checkpoint is not None and resume else None
    if after is not None:
        done.after = after.partition("\x00")[0]
        order = [k for k in order if _place(k) > after]
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(key: ItemKey) -> None:
        start, of = starts[key]
        async with gate:
            try:
                done.found += await upkeep.recompute(start, of, commit)
            except (Conflict, Unavailable) as exc:
                done.failed.append((key, str(exc)))
        if progress is not None:
            progress(1)

    for at in range(0, len(order), CHUNK):
        chunk = order[at : at + CHUNK]
        await asyncio.gather(*(one(k) for k in chunk))
        if checkpoint is not None and commit is not None:
            await checkpoint.save(_place(chunk[-1]))
    failed, done.failed = done.failed, []
    for key, _ in failed:  # once more, one at a time, now the others are done
        await one(key)
    if checkpoint is not None and commit is not None and not done.failed:
        await checkpoint.clear()
    done.found.sort(key=lambda d: (str(d[1].pk), str(d[1].sk)))
    return done


def _place(key: ItemKey) -> str:
    return f"{key.pk}\x00{key.sk}"
