"""A deterministic random graph of the demo model, for ``edgewise seed --users/--groups/
--products`` and the benchmarks: sample data in the shape of ``sample.yaml``, which the engine
builds into items (keys, claims, counters) as the mutations build them."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from graph.table import Item, Table
from server.engine import engine_for

__all__ = ["AT", "build", "demo_items", "generate", "generated_items"]

AT = "2024-01-15T09:00:00.000Z"


def generate(
    users: int, groups: int, products: int, memberships: int, subscriptions: int, seed: int
) -> dict[str, Any]:
    """The same graph for the same arguments: each user joins ``memberships`` groups and each
    group subscribes to ``subscriptions`` products (capped by how many there are)."""
    rng = random.Random(seed)
    subscribed = [rng.sample(range(products), min(subscriptions, products)) for _ in range(groups)]
    joined = [rng.sample(range(groups), min(memberships, groups)) for _ in range(users)]
    nodes: list[dict[str, Any]] = [
        {"type": "Product", "id": f"p{i}", "name": f"Product {i}"} for i in range(products)
    ]
    edges: list[dict[str, Any]] = []
    for i, chosen in enumerate(subscribed):
        nodes.append({"type": "Group", "id": f"g{i}", "name": f"Group {i}"})
        for p in chosen:
            plan = rng.choice(["basic", "pro"])
            edges.append(
                {
                    "label": "SUBSCRIBES_TO",
                    "from": f"g{i}",
                    "to": f"p{p}",
                    "plan": plan,
                    "status": "ACTIVE",
                }
            )
    for i, chosen in enumerate(joined):
        email = f"u{i}@example.com"
        nodes.append({"type": "User", "id": f"u{i}", "name": f"User {i}", "email": email})
        for g in chosen:
            role = rng.choice(["OWNER", "MEMBER"])
            edges.append(
                {"label": "MEMBER_OF", "from": f"u{i}", "to": f"g{g}", "role": role, "since": AT}
            )
    return {"time": AT, "nodes": nodes, "edges": edges}


def build(sample: Mapping[str, Any]) -> list[Item]:
    """The demo model's items for sample data (``nodes`` and ``edges`` as in ``sample.yaml``),
    built as the mutations build them."""
    engine = engine_for("demo")
    return engine.items(Table(None, engine.table_name, layout=engine.layout), sample)


def demo_items() -> list[Item]:
    """The demo model's sample data (CONTRACT.md's demo graph) as items."""
    engine = engine_for("demo")
    return engine.sample_items(Table(None, engine.table_name, layout=engine.layout))


def generated_items(
    users: int, groups: int, products: int, memberships: int, subscriptions: int, seed: int
) -> list[Item]:
    """:func:`generate`'s graph as items (node counters included)."""
    return build(generate(users, groups, products, memberships, subscriptions, seed))
