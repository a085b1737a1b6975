"""Work that follows a write whose own change committed: the replicas of a change past one
transaction (:mod:`graph.writes.pending`), copies of a node's fields past one transaction, the
rest of a marked delete.

The request waits for that work while its deadline leaves time to answer (a quarter of the
deadline is kept for the answer's own reads); past that it answers its result and leaves the
work running here, in this process, on a view of the table with no request's deadline (each
call has its own). Work that fails while DynamoDB is unavailable, or while other writes keep
changing what it writes, is tried again, waiting longer each time. What a process that dies
leaves is recorded in the table (a replicas' job and its marks, a delete's mark), so the next
``edgewise serve`` (at its start, and every minute), and ``edgewise rebuild``, finish it.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import time
from collections.abc import Awaitable, Callable

from graph.errors import Conflict, Unavailable
from graph.table import Table

__all__ = ["ANSWER", "Work", "follow", "running", "settled"]

log = logging.getLogger("edgewise.background")

ANSWER = 0.25  # the share of a request's deadline kept to answer once the work is left running
MAX_WAIT = 60.0  # seconds between two tries of work that DynamoDB keeps failing
Work = Callable[[Table, int], Awaitable[None]]  # the work on a table, and its try (0 first)

_running: set[asyncio.Task[None]] = set()


async def follow(table: Table, work: Work, what: str) -> None:
    """Run ``work`` on a view of ``table`` with no request's deadline, and wait for it while
    ``table``'s deadline leaves time to answer; then return, the work running on. ``what``
    names it in the log. Its failures are logged, never raised: the change it follows has
    committed. Without a deadline (a command, a test: no request waits) the work is done
    here, once, and its failure raised."""
    if table.deadline is None:
        await work(table.detached(), 0)
        return
    task = asyncio.get_running_loop().create_task(
        _run(table.detached(), work, what),
        context=contextvars.Context(),  # none of the request's state (its idempotency key)
    )
    _running.add(task)
    task.add_done_callback(_running.discard)
    left = table.deadline - time.monotonic() - table.policy.deadline * ANSWER
    await asyncio.wait({task}, timeout=max(left, 0.0))
    if not task.done():
        log.info("%s goes on in the background: the request's deadline is near", what)
    elif not task.cancelled():
        task.exception()  # seen: _run logged what it could


async def _run(table: Table, work: Work, what: str) -> None:
    for attempt in itertools.count():
        try:
            await work(table, attempt)
            return
        except (Unavailable, Conflict) as exc:  # DynamoDB failing, or writes contending
            wait = min(MAX_WAIT, 2.0**attempt)
            log.warning("%s: %s; trying again in %.0f s", what, exc, wait)
            await asyncio.sleep(wait)
        except Exception:
            log.exception(
                "%s failed; what it leaves is finished at the next start of the server, or by "
                "`edgewise rebuild`",
                what,
            )
            return


def running() -> list[asyncio.Task[None]]:
    """The work of this event loop still running."""
    loop = asyncio.get_running_loop()
    return [task for task in _running if task.get_loop() is loop]


async def settled(within: float | None = None) -> bool:
    """Wait until the work of this event loop has ended (at most ``within`` seconds); False
    when some still runs."""
    ends = None if within is None else time.monotonic() + within
    while tasks := running():
        left = None if ends is None else ends - time.monotonic()
        if left is not None and left <= 0:
            return False
        await asyncio.wait(tasks, timeout=left)
    return True
