"""Generated mutations of the order-entry model: single items with conditioned single-item
writes, several items in one transaction; copies and index attributes kept in sync; a failed
mutation leaves the table exactly as it was."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.table import Table
from tests.helpers import DEMO_LAYOUT, LEAN, gql
from tests.table_state import scan

Serve = Callable[[str], Awaitable[httpx.AsyncClient]]

NEW_ORDER = """mutation { createOrder(input: {id: "o100", customerId: "c1", accountRepId: "e1",
    status: OPEN, date: "2026-04-01", total: 9.5}) { id status version customer { name } } }"""


@pytest.fixture
async def http(model_http: Serve) -> httpx.AsyncClient:
    return await model_http("order-entry")


async def items(dynamodb: EmbeddedDynamoDB) -> list[dict[str, Any]]:
    """Every item of the table, in key order (a strongly consistent Scan)."""
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        found = await scan(Table(client, "order-entry", layout=DEMO_LAYOUT))
    return [found[key] for key in sorted(found)]


async def test_create_is_one_put_item_with_index_attributes(
    http: httpx.AsyncClient, dynamodb: EmbeddedDynamoDB
) -> None:
    body = await gql(http, NEW_ORDER)
    assert body["data"]["createOrder"] == {
        "id": "ORDER#o100",
        "status": "OPEN",
        "version": 1,
        "customer": {"name": "Acme Corp"},
    }
    assert body["extensions"]["dynamodb"]["operations"] == {"PutItem": 1, "BatchGetItem": 1}
    stored = next(i for i in await items(dynamodb) if i["PK"] == "ORDER#o100")
    assert stored["GSI1PK"] == "CUST#c1" and stored["GSI1SK"] == "OPEN#2026-04-01#o100"
    assert stored["GSI2PK"].startswith("ORDERS#OPEN#") and stored["GSI2SK"] == "2026-04-01#o100"
    again = await gql(http, NEW_ORDER)
    assert again["errors"][0]["extensions"]["code"] == "CONFLICT"


async def test_update_refreshes_index_attributes_and_edge_copies_in_one_transaction(
    http: httpx.AsyncClient,
) -> None:
    body = await gql(
        http,
        'mutation { updateOrder(input: {id: "o1", status: SHIPPED, '
        "expectedVersion: 1}) { status version } }",
    )
    assert body["data"]["updateOrder"] == {"status": "SHIPPED", "version": 2}
    assert body["extensions"]["dynamodb"]["operations"] == {
        "GetItem": 1,
        "Query": 1,
        "TransactWriteItems": 1,
    }
    rep = await gql(
        http, '{ employee(id: "e1") { orders(status: SHIPPED) { edges { node { id } } } } }'
    )
    assert [e["node"]["id"] for e in rep["data"]["employee"]["orders"]["edges"]] == [
        "ORDER#o2",
        "ORDER#o1",
    ]
    shipped = await gql(http, "{ orders(status: SHIPPED) { edges { node { id } } } }")
    assert {e["node"]["id"] for e in shipped["data"]["orders"]["edges"]} == {
        "ORDER#o1",
        "ORDER#o2",
        "ORDER#o6",
    }
    stale = await gql(
        http,
        'mutation { updateOrder(input: {id: "o1", total: 1, expectedVersion: 1}) { version } }',
    )
    assert stale["errors"][0]["extensions"]["code"] == "CONFLICT"


async def test_an_update_without_copies_is_one_update_item(http: httpx.AsyncClient) -> None:
    body = await gql(http, 'mutation { updateCustomer(input: {id: "c1", name: "Acme"}) { name } }')
    assert body["data"]["updateCustomer"] == {"name": "Acme"}
    assert body["extensions"]["dynamodb"]["operations"] == {"GetItem": 1, "UpdateItem": 1}


async def test_delete_removes_children_and_edges_in_both_directions(
    http: httpx.AsyncClient, dynamodb: EmbeddedDynamoDB
) -> None:
    body = await gql(http, 'mutation { deleteOrder(id: "o1") { id } }')
    assert body["data"]["deleteOrder"] == {"id": "ORDER#o1"}
    left = [
        i
        for i in await items(dynamodb)
        if "o1" in (i["PK"] + i["SK"] + i.get("GSI1SK", "")).replace("o10", "")
    ]
    assert left == []
    employee = await gql(http, '{ employee(id: "e4") { id } }')
    gone = await gql(http, 'mutation { deleteEmployee(id: "e4") { id } }')
    assert gone["data"]["deleteEmployee"] == {"id": "EMP#e4"} and employee["data"]["employee"]
    rest = await items(dynamodb)
    assert not [i for i in rest if "EMP#e4" in (i["PK"], i["SK"], i.get("GSI1SK"))]
    warehouse = await gql(http, '{ warehouse(id: "w1") { employees { edges { node { id } } } } }')
    assert warehouse["data"]["warehouse"]["employees"]["edges"] == [{"node": {"id": "EMP#e5"}}]


@pytest.mark.parametrize(
    ("mutation", "code"),
    [
        (
            'mutation { createOrderItem(input: {orderId: "nope", productId: "p1", quantity: 1, '
            "price: 1}) { id } }",
            "NOT_FOUND",
        ),
        (
            'mutation { addWorksAt(employeeId: "e1", warehouseId: "nope", since: "2026-01-01") '
            "{ cursor } }",
            "NOT_FOUND",
        ),
        (
            'mutation { addWorksAt(employeeId: "e4", warehouseId: "w2", since: "2026-01-01") '
            "{ cursor } }",
            "CONFLICT",
        ),
        ('mutation { addSoldBy(orderId: "o1", employeeId: "e1") { cursor } }', "CONFLICT"),
        ('mutation { updateOrder(input: {id: "nope", total: 1}) { id } }', "NOT_FOUND"),
        ('mutation { updateOrder(input: {id: "o1", total: null}) { id } }', "BAD_USER_INPUT"),
        ('mutation { deleteWarehouse(id: "nope") { id } }', "NOT_FOUND"),
        (
            'mutation { createEmployee(input: {id: "e1", name: "X", hireDate: "2026-01-01"}) '
            "{ id } }",
            "CONFLICT",
        ),
    ],
)
async def test_a_failed_mutation_leaves_the_table_as_it_was(
    http: httpx.AsyncClient, dynamodb: EmbeddedDynamoDB, mutation: str, code: str
) -> None:
    before = await items(dynamodb)
    body = await gql(http, mutation)
    assert body["errors"][0]["extensions"]["code"] == code, body
    assert await items(dynamodb) == before


async def test_edges_add_and_remove(http: httpx.AsyncClient) -> None:
    added = await gql(
        http,
        'mutation { addWorksAt(employeeId: "e1", warehouseId: "w3", '
        'since: "2026-02-02") { since node { name } } }',
    )
    assert added["data"]["addWorksAt"] == {"since": "2026-02-02", "node": {"name": "Singapore"}}
    where = await gql(http, '{ employee(id: "e1") { warehouse { id } } }')
    assert where["data"]["employee"]["warehouse"] == {"id": "WH#w3"}
    removed = await gql(http, 'mutation { removeWorksAt(employeeId: "e1", warehouseId: "w3") }')
    assert removed["data"]["removeWorksAt"] is True
    assert removed["extensions"]["dynamodb"]["operations"] == {"DeleteItem": 1}
    again = await gql(http, 'mutation { removeWorksAt(employeeId: "e1", warehouseId: "w3") }')
    assert again["data"]["removeWorksAt"] is False


async def test_a_wrongly_typed_attribute_fails_only_its_field(
    http: httpx.AsyncClient, dynamodb: EmbeddedDynamoDB, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        await client.update_item(
            dict(
                TableName="order-entry",
                Key={"PK": {"S": "EMP#e1"}, "SK": {"S": "EMP#e1"}},
                UpdateExpression="SET jobTitle = :n",
                ExpressionAttributeValues={":n": {"N": "42"}},
            )
        )
    body = await gql(http, '{ employee(id: "e1") { name jobTitle } }')
    assert body["data"]["employee"] == {"name": "Ana Lima", "jobTitle": None}
    [error] = body["errors"]
    assert error["path"] == ["employee", "jobTitle"]
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert "EMP#e1" in caplog.text and "'jobTitle'" in caplog.text


async def test_an_item_no_type_explains_is_skipped(
    http: httpx.AsyncClient, dynamodb: EmbeddedDynamoDB, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_client(Endpoint(dynamodb.url), lean=LEAN) as client:
        await client.put_item(
            dict(
                TableName="order-entry",
                Item={
                    "PK": {"S": "NOTE#1"},
                    "SK": {"S": "NOTE#1"},
                    "type": {"S": "Note"},
                    "GSI1PK": {"S": "REP#e1"},
                    "GSI1SK": {"S": "CUST#zz"},
                },
            )
        )
    body = await gql(http, '{ employee(id: "e1") { customers { edges { node { id } } } } }')
    assert "errors" not in body
    assert [e["node"]["id"] for e in body["data"]["employee"]["customers"]["edges"]] == [
        "CUST#c1",
        "CUST#c2",
    ]
    assert "NOTE#1" in caplog.text
