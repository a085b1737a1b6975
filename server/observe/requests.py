"""What each GraphQL request did, reported once as it ends: a log line, metrics and spans.

:func:`observed` wraps the ``/graphql`` endpoint. It gives each request an
:class:`Observation`, which the request's table tells of every DynamoDB call it sends (it is the
table's :class:`graph.observer.Observer`) and its dataloaders of every batch; when the endpoint has
answered, it logs the request (``edgewise.request``), updates the app's
:class:`server.observe.metrics.Metrics` and ends the request's spans. The log line carries the
request id, the operation name, the status, the duration, the DynamoDB requests and rounds and the
error codes: never a header's value, a token or a variable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from aiodataloader import DataLoader
from graphql import GraphQLError, Source, TokenKind
from graphql.language.lexer import Lexer
from starlette.requests import Request
from starlette.responses import Response

from graph.observer import Sent
from server.observe.metrics import OTHER, Metrics

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = ["ANONYMOUS", "Observation", "note_params", "observed", "operation_name"]

log = logging.getLogger("edgewise.request")

ANONYMOUS = "anonymous"
OPERATIONS = frozenset({"query", "mutation", "subscription"})
CLIENT_CLOSED = 499  # the status nginx logs for a request whose client closed the connection
NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]{0,99}")  # a GraphQL name, at most 100 characters
Endpoint = Callable[[Request], Awaitable[Response]]


def note_params(request: Request, params: Mapping[str, Any]) -> None:
    """Remember the request's document and operation name (called by the endpoint once read)."""
    request.state.graphql_query = params.get("query")
    request.state.graphql_operation = params.get("operationName")


def operation_name(query: object, name: object, max_tokens: int = 2000) -> str:
    """The operation a request runs, for logs and labels: ``operationName`` when given, else the
    name of the document's first operation, else :data:`ANONYMOUS`. A name that is not a GraphQL
    name of at most 100 characters is :data:`server.observe.metrics.OTHER`.

    The document is not parsed again: its tokens are read only up to the first operation's name
    (usually the first two), past any fragment defined before it.
    """
    if isinstance(name, str) and name:
        return name if NAME.fullmatch(name) else OTHER
    if not isinstance(query, str):
        return ANONYMOUS
    lexer = Lexer(Source(query))
    depth, in_fragment = 0, False
    try:
        for _ in range(max_tokens):
            token = lexer.advance()
            if token.kind is TokenKind.EOF:
                break
            if token.kind is TokenKind.BRACE_L:
                if depth == 0 and not in_fragment:
                    break  # the query shorthand: `{ ... }`
                depth += 1
            elif token.kind is TokenKind.BRACE_R:
                depth -= 1
                in_fragment = in_fragment and depth > 0
            elif depth == 0 and token.kind is TokenKind.NAME:
                if token.value == "fragment":
                    in_fragment = True
                elif not in_fragment and token.value in OPERATIONS:
                    following = lexer.advance()
                    if following.kind is TokenKind.NAME and following.value:
                        return following.value
                    break
    except GraphQLError:
        pass
    return ANONYMOUS


def _error_codes(response: Response) -> list[str]:
    body = getattr(response, "body", b"")
    if b'"errors"' not in body:
        return []
    try:
        errors = json.loads(body).get("errors") or []
    except (ValueError, AttributeError):
        return []
    codes = [e.get("extensions", {}).get("code") for e in errors if isinstance(e, dict)]
    return sorted({str(code) for code in codes if code})


