"""Unit tests of graph.errors and of the botocore client's translation (graph.dynamo.boto): which
botocore failures are retried and what they become."""

from __future__ import annotations

import pytest
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ParamValidationError,
    ReadTimeoutError,
)

from graph.dynamo.boto import error_code, translate
from graph.errors import BadUserInput, Conflict, EdgewiseError, NotFound, Unavailable
from server.errors import code_of

THROTTLING_CODES = [
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "LimitExceededException",
]
SERVER_CODES = ["InternalServerError", "ServiceUnavailable"]
CLIENT_CODES = [
    "ConditionalCheckFailedException",
    "ValidationException",
    "TransactionCanceledException",
    "AccessDeniedException",
    "ItemCollectionSizeLimitExceededException",
]


def client_error(code: str, status: int = 400, message: str = "boom") -> ClientError:
    return ClientError(
        {
            "Error": {"Code": code, "Message": message},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        "Query",
    )


# --- error codes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (EdgewiseError, "INTERNAL_SERVER_ERROR"),
        (BadUserInput, "BAD_USER_INPUT"),
        (NotFound, "NOT_FOUND"),
        (Conflict, "CONFLICT"),
        (Unavailable, "UNAVAILABLE"),
    ],
)
def test_each_error_class_has_its_graphql_code(cls: type[EdgewiseError], code: str) -> None:
    assert code_of(cls("x")) == code
    assert issubclass(cls, EdgewiseError)


def test_error_code_reads_client_errors_only() -> None:
    assert error_code(client_error("ThrottlingException")) == "ThrottlingException"
    assert error_code(ClientError({}, "Query")) == ""
    assert error_code(ValueError("ThrottlingException")) == ""


# --- retryable -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status"),
    [(code, 400) for code in THROTTLING_CODES]
    + [(code, 500) for code in SERVER_CODES]
    + [(code, 400) for code in SERVER_CODES]  # the code alone is enough
    + [("SomethingNew", 500), ("SomethingNew", 502), ("SomethingNew", 503), ("", 504)],
)
def test_throttling_and_5xx_are_retryable_and_unavailable(code: str, status: int) -> None:
    exc = client_error(code, status)
    assert translate(exc).retryable
    err = translate(exc)
    assert type(err) is Unavailable
    assert code_of(err) == "UNAVAILABLE"
    assert "unavailable" in str(err)
    if code:
        assert code in str(err)


@pytest.mark.parametrize("code", CLIENT_CODES)
def test_client_errors_are_not_retryable_and_internal(code: str) -> None:
    exc = client_error(code, 400, message="secret detail")
    assert not translate(exc).retryable
    err = translate(exc)
    assert type(err) is EdgewiseError
    assert code_of(err) == "INTERNAL_SERVER_ERROR"
    assert code in str(err)
    assert "secret detail" not in str(err)


def test_client_error_without_metadata_is_not_retryable() -> None:
    exc = ClientError({"Error": {"Code": "ValidationException", "Message": "m"}}, "Query")
    assert not translate(exc).retryable
    assert type(translate(exc)) is EdgewiseError


@pytest.mark.parametrize("status", [400, 404, 500])
def test_missing_table_tells_to_create_it(status: int) -> None:
    exc = client_error("ResourceNotFoundException", status, "Requested resource not found")
    err = translate(exc)
    assert type(err) is Unavailable
    assert code_of(err) == "UNAVAILABLE"
    assert "edgewise create-table" in str(err)
    assert "does not exist" in str(err)


def test_missing_table_is_not_retryable() -> None:
    assert not translate(client_error("ResourceNotFoundException", 400)).retryable


@pytest.mark.parametrize(
    "exc",
    [
        EndpointConnectionError(endpoint_url="http://localhost:1"),
        ReadTimeoutError(endpoint_url="http://localhost:1"),
        ConnectTimeoutError(endpoint_url="http://localhost:1"),
        ConnectionClosedError(endpoint_url="http://localhost:1"),
        ConnectionRefusedError("refused"),
        ConnectionResetError("reset"),
        TimeoutError("slow"),
    ],
    ids=type,
)
def test_connection_failures_are_retryable_and_unavailable(exc: Exception) -> None:
    assert translate(exc).retryable
    err = translate(exc)
    assert type(err) is Unavailable
    assert type(exc).__name__ in str(err)


@pytest.mark.parametrize(
    "exc", [ValueError("x"), KeyError("PK"), RuntimeError("y"), TypeError("z")], ids=type
)
def test_other_exceptions_are_internal(exc: Exception) -> None:
    assert not translate(exc).retryable
    err = translate(exc)
    assert type(err) is EdgewiseError
    assert type(exc).__name__ in str(err)


@pytest.mark.parametrize(
    "exc",
    [ParamValidationError(report="Invalid type for parameter Limit"), NoCredentialsError()],
    ids=type,
)
def test_client_side_botocore_errors_are_not_retryable(exc: Exception) -> None:
    assert not translate(exc).retryable
    assert type(translate(exc)) is EdgewiseError


@pytest.mark.parametrize("status", [400, 500])
def test_a_request_refused_as_invalid_is_never_retried_whatever_its_status(status: int) -> None:
    """DynamoDB answers 400; an endpoint that answers a 5xx for the same refusal (moto, on a
    bound of the wrong type) must not turn it into seconds of retries."""
    exc = client_error("ValidationException", status, message="Invalid KeyConditionExpression")
    assert not translate(exc).retryable
    assert code_of(translate(exc)) == "INTERNAL_SERVER_ERROR"
