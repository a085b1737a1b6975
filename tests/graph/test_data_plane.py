"""The data plane (graph/dynamo/plane.py): both clients implement every call of the protocol and
nothing falls back from one to the other; each translates its own failures into graph.errors at
its boundary, alike, the low-level exception kept as the cause (over real HTTP to moto); the
control plane does the same; and a table is keyed only by the layout it is given."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from graph.bulk import validate
from graph.dynamo.boto import BotocoreClient, Control
from graph.dynamo.client import Endpoint, create_table, open_client, table_definition
from graph.dynamo.embedded import EmbeddedDynamoDB, free_port
from graph.dynamo.plane import ControlPlane, DataPlane
from graph.dynamo.wire import LeanClient, LeanControl
from graph.errors import EdgewiseError, Unavailable
from graph.table import RetryPolicy, Table
from tests.helpers import DEMO_LAYOUT

ROOT = Path(__file__).resolve().parents[2]
CALLS = [
    "get_item",
    "batch_get_item",
    "query",
    "put_item",
    "update_item",
    "delete_item",
    "transact_write_items",
    "batch_write_item",
]
CONTROL = [
    "describe_table",
    "create_table",
    "update_table",
    "delete_table",
    "describe_time_to_live",
    "update_time_to_live",
    "scan",
]
KEY = {"PK": {"S": "USER#a"}, "SK": {"S": "USER#a"}}


def _members(protocol: type) -> set[str]:
    return {n for n in vars(protocol) if not n.startswith("_")}


def test_the_data_plane_is_one_method_per_call_of_the_engine() -> None:
    assert _members(DataPlane) == {*CALLS, "control"}
    assert _members(ControlPlane) == {*CONTROL, "endpoint", "region"}


@pytest.mark.parametrize("client", [LeanClient, BotocoreClient])
def test_each_client_has_every_call_of_the_data_plane_and_no_fallback(client: type) -> None:
    for name in CALLS:
        method = getattr(client, name)
        assert list(inspect.signature(method).parameters) == ["self", "params"], name
    assert not hasattr(client, "__getattr__")


@pytest.mark.parametrize("control", [LeanControl, Control])
def test_the_control_plane_has_every_call_of_its_protocol(control: type) -> None:
    for name in CONTROL:
        assert list(inspect.signature(getattr(control, name)).parameters) == ["self", "params"]


def test_a_call_the_lean_client_lacks_does_not_reach_another_client() -> None:
    lean = LeanClient(None, None, "http://127.0.0.1:1", "us-east-1")
    with pytest.raises(AttributeError):
        lean.scan  # type: ignore[attr-defined]  # noqa: B018  # a control-plane call
    with pytest.raises(AttributeError):
        lean.describe_table  # type: ignore[attr-defined]  # noqa: B018


@pytest.fixture(params=["lean", "botocore"])
async def client(request: pytest.FixtureRequest, dynamodb: EmbeddedDynamoDB) -> AsyncIterator[Any]:
    """Each client on moto, with the demo's table."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url), lean=request.param == "lean") as opened:
        assert isinstance(opened, LeanClient if request.param == "lean" else BotocoreClient)
        await create_table(opened.control, "graph", layout=DEMO_LAYOUT)
        yield opened


def _cause_is_kept(client: Any, error: EdgewiseError) -> None:
    """botocore's ClientError under the botocore client; the lean client keeps the answer."""
    if isinstance(client, BotocoreClient):
        assert isinstance(error.__cause__, ClientError)
        assert error.__cause__.response["Error"]["Code"] == error.code
    else:
        assert error.__cause__ is None
    assert error.answer["Error"]["Code"] == error.code


async def test_a_missing_table_is_unavailable_and_not_retryable_on_each_client(
    client: Any,
) -> None:
    with pytest.raises(Unavailable) as caught:
        await client.get_item({"TableName": "no-such-table", "Key": KEY})
    error = caught.value
    assert (error.code, error.retryable) == ("ResourceNotFoundException", False)
    assert "edgewise create-table" in str(error)
    _cause_is_kept(client, error)


async def test_an_invalid_call_is_internal_and_not_retryable_on_each_client(client: Any) -> None:
    with pytest.raises(EdgewiseError) as caught:  # a key without its sort key
        await client.get_item({"TableName": "graph", "Key": {"PK": {"S": "USER#a"}}})
    error = caught.value
    assert type(error) is EdgewiseError
    assert (error.code, error.retryable) == ("ValidationException", False)
    assert str(error) == "DynamoDB error: ValidationException"
    _cause_is_kept(client, error)


async def test_a_failed_condition_keeps_the_old_item_on_each_client(client: Any) -> None:
    item = {**KEY, "name": {"S": "A"}}
    await client.put_item({"TableName": "graph", "Item": item})
    with pytest.raises(EdgewiseError) as caught:
        await client.put_item(
            {
                "TableName": "graph",
                "Item": item,
                "ConditionExpression": "attribute_not_exists(PK)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        )
    error = caught.value
    assert (error.code, error.retryable) == ("ConditionalCheckFailedException", False)
    assert error.answer["Item"]["name"] == {"S": "A"}
    _cause_is_kept(client, error)


async def test_the_control_plane_translates_its_errors_too(client: Any) -> None:
    with pytest.raises(Unavailable) as caught:
        await client.control.describe_table({"TableName": "no-such-table"})
    assert caught.value.code == "ResourceNotFoundException"
    _cause_is_kept(client, caught.value)


@pytest.mark.parametrize("lean", [True, False])
async def test_an_unreachable_endpoint_is_the_same_retryable_error_on_each_client(
    lean: bool,
) -> None:
    async with open_client(Endpoint(f"http://127.0.0.1:{free_port()}"), lean=lean) as client:
        with pytest.raises(Unavailable) as caught:
            await client.get_item({"TableName": "graph", "Key": KEY})
    error = caught.value
    assert str(error) == "DynamoDB is unavailable: EndpointConnectionError"
    assert error.retryable and not error.code
    expected = OSError if lean else EndpointConnectionError
    assert isinstance(error.__cause__, expected)


async def test_the_table_passes_a_clients_error_on_with_its_attempts(client: Any) -> None:
    table = Table(client, "no-such-table", RetryPolicy(base_delay=0.001), layout=DEMO_LAYOUT)
    with pytest.raises(Unavailable) as caught:
        await table.get_item(DEMO_LAYOUT.item_key({"PK": "USER#a", "SK": "USER#a"}))
    assert (caught.value.code, caught.value.attempts) == ("ResourceNotFoundException", 1)
    assert table.trace.operations["GetItem"] == 1


def test_a_table_without_a_layout_is_refused() -> None:
    with pytest.raises(TypeError, match="layout"):
        Table(None, "graph")  # type: ignore[call-arg]


@pytest.mark.parametrize("function", [table_definition, create_table, validate])
def test_what_keys_a_table_has_no_default_layout(function: Any) -> None:
    assert inspect.signature(function).parameters["layout"].default is inspect.Parameter.empty


def test_no_demo_layout_in_generic_code() -> None:
    """The demo's layout comes from its model; graph/, server/ and model/ name none."""
    found = [
        str(path.relative_to(ROOT))
        for folder in ("graph", "server", "model")
        for path in (ROOT / folder).rglob("*.py")
        if "DEMO_LAYOUT" in path.read_text()
    ]
    assert found == []
