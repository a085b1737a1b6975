"""The demo graph of CONTRACT.md and a deterministic generator of larger graphs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from .keys import NodeKey, NodeType
from .model import (
    HAS_MEMBER,
    MEMBER_OF,
    SUBSCRIBES_TO,
    counter,
    edge_item,
    email_item,
    node_item,
    with_counters,
)

__all__ = ["demo_items", "generate"]

AT = "2024-01-15T09:00:00.000Z"

USER, GROUP, PRODUCT, ORG = NodeType.USER, NodeType.GROUP, NodeType.PRODUCT, NodeType.ORG


def _node(type_: NodeType, id_: str, **fields: Any) -> dict[str, Any]:
    return node_item(NodeKey(type_, id_), fields, AT)


def demo_items() -> list[dict[str, Any]]:
    """Exactly the demo data of CONTRACT.md."""

    def k(t: NodeType, i: str) -> NodeKey:
        return NodeKey(t, i)

    member = {"role": "MEMBER", "since": AT}
    active = {"plan": "standard", "status": "ACTIVE"}
    return with_counters(
        [
            _node(USER, "alice", name="Alice", email="alice@example.com"),
            _node(USER, "bob", name="Bob", email="bob@example.com"),
            _node(GROUP, "group1", name="Group 1", description="Alice and Bob"),
            _node(GROUP, "group2", name="Group 2", description="Alice only"),
            _node(PRODUCT, "prod1", name="Product 1"),
            _node(PRODUCT, "prod2", name="Product 2"),
            _node(PRODUCT, "prod3", name="Product 3"),
            email_item("alice@example.com", k(USER, "alice")),
            email_item("bob@example.com", k(USER, "bob")),
            edge_item(MEMBER_OF, k(USER, "alice"), k(GROUP, "group1"), {**member, "role": "OWNER"}),
            edge_item(MEMBER_OF, k(USER, "alice"), k(GROUP, "group2"), {**member, "role": "OWNER"}),
            edge_item(MEMBER_OF, k(USER, "bob"), k(GROUP, "group1"), member),
            edge_item(SUBSCRIBES_TO, k(GROUP, "group1"), k(PRODUCT, "prod1"), active),
            edge_item(SUBSCRIBES_TO, k(GROUP, "group1"), k(PRODUCT, "prod2"), active),
            edge_item(SUBSCRIBES_TO, k(GROUP, "group2"), k(PRODUCT, "prod2"), active),
            edge_item(SUBSCRIBES_TO, k(GROUP, "group2"), k(PRODUCT, "prod3"), active),
            _node(ORG, "microsoft", name="Microsoft", plan="Enterprise"),
            _node(ORG, "amazon", name="Amazon", plan="Pro"),
            _node(USER, "billgates", name="Bill Gates"),
            _node(USER, "satyanadella", name="Satya Nadella"),
            _node(USER, "jeffbezos", name="Jeff Bezos"),
            edge_item(
                HAS_MEMBER,
                k(ORG, "microsoft"),
                k(USER, "billgates"),
                {"role": "MEMBER", "joinedAt": AT},
            ),
            edge_item(
                HAS_MEMBER,
                k(ORG, "microsoft"),
                k(USER, "satyanadella"),
                {"role": "ADMIN", "joinedAt": AT},
            ),
            edge_item(
                HAS_MEMBER,
                k(ORG, "amazon"),
                k(USER, "jeffbezos"),
                {"role": "ADMIN", "joinedAt": AT},
            ),
        ]
    )


def generate(
    users: int, groups: int, products: int, memberships: int, subscriptions: int, seed: int
) -> Iterator[dict[str, Any]]:
    """A random graph, the same for the same arguments: each user joins ``memberships`` groups
    and each group subscribes to ``subscriptions`` products (capped by how many there are).
    Node items carry their edge counters."""
    rng = random.Random(seed)
    subscribed = [rng.sample(range(products), min(subscriptions, products)) for _ in range(groups)]
    joined = [rng.sample(range(groups), min(memberships, groups)) for _ in range(users)]
    subscribers = [0] * products
    for chosen in subscribed:
        for p in chosen:
            subscribers[p] += 1
    members = [0] * groups
    for chosen in joined:
        for g in chosen:
            members[g] += 1
    sub_in, mem_out = counter(SUBSCRIBES_TO, incoming=True), counter(MEMBER_OF, incoming=False)
    sub_out, mem_in = counter(SUBSCRIBES_TO, incoming=False), counter(MEMBER_OF, incoming=True)
    for i in range(products):
        yield _node(PRODUCT, f"p{i}", name=f"Product {i}", **{sub_in: subscribers[i]})
    for i, chosen in enumerate(subscribed):
        group = NodeKey(GROUP, f"g{i}")
        yield _node(
            GROUP, group.id, name=f"Group {i}", **{sub_out: len(chosen), mem_in: members[i]}
        )
        for p in chosen:
            fields = {"plan": rng.choice(["basic", "pro"]), "status": "ACTIVE"}
            yield edge_item(SUBSCRIBES_TO, group, NodeKey(PRODUCT, f"p{p}"), fields)
    for i, chosen in enumerate(joined):
        user = NodeKey(USER, f"u{i}")
        email = f"u{i}@example.com"
        yield _node(USER, user.id, name=f"User {i}", email=email, **{mem_out: len(chosen)})
        yield email_item(email, user)
        for g in chosen:
            fields = {"role": rng.choice(["OWNER", "MEMBER"]), "since": AT}
            yield edge_item(MEMBER_OF, user, NodeKey(GROUP, f"g{g}"), fields)
