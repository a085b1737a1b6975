"""Serving an ASGI app over real HTTP with uvicorn on a free loopback port, for tests that need a
URL (the graphql-http audit, schemathesis, the outage tests): in the running event loop, or in a
thread with its own loop for synchronous tests. Both stop the server when the block ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp

__all__ = ["alive", "children", "serve", "serve_in_thread"]

START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


def _bound() -> socket.socket:
    """A listening socket bound here and handed to uvicorn, so no other process can take the
    port between choosing and binding it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def _server(app: ASGIApp) -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        log_config=None,  # leave the process's logging alone; errors reach pytest's capture
        log_level="warning",
        ws="websockets-sansio",
        lifespan="on",
        timeout_graceful_shutdown=int(STOP_TIMEOUT),
    )
    return uvicorn.Server(config)


@contextlib.asynccontextmanager
async def serve(app: ASGIApp) -> AsyncIterator[str]:
    """``async with serve(app) as url:`` — uvicorn in this event loop; ``url`` has no path."""
    with _bound() as sock:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = _server(app)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            async with asyncio.timeout(START_TIMEOUT):
                while not server.started:
                    if task.done():
                        task.result()  # raises why uvicorn did not start
                        raise RuntimeError("uvicorn stopped before it started")
                    await asyncio.sleep(0.02)
            yield url
        finally:
            server.should_exit = True
            try:
                async with asyncio.timeout(STOP_TIMEOUT + 5):
                    await task
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                raise


@contextlib.contextmanager
def serve_in_thread(app: ASGIApp) -> Iterator[str]:
    """``with serve_in_thread(app) as url:`` — uvicorn in a thread with its own event loop (the
    app's lifespan, and so its DynamoDB client, run in that loop)."""
    with _bound() as sock:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = _server(app)
        failure: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except BaseException as exc:  # reported by the caller's thread
                failure.append(exc)

        thread = threading.Thread(target=run, name="uvicorn-test", daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not server.started:
                if not thread.is_alive() or time.monotonic() > deadline:
                    raise RuntimeError(f"uvicorn did not start: {failure or 'timed out'}")
                time.sleep(0.02)
            yield url
        finally:
            server.should_exit = True
            thread.join(STOP_TIMEOUT + 5)
            if thread.is_alive():
                server.force_exit = True
                thread.join(5)
            if failure:
                raise failure[0]


def children(pid: int) -> list[int]:
    """Children of every thread of ``pid`` (the child may be started from a worker thread)."""
    tasks = Path(f"/proc/{pid}/task").glob("*/children")
    return [int(child) for path in tasks for child in path.read_text().split()]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"
