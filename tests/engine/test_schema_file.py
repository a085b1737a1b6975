from __future__ import annotations

from pathlib import Path

from graphql import GraphQLInterfaceType, GraphQLNamedType, GraphQLObjectType

from server.engine import engine_for

schema = engine_for("demo").schema()  # the served schema, built from models/demo/model.yaml

ROOT = Path(__file__).resolve().parents[2]


def test_schema_graphql_matches_the_live_schema() -> None:
    committed = (ROOT / "schema.graphql").read_text()
    assert committed == schema.as_str() + "\n", "run `make schema` and commit schema.graphql"


def test_every_type_field_and_argument_has_a_description() -> None:
    missing = []
    for name, named in schema._schema.type_map.items():
        if name.startswith("__") or name in {"String", "Int", "Boolean", "ID", "Float"}:
            continue
        assert isinstance(named, GraphQLNamedType)
        if not named.description:
            missing.append(name)
        if isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
            for field_name, field in named.fields.items():
                if not field.description:
                    missing.append(f"{name}.{field_name}")
                missing += [
                    f"{name}.{field_name}({a})"
                    for a, arg in field.args.items()
                    if not arg.description
                ]
    assert missing == []
