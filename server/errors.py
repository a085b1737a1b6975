"""GraphQL error codes: the errors only the server raises, the ``extensions.code`` of every
Edgewise error, and how an error is sent to the client and logged."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from graphql import GraphQLError

from graph.errors import BadUserInput, Conflict, EdgewiseError, NotFound, Unavailable

__all__ = [
    "CODES",
    "INTERNAL",
    "Forbidden",
    "PersistedQueryError",
    "PersistedQueryNotFound",
    "PersistedQueryNotSupported",
    "QueryTooComplex",
    "Unauthenticated",
    "code_of",
    "format_error",
    "format_errors",
    "log_unexpected",
]

log = logging.getLogger("edgewise")

INTERNAL = "INTERNAL_SERVER_ERROR"
SUGGESTION = re.compile(r"\s*Did you mean [^?]*\?")


class Unauthenticated(EdgewiseError):
    """No valid token where one is needed."""


class Forbidden(EdgewiseError):
    """The principal may not read or do this."""


class QueryTooComplex(EdgewiseError):
    """A document over the depth, alias, node or cost limits."""


class PersistedQueryError(EdgewiseError):
    """A protocol answer the client acts on (it resends the query): HTTP 200, never cached."""


class PersistedQueryNotFound(PersistedQueryError):
    pass


class PersistedQueryNotSupported(PersistedQueryError):
    pass


CODES: dict[type[BaseException], str] = {
    BadUserInput: "BAD_USER_INPUT",
    NotFound: "NOT_FOUND",
    Conflict: "CONFLICT",
    Unavailable: "UNAVAILABLE",
    Unauthenticated: "UNAUTHENTICATED",
    Forbidden: "FORBIDDEN",
    QueryTooComplex: "QUERY_TOO_COMPLEX",
    PersistedQueryNotFound: "PERSISTED_QUERY_NOT_FOUND",
    PersistedQueryNotSupported: "PERSISTED_QUERY_NOT_SUPPORTED",
}


def code_of(exc: BaseException) -> str:
    """The GraphQL error code of an error: its class's, or its nearest base's; anything else
    (an Edgewise error with no code of its own, or not ours at all) is internal."""
    for cls in type(exc).__mro__:
        if cls in CODES:
            return CODES[cls]
    return INTERNAL


def format_error(error: GraphQLError) -> dict[str, Any]:
    """The error as sent: always with ``extensions.code``; unexpected errors masked."""
    original = error.original_error
    if original is None or isinstance(original, GraphQLError):
        code = "BAD_USER_INPUT"  # parse, validation and variable errors
    else:
        code = code_of(original)
    formatted: dict[str, Any] = dict(error.formatted)
    if code == INTERNAL:
        formatted["message"] = "Internal server error"
    formatted["extensions"] = {**formatted.get("extensions", {}), "code": code}
    return formatted


def format_errors(errors: Iterable[GraphQLError], production: bool) -> list[dict[str, Any]]:
    """The errors as sent; under ``production`` without field suggestions."""
    formatted = [format_error(e) for e in errors]
    if production:
        for error in formatted:
            error["message"] = SUGGESTION.sub("", error["message"])
    return formatted


def log_unexpected(errors: Iterable[GraphQLError]) -> None:
    """Log only what the client cannot be told: errors that are not ours on purpose."""
    for error in errors:
        original = error.original_error
        if (
            original is not None
            and not isinstance(original, GraphQLError)
            and code_of(original) == INTERNAL
        ):
            log.error("unexpected error at %s", error.path, exc_info=original)
