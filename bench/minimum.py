"""The fewest DynamoDB requests and rounds a query can cost, from the performance model.

An ideal executor reads in waves: wave ``w + 1`` may read whatever the items of waves ``<= w``
name. Each wave costs ``ceil(distinct keys / 100)`` BatchGetItem calls plus one Query per
distinct partition page, and the request takes as many rounds as it has non-empty waves
(``hops + 1`` for a chain). A key is not read again once read, nor when a Query of the same or an
earlier wave returns its item. The walkers below follow each benchmark query over the data in
memory and put every read in the earliest wave that knows its key.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from graph.keys import ItemKey
from graph.table import GET_BATCH, Item

from .demo import MEMBER_OF, SUBSCRIBES_TO, Edges, EdgeType, NodeKey, grants_access
from .memory import Memory

__all__ = ["Cost", "Plan", "chain", "nodes", "products_and_access"]

QueryPage = tuple[str | None, str, str, int | None]  # index, partition, prefix, limit


@dataclass(frozen=True)
class Cost:
    requests: int
    rounds: int
    operations: dict[str, int]
    waves: tuple[int, ...] = ()  # calls in each wave (the minimum's only)

    def wave_time(self, latency: float, in_flight: int) -> float:
        """Seconds the waves take at ``latency`` per call with at most ``in_flight`` at once."""
        return sum(math.ceil(calls / in_flight) for calls in self.waves) * latency


@dataclass
class Plan:
    """The reads of an ideal execution, wave by wave."""

    memory: Memory
    gets: list[set[ItemKey]] = field(default_factory=list)
    queries: list[dict[QueryPage, list[Item]]] = field(default_factory=list)

    def _wave(self, wave: int) -> None:
        while len(self.gets) <= wave:
            self.gets.append(set())
            self.queries.append({})

    def get(self, wave: int, key: ItemKey) -> Item | None:
        self._wave(wave)
        self.gets[wave].add(key)
        return self.memory.get(key)

    def edges(self, wave: int, edges: Edges, limit: int | None) -> list[Item]:
        """One page of ``edges`` (``limit`` items; a page of ``first`` reads ``first + 1``)."""
        self._wave(wave)
        page = (edges.index, str(edges.node), edges.prefix, limit)
        found = self.memory.query(str(edges.node), edges.prefix, index=edges.index, limit=limit)
        self.queries[wave][page] = found
        return found

    def cost(self) -> Cost:
        operations: Counter[str] = Counter()
        waves = []
        read: set[ItemKey] = set()
        for gets, queries in zip(self.gets, self.queries, strict=True):
            for items in queries.values():
                read.update(ItemKey(i["PK"], i["SK"]) for i in items)
            fresh = gets - read
            read |= fresh
            batches = math.ceil(len(fresh) / GET_BATCH)
            if batches:
                operations["BatchGetItem"] += batches
            if queries:
                operations["Query"] += len(queries)
            if batches or queries:
                waves.append(batches + len(queries))
        return Cost(sum(operations.values()), len(waves), dict(operations), tuple(waves))


def chain(
    memory: Memory,
    root: NodeKey,
    hops: list[tuple[EdgeType, bool, int]],
) -> Cost:
    """``root { <hop 1>(first) { edges { node { name <hop 2>(first) { … name } } } } }``:
    the root item and its first edges in wave 0, then per hop the far ends' items (for
    ``name``) and their next edges together."""
    plan = Plan(memory)
    plan.get(0, root.item)
    frontier = [root]
    for wave, (edge, reverse, first) in enumerate(hops):
        reached: list[NodeKey] = []
        for node in frontier:
            edges = Edges(node, edge, reverse)
            page = plan.edges(wave, edges, first + 1)[:first]
            reached += [edges.far_end(item) for item in page]
        for node in reached:
            plan.get(wave + 1, node.item)
        frontier = list(dict.fromkeys(reached))
    return plan.cost()


def products_and_access(memory: Memory, user: NodeKey, product: NodeKey) -> Cost:
    """``user { products { product { name } via { name } } hasAccess(productId) }``: the user
    and its memberships; the groups' subscriptions (which also hold every edge ``hasAccess``
    asks about) and the granting groups' items; the products."""
    plan = Plan(memory)
    plan.get(0, user.item)
    memberships = Edges(user, MEMBER_OF)
    groups = [memberships.far_end(i) for i in plan.edges(0, memberships, None)]
    granted: dict[NodeKey, list[NodeKey]] = {}
    for group in groups:
        subscriptions = Edges(group, SUBSCRIBES_TO)
        for item in plan.edges(1, subscriptions, None):
            if grants_access(item):
                granted.setdefault(subscriptions.far_end(item), []).append(group)
        plan.get(1, ItemKey(str(group), str(product)))  # hasAccess
    for found, via in granted.items():
        plan.get(2, found.item)
        for group in via:
            plan.get(1, group.item)  # known since wave 0, needed once a grant is seen
    return plan.cost()


def nodes(memory: Memory, ids: list[str]) -> Cost:
    """``nodes(ids:)``: every item, in one wave."""
    plan = Plan(memory)
    for global_id in ids:
        plan.get(0, NodeKey.parse(global_id).item)
    return plan.cost()
