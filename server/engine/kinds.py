"""What each GraphQL field built from the model is, typed at schema build: a
:class:`ModelField` carries its :class:`Origin` (its :class:`Kind` and what that kind reads
with: one typed back-reference to its definition in the model, as strawberry's fields carry
theirs), which the planned prefetch (:mod:`server.engine.plan`) and the compiled executor
(:mod:`server.engine.compiled`) read, instead of learning it at run time or from untyped
``extensions`` strings. Value classes only: the schema (:mod:`server.engine.schema`) makes
the origins, so this module sits below everything that reads them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from graphql import GraphQLArgumentMap, GraphQLField, GraphQLFieldResolver, GraphQLOutputType

from graph.items import Ref
from server.engine.context import Info
from server.engine.listings import Lister

__all__ = ["Kind", "ModelField", "Origin", "origin_of"]


class Kind(Enum):
    """What a field answers, and so what it reads."""

    VALUE = "value"  # a stored attribute: the node's item
    KEY = "key"  # a key placeholder: from the key, no read (but under keyCasing)
    ID = "id"  # the global id: from the key
    REFERENCE = "reference"  # the node (or nodes) a stored value names
    PARENT = "parent"  # a child's parent: from the child's key
    CHILDREN = "children"  # a child collection (a connection)
    EDGES = "edges"  # the edges of a type, forward or reverse (a connection)
    PATTERN = "pattern"  # an access pattern, on a node or at the root (a connection)
    ONE = "one"  # at most one edge: its far end
    FIRST = "first"  # the first of a collection
    SUM = "sum"  # a collection's field summed
    EDGE_VALUE = "edge value"  # a field of the edge itself
    PATH = "path"  # a transitive path: walks its own hops
    HOOK = "hook"  # the model's Python function answers
    LOOKUP = "lookup"  # a root field finding a node by key, id or unique value


CONNECTIONS = frozenset({Kind.CHILDREN, Kind.EDGES, Kind.PATTERN})
LISTED = CONNECTIONS | {Kind.ONE, Kind.FIRST, Kind.SUM}  # each reads through its ``lister``


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a field comes from: its kind, and what its kind needs: ``lister`` (a
    connection-like field's listing), ``target`` (a reference's node, from an item in memory;
    ``exists``: its targets' items are read, a list leaving out those with none) or ``start``
    (a path or hook field's first loads, started in a root lookup's own wave)."""

    kind: Kind
    lister: Lister | None = None
    target: Callable[[Ref, Info], Ref | list[Ref] | None] | None = None
    start: Callable[..., list[Awaitable[Any]]] | None = None
    exists: bool = False  # a reference's targets are read: those with no item are left out

    def __post_init__(self) -> None:
        assert (self.lister is not None) == (self.kind in LISTED), self.kind
        assert (self.target is not None) == (self.kind is Kind.REFERENCE), self.kind

    @property
    def connection(self) -> bool:
        """A Relay connection: pages, edges and a total."""
        return self.kind in CONNECTIONS

    @property
    def walks(self) -> bool:
        """It reads its own way (hops, a Python function), so graphql-core completes it."""
        return self.kind in (Kind.PATH, Kind.HOOK)


class ModelField(GraphQLField):
    """A GraphQL field built from the model, with its :class:`Origin`."""

    origin: Origin

    def __init__(
        self,
        origin: Origin,
        type_: GraphQLOutputType,
        args: GraphQLArgumentMap | None = None,
        resolve: GraphQLFieldResolver | None = None,
        description: str | None = None,
    ) -> None:
        super().__init__(type_, args, resolve, description=description)
        self.origin = origin


def origin_of(field: GraphQLField | None) -> Origin | None:
    """The origin of a field built from the model; None for any other (``pageInfo``, a
    mutation, introspection)."""
    return field.origin if isinstance(field, ModelField) else None
