"""The benchmarked GraphQL queries (Q1-Q5) for one dataset, with their minimum cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import minimum
from .data import Dataset
from .demo import HAS_MEMBER, MEMBER_OF, SUBSCRIBES_TO, NodeKey, NodeType
from .memory import Memory

__all__ = ["NAMES", "BenchQuery", "bench_queries"]

Q1 = """query Q1($id: ID!) { user(id: $id) { groups(first: 100) { edges { node {
  name subscriptions(first: 20) { edges { node { name } } } } } } } }"""
Q2 = """query Q2($id: ID!) { product(id: $id) { subscribers(first: 100) { edges { node {
  name members(first: 100) { edges { node { name } } } } } } } }"""
Q3 = """query Q3($id: ID!, $product: ID!) { user(id: $id) {
  products { product { name } via { name } } hasAccess(productId: $product) } }"""
Q4 = """query Q4($id: ID!) { organization(id: $id) { members(first: 100) { edges { node {
  name groups(first: 100) { edges { node { name } } } } } } } }"""
Q5 = """query Q5($ids: [ID!]!) { nodes(ids: $ids) { id ... on User { name } } }"""

NAMES = {
    "Q1": "user → groups → subscriptions → products",
    "Q2": "product → subscribers → members (reverse)",
    "Q3": "user { products { product via } hasAccess }",
    "Q4": "organization → members → groups",
    "Q5": "nodes(ids: 2.5 x fan-out)",
}


@dataclass(frozen=True)
class BenchQuery:
    name: str
    fanout: int
    text: str
    variables: dict[str, Any]
    minimum: minimum.Cost
    tag: str = ""  # the dataset's (Dataset.tag)

    @property
    def label(self) -> str:
        return f"{self.name}@{self.fanout}{self.tag}"


def bench_queries(data: Dataset, memory: Memory) -> list[BenchQuery]:
    """Q1-Q5 over ``data``; the minimum is computed by walking ``memory``."""
    user = NodeKey(NodeType.USER, data.user)
    product = NodeKey(NodeType.PRODUCT, data.product)
    org = NodeKey(NodeType.ORG, data.organization)
    cost = {
        "Q1": minimum.chain(memory, user, [(MEMBER_OF, False, 100), (SUBSCRIBES_TO, False, 20)]),
        "Q2": minimum.chain(memory, product, [(SUBSCRIBES_TO, True, 100), (MEMBER_OF, True, 100)]),
        "Q3": minimum.products_and_access(memory, user, product),
        "Q4": minimum.chain(memory, org, [(HAS_MEMBER, False, 100), (MEMBER_OF, False, 100)]),
        "Q5": minimum.nodes(memory, data.users),
    }
    variables: dict[str, dict[str, Any]] = {
        "Q1": {"id": data.user},
        "Q2": {"id": data.product},
        "Q3": {"id": data.user, "product": data.product},
        "Q4": {"id": data.organization},
        "Q5": {"ids": data.users},
    }
    texts = {"Q1": Q1, "Q2": Q2, "Q3": Q3, "Q4": Q4, "Q5": Q5}
    return [
        BenchQuery(name, data.fanout, texts[name], variables[name], cost[name], data.tag)
        for name in NAMES
    ]
