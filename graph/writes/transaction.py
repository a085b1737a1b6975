"""One write of a transaction, as the writers build it before sending it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graph.dynamo.expressions import Expr
from graph.keys import ItemKey
from graph.table import Failure, Item

__all__ = ["MAX_ACTIONS", "Action"]

MAX_ACTIONS = 100  # TransactWriteItems holds at most this many


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
