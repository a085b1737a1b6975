"""The CPU floor: graphql-core executing Q1's shape over the same data held in memory as dicts,
with trivial resolvers (plain lookups). ``is_async`` makes every resolver a coroutine, as a
server reading a database must have them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import ExecutionResult, GraphQLSchema, build_schema, graphql

from .memory import Memory

__all__ = ["Floor", "check_same"]

SDL = """
type Query { user(id: ID!): User }
type User { id: ID! name: String! groups(first: Int = 20): UserGroupConnection! }
type UserGroupConnection { edges: [UserGroupEdge!]! }
type UserGroupEdge { node: Group! }
type Group { id: ID! name: String! subscriptions(first: Int = 20): GroupSubscriptionConnection! }
type GroupSubscriptionConnection { edges: [GroupSubscriptionEdge!]! }
type GroupSubscriptionEdge { node: Product! }
type Product { id: ID! name: String! }
"""


class Floor:
    """``await Floor(memory).execute(query, variables)`` runs graphql-core over ``memory``."""

    def __init__(self, memory: Memory, is_async: bool = False) -> None:
        self.nodes: dict[str, dict[str, Any]] = {
            item["PK"]: {"id": item["PK"], "name": item.get("name")}
            for item in memory.items.values()
            if item["PK"] == item["SK"]
        }
        self.out: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for (index, partition), items in memory.partitions.items():
            if index is None:
                for item in items:
                    if item["SK"] in self.nodes and item["SK"] != partition:
                        prefix = item["SK"].split("#")[0] + "#"
                        self.out.setdefault((partition, prefix), []).append(self.nodes[item["SK"]])
        self.schema = self._schema(is_async)

    def _edges(self, prefix: str) -> Callable[..., Any]:
        def resolve(node: dict[str, Any], info: Any, first: int = 20) -> dict[str, Any]:
            return {"edges": [{"node": n} for n in self.out.get((node["id"], prefix), [])[:first]]}

        return resolve

    def _schema(self, is_async: bool) -> GraphQLSchema:
        schema = build_schema(SDL)
        resolvers: dict[tuple[str, str], Callable[..., Any]] = {
            ("Query", "user"): lambda root, info, id: self.nodes.get(f"USER#{id}"),
            ("User", "groups"): self._edges("GROUP#"),
            ("Group", "subscriptions"): self._edges("PRODUCT#"),
            ("UserGroupEdge", "node"): lambda edge, info: edge["node"],
            ("GroupSubscriptionEdge", "node"): lambda edge, info: edge["node"],
        }
        for type_name in ("User", "Group", "Product"):
            resolvers[(type_name, "name")] = lambda node, info: node["name"]
        for (type_name, field_name), resolve in resolvers.items():
            field = schema.get_type(type_name).fields[field_name]  # type: ignore[union-attr]
            field.resolve = _as_coroutine(resolve) if is_async else resolve
        return schema

    async def execute(self, query: str, variables: dict[str, Any]) -> ExecutionResult:
        return await graphql(self.schema, query, variable_values=variables)


def _as_coroutine(resolve: Callable[..., Any]) -> Callable[..., Any]:
    async def run(*args: Any, **kwargs: Any) -> Any:
        return resolve(*args, **kwargs)

    return run


def check_same(ours: dict[str, Any], floor: ExecutionResult) -> bool:
    """Whether the floor answered what Edgewise answered."""
    return floor.errors is None and floor.data == ours
