"""The benchmark graph for one fan-out: a user in N groups, a product with N subscriber groups,
an organization with N members, and 2.5 x N users for ``nodes(ids:)``."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from graph.keys import NodeKey, NodeType
from graph.model import HAS_MEMBER, MEMBER_OF, SUBSCRIBES_TO, edge_item, node_item, with_counters
from graph.table import Item

__all__ = ["FANOUTS", "Dataset", "build"]

FANOUTS = (1, 10, 100)
AT = "2024-01-15T09:00:00.000Z"
USER, GROUP, PRODUCT, ORG = NodeType.USER, NodeType.GROUP, NodeType.PRODUCT, NodeType.ORG


@dataclass(frozen=True)
class Dataset:
    """Items of one fan-out (ids prefixed ``f<N>-``) and the ids the queries start from."""

    fanout: int
    items: list[Item]
    user: str  # in ``fanout`` groups (Q1, Q3)
    product: str  # subscribed to by every group (Q2, and Q3's hasAccess)
    organization: str  # with ``fanout`` members, each in up to 3 groups (Q4)
    users: list[str]  # ceil(2.5 x fanout) users, by global id (Q5)


def build(fanout: int, seed: int = 7) -> Dataset:
    """The same items for the same fan-out: ``fanout`` groups, each subscribed to the hot
    product and 2 of ``max(3, fanout // 2)`` others; a user member of every group; an
    organization whose ``fanout`` members join up to 3 groups each. Counters included."""
    rng = random.Random(seed * 1000 + fanout)
    p = f"f{fanout}-"
    items: list[Item] = []

    def node(type_: NodeType, id_: str, name: str) -> NodeKey:
        key = NodeKey(type_, p + id_)
        items.append(node_item(key, {"name": name}, AT))
        return key

    hot = node(PRODUCT, "hot", "Hot product")
    others = [node(PRODUCT, f"p{i}", f"Product {i}") for i in range(max(3, fanout // 2))]
    groups = [node(GROUP, f"g{i}", f"Group {i}") for i in range(fanout)]
    for group in groups:
        for product in [hot, *rng.sample(others, 2)]:
            subscription = {"plan": "pro", "status": "ACTIVE"}
            items.append(edge_item(SUBSCRIBES_TO, group, product, subscription))
    user = node(USER, "u", "The user")
    for group in groups:
        items.append(edge_item(MEMBER_OF, user, group, {"role": "MEMBER", "since": AT}))
    org = node(ORG, "org", "The organization")
    members = [node(USER, f"m{i}", f"Member {i}") for i in range(math.ceil(2.5 * fanout))]
    for member in members[:fanout]:
        items.append(edge_item(HAS_MEMBER, org, member, {"role": "MEMBER", "joinedAt": AT}))
        for group in rng.sample(groups, min(3, fanout)):
            items.append(edge_item(MEMBER_OF, member, group, {"role": "MEMBER", "since": AT}))
    return Dataset(
        fanout,
        with_counters(items),
        user.id,
        hot.id,
        org.id,
        [str(m) for m in members],
    )
