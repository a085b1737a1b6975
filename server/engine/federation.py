"""Apollo Federation v2: the model's schema as a subgraph of a supergraph (``serve
--federation``). Built on graphql-core, as the schema is (strawberry's federation support
decorates strawberry types, and this schema has none): ``Query._service { sdl }`` answers the
subgraph SDL, with ``@link`` to the federation spec and ``@key(fields: "id")`` on every node
type, and ``Query._entities(representations:)`` finds each ``{__typename, id}`` as the root
lookups do (:func:`server.engine.fields.lookup`): in order, null for a node that is missing or
that the access rules hide, and every node read in one wave (BatchGetItem, 100 keys a call)."""

from __future__ import annotations

import re
from typing import Any

from graphql import (
    DirectiveLocation,
    GraphQLArgument,
    GraphQLBoolean,
    GraphQLDirective,
    GraphQLEnumType,
    GraphQLEnumValue,
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
    GraphQLUnionType,
    ValueNode,
    print_type,
    specified_directives,
)
from graphql.utilities import value_from_ast_untyped

from graph.errors import BadUserInput
from graph.items import Codec, Ref
from server.engine.context import Info
from server.engine.fields import lookup
from server.engine.kinds import Kind, ModelField, Origin

__all__ = ["FEDERATION", "federated", "subgraph_sdl"]

FEDERATION = "https://specs.apollo.dev/federation/v2.3"
LINK = f'extend schema @link(url: "{FEDERATION}", import: ["@key", "@shareable"])'
SHAREABLE = ("PageInfo",)  # a Relay type another subgraph may define as well
BUILT_IN = ("String", "Int", "Float", "Boolean", "ID")


def _entity_types(schema: GraphQLSchema) -> list[GraphQLObjectType]:
    node = schema.type_map.get("Node")
    if node is None:
        return []
    return [
        t
        for t in schema.type_map.values()
        if isinstance(t, GraphQLObjectType) and node in t.interfaces
    ]


def subgraph_sdl(schema: GraphQLSchema) -> str:
    """The schema's SDL as a Federation v2 subgraph: linked to the spec, every node type an
    entity keyed by its global ``id``, ``PageInfo`` shareable; ``_service`` and ``_entities``
    are left out, as Apollo's subgraph libraries print it."""
    keyed = {t.name for t in _entity_types(schema)}
    parts = [LINK]
    for name in sorted(schema.type_map):
        if name.startswith("__") or name in BUILT_IN or name in ("_Any", "_Entity", "_Service"):
            continue
        printed = print_type(schema.type_map[name])
        directive = (
            ' @key(fields: "id")' if name in keyed else " @shareable" if name in SHAREABLE else ""
        )
        if directive:
            header = re.compile(rf"^(type {name}\b[^{{\n]*?) \{{$", re.MULTILINE)
            printed, found = header.subn(rf"\1{directive} {{", printed, count=1)
            assert found, name
        parts.append(printed)
    return "\n\n".join(parts) + "\n"


def _any_value(value: Any) -> Any:
    return value


def _any_literal(node: ValueNode, variables: dict[str, Any] | None = None) -> Any:
    return value_from_ast_untyped(node, variables)


ANY = GraphQLScalarType(
    "_Any",
    serialize=_any_value,
    parse_value=_any_value,
    parse_literal=_any_literal,
    description="An entity's representation: its `__typename` and `id`.",
)


# what the subgraph specification adds to a Federation 2 subgraph's schema, beside its fields
FIELD_SET = GraphQLScalarType("FieldSet", description="A selection of fields: an entity's key.")
IMPORT = GraphQLScalarType("link__Import", description="A name @link imports.")
PURPOSE = GraphQLEnumType(
    "link__Purpose",
    {
        "SECURITY": GraphQLEnumValue(description="Metadata to resolve fields securely."),
        "EXECUTION": GraphQLEnumValue(description="Metadata to execute operations."),
    },
    description="Why a feature is linked.",
)
DIRECTIVES = [
    GraphQLDirective(
        "link",
        [DirectiveLocation.SCHEMA],
        {
            "url": GraphQLArgument(GraphQLNonNull(GraphQLString)),
            "as": GraphQLArgument(GraphQLString),
            "for": GraphQLArgument(PURPOSE),
            "import": GraphQLArgument(GraphQLList(IMPORT)),
        },
        is_repeatable=True,
    ),
    GraphQLDirective(
        "key",
        [DirectiveLocation.OBJECT, DirectiveLocation.INTERFACE],
        {
            "fields": GraphQLArgument(GraphQLNonNull(FIELD_SET)),
            "resolvable": GraphQLArgument(GraphQLBoolean, default_value=True),
        },
        is_repeatable=True,
    ),
    GraphQLDirective(
        "shareable",
        [DirectiveLocation.OBJECT, DirectiveLocation.FIELD_DEFINITION],
        is_repeatable=True,
    ),
]


def federated(schema: GraphQLSchema, codec: Codec) -> GraphQLSchema:
    """``schema`` as a Federation 2 subgraph's: its Query with ``_service`` and ``_entities``,
    and the definitions the subgraph specification adds."""
    query = schema.query_type
    assert query is not None
    entities = _entity_types(schema)
    service = GraphQLObjectType(
        "_Service",
        {"sdl": GraphQLField(GraphQLNonNull(GraphQLString), description="The subgraph SDL.")},
        description="This subgraph, as a supergraph's gateway or router composes it.",
    )
    entity = GraphQLUnionType(
        "_Entity",
        entities,
        resolve_type=lambda ref, _info, _type: ref.type.name,
        description="Every type a supergraph may ask this subgraph for by its key.",
    )
    names = {t.name for t in entities}
    sdl = subgraph_sdl(schema)

    async def find(info: Info, representation: Any) -> Ref | None:
        return await lookup(info, _ref(codec, names, representation))  # a bad one: its error

    fields: dict[str, GraphQLField] = {
        **query.fields,
        "_service": GraphQLField(
            GraphQLNonNull(service),
            resolve=lambda _root, _info: {"sdl": sdl},
            description="The subgraph SDL (Apollo Federation v2).",
        ),
        "_entities": ModelField(
            Origin(Kind.LOOKUP),
            GraphQLNonNull(GraphQLList(entity)),
            {"representations": GraphQLArgument(GraphQLNonNull(GraphQLList(GraphQLNonNull(ANY))))},
            resolve=lambda _root, info, representations: [find(info, r) for r in representations],
            description="Entities by their representations, in order; null where there is "
            "none (or the caller may not read it).",
        ),
    }
    return GraphQLSchema(
        GraphQLObjectType("Query", fields, description=query.description),
        schema.mutation_type,
        schema.subscription_type,
        types=[t for t in schema.type_map.values() if t is not query]
        + [FIELD_SET, IMPORT, PURPOSE],
        directives=[*specified_directives, *DIRECTIVES],
    )


def _ref(codec: Codec, names: set[str], representation: Any) -> Ref | None:
    """The node a representation names; None when its id is another type's."""
    if not isinstance(representation, dict):
        raise BadUserInput("a representation is an object with __typename and id")
    typename, raw = representation.get("__typename"), representation.get("id")
    if typename not in names:
        raise BadUserInput(f"{str(typename)[:80]!r} is not an entity of this subgraph")
    if not isinstance(raw, str):
        raise BadUserInput(f"a {typename} representation needs its id, a string")
    node = codec.model.types[typename]
    if node.single:
        return codec.by_id(node, raw)
    found = codec.from_global_id(raw)
    return found if found is not None and found.type is node else None