class Observation:
    """One GraphQL request as its table and loaders report it (a graph.observer.Observer).

    ``requests`` and ``rounds`` count as the request's :class:`graph.table.Trace` does. With a
    tracer, the request has a SERVER span, each round an INTERNAL span under it, and each
    DynamoDB call a CLIENT span under its round.
    """

    def __init__(
        self, request: Request, metrics: Metrics | None = None, tracer: Tracer | None = None
    ) -> None:
        self.request_id = uuid.uuid4().hex
        self.metrics = metrics
        self.tracer = tracer
        self.started = time.perf_counter()
        self.requests = 0
        self.rounds = 0
        self.span: Span | None = None
        self._round: Span | None = None
        if tracer is not None:
            from opentelemetry import propagate
            from opentelemetry.trace import SpanKind

            self.span = tracer.start_span(
                f"{request.method} /graphql",
                context=propagate.extract(request.headers),
                kind=SpanKind.SERVER,
                attributes={
                    "http.request.method": request.method,
                    "http.route": "/graphql",
                    "url.path": request.url.path,
                    "url.scheme": request.url.scheme,
                    "edgewise.request_id": self.request_id,
                },
            )

    def _child(self, name: str, parent: Span | None, **options: Any) -> Span:
        from opentelemetry import trace

        assert self.tracer is not None
        context = trace.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span(name, context=context, **options)

    # graph.table.Observer
    def round_started(self) -> None:
        self.rounds += 1
        if self.tracer is not None:
            self._round = self._child(
                "dynamodb round", self.span, attributes={"edgewise.round": self.rounds}
            )

    def round_ended(self) -> None:
        if self._round is not None:
            self._round.end()
            self._round = None

    def sent(self, call: Sent) -> None:
        self.requests += 1
        if self.metrics is not None:
            self.metrics.call(call)
        if self.tracer is not None:
            from opentelemetry.trace import SpanKind, Status, StatusCode

            ended = time.time_ns()
            span = self._child(
                f"DynamoDB.{call.operation}",
                self._round or self.span,
                kind=SpanKind.CLIENT,
                start_time=ended - int(call.seconds * 1e9),
                attributes={
                    "rpc.system": "aws-api",
                    "rpc.service": "DynamoDB",
                    "rpc.method": call.operation,
                    "edgewise.outcome": call.outcome,
                },
            )
            if call.outcome != "ok":
                span.set_status(Status(StatusCode.ERROR, call.outcome))
            span.end(end_time=ended)

    def retrying(self, operation: str) -> None:
        if self.metrics is not None:
            self.metrics.retry(operation)

    def watch(self, loaders: object) -> None:
        """Count the batch sizes of the dataloaders among ``loaders``' attributes."""
        metrics = self.metrics
        if metrics is None:
            return
        for name, loader in vars(loaders).items():
            if isinstance(loader, DataLoader):
                loader.batch_load_fn = _counted(loader.batch_load_fn, name, metrics)

    def finish(self, request: Request, response: Response | None, status: int = 500) -> None:
        """Log the request and record it in the metrics and the span (``status`` is for a
        request that ended with no response: 500 for a crash, 499 when the client left)."""
        seconds = time.perf_counter() - self.started
        if response is not None and not str(response.media_type).startswith("application/"):
            # the playground's page, or its 404 under --production: not a GraphQL request
            if self.span is not None:
                self.span.end()
            return
        codes = ["INTERNAL_SERVER_ERROR"] if response is None and status == 500 else []
        if response is not None:
            status, codes = response.status_code, _error_codes(response)
        state = request.state
        limits = getattr(request.app.state, "limits", None)
        operation = operation_name(
            getattr(state, "graphql_query", None),
            getattr(state, "graphql_operation", None),
            limits.tokens if limits is not None else 2000,
        )
        ok = status < 400 and not codes
        if self.metrics is not None:
            self.metrics.request(operation, ok, seconds, self.requests, self.rounds)
        fields: dict[str, Any] = {
            "request_id": self.request_id,
            "operation": operation,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
            "dynamodb_requests": self.requests,
            "dynamodb_rounds": self.rounds,
            "error_codes": codes,
        }
        if self.span is not None:
            self._end_span(operation, status, codes, fields)
        level = logging.WARNING if status >= 500 else logging.INFO
        errors = f", errors {' '.join(codes)}" if codes else ""
        log.log(
            level,
            "%s %s %d in %.1f ms, %d DynamoDB requests in %d rounds%s",
            request.method,
            operation,
            status,
            seconds * 1000,
            self.requests,
            self.rounds,
            errors,
            extra=fields,
        )
        if response is not None:
            response.headers["X-Request-Id"] = self.request_id

    def _end_span(
        self, operation: str, status: int, codes: list[str], fields: dict[str, Any]
    ) -> None:
        from opentelemetry.trace import Status, StatusCode

        span = self.span
        assert span is not None
        self.round_ended()
        span.set_attribute("graphql.operation.name", operation)
        span.set_attribute("http.response.status_code", status)
        span.set_attribute("edgewise.dynamodb.requests", self.requests)
        span.set_attribute("edgewise.dynamodb.rounds", self.rounds)
        if codes:
            span.set_attribute("edgewise.error_codes", codes)
        if status >= 500:
            span.set_status(Status(StatusCode.ERROR, f"HTTP {status}"))
        context = span.get_span_context()
        fields["trace_id"] = format(context.trace_id, "032x")
        fields["span_id"] = format(context.span_id, "016x")
        span.end()


def _counted(
    batch: Callable[[list[Any]], Coroutine[Any, Any, list[Any]]], name: str, metrics: Metrics
) -> Callable[[list[Any]], Coroutine[Any, Any, list[Any]]]:
    async def counted(keys: list[Any]) -> list[Any]:
        metrics.batch(name, len(keys))
        return await batch(keys)

    return counted


def observed(endpoint: Endpoint) -> Endpoint:
    """``endpoint`` with an :class:`Observation` per request (``request.state.observation``),
    using the app's ``state.metrics`` and ``state.tracer`` (either may be None)."""

    async def run(request: Request) -> Response:
        state = request.app.state
        observation = Observation(
            request, getattr(state, "metrics", None), getattr(state, "tracer", None)
        )
        request.state.observation = observation
        try:
            response = await endpoint(request)
        except asyncio.CancelledError:  # the client went away
            observation.finish(request, None, CLIENT_CLOSED)
            raise
        except BaseException:
            observation.finish(request, None)
            raise
        observation.finish(request, response)
        return response

    return run
