"""The CPU floor: graphql-core executing Q1's shape over the same data held in memory as dicts,
with trivial resolvers (plain lookups). ``is_async`` makes every resolver a coroutine, as a
server reading a database must have them.

Measured carefully (:func:`shallow`, :func:`sweep`): on CPython 3.11 a call's cost depends on
how deep the caller's stack is. The interpreter's frame stack grows in 16 KiB chunks, a chunk is
unmapped as soon as the stack falls back below it, so recursion that keeps crossing a chunk
boundary maps and unmaps memory each time (python/cpython#142183, mended in later releases).
Each new chunk costs minor page faults, which is how the effect shows: the floor runs in a
fresh thread, under the number of padding frames that gives the fewest faults, and reports
them."""

from __future__ import annotations

import resource
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import ExecutionResult, GraphQLSchema, build_schema, graphql, graphql_sync

from .memory import Memory

__all__ = ["Floor", "Shallow", "check_same", "faults", "fewest_faults", "shallow", "sweep"]

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

    def execute_sync(self, query: str, variables: dict[str, Any]) -> ExecutionResult:
        return graphql_sync(self.schema, query, variable_values=variables)


def _as_coroutine(resolve: Callable[..., Any]) -> Callable[..., Any]:
    async def run(*args: Any, **kwargs: Any) -> Any:
        return resolve(*args, **kwargs)

    return run


def check_same(ours: dict[str, Any], floor: ExecutionResult) -> bool:
    """Whether the floor answered what Edgewise answered."""
    return floor.errors is None and floor.data == ours


def faults(who: int = resource.RUSAGE_SELF) -> int:
    """Minor page faults so far (of the process, or of the calling thread)."""
    return resource.getrusage(who).ru_minflt


@dataclass(frozen=True)
class Shallow:
    """The floor's executions in fresh threads under ``padding`` extra frames."""

    padding: int
    seconds: list[float]  # the thread's CPU per execution
    faults: list[int]  # the thread's minor page faults per execution

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def median_faults(self) -> float:
        return statistics.median(self.faults)


def _padded(depth: int, run: Callable[[], Any]) -> Any:
    return _padded(depth - 1, run) if depth > 0 else run()


def shallow(
    floor: Floor, query: str, variables: dict[str, Any], padding: int = 0, runs: int = 1
) -> Shallow:
    """``runs`` executions of ``graphql_sync`` in a fresh thread, ``padding`` frames deep, each
    timed by the thread's own CPU clock and page-fault count."""
    seconds: list[float] = []
    counted: list[int] = []
    failed: list[BaseException] = []

    def one() -> None:
        for _ in range(runs):
            before, started = faults(resource.RUSAGE_THREAD), time.thread_time()
            result = floor.execute_sync(query, variables)
            seconds.append(time.thread_time() - started)
            counted.append(faults(resource.RUSAGE_THREAD) - before)
            if result.errors:
                raise RuntimeError(f"the floor failed: {result.errors}")

    def target() -> None:
        try:
            _padded(padding, one)
        except BaseException as exc:  # reported in the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=target, name="floor")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return Shallow(padding, seconds, counted)


def sweep(
    floor: Floor, query: str, variables: dict[str, Any], paddings: range, runs: int = 3
) -> list[Shallow]:
    """The floor under each padding (one 16 KiB chunk of the frame stack is about 140 of
    ``_padded``'s frames): how much the depth of the caller's stack moves it."""
    return [shallow(floor, query, variables, padding, runs) for padding in paddings]


def fewest_faults(timings: list[Shallow]) -> Shallow:
    """The padding with the fewest page faults, the cheaper of equals."""
    return min(timings, key=lambda t: (t.median_faults, t.median))
