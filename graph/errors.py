"""One error root with flat subclasses, and the translation of botocore's errors into them."""

from __future__ import annotations

from botocore.exceptions import ChecksumError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

__all__ = [
    "BadUserInput",
    "Conflict",
    "EdgewiseError",
    "NotFound",
    "Unavailable",
    "cancellation_codes",
    "error_code",
    "is_retryable",
    "translate",
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


class EdgewiseError(Exception):
    """The root of every error Edgewise raises on purpose (``server.errors`` gives each class
    its GraphQL error code)."""

    attempts = 1  # how many times the failed DynamoDB call was sent


class BadUserInput(EdgewiseError):
    """An argument, id or value the client must change."""


class NotFound(EdgewiseError):
    """A node or edge a write names does not exist."""


class Conflict(EdgewiseError):
    """A write lost to the table's state (a version, a unique value, a race): read again."""


class Unavailable(EdgewiseError):
    """DynamoDB is still failing after the retry policy gave up."""


def error_code(exc: BaseException) -> str:
    """The DynamoDB error code of a ClientError, or '' for anything else."""
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""


TRANSIENT_CANCELLATIONS = frozenset(
    {"None", "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
)


def cancellation_codes(exc: BaseException) -> list[str]:
    """The per-action reasons of a TransactionCanceledException ('None' where it was fine)."""
    if error_code(exc) != "TransactionCanceledException":
        return []
    reasons = exc.response.get("CancellationReasons", [])  # type: ignore[attr-defined]
    return [str(r.get("Code", "None")) for r in reasons]


def is_retryable(exc: BaseException) -> bool:
    """Throttling, 5xx and connection-level failures are worth another attempt, and so is a
    transaction cancelled only by conflicts or throttling (never a failed condition)."""
    if error_code(exc) == "TransactionCanceledException":
        codes = cancellation_codes(exc)
        return bool(codes) and set(codes) <= TRANSIENT_CANCELLATIONS and set(codes) != {"None"}
    if isinstance(exc, ClientError):
        if error_code(exc) == "ValidationException":  # whatever the status an endpoint gives
            return False
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return error_code(exc) in RETRYABLE_CODES or int(status) >= 500
    return isinstance(
        exc, BotoConnectionError | HTTPClientError | ChecksumError | ConnectionError | TimeoutError
    )


def translate(exc: BaseException) -> EdgewiseError:
    """Turn a botocore failure into an Edgewise error; callers ``raise translate(e) from e``."""
    code = error_code(exc)
    if code == "ResourceNotFoundException":
        return Unavailable(
            "the DynamoDB table does not exist: run `edgewise create-table` for this endpoint"
        )
    if is_retryable(exc):
        return Unavailable(f"DynamoDB is unavailable: {code or type(exc).__name__}")
    return EdgewiseError(f"DynamoDB error: {code or type(exc).__name__}")
