"""One error root with flat subclasses, and what an error answer of DynamoDB becomes.

Each DynamoDB client translates its own failures at its boundary (:mod:`graph.dynamo.wire`,
:mod:`graph.dynamo.boto`): an error answer through :func:`answered`, a failure to get one through
:func:`unreachable`. The error keeps DynamoDB's ``code``, whether it is worth another attempt
(``retryable``, which :class:`graph.table.Table`'s retry policy reads) and the answer's fields
(``answer``: ``Error``, ``ResponseMetadata`` and the modeled ones, ``Item``,
``CancellationReasons``); the low-level exception, where there is one, is its ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = [
    "BadUserInput",
    "Conflict",
    "EdgewiseError",
    "NotFound",
    "Unavailable",
    "answered",
    "cancellation_codes",
    "unreachable",
]

RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "LimitExceededException",
        "TransactionInProgressException",  # a retry of a transaction still being applied
    }
)
TRANSIENT_CANCELLATIONS = frozenset(
    {"None", "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
)
# DynamoDB busy, not failing: retried until the deadline whatever the attempts
BUSY_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TransactionInProgressException",
    }
)
_NO_ANSWER: Mapping[str, Any] = MappingProxyType({})


class EdgewiseError(Exception):
    """The root of every error Edgewise raises on purpose (``server.errors`` gives each class
    its GraphQL error code)."""

    attempts = 1  # how many times the failed DynamoDB call was sent
    code = ""  # DynamoDB's error code, when DynamoDB answered with an error
    retryable = False  # a DynamoDB failure worth another attempt
    busy = False  # DynamoDB busy or slow (throttled, a conflict, a timeout): worth every
    # attempt the deadline allows
    answer: Mapping[str, Any] = _NO_ANSWER  # the error answer's fields, as DynamoDB sent them


class BadUserInput(EdgewiseError):
    """An argument, id or value the client must change."""


class NotFound(EdgewiseError):
    """A node or edge a write names does not exist."""


class Conflict(EdgewiseError):
    """A write lost to the table's state (a version, a unique value, a race): read again."""


class Unavailable(EdgewiseError):
    """DynamoDB is still failing after the retry policy gave up."""


def cancellation_codes(error: EdgewiseError) -> list[str]:
    """The per-action reasons of a cancelled transaction ('None' where it was fine)."""
    if error.code != "TransactionCanceledException":
        return []
    return [str(r.get("Code", "None")) for r in error.answer.get("CancellationReasons", [])]


def _retryable(code: str, status: int, answer: Mapping[str, Any]) -> bool:
    """Throttling and 5xx are worth another attempt, and so is a transaction cancelled only by
    conflicts or throttling (never a failed condition); a request refused as invalid never is,
    whatever the status an endpoint gives it."""
    if code == "TransactionCanceledException":
        codes = _reasons(answer)
        return bool(codes) and codes <= TRANSIENT_CANCELLATIONS and codes != {"None"}
    if code == "ValidationException":
        return False
    return code in RETRYABLE_CODES or status >= 500


def answered(code: str, status: int, answer: Mapping[str, Any]) -> EdgewiseError:
    """What an error answer of DynamoDB (``code``, HTTP ``status``, its fields) becomes: a
    missing table and a transient failure are :class:`Unavailable`, a transaction cancelled
    by another one on the same items a :class:`Conflict` (both worth another attempt), any
    other refusal an :class:`EdgewiseError` (internal: its message names the code, never
    DynamoDB's text)."""
    retryable = _retryable(code, status, answer)
    error: EdgewiseError
    if code == "ResourceNotFoundException":
        error = Unavailable(
            "the DynamoDB table does not exist: run `edgewise create-table` for this endpoint"
        )
    elif retryable and "TransactionConflict" in _reasons(answer):
        error = Conflict("the write conflicted with concurrent writes of the same items; try again")
    elif retryable:
        error = Unavailable(f"DynamoDB is unavailable: {code or status}")
    else:
        error = EdgewiseError(f"DynamoDB error: {code or status}")
    error.code, error.retryable, error.answer = code, retryable, answer
    error.busy = retryable and (code in BUSY_CODES or code == "TransactionCanceledException")
    return error


def _reasons(answer: Mapping[str, Any]) -> set[str]:
    return {str(r.get("Code", "None")) for r in answer.get("CancellationReasons", [])}


def unreachable(what: str) -> Unavailable:
    """No whole answer came (refused, dropped, timed out, corrupted): worth another attempt
    (every one the deadline allows after a timeout: DynamoDB is slow, not down); ``what`` names
    the failure."""
    error = Unavailable(f"DynamoDB is unavailable: {what}")
    error.retryable = True
    error.busy = "Timeout" in what
    return error
