"""Consumed capacity units: Edgewise's computation (:mod:`graph.capacity`) by AWS's documented
rules, checked against what DynamoDB Local reports for the same calls of the demo's queries and
mutations, and the trace's ``consumedUnitsSource`` on each engine.

DynamoDB Local departs from AWS's documented arithmetic in three places, which the comparison
states rather than follows:

- a Query page that returns no item reports 0 units; AWS's API reference (Query): "Queries that
  do not return results consume the minimum read capacity units according to the type of read";
- a BatchGetItem key with no item reports 0; AWS ("Capacity unit consumption for read
  operations"): a read of an item that does not exist still consumes the minimum;
- TransactWriteItems: its figure does not add up over the actions (one new 30-byte put under
  one index reports 8 units, three such puts 8 too, a put over an existing item 4), where AWS
  documents 2 units per KB of each item written and of each index write: those calls are
  compared with this module's independent computation, by hand below."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from graph.capacity import computed_units, item_size
from graph.dynamo.client import Endpoint, create_table, open_client
from graph.dynamo.local import DynamoDBLocal
from graph.dynamo.values import Binary
from graph.table import Layout, Table
from models.demo.generate import demo_items
from server.http.app import create_app
from server.settings import Settings
from tests.helpers import DEMO_LAYOUT, LEAN, LOCAL, gql

# The demo's reads and writes: node lookups (found, missing, many), edges both ways, a filtered
# connection, single-item writes of a small and of a large item (5 KB: over a read unit and
# five write units), and transactions (create, edge, delete).
BIG = "x" * 5000
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ('{ user(id: "alice") { name email } }', {}),
    ('{ user(id: "nobody") { name } }', {}),
    ('{ nodes(ids: ["USER#alice", "USER#bob", "GROUP#nope"]) { id } }', {}),
    ('{ user(id: "alice") { groups(first: 10) { edges { node { name } } } } }', {}),
    ('{ product(id: "prod1") { subscribers(first: 10) { edges { node { name } } } } }', {}),
    (
        "mutation($d: String!) { createGroup(input: {id: 'big', name: 'Big', description: $d})"
        " { id } }".replace("'", '"'),
        {"d": BIG},
    ),
    ('{ group(id: "big") { name description } }', {}),
    ('mutation { updateGroup(input: {id: "big", name: "Bigger"}) { version } }', {}),
    ('mutation { createUser(input: {id: "n1", name: "New", email: "n@x.io"}) { id } }', {}),
    ('mutation { updateUser(input: {id: "n1", name: "Newer"}) { version } }', {}),
    ('mutation { addGroupMember(userId: "n1", groupId: "group2") { role } }', {}),
    ('mutation { removeGroupMember(userId: "n1", groupId: "group2") }', {}),
    ('mutation { deleteUser(id: "n1") { id } }', {}),
]


class Recording:
    """A data plane that keeps each answered call's (operation, params, response)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        send = getattr(self.inner, name)
        operation = "".join(word.title() for word in name.split("_"))

        async def recorded(params: dict[str, Any]) -> Any:
            response = await send(params)
            self.calls.append((operation, params, response))
            return response

        return recorded


def reported(response: dict[str, Any]) -> float:
    capacity = response["ConsumedCapacity"]
    entries = capacity if isinstance(capacity, list) else [capacity]
    return float(sum(entry["CapacityUnits"] for entry in entries))


def unread(operation: str, params: dict[str, Any], response: dict[str, Any]) -> float:
    """The minimum reads AWS charges for what this call found nothing at (see the docstring)."""
    if operation == "Query" and not response.get("Items") and not response.get("Count"):
        return 1.0 if params.get("ConsistentRead") else 0.5
    if operation == "BatchGetItem":
        [(name, request)] = params["RequestItems"].items()
        missing = len(request["Keys"]) - len(response["Responses"].get(name, []))
        return missing * (1.0 if request.get("ConsistentRead") else 0.5)
    return 0.0


@pytest.fixture
async def local_demo(dynamodb_local: DynamoDBLocal) -> AsyncIterator[Table]:
    """The demo table on DynamoDB Local, its data plane recorded (:class:`Recording`)."""
    dynamodb_local.reset()
    async with open_client(Endpoint(dynamodb_local.url), lean=LEAN) as client:
        await create_table(client.control, "graph", layout=DEMO_LAYOUT)
        table = Table(client, "graph", layout=DEMO_LAYOUT)
        await table.batch_write(demo_items())
        table.client = Recording(table.client)
        yield table


async def served(table: Table) -> list[tuple[dict[str, Any], list[Any]]]:
    """Each request of :data:`REQUESTS` over ASGI: its trace and the calls it made."""
    recording = table.client
    assert isinstance(recording, Recording)
    traces = []
    transport = httpx.ASGITransport(app=create_app(table=table))
    async with httpx.AsyncClient(transport=transport, base_url="http://edgewise") as http:
        for query, variables in REQUESTS:
            recording.calls.clear()
            body = await gql(http, query, variables)
            assert "errors" not in body, (query, body["errors"])
            traces.append((body["extensions"]["dynamodb"], list(recording.calls)))
    return traces


