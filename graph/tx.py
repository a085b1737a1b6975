"""A builder for one TransactWriteItems: actions, their conditions, and what a failure means."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import EdgewiseError
from .keys import ItemKey
from .table import Failure, Table, to_dynamo

__all__ = ["LIVE", "MAX_ACTIONS", "Tx", "fail"]

MAX_ACTIONS = 100
# A node that exists and is not being deleted: the condition for anything touching it.
LIVE = "attribute_exists(PK) AND attribute_not_exists(deleting)"


def fail(error: EdgewiseError) -> Failure:
    """A failure that does not depend on the item as it was."""
    return lambda _old: error


class Tx:
    """Collect actions, then :meth:`commit` them atomically through ``table``."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.actions: list[dict[str, Any]] = []
        self.failures: list[Failure | None] = []

    def _add(
        self,
        kind: str,
        body: dict[str, Any],
        condition: str | None,
        names: Mapping[str, str] | None,
        values: Mapping[str, Any] | None,
        on_fail: Failure | None,
    ) -> None:
        body = {"TableName": self.table.name, **body}
        if condition:
            body["ConditionExpression"] = condition
            if on_fail is not None:
                body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        if names:
            body["ExpressionAttributeNames"] = dict(names)
        if values:
            body["ExpressionAttributeValues"] = to_dynamo(values)
        self.actions.append({kind: body})
        self.failures.append(on_fail)

    def put(
        self,
        item: Mapping[str, Any],
        condition: str | None = None,
        on_fail: Failure | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> None:
        self._add("Put", {"Item": to_dynamo(item)}, condition, None, values, on_fail)

    def update(
        self,
        key: ItemKey,
        expression: str,
        *,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
        condition: str | None = None,
        on_fail: Failure | None = None,
    ) -> None:
        body = {"Key": key.to_dynamo(), "UpdateExpression": expression}
        self._add("Update", body, condition, names, values, on_fail)

    def delete(
        self,
        key: ItemKey,
        condition: str | None = None,
        on_fail: Failure | None = None,
        *,
        names: Mapping[str, str] | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> None:
        self._add("Delete", {"Key": key.to_dynamo()}, condition, names, values, on_fail)

    def count(self, key: ItemKey, counter: str, delta: int, on_fail: Failure | None) -> None:
        """Add ``delta`` to a counter on a live node (the update is also its existence check)."""
        self.update(
            key,
            "ADD #c :d",
            names={"#c": counter},
            values={":d": delta},
            condition=LIVE if on_fail is not None else None,
            on_fail=on_fail,
        )

    async def commit(self) -> None:
        if len(self.actions) > MAX_ACTIONS:
            raise ValueError(f"a transaction holds at most {MAX_ACTIONS} actions")
        await self.table.transact_write(self.actions, self.failures)
