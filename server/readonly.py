"""``--read-only``: the same schema without its Mutation type."""

from __future__ import annotations

import copy
from typing import TypeVar

import strawberry
from graphql import GraphQLObjectType, GraphQLSchema
from strawberry.schema.schema_converter import GraphQLCoreConverter

__all__ = ["without_mutations"]

S = TypeVar("S", bound=strawberry.Schema)


def without_mutations(schema: S) -> S:
    """A copy of ``schema`` whose GraphQL schema has no mutation root (so introspection shows
    none, and a mutation fails validation). Its types, resolvers, extensions and error handling
    are the same objects; types that only mutations used leave the schema with them."""
    clone = copy.copy(schema)
    core = schema._schema
    # Objects implementing an interface are kept even when no field returns them (node types).
    implementations = [
        t for t in core.type_map.values() if isinstance(t, GraphQLObjectType) and t.interfaces
    ]
    clone._schema = GraphQLSchema(
        query=core.query_type,
        subscription=core.subscription_type,
        types=implementations,
        directives=core.directives,
        extensions={GraphQLCoreConverter.DEFINITION_BACKREF: clone},
    )
    clone._schema._strawberry_schema = clone  # type: ignore[attr-defined]
    clone.mutation = None
    return clone
