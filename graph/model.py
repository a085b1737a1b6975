"""The domain: node types, edge types, which direction is stored, and the access rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .keys import ItemKey, NodeKey, NodeType

__all__ = [
    "EDGE_TYPES",
    "HAS_MEMBER",
    "MEMBER_OF",
    "OFFICE_COUNTER",
    "OPENED",
    "SUBSCRIBES_TO",
    "EdgeType",
    "Edges",
    "counter",
    "counters_of",
    "edge_item",
    "email_item",
    "email_key",
    "grants_access",
    "node_item",
    "now_iso",
    "with_counters",
]


@dataclass(frozen=True)
class EdgeType:
    """An edge label, stored once in the source's partition (``PK`` source, ``SK`` target)."""

    label: str
    source: NodeType
    target: NodeType
    fields: tuple[str, ...]


MEMBER_OF = EdgeType("MEMBER_OF", NodeType.USER, NodeType.GROUP, ("role", "since"))
SUBSCRIBES_TO = EdgeType(
    "SUBSCRIBES_TO", NodeType.GROUP, NodeType.PRODUCT, ("plan", "status", "validUntil")
)
HAS_MEMBER = EdgeType("HAS_MEMBER", NodeType.ORG, NodeType.USER, ("role", "joinedAt"))
OPENED = EdgeType("OPENED", NodeType.USER, NodeType.TICKET, ())
EDGE_TYPES = {e.label: e for e in (MEMBER_OF, SUBSCRIBES_TO, HAS_MEMBER, OPENED)}


@dataclass(frozen=True)
class Edges:
    """The edges of one label at one node: outgoing from its partition, or incoming (``reverse``)
    from the ``inverted`` index. Each (source type, target type) pair has one label, so the far
    end's type prefix selects exactly these edges with a key condition."""

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

    @property
    def counter(self) -> str:
        """The attribute on ``node``'s item that counts these edges."""
        return counter(self.type, incoming=self.reverse)


def counter(edge: EdgeType, *, incoming: bool) -> str:
    """Edge counts live on the node items at both ends: ``n_MEMBER_OF`` on the user,
    ``n_MEMBER_OF_in`` on the group; updated in the same transaction as the edge."""
    return f"n_{edge.label}_in" if incoming else f"n_{edge.label}"


def counters_of(node_type: NodeType) -> list[str]:
    """Every counter attribute a node of this type can carry."""
    names = [counter(e, incoming=False) for e in EDGE_TYPES.values() if e.source is node_type]
    names += [counter(e, incoming=True) for e in EDGE_TYPES.values() if e.target is node_type]
    return names + ([OFFICE_COUNTER] if node_type is NodeType.ORG else [])


OFFICE_COUNTER = "n_OFFICE"


def email_key(email: str) -> ItemKey:
    """The uniqueness item of an email address, case-insensitive."""
    return ItemKey(f"EMAIL#{email.lower()}", f"EMAIL#{email.lower()}")


def email_item(email: str, user: NodeKey) -> dict[str, Any]:
    key = email_key(email)
    return {"PK": key.pk, "SK": key.sk, "type": "EMAIL", "user": str(user)}


def with_counters(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Set the edge counters of the node items in ``items`` from the edges in ``items``."""
    counts: dict[str, dict[str, int]] = {}
    for item in items:
        edge = EDGE_TYPES.get(item.get("edge", ""))
        if edge is not None:
            out = counts.setdefault(item["PK"], {})
            out[counter(edge, incoming=False)] = out.get(counter(edge, incoming=False), 0) + 1
            into = counts.setdefault(item["SK"], {})
            into[counter(edge, incoming=True)] = into.get(counter(edge, incoming=True), 0) + 1
    return [
        item | counts.get(item["PK"], {}) if item["PK"] == item["SK"] else item for item in items
    ]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def node_item(key: NodeKey, fields: Mapping[str, Any], at: str | None = None) -> dict[str, Any]:
    """A new node item (version 1); ``None`` fields are left out."""
    at = at or now_iso()
    item = {"PK": str(key), "SK": str(key), "type": key.type.value, "version": 1}
    item |= {"createdAt": at, "updatedAt": at}
    return item | {k: v for k, v in fields.items() if v is not None}


def edge_item(
    edge: EdgeType, source: NodeKey, target: NodeKey, fields: Mapping[str, Any]
) -> dict[str, Any]:
    """An edge item; ``None`` fields are left out."""
    if (source.type, target.type) != (edge.source, edge.target):
        raise ValueError(f"{edge.label} goes from {edge.source.value} to {edge.target.value}")
    key = ItemKey(str(source), str(target))
    item = {"PK": key.pk, "SK": key.sk, "edge": edge.label}
    return item | {k: v for k, v in fields.items() if v is not None}


def grants_access(subscription: Mapping[str, Any], now: datetime | None = None) -> bool:
    """An ACTIVE subscription with no end date, or one that ends in the future."""
    if subscription.get("status") != "ACTIVE":
        return False
    until = subscription.get("validUntil")
    if not until:
        return True
    end = datetime.fromisoformat(str(until))
    return (end if end.tzinfo else end.replace(tzinfo=UTC)) > (now or datetime.now(UTC))
