"""GraphQL over HTTP: ``/graphql`` by GET (queries) and POST, with authentication, limits checked
before execution, error codes, and the DynamoDB trace.

The response media type is negotiated from ``Accept``: ``application/graphql-response+json``
(the GraphQL-over-HTTP spec's own type) or ``application/json`` (legacy clients; also what a
missing Accept, ``*/*`` or ``application/*`` gets); an Accept allowing neither is 406. With
``application/graphql-response+json`` a request that is not executed (unparsable JSON, bad
parameters, a document that does not parse, validate or pass the limits, variables that do not
coerce) is answered 4xx with no ``data`` entry; with ``application/json`` such GraphQL errors keep
the legacy 200. A response with no data whose errors include ``UNAVAILABLE`` (DynamoDB still
failing when the request's deadline ran out) is 503 with ``Retry-After``, whatever the type.
A mutation sent with ``Idempotency-Key`` is answered once (:mod:`server.http.idempotent`); HEAD
answers as GET, without the body.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
from graphql.language.ast import OperationType
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from graph.errors import BadUserInput, EdgewiseError, Unavailable
from graph.table import Trace
from graph.writes import idempotency
from server.engine.executor import (
    CannotGetOperationTypeError,
    InvalidOperationTypeError,
    ModelSchema,
)
from server.errors import (
    CODES,
    Forbidden,
    PersistedQueryError,
    Unauthenticated,
    code_of,
    format_errors,
)
from server.http.auth import Authenticator
from server.http.idempotent import Answer, keyed_request, recorded, settle
from server.http.limits import Limits, check
from server.http.persisted import PersistedQueries
from server.http.prepare import EVENT_STREAM, bad_params
from server.observe.requests import note_params
from server.settings import Settings

__all__ = ["GRAPHQL_RESPONSE_JSON", "JSON", "checked", "graphql", "negotiate", "prefers_html"]

JSON = "application/json"
GRAPHQL_RESPONSE_JSON = "application/graphql-response+json"
RETRY_AFTER = "1"  # seconds a client should wait before retrying a 503
NO_CACHE = "private, no-cache, must-revalidate"
SUBSCRIPTIONS_ONLY_STREAMED = (
    "a subscription is answered over WebSocket (the graphql-transport-ws subprotocol) or "
    "Server-Sent Events (Accept: text/event-stream), not in one response"
)


def _ranges(accept: str) -> list[tuple[str, float, int]]:
    """The media ranges of an ``Accept`` header: (lowercased range, weight, position)."""
    ranges: list[tuple[str, float, int]] = []
    for position, part in enumerate(accept.split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        if not media:
            continue
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = 0.0
        ranges.append((media.lower(), weight, position))
    return ranges


def _score(ranges: list[tuple[str, float, int]], candidate: str) -> tuple[float, int, int] | None:
    """(weight, specificity, -position) of the most specific range matching ``candidate``."""
    family = candidate.split("/")[0] + "/*"
    matches = [
        (2 if media == candidate else 1 if media == family else 0, weight, -position)
        for media, weight, position in ranges
        if media in (candidate, family, "*/*")
    ]
    if not matches:
        return None
    specificity, weight, first = max(matches)
    return weight, specificity, first


def negotiate(accept: str | None) -> str | None:
    """The media type to answer with for an ``Accept`` header, or None when it allows neither.

    For each type the most specific matching range gives its weight (RFC 9110); the heavier
    type wins, then the more specific match, then the range listed first. Wildcards alone
    (``*/*``, ``application/*``) and no Accept at all mean ``application/json``.
    """
    if accept is None or not accept.strip():
        return JSON
    ranges = _ranges(accept)
    best: tuple[float, int, int] | None = None
    chosen = None
    for candidate in (JSON, GRAPHQL_RESPONSE_JSON):  # on a full tie the first (legacy) one wins
        score = _score(ranges, candidate)
        if score is not None and score[0] > 0 and (best is None or score > best):
            best, chosen = score, candidate
    return chosen


def prefers_events(accept: str | None) -> bool:
    """Whether ``Accept`` asks for Server-Sent Events (graphql-sse) before JSON:
    ``text/event-stream`` named, weighing more than both JSON types or as much and listed
    first. urql lists it after the JSON types, and gets JSON."""
    if not accept or EVENT_STREAM not in accept.lower():
        return False
    ranges = _ranges(accept)
    events = _score(ranges, EVENT_STREAM)
    if events is None or events[0] <= 0 or events[1] != 2:
        return False
    json = [s for s in (_score(ranges, JSON), _score(ranges, GRAPHQL_RESPONSE_JSON)) if s]
    return not json or events > max(json)


def prefers_html(accept: str | None) -> bool:
    """Whether ``Accept`` is a browser's navigation, asking for a page before JSON: ``text/html``
    (or ``text/*``) weighs more than both JSON types, or as much when they only match ``*/*``
    (Chromium's ``text/html,…,*/*;q=0.8``). ``*/*`` alone, as curl sends it, gets JSON."""
    if not accept:
        return False
    ranges = _ranges(accept)
    html = _score(ranges, "text/html")
    if html is None or html[0] <= 0 or html[1] == 0:
        return False
    for candidate in (JSON, GRAPHQL_RESPONSE_JSON):
        score = _score(ranges, candidate)
        if score is not None and score[0] > 0 and score[:2] >= html[:2]:
            return False
    return True


def _encode(body: dict[str, Any]) -> bytes:
    """The body as compact UTF-8 JSON: orjson (``json``'s encoder was 5% of a large answer's
    CPU), or ``json`` as Starlette's JSONResponse encodes it for what orjson refuses (an integer
    past 64 bits, a key that is not a string)."""
    try:
        return orjson.dumps(body)
    except TypeError:
        text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode()


class _Reply:
    """Responses in the negotiated media type."""

    def __init__(self, media: str) -> None:
        self.media = media
        # a GraphQL error that stops a request before execution (parse, validation, variables,
        # limits): legacy clients get 200, graphql-response+json clients 400 (and no data)
        self.not_executed = 200 if media == JSON else 400

    def json(
        self, body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None
    ) -> Response:
        return Response(
            _encode(body),
            status_code=status,
            headers={"Vary": "Accept", **(headers or {})},
            media_type=self.media,
        )

    def error(
        self,
        status: int,
        message: str,
        code: str = "BAD_USER_INPUT",
        headers: dict[str, str] | None = None,
    ) -> Response:
        body = {"errors": [{"message": message, "extensions": {"code": code}}]}
        return self.json(body, status, headers)


async def _body(request: Request, limit: int, reply: _Reply) -> bytes | Response:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return reply.error(413, f"the request body is over {limit} bytes", "QUERY_TOO_COMPLEX")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return reply.error(413, f"the request body is over {limit} bytes", "QUERY_TOO_COMPLEX")
    return bytes(body)


async def _read_params(request: Request, limit: int, reply: _Reply) -> dict[str, Any] | Response:
    if request.method in ("GET", "HEAD"):
        params: dict[str, Any] = dict(request.query_params)
        if len(request.url.query) > limit:
            return reply.error(413, f"the query string is over {limit} bytes", "QUERY_TOO_COMPLEX")
        for name in ("variables", "extensions"):
            if isinstance(params.get(name), str):
                try:
                    params[name] = json.loads(params[name])
                except ValueError:
                    return reply.error(400, f"the {name} parameter is not valid JSON")
        return params
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != JSON:
        return reply.error(415, "send the GraphQL request as Content-Type: application/json")
    raw = await _body(request, limit, reply)
    if isinstance(raw, Response):
        return raw
    try:
        body = json.loads(raw)
    except ValueError:
        return reply.error(400, "the request body is not valid JSON")
    if isinstance(body, list):
        return reply.error(400, "batched requests are not supported: send one operation a request")
    if not isinstance(body, dict):
        return reply.error(400, "the request body must be a JSON object")
    return body


async def checked(state: Any) -> None:
    """Wait for the start-up's probe of the endpoint if it still runs beside the first requests
    (``state.checking``, :mod:`server.http.app`); raise its refusal (the table disagrees with
    the model, or mutations cannot work there)."""
    checking: asyncio.Task[Any] | None = state.checking
    if checking is not None:
        await asyncio.shield(checking)


async def graphql(request: Request) -> Response:
    """Queries by GET or POST, mutations by POST only; HEAD answers as GET, without the body."""
    response = await _graphql(request)
    if request.method == "HEAD":
        response.body = b""  # the headers stay the GET's, Content-Length included
    return response


async def _graphql(request: Request) -> Response:
    state = request.app.state
    settings: Settings = state.settings
    accept = request.headers.get("accept")
    if request.method != "POST" and prefers_html(accept):
        from server.http import playground

        return (
            PlainTextResponse("Not Found", 404)
            if settings.production
            else playground.page(settings.playground_dir)
        )
    streamed = prefers_events(accept)  # graphql-sse: server.http.sse
    media = JSON if streamed else negotiate(accept)
    if media is None:
        return _Reply(JSON).error(
            406, f"the response is {GRAPHQL_RESPONSE_JSON} or {JSON}: accept one of them"
        )
    reply = _Reply(media)
    authenticator: Authenticator = state.authenticator
    try:
        principal = await authenticator.principal(request.headers.get("authorization"))
    except Unauthenticated as exc:
        return reply.error(401, str(exc), code_of(exc), headers={"WWW-Authenticate": "Bearer"})
    except Unavailable as exc:  # the JWKS could not be fetched
        return reply.error(503, str(exc), code_of(exc), headers={"Retry-After": RETRY_AFTER})
    limits: Limits = state.limits
    params = await _read_params(request, limits.body_bytes, reply)
    if isinstance(params, Response):
        return params
    note_params(request, params)  # the operation's name, even if its hash is unknown
    persisted: PersistedQueries = state.persisted
    try:
        params, register = persisted.resolve(params)
    except PersistedQueryError as exc:
        # 200 and never cached, as Apollo Server answers: the client resends with the query
        return reply.error(200, str(exc), code_of(exc), headers={"Cache-Control": NO_CACHE})
    except BadUserInput as exc:
        return reply.error(400, str(exc), code_of(exc))
    except Forbidden as exc:
        return reply.error(reply.not_executed, str(exc), code_of(exc))
    note_params(request, params)
    if streamed:
        from server.http.sse import event_stream  # with the live queries, only when asked

        return await event_stream(request, principal, params)
    if problem := bad_params(params):
        return reply.error(400, problem)
    query: str = params["query"]
    variables: dict[str, Any] | None = params.get("variables")
    schema: ModelSchema = state.schema
    record = schema.record(query)  # parsed, validated and planned once per query text
    try:
        check(schema.graphql_schema, record, variables, limits)
        operation = record.operation(params.get("operationName"))
        keyed = None
        if request.method == "POST" and operation.operation == OperationType.MUTATION:
            ttl, deadline = settings.idempotency_ttl, state.table.policy.deadline
            keyed = keyed_request(request, params, principal, ttl, deadline)
    except EdgewiseError as exc:
        return reply.error(reply.not_executed, str(exc), code_of(exc))
    if operation.operation == OperationType.MUTATION:
        try:  # nothing is written before the probe has said the table is the model's
            await checked(state)
        except EdgewiseError as exc:
            return reply.error(503, f"mutations cannot be served: {exc}", code_of(exc))
    allowed = {OperationType.QUERY}
    if request.method == "POST":
        allowed.add(OperationType.MUTATION)
    traced = request.headers.get("edgewise-trace") == "1"
    traced = traced and (principal.admin or not settings.production)
    context = state.make_context(request, state.table, principal)
    try:
        if keyed is not None and (replayed := await recorded(context.table, keyed)) is not None:
            return _send(reply, replayed, context.table.trace if traced else None)
        with idempotency.keyed(keyed):
            result = await schema.execute(
                record,
                variable_values=variables,
                context_value=context,
                operation_name=params.get("operationName"),
                allowed_operation_types=allowed,
                operation=operation,
            )
    except InvalidOperationTypeError as exc:
        if exc.operation_type is OperationType.SUBSCRIPTION:
            return reply.error(reply.not_executed, SUBSCRIPTIONS_ONLY_STREAMED)
        return reply.error(405, "mutations are sent with POST", headers={"Allow": "POST"})
    except CannotGetOperationTypeError as exc:
        return reply.error(400, str(exc) or "unknown operation")
    except EdgewiseError as exc:  # reading the record failed
        return reply.error(503, str(exc), code_of(exc), headers={"Retry-After": RETRY_AFTER})
    finally:
        context.close()
    body: dict[str, Any] = {}
    if result.errors:
        body["errors"] = format_errors(result.errors, settings.production)
    # Execution started (so `data` is sent, maybe null) unless every error is a request error
    # (parse, validation, variable coercion), which has no path.
    executed = result.data is not None or not result.errors or any(e.path for e in result.errors)
    if not executed:
        return reply.json(body, reply.not_executed)
    if register is not None:
        persisted.remember(register, query)
    body["data"] = result.data
    codes = {e["extensions"]["code"] for e in body.get("errors", [])}
    answer: Answer = (body, 200, {})
    if result.data is None and CODES[Unavailable] in codes:
        answer = (body, 503, {"Retry-After": RETRY_AFTER})
    if keyed is not None:
        answer = await settle(context.table, keyed, answer)
    return _send(reply, answer, context.table.trace if traced else None)


def _send(reply: _Reply, answer: Answer, trace: Trace | None) -> Response:
    """The answer, with the request's DynamoDB trace when asked for (``Edgewise-Trace: 1``)."""
    body, status, headers = answer
    if trace is not None:
        body = body | {"extensions": {"dynamodb": trace.as_dict()}}
    return reply.json(body, status, headers)
