"""The naive baseline's own Query helpers (``bench/naive.py``: one Query page, every page of a
partition), over the recording fake client of the table's tests."""

from __future__ import annotations

from bench.naive import query_all, query_page
from graph.keys import ItemKey
from tests.graph.test_table import NAME, FakeClient, make_table, raw_item
from tests.helpers import DEMO_LAYOUT


async def test_query_page_on_the_table() -> None:
    client = FakeClient()
    items, last = await query_page(make_table(client), "USER#alice", "GROUP#")
    (params,) = client.ops("query")
    assert params == {
        "TableName": NAME,
        "KeyConditionExpression": "#h = :h AND begins_with(#r, :r)",
        "ExpressionAttributeNames": {"#h": "PK", "#r": "SK"},
        "ExpressionAttributeValues": {":h": {"S": "USER#alice"}, ":r": {"S": "GROUP#"}},
        "ReturnConsumedCapacity": "TOTAL",
    }
    assert (items, last) == ([], None)


async def test_query_page_on_the_inverted_index_from_a_key() -> None:
    client = FakeClient()
    after = DEMO_LAYOUT.key(ItemKey("USER#alice", "GROUP#group1"))
    await query_page(
        make_table(client), "GROUP#group1", "USER#", index="inverted", limit=11, after=after
    )
    (params,) = client.ops("query")
    assert params["IndexName"] == "inverted"
    assert params["ExpressionAttributeNames"] == {"#h": "SK", "#r": "PK"}
    assert params["Limit"] == 11
    assert params["ExclusiveStartKey"] == after


async def test_query_page_without_a_prefix_reads_the_whole_partition() -> None:
    client = FakeClient()
    await query_page(make_table(client), "USER#alice", None)
    (params,) = client.ops("query")
    assert params["KeyConditionExpression"] == "#h = :h"
    assert params["ExpressionAttributeValues"] == {":h": {"S": "USER#alice"}}


async def test_query_all_follows_pages() -> None:
    client = FakeClient()
    k1, k2, k3 = (ItemKey("USER#alice", f"GROUP#g{i}") for i in range(3))
    client.script["query"] = [
        {"Items": [raw_item(k1), raw_item(k2)], "LastEvaluatedKey": DEMO_LAYOUT.key(k2)},
        {"Items": [raw_item(k3)]},
    ]
    items = await query_all(make_table(client), "USER#alice", "GROUP#", index="inverted")
    assert [item["SK"] for item in items] == [k1.sk, k2.sk, k3.sk]
    first, second = client.ops("query")
    assert "ExclusiveStartKey" not in first
    assert second["ExclusiveStartKey"] == DEMO_LAYOUT.key(k2)
    assert first["IndexName"] == second["IndexName"] == "inverted"
