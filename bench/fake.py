"""An in-memory stand-in for a DynamoDB data plane (``batch_get_item`` and ``query`` only),
answering in DynamoDB's wire shapes from items held in memory: it takes DynamoDB and
botocore out of a CPU measurement of the server."""

from __future__ import annotations

import re
from typing import Any

from bench.demo import DEMO_LAYOUT
from graph.keys import ItemKey
from graph.table import to_dynamo

from .memory import Memory

__all__ = ["FakeDynamoDB"]


class FakeDynamoDB:
    """Answers the calls :class:`graph.table.Table` makes for reads, from ``memory``."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.raw = {key: to_dynamo(item) for key, item in memory.items.items()}

    async def batch_get_item(self, params: dict[str, Any]) -> dict[str, Any]:
        responses = {}
        for table, request in params["RequestItems"].items():
            keys = (ItemKey(k["PK"]["S"], k["SK"]["S"]) for k in request["Keys"])
            responses[table] = [self.raw[k] for k in keys if k in self.raw]
        return {"Responses": responses, "UnprocessedKeys": {}}

    async def query(self, params: dict[str, Any]) -> dict[str, Any]:
        index = params.get("IndexName")
        values = params["ExpressionAttributeValues"]
        condition = params["KeyConditionExpression"]  # `pk = :a [AND begins_with(sk, :b)]`
        partition = values[re.search(r"= (:\w+)", condition)[1]]["S"]  # type: ignore[index]
        begins = re.search(r"begins_with\([^,]+, (:\w+)\)", condition)
        prefix = values[begins[1]]["S"] if begins else None
        start = params.get("ExclusiveStartKey")
        after = start[DEMO_LAYOUT.keys(index)[1]]["S"] if start else None
        limit = params.get("Limit")
        forward = params.get("ScanIndexForward", True)
        found = self.memory.query(partition, prefix, index=index, forward=forward, after=after)
        page = found if limit is None else found[:limit]
        response: dict[str, Any] = {
            "Items": [self.raw[ItemKey(i["PK"], i["SK"])] for i in page],
            "Count": len(page),
        }
        if limit is not None and len(found) > limit:
            last = page[-1]
            response["LastEvaluatedKey"] = {
                name: {"S": last[name]} for name in {"PK", "SK", *DEMO_LAYOUT.keys(index)}
            }
        return response
