"""GraphQL over WebSocket at ``/graphql``: the ``graphql-transport-ws`` subprotocol of the
graphql-ws library (what Apollo Client's ``GraphQLWsLink`` and urql's ``subscriptionExchange``
speak through it), after strawberry's handler of the same protocol.

``connection_init`` within :data:`INIT_TIMEOUT` (else 4408), its payload carrying the token as
``{"authorization": "Bearer <jwt>"}`` (a refused token: 4403, and 4403 again when it expires,
so the client reconnects with a fresh one; a second init: 4429); then
``subscribe`` / ``next`` / ``error`` / ``complete`` per operation id (a subscribe before the ack:
4401; an id in use: 4409), ``ping`` answered ``pong``. A message that is not the protocol's:
4400; a failure of the server's own: 4500. A subscription is a live query
(:mod:`server.live.queries`); a query or mutation sends its one answer and completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Coroutine
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from graph.errors import Unavailable
from server.errors import Unauthenticated
from server.http.auth import Principal, expires_at
from server.http.prepare import Refused, prepare

__all__ = ["PROTOCOL", "websocket"]

log = logging.getLogger("edgewise.subscriptions")

PROTOCOL = "graphql-transport-ws"
INIT_TIMEOUT = 3.0  # seconds, graphql-ws's default connectionInitWaitTimeout


class _Connection:
    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.state = ws.app.state
        self.principal: Principal | None = None
        self.initialised = False
        self.operations: dict[str, asyncio.Task[None]] = {}
        self.closing = False
        self.expiry: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def send(self, message: dict[str, Any]) -> None:
        if self.ws.application_state is WebSocketState.CONNECTED and not self.closing:
            await self.ws.send_text(json.dumps(message, separators=(",", ":")))

    async def close(self, code: int, reason: str) -> None:
        if not self.closing:
            self.closing = True
            with contextlib.suppress(RuntimeError, WebSocketDisconnect):
                await self.ws.close(code, reason)

    async def init(self, message: dict[str, Any]) -> None:
        if self.initialised:
            await self.close(4429, "Too many initialisation requests")
            return
        self.initialised = True
        payload = message.get("payload")
        if payload is not None and not isinstance(payload, dict):
            await self.close(4400, "Invalid connection init payload")
            return
        token = (payload or {}).get("authorization") or (payload or {}).get("Authorization")
        try:
            self.principal = await self.state.authenticator.principal(
                token if isinstance(token, str) else None
            )
        except Unauthenticated:
            await self.close(4403, "Forbidden")
            return
        except Unavailable:
            await self.close(4500, "the token could not be checked")
            return
        expires = expires_at(token if isinstance(token, str) else None)
        if expires is not None:  # the connection ends with its token: the client renews it
            self.expiry = asyncio.get_running_loop().call_at(
                asyncio.get_running_loop().time() + max(0.0, expires - time.time()),
                lambda: self._background(self.close(4403, "Forbidden: the token expired")),
            )
        await self.send({"type": "connection_ack"})

    async def subscribe(self, message: dict[str, Any]) -> None:
        if self.principal is None:
            await self.close(4401, "Unauthorized")
            return
        op_id, payload = message.get("id"), message.get("payload")
        if not isinstance(op_id, str) or not op_id or not isinstance(payload, dict):
            await self.close(4400, "Invalid subscribe message")
            return
        if op_id in self.operations:
            await self.close(4409, f"Subscriber for {op_id} already exists")
            return
        limit = self.state.settings.subscriptions_per_connection
        if len(self.operations) >= limit:
            errors = [
                {
                    "message": f"at most {limit} operations run at once on one connection",
                    "extensions": {"code": "BAD_USER_INPUT"},
                }
            ]
            await self.send({"type": "error", "id": op_id, "payload": errors})
            return
        task = asyncio.create_task(self.run(op_id, payload, self.principal))
        self.operations[op_id] = task

    async def run(self, op_id: str, params: dict[str, Any], principal: Principal) -> None:
        state = self.state
        try:
            prepared = prepare(params, state.schema, state.limits, state.persisted)
            from server.http.streamed import answers  # with the live queries, when used

            async for answer in answers(state, prepared, principal, PROTOCOL, params):
                await self.send({"type": "next", "id": op_id, "payload": answer})
        except Refused as refused:
            await self.send({"type": "error", "id": op_id, "payload": refused.errors})
            self.operations.pop(op_id, None)
            return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("a WebSocket operation failed")
            await self.close(4500, "Internal server error")
            return
        self.operations.pop(op_id, None)
        await self.send({"type": "complete", "id": op_id})

    def complete(self, message: dict[str, Any]) -> None:
        task = self.operations.pop(str(message.get("id")), None)
        if task is not None:
            task.cancel()

    async def handle(self, message: Any) -> None:
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "connection_init":
            await self.init(message)
        elif kind == "subscribe":
            await self.subscribe(message)
        elif kind == "complete":
            self.complete(message)
        elif kind == "ping":
            await self.send({"type": "pong"})
        elif kind == "pong":
            pass
        else:
            await self.close(4400, f"Unknown message type {str(kind)[:40]!r}")

    async def stop(self) -> None:
        if self.expiry is not None:
            self.expiry.cancel()
        tasks = list(self.operations.values())
        self.operations.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _init_deadline(connection: _Connection) -> None:
    await asyncio.sleep(INIT_TIMEOUT)
    if not connection.initialised:
        await connection.close(4408, "Connection initialisation timeout")


async def websocket(ws: WebSocket) -> None:
    """One WebSocket connection at ``/graphql``."""
    if PROTOCOL not in ws.scope.get("subprotocols", []):
        await ws.accept()  # as graphql-ws's server does: accepted, then closed with the code
        await ws.close(4406, "Subprotocol not acceptable")
        return
    await ws.accept(PROTOCOL)
    connection = _Connection(ws)
    deadline = asyncio.create_task(_init_deadline(connection))
    try:
        while not connection.closing:
            try:
                text = await ws.receive_text()
            except (WebSocketDisconnect, RuntimeError, KeyError):
                break
            try:
                message = json.loads(text)
            except ValueError:
                await connection.close(4400, "Invalid message received")
                break
            await connection.handle(message)
    finally:
        deadline.cancel()
        await connection.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await deadline
