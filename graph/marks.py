"""A node being deleted in steps (:mod:`graph.writes.deletes`) is *marked*: read as gone, and no
write that needs a live node may touch it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graph.dynamo.expressions import Expr
from model import Model

__all__ = ["is_marked", "unmarked"]


def is_marked(model: Model, item: Mapping[str, Any] | None) -> bool:
    """Whether ``item`` is a node being deleted (read as gone)."""
    deletions = model.deletions
    return deletions is not None and item is not None and bool(item.get(deletions.attribute))


def unmarked(model: Model, expr: Expr) -> str:
    """The condition (`` AND …``) that an item is not being deleted; empty without a
    ``deletions`` setting."""
    if model.deletions is None:
        return ""
    return f" AND attribute_not_exists({expr.name(model.deletions.attribute)})"
