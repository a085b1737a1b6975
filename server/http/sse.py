"""GraphQL over Server-Sent Events at ``/graphql``, graphql-sse's distinct-connections mode: a
POST (or a GET, queries and subscriptions only) with ``Accept: text/event-stream`` is answered
with one event stream for its one operation: ``next`` events, each an answer, then
``complete``. The token comes in the ``Authorization`` header, as for any request (checked by
:func:`server.http.graphql.graphql` before this runs); the stream completes when it expires. An
operation that cannot run is answered 4xx with its errors as JSON, before any event."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from graphql import OperationType
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from server.http.auth import Principal, expires_at
from server.http.prepare import EVENT_STREAM, Prepared, Refused, prepare
from server.http.streamed import answers

__all__ = ["EVENT_STREAM", "event_stream"]
CODE = "BAD_USER_INPUT"
KEEP_ALIVE = 12.0  # seconds between comment lines keeping proxies from closing an idle stream


def _json(body: dict[str, Any], status: int) -> Response:
    return Response(json.dumps(body), status, media_type="application/json")


def _event(kind: str, data: dict[str, Any] | None) -> bytes:
    text = "" if data is None else json.dumps(data, separators=(",", ":"))
    return f"event: {kind}\ndata: {text}\n\n".encode()


async def _events(
    request: Request, prepared: Prepared, principal: Principal, params: dict[str, Any]
) -> AsyncIterator[bytes]:
    state = request.app.state
    stream = answers(state, prepared, principal, "sse", params).__aiter__()
    pending: asyncio.Task[dict[str, Any]] | None = None
    expires = expires_at(request.headers.get("authorization"))
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(stream.__anext__())
            wait = KEEP_ALIVE if expires is None else min(KEEP_ALIVE, expires - time.time())
            done, _ = await asyncio.wait({pending}, timeout=max(0.0, wait))
            if not done:
                if expires is not None and time.time() >= expires:
                    break  # the stream ends with its token: the client renews it
                yield b": keep-alive\n\n"
                continue
            try:
                answer = pending.result()
            except StopAsyncIteration:
                break
            finally:
                pending = None
            yield _event("next", answer)
        yield _event("complete", None)
    except Refused as refused:
        yield _event("next", {"errors": refused.errors})
        yield _event("complete", None)
    finally:
        if pending is not None:  # end the answer awaited, then the stream itself
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Refused):
                await pending
        await stream.aclose()  # type: ignore[attr-defined]


async def event_stream(request: Request, principal: Principal, params: dict[str, Any]) -> Response:
    """The event stream of one operation, or the JSON errors why it cannot run."""
    state = request.app.state
    try:
        prepared = prepare(params, state.schema, state.limits, state.persisted)
    except Refused as refused:
        return _json({"errors": refused.errors}, 400)
    if request.method == "GET" and prepared.operation_type is OperationType.MUTATION:
        error = {"message": "mutations are sent with POST", "extensions": {"code": CODE}}
        response = _json({"errors": [error]}, 405)
        response.headers["Allow"] = "POST"
        return response
    return StreamingResponse(
        _events(request, prepared, principal, params),
        media_type=EVENT_STREAM,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
