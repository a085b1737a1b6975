"""The orders model (seed 003): lowercase keys, no type attribute, snake_case attributes stored
with the key fields; an order and its items cost one Query of the partition."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import pytest

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from tests.helpers import gql

Serve = Callable[[str], Awaitable[httpx.AsyncClient]]

ORDER = """query($id: ID!, $first: Int) { order(id: $id) { id userId total status
    items(first: $first) { totalCount pageInfo { hasNextPage }
    edges { node { id orderId productId quantity price order { id } } } } } }"""


@pytest.fixture
async def http(model_http: Serve) -> httpx.AsyncClient:
    return await model_http("orders")


async def test_an_order_with_its_items_is_one_query_in_one_round(http: httpx.AsyncClient) -> None:
    body = await gql(http, ORDER.replace("totalCount ", ""), {"id": "xyz-789"})
    order = body["data"]["order"]
    assert (order["id"], order["userId"], order["total"], order["status"]) == (
        "order#xyz-789",
        "u1",
        45.5,
        "pending",
    )
    rows = [
        (n["orderId"], n["productId"], n["quantity"], n["price"], n["order"]["id"])
        for n in (e["node"] for e in order["items"]["edges"])
    ]
    assert rows == [
        ("xyz-789", "prod-widget", 2, 10.0, "order#xyz-789"),
        ("xyz-789", "prod-gadget", 1, 25.5, "order#xyz-789"),
    ]
    trace = body["extensions"]["dynamodb"]
    assert (trace["operations"], trace["rounds"]) == ({"Query": 1}, 1)


async def test_the_one_query_also_serves_a_first_page_and_a_missing_order(
    http: httpx.AsyncClient,
) -> None:
    paged = await gql(http, ORDER.replace("totalCount ", ""), {"id": "xyz-789", "first": 1})
    items = paged["data"]["order"]["items"]
    assert len(items["edges"]) == 1 and items["pageInfo"]["hasNextPage"] is True
    assert paged["extensions"]["dynamodb"]["operations"] == {"Query": 1}
    missing = await gql(http, ORDER.replace("totalCount ", ""), {"id": "nope"})
    assert missing["data"]["order"] is None
    assert missing["extensions"]["dynamodb"]["operations"] == {"Query": 1}
    empty = await gql(http, ORDER, {"id": "empty-1"})
    assert empty["data"]["order"]["items"]["edges"] == []
    assert empty["data"]["order"]["items"]["totalCount"] == 0


async def test_an_order_alone_is_one_batch_get(http: httpx.AsyncClient) -> None:
    body = await gql(
        http,
        '{ order(id: "order#abc-123") { total } orderItem(orderId: '
        '"abc-123", id: "item-1") { price } }',
    )
    assert body["data"] == {"order": {"total": 12.0}, "orderItem": {"price": 12.0}}
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}


async def test_items_are_stored_as_the_seed_stores_them(
    http: httpx.AsyncClient, dynamodb: EmbeddedDynamoDB
) -> None:
    created = await gql(
        http,
        'mutation { createOrderItem(input: {orderId: "abc-123", '
        'id: "item-9", productId: "prod-x", quantity: 3, price: 1.5}) '
        "{ id order { total } } }",
    )
    assert created["data"]["createOrderItem"]["order"] == {"total": 12.0}
    async with open_client(Endpoint(dynamodb.url)) as client:
        response = await client.get_item(
            dict(
                TableName="app-table",
                Key={"pk": {"S": "order#abc-123"}, "sk": {"S": "item#item-9"}},
            )
        )
    assert response["Item"] == {
        "pk": {"S": "order#abc-123"},
        "sk": {"S": "item#item-9"},
        "id": {"S": "item-9"},
        "order_id": {"S": "abc-123"},
        "product_id": {"S": "prod-x"},
        "quantity": {"N": "3"},
        "price": {"N": "1.5"},
    }


async def test_deleting_an_order_removes_its_items(http: httpx.AsyncClient) -> None:
    body = await gql(http, 'mutation { deleteOrder(id: "xyz-789") { id } }')
    assert body["data"]["deleteOrder"] == {"id": "order#xyz-789"}
    assert body["extensions"]["dynamodb"]["operations"]["TransactWriteItems"] == 1
    gone = await gql(
        http,
        '{ orderItem(orderId: "xyz-789", id: "item-1") { id } '
        'user(id: "u1") { posts { totalCount } } }',
    )
    assert gone["data"] == {"orderItem": None, "user": {"posts": {"totalCount": 2}}}


async def test_posts_of_a_user_and_their_user(http: httpx.AsyncClient) -> None:
    body = await gql(
        http, '{ user(id: "u1") { name posts { edges { node { title user { name } } } } } }'
    )
    posts = body["data"]["user"]["posts"]["edges"]
    assert [p["node"]["user"]["name"] for p in posts] == ["Alice", "Alice"]
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 1}
