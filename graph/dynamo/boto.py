"""aioboto3's DynamoDB client behind the two planes: :class:`BotocoreClient` (the data plane of
``--client botocore``) and :class:`Control` (every client's control plane), each call's botocore
failure translated into :mod:`graph.errors` here, at this boundary, the botocore exception kept as
the cause."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from botocore.exceptions import ChecksumError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from graph.dynamo.plane import ControlPlane, Params, Response
from graph.errors import EdgewiseError, answered, unreachable

__all__ = ["BotocoreClient", "Control", "error_code", "translate"]


def error_code(exc: BaseException) -> str:
    """The DynamoDB error code of a botocore ClientError, or '' for anything else."""
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""


def translate(exc: BaseException) -> EdgewiseError:
    """A botocore failure as an Edgewise error; callers ``raise translate(e) from e``.

    An error answer (ClientError) as :func:`graph.errors.answered` says; a connection-level
    failure, a timeout or a corrupted answer is retryable; anything else (a parameter botocore
    refused, no credentials) is not."""
    if isinstance(exc, ClientError):
        response = exc.response
        status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        return answered(error_code(exc), status, response)
    if isinstance(
        exc, BotoConnectionError | HTTPClientError | ChecksumError | ConnectionError | TimeoutError
    ):
        return unreachable(type(exc).__name__)
    return EdgewiseError(f"DynamoDB error: {type(exc).__name__}")


async def _send(method: Callable[..., Awaitable[Any]], params: Params) -> Response:
    try:
        response: Response = await method(**params)
    except Exception as exc:
        raise translate(exc) from exc
    return response


class Control:
    """The control plane (:class:`graph.dynamo.plane.ControlPlane`) over an open aioboto3
    DynamoDB client, ``raw``."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    @property
    def endpoint(self) -> str:
        return str(self.raw.meta.endpoint_url)

    @property
    def region(self) -> str:
        return str(getattr(self.raw.meta, "region_name", None) or "us-east-1")

    def describe_table(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.describe_table, params)

    def create_table(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.create_table, params)

    def update_table(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.update_table, params)

    def delete_table(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.delete_table, params)

    def describe_time_to_live(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.describe_time_to_live, params)

    def update_time_to_live(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.update_time_to_live, params)

    def scan(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.scan, params)


class BotocoreClient:
    """The data plane (:class:`graph.dynamo.plane.DataPlane`) over an open aioboto3 DynamoDB
    client, ``raw``: every call through botocore (validation, parsing, event hooks)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.control: ControlPlane = Control(raw)

    def get_item(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.get_item, params)

    def batch_get_item(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.batch_get_item, params)

    def query(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.query, params)

    def put_item(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.put_item, params)

    def update_item(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.update_item, params)

    def delete_item(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.delete_item, params)

    def transact_write_items(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.transact_write_items, params)

    def batch_write_item(self, params: Params) -> Awaitable[Response]:
        return _send(self.raw.batch_write_item, params)
