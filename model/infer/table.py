"""What ``infer`` is given and gives: DescribeTable's answer as :class:`TableInfo`, the
:class:`Draft`, and :class:`InferError`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Draft", "InferError", "TableInfo", "table_info"]


class InferError(Exception):
    """A table no model can be drafted from (empty, keys that are not strings …)."""


@dataclass(frozen=True)
class TableInfo:
    """What DescribeTable says: key attributes and their types, global secondary indexes."""

    name: str
    pk: str
    sk: str | None
    key_types: Mapping[str, str]
    indexes: Mapping[str, tuple[str, str | None]]
    projections: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    item_count: int | None = None
    local: frozenset[str] = frozenset()  # the local secondary indexes among ``indexes``


def table_info(described: Mapping[str, Any]) -> TableInfo:
    """A :class:`TableInfo` from DescribeTable's ``Table``."""

    def keys(schema: Sequence[Mapping[str, str]]) -> tuple[str, str | None]:
        hash_key = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
        range_key = next((k["AttributeName"] for k in schema if k["KeyType"] == "RANGE"), None)
        return hash_key, range_key

    pk, sk = keys(described["KeySchema"])
    types = {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]}
    indexes: dict[str, tuple[str, str | None]] = {}
    projections: dict[str, str | tuple[str, ...]] = {}
    local = set()
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for index in described.get(kind) or []:
            name = index["IndexName"]
            indexes[name] = keys(index["KeySchema"])
            projection = index.get("Projection", {})
            projections[name] = projection.get("ProjectionType", "ALL")
            if projections[name] == "INCLUDE":
                projections[name] = tuple(projection.get("NonKeyAttributes", ()))
            if kind == "LocalSecondaryIndexes":
                local.add(name)
    return TableInfo(
        described["TableName"],
        pk,
        sk,
        types,
        indexes,
        projections,
        described.get("ItemCount"),
        frozenset(local),
    )


@dataclass(frozen=True)
class Draft:
    """The drafted model file and what the draft could not explain (for stderr)."""

    text: str
    notes: tuple[str, ...]
