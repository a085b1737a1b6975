"""The benchmark graph for one fan-out: a user in N groups, a product with N subscriber groups,
an organization with N members, and 2.5 x N users for ``nodes(ids:)``."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from graph.table import Item
from models.demo import generate as demo

__all__ = ["FANOUTS", "Dataset", "build"]

FANOUTS = (1, 10, 100)
AT = "2024-01-15T09:00:00.000Z"


@dataclass(frozen=True)
class Dataset:
    """Items of one fan-out (ids prefixed ``f<N>-``) and the ids the queries start from."""

    fanout: int
    items: list[Item]
    user: str  # in ``fanout`` groups (Q1, Q3)
    product: str  # subscribed to by every group (Q2, and Q3's hasAccess)
    organization: str  # with ``fanout`` members, each in up to 3 groups (Q4)
    users: list[str]  # ceil(2.5 x fanout) users, by global id (Q5)
    subscriptions: int = 3  # per group

    @property
    def tag(self) -> str:
        """What follows the fan-out in a query's label: ``x10`` for 10 subscriptions a group."""
        return "" if self.subscriptions == 3 else f"x{self.subscriptions}"


def build(fanout: int, seed: int = 7, subscriptions: int = 3) -> Dataset:
    """The same items for the same fan-out: ``fanout`` groups, each subscribed to the hot
    product and ``subscriptions - 1`` of ``max(3, fanout // 2)`` others; a user member of every
    group; an organization whose ``fanout`` members join up to 3 groups each. Counters
    included. Ids start ``f<fanout>-`` (``f<fanout>x<subscriptions>-`` for other than 3)."""
    rng = random.Random(seed * 1000 + fanout)
    p = f"f{fanout}-" if subscriptions == 3 else f"f{fanout}x{subscriptions}-"
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []

    def node(type_: str, id_: str, name: str) -> str:
        nodes.append({"type": type_, "id": p + id_, "name": name})
        return p + id_

    def edge(label: str, source: str, target: str, **fields: Any) -> None:
        edges.append({"label": label, "from": source, "to": target, **fields})

    hot = node("Product", "hot", "Hot product")
    count = max(3, fanout // 2, subscriptions)
    others = [node("Product", f"p{i}", f"Product {i}") for i in range(count)]
    groups = [node("Group", f"g{i}", f"Group {i}") for i in range(fanout)]
    for group in groups:
        for product in [hot, *rng.sample(others, subscriptions - 1)]:
            edge("SUBSCRIBES_TO", group, product, plan="pro", status="ACTIVE")
    user = node("User", "u", "The user")
    for group in groups:
        edge("MEMBER_OF", user, group, role="MEMBER", since=AT)
    org = node("Organization", "org", "The organization")
    members = [node("User", f"m{i}", f"Member {i}") for i in range(math.ceil(2.5 * fanout))]
    for member in members[:fanout]:
        edge("HAS_MEMBER", org, member, role="MEMBER", joinedAt=AT)
        for group in rng.sample(groups, min(3, fanout)):
            edge("MEMBER_OF", member, group, role="MEMBER", since=AT)
    items = demo.build({"time": AT, "nodes": nodes, "edges": edges})
    users = [f"USER#{m}" for m in members]
    return Dataset(fanout, items, user, hot, org, users, subscriptions)
