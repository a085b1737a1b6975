"""The two faces of a DynamoDB client: the data plane the engine calls on every request, and the
control plane of the commands (describe, create, scan).

:class:`DataPlane` has one method per DynamoDB call the engine makes, each taking the call's
parameters and returning its answer as DynamoDB's low-level API has them (``{"S": ...}`` values;
a number's ``N`` text and a binary ``B`` as bytes or base64 text, both read by
:func:`graph.dynamo.values.decode_item`). Two clients implement it: the lean one
(:class:`graph.dynamo.wire.LeanClient`) and aioboto3's behind an adapter
(:class:`graph.dynamo.boto.BotocoreClient`). A call a client lacks is a type error, never a
fallback to the other client.

Every failure leaves a method as a :class:`graph.errors.EdgewiseError` (each client translates
its own at its boundary, the low-level exception kept as the cause), so
:class:`graph.table.Table` retries, bounds and counts calls without knowing which client sent them.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

__all__ = ["ControlPlane", "DataPlane", "Params", "Response"]

Params = dict[str, Any]  # a call's parameters, as DynamoDB's API names them
Response = dict[str, Any]  # its answer


class ControlPlane(Protocol):
    """The calls of the commands, never of a GraphQL request: off the hot path, aioboto3's."""

    @property
    def endpoint(self) -> str:
        """The endpoint's URL."""
        ...

    @property
    def region(self) -> str: ...

    def describe_table(self, params: Params) -> Awaitable[Response]: ...
    def create_table(self, params: Params) -> Awaitable[Response]: ...
    def update_table(self, params: Params) -> Awaitable[Response]: ...
    def delete_table(self, params: Params) -> Awaitable[Response]: ...
    def describe_time_to_live(self, params: Params) -> Awaitable[Response]: ...
    def update_time_to_live(self, params: Params) -> Awaitable[Response]: ...
    def scan(self, params: Params) -> Awaitable[Response]:
        """One Scan page (``Segment``/``TotalSegments`` for a parallel one), its items as
        botocore parses them (binary values as bytes)."""
        ...


class DataPlane(Protocol):
    """The DynamoDB calls of the engine, and the control plane of the same endpoint."""

    @property
    def control(self) -> ControlPlane: ...

    def get_item(self, params: Params) -> Awaitable[Response]: ...
    def batch_get_item(self, params: Params) -> Awaitable[Response]: ...
    def query(self, params: Params) -> Awaitable[Response]: ...
    def put_item(self, params: Params) -> Awaitable[Response]: ...
    def update_item(self, params: Params) -> Awaitable[Response]: ...
    def delete_item(self, params: Params) -> Awaitable[Response]: ...
    def transact_write_items(self, params: Params) -> Awaitable[Response]: ...
    def batch_write_item(self, params: Params) -> Awaitable[Response]: ...
