"""Field kinds are typed at schema build (server.engine.kinds): every field built from the model
carries its origin, and the planned prefetch and the compiled executor read it."""

from __future__ import annotations

import pytest
from graphql import GraphQLObjectType

from server.engine import engine_for
from server.engine.kinds import Kind, ModelField, origin_of

KINDS = [
    ("demo", "User", "id", Kind.ID),
    ("demo", "User", "name", Kind.VALUE),
    ("demo", "User", "version", Kind.VALUE),
    ("demo", "User", "organization", Kind.ONE),
    ("demo", "User", "groups", Kind.EDGES),
    ("demo", "User", "products", Kind.PATH),
    ("demo", "User", "hasAccess", Kind.PATH),
    ("demo", "Query", "user", Kind.LOOKUP),
    ("demo", "Query", "node", Kind.LOOKUP),
    ("demo", "Query", "userByEmail", Kind.LOOKUP),
    ("demo", "Query", "tickets", Kind.PATTERN),
    ("order-entry", "Order", "customer", Kind.REFERENCE),
    ("order-entry", "Order", "items", Kind.CHILDREN),
    ("order-entry", "Employee", "currentJob", Kind.FIRST),
    ("order-entry", "Employee", "orders", Kind.PATTERN),
]


@pytest.mark.parametrize(("model", "type_name", "field", "kind"), KINDS)
def test_a_field_s_kind_comes_from_the_schema(
    model: str, type_name: str, field: str, kind: Kind
) -> None:
    named = engine_for(model).schema().graphql_schema.type_map[type_name]
    assert isinstance(named, GraphQLObjectType)
    origin = origin_of(named.fields[field])
    assert origin is not None
    assert origin.kind is kind
    listed = {Kind.CHILDREN, Kind.EDGES, Kind.PATTERN, Kind.ONE, Kind.FIRST, Kind.SUM}
    assert (origin.lister is not None) == (kind in listed)
    assert (origin.target is not None) == (kind is Kind.REFERENCE)
    assert origin.walks == (kind in (Kind.PATH, Kind.HOOK))


@pytest.mark.parametrize("model", ["demo", "order-entry", "orders"])
def test_every_field_of_a_node_type_and_of_query_has_an_origin(model: str) -> None:
    engine = engine_for(model)
    schema = engine.schema().graphql_schema
    names = [*(n.name for n in engine.model.types.values()), "Query", "Subscription"]
    for name in names:
        named = schema.type_map[name]
        assert isinstance(named, GraphQLObjectType)
        for field_name, field in named.fields.items():
            assert isinstance(field, ModelField), f"{name}.{field_name}"
    assert schema.mutation_type is not None
    assert all(origin_of(f) is None for f in schema.mutation_type.fields.values())
    assert origin_of(schema.type_map["PageInfo"].fields["hasNextPage"]) is None  # type: ignore[union-attr]


def test_the_schema_carries_no_untyped_extensions() -> None:
    schema = engine_for("demo").schema().graphql_schema
    for named in schema.type_map.values():
        for field in getattr(named, "fields", {}).values():
            assert not field.extensions, f"{named.name}: {field.extensions}"
