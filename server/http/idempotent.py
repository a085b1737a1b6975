"""Safe retries over HTTP: a POST carrying a mutation with ``Idempotency-Key`` (or
``extensions.idempotencyKey``) is answered once; a repeat by the same principal with the same
key and request gets the recorded answer and writes nothing. The record itself, written with the
mutation's own writes, is :mod:`graph.writes.idempotency`'s.

Before running, the record decides: none (or expired), run; another request's body under the
key, 422 ``BAD_USER_INPUT``; an answer, that answer; no answer while its request may still run,
409 ``CONFLICT`` with ``Retry-After``; no answer after that (its request failed or died after its
write), 409 ``CONFLICT`` saying so, never a second write. A request that loses the race for the
record at its commit, or fails because a duplicate applied first, is answered the same way. A
request that wrote the record records its answer (unless it is a 503, which tells the client
to retry, or too large for an item).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from typing import Any

import orjson
from starlette.requests import Request

from graph.errors import BadUserInput, EdgewiseError
from graph.table import Table
from graph.writes import idempotency
from graph.writes.idempotency import Keyed, Record
from server.http.auth import Principal

__all__ = ["Answer", "keyed_request", "recorded", "settle"]

log = logging.getLogger("edgewise")

HEADER = "idempotency-key"
KEY = re.compile(r"[\x21-\x7e]{1,255}")  # visible ASCII
MAX_ANSWER = 350_000  # bytes of answer a record keeps (an item holds 400 KB)
LEASE = 5.0  # seconds past the request's deadline its record counts as running

# A response not yet encoded: body, status, headers.
Answer = tuple[dict[str, Any], int, dict[str, str]]


def keyed_request(
    request: Request, params: dict[str, Any], principal: Principal, ttl: int, deadline: float
) -> Keyed | None:
    """The idempotency state of a mutation's request, or None when it sends no key."""
    key: Any = request.headers.get(HEADER)
    if key is None:
        key = (params.get("extensions") or {}).get("idempotencyKey")
        if key is None:
            return None
    if not isinstance(key, str) or not KEY.fullmatch(key):
        raise BadUserInput("an Idempotency-Key is 1 to 255 visible ASCII characters")
    who = f"{principal.subject or ''}\0{'admin' if principal.admin else 'user'}"
    request_body = [params.get("query"), params.get("operationName"), params.get("variables")]
    fingerprint = hashlib.sha256(orjson.dumps(request_body, option=orjson.OPT_SORT_KEYS))
    return Keyed(who, key, fingerprint.hexdigest(), ttl, deadline + LEASE)


def _answer(record: Record, state: Keyed) -> Answer:
    if record.fingerprint != state.fingerprint:
        message = (
            "this Idempotency-Key was sent with another request (document, operation or "
            "variables): use a new key for a new request"
        )
        return _error(message, "BAD_USER_INPUT"), 422, {}
    if record.answer is not None:
        body: dict[str, Any] = orjson.loads(record.answer)
        return body, record.status, {}
    now = time.time()
    if now < record.until:
        message = "a request with this Idempotency-Key is still running: retry after it"
        return _error(message, "CONFLICT"), 409, {"Retry-After": str(math.ceil(record.until - now))}
    message = (
        "the request with this Idempotency-Key applied its writes but failed before its answer "
        "was recorded: read the current state instead of retrying"
    )
    return _error(message, "CONFLICT"), 409, {}


def _error(message: str, code: str) -> dict[str, Any]:
    return {"errors": [{"message": message, "extensions": {"code": code}}]}


async def recorded(table: Table, state: Keyed) -> Answer | None:
    """The answer to a keyed request before it runs, or None: run it."""
    record = await idempotency.read(table, state)
    return None if record is None else _answer(record, state)


async def settle(table: Table, state: Keyed, answer: Answer) -> Answer:
    """After running: the answer to send. Recorded when this request wrote the record. When it
    wrote nothing, a request with the same key may have applied meanwhile (its write made this
    one fail, e.g. a stale version, or won the record): then the record answers."""
    if not state.written:
        record = await idempotency.read(table, state)
        if record is not None:
            return _answer(record, state)
        if state.lost:  # held, then expired already: the key is free again
            return (
                _error("retry: the Idempotency-Key was released", "CONFLICT"),
                409,
                {"Retry-After": "1"},
            )
        return answer
    body, status, _headers = answer
    if status != 503:
        text = orjson.dumps(body).decode()
        if len(text) <= MAX_ANSWER:
            try:
                await idempotency.record_answer(table, state, text, status)
            except EdgewiseError as exc:  # sent anyway; a retry is told it applied
                log.warning("could not record the answer of an Idempotency-Key: %s", exc)
    return answer
