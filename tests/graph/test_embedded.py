"""The embedded DynamoDB (moto in a child process) keeps DynamoDB's isolation of concurrent
transactions: moto's own threaded server undoes a cancelled transaction by putting back a copy
of the whole table, losing the writes other requests made meanwhile."""

from __future__ import annotations

import asyncio
from typing import Any

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.errors import EdgewiseError

CLIENTS, ROUNDS, WIDE = 8, 10, 7


def update(key: str, expression: str, values: dict[str, Any]) -> dict[str, Any]:
    return {
        "Update": {
            "TableName": "t",
            "Key": {"k": {"S": key}},
            "UpdateExpression": expression,
            "ExpressionAttributeValues": values,
        }
    }


async def test_a_cancelled_transaction_undoes_no_write_of_another_request(
    dynamodb: EmbeddedDynamoDB,
) -> None:
    """Clients count on one item, each count followed by a transaction over several items that
    a failed condition cancels: every count answered as done stays counted."""
    dynamodb.reset()
    async with open_client(Endpoint(dynamodb.url)) as client:
        await client.control.create_table(
            {
                "TableName": "t",
                "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            }
        )
        for i in range(CLIENTS * WIDE):
            await client.put_item({"TableName": "t", "Item": {"k": {"S": f"f{i}"}}})
        one = {":one": {"N": "1"}}
        cancelled = {
            "ConditionCheck": {
                "TableName": "t",
                "Key": {"k": {"S": "missing"}},
                "ConditionExpression": "attribute_exists(k)",
            }
        }

        async def count(i: int) -> int:
            counted = 0
            for _ in range(ROUNDS):
                await client.transact_write_items(
                    {"TransactItems": [update("n", "ADD v :one", one)]}
                )
                counted += 1
                wide = [update(f"f{j}", "ADD v :one", one) for j in range(i * WIDE, (i + 1) * WIDE)]
                try:
                    await client.transact_write_items({"TransactItems": [*wide, cancelled]})
                except EdgewiseError as exc:
                    assert exc.code == "TransactionCanceledException"
            return counted

        counted = sum(await asyncio.gather(*(count(i) for i in range(CLIENTS))))
        item = await client.get_item(
            {"TableName": "t", "Key": {"k": {"S": "n"}}, "ConsistentRead": True}
        )
    assert counted == CLIENTS * ROUNDS
    assert int(item["Item"]["v"]["N"]) == counted
