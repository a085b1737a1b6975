"""One write of a transaction, as the writers build it before sending it, and the sending of
actions as one TransactWriteItems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graph.dynamo.expressions import Expr
from graph.errors import BadUserInput
from graph.keys import ItemKey
from graph.table import MAX_ACTIONS, Failure, Item, Table, to_dynamo

__all__ = ["MAX_ACTIONS", "Action", "params", "transact"]


@dataclass
class Action:
    """One write of a transaction (or alone): Put, Update, Delete or ConditionCheck."""

    kind: str
    key: ItemKey
    body: dict[str, Any]
    expr: Expr = field(default_factory=Expr)
    condition: str | None = None
    on_fail: Failure | None = None
    leaves: Item | None = None  # the item as this write leaves it (a retry check)


def _value(v: Any) -> dict[str, Any]:
    value: dict[str, Any] = to_dynamo({"v": v})["v"]
    return value


def params(action: Action) -> dict[str, Any]:
    """An action's parameters of a single-item call (no ``TableName``)."""
    sent = dict(action.body)
    if action.condition:
        sent["ConditionExpression"] = action.condition
    sent |= action.expr.params(_value)
    return sent


async def transact(table: Table, actions: list[Action], token: str | None = None) -> None:
    """Commit ``actions`` as one TransactWriteItems (``token``: its ClientRequestToken);
    BAD_USER_INPUT when they are more than one transaction holds at ``table``'s endpoint."""
    if len(actions) > table.max_actions:
        raise BadUserInput(
            f"this write needs {len(actions)} items changed at once; "
            f"a transaction holds at most {table.max_actions}"
        )
    body = []
    for action in actions:
        sent = params(action) | {"TableName": table.name}
        if action.condition and action.on_fail is not None:
            sent["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        body.append({action.kind: sent})
    await table.transact_write(body, [a.on_fail for a in actions], token)