async def test_computed_units_equal_what_dynamodb_local_reports(local_demo: Table) -> None:
    compared = transactions = 0
    for trace, calls in await served(local_demo):
        assert trace["consumedUnitsSource"] == "reported"
        assert trace["consumedReadUnits"] + trace["consumedWriteUnits"] == sum(
            reported(response) for _, _, response in calls
        )
        sizes: dict[str, int] = {}  # the request's reads, for its updates and deletes
        for operation, params, response in calls:
            read, write = computed_units(operation, params, response, DEMO_LAYOUT, sizes)
            if operation == "TransactWriteItems":
                transactions += 1
                continue
            assert read + write - unread(operation, params, response) == reported(response), (
                operation,
                params,
            )
            compared += 1
    assert compared >= 15 and transactions == 4


async def test_the_trace_computes_units_where_the_engine_reports_none(local_demo: Table) -> None:
    """With ``units="computed"`` (what Edgewise does on the embedded moto) the same requests
    trace the same read units as DynamoDB Local reports, but for what it found nothing at, and
    say ``computed``; the writes are AWS's (a transaction twice the units of its writes)."""
    expected = [trace for trace, _ in await served(local_demo)]
    # the demo again, on a fresh table, and the same requests traced with computed units
    assert isinstance(local_demo.client, Recording)
    client = local_demo.client.inner
    await client.control.delete_table({"TableName": "graph"})
    await create_table(client.control, "graph", layout=DEMO_LAYOUT)
    await local_demo.batch_write(demo_items())
    local_demo.units = "computed"
    computed = await served(local_demo)
    for before, (trace, calls) in zip(expected, computed, strict=True):
        assert trace["consumedUnitsSource"] == "computed"
        missed = sum(unread(*call) for call in calls)
        assert trace["consumedReadUnits"] - missed == before["consumedReadUnits"]
        if "TransactWriteItems" not in trace["operations"]:
            assert trace["consumedWriteUnits"] == before["consumedWriteUnits"]
    writes = [trace["consumedWriteUnits"] for trace, _ in computed]
    # createUser: the user and its email claim, each 1 unit and 1 in the inverted index, x2;
    # addGroupMember: the edge (2) and each end's counter (an update: 2 each), x2
    assert writes[8] == 8.0 and writes[10] == 12.0


def test_the_documented_arithmetic() -> None:
    """AWS's worked rules: reads round up to 4 KB per item or per Query page and halve when
    eventually consistent; writes round up to 1 KB and double in a transaction."""
    layout = Layout("PK", "SK", {})
    small = {"PK": {"S": "a"}, "SK": {"S": "b"}, "v": {"S": "x" * 1500}}  # 1,507 bytes
    assert item_size({"PK": "a", "SK": "b", "v": "x" * 1500}) == 1507
    assert item_size({"n": 12345, "b": Binary(b"abc"), "l": [True, None]}) == 1 + 4 + 1 + 3 + 1 + (
        3 + 2 + 2
    )
    page = {"Items": [small, small, small]}  # 4,521 bytes: 2 units, not 3
    assert computed_units("Query", {}, page, layout) == (1.0, 0.0)
    assert computed_units("Query", {"ConsistentRead": True}, page, layout) == (2.0, 0.0)
    batch: dict[str, Any] = {"RequestItems": {"t": {"Keys": [{}, {}, {}]}}}
    assert computed_units("BatchGetItem", batch, {"Responses": {"t": [small] * 3}}, layout) == (
        1.5,
        0.0,
    )
    assert computed_units("PutItem", {"Item": small}, {}, layout) == (0.0, 2.0)
    actions = {"TransactItems": [{"Put": {"Item": small}}, {"ConditionCheck": {}}]}
    assert computed_units("TransactWriteItems", actions, {}, layout) == (0.0, 6.0)


async def test_a_mutation_on_moto_is_charged_its_computed_units(http: httpx.AsyncClient) -> None:
    """moto reports no units for TransactWriteItems: the trace computes them (a user and its
    email claim, each 1 unit and 1 in the inverted index, twice in a transaction) and says so;
    DynamoDB Local reports them."""
    query = 'mutation { createUser(input: {id: "n1", name: "N", email: "n@x.io"}) { id } }'
    trace = (await gql(http, query))["extensions"]["dynamodb"]
    assert trace["operations"] == {"TransactWriteItems": 1}
    assert trace["consumedWriteUnits"] == 8.0
    assert trace["consumedUnitsSource"] == ("reported" if LOCAL else "computed")


def test_units_are_computed_on_the_embedded_moto_and_reported_elsewhere() -> None:
    assert Settings(dynamodb="embedded").units == "computed"
    assert Settings(dynamodb="http://127.0.0.1:8000").units == "reported"
    assert Settings(dynamodb="embedded", consumed_units="reported").units == "reported"
