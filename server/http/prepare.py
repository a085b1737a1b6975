"""A streamed operation (WebSocket or Server-Sent Events) made ready to run, with the rules of a
request by HTTP: persisted queries, parameters, limits, operation selection and validation,
all on the query text's one execution record (:mod:`server.engine.records`).

A subscription runs as a live query: its operation, turned into the same query (the Subscription
type's root fields are Query's), is executed now and again when what it read changes
(:mod:`server.live.queries`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import OperationDefinitionNode, OperationType

from graph.errors import EdgewiseError
from server.engine.executor import ModelSchema
from server.engine.records import Record
from server.errors import code_of, format_error
from server.http.limits import Limits, check
from server.http.persisted import PersistedQueries

__all__ = ["EVENT_STREAM", "Prepared", "Refused", "bad_params", "prepare"]

EVENT_STREAM = "text/event-stream"  # Server-Sent Events (server.http.sse)


class Refused(Exception):
    """The operation does not run: ``errors`` say why, as sent."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors[0]["message"] if errors else "refused")
        self.errors = errors


@dataclass(frozen=True)
class Prepared:
    """``record`` and ``operation`` are what executes: for a subscription, its operation as a
    query (:meth:`server.engine.records.Record.as_query`)."""

    record: Record
    operation: OperationDefinitionNode
    variables: dict[str, Any] | None
    operation_name: str | None
    operation_type: OperationType
    register: str | None = None  # a persisted query's hash, to remember once it ran
    source: str = ""  # the document as the client sent it (what a persisted hash names)


def bad_params(params: dict[str, Any]) -> str | None:
    """What is wrong with a request's parameters, if anything."""
    query = params.get("query")
    if not isinstance(query, str) or not query.strip():
        return "no GraphQL query: pass `query` (a string) in the JSON body or the query string"
    name = params.get("operationName")
    if name is not None and not isinstance(name, str):
        return "`operationName` must be a string"
    for field in ("variables", "extensions"):
        value = params.get(field)
        if value is not None and not isinstance(value, dict):
            return f"`{field}` must be a JSON object"
    return None


def _refused(exc: EdgewiseError) -> Refused:
    return Refused([{"message": str(exc), "extensions": {"code": code_of(exc)}}])


def prepare(
    params: dict[str, Any], schema: ModelSchema, limits: Limits, persisted: PersistedQueries
) -> Prepared:
    """The operation of ``params`` ready to run, or :class:`Refused`."""
    try:
        params, register = persisted.resolve(params)
    except EdgewiseError as exc:
        raise _refused(exc) from None
    if problem := bad_params(params):
        raise Refused([{"message": problem, "extensions": {"code": "BAD_USER_INPUT"}}])
    query: str = params["query"]
    variables: dict[str, Any] | None = params.get("variables")
    name: str | None = params.get("operationName")
    record = schema.record(query)  # parsed, validated and planned once per query text
    try:
        check(schema.graphql_schema, record, variables, limits)
        operation = record.operation(name)
    except EdgewiseError as exc:
        raise _refused(exc) from None
    if record.errors:
        raise Refused([format_error(e) for e in record.errors])
    operation_type = operation.operation
    if operation_type is OperationType.SUBSCRIPTION:
        record = record.as_query(operation)
        operation = record.operation(name)
    return Prepared(record, operation, variables, name, operation_type, register, query)
