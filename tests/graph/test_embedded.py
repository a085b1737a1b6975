"""The embedded DynamoDB (moto in a child process) keeps DynamoDB's isolation of concurrent
transactions: moto's own threaded server undoes a cancelled transaction by putting back a copy
of the whole table, losing the writes other requests made meanwhile."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from graph.dynamo.client import Endpoint, open_client
from graph.dynamo.embedded import EmbeddedDynamoDB
from graph.errors import EdgewiseError

CLIENTS, ROUNDS, WIDE = 8, 10, 7


@pytest.fixture(scope="module")
def embedded() -> Any:
    """The embedded DynamoDB itself (whatever engine the ``dynamodb`` fixture is)."""
    with EmbeddedDynamoDB() as server:
        yield server


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
    embedded: EmbeddedDynamoDB,
) -> None:
    """Clients count on one item, each count followed by a transaction over several items that
    a failed condition cancels: every count answered as done stays counted."""
    embedded.reset()
    async with open_client(Endpoint(embedded.url)) as client:
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


def resident(pid: int) -> int:
    """A process's resident memory, in kB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
async def test_its_memory_does_not_grow_with_each_transaction(
    embedded: EmbeddedDynamoDB,
) -> None:
    """moto keeps every object it makes for its dashboard, the copies of the table each action
    of a transaction takes included; the embedded DynamoDB keeps none."""
    embedded.reset()
    assert embedded.process is not None
    async with open_client(Endpoint(embedded.url)) as client:
        await client.control.create_table(
            {
                "TableName": "t",
                "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            }
        )
        await client.batch_write_item(
            {"RequestItems": {"t": [{"PutRequest": {"Item": {"k": {"S": "0"}}}}]}}
        )
        for chunk in range(0, 400, 25):
            puts = [
                {"PutRequest": {"Item": {"k": {"S": f"f{i}"}, "x": {"S": "x" * 200}}}}
                for i in range(chunk, chunk + 25)
            ]
            await client.batch_write_item({"RequestItems": {"t": puts}})
        one = {":one": {"N": "1"}}

        async def transactions(n: int) -> None:
            for _ in range(n):
                wide = [update(f"f{j}", "ADD v :one", one) for j in range(10)]
                await client.transact_write_items({"TransactItems": wide})

        await transactions(5)  # what moto allocates once
        before = resident(embedded.process.pid)
        await transactions(30)  # 300 copies of a 400-item table, for moto's dashboard (70 MB)
        grown = resident(embedded.process.pid) - before
    assert grown < 20_000, f"{grown} kB more"
