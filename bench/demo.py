"""The demo domain written by hand, for the bench's baselines only (the naive server and the
minimum-cost walkers, which must not share the engine they measure): node keys ``TYPE#id``, the
edge labels and the access rule of CONTRACT.md."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from graph.keys import ItemKey
from graph.table import Layout

__all__ = [
    "DEMO_LAYOUT",
    "HAS_MEMBER",
    "MEMBER_OF",
    "SUBSCRIBES_TO",
    "EdgeType",
    "Edges",
    "NodeKey",
    "NodeType",
    "grants_access",
    "parse_global_id",
    "parse_id",
]


# The demo's table: PK and SK, the inverted index (SK, PK) and gsi2 (GSI2PK, GSI2SK).
DEMO_LAYOUT = Layout("PK", "SK", {"inverted": ("SK", "PK"), "gsi2": ("GSI2PK", "GSI2SK")})


class NodeType(enum.Enum):
    """The kinds of node; the value is the key prefix."""

    USER = "USER"
    GROUP = "GROUP"
    PRODUCT = "PRODUCT"
    ORG = "ORG"


@dataclass(frozen=True, slots=True)
class NodeKey:
    """A node's identity: ``str(key)`` is the global id and the item's PK and SK."""

    type: NodeType
    id: str

    def __str__(self) -> str:
        return f"{self.type.value}#{self.id}"

    @property
    def item(self) -> ItemKey:
        return ItemKey(str(self), str(self))

    @classmethod
    def parse(cls, key: str) -> NodeKey:
        prefix, _, bare = key.partition("#")
        return cls(NodeType(prefix), bare)


def parse_global_id(raw: str) -> NodeKey | None:
    """``USER#alice``; another prefix or no ``#`` finds nothing."""
    prefix, sep, bare = raw.partition("#")
    if not sep or prefix not in NodeType.__members__:
        return None
    return NodeKey(NodeType(prefix), bare)


def parse_id(raw: str, node_type: NodeType) -> NodeKey | None:
    """A bare id, or a global id of ``node_type``."""
    if "#" not in raw:
        return NodeKey(node_type, raw)
    key = parse_global_id(raw)
    return key if key is not None and key.type is node_type else None


@dataclass(frozen=True)
class EdgeType:
    """An edge label, stored once in the source's partition (``PK`` source, ``SK`` target)."""

    label: str
    source: NodeType
    target: NodeType


MEMBER_OF = EdgeType("MEMBER_OF", NodeType.USER, NodeType.GROUP)
SUBSCRIBES_TO = EdgeType("SUBSCRIBES_TO", NodeType.GROUP, NodeType.PRODUCT)
HAS_MEMBER = EdgeType("HAS_MEMBER", NodeType.ORG, NodeType.USER)


@dataclass(frozen=True)
class Edges:
    """The edges of one label at one node: outgoing from its partition, or incoming
    (``reverse``) from the ``inverted`` index, selected by the far end's key prefix."""

    node: NodeKey
    type: EdgeType
    reverse: bool = False

    @property
    def index(self) -> str | None:
        return "inverted" if self.reverse else None

    @property
    def prefix(self) -> str:
        return f"{(self.type.source if self.reverse else self.type.target).value}#"

    def far_end(self, item: Mapping[str, Any]) -> NodeKey:
        return NodeKey.parse(item["PK"] if self.reverse else item["SK"])


def grants_access(subscription: Mapping[str, Any], now: datetime | None = None) -> bool:
    """An ACTIVE subscription with no end date, or one that ends in the future."""
    if subscription.get("status") != "ACTIVE":
        return False
    until = subscription.get("validUntil")
    if not until:
        return True
    end = datetime.fromisoformat(str(until))
    return (end if end.tzinfo else end.replace(tzinfo=UTC)) > (now or datetime.now(UTC))
